"""Can a model answer a question about a page from what the call that returned it shows?

    python bench/preview_questions.py                 # the blind set; prints `figure: value` lines, exits 1 on a miss
    python bench/preview_questions.py --only swapi    # one server family

bench/preview_questions_blind.yaml holds questions about result pages ("which of these jobs pays the
most?", "how many seats are left after my booking?") over the test servers of eleven families,
written from the servers' sources and raw answers by someone who had not seen how dagtools shows
results, and committed before it was first measured. Each question names the calls of one script:
`before` (made first, in the same session: a field the model read there stays a column of its type)
and `call` (the steps to the page; the last one is the page asked about), and `evidence`, the values
a model must see in what that last call returned to answer. A question counts as answered when every
evidence value is in the text of that result: a number as a number, a string as written (a cut text
ending in "…" does not count). The figure is the share answered; target >= 0.9 (DESIGN.md's
Budgets). Which questions missed is not printed (`--show-misses` does): the next change must not be
chosen by them, or the set stops measuring what nobody tuned for.

Servers start as the tests start them (tests/thirdparty.py, tests/servers.py): one per family for
the reads, and a fresh one for each script that writes. A family whose server cannot start here is
reported unmeasured, with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # not bench/, whose mcp.py would hide the MCP SDK

import yaml  # noqa: E402

from bench._figures import exit_status, figure, unmeasured  # noqa: E402

__all__ = ["answered", "run_questions"]

BLIND = ROOT / "bench" / "preview_questions_blind.yaml"
TARGET = ">= 0.9"

#: Node servers: family -> (script, package that must be installed, GraphQL path).
_NODE = {
    "swapi": ("swapi.js", "swapi-graphql", "/graphql"),
    "media": ("app.js", "graphql-yoga", "/graphql"),
    "workshops": ("workshops.js", "type-graphql", "/graphql"),
    "orders": ("orders.js", "@pothos/core", "/graphql"),
    "warehouse": ("warehouse.js", "@apollo/gateway", "/graphql"),
    "mercurius": ("mercurius.js", "mercurius", "/graphql"),
}


class _Folders:
    """What the tests' server starters ask of pytest's tmp_path_factory."""

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-"))


@contextlib.contextmanager
def serve(family: str) -> Iterator[str]:
    """Start the server of `family` as the tests do; yields its GraphQL URL."""
    if family in _NODE:
        from tests.thirdparty import start_node_server

        script, package, path = _NODE[family]
        with start_node_server(script, package, _Folders()) as port:  # type: ignore[arg-type]
            yield f"http://127.0.0.1:{port}{path}"
    elif family == "jobs":
        from tests.thirdparty import GRAPHENE_PYTHON, start_python_server

        if not GRAPHENE_PYTHON.exists():
            raise RuntimeError(f"graphene-django's interpreter {GRAPHENE_PYTHON} is missing (.ci/run makes it)")
        with start_python_server("jobs_django.py", _Folders()) as port:  # type: ignore[arg-type]
            yield f"http://127.0.0.1:{port}/graphql"
    elif family in ("books", "booking", "library"):
        from tests.servers import serve_asgi

        module = __import__(f"tests.pyservers.{family}", fromlist=["app"])
        app = module.make_app()[0] if family == "library" else module.app()
        with serve_asgi(app) as base:
            yield f"{base}/graphql"
    elif family == "json-graphql-server":
        with _json_graphql_server() as url:
            yield url
    else:
        raise RuntimeError(f"no way to start the server of family {family!r}")


@contextlib.contextmanager
def _json_graphql_server() -> Iterator[str]:
    from tests.interop.test_json_graphql_server import DB, PACKAGE
    from tests.servers import free_port, wait_for_port

    npx = shutil.which("npx")
    if npx is None:
        raise RuntimeError("npx is not on PATH")
    folder = Path(tempfile.mkdtemp(prefix="json-graphql-server-"))
    (folder / "db.json").write_text(json.dumps(DB))
    port = free_port()
    server = subprocess.Popen(
        [npx, "--yes", PACKAGE, "db.json", "--port", str(port), "--host", "127.0.0.1"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, timeout=180, alive=lambda: server.poll() is None)
        yield f"http://127.0.0.1:{port}/"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(10)


def _number(value: float) -> re.Pattern[str]:
    text = json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    return re.compile(rf"(?<![\d.]){re.escape(text)}(\.0+)?(?![\d])")


def answered(evidence: list[Any], text: str) -> bool:
    """Whether every evidence value is in `text`: a number as a number (7 and 7.0 alike), a string as
    written (JSON-escaped, as it sits in a result), true, false and null as JSON writes them."""
    for value in evidence:
        if isinstance(value, bool) or value is None:
            if json.dumps(value) not in text:
                return False
        elif isinstance(value, (int, float)):
            if not _number(value).search(text):
                return False
        elif json.dumps(str(value), ensure_ascii=False)[1:-1] not in text:
            return False
    return True


async def _ask(url: str, question: dict[str, Any]) -> tuple[bool, str]:
    """Run one question's script; whether its last call's result holds the evidence, and that result."""
    from dagtools import ToolCall, open_session

    async with await open_session(url, cache=False, mutations=bool(question.get("writes"))) as session:
        text = ""
        for step in [*(question.get("before") or []), *question["call"]]:
            result = await session.call_tool(ToolCall(name=step["tool"], arguments=dict(step.get("arguments") or {})), select=True)
            text = result.content
            if result.is_error:
                return False, text
    return answered(list(question["evidence"]), text), text


async def _family(url: str, questions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], bool, str]]:
    return [(q, *(await _ask(url, q))) for q in questions]


def run_questions(path: Path = BLIND, *, only: str | None = None, show_misses: bool = False) -> None:
    data = yaml.safe_load(path.read_text())
    families: dict[str, list[dict[str, Any]]] = {}
    for question in data["questions"]:
        if only is None or question["server"] == only:
            families.setdefault(question["server"], []).append(question)
    answered_total = asked_total = 0
    for family, questions in families.items():
        outcomes: list[tuple[dict[str, Any], bool, str]] = []
        try:
            reads = [q for q in questions if not q.get("writes")]
            if reads:
                with serve(family) as url:
                    outcomes += asyncio.run(_family(url, reads))
            for question in (q for q in questions if q.get("writes")):
                with serve(family) as url:  # a fresh server: every write script starts from the data as shipped
                    outcomes += asyncio.run(_family(url, [question]))
        except BaseException as error:  # pytest.skip raises a BaseException where node or a package is absent
            if isinstance(error, KeyboardInterrupt):
                raise
            unmeasured(f"preview_answered_share[{family}]", str(error)[:200])
            continue
        hits = sum(1 for _, hit, _ in outcomes if hit)
        answered_total += hits
        asked_total += len(outcomes)
        figure(f"preview_answered[{family}]", f"{hits}/{len(outcomes)}")
        if show_misses:
            for question, hit, text in outcomes:
                if not hit:
                    print(f"# missed {question['id']}: {question['question']} evidence={question['evidence']} got {text[:600]}")
    if asked_total:
        figure("preview_answered_share", round(answered_total / asked_total, 3), TARGET)
        figure("preview_questions", asked_total)
    else:
        unmeasured("preview_answered_share", "no family's server could start here")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="one server family")
    parser.add_argument("--set", type=Path, default=BLIND, help="a question file (default: the blind set)")
    parser.add_argument("--show-misses", action="store_true", help="print the questions missed (not for the blind set while tuning)")
    args = parser.parse_args()
    run_questions(args.set, only=args.only, show_misses=args.show_misses)
    sys.exit(exit_status())
