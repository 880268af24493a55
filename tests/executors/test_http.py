"""Real APIs over HTTP on loopback: the kitchen served by uvicorn, schema caching, headers, and faults."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dagtools import HttpExecutor, load_schema, open_session
from dagtools._errors import HttpStatusError, SchemaLoadError, TransportError
from dagtools._tools import ToolCall
from dagtools.load._cache import cache_key
from dagtools.load._introspect import fetch_schema
from dagtools.scripts._script import load_script, run_script
from examples.kitchen.api import schema as kitchen_schema
from tests.command import dagtools
from tests.servers import Fault, FaultServer, serve_asgi

ROOT = Path(__file__).resolve().parents[2]
FRIES = ROOT / "examples" / "kitchen" / "fries.yaml"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every command it starts) caches schemas in its own folder, with no ambient headers."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DAGTOOLS_CACHE_DIR", str(folder))
    monkeypatch.delenv("DAGTOOLS_HEADERS", raising=False)
    monkeypatch.delenv("DAGTOOLS_AUTHORIZATION", raising=False)
    return folder


def introspections(requests) -> int:
    return sum(1 for r in requests if r.is_introspection)


# -- the kitchen over HTTP ---------------------------------------------------------------------------------


async def test_fries_over_http_with_open_session(kitchen_server) -> None:
    script = load_script(FRIES)
    session = await open_session(kitchen_server.url, inputs=script.inputs, outputs=script.outputs)
    try:
        assert isinstance(session.executor, HttpExecutor)
        records = [record async for record in run_script(session, script)]
    finally:
        await session.executor.aclose()
    assert [r.problem for r in records] == [None] * len(records)
    assert session.saved == {"fries": "Plate#2"}
    assert session.registry.get("Fries#1").expression == "Oven#1.bake(item: Potato#4)"
    assert all(r.method == "POST" for r in kitchen_server.requests)


def test_fries_over_http_with_the_cli(kitchen_url: str) -> None:
    done = dagtools("call", kitchen_url, str(FRIES), "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["result"] for line in lines[1:5]] == [{"result": f"Potato#{n}"} for n in (2, 3, 4)] + [{"result": "Fries#1"}]
    assert lines[-1] == {"outputs": {"fries": "Plate#2"}}


def test_tools_json_over_http(kitchen_url: str) -> None:
    done = dagtools("tools", kitchen_url, "--json")
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)
    assert isinstance(tools, list)
    assert tools[0]["function"]["name"] == "selectTools"
    assert "Query_*: potato, potatoes" in tools[0]["function"]["description"]  # the root tools, one line


def test_tools_all_lists_the_served_fields(kitchen_url: str) -> None:
    done = dagtools("tools", kitchen_url, "--all", "--json", "--format", "mcp")
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"Query_potato", "Potato_peel", "Oven_bake", "Fries_plate"} <= names


def test_a_url_nothing_listens_on_fails_clearly(tmp_path: Path) -> None:
    with serve_asgi(lambda *a: None) as base:
        url = base + "/graphql"
    done = dagtools("tools", url, "--timeout", "2")
    assert done.returncode == 2
    assert f"Cannot load the schema of {url}" in done.stderr
    assert "could not be reached" in done.stderr and "Traceback" not in done.stderr


# -- schema loading and its cache --------------------------------------------------------------------------


def test_a_second_load_reads_the_cache(kitchen_server, cache_dir: Path) -> None:
    first = load_schema(kitchen_server.url)
    second = load_schema(kitchen_server.url)
    assert introspections(kitchen_server.requests) == 1
    assert first.origin == second.origin == kitchen_server.url
    assert "Potato" in second.schema.type_map
    entries = list(cache_dir.glob("*.json"))
    assert [p.stem for p in entries] == [cache_key(kitchen_server.url)]
    assert "Authorization" not in entries[0].read_text()


def test_other_headers_use_another_cache_entry(kitchen_server, cache_dir: Path) -> None:
    load_schema(kitchen_server.url, headers={"Authorization": "Bearer one"})
    load_schema(kitchen_server.url, headers={"Authorization": "Bearer two"})
    load_schema(kitchen_server.url, headers={"authorization": "Bearer one"})  # header names ignore case
    assert introspections(kitchen_server.requests) == 2
    assert len(list(cache_dir.glob("*.json"))) == 2
    entry = (cache_dir / f"{cache_key(kitchen_server.url, {'Authorization': 'Bearer one'})}.json").read_text()
    assert "Bearer" not in entry  # header values never reach the disk


def test_no_cache_neither_reads_nor_writes(kitchen_server, cache_dir: Path) -> None:
    load_schema(kitchen_server.url, use_cache=False)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())
    load_schema(kitchen_server.url)
    load_schema(kitchen_server.url, use_cache=False)
    assert introspections(kitchen_server.requests) == 3


def test_refresh_fetches_again_and_overwrites(kitchen_server, cache_dir: Path) -> None:
    load_schema(kitchen_server.url)
    path = cache_dir / f"{cache_key(kitchen_server.url)}.json"
    before = json.loads(path.read_text())["fetched_at"]
    time.sleep(0.01)
    load_schema(kitchen_server.url, refresh=True)
    assert introspections(kitchen_server.requests) == 2
    assert json.loads(path.read_text())["fetched_at"] > before
    load_schema(kitchen_server.url)
    assert introspections(kitchen_server.requests) == 2


def test_cli_cache_options(kitchen_server) -> None:
    for options in ([], [], ["--no-cache"], ["--refresh-schema"], []):
        done = dagtools("tools", kitchen_server.url, *options)
        assert done.returncode == 0, done.stderr
        assert "\n  Potato_slice(Potato?: Potato#N, shape: STICKS|SLICES) -> Potato: " in done.stdout  # the README's first URL command
    assert introspections(kitchen_server.requests) == 3  # first, --no-cache, --refresh-schema


def test_an_old_entry_is_checked_again(kitchen_server) -> None:
    load_schema(kitchen_server.url)
    load_schema(kitchen_server.url, ttl=0)
    assert introspections(kitchen_server.requests) == 2


async def test_a_stale_entry_serves_when_the_api_is_down(cache_dir: Path) -> None:
    with FaultServer(kitchen_schema) as server:
        url = server.url
        await fetch_schema(url)
        server.queue(Fault.status_code(503))
        loaded = await fetch_schema(url, ttl=0, executor=HttpExecutor(url, retries=0))
    assert "Potato" in loaded.schema.type_map
    assert "used the copy cached" in loaded.warnings[0] and "HTTP 503" in loaded.warnings[0]
    with pytest.raises(SchemaLoadError, match="could not be reached"):
        await fetch_schema(url, refresh=True, timeout=1)


async def test_introspection_refused(cache_dir: Path) -> None:
    with FaultServer(kitchen_schema) as server:
        server.queue(Fault.json_body({"errors": [{"message": "introspection is disabled"}]}))
        with pytest.raises(SchemaLoadError, match="refused the introspection query: introspection is disabled"):
            await fetch_schema(server.url)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


# -- headers reach the API ---------------------------------------------------------------------------------


async def test_headers_reach_the_server_for_schema_and_calls(kitchen_server) -> None:
    session = await open_session(
        kitchen_server.url,
        headers={"Authorization": "Bearer secret", "X-Team": "fries"},
        inputs={"potato": {"field": "potato", "description": "A potato."}},
    )
    try:
        session.select(["Potato_peel"])
        result = await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}))
    finally:
        await session.executor.aclose()
    assert result.value["result"] == "Potato#2"
    assert len(kitchen_server.requests) == 3  # introspection, the input, the call
    for request in kitchen_server.requests:
        assert request.headers["authorization"] == "Bearer secret"
        assert request.headers["x-team"] == "fries"
        assert request.headers["content-type"] == "application/json"


def test_headers_from_the_environment_and_the_cli(kitchen_server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGTOOLS_HEADERS", json.dumps({"X-Team": "env", "X-Other": "kept"}))
    monkeypatch.setenv("DAGTOOLS_AUTHORIZATION", "Bearer from-env")
    done = dagtools("call", kitchen_server.url, str(FRIES), "-H", "X-Team: cli", "-H", "X-Extra:  spaced ")
    assert done.returncode == 0, done.stderr
    assert len(kitchen_server.requests) > 5
    for request in kitchen_server.requests:
        assert request.headers["authorization"] == "Bearer from-env"
        assert request.headers["x-team"] == "cli"  # the command line wins over the environment
        assert request.headers["x-other"] == "kept"
        assert request.headers["x-extra"] == "spaced"


def test_a_malformed_header_option() -> None:
    done = dagtools("tools", "http://127.0.0.1:1/graphql", "-H", "no colon here")
    assert done.returncode == 2
    assert "is not a header; write it as 'Name: value'" in done.stderr


# -- faults: each one is an error result, changes nothing, and the next call works ----------------------


@pytest.fixture
def fault_server():
    with FaultServer(kitchen_schema) as server:
        yield server


async def faulty_session(server: FaultServer, *, mutations: bool = False, **executor_options):
    options = {"retries": 2, "backoff": 0.01, "timeout": 2.0, **executor_options}
    session = await open_session(
        load_schema(kitchen_schema),
        executor=HttpExecutor(server.url, **options),
        mutations=mutations,
        inputs={"potato": {"field": "potato", "description": "A potato."}},
    )
    session.select(["Potato_peel", "Potato_dice"] + (["Mutation_tip"] if mutations else []))
    server.requests.clear()
    return session


async def peel(session):
    return await session.call_tool(ToolCall(name="Potato_peel", arguments={"Potato": "Potato#1"}))


async def assert_fault(server: FaultServer, session, *faults: Fault, expected: list[str], requests: int) -> str:
    """Queue the faults, make one call: an error result naming the cause, nothing minted, next call fine."""
    before = len(session.registry)
    server.queue(*faults)
    result = await peel(session)
    assert result.is_error, result.value
    text = result.value["error"]
    for part in expected:
        assert part in text, text
    assert len(server.requests) == requests
    assert len(session.registry) == before
    assert session.registry.get("Potato#2") is None
    server.faults.clear()
    again = await peel(session)
    assert not again.is_error and again.value["result"] == "Potato#2"
    await session.executor.aclose()
    return text


async def test_a_500_then_success_is_retried(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    fault_server.queue(Fault.status_code(500))
    result = await peel(session)
    assert not result.is_error and result.value["result"] == "Potato#2"
    assert len(fault_server.requests) == 2
    await session.executor.aclose()


async def test_always_500(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    text = await assert_fault(
        fault_server,
        session,
        *[Fault.status_code(500, b"database on fire")] * 3,
        requests=3,
        expected=[
            "The API could not be reached for Potato#1.peel",
            f"{fault_server.url} answered HTTP 500 Internal Server Error",
            "(tried 3 times)",
            "database on fire",
            "try again later",
            "Nothing was created",
        ],
    )
    assert "Traceback" not in text


async def test_a_hang_past_the_timeout(fault_server: FaultServer) -> None:
    # The timeout bounds the whole call: a hang uses it up, and no retry starts after it.
    session = await faulty_session(fault_server, timeout=0.3, retries=1)
    started = time.monotonic()
    await assert_fault(
        fault_server,
        session,
        Fault.hang(10),
        Fault.hang(10),
        requests=1,
        expected=["did not answer within 0.3s", "retries included", "--timeout"],
    )
    assert time.monotonic() - started < 5


async def test_a_reset_connection(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    await assert_fault(
        fault_server,
        session,
        *[Fault.reset()] * 3,
        requests=3,
        expected=["connection closed or reset by the server", "(tried 3 times)", "server is running"],
    )


async def test_one_reset_is_retried(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    fault_server.queue(Fault.reset())
    result = await peel(session)
    assert not result.is_error and result.value["result"] == "Potato#2"
    assert len(fault_server.requests) == 2
    await session.executor.aclose()


async def test_a_body_that_is_not_json(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    await assert_fault(
        fault_server,
        session,
        Fault.raw(b"<html><body>Welcome to nginx!</body></html>"),
        requests=1,
        expected=["answered with something that is not JSON (text/html)", "Welcome to nginx!", "GraphQL endpoint"],
    )


async def test_json_that_is_not_a_graphql_answer(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    await assert_fault(
        fault_server,
        session,
        Fault.json_body({"message": "hello"}),
        requests=1,
        expected=["not a GraphQL response", '{"message": "hello"}'],
    )


async def test_errors_with_partial_data(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    answer = {"data": {"potato": None}, "errors": [{"message": "the potato has gone off", "path": ["potato", "peel"]}]}
    text = await assert_fault(
        fault_server,
        session,
        Fault.json_body(answer),
        requests=1,
        expected=["The API returned an error for Potato#1.peel", "the potato has gone off (at potato.peel)"],
    )
    assert "could not be reached" not in text


async def test_graphql_errors_on_a_400_are_an_answer(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    answer = {"errors": [{"message": "Cannot query field 'peel'"}]}
    await assert_fault(
        fault_server,
        session,
        Fault.json_body(answer, status=400),
        requests=1,
        expected=["The API returned an error for Potato#1.peel", "Cannot query field 'peel'"],
    )


async def test_401_names_the_authorization_header(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    await assert_fault(
        fault_server,
        session,
        Fault.json_body({"message": "Bad credentials"}, status=401),
        requests=1,
        expected=["HTTP 401 Unauthorized", "Bad credentials", "check the Authorization header"],
    )


async def test_429_waits_as_retry_after_asks(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server)
    fault_server.queue(Fault.status_code(429, Retry_After="1"))
    started = time.monotonic()
    result = await peel(session)
    assert not result.is_error and result.value["result"] == "Potato#2"
    assert time.monotonic() - started >= 0.9
    assert len(fault_server.requests) == 2
    await session.executor.aclose()


async def test_a_mutation_is_never_retried(fault_server: FaultServer) -> None:
    session = await faulty_session(fault_server, mutations=True)
    for fault in (Fault.status_code(500), Fault.reset(), Fault.status_code(503, Retry_After="0")):
        fault_server.requests.clear()
        fault_server.queue(fault, fault, fault)
        result = await session.call_tool(ToolCall(name="Mutation_tip", arguments={"amount": 1}))
        assert result.is_error and "could not be reached for tip(amount: 1)" in result.value["error"]
        assert "tried" not in result.value["error"]
        assert len(fault_server.requests) == 1, fault
        fault_server.faults.clear()
    before = len(session.registry)
    result = await session.call_tool(ToolCall(name="Mutation_tip", arguments={"amount": 1}))
    assert not result.is_error and isinstance(result.value["result"], int)
    assert len(session.registry) == before
    await session.executor.aclose()


async def test_the_executor_alone(fault_server: FaultServer) -> None:
    executor = HttpExecutor(fault_server.url, retries=1, backoff=0.01)
    try:
        fault_server.queue(Fault.status_code(502), Fault.status_code(502))
        with pytest.raises(HttpStatusError) as raised:
            await executor.execute("{ potato { variety } }")
        assert raised.value.status_code == 502 and "tried 2 times" in str(raised.value)
        fault_server.queue(Fault.reset())
        with pytest.raises(TransportError):
            await executor.execute("mutation { tip(amount: 1) }")
        response = await executor.execute("query Named { potato { variety } }", operation_name="Named")
        assert response.errors == [] and response.data == {"potato": {"variety": "Russet"}}
        assert fault_server.requests[-1].json() == {
            "query": "query Named { potato { variety } }",
            "variables": {},
            "operationName": "Named",
        }
    finally:
        await executor.aclose()


# -- odds and ends -----------------------------------------------------------------------------------------


class _Terminal:
    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.text = ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


async def test_progress_on_a_terminal_only(kitchen_url: str) -> None:
    from dagtools.load._introspect import stderr_progress

    assert stderr_progress(_Terminal(False)) is None
    terminal = _Terminal(True)
    await fetch_schema(kitchen_url, use_cache=False, progress=stderr_progress(terminal, threshold=1))
    assert terminal.text.startswith("\rdagtools: loading the schema: ") and terminal.text.endswith("MB\n")
    quiet = _Terminal(True)
    await fetch_schema(kitchen_url, use_cache=False, progress=stderr_progress(quiet))  # a small schema
    assert quiet.text == ""


def test_one_executor_in_several_event_loops(kitchen_url: str) -> None:
    import anyio

    executor = HttpExecutor(kitchen_url)
    for _ in range(2):  # each anyio.run is a new loop; the client follows it
        response = anyio.run(executor.execute, "{ potato { variety } }")
        assert response.data == {"potato": {"variety": "Russet"}}
    anyio.run(executor.aclose)


def test_load_schema_from_inside_an_event_loop(kitchen_url: str) -> None:
    import anyio

    async def inside() -> object:
        return load_schema(kitchen_url)

    assert "Potato" in anyio.run(inside).schema.type_map


def test_environment_headers() -> None:
    from dagtools._errors import ExecutorError
    from dagtools.executors._http import env_headers

    assert env_headers({}) == {}
    assert env_headers({"DAGTOOLS_HEADERS": '{"authorization": "a", "X-Key": "k"}', "DAGTOOLS_AUTHORIZATION": "Bearer b"}) == {
        "Authorization": "Bearer b",
        "X-Key": "k",
    }
    with pytest.raises(ExecutorError, match="DAGTOOLS_HEADERS is not valid JSON"):
        env_headers({"DAGTOOLS_HEADERS": "X-Key: k"})


@pytest.mark.parametrize("damage", ["nested", "future", "nan"])
def test_a_damaged_or_future_cache_entry_is_fetched_again(kitchen_server, cache_dir: Path, damage: str) -> None:
    load_schema(kitchen_server.url)
    path = cache_dir / f"{cache_key(kitchen_server.url)}.json"
    entry = json.loads(path.read_text())
    if damage == "nested":
        path.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        entry["fetched_at"] = time.time() + 10 * 365 * 24 * 3600 if damage == "future" else float("nan")
        path.write_text(json.dumps(entry))
    again = load_schema(kitchen_server.url)  # never a crash, never a stale schema forever
    assert "Potato" in again.schema.type_map
    assert introspections(kitchen_server.requests) == 2
    assert json.loads(path.read_text())["fetched_at"] <= time.time()


def test_clients_share_one_certificate_store_and_still_honour_ssl_cert_file(monkeypatch, tmp_path):
    """httpx loads the CA bundle per client (about 20 ms); a server makes an executor per session."""
    import certifi

    from dagtools.executors._tls import tls_context

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = HttpExecutor("https://api.example.invalid/graphql")._http()
    second = HttpExecutor("https://api.example.invalid/graphql")._http()
    assert first._transport._pool._ssl_context is second._transport._pool._ssl_context is tls_context()
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert tls_context() is not first._transport._pool._ssl_context  # another store, another context
    assert tls_context() is tls_context()


def _resolver_without(monkeypatch: pytest.MonkeyPatch, names: set[str], errno: int) -> list[str]:
    """The system's resolver, answering `errno` for `names` without asking the network (tests stay on
    loopback); returns the names it was asked for."""
    import socket

    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host  # anyio passes the IDNA-encoded name
        if name in names:
            asked.append(name)
            raise socket.gaierror(errno, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


async def test_a_host_name_that_does_not_resolve_fails_at_once_and_names_the_host_meant(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    asked = _resolver_without(monkeypatch, {"localhots", "api.example.invalid"}, socket.EAI_NONAME)
    started = time.monotonic()
    async with HttpExecutor("http://localhots:8000/graphql", retries=3, backoff=2.0) as executor:
        with pytest.raises(TransportError) as raised:
            await executor.execute("{ __typename }")
    assert asked == ["localhots"] and time.monotonic() - started < 2.0  # one try, no backoff
    said = str(raised.value)
    assert "the host name localhots does not resolve" in said and "Did you mean http://localhost:8000/graphql?" in said, said
    async with HttpExecutor("https://api.example.invalid/graphql", retries=3, backoff=2.0) as executor:
        with pytest.raises(TransportError, match="does not resolve") as raised:
            await executor.execute("{ __typename }")
    assert "Did you mean" not in str(raised.value)  # nothing close: no guess


async def test_a_resolver_that_cannot_answer_now_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    asked = _resolver_without(monkeypatch, {"api.example.invalid"}, socket.EAI_AGAIN)
    async with HttpExecutor("https://api.example.invalid/graphql", retries=2, backoff=0.01) as executor:
        with pytest.raises(TransportError, match="tried 3 times"):
            await executor.execute("{ __typename }")
    assert asked == ["api.example.invalid"] * 3
