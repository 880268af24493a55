"""Sessions in Redis, for workers on several machines (redis-py's asyncio client, the extra `redis`):
one server (`redis://HOST:PORT/DB`) or a Redis Cluster (`redis+cluster://HOST:PORT[,HOST:PORT...]`).

Each session is one hash (`version`, `data`: its snapshot) and a list (the changes since), both expiring
after `idle_ttl` seconds without use, so Redis itself forgets idle sessions. Saves and leases are small
Lua scripts, each atomic on the server: a save writes only when the stored version is the one the
caller read (a version field rather than WATCH/MULTI: one round trip, and no connection held between
the read and the write). A turn makes two round trips: the lease is taken with the session's load
and given back with its save. The scripts that many tasks run at once go out together, one pipeline
at a time on one connection (`Batches`): one write and one read for them all.

In a cluster, a session's three keys carry its key as a hash tag (`dagtools:session:{KEY}`), so they sit
in one slot and every script touches one slot only; redis-py's `RedisCluster` follows `MOVED` and `ASK`
and finds a failed primary's replica. Work is batched per node (`BatchGroups`): one pipeline to one
node at a time, so a node that fails fails only the calls whose sessions it serves. A request that meets
a node it cannot reach (or a cluster still failing over) is sent again, with the slot map read afresh
from the live nodes, until the failover should be over (`_failover`):
the store retries, not redis-py, whose retries close every node's connections and so fail calls on the
live primaries too. Every script may run twice without harm (a save names the version it read, a lease
its token), so sending one again never applies a call twice.

A batch that saved anything ends with `WAIT`: the save is acknowledged once `replicas` replicas (1 in a
cluster) have it, so a primary that fails after answering loses no acknowledged call to its replica's
promotion. Each primary's replicas are counted (`ROLE`, in a batch, every few seconds, `_failover`): one
with fewer than `replicas` (a replica promoted after a failover, until the old primary rejoins) is not
waited on, and said once in the log. A replica that does not confirm within
`REPLICA_WAIT_MS` delays the save no longer: it is acknowledged, and logged.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from .._errors import ConfigError, StoreError, install_command
from ._batches import Batches, BatchGroups, Job
from ._failover import Failover, cluster_client
from ._store import SessionStore, StoreConflictError, StoredState, Taken

__all__ = ["RedisStore"]

logger = logging.getLogger("dagtools")

#: How long a batch that saved waits for its replicas to confirm, in ms, before it is acknowledged anyway.
REPLICA_WAIT_MS = 100
#: Every wait on a Redis server: for a connection from the pool, to connect, for an answer, in seconds.
TIMEOUT = 20

_PREFIX = "dagtools:session:"
_LEASE = "dagtools:lease:"
_LOG = "dagtools:log:"

# KEYS[1] session, KEYS[2] its log; ARGV[1] known version, ARGV[2] idle ms. Returns {version} or {version,
# data, change...}; {} when absent.
_LOAD = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return {} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if v == ARGV[1] then return {v} end
local out = {v, redis.call('HGET', KEYS[1], 'data')}
for _, change in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do out[#out + 1] = change end
return out
"""
# KEYS[1] session, KEYS[2] its log; ARGV: expected version, data, idle ms, 1 for a change (appended to the
# log) or 0 for a snapshot (replacing the session and its log). Returns the new version, or -1 - the current one.
_SAVE = """
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if v ~= tonumber(ARGV[1]) or (ARGV[4] == '1' and v == 0) then return -1 - v end
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], 'version', v + 1)
  redis.call('RPUSH', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[1], 'version', v + 1, 'data', ARGV[2])
  redis.call('DEL', KEYS[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return v + 1
"""
# The same save, then KEYS[3] (the lease) given back if ARGV[5] (the token) holds it; a failed save keeps it.
_SAVE_AND_RELEASE = f"""
local function save()
{_SAVE}end
local saved = save()
if saved > 0 and redis.call('GET', KEYS[3]) == ARGV[5] then redis.call('DEL', KEYS[3]) end
return saved
"""
# KEYS[1] lease, KEYS[2] session, KEYS[3] its log; ARGV: token, lease ms, 1 to load, known version, idle ms.
# Takes a free lease (or ours): {1} then what the load gives (nothing when not asked or absent); else {0, holder}.
_TAKE = f"""
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {{0, holder}} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] ~= '1' then return {{1}} end
local function load(KEYS, ARGV)
{_LOAD}end
local out = load({{KEYS[2], KEYS[3]}}, {{ARGV[4], ARGV[5]}})
table.insert(out, 1, 1)
return out
"""
# KEYS[1] lease; ARGV: token, ms. Holds our own lease longer, never one given back or another's.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisStore(SessionStore):
    """Sessions on the Redis server at `url` (`redis://HOST:PORT/DB`, `rediss://` for TLS), or in the
    Redis Cluster that `redis+cluster://HOST:PORT[,HOST:PORT...]` names (`rediss+cluster://` for TLS; one
    node is enough, the client finds the rest). `replicas`: how many replicas confirm a save before it is
    acknowledged (default 1 in a cluster, 0 on one server)."""

    def __init__(self, url: str, *, replicas: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        try:
            from redis import asyncio as aioredis
        except ImportError:
            raise ConfigError(f"The Redis session store needs redis-py: {install_command('redis')}.") from None
        self.url = url
        scheme, _, rest = url.partition("://")
        self.cluster = scheme.lower().endswith("+cluster")
        self.replicas = (1 if self.cluster else 0) if replicas is None else replicas
        if self.replicas < 0:
            raise ConfigError(f"Store {_safe(url)!r}: replicas must be 0 or more.")
        self._redis: Any
        if self.cluster:
            self._redis = cluster_client(scheme.lower().removesuffix("+cluster"), rest, timeout=TIMEOUT)
        else:
            # A pool that waits for a free connection (up to 20 s) rather than failing the call with
            # "Too many connections" once more than its 100 connections are busy at once; and a server that
            # stops answering fails a call in 20 s rather than holding it (and those batched with it).
            pool = aioredis.BlockingConnectionPool.from_url(
                url, max_connections=100, timeout=TIMEOUT, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT, decode_responses=False
            )
            self._redis = aioredis.Redis(connection_pool=pool)
        self._load = self._redis.register_script(_LOAD)
        self._save = self._redis.register_script(_SAVE)
        self._save_release = self._redis.register_script(_SAVE_AND_RELEASE)
        self._take_lease = self._redis.register_script(_TAKE)
        self._renew_lease = self._redis.register_script(_RENEW)
        self._release_lease = self._redis.register_script(_RELEASE)
        self._writes = {id(self._save), id(self._save_release)}
        self._batches = Batches(self._send)
        self._groups = BatchGroups(self._send)
        self._unconfirmed_logged = 0.0
        self._failover = Failover(self._redis, _safe(url), self.replicas, cluster=self.cluster)

    def _name(self, prefix: str, key: str) -> str:
        """A session's Redis key. In a cluster its three keys share a hash tag, so they sit in one slot; a
        key that cannot be a tag as it is (empty, or starting with `}`) is tagged with its digest."""
        if not self.cluster:
            return prefix + key
        if not key or key.startswith("}"):
            return f"{prefix}{{{hashlib.sha256(key.encode()).hexdigest()[:32]}}}{key}"
        return f"{prefix}{{{key}}}"

    @property
    def _idle_ms(self) -> int:
        return max(1, int(self.idle_ttl * 1000))

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run `script` in the next pipeline (`_send`): in a cluster, the next one to the node of its keys,
        sent again while its node cannot be reached and the failover may still end (`Failover.window`)."""
        if not self.cluster:
            return await self._batches.run((script, keys, args))
        started = time.monotonic()
        while True:
            try:
                return await self._groups.run(await self._node_of(keys[0]), (script, keys, args))
            except _NodeFailed as failed:
                if time.monotonic() - started > self._failover.window:
                    raise StoreError(str(failed)) from None
            await self._failover.read_map()

    async def _node_of(self, key: str) -> str:
        """The name of the node that serves `key`'s slot now; "" when the cluster cannot be asked (the
        batch then says what failed)."""
        from redis.exceptions import RedisError

        try:
            await self._redis.initialize()  # once: the cluster's slots and nodes
            await self._failover.ask_node_timeout()  # once
            node = self._redis.get_node_from_key(key)
        except (RedisError, OSError):
            return ""
        return str(node.name) if node is not None else ""

    async def _send(self, batch: list[Job], *, again: bool = True) -> None:
        """The batch's scripts in one pipeline, then `WAIT` for the replicas when it saved anything; the
        scripts the server does not know yet are loaded and sent again."""
        from redis.exceptions import NoScriptError, RedisError

        try:
            saves = self.replicas > 0 and any(id(job.work[0]) in self._writes for job in batch)
            targets = self._targets(batch) if self.replicas > 0 else {}
            counted = [name for name in targets if self._failover.count_due(name)]
            waited = [
                name for name in targets if saves and self._failover.replicas(name, [job.work[1][0] for job in batch]) >= self.replicas
            ]
            if len(batch) == 1 and not waited and not counted and not self.cluster:  # alone: no pipeline to build
                script, keys, args = batch[0].work
                try:
                    replies = [await self._redis.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)]
                except NoScriptError as error:
                    replies = [error]
            else:
                pipe = self._redis.pipeline(transaction=False)
                for script, keys, args in (job.work for job in batch):
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                for name in counted:  # how many replicas each primary has, every few seconds
                    pipe.execute_command("ROLE", **targets[name])
                for name in waited:  # on the connection that wrote, after the writes: one per node with replicas
                    pipe.execute_command("WAIT", self.replicas, REPLICA_WAIT_MS, **targets[name])
                replies = await pipe.execute(raise_on_error=False)
                self._failover.counted(dict(zip(counted, replies[len(batch) : len(batch) + len(counted)])))
                waits = replies[len(batch) + len(counted) :]
                lost = next((reply for reply in waits if isinstance(reply, Exception)), None)
                if lost is not None:  # the node went before saying its replica had the saves: they may be gone with it
                    replies = [lost if id(job.work[0]) in self._writes else reply for job, reply in zip(batch, replies)]
                self._confirmed([reply for reply in waits if not isinstance(reply, Exception)])
                replies = replies[: len(batch)]
            unknown = [job for job, reply in zip(batch, replies) if isinstance(reply, NoScriptError)]
            if unknown and again:  # a new or restarted server: EVALSHA ran nothing, so sending them again is safe
                for script in {id(job.work[0]): job.work[0] for job in unknown}.values():
                    await self._load_script(script, unknown[0].work[1][0])
                await self._send(unknown, again=False)
            for job, reply in zip(batch, replies):
                if isinstance(reply, NoScriptError) and again:
                    continue
                if isinstance(reply, Exception):
                    job.error = self._failed(reply)
                else:
                    job.result = reply
        except (RedisError, OSError) as error:
            for job in batch:
                job.error = self._failed(error)

    async def _load_script(self, script: Any, key: str) -> None:
        """Load `script` where `key` is served (a cluster's node that said it lacks it: a promoted replica)
        or on the one server."""
        if not self.cluster:
            await self._redis.script_load(script.script)
            return
        node = self._redis.get_node_from_key(key)
        await self._redis.execute_command("SCRIPT LOAD", script.script, target_nodes=node)

    def _targets(self, batch: list[Job]) -> dict[str, dict[str, Any]]:
        """Where the batch's `ROLE` and `WAIT` go, by node name: the one server (""), or each cluster node
        its keys are on now."""
        if not self.cluster:
            return {"": {}}
        nodes = {}
        for job in batch:
            node = self._redis.get_node_from_key(job.work[1][0])
            if node is not None:
                nodes[node.name] = {"target_nodes": node}
        return nodes

    def _confirmed(self, replies: list[Any]) -> None:
        """Log (at most once a minute) a batch whose saves fewer replicas than asked confirmed in time."""
        short = [reply for reply in replies if isinstance(reply, Exception) or int(reply) < self.replicas]
        if short and time.monotonic() - self._unconfirmed_logged > 60:
            self._unconfirmed_logged = time.monotonic()
            logger.warning(
                "The Redis session store at %s: saves were acknowledged without %d replica(s) confirming them "
                "within %d ms (%s); a primary lost now may lose them. Check the replicas.",
                _safe(self.url),
                self.replicas,
                REPLICA_WAIT_MS,
                short[0],
            )

    def _failed(self, error: BaseException) -> StoreError:
        from redis.exceptions import ClusterDownError, MasterDownError, ReadOnlyError, SlotNotCoveredError, TryAgainError
        from redis.exceptions import ConnectionError as Unreachable
        from redis.exceptions import TimeoutError as Unanswered

        said = str(error).rstrip(". ") or type(error).__name__
        message = f"The Redis session store at {_safe(self.url)} failed: {said}. Check that it is running."
        passing = (Unreachable, Unanswered, OSError, ClusterDownError, SlotNotCoveredError, TryAgainError, ReadOnlyError, MasterDownError)
        if self.cluster and isinstance(error, passing):
            return _NodeFailed(message)  # a node down, or a failover under way: `_call` sends it again
        return StoreError(message)

    async def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        keys = [self._name(_PREFIX, key), self._name(_LOG, key)]
        found = await self._call(self._load, keys, [-1 if known is None else known, self._idle_ms])
        return _loaded(found)

    async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
        arguments = [version, data, self._idle_ms, 1 if change else 0]
        return _saved(key, version, await self._call(self._save, [self._name(_PREFIX, key), self._name(_LOG, key)], arguments))

    async def save_and_release(self, key: str, token: str, data: bytes, *, version: int, change: bool) -> int:
        arguments = [version, data, self._idle_ms, 1 if change else 0, token]
        keys = [self._name(_PREFIX, key), self._name(_LOG, key), self._name(_LEASE, key)]
        return _saved(key, version, await self._call(self._save_release, keys, arguments))

    async def delete(self, key: str) -> bool:
        from redis.exceptions import RedisError

        try:
            return bool(await self._redis.delete(self._name(_PREFIX, key), self._name(_LOG, key)))
        except RedisError as error:
            raise self._failed(error) from None

    async def expire(self) -> int:
        return 0  # every session key carries its own expiry

    async def take_lease(self, key: str, token: str, seconds: float, *, load: bool, known: int | None) -> Taken:
        keys = [self._name(_LEASE, key), self._name(_PREFIX, key), self._name(_LOG, key)]
        arguments = [token, int(seconds * 1000), 1 if load else 0, -1 if known is None else known, self._idle_ms]
        found = await self._call(self._take_lease, keys, arguments)
        if not int(found[0]):
            return Taken(held=False, holder=_text(found[1]))
        return Taken(held=True, stored=_loaded(found[1:]) if load else None)

    async def renew_lease(self, key: str, token: str, seconds: float) -> None:
        await self._call(self._renew_lease, [self._name(_LEASE, key)], [token, int(seconds * 1000)])

    async def release_lease(self, key: str, token: str) -> None:
        await self._call(self._release_lease, [self._name(_LEASE, key)], [token])

    async def lease_holder(self, key: str) -> str | None:
        from redis.exceptions import RedisError

        try:
            holder = await self._redis.get(self._name(_LEASE, key))
        except RedisError as error:
            raise self._failed(error) from None
        return None if holder is None else _text(holder)

    async def aclose(self) -> None:
        for task in list(self.background):  # leases still being given back run out instead
            task.cancel()
        if self.cluster:
            await self._redis.aclose()
        else:
            await self._redis.aclose(close_connection_pool=True)  # the pool is ours: given to the client, not owned by it

    def __repr__(self) -> str:
        return f"RedisStore({_safe(self.url)!r})"


class _NodeFailed(StoreError):
    """A cluster node could not be reached or is failing over: the request may succeed once sent again."""


def _loaded(found: list[Any]) -> StoredState | None:
    """What the load script gave back: nothing, the version alone, or the version, snapshot and log."""
    if not found:
        return None
    if len(found) == 1:
        return StoredState(version=int(found[0]), data=None)
    return StoredState(version=int(found[0]), data=bytes(found[1]), log=tuple(bytes(c) for c in found[2:]))


def _saved(key: str, version: int, saved: Any) -> int:
    if int(saved) < 0:
        raise StoreConflictError(f"Session {key!r} is at version {-1 - int(saved)}, not {version}.")
    return int(saved)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _safe(url: str) -> str:
    """The URL without a password, for messages and logs."""
    if "@" not in url:
        return url
    scheme, rest = url.split("://", 1) if "://" in url else ("", url)
    return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
