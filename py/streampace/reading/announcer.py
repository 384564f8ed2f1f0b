"""When to say what: the announcements of one view's live region (sans-IO).

Fed after every committed frame with what each item shows now — the spoken
text (`spoken`) of the blocks that became final since, and of the open rest —
it says whole sentences as soon as their end is certain (`sentences`), a
block's rest when the block is final, and whatever is unsaid after a pause of
`pause_ms` without change. What comes due at once is said as one
announcement, and announcements are at least `min_gap_ms` apart (the rest
waits and is joined): never one per token or per frame. A run's start and end
are said once each; the end after every item's rest.

No clock of its own: `clock()` is read, and the caller asks `take()` again at
`deadline()` (a pause or the gap ending).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from streampace.reading.sentences import scan

__all__ = ["Announcer"]

# Where a spoken line already ends as a sentence or clause does (no full stop added).
_ENDINGS = frozenset(".!?…。！？｡．।॥؟۔:;,\"')]}”’»」』）】〉》〕")
_LEADING = ".!?。！？｡． "
PAUSE_MS = 1000.0
MIN_GAP_MS = 400.0
# Unsaid text longer than this without a sentence end (a run-on list of words,
# hostile text) is said up to its last space: what waits, and what is scanned
# per frame, stays bounded.
MAX_UNSAID = 600


@dataclass(slots=True)
class _Cursor:
    """How far one item has been said: `said` is a prefix of `open` (the open text)."""

    open: str = ""
    said: str = ""
    changed_at: float = 0.0
    scanned: int = 0  # `open` holds no sentence end before this that is not said


def _said_upto(text: str, said: str) -> int:
    """Where the unsaid part of `text` starts, `said` having been said of it.

    Usually `said` is a prefix. If the text changed under it (a summary whose
    line count grew: "code block, 2 lines" -> "5 lines"), the changed line
    counts as said and saying resumes at the next line."""
    if text.startswith(said):
        return len(said)
    common = 0
    for a, b in zip(text, said, strict=False):
        if a != b:
            break
        common += 1
    line_end = text.find("\n", common)
    return len(text) if line_end < 0 else line_end + 1


class Announcer:
    """The live-region announcements of one view."""

    def __init__(self, clock: Callable[[], float], *, pause_ms: float = PAUSE_MS,
                 min_gap_ms: float = MIN_GAP_MS) -> None:
        self._clock = clock
        self.pause_ms = pause_ms
        self.min_gap_ms = min_gap_ms
        self._cursors: dict[Hashable, _Cursor] = {}
        self._queue: list[str] = []   # due, waiting for the gap
        self._final: list[str] = []   # the run's end: said after the queue, without waiting
        self._last_said = float("-inf")
        self._running = False  # a run's start was said and its end not yet
        self._ended = False    # the current run's end was said
        self.count = 0  # announcements made

    # -- input -------------------------------------------------------------
    def update(self, key: Hashable, finals: Sequence[str], open_text: str, ended: bool) -> None:
        """Item `key` now shows `finals` (its blocks that became final since the
        last update, in order) then `open_text`; `ended`: nothing more comes."""
        now = self._clock()
        cursor = self._cursors.get(key)
        if cursor is None:
            cursor = self._cursors[key] = _Cursor(changed_at=now)
        said = cursor.said
        pieces: list[str] = []
        for block in finals:
            if said.startswith(block):
                said = said[len(block):].lstrip("\n")  # said while it was open
            else:
                pieces.append(block[_said_upto(block, said):])
                said = ""
        start = _said_upto(open_text, said)
        if ended:
            pieces.append(open_text[start:])
            del self._cursors[key]
        else:
            pieces.append(self._advance(cursor, open_text, start, now))
        self._say(pieces)

    def _advance(self, cursor: _Cursor, text: str, start: int, now: float) -> str:
        """Move `cursor` over the open `text`, said up to `start`; what is due."""
        old = cursor.open
        # Grown at its end (the usual case), judged on a window: a full compare
        # would cost O(text) every frame. A change the window misses only means
        # a sentence end found later, at the block's end.
        grew = len(text) >= len(old) and text[max(0, len(old) - 64):len(old)] == old[-64:]
        if len(text) != len(old) or not grew:
            cursor.changed_at = now
        resume = max(start, cursor.scanned) if grew and start == len(cursor.said) else start
        ends, cursor.scanned = scan(text, resume)
        end = ends[-1] if ends else start
        if end == start and len(text) - start > MAX_UNSAID:
            space = text.rfind(" ", start)
            end = space + 1 if space > start else len(text)
            cursor.scanned = max(cursor.scanned, end)
        if end != len(cursor.said) or start != len(cursor.said):
            cursor.said = text[:end]
        cursor.open = text
        return text[start:end]

    def skip(self, key: Hashable, open_text: str) -> None:
        """Count everything item `key` shows as said (history from a snapshot; a
        reasoning nobody opened): only what comes after it will be said."""
        self._cursors[key] = _Cursor(open=open_text, said=open_text, changed_at=self._clock())

    def forget(self, key: Hashable) -> None:
        self._cursors.pop(key, None)

    def run_started(self, text: str) -> None:
        """Say `text` as a run starts (once: a repeated start while it runs says nothing)."""
        if not self._running:
            self._running = True
            self._ended = False
            self._say([text])

    def run_ended(self, text: str, *, quiet: bool = False) -> None:
        """Every item's unsaid rest, then `text`, at once; once per run. `quiet`:
        the run is over but was never shown running (history): nothing is said."""
        self._running = False
        if self._ended:
            return
        self._ended = True
        if quiet:
            return
        rest = [c.open[_said_upto(c.open, c.said):] for c in self._cursors.values()]
        self._cursors.clear()
        self._say(rest)
        self._final.extend((*self._queue, _line(text)))
        self._queue.clear()

    def clear(self) -> None:
        """Forget every item and everything due (the view was emptied)."""
        self._cursors.clear()
        self._queue.clear()
        self._final.clear()
        self._running = self._ended = False

    # -- output ------------------------------------------------------------
    def take(self) -> list[str]:
        """The announcements to make now, in order (each one region update).

        Due times are compared as `deadline()` computes them (`start + wait`,
        never `now - start >= wait`): in floating point the two can disagree by
        an ulp, and a caller woken at the deadline would find nothing due and
        ask again at once, for ever."""
        now = self._clock()
        for cursor in self._cursors.values():
            if len(cursor.said) < len(cursor.open) and now >= cursor.changed_at + self.pause_ms:
                start = _said_upto(cursor.open, cursor.said)
                cursor.said = cursor.open
                self._say([cursor.open[start:]])
        out: list[str] = []
        if self._final:
            out = [" ".join(self._final)]
            self._final.clear()
        elif self._queue and now >= self._last_said + self.min_gap_ms:
            out = [" ".join(self._queue)]
            self._queue.clear()
        if out:
            self._last_said = now
            self.count += len(out)
        return out

    def deadline(self) -> float | None:
        """When `take()` may have something again without new input (or None)."""
        times = [c.changed_at + self.pause_ms for c in self._cursors.values()
                 if len(c.said) < len(c.open)]
        if self._final:
            times.append(self._clock())
        elif self._queue:
            times.append(self._last_said + self.min_gap_ms)
        return min(times) if times else None

    def _say(self, pieces: Sequence[str]) -> None:
        if not any(pieces):
            return
        lines = [_line(line) for piece in pieces for line in piece.split("\n")]
        text = " ".join(line for line in lines if line)
        if text:
            self._queue.append(text)


def _line(text: str) -> str:
    """One line of spoken text, whitespace folded, ending as a sentence ends (a
    heading, a list item or a summary gets a full stop: a voice pauses there)."""
    # A piece that continues a sentence said in part before (at a pause) does
    # not start with that sentence's full stop.
    line = " ".join(text.split()).lstrip(_LEADING)
    if line and line[-1] not in _ENDINGS:
        line += "."
    return line
