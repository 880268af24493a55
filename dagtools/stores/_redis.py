"""Sessions in Redis, for workers on several machines (redis-py's asyncio client, the extra `redis`).

Each session is one hash (`version`, `data`: its snapshot) and a list (the changes since), both expiring
after `idle_ttl` seconds without use, so Redis itself forgets idle sessions. Saves and leases are small
Lua scripts, each atomic on the server: a save writes only when the stored version is the one the
caller read (a version field rather than WATCH/MULTI: one round trip, and no connection held between
the read and the write). A turn makes two round trips: the lease is taken with the session's load
and given back with its save. The scripts that many tasks run at once go out together, one pipeline
at a time on one connection (`Batches`): one write and one read for them all.
"""

from __future__ import annotations

from typing import Any

from .._errors import ConfigError, ExecutorError
from ._batches import Batches, Job
from ._store import SessionStore, StoreConflictError, StoredState, Taken

__all__ = ["RedisStore"]

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
    """Sessions on the Redis server at `url` (`redis://HOST:PORT/DB`)."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(**options)
        try:
            from redis import asyncio as aioredis
        except ImportError:
            raise ConfigError("The Redis session store needs redis-py: pip install 'dagtools-graphql[redis]'.") from None
        self.url = url
        # A pool that waits for a free connection (up to 20 s) rather than failing the call with
        # "Too many connections" once more than its 100 connections are busy at once; and a server that
        # stops answering fails a call in 20 s rather than holding it (and those batched with it).
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=100, timeout=20, socket_timeout=20, socket_connect_timeout=20, decode_responses=False
        )
        self._redis = aioredis.Redis(connection_pool=pool)
        self._load = self._redis.register_script(_LOAD)
        self._save = self._redis.register_script(_SAVE)
        self._save_release = self._redis.register_script(_SAVE_AND_RELEASE)
        self._take_lease = self._redis.register_script(_TAKE)
        self._renew_lease = self._redis.register_script(_RENEW)
        self._release_lease = self._redis.register_script(_RELEASE)
        self._batches = Batches(self._send)

    @property
    def _idle_ms(self) -> int:
        return max(1, int(self.idle_ttl * 1000))

    async def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run `script` in the next pipeline (`_send`)."""
        return await self._batches.run((script, keys, args))

    async def _send(self, batch: list[Job], *, again: bool = True) -> None:
        """The batch's scripts in one pipeline; those the server does not know yet are loaded and sent again."""
        from redis.exceptions import NoScriptError, RedisError

        try:
            if len(batch) == 1:  # alone: no pipeline to build
                script, keys, args = batch[0].work
                try:
                    replies = [await self._redis.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)]
                except NoScriptError as error:
                    replies = [error]
            else:
                pipe = self._redis.pipeline(transaction=False)
                for script, keys, args in (job.work for job in batch):
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                replies = await pipe.execute(raise_on_error=False)
            unknown = [job for job, reply in zip(batch, replies) if isinstance(reply, NoScriptError)]
            if unknown and again:  # a new or restarted server: EVALSHA ran nothing, so sending them again is safe
                for script in {id(job.work[0]): job.work[0] for job in unknown}.values():
                    script.sha = await self._redis.script_load(script.script)
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

    def _failed(self, error: BaseException) -> ExecutorError:
        return ExecutorError(f"The Redis session store at {_safe(self.url)} failed: {error}. Check that it is running.")

    async def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        found = await self._call(self._load, [_PREFIX + key, _LOG + key], [-1 if known is None else known, self._idle_ms])
        return _loaded(found)

    async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
        arguments = [version, data, self._idle_ms, 1 if change else 0]
        return _saved(key, version, await self._call(self._save, [_PREFIX + key, _LOG + key], arguments))

    async def _save_and_release(self, key: str, token: str, data: bytes, *, version: int, change: bool) -> int:
        arguments = [version, data, self._idle_ms, 1 if change else 0, token]
        return _saved(key, version, await self._call(self._save_release, [_PREFIX + key, _LOG + key, _LEASE + key], arguments))

    async def delete(self, key: str) -> bool:
        from redis.exceptions import RedisError

        try:
            return bool(await self._redis.delete(_PREFIX + key, _LOG + key))
        except RedisError as error:
            raise ExecutorError(f"The Redis session store at {_safe(self.url)} failed: {error}. Check that it is running.") from None

    async def expire(self) -> int:
        return 0  # every session key carries its own expiry

    async def _take(self, key: str, token: str, seconds: float, *, load: bool, known: int | None) -> Taken:
        keys = [_LEASE + key, _PREFIX + key, _LOG + key]
        arguments = [token, int(seconds * 1000), 1 if load else 0, -1 if known is None else known, self._idle_ms]
        found = await self._call(self._take_lease, keys, arguments)
        if not int(found[0]):
            return Taken(held=False, holder=_text(found[1]))
        return Taken(held=True, stored=_loaded(found[1:]) if load else None)

    async def _renew(self, key: str, token: str, seconds: float) -> None:
        await self._call(self._renew_lease, [_LEASE + key], [token, int(seconds * 1000)])

    async def _release(self, key: str, token: str) -> None:
        await self._call(self._release_lease, [_LEASE + key], [token])

    async def _holder(self, key: str) -> str | None:
        from redis.exceptions import RedisError

        try:
            holder = await self._redis.get(_LEASE + key)
        except RedisError as error:
            raise ExecutorError(f"The Redis session store at {_safe(self.url)} failed: {error}. Check that it is running.") from None
        return None if holder is None else _text(holder)

    async def aclose(self) -> None:
        await self._redis.aclose(close_connection_pool=True)  # the pool is ours: given to the client, not owned by it

    def __repr__(self) -> str:
        return f"RedisStore({_safe(self.url)!r})"


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
