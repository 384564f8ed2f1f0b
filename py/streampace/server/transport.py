"""`streampace serve`'s connections, below HTTP: caps, the handshake timeout, and
the file-descriptor limit.

uvicorn (0.54, h11) keeps a connection that never completes its request forever,
and when the process runs out of file descriptors, CPython 3.11's accept loop
logs a traceback and schedules a retry once per listen-backlog slot (uvicorn's
backlog is 2048) every second: about 2 000 tracebacks a second, a core spent
formatting them, while real viewers' handshakes wait in the kernel's queue.
So (issue 18 item 4):

- every connection counts against its address and against the whole server the
  moment it is accepted; over ``max_connections`` (derived from the descriptor
  limit, leaving room for the store, upstreams and files) or the address's
  share, it is closed at once, before it costs anything else — so the process
  does not reach the descriptor limit through its listener;
- a connection that has not sent a complete request within
  ``handshake_timeout_s`` is closed (idle and half-open sockets);
- the soft descriptor limit is raised to the hard one at startup;
- the out-of-descriptors message is logged at most once per 10 s.

A mounted app runs under its host's server; passing ``GuardedH11Protocol`` and
``AnsweringWebSocketProtocol`` built by ``protocols(config)`` as uvicorn's
``http=``/``ws=`` gives it the same guards (docs/mount.md).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .admission import ClientCounts, address_key
from .config import ServerConfig
from .ws_protocol import LINGER_S, AnsweringWebSocketProtocol

__all__ = ["ConnectionGuard", "protocols", "raise_fd_limit", "default_max_connections",
           "quiet_accept_errors", "FD_RESERVE", "CLIENT_SLACK", "LINGER_S"]

log = logging.getLogger("streampace.server")

FD_RESERVE = 256  # descriptors kept for the store, upstreams, files, the listener
CLIENT_SLACK = 32  # sockets over an address's share still answered with 4429, not cut


def raise_fd_limit() -> int:
    """Raise the soft descriptor limit to the hard one; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def default_max_connections(fd_limit: int) -> int:
    return max(64, fd_limit - FD_RESERVE)


class ConnectionGuard:
    """Open connections per address and in all; one per served app."""

    def __init__(self, config: ServerConfig, fd_limit: int) -> None:
        self.config = config
        self.max_connections = config.max_connections or default_max_connections(fd_limit)
        per_client = config.max_connections_per_client
        self.per_client = ClientCounts(per_client + CLIENT_SLACK if per_client else 0)
        self.handshake_timeout_s = config.handshake_timeout_s
        self.refused = 0  # connections cut at once (over a cap)
        self.timed_out = 0  # connections cut for sending no complete request in time
        self.cut = 0  # finished WebSockets cut because the peer did not take the close
        self._keys: dict[int, str] = {}  # id(transport) -> its address, while open

    @property
    def open(self) -> int:
        """Connections open now."""
        return len(self._keys)

    def admit(self, transport: asyncio.BaseTransport) -> bool:
        """Count a new connection; False: it must be closed at once."""
        peer = transport.get_extra_info("peername")
        key = (address_key(str(peer[0]), self.config.ipv6_prefix)
               if isinstance(peer, tuple) and peer else "unknown")
        if self.open >= self.max_connections or not self.per_client.take(key):
            self.refused += 1
            return False
        self._keys[id(transport)] = key
        return True

    def release(self, transport: asyncio.BaseTransport) -> None:
        key = self._keys.pop(id(transport), None)
        if key is not None:
            self.per_client.release(key)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the guard's caps and a handshake timeout:
    from the connection's start, and again after each response, the peer has
    ``handshake_timeout_s`` to send a whole request (uvicorn's own keep-alive
    timer stops as soon as any byte arrives)."""

    guard: ConnectionGuard  # set on the subclass ``protocols`` makes
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self.guard.admit(transport):
            transport.abort()
            return
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()  # the WebSocket has its own attach timeout and pings
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.guard.release(self.transport)
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.guard.handshake_timeout_s,
                                              self._handshake_timeout)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _handshake_timeout(self) -> None:
        self._deadline = None
        # IDLE: no request has begun since the connection (or the last response).
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.guard.timed_out += 1
            self.transport.abort()


class GuardedWebSocketProtocol(AnsweringWebSocketProtocol):
    """The WebSocket half: the upgraded connection still counts until it is lost, and
    one the application is done with is cut if it has not gone within
    ``LINGER_S``: ``transport.close()`` waits for the send buffer to drain, which a
    peer that stopped reading never lets happen (its queued batches would stay in
    memory for as long as TCP keeps probing a zero window)."""

    guard: ConnectionGuard

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.release(self.transport)
        super().connection_lost(exc)

    async def run_asgi(self) -> None:
        try:
            await super().run_asgi()
        finally:
            self.cut_later()

    def _cut(self) -> None:
        if not self._lost:
            self.guard.cut += 1
        super()._cut()


def uvicorn_options(config: ServerConfig, guard: ConnectionGuard) -> dict[str, Any]:
    """The ``uvicorn.Config`` settings below ASGI that ``streampace serve`` and a
    mounted app (``StreampaceApp.uvicorn_options``) share."""
    http, ws = protocols(guard)
    return {
        # Our HTTP protocol caps connections and times out incomplete requests; the
        # WebSocket one answers an over-long handshake (414) instead of hanging.
        "http": http, "ws": ws,
        "ws_max_size": config.max_message_bytes,  # bigger frames: close 1009
        # Batches are small and mostly loopback/LAN; per-connection deflate cost ~10 %
        # of the server's CPU under load (bench/server_load.py) and a zlib context per
        # viewer.
        "ws_per_message_deflate": False,
        # A peer that answers no ping within the timeout is gone (half-open): 1011.
        "ws_ping_interval": config.ws_ping_interval_s,
        "ws_ping_timeout": config.ws_ping_timeout_s,
        # The client's address comes from X-Forwarded-For / Forwarded only when the
        # peer is a proxy the operator named (uvicorn's default trusts loopback, so
        # any local process could pick a new address per connection).
        "proxy_headers": bool(config.forwarded_allow_ips),
        "forwarded_allow_ips": list(config.forwarded_allow_ips) or None,
    }


def protocols(guard: ConnectionGuard) -> tuple[type[GuardedH11Protocol],
                                               type[GuardedWebSocketProtocol]]:
    """uvicorn ``http=`` and ``ws=`` classes bound to ``guard``."""
    config = guard.config
    http = type("StreampaceHTTP", (GuardedH11Protocol,), {"guard": guard})
    ws = type("StreampaceWebSocket", (GuardedWebSocketProtocol,), {
        "guard": guard,
        "control_burst_bytes": config.control_burst_bytes,
        "control_bytes_per_s": config.control_bytes_per_s,
    })
    return http, ws


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, every_s: float = 10.0) -> None:
    """Log the loop's out-of-descriptors accept error at most once per ``every_s``."""
    previous = loop.get_exception_handler()
    last = [-every_s]
    skipped = [0]

    def handler(loop_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == "socket.accept() out of system resource":
            now = time.monotonic()
            if now - last[0] < every_s:
                skipped[0] += 1
                return
            last[0] = now
            log.error("out of file descriptors: new connections wait (%s; %d more "
                      "in the last %.0f s)", context.get("exception"), skipped[0], every_s)
            skipped[0] = 0
            return
        if previous is not None:
            previous(loop_, context)
        else:
            loop_.default_exception_handler(context)

    loop.set_exception_handler(handler)
