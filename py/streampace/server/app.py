"""The ASGI application: page files plus the session WebSocket."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route, WebSocketRoute

from streampace.session.delivery import Batch

from .config import ServerConfig
from .headers import SecurityHeaders
from .hub import Hub
from .log_redaction import hide_session_ids
from .sources import Source
from .static import StaticSite
from .websocket import session_socket

__all__ = ["create_app"]


def create_app(
    config: ServerConfig,
    source: Source,
    hub: Hub | None = None,
    on_send: Callable[[Batch], None] | None = None,
    *,
    static: bool = True,
) -> Starlette:
    """The app; ``static=False`` leaves out the page files (only the session WebSocket)."""
    hub = hub or Hub(source, config)
    hide_session_ids()  # uvicorn logs each handshake's path, which holds the id
    # `:path` so an id with a (decoded %2F) slash still reaches the handler,
    # which closes with 4400 as documented instead of an HTTP 403.
    routes: list[BaseRoute] = [WebSocketRoute("/ws/sessions/{session_id:path}", session_socket)]
    if static:
        site = StaticSite(config.root)
        routes += [
            Route("/", site.handle, methods=["GET", "HEAD"]),
            Route("/{path:path}", site.handle, methods=["GET", "HEAD", "POST", "PUT", "DELETE"]),
        ]
    app = Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)])
    app.state.hub = hub
    app.state.on_send = on_send
    return app
