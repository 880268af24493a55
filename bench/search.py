"""Catalogue search: does a need in plain words find the tool that serves it, and how fast?

    python bench/search.py

Reads the needs in bench/search_needs.yaml (written from GitHub's and Linear's public docs), asks
the catalogue search of each schema (every mutation allowed) and counts a hit when any of a need's
tools is among the first five answers. Prints recall at 5 (target >= 0.9), every miss with what
came first, the time the first search takes (it builds the index) and the median time of one
search on GitHub once the index is built (target <= 20 ms). Exits 1 when a target is missed.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from statistics import median

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _figures import exit_status, figure, schema_path, unmeasured  # noqa: E402

from dagtools import compile_catalogue, load_schema  # noqa: E402
from dagtools.catalogue._search import catalogue_search  # noqa: E402

NEEDS = ROOT / "bench" / "search_needs.yaml"
TOP = 5


def run_search_bench() -> None:
    needs: dict[str, list[dict]] = yaml.safe_load(NEEDS.read_text())
    hits = asked = 0
    for schema_file, items in needs.items():
        path = schema_path(schema_file)
        if path is None:
            unmeasured("search_recall_at_5", f"{schema_file} is not here")
            return
        catalogue = compile_catalogue(load_schema(path).schema, mutations=True)
        start = time.perf_counter()
        index = catalogue_search(catalogue)
        index.search(items[0]["need"], limit=TOP)
        first = time.perf_counter() - start
        name = schema_file.split(".")[0]
        figure(f"search_{name}_first_search_seconds", first)
        for item in items:
            found = [hit.name for hit in index.search(item["need"], limit=TOP)]
            asked += 1
            if set(item["tools"]) & set(found):
                hits += 1
            else:
                print(f"# missed on {name}: {item['need']!r} wants {item['tools']}, top {TOP}: {found}", flush=True)
        if name == "github":
            times = []
            for _ in range(3):
                for item in items:
                    gc.collect()
                    start = time.perf_counter()
                    index.search(item["need"], limit=TOP)
                    times.append(time.perf_counter() - start)
            figure("search_github_query_ms", median(times) * 1000, "<= 20")
            figure("search_github_slowest_query_ms", max(times) * 1000)
    figure("search_needs", asked)
    figure("search_recall_at_5", hits / asked if asked else None, ">= 0.9")


def main() -> int:
    run_search_bench()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
