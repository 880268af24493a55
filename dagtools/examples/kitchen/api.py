"""The kitchen: a small, immutable GraphQL API in the style of Dagger.

Every object is a value: operations never change an object, they return a new
one. Each object type ``X`` has an ``id: XID!`` that encodes the object's whole
state, and ``Query.loadXFromID`` turns that id back into the object. Because
ids are deterministic (same state, same id), a client can hold on to any
intermediate result and come back to it later, which is what the tool layer
relies on. The only mutable state is the tip jar behind ``Mutation.tip``.
"""

from __future__ import annotations

import base64
import binascii
import json
from enum import Enum
from typing import Annotated, Any, NewType

import strawberry
from strawberry.schema.config import StrawberryConfig

OvenID = NewType("OvenID", str)
PotatoID = NewType("PotatoID", str)
SinkID = NewType("SinkID", str)
FriesID = NewType("FriesID", str)
PlateID = NewType("PlateID", str)
FoodID = NewType("FoodID", str)

# How descriptions refer to one object of each type.
WHAT = {"Oven": "an Oven", "Potato": "a Potato", "Sink": "a Sink", "Fries": "some Fries", "Plate": "a Plate"}
WHAT["Food"] = "a Food (a Potato or some Fries)"

# The id scalars are mapped in the schema config, strawberry's recommended way to declare NewType scalars.
SCALARS: dict[object, Any] = {
    scalar: strawberry.scalar(
        name=f"{name}ID",
        description=f"The unique identifier of {WHAT[name]}: an opaque string to pass back as an argument, or to load{name}FromID.",
    )
    for name, scalar in [("Oven", OvenID), ("Potato", PotatoID), ("Sink", SinkID), ("Fries", FriesID), ("Plate", PlateID), ("Food", FoodID)]
}

OVEN_TEMPERATURE = 220


class KitchenError(Exception):
    """A refused operation; its message becomes the GraphQL error message."""


