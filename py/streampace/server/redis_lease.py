"""Who runs a Redis session: the run's lease, its fenced writes, its snapshots, and
the ending of runs whose process died.

A run takes the session's lease (``SET NX PX``), renews it every third of its
life, and appends through the lease-checking script, so a process that lost
its lease (paused, partitioned) cannot write into a run someone else has since
ended: the lease is also the fence.  A run whose owner died is noticed by any
process whose reader finds the stream quiet with a run open and no lease; that
process takes the lease and ends the run with ``run_lost``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from streampace.conversation import events as ev

from .redis_conn import RedisConnection, Tail
from .redis_keys import SessionKeys
from .redis_mirror import RedisMirror
from .store_errors import StoreError

if TYPE_CHECKING:
    from .config import ServerConfig
    from .store import StoredSession

__all__ = ["RunLease", "SNAPSHOT_EVERY"]

log = logging.getLogger("streampace.server")

SNAPSHOT_EVERY = 500  # events between snapshot-key writes during a run


class RunLease:
    def __init__(self, session: StoredSession, conn: RedisConnection, keys: SessionKeys,
                 mirror: RedisMirror, config: ServerConfig) -> None:
        self._session = session
        self.session_id = session.id
        self._conn = conn
        self._keys = keys
        self._mirror = mirror
        # A snapshot at least every quarter of the log window, so a process that opens
        # the session finds one the stream still follows on from.
        self._snapshot_every = min(SNAPSHOT_EVERY, max(1, config.log_events // 4))
        self.token: str | None = None  # while this process runs the session
        self._renewer: asyncio.Task[None] | None = None
        self._inflight: asyncio.Future[int] | None = None
        # Cluster: the stream's tail after this process's last append under a token
        # (the append script checks the stream still ends there).
        self._tail: tuple[str, Tail] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- a run of this process ---------------------------------------------------

    async def acquire(self, run_id: str) -> tuple[bool, int | None]:
        """Take the lease for ``run_id``: granted or not, and the run's number."""
        token = f"{self._conn.token}:{run_id}"
        taken_at = time.monotonic()  # the lease's life starts when the take is sent
        if not await self._conn.take_lease(self._keys, token):
            return False, None
        try:
            await self._mirror.catch_up()  # current history, and the seq floor
            if self._session.run_in_log:
                await self._end_lost_run(token)  # a lost run nobody has ended yet
            index = await self._conn.next_run_index(self._keys)
        except BaseException:
            with contextlib.suppress(Exception):
                await self._conn.release_lease(self._keys, token)
            raise
        self.token = token
        self._renewer = asyncio.create_task(self._keep(token, run_id, taken_at))
        return True, index

    async def _keep(self, token: str, run_id: str, taken_at: float) -> None:
        """Renew the lease every third of its life, counted from when it was last
        taken or renewed (the catch-up after the take may have used some of it); a
        renewal Redis could not answer is retried soon, until the lease has run out."""
        life = self._conn.lease_ms / 1000
        period = life / 3
        renewed_at = taken_at
        wait = max(0.0, period - (time.monotonic() - taken_at))
        while True:
            await asyncio.sleep(wait)
            sent_at = time.monotonic()
            try:
                held = await self._conn.renew_lease(self._keys, token)
            except (RedisError, OSError):
                if time.monotonic() - renewed_at > life:
                    self._session.stop_run("store_unavailable",
                                           "the session store is unavailable", run_id)
                    return
                wait = period / 6
                continue
            if not held:
                self._session.stop_run("run_lost", "the run lost its lease", run_id)
                return
            renewed_at, wait = sent_at, period

    async def emit(self, events: list[dict[str, Any]]) -> None:
        """Append a run's events, fenced by its lease."""
        if not events:
            return
        if self.token is None:
            raise StoreError("no lease")
        # A cancel must never cut a Redis command in half (redis-py then drops the
        # connection): the write runs shielded, and the next write - the terminal
        # event after a cancel - waits for it, so the stream keeps the run's order.
        if self._inflight is not None and not self._inflight.done():
            with contextlib.suppress(Exception):
                await asyncio.shield(self._inflight)
        self._inflight = asyncio.ensure_future(self.write(events, self.token))
        await asyncio.shield(self._inflight)

    async def write(self, events: list[dict[str, Any]], token: str) -> int:
        """One fenced append; the last seq written.  The run's terminal event frees
        the session in the same script: a viewer that sees the run end may start the
        next one at once, at any process."""
        release = bool(events) and events[-1].get("type") in ev.RUN_TERMINAL_TYPES
        mirror = self._mirror
        tail: Tail = (mirror.head, mirror.chain)  # the mirror is caught up at a run's start
        if self._conn.cluster and self._tail is not None and self._tail[0] == token:
            tail = self._tail[1]  # this token's own writes, which the mirror may not hold yet
        new = await self._conn.append(self._keys, token, tail, events, release,
                                      self._session.epoch)
        self._tail = (token, new)
        return new[0]

    def release(self) -> None:
        """The run is over.  No await here: the session settles right after (the
        terminal event already freed the lease; it is dropped here too in case the
        run ended unwritten)."""
        token, self.token = self.token, None
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        if token is not None:
            self._spawn(self._after_run(token))

    async def _after_run(self, token: str) -> None:
        await self._conn.release_lease(self._keys, token)
        with contextlib.suppress(StoreError):
            await self._mirror.catch_up()
            await self.write_snapshot()

    def after_applied(self) -> None:
        """The mirror logged new entries: the run's owner keeps the snapshot key fresh."""
        if (self.token is not None
                and self._mirror.head - self._mirror.snapshot_seq >= self._snapshot_every):
            self._spawn(self.write_snapshot())

    async def write_snapshot(self) -> None:
        seq, payload = self._mirror.snapshot_payload()
        if await self._conn.write_snapshot(self._keys, seq, payload):
            self._mirror.snapshot_seq = max(self._mirror.snapshot_seq, seq)

    # -- runs whose process died ---------------------------------------------------------

    async def end_lost_run(self) -> None:
        """The stream shows a run open, yet nobody holds its lease: its process died.
        End it with RUN_ERROR run_lost so no viewer waits forever."""
        session = self._session
        if not session.run_in_log or session.run_here:
            return
        if await self._conn.lease_held(self._keys):
            return
        token = f"{self._conn.token}:recover-{uuid.uuid4().hex[:8]}"
        if not await self._conn.take_lease(self._keys, token):
            return
        try:
            await self._end_lost_run(token)
            await self.write_snapshot()
        finally:
            await self._conn.release_lease(self._keys, token)

    async def _end_lost_run(self, token: str) -> None:
        session = self._session
        await self._mirror.catch_up()
        if not session.run_in_log:
            return
        log.warning("session %s: run %s lost its process; ending it (run_lost)", session.log_name,
                    session.conversation.run.run_id)
        await self.write(session.lost_run_events(
            "run_lost", "the server running this run stopped"), token)
        await self._mirror.catch_up()

    # -- tasks -----------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Wait for the background writes (lease release, snapshots) started so far."""
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task

    def close(self) -> None:
        for task in (self._renewer, *self._tasks):
            if task is not None:
                task.cancel()
