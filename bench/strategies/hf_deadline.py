"""hf_deadline: HuggingFace chat-ui's word timer with a 400 ms deadline (anchors §2).

Timers, not frames.  Words (text up to and including trailing whitespace) are
shown one per timer tick; the spacing spreads the pending words over the time
left before the newest character's deadline, never slower than 300 chars/s,
clamped to 5–80 ms.  Anything 400 ms past its arrival is shown at once
("overdue emitted": its overload path, tagged as such).  A trailing word with
no whitespace yet waits for more text or its deadline.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import regex

from bench.strategies.base import RoleTracker, Strategy

_DEADLINE_MS = 400.0
_FLOOR_CPS = 300.0
_MIN_MS, _MAX_MS = 5.0, 80.0
_WORD = regex.compile(r"\s*\S+\s+")
_AVG_WORD = 6.0


class _Item:
    __slots__ = ("event", "text", "pos", "t")

    def __init__(self, event: dict[str, Any], text: str | None, t: float) -> None:
        self.event = event
        self.text = text
        self.pos = 0
        self.t = t


class HFDeadline(Strategy):
    name = "hf_deadline"
    summary = "timer per word, 5–80 ms spacing, 300 cps floor, every char ≤ 400 ms late"

    def __init__(self, host, commit) -> None:  # type: ignore[no-untyped-def]
        super().__init__(host, commit)
        self.queue: deque[_Item] = deque()
        self.pending_chars = 0
        self._timer: Any = None
        self._waiting = False  # timer armed only for a trailing word's deadline
        self._roles = RoleTracker()

    def receive(self, events: list[dict[str, Any]]) -> None:
        now = self.host.now()
        for ev in events:
            paced = self._roles.paced(ev)
            text = ev["delta"] if paced else None
            self.queue.append(_Item(ev, text, now))
            if text:
                self.pending_chars += len(text)
        if self._timer is None or self._waiting:
            if self._timer is not None:
                self.host.cancel_timeout(self._timer)
            self._timer = None
            self._tick()

    def _piece(self, item: _Item, end: int) -> dict[str, Any]:
        assert item.text is not None
        start = item.pos
        item.pos = end
        self.pending_chars -= end - start
        if start == 0 and end == len(item.text):
            return item.event
        piece = dict(item.event)
        piece["delta"] = item.text[start:end]
        if start > 0:
            piece.pop("role", None)
            piece.pop("name", None)
        return piece

    def _tick(self) -> None:
        self._timer = None
        self._waiting = False
        now = self.host.now()
        q = self.queue
        out: list[dict[str, Any]] = []
        reason = "timer"
        word_len = 0
        while q:
            head = q[0]
            if head.text is None:
                out.append(q.popleft().event)
                continue
            if head.t + _DEADLINE_MS <= now:  # overdue: show all of it now
                out.append(self._piece(head, len(head.text)))
                q.popleft()
                reason = "overload"
                continue
            if word_len:
                break
            m = _WORD.match(head.text, head.pos)
            if m is not None:
                end = m.end()
            elif len(q) > 1:
                end = len(head.text)  # more data behind it: the word cannot grow here
            else:
                break  # trailing word: wait for more text or the deadline
            word_len = end - head.pos
            out.append(self._piece(head, end))
            if head.pos == len(head.text):
                q.popleft()
        if out:
            self.commit(out, reason)
        if not q:
            return
        head = q[0]
        assert head.text is not None
        m = _WORD.match(head.text, head.pos)
        if m is None and len(q) == 1:
            self._waiting = True
            self._timer = self.host.request_timeout(self._tick, head.t + _DEADLINE_MS - now)
            return
        nxt = (m.end() if m else len(head.text)) - head.pos
        last_deadline = q[-1].t + _DEADLINE_MS
        words = max(1.0, self.pending_chars / _AVG_WORD)
        spacing = min((last_deadline - now) / words, nxt * 1000.0 / _FLOOR_CPS)
        spacing = min(_MAX_MS, max(_MIN_MS, spacing))
        self._timer = self.host.request_timeout(self._tick, spacing)
