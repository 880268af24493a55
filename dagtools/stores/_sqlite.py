"""Sessions in one SQLite file: the embedded store, safe for several processes on one machine.

What the event loop's tasks ask for while a batch runs is queued, and the next batch runs all of it in
one transaction (group commit: one commit and one sync for many calls, each job in a savepoint of its
own, so that one that fails changes nothing and the others still commit). A batch runs on the event
loop when the file's write lock is free, and in a worker thread, waiting for the lock, when another
process holds it. The file is in WAL mode (readers never wait for the writer) with `synchronous=FULL`,
so a save is on disk before the call that made it returns. Writes take SQLite's write lock up front
(`BEGIN IMMEDIATE`) and check the version inside that transaction, so two processes cannot both win.
Leases live in a file of their own beside it (`PATH-leases`, never synced), with an expiry so a killed
holder frees its key; a lease is taken with the session's load and given back with its save, in the
same transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

import anyio

from .._errors import ConfigError, StoreError
from ._batches import Batches, Job
from ._store import SessionStore, StoreConflictError, StoredState, Taken

_OPEN_ATTEMPTS = 20
__all__ = ["SqliteStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data BLOB NOT NULL, used REAL NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_used ON sessions (used);
CREATE TABLE IF NOT EXISTS changes (key TEXT NOT NULL, version INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (key, version));
"""
_LEASES = "CREATE TABLE IF NOT EXISTS lease.leases (key TEXT PRIMARY KEY, token TEXT NOT NULL, expires REAL NOT NULL)"
#: How long a batch run in a thread waits for another process's write lock.
_BUSY_MS = 30_000
#: Expire idle sessions at most this often, as part of a save.
_EXPIRE_EVERY = 60.0


