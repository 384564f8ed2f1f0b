"""streampace inside an existing Starlette / FastAPI application (docs/mount.md).

``StreampaceApp(agent)`` is an ASGI app to mount under a prefix: the session
WebSocket at ``{prefix}/ws/sessions/{id}`` and, with ``static=True``, the tag and
its runtime at ``{prefix}/js_shim/streampace.js`` and ``{prefix}/vendor/``. Runs
come from ``agent``, the application's own function (agent_source.py), or any
Source. It is a thin layer over ``create_app`` and the session hub that
``streampace serve`` uses.

Lifespan, the ASGI way: mounted apps get no lifespan events of their own, so the
host passes ``streampace.lifespan`` (``Starlette(lifespan=...)`` /
``FastAPI(lifespan=...)``) or enters ``streampace.lifespan(app)`` inside its
own. Served directly (``uvicorn module:streampace``) it answers the lifespan
protocol itself. On shutdown, runs still going end with RUN_ERROR
``server_shutdown`` and viewers still connected are flushed and closed (1001).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from .agent_source import Agent, AgentSource
from .app import create_app
from .config import ServerConfig
from .hub import Hub
from .sources.agui import run_agent_input
from .sources.base import RunRequest, Source
from .viewer import CLOSE_BAD_ORIGIN

__all__ = ["StreampaceApp", "RunRequest", "run_agent_input"]


class StreampaceApp:
    """streampace's session WebSocket (and optionally its page files) as a mountable app.

    ``agent``: a function of the run (``RunRequest``) returning an async iterator
    of AG-UI events, or a Source. ``allow_origins``: browser origins, besides
    the page's own (the request's Host), allowed to open the WebSocket
    (``"*"`` = any). ``config``: limits and delivery settings (ServerConfig);
    its host/port are not used, the host application owns the socket.
    """

    def __init__(
        self,
        agent: Agent | Source,
        *,
        static: bool = False,
        allow_origins: Iterable[str] = (),
        config: ServerConfig | None = None,
    ) -> None:
        source: Source = agent if hasattr(agent, "stream") else AgentSource(agent)  # type: ignore[assignment]
        base = config or ServerConfig()
        self.allow_origins = {o.rstrip("/") for o in (*base.allow_origins, *allow_origins)}
        # The Origin is checked here against the request's own Host (the hub only
        # knows a configured host:port, which a mounted app does not have).
        self.config = dataclasses.replace(base, allow_origins=("*",))
        self.source = source
        self.app = create_app(self.config, source, static=static)
        self.hub: Hub = self.app.state.hub

    def origin_allowed(self, scope: Scope) -> bool:
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        origin = headers.get(b"origin")
        if origin is None:  # not a browser: nothing to protect against cross-site
            return True
        origin_text = origin.decode("latin-1").rstrip("/")
        if "*" in self.allow_origins or origin_text in self.allow_origins:
            return True
        host = headers.get(b"host", b"").decode("latin-1").lower()
        return bool(host) and urlsplit(origin_text).netloc.lower() == host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_protocol(receive, send)
            return
        if scope["type"] == "websocket" and not self.origin_allowed(scope):
            websocket = WebSocket(scope, receive, send)
            # Accept first: a browser only learns a close code from an open socket.
            await websocket.accept()
            await websocket.close(CLOSE_BAD_ORIGIN, "origin not allowed")
            return
        await self.app(scope, receive, send)

    async def shutdown(self) -> None:
        """End runs (RUN_ERROR server_shutdown), flush and close viewers (1001)."""
        await self.hub.shutdown()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """For ``Starlette(lifespan=streampace.lifespan)``, or to enter in your own lifespan."""
        try:
            yield
        finally:
            await self.shutdown()

    async def _lifespan_protocol(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
