"""typewriter: a fixed 1 grapheme per 16 ms, whatever the model does."""

from __future__ import annotations

from bench.strategies.base import FifoPacer


class Typewriter(FifoPacer):
    name = "typewriter"
    summary = "fixed 62.5 graphemes/s on frames; no barrier flush, no overload exit"

    def budget(self, dt_ms: float) -> float:
        # Elapsed-time based, so 60 and 120 Hz type at the same speed.
        return dt_ms / 16.0
