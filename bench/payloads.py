"""How long a mutation's one document gets on each public schema, now that it reads its payload.

    python bench/payloads.py

A mutation never runs again, so its document reads what the model will want of its result: the
objects its payload links to with their previews, and its user errors with their scalars (see
dagtools/calls/_documents.py). That must not make documents grow with the schema: an interface of
many types is read by its identity alone, objects without identity one level deep only. Prints
`max_mutation_document_bytes[SCHEMA]` (and the mutation that sends it) for every schema in
../shared/schemas that has mutations, against a target, and exits 1 when one is missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _figures import _schemas_dir, exit_status, figure, unmeasured

from dagtools import Step, compile_catalogue, load_schema
from dagtools.calls._documents import QueryBuilder

#: Bytes the longest mutation document of any schema may take (GitHub's `addComment` took 9,006 when
#: a payload's `subject: Node` was read as one fragment per type implementing `Node`).
TARGET = "<= 2500"


def mutation_document_figures() -> None:
    found = _schemas_dir()
    if found is None:
        unmeasured("max_mutation_document_bytes", "../shared/schemas is not here (set DAGTOOLS_SCHEMAS)")
        return
    for path in sorted(p for p in found.iterdir() if p.suffix in {".graphql", ".graphqls", ".json"}):
        schema = load_schema(path).schema
        if schema.mutation_type is None:
            continue
        catalogue = compile_catalogue(schema, mutations=True)
        builder = QueryBuilder.of(catalogue)
        longest, name = 0, ""
        for field_name, field in schema.mutation_type.fields.items():
            text = builder.build((Step.of(field_name, {a: None for a in field.args}),), operation="mutation").text
            if len(text.encode()) > longest:
                longest, name = len(text.encode()), field_name
        print(f"# {path.name}: {len(schema.mutation_type.fields)} mutations, longest {name}", flush=True)
        figure(f"max_mutation_document_bytes[{path.name}]", longest, TARGET)


if __name__ == "__main__":
    mutation_document_figures()
    sys.exit(exit_status())
