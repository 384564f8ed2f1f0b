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
slices instead. An apply's cost is learnt from the frames' own applies
(`spent`) as a fixed part plus a part per character, so the slices fit the
device: large on a desktop, small on a phone. The budget bounds the part per
character: the fixed part (the live state, the Markdown parser's pass over
the open block, the commit) is paid by every apply, so a cut only adds one
more of it. Learnt as a single cost per character, the fixed part made every
slice look expensive (`python -m bench --browser --cpu 4`, md_32k, demo: an
apply took ~6 ms + 0.03 ms a character, the learnt rate 0.05-0.15 ms a
character cut 185 of 167 batches into slices at the floor, each paying the
fixed part again). Pure Python: no js here (the caller owns the frame and
the clock).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from streampace.conversation.event_schema import PACED_CONTENT_TYPES

__all__ = ["FrameSlices"]

# Below this many characters an apply's time says more about its fixed costs
# than about its cost per character: not learnt from.
_LEARN_FROM_CHARS = 32
# The applies the cost model is fitted to (the latest), and the least spread of
# their sizes (characters, standard deviation) for a fit of both parts: below
# it, the fixed part is kept and only the part per character is learnt.
_WINDOW = 32
_MIN_SPREAD_CHARS = 8.0
_MIN_MS_PER_CHAR = 1e-4


class FrameSlices:
    """Events waiting to be shown, cut into per-frame slices."""

    def __init__(self, budget_ms: float = 8.0, min_chars: int = 128,
                 ms_per_char: float = 0.02, yield_after_ms: float = 8.0) -> None:
        self.budget_ms = budget_ms
        self.yield_after_ms = yield_after_ms
        self.min_chars = min_chars
        self.ms_per_char = ms_per_char  # learnt: apply ms per character...
        self.fixed_ms = 0.0  # ...and per apply, whatever its size
        self._applies: deque[tuple[int, float]] = deque(maxlen=_WINDOW)
        self._pending: deque[dict[str, Any]] = deque()
        self.cuts = 0  # text deltas cut across frames (bench, tests)
        self.waits = 0  # frames whose slice went to the next frame (bench, tests)
        self._waited = False  # the last frame's slice went to this one

    def __len__(self) -> int:
        return len(self._pending)

    def push(self, events: list[dict[str, Any]]) -> None:
        self._pending.extend(events)

    def clear(self) -> None:
        self._pending.clear()

    def chars_per_frame(self) -> int:
        """Characters whose own cost (beyond an apply's fixed part) fills the budget."""
        return max(self.min_chars, int(self.budget_ms / max(self.ms_per_char, _MIN_MS_PER_CHAR)))

    def waits_for_next_frame(self, frame_elapsed_ms: float) -> bool:
        """Whether this frame's slice goes to the next frame: the frame's earlier
        callbacks (the paced view's) took `yield_after_ms` already, and the last
        frame's slice did not wait — a slice is at most one frame late. Both views
        do their heaviest work on the same frames, the first of an answer and the
        one that ends its message (the Markdown's last parse in each view): one
        after the other, on two frames."""
        if self._waited or frame_elapsed_ms < self.yield_after_ms:
            self._waited = False
            return False
        self._waited = True
        self.waits += 1
        return True

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
        """A slice of `chars` characters took `ms` to show: learn the cost model."""
        if chars < _LEARN_FROM_CHARS or ms < 0:
            return
        self._applies.append((chars, ms))
        fit = _fit_line(self._applies)
        if fit is not None:
            self.fixed_ms, self.ms_per_char = fit
        else:
            own = max(ms - self.fixed_ms, 0.0) / chars
            self.ms_per_char = max(0.7 * self.ms_per_char + 0.3 * own, _MIN_MS_PER_CHAR)


def _fit_line(applies: deque[tuple[int, float]]) -> tuple[float, float] | None:
    """(fixed ms, ms per character): least squares over `applies`, or None when
    their sizes are too alike to tell the parts apart or the fit makes no sense
    (a cost that falls with the size)."""
    n = len(applies)
    if n < 4:
        return None
    mean_c = sum(c for c, _ in applies) / n
    mean_t = sum(t for _, t in applies) / n
    var_c = sum((c - mean_c) ** 2 for c, _ in applies) / n
    if var_c < _MIN_SPREAD_CHARS ** 2:
        return None
    slope = sum((c - mean_c) * (t - mean_t) for c, t in applies) / n / var_c
    if slope < _MIN_MS_PER_CHAR:
        return None
    fixed = mean_t - slope * mean_c
    if fixed < 0:
        return 0.0, mean_t / mean_c  # no fixed part seen: all of it per character
    return fixed, slope

def _text_length(event: dict[str, Any]) -> int:
    """Characters of text `event` adds (0 for events without a text delta)."""
    if event.get("type") in PACED_CONTENT_TYPES:
        delta = event.get("delta")
        if isinstance(delta, str):
            return len(delta)
    return 0
