"""A uvicorn server on a background thread, for the benchmarks that drive a browser."""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["ThreadedServer"]


class ThreadedServer:
    """``start()`` returns once uvicorn accepts connections; ``stop()`` ends it."""

    def __init__(self, config: Any, sockets: list[Any] | None = None) -> None:
        import uvicorn

        self._server = uvicorn.Server(config)
        kwargs = {"sockets": sockets} if sockets is not None else {}
        self._thread = threading.Thread(target=self._server.run, kwargs=kwargs, daemon=True)

    def start(self, timeout_s: float = 20) -> None:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("bench server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
