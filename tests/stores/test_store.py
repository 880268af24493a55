"""Session stores: memory, SQLite, a real redis-server on loopback and a real Redis Cluster of 3 primaries
and 3 replicas (`tests/redis_cluster.py`). A session survives the process that owned it being killed, and
two processes working on one key lose no update."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from dagtools import ConfigError, Message
from dagtools.session._persistence import StateEncoder, decode_state, encode_state, hold
from dagtools.session._state import SessionState
from dagtools.stores._open import default_data_dir, open_store
from dagtools.stores._sqlite import SqliteStore
from dagtools.stores._store import MemoryStore, StoreConflictError
from tests.kitchen import call, kitchen_session
from tests.redis_cluster import start_redis_server

ROOT = Path(__file__).resolve().parents[2]


def redis_server() -> tuple[str, subprocess.Popen[bytes]]:
    """A real redis-server on a free loopback port (the caller stops it); skips, saying why, where there is none."""
    pytest.importorskip("redis", reason="redis-py is not installed (pip install 'dagtools-graphql[redis]'): Redis store not tested")
    started = start_redis_server()
    if started is None:
        pytest.skip("redis-server is not installed (.ci/run installs it with apt-get): the Redis store is not tested here")
    return started


@pytest.fixture(scope="module")
def redis_url():
    """A real redis-server on a free loopback port, for this module; skips, saying why, where there is none."""
    url, server = redis_server()
    try:
        yield url
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture(scope="module")
def redis_cluster():
    """A real Redis Cluster (3 primaries, 3 replicas) on loopback, for this module; skips, saying why, where it cannot start."""
    pytest.importorskip("redis", reason="redis-py is not installed (pip install 'dagtools-graphql[redis]'): Redis Cluster not tested")
    from tests.redis_cluster import RedisCluster, Unavailable

    try:
        cluster = RedisCluster()
    except Unavailable as why:
        pytest.skip(f"no Redis Cluster: {why}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["memory", "sqlite", "redis", "cluster"])
def store_url(request, tmp_path):
    if request.param == "memory":
        return f"memory:{tmp_path.name}"
    return _fresh(request, tmp_path)


@pytest.fixture(params=["sqlite", "redis", "cluster"])
def shared_url(request, tmp_path):
    """Stores several processes reach."""
    return _fresh(request, tmp_path)


@pytest.fixture(params=["redis", "cluster"])
def redis_kind(request) -> str:
    return request.param


def _fresh(request, tmp_path: Path) -> str:
    """An empty store of the requested kind: a new SQLite file, or the Redis server's (or cluster's) data emptied."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    return _fresh_redis(request, request.param)


def _fresh_redis(request, kind: str = "redis") -> str:
    import redis

    if kind == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        cluster.flush()
        return cluster.url
    url = request.getfixturevalue("redis_url")
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url


def _flush_scripts(request, kind: str, url: str) -> None:
    """Make the server (every node of the cluster) forget the store's scripts, as a restart does."""
    import redis

    if kind == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        for port in cluster.live():
            cluster.ask(port, "script", "flush")
        return
    with redis.Redis.from_url(url) as client:
        client.script_flush()


# -- the store interface ------------------------------------------------------------------------------


async def test_store_versions_guard_every_save(store_url):
    store = open_store(store_url)
    try:
        key = f"k-{time.time_ns()}"
        assert await store.load(key) is None
        assert await store.save(key, b"one", version=0) == 1
        with pytest.raises(StoreConflictError, match="version 1, not 0"):
            await store.save(key, b"again", version=0)
        assert await store.save(key, b"two", version=1) == 2
        with pytest.raises(StoreConflictError):
            await store.save(key, b"stale", version=1)
        loaded = await store.load(key)
        assert loaded is not None and (loaded.version, loaded.data) == (2, b"two")
        unchanged = await store.load(key, known=2)
        assert unchanged is not None and (unchanged.version, unchanged.data) == (2, None)
        assert await store.delete(key) and not await store.delete(key)
        assert await store.load(key) is None
    finally:
        await store.aclose()


async def test_idle_sessions_expire(store_url):
    store = open_store(store_url + ("&" if "?" in store_url else "?") + "idle=0.2")
    try:
        await store.save("idle", b"x", version=0)
        await anyio.sleep(0.4)
        await store.expire()
        assert await store.load("idle") is None
    finally:
        await store.aclose()


