"""`streampace serve --workers N`: N server processes sharing one listening socket.

The parent binds the address once and forks N workers; the kernel spreads new
connections over them.  Any worker can serve any session because they all use
the same shared store (Redis): no sticky sessions.  The parent only waits,
forwards SIGTERM/SIGINT, and exits when every worker has.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
from collections.abc import Callable

from .config import ServerConfig
from .sources import Source

__all__ = ["bind_socket", "serve_workers"]

log = logging.getLogger("streampace.server")


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve_workers(
    workers: int,
    config: ServerConfig,
    make_source: Callable[[], Source],
    log_level: str,
    on_ready: Callable[[str], None],
) -> int:
    """Run ``workers`` processes on one socket; returns the exit status."""
    from .runner import build_server

    sock = bind_socket(config.host, config.port)
    port = sock.getsockname()[1]
    config.port = port  # the workers' own-origin checks need the real port
    pids: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until told to stop
            code = 1
            try:
                server = build_server(config, make_source(), log_level=log_level)
                with contextlib.suppress(KeyboardInterrupt):
                    server.run(sockets=[sock])
                code = 0 if server.started else 1
            finally:
                os._exit(code)
        pids.append(pid)
    sock.close()
    shown = f"[{config.host}]" if ":" in config.host else config.host
    on_ready(f"http://{shown}:{port}/")

    def forward(signum: int, _frame: object) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    status = 0
    for pid in pids:
        while True:
            try:
                _, raw = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        code = os.waitstatus_to_exitcode(raw)
        # uvicorn re-raises the SIGTERM it handled once its graceful shutdown is done.
        if code not in (0, -signal.SIGTERM):
            log.warning("worker %d exited with %d", pid, code)
            status = 1
    return status
