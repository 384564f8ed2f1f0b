"""The process's one stream reader: one blocking XREAD over every session it follows.

Each session is read once per process — never once per viewer — and a process
serving many sessions makes one Redis call per wakeup, not one per session
(bench/server_load.py 100 x 10: server CPU per delivered event 39 -> 18 us).  A
session joining is picked up at the latest when the current XREAD returns
(MUX_BLOCK_MS); its ``ready()`` has caught it up before that.

On a Redis Cluster one XREAD cannot span slots: the reader polls instead, one small
script per session pipelined into one round trip per master (``RedisConnection.poll``),
every POLL_MS for sessions with a run open (less often past POLL_BUDGET_PER_S reads
per second) and every IDLE_POLL_MS for the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from enum import Enum
from typing import Any, Protocol

from redis.exceptions import RedisError

from streampace.lifecycle import Machine, table

from .redis_conn import READ_COUNT, RedisConnection
from .redis_mirror import RedisMirror
from .store_errors import StoreError, StoreLost

__all__ = ["StreamReader", "Follower", "MUX_BLOCK_MS", "ReaderState", "ReaderEvent",
           "READER_TABLE"]

log = logging.getLogger("streampace.server")

MUX_BLOCK_MS = 50  # the XREAD block: how late a newly followed session joins
POLL_MS = 25  # cluster: the pause between reads (well inside the 150 ms batching window)
# Cluster: a session with no run open is read this often (a run started elsewhere shows
# up to this late at first; the reads of idle sessions cost 8x less).
IDLE_POLL_MS = 200
# Cluster: at most this many session reads per second per process; with many busy
# sessions each is read less often than POLL_MS (100 busy sessions: every 50 ms), so
# the reads' CPU (~40 us each through redis-py) stays bounded however many it follows.
POLL_BUDGET_PER_S = 2000
TOUCH_EVERY_S = 30.0  # the followed sessions' activity in the session index


class ReaderState(Enum):
    IDLE = "idle"  # no loop: nobody to read for
    READING = "reading"  # the loop reads for the followed sessions
    CLOSED = "closed"  # shut down: nothing is read any more


class ReaderEvent(Enum):
    FOLLOW = "follow"  # a session to read for
    DRAINED = "drained"  # the loop ended: nobody left to follow, or it failed
    CLOSE = "close"


READER_TABLE = table(ReaderState, ReaderEvent, """
IDLE     FOLLOW   READING  a session to read for: the loop starts
READING  FOLLOW   READING  the loop takes it up at its next read (MUX_BLOCK_MS)
READING  DRAINED  IDLE     the loop ended; if sessions are followed still (it failed),
                           a FOLLOW starts the next one
IDLE     CLOSE    CLOSED   shutdown with no loop to stop
READING  CLOSE    CLOSED   shutdown: the loop is cancelled
CLOSED   FOLLOW   CLOSED   closed: a late follow reads nothing
CLOSED   DRAINED  CLOSED   the cancelled loop ends
CLOSED   CLOSE    CLOSED   already closed
""")


class Follower(Protocol):
    """A session the reader follows (redis_store.RedisBackend)."""

    session_id: str
    mirror: RedisMirror

    @property
    def wants_reads(self) -> bool:
        """Someone in this process needs the session's new events."""

    @property
    def run_open(self) -> bool:
        """The log shows a run going on."""

    async def check_quiet(self, now: float, quiet_s: float) -> None:
        """The stream brought nothing for a while: is a run's owner still alive?"""