def test_store_urls():
    assert isinstance(open_store("memory:"), MemoryStore) and open_store("memory:") is open_store("memory:")
    assert open_store("memory:other") is not open_store("memory:")
    assert isinstance(open_store("sqlite:///rel/s.db"), SqliteStore) and open_store("sqlite:///rel/s.db").path == Path("rel/s.db")
    assert open_store("sqlite:////abs/s.db").path == Path("/abs/s.db")
    assert open_store("sqlite:").path == default_data_dir() / "sessions.sqlite3"
    assert open_store("memory:x?idle=60").idle_ttl == 60
    with pytest.raises(ConfigError, match="Use memory:, sqlite:///PATH, redis://HOST:PORT/DB or redis[+]cluster://"):
        open_store("postgres://db")
    with pytest.raises(ConfigError, match="idle must be a number"):
        open_store("memory:?idle=soon")


# -- restoring a session ------------------------------------------------------------------------------


async def test_state_round_trips_into_a_new_session():
    async with await kitchen_session(result_budget=60) as first:
        await call(first, "selectTools", tools=["Potato_peel", "Potato_slice", "Oven_manual", "Sink_rinse"])
        await call(first, "Potato_peel")
        await call(first, "Potato_slice", Potato="Potato#1", shape="STICKS")
        await call(first, "Potato_peel", Potato="Potato#2")  # an error result, recorded in the context
        cut = await call(first, "Oven_manual")
        assert "truncated" in cut.content
        await call(first, "Sink_rinse", item="Potato#1")
        state = first.state()
    data = encode_state(state)
    assert json.loads(data) == state.to_json()
    async with await kitchen_session(inputs={}) as second:
        second.restore(decode_state(data))
        assert second.state() == state
        assert [e.id for e in second.registry.recent()] == [e.id for e in first.registry.recent()]
        assert second.registry.latest("Potato") == first.registry.latest("Potato")
        # the same handle keeps its ID; a new one continues the numbering; the long value reads on
        assert (await call(second, "Potato_peel", Potato="Potato#1")).value == {"result": "Potato#2"}
        made = await call(second, "Potato_slice", Potato="Potato#1", shape="SLICES")
        assert made.value == {"result": f"Potato#{first.registry.count('Potato') + 1}"}
        assert not (await call(second, "readResult", ref="Oven#1.manual", offset=60)).is_error
        assert second.context.messages[-1].tool_call_id == f"call_{state.calls + 3}"


async def test_the_encoder_reuses_what_did_not_change_and_agrees_with_the_state():
    encoder = StateEncoder()
    async with await kitchen_session() as session:
        await call(session, "selectTools", tools=["Potato_peel"])
        first = encoder.encode(session)
        await call(session, "Potato_peel")
        second = encoder.encode(session)
        assert json.loads(second) == session.state().to_json() != json.loads(first)
        assert decode_state(second) == session.state()
        session.context.messages.insert(0, Message(role="system", content="You cook."))  # as an agent does
        assert json.loads(encoder.encode(session)) == session.state().to_json()
        session.context.add_user("Fries, please.")
        assert json.loads(encoder.encode(session)) == session.state().to_json()


async def test_large_states_are_stored_compressed_and_read_back():
    from dagtools import Handle, Step

    async with await kitchen_session() as session:
        for n in range(2000):
            session.registry.mint("Potato", Handle((Step.of("loadPotatoFromID", {"id": f"p{n}"}),)), expression=f"p{n}")
        data = StateEncoder().encode(session)
        plain = json.dumps(session.state().to_json()).encode()
        assert data[:1] != b"{" and len(data) < len(plain) / 5
        assert decode_state(data) == session.state() == decode_state(encode_state(session.state()))


async def test_a_damaged_state_is_refused_with_what_to_do():
    with pytest.raises(ConfigError, match="delete it from the store"):
        decode_state(b"{not json")
    with pytest.raises(ConfigError, match="no objects"):
        SessionState.from_json({"context": []})


# -- sessions in a store --------------------------------------------------------------------------------


