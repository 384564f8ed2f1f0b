"""cherry_jitter: Cherry Studio's jitter-buffer pacer, from anchors §2.

Playout rate = sustained arrival rate + (queue − rate × cushion) / 0.3 s.  The
cushion (target buffered seconds) rests at 0.08 s; a stall longer than
max(250 ms, 6 × median inter-arrival gap) raises it (≤ 0.8 s) and it decays
back with τ = 6 s.  Graphemes segmented per chunk; frame dt clamped to 100 ms;
at most 400 graphemes may wait (the excess is shown at once); barriers flush.
"""

from __future__ import annotations

import math
import statistics
from collections import deque

from bench.strategies.base import FifoPacer

_REST_S = 0.08
_MAX_CUSHION_S = 0.8
_DECAY_MS = 6000.0
_CORRECTION_S = 0.3
_CAP = 400
_RATE_WINDOW_MS = 1000.0


class CherryJitter(FifoPacer):
    name = "cherry_jitter"
    summary = "rAF jitter buffer: arrival rate + adaptive cushion, 400-grapheme cap"
    flush_on_barrier = True
    max_dt_ms = 100.0

    def __init__(self, host, commit) -> None:  # type: ignore[no-untyped-def]
        super().__init__(host, commit)
        self.cushion = _REST_S
        self._arrivals: deque[tuple[float, int]] = deque()
        self._gaps: deque[float] = deque(maxlen=32)
        self._last_arrival: float | None = None
        self._first_arrival: float | None = None

    def on_arrival(self, now: float, units: int) -> None:
        if units <= 0:
            return
        if self._last_arrival is not None:
            gap = now - self._last_arrival
            if self._gaps:
                median = statistics.median(self._gaps)
                if gap > max(250.0, 6.0 * median):
                    self.cushion = min(_MAX_CUSHION_S, max(self.cushion, gap / 1000.0))
            self._gaps.append(gap)
        else:
            self._first_arrival = now
        self._last_arrival = now
        self._arrivals.append((now, units))

    def _rate(self, now: float) -> float:
        while self._arrivals and self._arrivals[0][0] < now - _RATE_WINDOW_MS:
            self._arrivals.popleft()
        if self._first_arrival is None:
            return 0.0
        window = min(_RATE_WINDOW_MS, max(100.0, now - self._first_arrival))
        return sum(n for _t, n in self._arrivals) * 1000.0 / window

    def budget(self, dt_ms: float) -> float:
        now = self.host.now()
        self.cushion = _REST_S + (self.cushion - _REST_S) * math.exp(-dt_ms / _DECAY_MS)
        rate = self._rate(now)
        playout = rate + (self.pending - rate * self.cushion) / _CORRECTION_S
        return max(0.0, playout) * dt_ms / 1000.0

    def overload_units(self) -> int:
        return max(0, self.pending - _CAP)
