"""A Redis Cluster's failovers as the Redis store rides them out: a request on a failed primary is sent again
on a slot map read afresh until its replica is promoted, and each primary's replicas are counted, so
saves wait only where a replica can confirm them.

A failover begins once a primary has been silent for the cluster's `cluster-node-timeout` (read from the
cluster at start) and ends when its replica wins the election, about a second and a half later; a request
is sent again until `cluster-node-timeout` plus `FAILOVER_MARGIN` has passed, then its call fails with the
store's message. The slot map is read again at most every `MAP_READ_EVERY` seconds, all the waiting
requests going with one reading, without closing a connection to any live node. redis-py's own retries
are off (`cluster_client`): on a node they could not reach, they closed the connections to every node,
failing requests in flight on the live primaries with errors about the dead one.

A primary's replicas are counted with `ROLE` every `REPLICAS_CHECKED_EVERY` seconds (before its first
count, as the slot map lists them): one with fewer than a save waits for (a replica just promoted, until
the old primary rejoins as its replica; a cluster made without replicas) is said once in the log and not
waited on, since its `WAIT` could only time out.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio

from .._errors import ConfigError

__all__ = ["Failover", "cluster_client"]

logger = logging.getLogger("dagtools")

#: How long past the cluster's `cluster-node-timeout` a request on a failed primary is sent again, in seconds:
#: the replica's election and the slot map read again. Past it the call fails with the store's message.
FAILOVER_MARGIN = 0.5
#: Seconds between two readings of a cluster's slot map while requests fail (each costs a Redis answer and
#: tens of ms of Python); every request waiting to be sent again goes with the next one.
MAP_READ_EVERY = 0.2
#: Seconds between two counts of a primary's replicas (`ROLE`), to know whether its saves can be waited on.
REPLICAS_CHECKED_EVERY = 5.0
#: `cluster-node-timeout` when the cluster will not say (`CONFIG` renamed or refused): Redis's default.
DEFAULT_NODE_TIMEOUT = 15.0

#: Whether each primary (by store URL and node name) was last said in the log to have too few replicas: one
#: word per primary and process, however many stores name it.
_short: dict[tuple[str, str], bool] = {}


class Failover:
    """What one Redis store knows of its cluster's failovers (or of its one server's replicas): how long a
    request is sent again, when the slot map was last read, how many replicas each primary has."""

    def __init__(self, redis: Any, url: str, replicas: int, *, cluster: bool) -> None:
        self._redis, self._url, self._replicas, self._cluster = redis, url, replicas, cluster
        self._node_timeout: float | None = None  # the cluster's, once read
        self._map_read = 0.0  # when the slot map was last read again
        self._reading: anyio.Event | None = None  # set when the reading under way is done
        #: Each primary's replicas as last counted, and when: by node name ("" for one server).
        self._counts: dict[str, tuple[int, float]] = {}

    @property
    def window(self) -> float:
        """Seconds a request on a node that cannot be reached is sent again."""
        return (self._node_timeout if self._node_timeout is not None else DEFAULT_NODE_TIMEOUT) + FAILOVER_MARGIN

    async def ask_node_timeout(self) -> None:
        """Read the cluster's `cluster-node-timeout`, once: how long a failover takes to begin."""
        from redis.exceptions import RedisError

        if self._node_timeout is not None:
            return
        self._node_timeout = DEFAULT_NODE_TIMEOUT
        try:
            said = await self._redis.execute_command("CONFIG GET", "cluster-node-timeout", target_nodes=self._redis.get_default_node())
        except (RedisError, OSError):
            return
        values = list(said.values()) if isinstance(said, dict) else list(said)[1:] if isinstance(said, (list, tuple)) else []
        try:
            self._node_timeout = int(values[0]) / 1000
        except (IndexError, TypeError, ValueError):
            pass

    async def read_map(self) -> None:
        """Read the cluster's slots and nodes again from a live node, so a promoted replica is found: at most
        once per `MAP_READ_EVERY`, however many requests failed (they all wait for the next reading), and
        without closing any connection to a live node."""
        from redis.exceptions import RedisError

        if self._reading is not None:
            await self._reading.wait()
            return
        self._reading = anyio.Event()
        try:
            due = self._map_read + MAP_READ_EVERY - time.monotonic()
            if due > 0:
                await anyio.sleep(due)
            await self._redis.nodes_manager.initialize()
        except (RedisError, OSError) as error:
            logger.debug("reading the Redis Cluster's slot map again failed: %s", error)
        finally:
            self._map_read = time.monotonic()
            self._reading.set()
            self._reading = None

    def count_due(self, name: str) -> bool:
        """Whether the primary `name`'s replicas are to be counted (`ROLE`) with the batch going to it."""
        return time.monotonic() - self._counts.get(name, (0, -1e9))[1] > REPLICAS_CHECKED_EVERY

    def replicas(self, name: str, keys: list[str]) -> int:
        """The replicas of the primary `name` as last counted; for one not counted yet, as the cluster's slot
        map lists them for `keys` (a replica just promoted has none listed: its first saves do not wait either)."""
        if name in self._counts or not self._cluster:
            return self._counts.get(name, (self._replicas, 0.0))[0]
        slots = self._redis.nodes_manager.slots_cache
        for key in keys:
            listed = slots.get(self._redis.keyslot(key))
            if listed and listed[0].name == name:
                return len(listed) - 1
        return self._replicas

    def counted(self, roles: dict[str, Any]) -> None:
        """Note each primary's replicas from its `ROLE` answer (its third item lists them); say once when one
        has fewer than a save waits for, and once when it has enough again."""
        for name, role in roles.items():
            if isinstance(role, Exception) or not isinstance(role, (list, tuple)) or len(role) < 3:
                continue  # not a primary's answer (a stale slot map): counted again at the next batch
            if (role[0].decode() if isinstance(role[0], bytes) else str(role[0])) != "master":
                continue
            count = len(role[2]) if isinstance(role[2], (list, tuple)) else 0
            self._counts[name] = (count, time.monotonic())
            said = (self._url, name)
            before = _short.get(said, False)
            _short[said] = count < self._replicas
            where = f"the primary {name}" if name else "the server"
            if count < self._replicas and not before:
                logger.warning(
                    "The Redis session store at %s: %s has %d replica(s), fewer than the %d a save waits for; its saves "
                    "are acknowledged without waiting, and losing it now would lose them. Give it a replica (a failed "
                    "primary that comes back rejoins as one).",
                    self._url,
                    where,
                    count,
                    self._replicas,
                )
            elif count >= self._replicas and before:
                logger.info("The Redis session store at %s: %s has %d replica(s) again; saves wait for them.", self._url, where, count)