def _encode(state: dict[str, Any]) -> str:
    """Compact, key-sorted JSON in unpadded urlsafe base64, so equal states give equal ids."""
    raw = json.dumps(state, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _load(id: str, expected: str, *types: str) -> Any:
    """Decode ``id`` into an object whose type is one of ``types`` (by default just ``expected``)."""
    malformed = KitchenError(f"not a {expected} ID: the id is malformed.")
    try:
        state = json.loads(base64.urlsafe_b64decode(id + "=" * (-len(id) % 4)))
        kind = state.get("type") if isinstance(state, dict) else None
    except (binascii.Error, ValueError, TypeError):
        raise malformed from None
    if kind not in _LOADERS:
        raise malformed
    if kind not in (types or (expected,)):
        raise KitchenError(f"not a {expected} ID (it is a {kind} ID).")
    try:
        obj = _LOADERS[kind](state)
    except (KeyError, ValueError, TypeError):
        raise malformed from None
    # Only the canonical encoding is accepted, so a loaded object's id is exactly the id it was loaded from.
    if _encode(obj.state()) != id:
        raise malformed
    return obj


def _check(value: Any, kind: type) -> Any:
    """Type-check one decoded value, so a forged id cannot smuggle in odd state."""
    if type(value) is not kind:
        raise TypeError(value)
    return value


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "AEIOU" else f"a {word}"


def _id_field(name: str) -> Any:
    description = f"The unique identifier of this object's state, for wherever {_a(name)}ID is expected."
    return strawberry.field(resolver=lambda root: _encode(root.state()), description=description)


def _description_field(description: str) -> Any:
    return strawberry.field(resolver=lambda root: root.describe(), description=description)


@strawberry.enum(description="The shape to slice a potato into.")
class SliceShape(Enum):
    STICKS = strawberry.enum_value("STICKS", description="Long thin sticks, for french fries.")
    SLICES = strawberry.enum_value("SLICES", description="Thin round slices, for chips.")


@strawberry.enum(description="How a food item has been cut.")
class Cut(Enum):
    WHOLE = strawberry.enum_value("WHOLE", description="Not cut at all.")
    STICKS = strawberry.enum_value("STICKS", description="Cut into long thin sticks.")
    SLICES = strawberry.enum_value("SLICES", description="Cut into thin round slices.")
    CUBES = strawberry.enum_value("CUBES", description="Diced into small cubes.")


_CUT_WORDS = {Cut.STICKS: "cut into sticks", Cut.SLICES: "cut into slices", Cut.CUBES: "cut into cubes"}


@strawberry.interface(description="Something edible.")
class Food:
    description: str = _description_field("A short description of this food.")


@strawberry.type(description="A sink for cleaning food.")
class Sink:
    id: SinkID = _id_field("Sink")

    def state(self) -> dict[str, Any]:
        return {"type": "Sink"}

    @strawberry.field(description="Rinses a food item and returns the rinsed item. Rinsed fries go soggy.")
    def rinse(self, item: Annotated[FoodID, strawberry.argument(description="The food item to rinse.")]) -> Food:
        food = _load(item, "Food", "Potato", "Fries")
        if isinstance(food, Potato):
            return food.rinsed_copy()
        return Fries(variety=food.variety, cut=food.cut, crispiness=food.crispiness, soggy=True)


@strawberry.type(description="A potato.")
class Potato(Food):
    id: PotatoID = _id_field("Potato")
    variety: str = strawberry.field(description='The potato variety, such as "Russet".')
    rinsed: bool = strawberry.field(description="Whether the potato has been rinsed in a sink.")
    peeled: bool = strawberry.field(description="Whether the potato has been peeled.")
    cut: Cut = strawberry.field(description="How the potato has been cut.")
    description: str = _description_field('A short description, such as "a rinsed, peeled Russet potato cut into sticks".')

    def state(self) -> dict[str, Any]:
        return {"type": "Potato", "variety": self.variety, "rinsed": self.rinsed, "peeled": self.peeled, "cut": self.cut.value}

    @staticmethod
    def from_state(s: dict[str, Any]) -> Potato:
        return Potato(
            variety=_check(s["variety"], str), rinsed=_check(s["rinsed"], bool), peeled=_check(s["peeled"], bool), cut=Cut(s["cut"])
        )

    def describe(self) -> str:
        words = ["rinsed" if self.rinsed else "unrinsed", "peeled" if self.peeled else "unpeeled"]
        if self.cut is Cut.WHOLE:
            words.append("whole")
        article = "an" if words[0][0] in "aeiou" else "a"
        return " ".join([article, ", ".join(words), self.variety, "potato", _CUT_WORDS.get(self.cut, "")]).strip()

    def rinsed_copy(self) -> Potato:
        return Potato(variety=self.variety, rinsed=True, peeled=self.peeled, cut=self.cut)

    @strawberry.field(description="Retrieves a cleaned potato by washing it in a sink.")
    def rinse(self, sink: Annotated[SinkID, strawberry.argument(description="The sink to use to rinse the potato.")]) -> Potato:
        _load(sink, "Sink")
        return self.rinsed_copy()

    @strawberry.field(description="Retrieves a cleaned potato by washing it in a sink.", deprecation_reason="Use rinse.")
    def wash(self, sink: Annotated[SinkID, strawberry.argument(description="The sink to use to wash the potato.")]) -> Potato:
        _load(sink, "Sink")
        return self.rinsed_copy()

    @strawberry.field(description="Retrieves this potato without its skin.")
    def peel(self) -> Potato:
        if self.peeled:
            raise KitchenError("This potato is already peeled.")
        return Potato(variety=self.variety, rinsed=self.rinsed, peeled=True, cut=self.cut)

    @strawberry.field(description="Retrieves this potato cut into pieces.")
    def slice(self, shape: Annotated[SliceShape, strawberry.argument(description="The shape to cut the potato into.")]) -> Potato:
        return self._cut_into(Cut[shape.name])

    @strawberry.field(description="Retrieves this potato diced into cubes.")
    def dice(self) -> Potato:
        return self._cut_into(Cut.CUBES)

    def _cut_into(self, cut: Cut) -> Potato:
        """A potato is cut only once: pieces cannot be re-cut into another shape."""
        if self.cut is not Cut.WHOLE:
            raise KitchenError("This potato is already cut.")
        return Potato(variety=self.variety, rinsed=self.rinsed, peeled=self.peeled, cut=cut)


@strawberry.type(description="A plate for serving food.")
class Plate:
    id: PlateID = _id_field("Plate")
    fries: Fries | None = strawberry.field(description="The fries on this plate, or null when the plate is empty.")
    description: str = _description_field('A short description of the plate and what is on it, such as "an empty plate".')

    def state(self) -> dict[str, Any]:
        return {"type": "Plate", "fries": self.fries.state() if self.fries else None}

    @staticmethod
    def from_state(s: dict[str, Any]) -> Plate:
        fries = s["fries"]
        if fries is not None and _check(fries, dict).get("type") != "Fries":
            raise TypeError(fries)
        return Plate(fries=None if fries is None else Fries.from_state(fries))

    def describe(self) -> str:
        return f"a plate of {self.fries.describe()}" if self.fries else "an empty plate"

    @strawberry.field(description="Whether nothing has been placed on this plate.")
    def is_empty(self) -> bool:
        return self.fries is None


@strawberry.type(description="French fries.")
class Fries(Food):
    id: FriesID = _id_field("Fries")
    variety: strawberry.Private[str]
    cut: Cut = strawberry.field(description="How the potato was cut before cooking.")
    crispiness: int = strawberry.field(description="How crispy the fries are, from 0 (limp) to 100 (perfectly crisp).")
    soggy: bool = strawberry.field(description="Whether the fries have gone soggy, for example by being rinsed.")
    description: str = _description_field('A short description, such as "crispy Russet fries cut into sticks (crispiness 90/100)".')

    def state(self) -> dict[str, Any]:
        return {"type": "Fries", "variety": self.variety, "cut": self.cut.value, "crispiness": self.crispiness, "soggy": self.soggy}

    @staticmethod
    def from_state(s: dict[str, Any]) -> Fries:
        return Fries(
            variety=_check(s["variety"], str), cut=Cut(s["cut"]), crispiness=_check(s["crispiness"], int), soggy=_check(s["soggy"], bool)
        )

    def describe(self) -> str:
        texture = "soggy" if self.soggy else "crispy" if self.crispiness >= 70 else "limp"
        shape = _CUT_WORDS.get(self.cut, "baked whole")
        return f"{texture} {self.variety} fries {shape} (crispiness {self.crispiness}/100)"

    @strawberry.field(description="Returns the plate with the fries placed upon it.")
    def plate(self, plate: Annotated[PlateID, strawberry.argument(description="The plate upon which to place the fries.")]) -> Plate:
        if _load(plate, "Plate").fries is not None:
            raise KitchenError("This plate already holds fries.")
        return Plate(fries=self)


@strawberry.input(description="Settings for baking in the oven.")
class BakeSettings:
    minutes: int = strawberry.field(default=30, description="How long to bake, in minutes.")
    temperature: int | None = strawberry.field(default=OVEN_TEMPERATURE, description="The baking temperature in degrees Celsius.")
    fan: bool | None = strawberry.field(default=False, description="Whether to turn on the fan for extra crispiness.")


def _manual() -> str:
    """A long, deterministic text (about 12,000 characters), so that long field values get exercised."""
    topics = ["Installation", "Preheating", "Baking", "Broiling", "Fan mode", "Cleaning", "Safety", "Troubleshooting"]
    paragraphs = [
        f"{n}. {topics[(n - 1) % len(topics)]}. Section {n} of this manual covers {topics[(n - 1) % len(topics)].lower()}. "
        f"Read it in full before use; keep the door closed while the oven is at {OVEN_TEMPERATURE} degrees "
        f"and let it cool before touching any part. If the oven behaves unexpectedly, turn it off and consult paragraph {n % 48 + 1}."
        for n in range(1, 49)
    ]
    return "\n\n".join(paragraphs)


MANUAL = _manual()


@strawberry.type(description="An oven you can use for cooking.")
class Oven:
    id: OvenID = _id_field("Oven")
    temperature: int = strawberry.field(default=OVEN_TEMPERATURE, description="The oven's temperature in degrees Celsius.")

    def state(self) -> dict[str, Any]:
        return {"type": "Oven"}

    @strawberry.field(description="The oven's full instruction manual (long).")
    def manual(self) -> str:
        return MANUAL

    @strawberry.field(description="Bakes a food item.")
    def bake(
        self,
        item: Annotated[PotatoID, strawberry.argument(description="The item to insert into the oven.")],
        settings: Annotated[
            BakeSettings | None, strawberry.argument(description="How to bake; defaults apply when omitted.")
        ] = strawberry.UNSET,
    ) -> Fries:
        potato: Potato = _load(item, "Potato")
        settings = settings or BakeSettings()
        if settings.minutes < 1:
            raise KitchenError("Baking time must be at least one minute.")
        heat = OVEN_TEMPERATURE if settings.temperature is None else settings.temperature
        crispiness = settings.minutes * 3 * heat // OVEN_TEMPERATURE + (10 if settings.fan else 0)
        return Fries(variety=potato.variety, cut=potato.cut, crispiness=max(0, min(100, crispiness)), soggy=False)

    @strawberry.field(description="Broils a food item under the top heat: quicker, but less crispy than baking.")
    def broil(self, item: Annotated[PotatoID, strawberry.argument(description="The item to put under the broiler.")]) -> Fries:
        potato: Potato = _load(item, "Potato")
        return Fries(variety=potato.variety, cut=potato.cut, crispiness=40, soggy=False)


# Rebuilds an object of each type from its decoded state.
_LOADERS: dict[str, Any] = {"Oven": lambda s: Oven(), "Sink": lambda s: Sink(), "Potato": Potato.from_state, "Fries": Fries.from_state}
_LOADERS["Plate"] = Plate.from_state


def _loader(name: str, returns: Any, scalar: Any, *types: str) -> Any:
    """A ``loadXFromID`` field; ``types`` lists the concrete types an interface's ids may hold."""

    def resolve(id: str) -> Any:
        return _load(id, name, *types)

    # Set here: with postponed annotations, closure variables cannot be named in the signature.
    resolve.__annotations__ = {"id": Annotated[scalar, strawberry.argument(description=f"The {name}ID to load.")], "return": returns}
    return strawberry.field(resolve, name=f"load{name}FromID", description=f"Loads {WHAT[name]} back from {_a(name)}ID.")


@strawberry.type(description="The kitchen: the entry point to every tool and ingredient.")
class Query:
    @strawberry.field(description="The kitchen's oven.")
    def oven(self) -> Oven:
        return Oven()

    @strawberry.field(description="A raw potato: whole, unrinsed and unpeeled.")
    def potato(self, variety: Annotated[str, strawberry.argument(description="The potato variety.")] = "Russet") -> Potato:
        return Potato(variety=variety, rinsed=False, peeled=False, cut=Cut.WHOLE)

    @strawberry.field(description="Raw potatoes, one of each variety in the pantry.")
    def potatoes(self) -> list[Potato]:
        return [Potato(variety=v, rinsed=False, peeled=False, cut=Cut.WHOLE) for v in ("Russet", "Yukon Gold", "King Edward")]

    @strawberry.field(description="The kitchen's sink.")
    def sink(self) -> Sink:
        return Sink()

    @strawberry.field(description="A clean, empty plate.")
    def plate(self) -> Plate:
        return Plate(fries=None)

    load_oven_from_id = _loader("Oven", Oven, OvenID)
    load_potato_from_id = _loader("Potato", Potato, PotatoID)
    load_sink_from_id = _loader("Sink", Sink, SinkID)
    load_fries_from_id = _loader("Fries", Fries, FriesID)
    load_plate_from_id = _loader("Plate", Plate, PlateID)
    load_food_from_id = _loader("Food", Food, FoodID, "Potato", "Fries")


_tips_total = 0


@strawberry.type(description="Operations with side effects.")
class Mutation:
    @strawberry.mutation(description="Leaves a tip for the cook; returns the total tipped so far.")
    def tip(self, amount: Annotated[int, strawberry.argument(description="The amount to tip; must not be negative.")]) -> int:
        global _tips_total
        if amount < 0:
            raise KitchenError("A tip cannot be negative.")
        _tips_total += amount
        return _tips_total


schema = strawberry.Schema(query=Query, mutation=Mutation, types=[Potato, Fries], config=StrawberryConfig(scalar_map=SCALARS))
