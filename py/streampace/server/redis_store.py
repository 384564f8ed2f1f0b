"""The Redis Streams session store: sessions shared by several server processes.

A session's driver (server/session.py) is composed with a ``RedisBackend``,
which is itself composed of small parts with public interfaces:

- ``redis_keys``   the keys of a session and the scripts that write them;
- ``redis_conn``   the process's client, settings and pipelined fenced writer;
- ``redis_mirror`` the process's copy of a session's log and transcript (a typed
  machine: empty / current / stale / down / closed);
- ``redis_lease``  who runs the session: the lease, fenced appends, snapshots,
  the ending of runs whose process died;
- ``redis_reader`` the process's one XREAD over every session it follows.

``RedisStore`` holds what one process shares: the connection, the reader and
the ``sp:control`` listener that delivers cancels to the process running a run.
Layout and guarantees: docs/scaling.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Coroutine
from enum import Enum
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from streampace.lifecycle import Machine, table

from .redis_conn import RedisConnection, unreachable
from .redis_keys import CONTROL_CHANNEL, SessionKeys, dumps
from .redis_lease import SNAPSHOT_EVERY, RunLease
from .redis_mirror import MirrorState, RedisMirror
from .redis_reader import StreamReader

if TYPE_CHECKING:
    from .config import ServerConfig
    from .store import StoredSession

__all__ = ["RedisStore", "RedisBackend", "CONTROL_CHANNEL", "SNAPSHOT_EVERY", "StoreState",
           "StoreEvent", "STORE_TABLE"]

log = logging.getLogger("streampace.server")


class StoreState(Enum):
    NEW = "new"  # made; the loop is not up yet
    LISTENING = "listening"  # started: the control channel is listened to
    CLOSED = "closed"  # shut down: the listener, the reader and the client stopped


class StoreEvent(Enum):
    START = "start"
    CLOSE = "close"


STORE_TABLE = table(StoreState, StoreEvent, """
NEW        START  LISTENING  the loop is up: the control listener starts (Redis may not
                             answer yet: sessions are refused until it does)
NEW        CLOSE  CLOSED     closed before it started: nothing to stop
LISTENING  START  LISTENING  started again (a second lifespan): one listener is enough
LISTENING  CLOSE  CLOSED     shutdown: the listener, the reader and the client stop
CLOSED     START  CLOSED     closed: nothing starts again
CLOSED     CLOSE  CLOSED     already closed
""")


class RedisBackend:
    """One session's composition with Redis (the SessionBackend of server/store.py)."""

    def __init__(self, session: StoredSession, store: RedisStore) -> None:
        self.session_id = session.id
        self._session = session
        self._store = store
        self.keys = SessionKeys.of(session.id)
        self.mirror = RedisMirror(session, store.conn, self.keys, store.config)
        self.lease = RunLease(session, store.conn, self.keys, self.mirror, store.config)
        self.mirror.on_applied = self.lease.after_applied
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- SessionBackend ---------------------------------------------------------

    async def ready(self) -> None:
        await self.mirror.ready()
        self._follow()

    def viewer_attached(self) -> None:
        self._follow()  # ready() ran before this viewer counted as one

    def viewer_left(self) -> None:
        # A session never used for a run, now bound to nobody here, goes to the head
        # of the index's eviction order (session/eviction.py).
        head_start = self._session.head_start_ms(self._store.conn.quiet_ms)
        if head_start and not self._closed:
            self._spawn(self._store.conn.touch([self.session_id], head_start))

    async def acquire_run(self, run_id: str) -> tuple[bool, int | None]:
        granted, index = await self.lease.acquire(run_id)
        if granted:
            self._store.running[self.session_id] = self
            self._follow()
        return granted, index

    async def emit(self, run_id: str, events: list[dict[str, Any]]) -> None:
        await self.lease.emit(events)

    def release_run(self, run_id: str) -> None:
        if self._store.running.get(self.session_id) is self:
            del self._store.running[self.session_id]
        self.lease.release()

    def publish_cancel(self, code: str, message: str) -> None:
        self._spawn(self._store.publish_cancel(self.session_id, code, message))

    async def close(self) -> None:
        self.mirror.close()  # first: from here on the backend is closed (_closed)
        if self._store.backends.get(self.session_id) is self:
            del self._store.backends[self.session_id]
        self._store.reader.forget(self)
        self.lease.close()
        for task in list(self._tasks):
            task.cancel()

    # -- what the process's reader and control listener ask ------------------------

    @property
    def wants_reads(self) -> bool:
        """Someone in this process needs this session's new events."""
        return not self._closed and self._session.in_use

    @property
    def run_open(self) -> bool:
        """The log shows a run going on (here or at another process)."""
        return self._session.run_in_log or self._session.run_here

    async def check_quiet(self, now: float, quiet_s: float) -> None:
        """A stream that shows a run but has been quiet: is its owner alive?"""
        if (self._session.run_in_log and not self._session.run_here
                and now - self.mirror.last_data > quiet_s):
            self.mirror.last_data = now  # next look one quiet period from now
            await self.lease.end_lost_run()

    def stop_run(self, code: str, message: str) -> None:
        self._session.stop_run(code, message)

    # -- internals --------------------------------------------------------------------

    @property
    def _closed(self) -> bool:
        # The backend's lifecycle is its mirror's (redis_mirror.MIRROR_TABLE): closing
        # the backend closes the mirror, and nothing reopens it.
        return self.mirror.state is MirrorState.CLOSED

    def _follow(self) -> None:
        if not self._closed:
            self._store.reader.follow(self)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