async def test_open_session_resumes_by_key(store_url):
    async with await kitchen_session(store=store_url, key="kitchen") as first:
        assert first.key == "kitchen"
        await call(first, "selectTools", tools=["Potato_peel"])
        assert (await call(first, "Potato_peel")).value == {"result": "Potato#2"}
    async with await kitchen_session(store=store_url, key="kitchen", inputs={"other": {"value": 1}}) as again:
        assert [e.id for e in again.registry] == ["Oven#1", "Potato#1", "Sink#1", "Plate#1", "Potato#2"]
        assert again.values == [] and again.active_tools == ["Potato_peel"]
        assert (await call(again, "Potato_peel", Potato="Potato#1")).value == {"result": "Potato#2"}
    async with await kitchen_session(store=store_url) as fresh:
        assert fresh.key and fresh.key != "kitchen" and len(fresh.key) >= 24
        assert [e.id for e in fresh.registry] == ["Oven#1", "Potato#1", "Sink#1", "Plate#1"]


async def test_two_sessions_on_one_key_see_each_others_calls(store_url):
    """Two workers serve one client alternately: each turn starts from the other's last save."""
    async with await kitchen_session(store=store_url, key="shared") as one, await kitchen_session(store=store_url, key="shared") as two:
        await call(one, "selectTools", tools=["Potato_*"])
        assert (await call(two, "Potato_peel")).value == {"result": "Potato#2"}
        assert (await call(one, "Potato_slice", shape="STICKS")).value == {"result": "Potato#3"}  # Potato#2 is the latest
        assert (await call(two, "Potato_dice", Potato="Potato#1")).value == {"result": "Potato#4"}
        assert len(one.registry) == len(two.registry) - 1  # until one's next turn
        assert (await call(one, "Potato_peel", Potato="Potato#1")).value == {"result": "Potato#2"}
        assert [e.id for e in one.registry] == [e.id for e in two.registry]
        assert len(one.context) == len(two.context) + 2 == 2 * 5
        assert one.state() == (await _reopen(store_url, "shared")).state()


async def _reopen(store_url: str, key: str):
    async with await kitchen_session(store=store_url, key=key) as session:
        return session


async def test_a_deleted_session_says_so_and_changes_nothing(store_url):
    async with await kitchen_session(store=store_url, key="gone") as session:
        await call(session, "selectTools", tools=["Potato_peel"])
        before = session.state()
        assert session.keeper is not None
        await session.keeper.store.delete("gone")
        with pytest.raises(ConfigError, match="store no longer has session"):
            await call(session, "Potato_peel")
        assert session.state() == before


async def test_host_changes_between_calls_are_saved(store_url):
    async with await kitchen_session(store=store_url, key="host") as session:
        session.select(["Oven_bake"])
        await session.checkpoint()
    assert (await _reopen(store_url, "host")).active_tools == ["Oven_bake"]


async def test_credentials_never_reach_the_store(kitchen_url, tmp_path):
    from dagtools import open_session

    url = f"sqlite:///{tmp_path / 's.db'}"
    secret = "Bearer very-secret-token-123"
    async with await open_session(kitchen_url, headers={"Authorization": secret}, store=url, key="creds", cache=False) as session:
        await call(session, "selectTools", tools=["Query_potato"])
        await call(session, "Query_potato")
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.db"))
    assert b"Potato#1" in stored or b"potato" in stored
    assert b"very-secret-token" not in stored


# -- processes: killed mid-session, racing on one key -------------------------------------------------------


