"""`FrameSlices`: events shown unpaced, handed out per animation frame within a time budget.

A view that paints each socket batch as it arrives (the demo's "as delivered"
pane) does all of a batch's rendering, Markdown included, in the socket's
callback: on a slow phone (`python -m bench --browser --cpu 4`) one batch of a
long answer took 70–110 ms there, a long animation frame on its own, besides
the paced view's frame. Shown from an animation frame instead, with the text
cut into slices each frame can afford, the view's work per frame stays within
`budget_ms` whatever a batch holds.

Rules (the scheduler's, for an unpaced view): strict order; text is only cut
right after a line break, which is always a grapheme boundary (UAX #29 GB4),
so no frame shows a broken cluster; a slice is never empty while work is
waiting (a line longer than the budget goes whole). Unlike the scheduler's
exits, a barrier (message end, run end) does not take everything waiting at
once: a view that fell behind on a slow device (`--cpu 4`, frames 150 ms
apart) took 1.2 s in one frame at a message's end that way; it catches up in
slices instead. The cost per character is learnt from the frames' own
applies (`spent`), so the slices fit the device: large on a desktop, small on
a phone. Pure Python: no js here (the caller owns the frame and the clock).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from streampace.conversation.event_schema import PACED_CONTENT_TYPES

__all__ = ["FrameSlices"]

# Below this many characters an apply's time says more about its fixed costs
# than about its cost per character: not learnt from.
_LEARN_FROM_CHARS = 32


class FrameSlices:
    """Events waiting to be shown, cut into per-frame slices."""

    def __init__(self, budget_ms: float = 8.0, min_chars: int = 128,
                 ms_per_char: float = 0.02) -> None:
        self.budget_ms = budget_ms
        self.min_chars = min_chars
        self.ms_per_char = ms_per_char  # learnt: mean apply ms per character
        self._pending: deque[dict[str, Any]] = deque()
        self.cuts = 0  # text deltas cut across frames (bench, tests)

    def __len__(self) -> int:
        return len(self._pending)

    def push(self, events: list[dict[str, Any]]) -> None:
        self._pending.extend(events)

    def clear(self) -> None:
        self._pending.clear()

    def chars_per_frame(self) -> int:
        return max(self.min_chars, int(self.budget_ms / max(self.ms_per_char, 1e-6)))

    def take(self) -> tuple[list[dict[str, Any]], int]:
        """The next frame's events and how many text characters they carry."""
        pending = self._pending
        room = self.chars_per_frame()
        out: list[dict[str, Any]] = []
        chars = 0
        while pending:
            event = pending[0]
            size = _text_length(event)
            if size <= room - chars:
                out.append(pending.popleft())
                chars += size
                continue
            delta = event["delta"]
            cut = delta.rfind("\n", 0, room - chars) + 1
            if not cut and not out:
                # A first line longer than the whole budget: that line, whole.
                cut = delta.find("\n", room) + 1 or len(delta)
            if cut and cut < len(delta):
                out.append({**event, "delta": delta[:cut]})
                pending[0] = {**event, "delta": delta[cut:]}
                chars += cut
                self.cuts += 1
            elif cut:
                out.append(pending.popleft())
                chars += size
            break
        return out, chars

    def spent(self, ms: float, chars: int) -> None:
        """A slice of `chars` characters took `ms` to show: learn the cost per character."""
        if chars >= _LEARN_FROM_CHARS and ms >= 0:
            self.ms_per_char = 0.7 * self.ms_per_char + 0.3 * (ms / chars)


def _text_length(event: dict[str, Any]) -> int:
    """Characters of text `event` adds (0 for events without a text delta)."""
    if event.get("type") in PACED_CONTENT_TYPES:
        delta = event.get("delta")
        if isinstance(delta, str):
            return len(delta)
    return 0
