"""streampace inside an existing Starlette / FastAPI application (docs/mount.md).

``StreampaceApp(agent)`` is an ASGI app to mount under a prefix: the session
WebSocket at ``{prefix}/ws/sessions/{id}`` and, with ``static=True``, the tag and
its runtime at ``{prefix}/js_shim/streampace.js`` and ``{prefix}/vendor/``. Runs
come from ``agent``, the application's own function (agent_source.py), or any
Source. It is a thin layer over ``create_app`` and the session hub that
``streampace serve`` uses.

Who gets in is the host application's to decide (``authorize``), and which
names the app is served under (``allowed_hosts``): docs/mount.md, docs/security.md.

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

from starlette.types import Receive, Scope, Send

from .admission import Authorize, OriginPolicy
from .agent_source import Agent, AgentSource
from .app import create_app
from .config import ServerConfig
from .hub import Hub
from .sources.agui import run_agent_input
from .sources.base import RunRequest, Source
from .store import check_store_spec
from .store_choice import make_store
from .transport import ConnectionGuard, raise_fd_limit, uvicorn_options

__all__ = ["StreampaceApp", "RunRequest", "run_agent_input", "LOOPBACK_NAMES"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class StreampaceApp:
    """streampace's session WebSocket (and optionally its page files) as a mountable app.

    ``agent``: a function of the run (``RunRequest``) returning an async iterator
    of AG-UI events, or a Source.  ``authorize``: ``async (websocket, session_id,
    new) -> bool``, called at every handshake before anything of the session is
    touched (``new``: the id was just minted for a ``/ws/sessions/new`` socket);
    False closes the socket with 4401.  ``allowed_hosts``: the names this app is
    served under; a browser page whose Origin is the request's own Host is let in
    only for these (default: loopback names — set yours in production).
    ``allow_origins``: other browser origins allowed (``"*"`` = any).
    ``client_session_ids``: also accept ids the client made up (default: only
    ids the server minted).  ``store``: where sessions live, as ``serve --store``
    takes it (``memory``, ``redis://HOST:PORT/DB``, ``redis+cluster://HOST:PORT,...``;
    docs/scaling.md); a shared store connects in the app's lifespan, so run it
    (``Starlette(lifespan=...)`` or ASGI lifespan events).  ``config``: limits and
    delivery settings (ServerConfig); its host/port are not used, the host
    application owns the socket.
    """

    def __init__(
        self,
        agent: Agent | Source,
        *,
        static: bool = False,
        authorize: Authorize | None = None,
        allowed_hosts: Iterable[str] = LOOPBACK_NAMES,
        allow_origins: Iterable[str] = (),
        client_session_ids: bool | None = None,
        store: str | None = None,
        config: ServerConfig | None = None,
    ) -> None:
        source: Source = agent if hasattr(agent, "stream") else AgentSource(agent)  # type: ignore[assignment]
        base = config or ServerConfig()
        if client_session_ids is not None:
            base = dataclasses.replace(base, client_session_ids=client_session_ids)
        if store is not None:
            base = dataclasses.replace(base, store=check_store_spec(store))
        self.config = base
        self.origins = OriginPolicy((*base.allow_origins, *allow_origins), allowed_hosts)
        self.source = source
        self.hub = Hub(source, base, make_store(base), origins=self.origins,
                       authorize=authorize)
        self.app = create_app(base, source, self.hub, static=static)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_protocol(receive, send)
            return
        await self.app(scope, receive, send)

    def uvicorn_options(self) -> dict[str, Any]:
        """Keyword arguments for ``uvicorn.Config`` / ``uvicorn.run`` that give the host
        application's server what ``streampace serve`` has below the ASGI level
        (docs/mount.md): connections capped per address and in all at accept, a
        handshake timeout for incomplete requests, an answer to over-long handshakes,
        WebSocket pings, the message size limit.  The caps count every connection
        of that server, the host application's own pages too."""
        return uvicorn_options(self.config, ConnectionGuard(self.config, raise_fd_limit()))

    async def shutdown(self) -> None:
        """End runs (RUN_ERROR server_shutdown), flush and close viewers (1001)."""
        await self.hub.shutdown()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """For ``Starlette(lifespan=streampace.lifespan)``, or to enter in your own lifespan."""
        await self.hub.store.start()
        try:
            yield
        finally:
            await self.shutdown()

    async def _lifespan_protocol(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.hub.store.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