def _worker(url: str, key: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store_worker", url, key, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _ready(worker: subprocess.Popen) -> str:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if not line.startswith("ready"):
        worker.kill()
        raise AssertionError(f"worker failed: {line}{worker.communicate()[1]}")
    return line


async def test_a_session_survives_its_process_being_killed(shared_url):
    worker = _worker(shared_url, "killed", "hold")
    try:
        assert '"Potato#2"' in _ready(worker)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    assert worker.returncode == -signal.SIGKILL
    async with await kitchen_session(store=shared_url, key="killed") as resumed:
        assert resumed.object("Potato#2").expression == "Potato#1.peel"
        assert (await call(resumed, "Potato_peel", Potato="Potato#1")).value == {"result": "Potato#2"}
        assert (await call(resumed, "Potato_dice", Potato="Potato#1")).value == {"result": "Potato#3"}


async def test_two_processes_racing_on_one_key_lose_no_update(shared_url):
    count = 12
    workers = {name: _worker(shared_url, "race", "race", name, str(count)) for name in ("A", "B")}
    try:
        for worker in workers.values():
            _ready(worker)
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        seen: dict[str, str] = {}
        for name, worker in workers.items():
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            seen.update(json.loads(out.strip().splitlines()[-1]))
    finally:
        for worker in workers.values():
            if worker.poll() is None:
                worker.kill()
    async with await kitchen_session(store=shared_url, key="race") as final:
        results = {m.tool_call_id: m.content for m in final.context if m.role == "tool"}
        assert len(seen) == 2 * count
        assert {k: results.get(k) for k in seen} == seen  # every call of both workers is there, as it was answered
        assert {"A-select", "B-select"} <= set(results)
        # one ID per handle, numbered without gaps: no worker minted over the other's IDs
        handles = [(e.type_name, e.handle) for e in final.registry]
        assert len(handles) == len(set(handles))
        assert sorted(e.number for e in final.registry if e.type_name == "Potato") == list(range(1, final.registry.count("Potato") + 1))
        for call_id, content in seen.items():
            value = json.loads(content).get("result")
            if isinstance(value, str) and value.startswith("Potato#"):
                assert final.object(value).expression.startswith("Potato#1.")


async def test_messages_the_host_adds_survive_another_workers_turn(store_url):
    """An agent appends its prompt and the model's reply before running calls; a turn from another
    worker in between must not drop them."""
    async with await kitchen_session(store=store_url, key="agent") as one, await kitchen_session(store=store_url, key="agent") as two:
        await call(one, "selectTools", tools=["Potato_peel"])
        one.context.add_user("Make fries.")
        await call(two, "Potato_peel")
        await call(one, "Potato_peel", Potato="Potato#1")
        roles = [(m.role, m.content if m.role == "user" else m.name) for m in one.context]
        # two's turn, then what one added and its turn, in the order they were stored
        assert roles[-5:] == [
            ("assistant", None),
            ("tool", "Potato_peel"),
            ("user", "Make fries."),
            ("assistant", None),
            ("tool", "Potato_peel"),
        ]
        assert (await _reopen(store_url, "agent")).state() == one.state()


async def test_a_killed_holders_lease_is_broken_within_a_second(shared_url):
    worker = _worker(shared_url, "leased", "lease")
    try:
        _ready(worker)
        store = open_store(shared_url)
        with pytest.raises(TimeoutError):  # held by a live process: waited for
            with anyio.fail_after(0.5):
                async with hold(store, "leased"):
                    pass
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    started = time.monotonic()
    async with hold(store, "leased"):  # the holder is known to be gone: its lease does not hold the key
        took = time.monotonic() - started
    await store.aclose()
    assert took < 1.0, f"waited {took:.1f} s for a dead process's lease (it runs for 15 s)"


async def test_a_turn_longer_than_its_lease_keeps_it_and_another_process_waits(shared_url, monkeypatch):
    from dagtools.session._persistence import _lease

    monkeypatch.setattr(_lease, "LEASE_SECONDS", 0.3)  # renewed every 0.1 s while the turn runs
    await _a_long_turn_keeps_its_lease(shared_url)


def test_on_trio_a_turn_longer_than_its_lease_keeps_it_too(tmp_path, monkeypatch):
    """Off asyncio there is no loop timer: a task beside the turn renews the lease."""
    pytest.importorskip("trio", reason="trio is in the test extra: pip install -e '.[test]'")
    from dagtools.session._persistence import _lease

    monkeypatch.setattr(_lease, "LEASE_SECONDS", 0.3)
    anyio.run(_a_long_turn_keeps_its_lease, f"sqlite:///{tmp_path / 'sessions.db'}", backend="trio")


async def _a_long_turn_keeps_its_lease(shared_url: str) -> None:
    first, second = open_store(shared_url), open_store(shared_url)  # two stores on one key: as two processes hold it
    seen: list[str] = []

    async def long_turn() -> None:
        async with hold(first, "long"):
            seen.append("first in")
            await anyio.sleep(1.0)  # more than three times the lease
            seen.append("first out")

    async def other() -> None:
        await anyio.sleep(0.1)
        async with hold(second, "long"):
            seen.append("second in")

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(long_turn)
            group.start_soon(other)
        assert seen == ["first in", "first out", "second in"]
    finally:
        await first.aclose()
        await second.aclose()


async def test_calls_batched_together_succeed_or_fail_each_on_its_own(store_url):
    """Saves made at once go out in one batch (one transaction, one pipeline): one that conflicts
    changes nothing and fails alone; the others are saved."""
    store = open_store(store_url)
    try:
        for key in ("a", "b", "c"):
            await store.save(key, b'{"objects":[]}', version=0)
        outcomes: dict[str, object] = {}

        async def save(key: str, version: int) -> None:
            try:
                outcomes[key] = await store.save(key, b'{"change":1}', version=version, change=True)
            except StoreConflictError as error:
                outcomes[key] = error

        async with anyio.create_task_group() as group:
            group.start_soon(save, "a", 1)
            group.start_soon(save, "b", 7)  # not its version: refused
            group.start_soon(save, "c", 1)
        assert outcomes["a"] == 2 and outcomes["c"] == 2 and isinstance(outcomes["b"], StoreConflictError)
        loaded = {key: await store.load(key) for key in ("a", "b", "c")}
        assert [(s.version, s.log) for s in loaded.values() if s] == [(2, (b'{"change":1}',)), (1, ()), (2, (b'{"change":1}',))]
    finally:
        await store.aclose()


async def test_a_redis_server_that_lost_the_scripts_gets_them_again(request, redis_kind):
    """A restarted (or flushed) server knows none of the store's scripts: calls alone and calls batched
    together load them again and run once each."""
    url = _fresh_redis(request, redis_kind)
    store = open_store(url)
    try:
        await store.save("lost", b'{"objects":[]}', version=0)
        _flush_scripts(request, redis_kind, url)
        assert (await store.load("lost")) is not None  # alone
        _flush_scripts(request, redis_kind, url)
        versions: list[int] = []

        async def save(version: int) -> None:
            try:
                versions.append(await store.save("lost", b'{"change":1}', version=version, change=True))
            except StoreConflictError:
                versions.append(-1)

        async with anyio.create_task_group() as group:  # batched: one pipeline
            for version in (1, 1, 1):
                group.start_soon(save, version)
        assert sorted(versions) == [-1, -1, 2]  # one won, none ran twice
        assert (await store.load("lost")).log == (b'{"change":1}',)
    finally:
        await store.aclose()


async def test_a_call_cancelled_before_its_batch_went_out_is_taken_back():
    from dagtools.stores._batches import Batches, Job

    sent: list[list[str]] = []
    release = anyio.Event()

    async def send(batch: list[Job]) -> None:
        sent.append([job.work for job in batch])
        if len(sent) == 1:
            await release.wait()  # the first batch stays out while the others queue
        for job in batch:
            job.result = job.work.upper()

    batches = Batches(send)
    results: dict[str, str] = {}

    async def run(work: str) -> None:
        results[work] = await batches.run(work)

    async with anyio.create_task_group() as group:
        group.start_soon(run, "first")
        await anyio.sleep(0.01)
        group.start_soon(run, "kept")
        cancelled = anyio.CancelScope()

        async def cancelled_run() -> None:
            with cancelled:
                await run("withdrawn")

        group.start_soon(cancelled_run)
        await anyio.sleep(0.01)
        cancelled.cancel()  # while the first batch is out: its job has not gone
        await anyio.sleep(0.01)
        release.set()
    assert sent == [["first"], ["kept"]] and results == {"first": "FIRST", "kept": "KEPT"}


def test_a_lease_from_another_machine_or_a_live_process_is_not_broken():
    from dagtools.session._persistence._holders import holder_gone, new_token

    assert not holder_gone(new_token())  # this process
    mine = new_token().split(":")
    assert not holder_gone(":".join(["elsewhere/boot", *mine[1:]]))  # another machine: cannot tell, so wait
    assert not holder_gone("0123456789abcdef0123456789abcdef")  # an older token without a holder
    parent = os.getppid()
    machine = mine[0]
    assert not holder_gone(f"{machine}:{parent}::{'0' * 32}")  # a live process, start time unread
    assert holder_gone(f"{machine}:{parent}:1:{'0' * 32}")  # the PID now names a process started later: another one


def test_a_killed_holder_not_yet_reaped_is_gone():
    """A worker SIGKILLed whose parent has not waited for it yet is a zombie: it holds nothing."""
    from dagtools.session._persistence._holders import _started, holder_gone, new_token

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        machine = new_token().split(":")[0]
        token = f"{machine}:{child.pid}:{_started(child.pid)}:{'0' * 32}"
        assert not holder_gone(token)
        child.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 5
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert holder_gone(token)  # not reaped yet: a zombie
    finally:
        child.kill()
        child.wait()


# -- a call saves what it changed ------------------------------------------------------------------------------


async def _grown(store_url: str, key: str, objects: int):
    from dagtools import Handle, Step

    session = await kitchen_session(store=store_url, key=key)
    for n in range(objects - len(session.registry)):  # distinct re-rooted handles, as identity gives them
        session.registry.mint("Potato", Handle((Step.of("loadPotatoFromID", {"id": f"p-{n}"}),)), expression=f"Potato#1.slice(n: {n})")
    await session.checkpoint()
    await call(session, "selectTools", tools=["Potato_*", "Query_potato"])
    return session


async def test_a_call_saves_its_change_not_the_whole_session(store_url):
    written: dict[int, list[int]] = {}
    for objects in (10, 3_000):
        session = await _grown(store_url, f"grown-{objects}", objects)
        async with session:
            snapshot = len(session.keeper.encoder.encode(session))
            written[objects] = []
            for n in range(6):
                await call(session, "Query_potato", variety=f"Variety {n}")
                await call(session, "Potato_peel", Potato="Potato#1")  # an old object used again
                written[objects].append(session.keeper.last_written)
        if objects > 10:
            assert max(written[objects]) < snapshot / 20, (written[objects], snapshot)
    small, large = (sum(w) / len(w) for w in written.values())
    assert large <= 1.5 * small, f"a call writes {large:.0f} bytes at 3,000 objects, {small:.0f} at 10"


async def test_a_session_resumed_from_its_changes_is_the_session_that_made_them(store_url):
    session = await _grown(store_url, "replayed", 500)
    async with session:
        for n in range(5):
            await call(session, "Query_potato", variety=f"Variety {n}")
            await call(session, "Potato_peel", Potato=f"Potato#{1 + n * 7}")
        session.context.add_user("and a message of the host's, saved with the next call")
        await call(session, "Potato_dice")
        expected = encode_state(session.state())
        assert session.keeper.changes is not None
    async with await kitchen_session(store=store_url, key="replayed") as resumed:
        assert encode_state(resumed.state()) == expected
        assert (await call(resumed, "Potato_dice")).value == (await call(resumed, "Potato_dice")).value  # the same default, twice


async def test_a_batch_takes_at_most_max_batch_jobs_and_the_rest_go_in_the_next():
    from dagtools.stores._batches import MAX_BATCH, Batches, Job

    sizes: list[int] = []

    async def send(batch: list[Job]) -> None:
        sizes.append(len(batch))
        await anyio.sleep(0)
        for job in batch:
            job.result = job.work * 2

    batches = Batches(send)
    results: dict[int, int] = {}

    async def run(work: int) -> None:
        results[work] = await batches.run(work)

    count = 2 * MAX_BATCH + 44
    async with anyio.create_task_group() as group:
        for work in range(count):
            group.start_soon(run, work)
    assert results == {work: work * 2 for work in range(count)}  # every job ran once, with its own result
    assert max(sizes) == MAX_BATCH and sum(sizes) == count  # a batch bounds how long the loop is held


@pytest.mark.parametrize("lost", ["release", "take"])
async def test_a_lease_the_store_could_not_be_told_of_is_given_back_once_it_answers(shared_url, lost):
    """A call whose lease could not be given back (its node down), or whose take may have been done
    though its answer was lost, gives the lease back as soon as the store answers again: the session's
    next call, from another holder, waits for that, not for the lease to run out (15 s)."""
    from dagtools import StoreError

    holder, other = open_store(shared_url), open_store(shared_url)
    real_release, real_take = holder.release_lease, holder.take_lease
    failures = {"left": 3}

    async def release(key, token):
        if failures["left"]:
            failures["left"] -= 1
            raise StoreError("The store failed: down. Check that it is running.")
        await real_release(key, token)

    async def take(key, token, seconds, **options):
        await real_take(key, token, seconds, **options)  # done in the store, its answer lost
        raise StoreError("The store failed: the answer was lost. Check that it is running.")

    try:
        if lost == "release":
            holder.release_lease = release
            async with hold(holder, "busy"):
                pass  # the turn ends without a save: its lease is given back at the end, which fails
        else:
            holder.take_lease = take
            with pytest.raises(StoreError, match="answer was lost"):
                async with hold(holder, "busy"):
                    pass
        started = time.monotonic()
        async with hold(other, "busy"):
            waited = time.monotonic() - started
        assert waited < 2, f"the next call waited {waited:.1f} s for a lease its holder could not give back"
        if lost == "release":
            assert failures["left"] == 0  # given back on the fourth try, in the background
    finally:
        await holder.aclose()
        await other.aclose()