class RedisStore:
    name = "redis"
    shared = True

    def __init__(self, url: str, config: ServerConfig) -> None:
        self.config = config
        self.conn = RedisConnection(url, config)
        self.display_url = self.conn.display_url
        self.reader = StreamReader(self.conn)
        self.running: dict[str, RedisBackend] = {}  # sessions whose run this process owns
        self.backends: dict[str, RedisBackend] = {}  # every session this process holds
        self._control: asyncio.Task[None] | None = None
        self._machine: Machine[StoreState, StoreEvent] = Machine(
            "redis store", STORE_TABLE, StoreState.NEW)

    @property
    def state(self) -> StoreState:
        return self._machine.state

    def backend(self, session: StoredSession) -> RedisBackend:
        backend = self.backends[session.id] = RedisBackend(session, self)
        return backend

    async def exists(self, session_id: str) -> bool:
        try:
            return bool(await self.conn.client.exists(SessionKeys.of(session_id).epoch))
        except (RedisError, OSError) as exc:
            raise unreachable(exc) from None

    async def start(self) -> None:
        starting = self._machine.state is StoreState.NEW
        self._machine.step(StoreEvent.START)
        if not starting:
            return  # started already, or closed (STORE_TABLE)
        self.conn.on_lost = self._lost
        try:
            await self.conn.client.ping()
            self.conn.instance = await self.conn.claim_instance()
            log.info("session store: redis at %s", self.display_url)
        except (RedisError, OSError) as exc:
            # Serve anyway: sessions are refused (1013) until Redis answers.
            log.error("session store: redis at %s is unreachable (%s); retrying",
                      self.display_url, type(exc).__name__)
        self._control = asyncio.create_task(self._listen_control())

    async def close(self) -> None:
        self._machine.step(StoreEvent.CLOSE)
        if self._control is not None:
            self._control.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._control
        await self.reader.close()
        await self.conn.close()

    def _lost(self) -> None:
        """Redis lost its data: every session this process holds is rebuilt from what
        Redis has now, under a new epoch, once its viewers have resumed."""
        log.error("session store: redis at %s lost its data (restarted without "
                  "persistence, or flushed): %d sessions here resume from it", self.display_url,
                  len(self.backends))
        for backend in list(self.backends.values()):
            backend.mirror.lost()

    async def publish_cancel(self, session_id: str, code: str, message: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.conn.client.publish(
                CONTROL_CHANNEL, dumps({"s": session_id, "code": code, "message": message}))

    async def _listen_control(self) -> None:
        """Cancels for the runs this process owns, wherever the viewer asked."""
        backoff = 0.1
        while self._machine.state is StoreState.LISTENING:
            pubsub = self.conn.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(CONTROL_CHANNEL)
                backoff = 0.1
                while self._machine.state is StoreState.LISTENING:
                    msg = await pubsub.get_message(timeout=1.0)
                    if msg is None or msg.get("type") != "message":
                        continue
                    self._on_control(msg["data"])
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.debug("control channel: %r", exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _on_control(self, data: bytes) -> None:
        try:
            msg = json.loads(data)
            backend = self.running.get(msg["s"])
        except (ValueError, KeyError, TypeError):
            return
        if backend is not None:
            backend.stop_run(str(msg.get("code", "cancelled")),
                             str(msg.get("message", "run cancelled by a viewer")))
