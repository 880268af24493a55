"""The compiled form of a catalogue: what naming the tools decided, as plain JSON kept on disk.

Compiling GitHub's catalogue means building its graphql-core schema (seconds) and walking every
type. Its outcome is small: the tool names in order, the types any session can reach, each tool's
return type, the connection shapes the first tool list needs, and the tools compiled so far. A
catalogue restored from it lists tools and answers `selectTools` without the schema; the schema is
built on the first call that needs it (validating, running, describing a tool's parameters).

The form is stored in the schema's `CompiledEntry` (see `load._cache`), one section per option set:
the options that shape a catalogue are part of its key, credentials never are.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from .._tools import Tool
from ..load._cache import content_digest
from ..load._dialect import detect_dialect
from ..load._loaded import LoadedSchema
from ._catalogue import Catalogue, FieldRef, compile_catalogue
from ._chain_example import example_chain
from ._options import CatalogueOptions
from ._reach import ConnectionShape, example_call, example_path

__all__ = ["catalogue_of", "options_key", "restore", "snapshot"]

logger = logging.getLogger("dagtools")


def options_key(options: CatalogueOptions) -> str:
    """The section a catalogue is stored under: every option that shapes it, and nothing else."""
    return content_digest(json.dumps(options.as_keywords(), sort_keys=True, default=list))[:32]


def catalogue_of(loaded: LoadedSchema, options: CatalogueOptions) -> Catalogue:
    """The catalogue of `loaded` under `options`: restored from its compiled form when the cache has
    it, else compiled (building the schema) and written there for the next start."""
    entry = loaded.compiled
    if entry is None:
        return compile_catalogue(loaded.schema, **options.as_keywords())
    key = options_key(options)
    data = entry.section("catalogues", key)
    if data is not None:
        try:
            catalogue = restore(data, loaded, options)
        except (KeyError, TypeError, ValueError, AttributeError):
            logger.info("compiled catalogue of %s unusable: compiling it again", loaded.origin)
        else:
            logger.debug("catalogue restored from its compiled form: %d tools", len(catalogue))
            return catalogue
    catalogue = compile_catalogue(loaded.schema, **options.as_keywords())
    save(loaded, options, catalogue)
    return catalogue


def save(loaded: LoadedSchema, options: CatalogueOptions, catalogue: Catalogue) -> None:
    """Write the catalogue's compiled form (with the tools compiled so far) into the schema's entry."""
    if loaded.compiled is None:
        return
    loaded.compiled.put("catalogues", options_key(options), snapshot(catalogue))
    loaded.compiled.write()


def snapshot(catalogue: Catalogue) -> dict[str, Any]:
    """The compiled form of `catalogue`, as JSON data."""
    roots = [t for t in (catalogue.query_type, catalogue.mutation_type) if t]
    names = catalogue.names()
    targets = {name: catalogue.target(name) for name in names}
    for name in (n for root in roots for n in catalogue.tools_for_type(root)):
        catalogue.connection(targets[name])  # what the first selectTools description looks at
        catalogue.tool(name)  # what a first selectTools hands back
    examples = {
        "call": list(example_call(catalogue)),
        "path": example_path(catalogue),
        "chain": example_chain(catalogue),
    }  # the fixed tools' texts
    tools = {}
    for name, tool in list(catalogue._tools.items()):
        try:
            tools[name] = json.loads(json.dumps(dataclasses.asdict(tool)))
        except (TypeError, ValueError):
            continue  # a default JSON cannot hold: compiled again when asked for
    return {
        "dialect": catalogue.dialect_name,
        "previews": catalogue.previews,
        "roots": [catalogue.query_type, catalogue.mutation_type],
        "reachable": sorted(catalogue.reachable),
        "tools_in_order": [[n, catalogue.ref(n).type_name, catalogue.ref(n).field_name] for n in names],
        "targets": targets,
        "connections": {t: dataclasses.asdict(c) if c is not None else None for t, c in catalogue._connections.items()},
        "tools": tools,
        "examples": examples,
    }


def restore(data: dict[str, Any], loaded: LoadedSchema, options: CatalogueOptions) -> Catalogue:
    """A catalogue from its compiled form; its schema is `loaded`'s, built when first needed."""
    catalogue = Catalogue.__new__(Catalogue)
    policy = options.mutations if isinstance(options.mutations, bool) else frozenset(options.mutations)
    query_type, mutation_type = data["roots"]
    catalogue._setup(
        lambda: loaded.schema,
        lambda schema: detect_dialect(schema, options.dialect, relay_ids=options.relay_ids),
        str(data["dialect"]),
        policy,
        options.include_deprecated,
        bool(data["previews"]),
        query_type,
        mutation_type,
    )
    catalogue.reachable = frozenset(data["reachable"])
    for name, type_name, field_name in data["tools_in_order"]:
        ref = FieldRef(str(type_name), str(field_name))
        catalogue._refs[name] = ref
        catalogue._names[ref] = name
        catalogue._by_type.setdefault(ref.type_name, []).append(name)
    catalogue._targets.update(data["targets"])
    for type_name, shape in data["connections"].items():
        catalogue._connections[type_name] = None if shape is None else _shape(shape)
    for name, fields in data["tools"].items():
        catalogue._tools[name] = Tool(**fields)
    examples = data.get("examples")
    if examples:  # what example_call and example_path would build the schema to work out
        catalogue.derived("example call", lambda: (str(examples["call"][0]), dict(examples["call"][1])))
        catalogue.derived("example path", lambda: str(examples["path"]))
        if isinstance(examples.get("chain"), list):
            catalogue.derived("example chain", lambda: [dict(step) for step in examples["chain"]])
    return catalogue


def _shape(data: dict[str, Any]) -> ConnectionShape:
    return ConnectionShape(
        **{**data, "scalars": tuple(data["scalars"]), "edge_fields": tuple(data["edge_fields"]), "values": tuple(data.get("values", ()))}
    )
