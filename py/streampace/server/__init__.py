"""The ASGI / WebSocket server adapter (docs/server.md, docs/protocol.md).

The only part of streampace that does network I/O on the host: it serves the
page, runs sources (simulated model, replay, AG-UI or OpenAI upstreams) and
streams each session's events to its viewers through the core DeliveryBuffer.
"""

from __future__ import annotations

from .app import create_app
from .config import ServerConfig
from .hub import Hub
from .mount import StreampaceApp
from .runner import StreampaceServer, build_server
from .session import Session
from .sources import SourceSpecError, parse_source

__all__ = [
    "Hub",
    "ServerConfig",
    "Session",
    "SourceSpecError",
    "StreampaceApp",
    "StreampaceServer",
    "build_server",
    "create_app",
    "parse_source",
]
