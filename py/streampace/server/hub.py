"""All sessions of one server: admission, the session limit, eviction, the byte
budget, shutdown.

A session is created only when a socket first attaches to it (``open``): a socket
that never sends ``resume`` or ``run`` creates, loads and touches nothing.  Room
for a new session is made by forgetting sessions the engine calls evictable
(nobody attached, no run, quiet for ``quiet_s``); when there is none, the new
session is refused (1013) and the existing ones go on streaming.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter

from streampace.session.eviction import ranked_activity
from streampace.session.protocol import CloseCode

from .admission import (
    Authorize,
    ClientCounts,
    OriginPolicy,
    RatePerKey,
    Refused,
    TokenBucket,
)
from .config import ServerConfig
from .session import Session, monotonic_ms
from .sources import Source
from .store import MemoryStore, SessionStore
from .viewer import Viewer

__all__ = ["Hub", "SHUTDOWN_CODE", "SHUTDOWN_MESSAGE", "FULL_REASON", "BUDGET_REASON",
           "RATE_REASON"]

log = logging.getLogger("streampace.server")

SHUTDOWN_CODE = "server_shutdown"
SHUTDOWN_MESSAGE = "the server is shutting down"
FULL_REASON = "too many sessions in use"
BUDGET_REASON = "the server's memory budget for sessions is used up"
RATE_REASON = "too many new sessions: try again shortly"
ADDRESS_RATE_REASON = "too many new sessions from this address: try again shortly"


class Hub:
    """All sessions of one server."""

    def __init__(self, source: Source, config: ServerConfig,
                 store: SessionStore | None = None, *,
                 origins: OriginPolicy | None = None,
                 authorize: Authorize | None = None) -> None:
        self.source = source
        self.config = config
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.sessions: dict[str, Session] = {}
        self.viewers: set[Viewer] = set()
        self._fixed_origins = origins  # a mounted app's; serve's follow its port
        self.origins = origins or self._own_origins(config.port)
        self.authorize = authorize
        self.sockets = ClientCounts(config.max_connections_per_client)
        self.closes: Counter[CloseCode] = Counter()  # sockets the server closed, by close code
        self.shutting_down = False
        self.warned_unguarded = False  # the log said once that the server lacks our guards
        self._closing: set[asyncio.Future[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self.clock = monotonic_ms
        # Sessions this process makes (or loads from its store), in all addresses.
        self._new_sessions = TokenBucket(config.new_sessions_burst, config.new_sessions_per_s,
                                         self.clock() / 1000.0)
        self._new_sessions_by = RatePerKey(config.client_new_sessions_burst,
                                           config.client_new_sessions_per_s)

    def _own_origins(self, port: int) -> OriginPolicy:
        return OriginPolicy(set(self.config.allow_origins) | self.config.own_origins(port), ())

    def set_port(self, port: int) -> None:
        """The actual port once bound (it may have been 0)."""
        if self._fixed_origins is None:
            self.origins = self._own_origins(port)

    # -- viewers ------------------------------------------------------------------

    def add_viewer(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep())

    async def _sweep(self) -> None:
        """Close stalled viewers on a timer: a socket that stopped reading releases its
        queue ``send_timeout_s`` after its send began, output or not (issue 18 item 7)."""
        period = min(1.0, self.config.send_timeout_s / 4)
        try:
            while self.viewers:
                await asyncio.sleep(period)
                for viewer in list(self.viewers):
                    viewer.check_stalled()
        finally:
            self._sweeper = None

    # -- sessions ---------------------------------------------------------------

    async def open(self, session_id: str, client: str, minted: bool) -> Session:
        """The session a socket attaches to, created if need be; raises Refused.

        ``minted``: the server made the id for this socket.  Any other unknown id
        is refused unless the operator allows ids chosen by clients.
        """
        s = self.sessions.get(session_id)
        if s is not None:
            return s
        config = self.config
        if not minted and not config.client_session_ids and not (
                await self.store.exists(session_id)):
            raise Refused(CloseCode.UNKNOWN_SESSION, "unknown session: ask for a new one")
        s = self.sessions.get(session_id)  # made while the store answered
        if s is not None:
            return s
        if self._in_use_by(client) >= config.max_sessions_per_client > 0:
            raise Refused(CloseCode.TOO_MANY, "too many sessions from this address")
        now = self.clock()
        # An address's own rate first, so that one address cannot spend everyone's.
        if not self._new_sessions_by.take(client, now / 1000.0):
            raise Refused(CloseCode.TOO_MANY, ADDRESS_RATE_REASON)
        if not self._new_sessions.take(1, now / 1000.0):
            raise Refused(CloseCode.TRY_AGAIN_LATER, RATE_REASON)
        while len(self.sessions) >= config.max_sessions:
            if not self._evict_one(now, "session limit"):
                raise Refused(CloseCode.TRY_AGAIN_LATER, FULL_REASON)
        while self.bytes_held() >= config.memory_budget_bytes:
            if not self._evict_one(now, "memory budget"):
                log.warning("refused a new session: %d bytes held (budget %d)",
                            self.bytes_held(), config.memory_budget_bytes)
                raise Refused(CloseCode.TRY_AGAIN_LATER, BUDGET_REASON)
        s = self.sessions[session_id] = Session(session_id, self.source, config, self.store)
        s.created_by = client
        return s

    def room_to_grow(self) -> bool:
        """May a session start a run (which grows it)?  Not while the sessions hold
        the byte budget and no evictable one can go to bring them under it: the
        budget bounds sessions as they grow, not only when they are made (issue 33
        item 4: 12 sessions made empty and then filled reached 4.1x the budget).
        Runs already going finish; the overshoot is what they add."""
        budget = self.config.memory_budget_bytes
        now = self.clock()
        while (held := self.bytes_held()) >= budget:
            if not self._evict_one(now, "memory budget"):
                log.warning("refused a run: %d bytes held (budget %d)", held, budget)
                return False
        return True

    def forget(self, session: Session) -> None:
        """Drop a session that could not be made ready (nothing to evict)."""
        if self.sessions.get(session.id) is session and session.idle:
            self._drop(session)

    def bytes_held(self) -> int:
        return sum(s.engine.bytes_held for s in self.sessions.values())

    def _in_use_by(self, client: str) -> int:
        """Sessions ``client`` created that still count: in use or recently active."""
        now, quiet_ms = self.clock(), self.config.quiet_s * 1000.0
        return sum(1 for s in self.sessions.values()
                   if s.created_by == client and not s.engine.evictable(now, quiet_ms))

    def _evict_one(self, now: float, why: str) -> bool:
        """Forget the longest-quiet evictable session; False if there is none."""
        quiet_ms = self.config.quiet_s * 1000.0
        idle = [s for s in self.sessions.values() if s.engine.evictable(now, quiet_ms)]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: ranked_activity(s.engine, quiet_ms))
        self._drop(oldest)
        log.info("forgot idle session %s (%s)", oldest.log_name, why)
        return True

    def _drop(self, session: Session) -> None:
        del self.sessions[session.id]
        session.evict()  # a socket bound to it but not attached yet is closed (1013)
        self._closing.add(t := asyncio.ensure_future(session.close()))
        t.add_done_callback(self._closing.discard)

    # -- shutdown ------------------------------------------------------------------

    async def shutdown(self) -> None:
        """End runs (RUN_ERROR server_shutdown), flush every viewer, close with 1001."""
        self.shutting_down = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        tasks = [t for s in self.sessions.values()
                 if (t := s.shut_down(SHUTDOWN_CODE, SHUTDOWN_MESSAGE)) is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self.config.shutdown_drain_s)
        viewers = list(self.viewers)
        if viewers:
            await asyncio.gather(
                *(
                    v.drain_and_close(CloseCode.GOING_AWAY, "server shutting down",
                                      self.config.shutdown_drain_s)
                    for v in viewers
                ),
                return_exceptions=True,
            )
        for s in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await s.close()
        await self.store.close()
