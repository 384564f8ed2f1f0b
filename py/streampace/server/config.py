"""Server settings (what `streampace serve` flags set)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from base64 import urlsafe_b64encode
from dataclasses import dataclass, field
from pathlib import Path

from streampace.session import limits
from streampace.session.delivery import DeliveryConfig

__all__ = ["ServerConfig", "default_root", "LOOPBACK_HOSTS", "THREAD_SECRET_ENV"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
THREAD_SECRET_ENV = "STREAMPACE_THREAD_SECRET"  # servers sharing a store share this


def _thread_secret() -> bytes:
    """The key of upstream thread ids: from the environment when set (every process
    and host serving the same sessions must agree), else random per server (the
    workers of one ``serve --workers`` are forked from it and share it)."""
    shared = os.environ.get(THREAD_SECRET_ENV)
    return shared.encode() if shared else secrets.token_bytes(32)


def default_root() -> Path:
    """Where the page files are: the installed package's copy, else the source checkout.

    A wheel carries them as streampace/_site/ (hatch_build.py); an editable
    install or a bare checkout serves the repository root, the parent of py/
    (this file is py/streampace/server/).
    """
    here = Path(__file__).resolve()
    packaged = here.parents[1] / "_site"
    if (packaged / "index.html").is_file():
        return packaged
    return here.parents[3]


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    root: Path = field(default_factory=default_root)
    source: str = "demo"
    allow_origins: tuple[str, ...] = ()  # added to the server's own origins; "*" = any
    max_sessions: int = 1_000  # beyond this, the longest-idle unwatched session is forgotten
    log_events: int = limits.LOG_EVENTS
    log_bytes: int = limits.LOG_BYTES
    history_messages: int = limits.HISTORY_MESSAGES  # completed messages for snapshots/history
    history_bytes: int = limits.HISTORY_BYTES  # ... and their text, UTF-8 bytes
    max_message_bytes: int = 65_536
    max_prompt_chars: int = limits.MAX_PROMPT_CHARS
    outbound_limit_bytes: int = 1024 * 1024
    send_timeout_s: float = 30.0  # a viewer that takes no data this long is disconnected
    abuse_errors: int = 10  # refused client messages ...
    abuse_window_s: float = 10.0  # ... within this window close the socket (4400)
    messages_burst: int = 200  # client messages one socket may send at once ...
    messages_per_s: float = 50.0  # ... and at this rate after; past it 1008
    shutdown_drain_s: float = 3.0  # how long shutdown waits for viewers to take their data
    # -- admission (docs/security.md) --------------------------------------------
    # Ids the client picks (/ws/sessions/ID for an ID the server never minted) are
    # refused unless allowed: a shared or guessable id is someone else's session.
    client_session_ids: bool = False
    attach_timeout_s: float = 10.0  # a socket that sent no resume/run by then: 1008
    handshake_timeout_s: float = 10.0  # serve: a connection without a full request is cut
    max_connections_per_client: int = 256  # per address (0: no limit); over it 4429
    max_sessions_per_client: int = 64  # sessions one address created and still uses
    ipv6_prefix: int = 64  # per-address limits count IPv6 clients by this prefix
    new_sessions_per_s: float = 100.0  # sessions created in all, at this rate ...
    new_sessions_burst: int = 200  # ... with this burst; past it 1013
    client_new_sessions_per_s: float = 5.0  # ... and by one address, at this rate ...
    client_new_sessions_burst: int = 20  # ... with this burst; past it 4429
    # Proxies whose X-Forwarded-For / Forwarded headers name the client (none: the
    # peer's own address is the client's, whoever sends such headers).
    forwarded_allow_ips: tuple[str, ...] = ()
    max_connections: int = 0  # serve: all connections (0: from the file-descriptor limit)
    memory_budget_bytes: int = 1024 * 1024 * 1024  # sessions' logs + kept text; then 1013
    quiet_s: float = 300.0  # a session active this recently is never forgotten
    ws_ping_interval_s: float = 20.0  # serve: WebSocket pings; no pong within ...
    ws_ping_timeout_s: float = 20.0  # ... this long closes the socket (1011)
    # Control frames (pings, pongs) a peer may send: a token bucket per connection in
    # bytes, each frame costing 64 + its payload; past it the socket is closed (1008).
    control_burst_bytes: int = 16 * 1024
    control_bytes_per_s: int = 2 * 1024
    store: str = "memory"  # or redis://HOST:PORT/DB, rediss://... (server/store.py)
    lease_ms: int = 5_000  # Redis store: a run's lease; a dead owner's run ends this late
    session_ttl_s: float = 7 * 24 * 3600.0  # Redis store: keys of an untouched session expire
    delivery: DeliveryConfig = field(default_factory=DeliveryConfig)
    thread_secret: bytes = field(default_factory=_thread_secret, repr=False)

    def upstream_thread_id(self, session_id: str) -> str:
        """The AG-UI threadId an upstream gets for a session: derived from the
        session's id (stable, one per session) but not the id itself, which is a
        capability an upstream must not hold (issue 33 item 7)."""
        digest = hmac.new(self.thread_secret, session_id.encode(), hashlib.sha256).digest()
        return "t-" + urlsafe_b64encode(digest[:16]).decode().rstrip("=")

    def own_origins(self, port: int | None = None) -> set[str]:
        port = self.port if port is None else port
        hosts = {self.host}
        if self.host in LOOPBACK_HOSTS:
            hosts |= {"127.0.0.1", "localhost", "[::1]"}
        hosts = {f"[{h}]" if ":" in h and not h.startswith("[") else h for h in hosts}
        return {f"http://{h}:{port}" for h in hosts}
