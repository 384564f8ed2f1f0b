"""Run the app under uvicorn, with a shutdown that ends runs and closes viewers with 1001."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

import uvicorn

from streampace.session.delivery import Batch

from .app import create_app
from .config import ServerConfig
from .hub import Hub
from .sources import Source
from .store_choice import make_store
from .transport import ConnectionGuard, quiet_accept_errors, raise_fd_limit, uvicorn_options

__all__ = ["StreampaceServer", "build_server"]

log = logging.getLogger("streampace.server")


class StreampaceServer(uvicorn.Server):
    """uvicorn.Server whose shutdown first lets our sessions finish properly.

    uvicorn alone would close open WebSockets with 1012 and drop whatever the
    delivery buffers still hold; we end active runs with RUN_ERROR, flush every
    viewer and close with 1001 before uvicorn's own shutdown runs.
    """

    def __init__(self, config: uvicorn.Config, hub: Hub, guard: ConnectionGuard,
                 on_ready: Callable[[str], None] | None = None) -> None:
        super().__init__(config)
        self.hub = hub
        self.guard = guard
        self.on_ready = on_ready
        self.url: str | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        quiet_accept_errors(asyncio.get_running_loop())
        await self.hub.store.start()
        await super().startup(sockets)
        if not self.servers or not self.servers[0].sockets:
            return
        port = self.servers[0].sockets[0].getsockname()[1]
        self.hub.set_port(port)
        host = self.config.host
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}/"
        if self.on_ready is not None:
            self.on_ready(self.url)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await self.hub.shutdown()
        except Exception:  # never block uvicorn's own shutdown
            log.exception("error while closing sessions")
        await super().shutdown(sockets)


def build_server(
    config: ServerConfig,
    source: Source,
    *,
    log_level: str = "info",
    on_ready: Callable[[str], None] | None = None,
    on_send: Callable[[Batch], None] | None = None,
) -> StreampaceServer:
    hub = Hub(source, config, make_store(config))
    app = create_app(config, source, hub, on_send=on_send)
    guard = ConnectionGuard(config, raise_fd_limit())
    uv_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        **uvicorn_options(config, guard),
        lifespan="off",
        log_level=log_level,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=10,
    )
    return StreampaceServer(uv_config, hub, guard, on_ready=on_ready)