class SqliteStore(SessionStore):
    """Sessions in the SQLite file at `path` (created with its directory)."""

    def __init__(self, path: str | Path, **options: Any) -> None:
        super().__init__(**options)
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._guard = threading.Lock()
        self._limiter = anyio.CapacityLimiter(1)
        self._expired_at = 0.0
        self._batches = Batches(self._send)
        self._waits = True  # whether the connection waits for another process's write lock (`busy_timeout`)

    def _open(self) -> sqlite3.Connection:
        """Open (and on first use create) the file. Two processes opening it at once may find it locked
        while the other switches it to WAL, a step SQLite does not wait for: try again for a while."""
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=_BUSY_MS / 1000)
                try:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=FULL")
                    db.executescript(_SCHEMA)
                    # Leases live in a file of their own that is never synced: a lease lost in a crash was
                    # held by a process that is gone, so only sessions pay for durability (one sync a call).
                    db.execute("ATTACH DATABASE ? AS lease", (f"{self.path}-leases",))
                    db.execute("PRAGMA lease.journal_mode=WAL")
                    db.execute("PRAGMA lease.synchronous=OFF")
                    db.execute(_LEASES)
                except BaseException:
                    db.close()
                    raise
                self._waits = True
                return db
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or attempt == _OPEN_ATTEMPTS - 1:
                    problem = f"The session store {self.path} could not be opened: {error}."
                    raise ConfigError(f"{problem} Check the path and its permissions.") from None
                time.sleep(0.05 * (attempt + 1))
            except sqlite3.Error as error:
                raise ConfigError(
                    f"The session store {self.path} could not be opened: {error}. Check the path and its permissions."
                ) from None
        raise AssertionError("unreachable")

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open()
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T], *, writes: bool = True) -> T:
        """Run `work` in the store's next batch (`_run_batch`)."""
        result: T = await self._batches.run((work, writes))
        return result

    async def _send(self, batch: list[Job]) -> None:
        """On the event loop when the file is open and its write lock free: a batch's statements and its one
        sync take less than handing the batch to a thread and back, which on a busy loop waits for the GIL
        at every statement. Else (the first batch opens the file; another process writes) in a thread."""
        if self._db is not None and self._guard.acquire(blocking=False):
            try:
                if self._run_batch(batch, wait=False):
                    return
            finally:
                self._guard.release()
        await anyio.to_thread.run_sync(self._run_batch_waiting, batch, limiter=self._limiter)

    def _run_batch_waiting(self, batch: list[Job]) -> None:
        with self._guard:
            self._run_batch(batch, wait=True)

    def _run_batch(self, batch: list[Job], *, wait: bool) -> bool:
        """The batch's jobs in one transaction, each in a savepoint of its own. Without `wait`, a write lock
        held by another process leaves the batch undone (False) rather than waiting for it."""
        db: sqlite3.Connection | None = None
        try:
            db = self._connect()
            if wait != self._waits:
                db.execute(f"PRAGMA busy_timeout = {_BUSY_MS if wait else 0}")
                self._waits = wait
            try:
                db.execute("BEGIN IMMEDIATE" if any(job.work[1] for job in batch) else "BEGIN")  # (work, writes)
            except sqlite3.OperationalError as error:
                if not wait and error.sqlite_errorcode == sqlite3.SQLITE_BUSY:
                    return False
                raise
            for job in batch:
                db.execute("SAVEPOINT job")
                try:
                    job.result = job.work[0](db)
                except Exception as error:  # this job's alone: the others' work stands
                    if not db.in_transaction:  # SQLite gave up the whole transaction (a full disk): all fail
                        raise
                    db.execute("ROLLBACK TO job")
                    job.error = error
                db.execute("RELEASE job")
            db.execute("COMMIT")
        except BaseException as error:
            if db is not None and db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the transaction is gone either way; the error that ended it is the one to tell
            for job in batch:
                job.result, job.error = None, error
        for job in batch:
            if isinstance(job.error, sqlite3.Error):  # disk full, a read-only file, a damaged one: say which store and what to do
                job.error = StoreError(
                    f"The session store {self.path} failed: {job.error}. Check that the file and its folder are writable "
                    "and the disk has room, or start the server with another --store."
                )
        return True

    async def load(self, key: str, *, known: int | None = None) -> StoredState | None:
        return await self._run(lambda db: _load(db, key, known), writes=False)

    async def save(self, key: str, data: bytes, *, version: int, change: bool = False) -> int:
        return await self._run(lambda db: self._save(db, key, data, version, change))

    def _save(self, db: sqlite3.Connection, key: str, data: bytes, version: int, change: bool) -> int:
        now = time.time()
        row = db.execute("SELECT version FROM sessions WHERE key = ?", (key,)).fetchone()
        current = row[0] if row else 0
        if current != version or (change and not current):
            raise StoreConflictError(f"Session {key!r} is at version {current}, not {version}.")
        if change:  # the call's change only: the snapshot stays as it is
            db.execute("UPDATE sessions SET version = ?, used = ? WHERE key = ?", (version + 1, now, key))
            db.execute("INSERT INTO changes (key, version, data) VALUES (?, ?, ?)", (key, version + 1, data))
        else:
            replace = "INSERT OR REPLACE INTO sessions (key, version, data, used) VALUES (?, ?, ?, ?)"
            db.execute(replace, (key, version + 1, data, now))
            db.execute("DELETE FROM changes WHERE key = ?", (key,))
        if now - self._expired_at > _EXPIRE_EVERY:
            self._expired_at = now
            _expire(db, now - self.idle_ttl)
        return version + 1

    async def delete(self, key: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            db.execute("DELETE FROM changes WHERE key = ?", (key,))
            return db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

        return await self._run(work)

    async def expire(self) -> int:
        def work(db: sqlite3.Connection) -> int:
            now = time.time()
            db.execute("DELETE FROM lease.leases WHERE expires < ?", (now,))
            return _expire(db, now - self.idle_ttl)

        return await self._run(work)

    async def take_lease(self, key: str, token: str, seconds: float, *, load: bool, known: int | None) -> Taken:
        def work(db: sqlite3.Connection) -> Taken:
            now = time.time()
            row = db.execute("SELECT token, expires FROM lease.leases WHERE key = ?", (key,)).fetchone()
            if row is not None and row[0] != token and row[1] > now:
                return Taken(held=False, holder=str(row[0]))
            db.execute("INSERT OR REPLACE INTO lease.leases (key, token, expires) VALUES (?, ?, ?)", (key, token, now + seconds))
            return Taken(held=True, stored=_load(db, key, known) if load else None)

        return await self._run(work)

    async def renew_lease(self, key: str, token: str, seconds: float) -> None:
        def work(db: sqlite3.Connection) -> None:
            db.execute("UPDATE lease.leases SET expires = ? WHERE key = ? AND token = ?", (time.time() + seconds, key, token))

        await self._run(work)

    async def save_and_release(self, key: str, token: str, data: bytes, *, version: int, change: bool) -> int:
        def work(db: sqlite3.Connection) -> int:
            saved = self._save(db, key, data, version, change)
            db.execute("DELETE FROM lease.leases WHERE key = ? AND token = ?", (key, token))
            return saved

        return await self._run(work)

    async def release_lease(self, key: str, token: str) -> None:
        await self._run(lambda db: db.execute("DELETE FROM lease.leases WHERE key = ? AND token = ?", (key, token)))

    async def lease_holder(self, key: str) -> str | None:
        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT token FROM lease.leases WHERE key = ? AND expires >= ?", (key, time.time())).fetchone()
            return str(row[0]) if row else None

        return await self._run(work, writes=False)

    async def aclose(self) -> None:
        def work() -> None:
            with self._guard:
                if self._db is not None:
                    self._db.close()
                    self._db = None

        await anyio.to_thread.run_sync(work, limiter=self._limiter)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"


def _expire(db: sqlite3.Connection, cutoff: float) -> int:
    """Forget the sessions last used before `cutoff`, with their logs; how many went."""
    gone = db.execute("DELETE FROM sessions WHERE used < ?", (cutoff,)).rowcount
    if gone:
        db.execute("DELETE FROM changes WHERE key NOT IN (SELECT key FROM sessions)")
    return int(gone)


def _load(db: sqlite3.Connection, key: str, known: int | None) -> StoredState | None:
    row = db.execute("SELECT version FROM sessions WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    if row[0] == known:
        return StoredState(version=row[0], data=None)
    row = db.execute("SELECT version, data FROM sessions WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    log = tuple(bytes(r[0]) for r in db.execute("SELECT data FROM changes WHERE key = ? ORDER BY version", (key,)))
    return StoredState(version=row[0], data=bytes(row[1]), log=log)
