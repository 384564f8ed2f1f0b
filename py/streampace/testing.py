"""ManualHost: a FrameHost on a virtual clock, for tests and benchmarks.

Nothing fires on its own.  The clock only moves and callbacks only run when the
caller says so::

    host = ManualHost()               # clock at 0.0 ms
    sched = PacingScheduler(host, apply)
    sched.enqueue("s", events)
    host.frame(16)                    # advance 16 ms (firing due timeouts on the
                                      # way, each at its own deadline), then run
                                      # one animation frame
    host.tick(50)                     # advance 50 ms, firing due timeouts only
                                      # (= a hidden tab: no frames)

Primitives:

- ``now()`` -- current virtual time in ms.
- ``advance(ms)`` -- move the clock; fires nothing.
- ``fire_timeouts()`` -- run every timeout due at the current time (incl. ones
  that callbacks schedule with delay 0); returns how many ran.
- ``run_frame()`` -- run the animation-frame callbacks requested so far, once,
  at the current time (callbacks requested meanwhile wait for the next
  frame, as with requestAnimationFrame); returns how many ran.
- ``tick(ms)`` -- advance to now+ms, firing timeouts in deadline order with the
  clock set to each deadline.
- ``frame(ms)`` -- ``tick(ms)`` then ``run_frame()``; returns frames run.
- ``pending_frames`` / ``pending_timeouts`` -- counts of armed callbacks;
  ``next_timeout_at()`` -- earliest deadline or None.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

__all__ = ["ManualHost"]


class ManualHost:
    def __init__(self, start_ms: float = 0.0) -> None:
        self._now = float(start_ms)
        self._ids = itertools.count(1)
        self._frames: dict[int, Callable[[], None]] = {}
        self._timeouts: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self.frames_run = 0
        self.timeouts_run = 0

    # FrameHost protocol
    def now(self) -> float:
        return self._now

    def request_frame(self, callback: Callable[[], None]) -> Any:
        handle = next(self._ids)
        self._frames[handle] = callback
        return handle

    def cancel_frame(self, handle: Any) -> None:
        self._frames.pop(handle, None)

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> Any:
        handle = next(self._ids)
        heapq.heappush(self._timeouts, (self._now + max(0.0, float(delay_ms)), handle, callback))
        return handle

    def cancel_timeout(self, handle: Any) -> None:
        if any(h == handle for _, h, _ in self._timeouts):
            self._cancelled.add(handle)

    # driving
    @property
    def pending_frames(self) -> int:
        return len(self._frames)

    @property
    def pending_timeouts(self) -> int:
        return sum(1 for _, h, _ in self._timeouts if h not in self._cancelled)

    def next_timeout_at(self) -> float | None:
        self._drop_cancelled_front()
        return self._timeouts[0][0] if self._timeouts else None

    def advance(self, ms: float) -> None:
        if ms < 0:
            raise ValueError("the virtual clock cannot go backwards")
        self._now += ms

    def fire_timeouts(self) -> int:
        fired = 0
        while True:
            self._drop_cancelled_front()
            if not self._timeouts or self._timeouts[0][0] > self._now:
                return fired
            _, _, callback = heapq.heappop(self._timeouts)
            fired += 1
            self.timeouts_run += 1
            callback()

    def run_frame(self) -> int:
        callbacks = list(self._frames.values())
        self._frames.clear()
        for callback in callbacks:
            self.frames_run += 1
            callback()
        return len(callbacks)

    def tick(self, ms: float) -> int:
        if ms < 0:
            raise ValueError("the virtual clock cannot go backwards")
        target = self._now + ms
        fired = 0
        while True:
            at = self.next_timeout_at()
            if at is None or at > target:
                break
            self._now = max(self._now, at)
            fired += self.fire_timeouts()
        self._now = target
        return fired

    def frame(self, ms: float = 1000 / 60) -> int:
        self.tick(ms)
        return self.run_frame()

    def _drop_cancelled_front(self) -> None:
        t = self._timeouts
        while t and t[0][1] in self._cancelled:
            self._cancelled.discard(heapq.heappop(t)[1])
