"""smoothstream_word: Vercel AI SDK smoothStream, word chunking (anchors §2).

Each text delta is appended to a buffer; every complete word (`\\S+\\s+`) is
emitted followed by a fixed 10 ms wait, and the next input is only taken once
the buffer has no complete word left — so lag grows without bound when the
model outpaces 100 words/s.  A non-text event (or text of another message)
flushes the partial word first.  The real thing runs on the server before the
transport; here it runs on the browser's arrivals, which is the charitable
placement (server-side, the delivery buffer would re-batch its output).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import regex

from bench.strategies.base import RoleTracker, Strategy

_CHUNK = regex.compile(r"\S+\s+")
_DELAY_MS = 10.0


class SmoothStreamWord(Strategy):
    name = "smoothstream_word"
    summary = "10 ms per word chunk (/\\S+\\s+/), flush on non-text, unbounded lag"

    def __init__(self, host, commit) -> None:  # type: ignore[no-untyped-def]
        super().__init__(host, commit)
        self.inbox: deque[dict[str, Any]] = deque()
        self.buffer = ""
        self.template: dict[str, Any] | None = None  # the text event the buffer belongs to
        self._first_piece = True
        self._timer: Any = None
        self._roles = RoleTracker()

    def receive(self, events: list[dict[str, Any]]) -> None:
        self.inbox.extend(events)
        if self._timer is None:
            self._pump()

    def _piece(self, text: str) -> dict[str, Any]:
        assert self.template is not None
        piece = dict(self.template)
        piece["delta"] = text
        if not self._first_piece:
            piece.pop("role", None)
            piece.pop("name", None)
        self._first_piece = False
        return piece

    def _flush(self, out: list[dict[str, Any]]) -> bool:
        if self.buffer:
            out.append(self._piece(self.buffer))
            self.buffer = ""
            return True
        return False

    def _pump(self) -> None:
        self._timer = None
        out: list[dict[str, Any]] = []
        reason = "timer"
        while True:
            m = _CHUNK.search(self.buffer)
            if m is not None:
                out.append(self._piece(self.buffer[: m.end()]))
                self.buffer = self.buffer[m.end() :]
                self._timer = self.host.request_timeout(self._pump, _DELAY_MS)
                break
            if not self.inbox:
                break
            ev = self.inbox.popleft()
            if self._roles.paced(ev):
                same = self.template is not None and (
                    self.template.get("messageId") == ev.get("messageId")
                    and self.template.get("type") == ev.get("type")
                )
                if not same:
                    if self._flush(out):
                        reason = "barrier"
                    self.template = ev
                    self._first_piece = True
                self.buffer += ev["delta"]
            else:
                if self._flush(out):
                    reason = "barrier"
                out.append(ev)
        if out:
            self.commit(out, reason)
