"""A store's batches: what the event loop's tasks ask of a store while one batch is out goes in the next,
sent as one round trip (a Redis pipeline) or one transaction (SQLite). Under load this is what sets a
stored call's cost: one write, one read, one commit and one sync for many calls instead of one each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel

__all__ = ["MAX_BATCH", "BatchGroups", "Batches", "Job"]

#: Jobs one batch takes at most; the rest go in the next. A SQLite batch runs on the event loop, so its
#: size bounds how long every other call waits on it; past about a hundred, a larger batch saves little.
MAX_BATCH = 128


class Job:
    """Work queued for a store's next batch (`Batches`), and how it went."""

    __slots__ = ("error", "result", "state", "woken", "work")

    def __init__(self, work: Any) -> None:
        self.work = work
        self.woken = anyio.Event()  # its batch ran, or it is to send the next one
        self.state = "queued"  # then "sending" (it sends the next batch), "sent", "done"
        self.result: Any = None
        self.error: BaseException | None = None

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class Batches:
    """One batch out at a time: what the event loop's tasks ask for while it is out goes in the next one
    (one round trip, one transaction for many calls), which the first task still waiting sends.

    `send` sets each job's result or error. A task cancelled before its job went out takes it back; one
    cancelled after does not wait for it. A batch that went out runs to its end whatever befalls the task
    that sent it: the others wait on it."""

    def __init__(self, send: Callable[[list[Job]], Awaitable[None]]) -> None:
        self._send = send
        self._queue: list[Job] = []
        self._out = False

    async def run(self, work: Any) -> Any:
        job = Job(work)
        self._queue.append(job)
        if self._out:
            try:
                await job.woken.wait()
            except BaseException:
                if job.state in ("queued", "sending"):
                    self._queue.remove(job)
                    if job.state == "sending":
                        self._next()
                raise
            if job.state == "done":
                return job.outcome()
        self._out = True
        await anyio.lowlevel.cancel_shielded_checkpoint()  # the tasks ready now queue their work first, to go with it
        batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]  # this job is first: it sends
        for each in batch:
            each.state = "sent"
        try:
            with anyio.CancelScope(shield=True):
                await self._send(batch)
        except BaseException as error:  # not one job's error (those `send` hands each job): every job's
            for each in batch:
                each.result, each.error = None, error
        finally:
            for each in batch:
                each.state = "done"
                each.woken.set()
            self._next()
        return job.outcome()

    def _next(self) -> None:
        if self._queue:
            self._queue[0].state = "sending"
            self._queue[0].woken.set()
        else:
            self._out = False


class BatchGroups:
    """Batches kept apart by group: one `Batches` per group, each with one batch out at a time.

    A Redis Cluster's store groups its work by the node that serves each key's slot, so a batch is one
    pipeline to one node: a node that fails or stalls fails or holds its own calls, never another node's."""

    def __init__(self, send: Callable[[list[Job]], Awaitable[None]]) -> None:
        self._send = send
        self._groups: dict[str, Batches] = {}

    async def run(self, group: str, work: Any) -> Any:
        batches = self._groups.get(group)
        if batches is None:  # one per node the cluster ever named: a handful
            batches = self._groups[group] = Batches(self._send)
        return await batches.run(work)
