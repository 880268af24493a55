"""Result values the model reads: cut to a budget with a note that says how to read on, never silently."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from .._errors import ToolCallError

__all__ = ["LongValues"]

_KEEP = 32


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _fits(value: Any, budget: int) -> bool:
    """Whether `value` as JSON fits `budget`, without encoding a string that fits however it is
    escaped (at most six characters for one)."""
    if isinstance(value, str) and 6 * len(value) + 2 <= budget:
        return True
    return _size(value) <= budget


class LongValues:
    """The full values of results that were cut, kept per session under a readable reference."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._values: OrderedDict[str, Any] = OrderedDict()

    def present(self, value: Any, ref: str, offset: int = 0) -> dict[str, Any]:
        """`{"result": value}`, or the part from `offset` that fits with a `truncated` note."""
        if offset == 0 and _fits(value, self.budget):
            return {"result": value}
        if isinstance(value, list):
            shown: list[Any] = []
            size = 2
            for item in value[offset:]:
                item_size = _size(item) + 1
                if shown and size + item_size > self.budget:
                    break
                shown.append(item)
                size += item_size
            end = offset + len(shown)
            if offset == 0 and end >= len(value):
                return {"result": value}
            out: dict[str, Any] = {"result": shown}
            if end < len(value):
                self._keep(ref, value)
                out["truncated"] = (
                    f'Showing items {offset} to {end - 1} of {len(value)}. To read on, call readResult(ref: "{ref}", offset: {end}).'
                )
            return out
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        end = min(offset + self.budget, len(text))
        out = {"result": text[offset:end]}
        if end < len(text):
            self._keep(ref, value)
            out["truncated"] = (
                f'Showing characters {offset} to {end} of {len(text)}. To read on, call readResult(ref: "{ref}", offset: {end}).'
            )
        return out

    def read(self, ref: str, offset: int) -> dict[str, Any]:
        if ref not in self._values:
            known = ", ".join(self._values) or "none"
            raise ToolCallError(f"No cut result is kept under {ref!r} (kept: {known}). Call the tool again to get the value anew.")
        value = self._values[ref]
        length = len(value) if isinstance(value, (list, str)) else _size(value)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0 or offset >= length:
            raise ToolCallError(f"offset must be an integer from 0 to {length - 1} for {ref}.")
        self._values.move_to_end(ref)
        return self.present(value, ref, offset)

    def _keep(self, ref: str, value: Any) -> None:
        self._values[ref] = value
        self._values.move_to_end(ref)
        while len(self._values) > _KEEP:
            self._values.popitem(last=False)

    def kept(self) -> dict[str, Any]:
        """The full values kept under their references, oldest first."""
        return dict(self._values)

    def restore(self, kept: dict[str, Any]) -> None:
        """Keep exactly `kept`, as `kept()` gave it (oldest first): for a session a store brings back."""
        self._values = OrderedDict(kept)

    def __contains__(self, ref: object) -> bool:
        return ref in self._values

    def __bool__(self) -> bool:
        return bool(self._values)
