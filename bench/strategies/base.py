"""The one interface every strategy implements, and a shared FIFO pacing queue.

A strategy sits where the browser's socket hands over decoded event batches
and decides when to commit which events to the screen.  It gets the same
FrameHost the core scheduler uses (virtual clock in the bench) and a
`commit(events, reason)` sink; `reason` tags why a commit happened so the
metrics can leave barrier and overload flushes out of the jump figures.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar

import regex
from streampace.clock import FrameHost
from streampace.conversation.events import BARRIER_TYPES, is_paced_candidate

Commit = Callable[[list[dict[str, Any]], str], None]

_GRAPHEME = regex.compile(r"\X")


Host = FrameHost  # the core's clock protocol (streampace.clock)


class Strategy:
    """Base class: subclasses set `name`/`summary` and implement `receive`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def __init__(self, host: Host, commit: Commit) -> None:
        self.host = host
        self.commit = commit

    def receive(self, events: list[dict[str, Any]]) -> None:
        raise NotImplementedError


def split_graphemes(text: str) -> list[str]:
    return _GRAPHEME.findall(text)


class RoleTracker:
    """Learns message roles the way the seed does: user echoes are never paced."""

    def __init__(self) -> None:
        self._roles: dict[str, str] = {}
        self._last_chunk: str | None = None

    def paced(self, ev: dict[str, Any]) -> bool:
        et = ev.get("type")
        mid: str = ev.get("messageId") or ""
        if et == "TEXT_MESSAGE_START":
            self._roles[mid] = ev.get("role") or "assistant"
            return False
        if et == "TEXT_MESSAGE_CHUNK":
            mid = mid or self._last_chunk or ""
            self._last_chunk = mid
            if ev.get("role"):
                self._roles[mid] = ev["role"]
        result = is_paced_candidate(ev) and self._roles.get(mid, "assistant") != "user"
        if et == "TEXT_MESSAGE_END":
            self._roles.pop(mid, None)
        return result


class _Entry:
    __slots__ = ("event", "units", "pos", "t")

    def __init__(self, event: dict[str, Any], units: list[str] | None, t: float) -> None:
        self.event = event
        self.units = units  # None: not paced, delivered free when at the head
        self.pos = 0
        self.t = t


class FifoPacer(Strategy):
    """A strict-FIFO queue revealing paced text by a per-frame unit budget.

    Subclasses choose the unit (graphemes segmented per event, or code points),
    the budget law, whether barriers flush, and an overload rule.  Unpaced
    events ride along free once everything ahead of them is shown, so nothing
    overtakes text — the same ordering contract as the seed.
    """

    unit: ClassVar[str] = "grapheme"  # or "codepoint"
    unit_cost_utf16: ClassVar[bool] = False  # budget counts UTF-16 units (astral = 2)
    flush_on_barrier: ClassVar[bool] = False
    max_dt_ms: ClassVar[float | None] = None

    def __init__(self, host: Host, commit: Commit) -> None:
        super().__init__(host, commit)
        self.queue: deque[_Entry] = deque()
        self.pending = 0  # paced units queued
        self.carry = 0.0
        self.baseline: float | None = None
        self._frame: Any = None
        self._roles = RoleTracker()
        self._barriers = 0

    # hooks --------------------------------------------------------------
    def budget(self, dt_ms: float) -> float:
        raise NotImplementedError

    def overload_units(self) -> int:
        """Units that must be shown at once this frame (0 = none)."""
        return 0

    def on_arrival(self, now: float, units: int) -> None:
        pass

    # mechanics ----------------------------------------------------------
    def _split(self, text: str) -> list[str]:
        return split_graphemes(text) if self.unit == "grapheme" else list(text)

    def receive(self, events: list[dict[str, Any]]) -> None:
        now = self.host.now()
        added = 0
        for ev in events:
            if self._roles.paced(ev):
                units = self._split(ev["delta"])
                added += len(units)
                self.queue.append(_Entry(ev, units, now))
            else:
                if ev.get("type") in BARRIER_TYPES:
                    self._barriers += 1
                self.queue.append(_Entry(ev, None, now))
        if self.baseline is None:
            self.baseline = now  # idle → active: no burst from the idle gap
        self.pending += added
        self.on_arrival(now, added)
        self._arm()

    def _arm(self) -> None:
        if self._frame is None and self.queue:
            self._frame = self.host.request_frame(self._on_frame)

    def _on_frame(self) -> None:
        self._frame = None
        now = self.host.now()
        dt = now - (self.baseline if self.baseline is not None else now)
        if self.max_dt_ms is not None:
            dt = min(dt, self.max_dt_ms)
        self.baseline = now
        out: list[dict[str, Any]] = []
        reason = "paced"
        if self.flush_on_barrier and self._barriers:
            self._deliver_through_last_barrier(out)
            reason = "barrier"
        forced = self.overload_units()
        b = self.carry + self.budget(dt)
        emit = math.floor(b)
        self.carry = b - emit
        if forced > emit:
            emit = forced
            self.carry = 0.0
            reason = "overload"
        left = self._deliver(emit, out)
        if left < 0:  # an astral code point overspent a UTF-16 budget: repay next frame
            self.carry += left
        if out:
            self.commit(out, reason)
        if not self.queue:
            self.baseline = None
            self.carry = 0.0
        self._arm()

    def _cost(self, unit: str) -> int:
        return 2 if self.unit_cost_utf16 and len(unit) == 1 and ord(unit) > 0xFFFF else 1

    def _deliver(self, emit: int, out: list[dict[str, Any]]) -> int:
        q = self.queue
        while q:
            head = q[0]
            if head.units is None:
                q.popleft()
                if head.event.get("type") in BARRIER_TYPES:
                    self._barriers -= 1
                out.append(head.event)
                continue
            if emit <= 0:
                break
            units = head.units
            start = head.pos
            if self.unit_cost_utf16:
                take = 0
                while start + take < len(units) and emit > 0:
                    emit -= self._cost(units[start + take])
                    take += 1
            else:
                take = min(emit, len(units) - start)
                emit -= take
            self._emit_units(head, take, out)
            if head.pos < len(units):
                break
        return emit

    def _emit_units(self, head: _Entry, take: int, out: list[dict[str, Any]]) -> None:
        units = head.units
        assert units is not None
        start = head.pos
        head.pos += take
        self.pending -= take
        if start == 0 and head.pos == len(units):
            out.append(head.event)
        else:
            piece = dict(head.event)
            piece["delta"] = "".join(units[start : head.pos])
            if start > 0:  # a remainder must not reset the message (seed rule)
                piece.pop("role", None)
                piece.pop("name", None)
            out.append(piece)
        if head.pos == len(units):
            self.queue.popleft()

    def _deliver_through_last_barrier(self, out: list[dict[str, Any]]) -> None:
        q = self.queue
        while self._barriers:
            head = q[0]
            if head.units is None:
                q.popleft()
                if head.event.get("type") in BARRIER_TYPES:
                    self._barriers -= 1
                out.append(head.event)
            else:
                self._emit_units(head, len(head.units) - head.pos, out)
