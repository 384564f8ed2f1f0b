"""One server process's connection to Redis: the client, its scripts, its settings,
and the one pipelined writer every run of the process appends through.

Appends of all the runs a process owns go out together: whatever queued while
the previous round trip was in flight is sent as one pipeline (one connection,
one round trip), each append still its own lease-fenced script.

On a Redis Cluster (``redis+cluster://``) the client is redis-py's cluster
client: the same pipeline goes out as one round trip per master, appends are
the chain-checked script (redis_keys.CLUSTER_APPEND_SCRIPT), and reads are
``poll`` (one script per session, pipelined) since one XREAD cannot span slots.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .redis_keys import (
    APPEND_SCRIPT,
    BUMP_EPOCH_SCRIPT,
    CLUSTER_APPEND_SCRIPT,
    INDEX_KEY,
    INSTANCE_KEY,
    LEASE_LOST,
    POLL_SCRIPT,
    RELEASE_SCRIPT,
    RENEW_SCRIPT,
    SNAPSHOT_SCRIPT,
    STREAM_LOST,
    SessionKeys,
    dumps,
)
from .store import cluster_nodes, is_cluster_spec, redact_url
from .store_errors import StoreError, StoreFull, StoreLost

if TYPE_CHECKING:
    from .config import ServerConfig

__all__ = ["RedisConnection", "READ_COUNT", "unreachable", "Polled", "Tail", "StreamLost"]

READ_COUNT = 512  # stream entries per session per XREAD

Tail = tuple[int, str]  # the last seq of a session's stream and its chain (cluster)


class StreamLost(StoreError):
    """The cluster's stream no longer holds what this process wrote or read (a promoted
    replica missed acknowledged writes); the session was given a new epoch."""


@dataclass(frozen=True)
class Polled:
    """One session's read on a cluster: its epoch, last seq and the entries after the
    head asked for."""

    epoch: str | None
    seq: int
    entries: list[tuple[bytes, dict[bytes, bytes]]]

    @classmethod
    def of(cls, reply: Any) -> Polled:
        epoch, seq, raw = reply
        entries = [(eid, dict(zip(fields[::2], fields[1::2], strict=True)))
                   for eid, fields in raw]
        return cls(_text(epoch), int(seq or 0), entries)


def unreachable(exc: BaseException) -> StoreError:
    return StoreError(f"redis unreachable: {exc!r}")


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _now_ms() -> int:
    return int(time.time() * 1000)  # shared by processes (the index's scores)


class RedisConnection:
    def __init__(self, url: str, config: ServerConfig) -> None:
        self.display_url = redact_url(url)
        self.lease_ms = config.lease_ms
        # XREAD blocks at most this long, which bounds how late a lost run is noticed.
        self.block_ms = max(50, min(1000, self.lease_ms // 3))
        self.ttl_ms = int(config.session_ttl_s * 1000)
        # The stream keeps more than a mirror's window (--log-events): a reader that
        # lags by a few large appends still reads every event, so a run owner's
        # mirror - the source of the snapshot key - never skips one.
        self.stream_maxlen = max(2 * config.log_events, config.log_events + 2 * READ_COUNT)
        self.token = uuid.uuid4().hex[:16]  # this process
        self.cluster = is_cluster_spec(url)
        self.client: Any = (_cluster_client(url, self.block_ms) if self.cluster
                            else _node_client(url, self.block_ms, config.max_sessions))
        self._writes: list[tuple[str, list[str], list[Any], asyncio.Future[Any]]] = []
        self._writer: asyncio.Task[None] | None = None
        self.max_sessions = config.max_sessions
        self.quiet_ms = int(config.quiet_s * 1000)
        self.instance: str | None = None  # the marker of the data set this process holds
        self.on_lost: Callable[[], None] | None = None  # the store's: Redis lost its data

    # -- reads on a cluster: one script per session, pipelined ------------------

    async def poll(self, targets: list[tuple[SessionKeys, int]]) -> list[Polled | Exception]:
        """Each session's epoch, last seq and entries after its head: one round trip per
        master.  A session whose master failed gets its exception (the others their
        result); StoreError when no answer came at all."""
        try:
            pipe = self.client.pipeline(transaction=False)
            for keys, head in targets:
                pipe.eval(POLL_SCRIPT, 3, keys.log, keys.epoch, keys.seq, f"({head}-0",
                          READ_COUNT)
            results = await pipe.execute(raise_on_error=False)
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        return [r if isinstance(r, Exception) else Polled.of(r) for r in results]

    async def new_epoch(self, keys: SessionKeys, old: str) -> str | None:
        """Give the session a new epoch unless another process already did: what this
        process showed is no longer what Redis holds.  The epoch Redis holds now."""
        try:
            epoch = await self.client.eval(BUMP_EPOCH_SCRIPT, 1, keys.epoch, old,
                                           uuid.uuid4().hex[:16], self.ttl_ms)
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        return _text(epoch)

    # -- reads, checked against the data set's marker ---------------------------

    async def read(self, streams: dict[Any, Any], count: int, block: int | None,
                   epoch_key: str | None = None) -> tuple[Any, str | None]:
        """One XREAD, in one round trip with the marker (and ``epoch_key``): the XREAD
        result and the epoch.  Raises StoreLost (after telling the store) when the
        marker says Redis lost its data: the result must not be applied."""
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.get(INSTANCE_KEY)
            if epoch_key is not None:
                pipe.get(epoch_key)
            pipe.xread(streams, count=count, block=block)
            results = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        await self.observe(results[0])
        epoch = _text(results[1]) if epoch_key is not None else None
        return results[-1], epoch

    async def observe(self, marker: Any) -> None:
        """Check the data set's marker as Redis just answered it; StoreLost if it
        changed since this process last looked (Redis restarted empty, or flushed).
        Not on a cluster, where each session's epoch and chain say it instead."""
        if self.cluster:
            return
        seen = _text(marker)
        if seen is not None and seen == self.instance:
            return
        first = self.instance is None
        if seen is None:
            seen = await self.claim_instance()
        self.instance = seen
        if first:
            return
        if self.on_lost is not None:
            self.on_lost()
        raise StoreLost("the session store lost its data (restarted or flushed)")

    async def claim_instance(self) -> str:
        """Set a marker if there is none (the first process after an empty start); the
        marker Redis holds now (none on a cluster)."""
        if self.cluster:
            return ""
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.set(INSTANCE_KEY, uuid.uuid4().hex, nx=True)
            pipe.get(INSTANCE_KEY)
            _set, marker = await pipe.execute()
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        return _text(marker) or ""

    # -- the session index (--max-sessions across processes) ----------------------

    async def make_room(self) -> None:
        """Before creating a session: forget the longest-quiet ones past the limit;
        StoreFull when every session counted was active within the quiet period."""
        now = _now_ms()
        client = self.client
        try:
            pipe = client.pipeline(transaction=False)
            pipe.zremrangebyscore(INDEX_KEY, "-inf", now - self.ttl_ms)  # expired keys
            pipe.zcard(INDEX_KEY)
            _gone, count = await pipe.execute()
            while count >= self.max_sessions:
                quiet: Any = await client.zrangebyscore(INDEX_KEY, "-inf", now - self.quiet_ms,
                                                        start=0, num=1)
                if not quiet:
                    raise StoreFull(f"{count} sessions in the store were all active within "
                                    f"the last {self.quiet_ms // 1000} s")
                old = _text(quiet[0]) or ""
                if await self.forget(SessionKeys.of(old), old):
                    count -= 1
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None

    async def forget(self, keys: SessionKeys, session_id: str) -> bool:
        """Delete a quiet session's keys (not while a run holds its lease)."""
        # On a cluster the lease and the index are in different slots: no MULTI.
        pipe = self.client.pipeline(transaction=not self.cluster)
        pipe.exists(keys.lease)
        pipe.zrem(INDEX_KEY, session_id)
        held, _ = await pipe.execute()
        if held:
            await self.client.zadd(INDEX_KEY, {session_id: _now_ms()})  # running: not quiet
            return False
        await self.client.delete(*keys.data)
        return True

    async def touch(self, session_ids: list[str], head_start_ms: float = 0.0) -> None:
        """Mark sessions active now (an attach, a run's end, the process's heartbeat
        for sessions it serves): the quiet period starts over.  ``head_start_ms``:
        count them as active that much earlier (session/eviction.py)."""
        if session_ids:
            now = _now_ms() - head_start_ms
            with contextlib.suppress(RedisError, OSError):
                await self.client.zadd(INDEX_KEY, dict.fromkeys(session_ids, now))

    # -- lease-fenced appends -------------------------------------------------

    async def append(self, keys: SessionKeys, token: str, tail: Tail,
                     events: list[dict[str, Any]], release: bool, epoch: str) -> Tail:
        """Append ``events`` if ``token`` still holds the lease; the stream's new tail.

        ``tail``: the seq (and on a cluster the chain) the caller has seen.  One node:
        a Redis restarted empty continues from that seq, so ``through`` never goes
        back.  Cluster: the stream must end exactly there, else StreamLost (the
        session was given a new epoch).  ``release``: the batch ends the run, and
        frees its lease in the same script.
        """
        ordered = [dumps(e) for e in events]
        flag = 1 if release else 0
        script, args = (
            (CLUSTER_APPEND_SCRIPT, [token, self.stream_maxlen, tail[0], tail[1], self.ttl_ms,
                                     flag, epoch, uuid.uuid4().hex[:16], *ordered])
            if self.cluster else
            (APPEND_SCRIPT, [token, self.stream_maxlen, tail[0], self.ttl_ms, flag, *ordered]))
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._writes.append((script, [keys.log, keys.lease, keys.seq, keys.epoch], args, fut))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_loop())
        try:
            result = await fut
        except ResponseError as exc:
            if LEASE_LOST in str(exc):
                raise StoreError("the run's lease was lost") from None
            if STREAM_LOST in str(exc):
                raise StreamLost("the session store lost acknowledged writes") from None
            raise StoreError(f"redis refused the append: {exc}") from None
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        if self.cluster:
            return int(result[0]), _text(result[1]) or ""
        return int(result), ""

    async def _write_loop(self) -> None:
        try:
            while self._writes:
                batch, self._writes = self._writes, []
                try:
                    pipe = self.client.pipeline(transaction=False)
                    for script, keys, args, _ in batch:
                        pipe.eval(script, len(keys), *keys, *args)
                    results = await pipe.execute(raise_on_error=False)
                except BaseException as exc:
                    for _, _, _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc if isinstance(exc, Exception)
                                              else RedisConnectionError("cancelled"))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, _, _, fut), res in zip(batch, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, Exception):
                        fut.set_exception(res)
                    else:
                        fut.set_result(res)
        finally:
            self._writer = None

    # -- leases and snapshots -------------------------------------------------------

    async def take_lease(self, keys: SessionKeys, token: str) -> bool:
        try:
            return bool(await self.client.set(keys.lease, token, nx=True, px=self.lease_ms))
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None

    async def renew_lease(self, keys: SessionKeys, token: str) -> bool:
        """Raises RedisError/OSError when Redis cannot answer (the caller tolerates it)."""
        return bool(await self._eval(RENEW_SCRIPT, [keys.lease], token, self.lease_ms))

    async def release_lease(self, keys: SessionKeys, token: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._eval(RELEASE_SCRIPT, [keys.lease], token)

    async def write_snapshot(self, keys: SessionKeys, seq: int, payload: str) -> bool:
        """Store the conversation at ``seq`` unless a newer one is there, or the
        stream ends before ``seq``; False if Redis could not take it."""
        try:
            await self._eval(SNAPSHOT_SCRIPT, [keys.snap, keys.seq], seq, payload, self.ttl_ms)
        except (RedisError, OSError):
            return False
        return True

    async def next_run_index(self, keys: SessionKeys) -> int:
        try:
            index = int(await self.client.incr(keys.runs)) - 1
            await self.client.pexpire(keys.runs, self.ttl_ms)
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None
        return index

    async def lease_held(self, keys: SessionKeys) -> bool:
        try:
            return bool(await self.client.exists(keys.lease))
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None

    async def _eval(self, script: str, keys: list[str], *args: Any) -> Any:
        # EVAL with the script's text, never EVALSHA: a node promoted by a failover
        # (or restarted) has an empty script cache, and the client's SCRIPT LOAD then
        # goes to every master of the cluster - failing while any one is down, which
        # would keep a healthy master's runs from renewing their leases.
        return await self.client.eval(script, len(keys), *keys, *args)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._writer
        with contextlib.suppress(Exception):
            await self.client.aclose()


def _node_client(url: str, block_ms: int, max_sessions: int) -> aioredis.Redis:
    # Each session's reader holds a connection while it blocks in XREAD; the pool
    # has room for every session this process may hold, and waits (not fails)
    # when a burst of catch-ups wants more.
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=2 * max_sessions + 64,
        timeout=10,
        decode_responses=False,
        socket_connect_timeout=2.0,
        socket_timeout=block_ms / 1000 + 5.0,
        # After a Redis restart the pool holds dead connections; a PING before
        # reusing an idle one, and quick retries, find that out at once.
        health_check_interval=2,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    return aioredis.Redis(connection_pool=pool)


def _cluster_client(url: str, block_ms: int) -> RedisCluster:
    parts = urlsplit(url)
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in cluster_nodes(url)],
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        ssl=parts.scheme.startswith("rediss"),
        decode_responses=False,
        # A master failing over leaves its slots uncovered for a while: the other
        # masters' sessions go on meanwhile.
        require_full_coverage=False,
        socket_connect_timeout=2.0,
        socket_timeout=block_ms / 1000 + 5.0,
        # Few and quick retries: a failover takes the cluster-node-timeout, and the
        # store's own loops (the reader's back-off, the lease's grace) wait it out
        # without holding a run's write or a viewer's catch-up for seconds.
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
    )
