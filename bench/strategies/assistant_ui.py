"""assistant_ui: useSmooth as described in anchors §2.

rAF; rate = max(200 chars/s, backlog / 250 ms); slices UTF-16 units (not
grapheme-safe); keeps draining after the stream ends; no per-frame cap.
Modelled on code points with a UTF-16 budget (an astral character costs 2):
Python cannot hold half a surrogate pair, so only the surrogate split itself
is not reproduced — its ZWJ / flag / skin-tone / combining-mark splits are.
"""

from __future__ import annotations

from bench.strategies.base import FifoPacer


class AssistantUI(FifoPacer):
    name = "assistant_ui"
    summary = "rAF, max(200 cps, backlog/250 ms), UTF-16 slicing, drains after end"
    unit = "codepoint"
    unit_cost_utf16 = True

    def budget(self, dt_ms: float) -> float:
        return max(200.0, self._pending_utf16() / 0.25) * dt_ms / 1000.0

    def _pending_utf16(self) -> int:
        return self.pending  # code points; astral surplus is negligible for the rate