def cluster_client(scheme: str, rest: str, *, timeout: float) -> Any:
    """A `RedisCluster` from the part of a `redis+cluster://` URL after the scheme: its nodes (any one is
    enough to start), with the same bounded waits as one server's pool."""
    from redis.asyncio.cluster import ClusterNode, RedisCluster
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    where = rest.split("?", 1)[0]
    auth, _, hosts = where.rpartition("@")
    hosts = hosts.split("/", 1)[0]
    nodes = []
    for host in (h for h in hosts.split(",") if h):
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "6379")
        try:
            nodes.append(ClusterNode(name or "127.0.0.1", int(port or 6379)))
        except ValueError:
            raise ConfigError(f"Redis Cluster node {host!r}: give HOST:PORT.") from None
    if not nodes:
        raise ConfigError("A Redis Cluster URL names at least one node: redis+cluster://HOST:PORT[,HOST:PORT...].")
    first = f"{scheme}://{auth + '@' if auth else ''}{nodes[0].host}:{nodes[0].port}"
    return RedisCluster.from_url(
        first,
        startup_nodes=nodes,
        max_connections=100,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        decode_responses=False,
        # The store sends a request again itself (`RedisStore._call`, `Failover.window`): redis-py's retries close the connections
        # to every node, failing the requests in flight on the live primaries too.
        retry=Retry(NoBackoff(), 0),
        # A `MOVED` updates the slot it names; reading the whole map again closes every connection as well.
        reinitialize_steps=0,
    )
