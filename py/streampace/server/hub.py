"""All sessions of one server: creation, the session limit, eviction, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from .config import ServerConfig
from .session import Session
from .sources import Source
from .store import MemoryStore, SessionStore
from .viewer import CLOSE_GOING_AWAY, Viewer

__all__ = ["Hub", "SHUTDOWN_CODE", "SHUTDOWN_MESSAGE"]

log = logging.getLogger("streampace.server")

SHUTDOWN_CODE = "server_shutdown"
SHUTDOWN_MESSAGE = "the server is shutting down"


class Hub:
    """All sessions of one server."""

    def __init__(self, source: Source, config: ServerConfig,
                 store: SessionStore | None = None) -> None:
        self.source = source
        self.config = config
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.sessions: dict[str, Session] = {}
        self.viewers: set[Viewer] = set()
        self.allowed_origins: set[str] = set(config.allow_origins) | config.own_origins()
        self.shutting_down = False
        self._closing: set[asyncio.Future[None]] = set()

    def set_port(self, port: int) -> None:
        """The actual port once bound (it may have been 0)."""
        self.allowed_origins = set(self.config.allow_origins) | self.config.own_origins(port)

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None:
            return True
        return "*" in self.allowed_origins or origin.rstrip("/") in self.allowed_origins

    def session(self, session_id: str) -> Session | None:
        """The session (created on first use); None when the server holds too many."""
        s = self.sessions.get(session_id)
        if s is None:
            if len(self.sessions) >= self.config.max_sessions and not self._evict_idle():
                return None
            s = self.sessions[session_id] = Session(session_id, self.source, self.config,
                                                    self.store)
        return s

    def _evict_idle(self) -> bool:
        """Forget the longest-idle session nobody watches; False if every one is in use."""
        idle = [s for s in self.sessions.values() if s.idle]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.last_active)
        del self.sessions[oldest.id]
        oldest.evict()  # a socket bound to it but not attached yet is closed (1013)
        self._closing.add(t := asyncio.ensure_future(oldest.close()))
        t.add_done_callback(self._closing.discard)
        log.info("forgot idle session %s (session limit %d)", oldest.id, self.config.max_sessions)
        return True

    async def shutdown(self) -> None:
        """End runs (RUN_ERROR server_shutdown), flush every viewer, close with 1001."""
        self.shutting_down = True
        tasks = [t for s in self.sessions.values()
                 if (t := s.shut_down(SHUTDOWN_CODE, SHUTDOWN_MESSAGE)) is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self.config.shutdown_drain_s)
        viewers = list(self.viewers)
        if viewers:
            await asyncio.gather(
                *(
                    v.drain_and_close(CLOSE_GOING_AWAY, "server shutting down",
                                      self.config.shutdown_drain_s)
                    for v in viewers
                ),
                return_exceptions=True,
            )
        for s in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await s.close()
        await self.store.close()
