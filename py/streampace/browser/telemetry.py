"""Per-frame figures for the demo chart and `stats()`: pure Python.

Graphemes revealed per frame, backlog (pending graphemes) and display lag (how
long the oldest not-yet-shown grapheme has been waiting), sampled from the
scheduler's counters: once per frame while a stream is active when a chart
listens (`StreamView(on_sample=...)`), otherwise in each drain that showed text
(controller.py says why).
"""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["Telemetry"]


class Telemetry:
    def __init__(self, host: Any, scheduler: Any, history: int = 600) -> None:
        self._host = host
        self._scheduler = scheduler
        # Cumulative paced graphemes queued, on the scale of the scheduler's
        # cumulative "graphemes" (revealed) counter.
        self._received = self.revealed() + int(scheduler.pending_graphemes())
        self._arrivals: deque[tuple[int, float]] = deque()  # (cumulative total, arrival ms)
        self._last_revealed = self.revealed()
        self.samples: deque[tuple[float, int, int, float]] = deque(maxlen=history)
        self.max_frame_graphemes = 0
        self.max_lag_ms = 0.0

    def before_enqueue(self) -> int:
        return int(self._scheduler.pending_graphemes())

    def after_enqueue(self, pending_before: int) -> None:
        added = int(self._scheduler.pending_graphemes()) - pending_before
        if added > 0:
            self._received += added
            self._arrivals.append((self._received, self._host.now()))

    def revealed(self) -> int:
        # Once per frame: the counter itself, not a copy of every stat.
        return int(self._scheduler.graphemes_delivered())

    def sample(self, now: float | None = None) -> tuple[float, int, int, float]:
        """One frame's figures: (now ms, graphemes this frame, backlog, lag ms).
        `now`: the host's time if the caller has just read it."""
        if now is None:
            now = self._host.now()
        revealed = self.revealed()
        shown = max(0, revealed - self._last_revealed)
        self._last_revealed = revealed
        # Drop arrivals whose graphemes are all on screen.
        while self._arrivals and self._arrivals[0][0] <= revealed:
            self._arrivals.popleft()
        pending = int(self._scheduler.pending_graphemes())
        lag = now - self._arrivals[0][1] if (self._arrivals and pending) else 0.0
        sample = (now, shown, pending, lag)
        self.samples.append(sample)
        self.max_frame_graphemes = max(self.max_frame_graphemes, shown)
        self.max_lag_ms = max(self.max_lag_ms, lag)
        return sample

    def reset(self) -> None:
        self._last_revealed = self.revealed()
        self._received = self._last_revealed + int(self._scheduler.pending_graphemes())
        self._arrivals.clear()