class StreamReader:
    def __init__(self, conn: RedisConnection) -> None:
        self._conn = conn
        self._followers: dict[str, Follower] = {}
        self._task: asyncio.Task[None] | None = None
        self._machine: Machine[ReaderState, ReaderEvent] = Machine(
            "stream reader", READER_TABLE, ReaderState.IDLE)
        self._next_touch = 0.0
        self._next_poll: dict[str, float] = {}  # cluster: loop time each session is due
        self._busy = 0  # cluster: sessions read at the busy pace at the last count

    def follow(self, follower: Follower) -> None:
        self._followers[follower.session_id] = follower
        self._next_poll.pop(follower.session_id, None)  # a viewer or a run: read it now
        self._move(ReaderEvent.FOLLOW)

    @property
    def state(self) -> ReaderState:
        return self._machine.state

    def _move(self, event: ReaderEvent) -> None:
        """Step the table; entering READING starts the loop (the one place it starts)."""
        before = self._machine.state
        if self._machine.step(event) is ReaderState.READING and before is not ReaderState.READING:
            self._task = asyncio.create_task(self._loop())

    def forget(self, follower: Follower) -> None:
        if self._followers.get(follower.session_id) is follower:
            del self._followers[follower.session_id]
        self._next_poll.pop(follower.session_id, None)

    async def _loop(self) -> None:
        backoff = 0.1
        down = False
        try:
            while self._machine.state is ReaderState.READING:
                for sid in [i for i, f in self._followers.items() if not f.wants_reads]:
                    del self._followers[sid]
                    self._next_poll.pop(sid, None)
                following = {f.mirror.keys.log: f for f in self._followers.values()
                             if f.mirror.loaded}
                if not self._followers:
                    return
                try:
                    for f in following.values():
                        if f.mirror.stale:
                            await f.mirror.load()
                    if self._conn.cluster:
                        answered = await self._poll(following)
                        if down and answered:
                            down = False
                            log.warning("redis at %s is reachable again",
                                        self._conn.display_url)
                        backoff = 0.1
                        await self._after_read(following)
                        continue
                    streams: dict[Any, Any] = {key: f"{f.mirror.head}-0"
                                               for key, f in following.items()}
                    # With the data set's marker: a Redis that lost its data is
                    # noticed before anything it returns is applied.
                    resp: Any = ((await self._conn.read(streams, READ_COUNT, MUX_BLOCK_MS))[0]
                                 if streams else None)
                    if down:
                        down = False
                        log.warning("redis at %s is reachable again", self._conn.display_url)
                    backoff = 0.1
                    for f in following.values():
                        f.mirror.read_ok()
                    for key, entries in resp or ():
                        name = key.decode() if isinstance(key, bytes) else key
                        if name in following:
                            following[name].mirror.apply(entries)
                    await self._after_read(following)
                    if not streams:
                        await asyncio.sleep(MUX_BLOCK_MS / 1000)
                except StoreLost:
                    continue  # the store was told; its mirrors reload before reading again
                except (RedisError, OSError, StoreError) as exc:
                    down = True
                    for f in following.values():
                        f.mirror.read_failed(exc)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
        finally:
            self._task = None
            self._move(ReaderEvent.DRAINED)
            if self._followers:  # it failed with sessions to read for: the next loop
                self._move(ReaderEvent.FOLLOW)

    async def _poll(self, following: dict[str, Follower]) -> bool:
        """Cluster: one read of every followed session (pipelined, one round trip per
        master), then a pause — none when a session has more entries waiting than one
        read brings.  A session whose master failed is told so, and the others go
        on.  False if any session's master did not answer."""
        now = asyncio.get_running_loop().time()
        due = self._next_poll
        targets = [f for f in following.values() if due.get(f.session_id, 0.0) <= now]
        if not targets:
            await asyncio.sleep(POLL_MS / 1000)
            return True
        results = await self._conn.poll([(f.mirror.keys, f.mirror.head) for f in targets])
        backlog = False
        answered = True
        busy_ms = min(IDLE_POLL_MS, max(POLL_MS, 1000 * self._busy / POLL_BUDGET_PER_S))
        busy_count = 0
        for f, result in zip(targets, results, strict=True):
            if isinstance(result, Exception):
                answered = False
                f.mirror.read_failed(result)
                continue
            f.mirror.read_ok()
            backlog = backlog or len(result.entries) >= READ_COUNT
            await f.mirror.polled(result)
            busy = bool(result.entries) or f.run_open
            busy_count += busy
            due[f.session_id] = now + (busy_ms if busy else IDLE_POLL_MS) / 1000
        read = {f.session_id for f in targets}
        self._busy = busy_count + sum(1 for f in following.values()
                                      if f.session_id not in read and f.run_open)
        if not backlog:
            await asyncio.sleep(POLL_MS / 1000)
        return answered

    async def _after_read(self, following: dict[str, Follower]) -> None:
        now = asyncio.get_running_loop().time()
        for f in following.values():
            await f.check_quiet(now, self._conn.block_ms / 1000)
        if now >= self._next_touch:
            # Sessions served here are in use: never forgotten to make room.
            self._next_touch = now + TOUCH_EVERY_S
            await self._conn.touch([sid for sid, f in self._followers.items()
                                    if f.wants_reads])

    async def close(self) -> None:
        self._move(ReaderEvent.CLOSE)
        task = self._task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
