"""coalescer_40ms: seed 003's coalescing buffer, fed whole socket batches.

The timing is the core's `streampace.pacing.coalescer.StreamCoalescer`: the first
push renders at once and opens a 40 ms window; everything pushed inside the
window renders together when it closes.  That class coalesces strings, so
each arrival pushes a one-character marker and a render commits every event
queued so far — the same "render what is pending" it does with text.
"""

from __future__ import annotations

from typing import Any

from streampace.pacing.coalescer import StreamCoalescer

from bench.strategies.base import Commit, Host, Strategy


class Coalescer40(Strategy):
    name = "coalescer_40ms"
    summary = "seed 003: first batch at once, then one render per 40 ms window"

    def __init__(self, host: Host, commit: Commit) -> None:
        super().__init__(host, commit)
        self._queued: list[dict[str, Any]] = []
        self._c = StreamCoalescer(self._render, host, window_ms=40)

    def _render(self, _markers: str) -> None:
        batch, self._queued = self._queued, []
        self.commit(batch, "timer")

    def receive(self, events: list[dict[str, Any]]) -> None:
        self._queued.extend(events)
        self._c.push("\x00")
