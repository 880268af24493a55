"""GraphQL servers someone else wrote, started on free loopback ports for the tests that need them.

- `swapi_url`: graphql-js's Star Wars reference server (`swapi-graphql` from npm, on graphql 0.4 and
  express-graphql, with its bundled data): Relay `node(id:)`, connections, `costInCredits` Float on
  `Starship` and Int on `Vehicle`, and an introspection that predates `__Directive.locations`.
- `media_url`: tests/js/app.js on GraphQL Yoga and graphql 16: a union and an interface whose members
  conflict on field types, a Relay `Node` whose global ID field is `nodeId` (the primary key in `id`),
  a connection, mutations (one returns the object it changes, others payload types), an enum,
  custom scalars, a non-null list of non-null objects, a list of 40 articles with long text.
- `media_old_url`: the same app on graphql 14 behind a plain node:http server, whose introspection
  knows no `isRepeatable`, `specifiedByURL` or `args(includeDeprecated:)`.
- `media_closed_url`: the Yoga app refusing introspection, as production servers often do.
- `workshops_url`: tests/js/workshops.js, a TypeGraphQL server (classes and decorators) whose inputs
  class-validator checks: types reached again only through an interface (`session(id:): Session`) or
  a union (`bookable(id:): Bookable`) lookup, writes that answer nested payloads and lists, and
  validation errors that echo the input in `extensions` before the rule that failed.
- `jobs_url`: tests/pyservers/jobs_django.py, graphene-django on Django's ORM and SQLite with pydantic
  checking its inputs: Relay `node(id:)`, a union lookup, Relay mutation payloads, pydantic's errors
  in `extensions`. graphene needs a graphql-core older than dagtools', so the server runs under its
  own interpreter: `$DAGTOOLS_GRAPHENE_PYTHON`, else `.venv-graphene/bin/python` at the top of the
  checkout, made by `.ci/run` from tests/pyservers/graphene-requirements.txt.
- `conference_url`: tests/rb/conference.rb, graphql-ruby's class-based schema served by WEBrick: a Relay
  connection that also answers `totalCount`, `averageRating` and `facets` beyond its page, a foreign
  key (`speakerId`) beside the field that reads it (`speakerBySpeakerId`), long text, `DateTime` and
  `URL` scalars, value objects with no id (`Availability`, `ScheduleEntry`) that mutations change, a
  `FeedItem` interface whose members differ (a comment has no title), payloads holding user errors,
  and POST /reset. It needs ruby with the graphql and webrick gems (Debian's `ruby-graphql` and
  `ruby-webrick`, which `.ci/run` installs).
- `github_url`: tests/pyservers/github.py, GitHub's published schema (one of the public schemas, so
  its tests are marked `public_schemas`) made executable by generic resolvers over a small fixed world,
  for evals; POST /reset beside it.

The packages are pinned in tests/js/package.json and package-lock.json and installed by `.ci/run`
(`npm ci`); where node, the installed packages, the graphene interpreter or ruby's gems are missing
the fixtures skip and say so. The media
fixtures are module-scoped: one server per test module, so mutations made by one test are seen by the
next ones in that module; swapi-graphql, which has no mutations, runs once for the whole run.
`SERVER_VERSIONS` names what runs, read from the installed packages.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.recording import RecordingExecutor
from tests.servers import free_port, wait_for_port

if TYPE_CHECKING:
    from dagtools import Session, ToolResult

__all__ = [
    "JS",
    "SERVER_VERSIONS",
    "Open",
    "attempt",
    "call_ok",
    "conference_url",
    "opened",
    "recorded",
    "Recorded",
    "github_url",
    "jobs_url",
    "media_closed_url",
    "media_old_url",
    "media_url",
    "start_node_server",
    "swapi_url",
    "workshops_url",
]

JS = Path(__file__).resolve().parent / "js"
_MODULES = JS / "node_modules"
_PYSERVERS = Path(__file__).resolve().parent / "pyservers"
_RB = Path(__file__).resolve().parent / "rb"
#: The interpreter graphene-django runs under (see `jobs_url`).
GRAPHENE_PYTHON = Path(os.environ.get("DAGTOOLS_GRAPHENE_PYTHON") or Path(__file__).resolve().parent.parent / ".venv-graphene/bin/python")


def _version(package: str, *, under: Path = _MODULES) -> str:
    try:
        return str(json.loads((under / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "not installed"


_SWAPI_DEPS = _MODULES / "swapi-graphql" / "node_modules"
#: What each fixture runs, for reports and failure messages.
SERVER_VERSIONS = {
    "swapi-graphql": f"swapi-graphql {_version('swapi-graphql')} (graphql {_version('graphql', under=_SWAPI_DEPS)},"
    f" express-graphql {_version('express-graphql', under=_SWAPI_DEPS)})",
    "media": f"graphql-yoga {_version('graphql-yoga')} (graphql {_version('graphql')})",
    "media-old": f"node:http (graphql {_version('graphql14')})",
    "workshops": f"type-graphql {_version('type-graphql')}, class-validator {_version('class-validator')}"
    f" (graphql-yoga {_version('graphql-yoga')})",
    "jobs": f"graphene-django on Django and SQLite, under {GRAPHENE_PYTHON}",
    # Asking ruby costs a process: `conference_url` fills this in when it starts the server.
    "conference": "graphql-ruby on WEBrick (its version is read when the server starts)",
}


@pytest.fixture(scope="session")
def swapi_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """swapi-graphql on loopback, one for the run (it only reads its bundled data); yields its GraphQL URL
    (it answers at / and /graphql)."""
    with start_node_server("swapi.js", "swapi-graphql", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def media_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The media app on GraphQL Yoga (graphql 16); yields its GraphQL URL."""
    with start_node_server("app.js", "graphql-yoga", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def media_old_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The media app on graphql 14 (an old introspection); yields its GraphQL URL."""
    with start_node_server("app.js", "graphql14", tmp_path_factory, "--old") as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def media_closed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The media app on GraphQL Yoga with introspection refused; yields its GraphQL URL."""
    with start_node_server("app.js", "graphql-yoga", tmp_path_factory, "--no-introspection") as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def workshops_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The workshops app on TypeGraphQL and class-validator; yields its GraphQL URL."""
    with start_node_server("workshops.js", "type-graphql", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def jobs_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The job board on graphene-django, on a new SQLite file; yields its GraphQL URL."""
    if not GRAPHENE_PYTHON.exists():
        pytest.skip(
            f"graphene-django's interpreter {GRAPHENE_PYTHON} is missing: make it with `python3 -m venv .venv-graphene && "
            ".venv-graphene/bin/pip install -r tests/pyservers/graphene-requirements.txt` (as .ci/run does), "
            "or set DAGTOOLS_GRAPHENE_PYTHON"
        )
    with start_python_server("jobs_django.py", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def conference_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The conference API on graphql-ruby and WEBrick; yields its GraphQL URL (POST /reset beside it)."""
    with start_ruby_server("conference.rb", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


@pytest.fixture(scope="module")
def github_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The GitHub-shaped server on GitHub's published schema; yields its GraphQL URL (POST /reset beside it).
    Skips, saying how to get it, where the public schemas are absent."""
    from tests.conftest import shared_schema_path

    schema = shared_schema_path("github.schema.graphql")
    with start_module_server("tests.pyservers.github", tmp_path_factory, DAGTOOLS_SCHEMAS=str(schema.parent)) as port:
        yield f"http://127.0.0.1:{port}/graphql"


class start_node_server:  # noqa: N801 - used as a context manager, like open()
    """Run `node tests/js/SCRIPT PORT ARGS...` on a free port until the block ends.

    Skips the test (with the reason) where node is not on PATH or `package` is not installed in
    tests/js/node_modules; fails it, with the server's output, where the server does not start.
    """

    def __init__(self, script: str, package: str, tmp_path_factory: pytest.TempPathFactory, *args: str) -> None:
        self.script, self.package, self.args = script, package, args
        self.folder = tmp_path_factory.mktemp(Path(script).stem)
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> int:
        node = shutil.which("node")
        if node is None:
            pytest.skip(f"{self.script} needs Node.js: node is not on PATH")
        if not (_MODULES / self.package / "package.json").exists():
            pytest.skip(f"{self.package} is not installed in {_MODULES}: run `npm ci --prefix tests/js` (as .ci/run does)")
        return self._start([node, str(JS / self.script)], JS)

    def _start(self, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
        port = free_port()
        self.log = (self.folder / "server.log").open("w+")
        self.process = subprocess.Popen(
            [*command, str(port), *self.args],
            cwd=cwd,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        process = self.process
        try:
            wait_for_port(port, timeout=60, alive=lambda: process.poll() is None)
        except (RuntimeError, TimeoutError) as error:
            self.__exit__()
            self.log.seek(0)
            pytest.fail(f"{' '.join(command)} {' '.join(self.args)} did not start: {error}\n{self.log.read()[-2000:]}")
        return port

    def __exit__(self, *exc: object) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        if hasattr(self, "log"):
            self.log.close()


class start_python_server(start_node_server):  # noqa: N801
    """Run `GRAPHENE_PYTHON tests/pyservers/SCRIPT PORT DATABASE` on a free port, on a new SQLite file,
    until the block ends; fails the test, with the server's output, where it does not start."""

    def __init__(self, script: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        super().__init__(script, "", tmp_path_factory)
        self.args = (str(self.folder / "db.sqlite3"),)

    def __enter__(self) -> int:
        return self._start([str(GRAPHENE_PYTHON), str(_PYSERVERS / self.script)], _PYSERVERS)


class start_module_server(start_node_server):  # noqa: N801
    """Run `python -m MODULE PORT` (this interpreter, from the top of the checkout) on a free port until the
    block ends, with `environment` added to this process's; fails the test, with the server's output,
    where it does not start."""

    def __init__(self, module: str, tmp_path_factory: pytest.TempPathFactory, **environment: str) -> None:
        super().__init__(module, "", tmp_path_factory)
        self.module, self.environment = module, environment

    def __enter__(self) -> int:
        return self._start([sys.executable, "-m", self.module], _PYSERVERS.parent.parent, {**os.environ, **self.environment})


class start_ruby_server(start_node_server):  # noqa: N801
    """Run `ruby tests/rb/SCRIPT PORT` on a free port until the block ends, recording graphql-ruby's
    version in `SERVER_VERSIONS`; skips the test (with the reason) where ruby or its graphql or webrick
    gem is missing, fails it, with the server's output, where the server does not start."""

    def __init__(self, script: str, tmp_path_factory: pytest.TempPathFactory) -> None:
        super().__init__(script, "", tmp_path_factory)

    def __enter__(self) -> int:
        ruby = shutil.which("ruby")
        if ruby is None:
            pytest.skip(f"{self.script} needs Ruby: ruby is not on PATH (apt-get install ruby-graphql ruby-webrick, as .ci/run does)")
        probe = subprocess.run(
            [ruby, "-e", 'require "graphql"; require "webrick"; print GraphQL::VERSION, " ", WEBrick::VERSION'],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if probe.returncode != 0:
            pytest.skip(
                f"{self.script} needs the graphql and webrick gems, which {ruby} cannot load "
                f"(apt-get install ruby-graphql ruby-webrick, as .ci/run does): {probe.stderr.strip()[-300:]}"
            )
        graphql, webrick = probe.stdout.split()
        SERVER_VERSIONS["conference"] = f"graphql-ruby {graphql} (webrick {webrick})"
        return self._start([ruby, str(_RB / self.script)], _RB)


Open = Callable[..., Awaitable["Session"]]


@pytest.fixture
async def opened() -> AsyncIterator[Open]:
    """Opens sessions on a URL (with `open_session`'s options) with every tool selected, and closes their
    HTTP clients afterwards."""
    from dagtools import open_session

    sessions: list[Session] = []

    async def open_on(url: str, **options: Any) -> Session:
        session = await open_session(url, cache=False, max_active_tools=128, **options)
        session.select(session.catalogue.names())
        sessions.append(session)
        return session

    yield open_on
    for session in sessions:
        await session.executor.aclose()


Recorded = Callable[..., Awaitable[tuple["Session", RecordingExecutor]]]


@pytest.fixture
async def recorded() -> AsyncIterator[Recorded]:
    """Like `opened`, with every document sent recorded: yields `(session, executor)`."""
    from dagtools import HttpExecutor, open_session

    executors: list[RecordingExecutor] = []

    async def open_on(url: str, **options: Any) -> tuple[Session, RecordingExecutor]:
        executor = RecordingExecutor(HttpExecutor(url, retries=0))
        executors.append(executor)
        session = await open_session(url, executor=executor, cache=False, max_active_tools=128, **options)
        session.select(session.catalogue.names())
        return session, executor

    yield open_on
    for executor in executors:
        await executor.aclose()


async def attempt(session: Session, tool: str, /, **arguments: Any) -> ToolResult:
    from dagtools import ToolCall

    return await session.call_tool(ToolCall(name=tool, arguments=arguments))


async def call_ok(session: Session, tool: str, /, **arguments: Any) -> Any:
    """Call `tool` with `arguments` and return its value, failing the test on an error result."""
    result = await attempt(session, tool, **arguments)
    assert not result.is_error, (tool, result.value, SERVER_VERSIONS)
    return result.value
