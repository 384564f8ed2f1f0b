"""`FrameSlices`: events shown unpaced, a line at a time, in what is left of a frame.

A view that paints each socket batch as it arrives (the demo's "as delivered"
pane) shares the main thread with the paced view. Shown whole in the socket's
callback, one batch of a long answer took 70–110 ms on a slow phone (`python -m
bench --browser --cpu 4`), a long animation frame of its own. So the batches
are shown from animation frames, a line at a time, while the frame has time:
after each line the view asks whether the frame's callbacks so far (the paced
view's, then its own lines) are still under `frame_budget_ms`, and stops for
this frame once they are not; a frame the paced view alone took that long
gets no line at all, up to `max_waits` frames in a row (then one line goes,
however busy the frame: the pane is at most that many frames late).

Why lines, not a budget of characters: what an apply costs is the Markdown
the text completes — a table row, a list item, a code line — far more than its
length. On md_32k at 4× CPU the batches (≈ 200 characters, a few lines each)
took 1.5–31 ms an apply, unrelated to their size, so a cost per character
learnt from earlier applies could not keep a batch's apply off the frame's
tail (the demo's Python per frame p99 14–21 ms, 8.5–9.4 ms with the pane's
applies left out). A line is the unit the renderer works in; measured as it
goes, the frame's budget is kept to within one line's cost. Each line pays an
apply's fixed part again (the live state, the commit), which costs the pane
about half again its total work, for a frame whose worst case is the paced
view's plus one line.

Rules (the scheduler's, for an unpaced view): strict order; text is only cut
right after a line break, which is always a grapheme boundary (UAX #29 GB4),
so no frame shows a broken cluster; a slice is never empty while work is
waiting (a line runs until its line break, across events, or to the end of
what is waiting). Unlike the scheduler's exits, a barrier (message end, run
end) does not take everything waiting at once: a view that fell behind on a
slow device (`--cpu 4`, frames 150 ms apart) took 1.2 s in one frame at a
message's end that way; it catches up a line at a time instead. Pure Python:
no js here (the caller owns the frame and the clock).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from streampace.conversation.event_schema import is_paced_candidate

__all__ = ["FrameSlices"]


class FrameSlices:
    """Events waiting to be shown, handed out a line at a time."""

    def __init__(self, frame_budget_ms: float = 6.0, max_waits: int = 3) -> None:
        self.frame_budget_ms = frame_budget_ms
        self.max_waits = max_waits
        self._pending: deque[dict[str, Any]] = deque()
        self.cuts = 0  # text deltas cut across slices (bench, tests)
        self.waits = 0  # frames that showed no line: the frame was taken (bench, tests)
        self._waited = 0  # frames in a row that showed no line

    def __len__(self) -> int:
        return len(self._pending)

    def push(self, events: list[dict[str, Any]]) -> None:
        self._pending.extend(events)

    def clear(self) -> None:
        self._pending.clear()

    def has_time(self, frame_elapsed_ms: float) -> bool:
        """Whether another line fits the frame whose callbacks have run this long."""
        return frame_elapsed_ms < self.frame_budget_ms

    def waits_for_next_frame(self, frame_elapsed_ms: float) -> bool:
        """Whether this frame shows no line: its earlier callbacks (the paced
        view's) took the budget already, and fewer than `max_waits` frames in a
        row showed none. Both views do their heaviest work on the same frames
        (an answer's first, the one that ends its message)."""
        if self.has_time(frame_elapsed_ms) or self._waited >= self.max_waits:
            self._waited = 0
            return False
        self._waited += 1
        self.waits += 1
        return True

    def take(self) -> list[dict[str, Any]]:
        """The next line: the events before it, its text up to and including its
        line break (cut there when the delta goes on), or all that is waiting
        when no line break is."""
        pending = self._pending
        out: list[dict[str, Any]] = []
        while pending:
            event = pending[0]
            delta = _text_of(event)
            end = delta.find("\n") + 1 if delta else 0
            if end and end < len(delta):
                out.append({**event, "delta": delta[:end]})
                pending[0] = {**event, "delta": delta[end:]}
                self.cuts += 1
                break
            out.append(pending.popleft())
            if end:
                break
        return out

    def take_all(self) -> list[dict[str, Any]]:
        """Everything waiting, in one slice (no frames come: a hidden tab)."""
        out = list(self._pending)
        self._pending.clear()
        return out


def _text_of(event: dict[str, Any]) -> str:
    """The text `event` adds ("" for events without a text delta)."""
    return event["delta"] if is_paced_candidate(event) else ""
