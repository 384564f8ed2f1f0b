"""raf_all: the seed's "old implementation" — everything queued, on the next frame."""

from __future__ import annotations

from typing import Any

from bench.strategies.base import Strategy


class RafAll(Strategy):
    name = "raf_all"
    summary = "commit everything queued on the next animation frame"

    def __init__(self, host, commit) -> None:  # type: ignore[no-untyped-def]
        super().__init__(host, commit)
        self._queue: list[dict[str, Any]] = []
        self._frame: Any = None

    def receive(self, events: list[dict[str, Any]]) -> None:
        self._queue.extend(events)
        if self._frame is None:
            self._frame = self.host.request_frame(self._on_frame)

    def _on_frame(self) -> None:
        self._frame = None
        batch, self._queue = self._queue, []
        self.commit(batch, "frame")
