"""ManualHost: the one virtual-clock host for tests and benchmarks.

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
- ``fire_next_timeout()`` -- run only the earliest due timeout (a caller that
  interleaves its own events, like the bench's VirtualHost).
- ``run_until(t)`` / ``tick(ms)`` -- move to ``t`` / now+ms, firing timeouts in
  deadline order with the clock set to each deadline.
- ``run_all()`` -- fire timeouts until none is armed.
- ``frame(ms)`` -- ``tick(ms)`` then ``run_frame()``; returns frames run.
- ``ManualHost(ignore_cancel=True)`` -- cancelled timeouts fire anyway.
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
    """A FrameHost (see :mod:`streampace.clock`) on a virtual clock."""

    def __init__(self, start_ms: float = 0.0, *, ignore_cancel: bool = False) -> None:
        self._now = float(start_ms)
        # A host whose cancel_timeout does nothing (a timer already queued still
        # fires): what streampace.clock.Timeout must tolerate.
        self.ignore_cancel = ignore_cancel
        self._ids = itertools.count(1)
        self._frames: dict[int, Callable[[], None]] = {}
        self._running: dict[int, Callable[[], None]] = {}  # this frame's, still to run
        self._timeouts: list[tuple[float, int, Callable[[], None]]] = []
        self._live: set[int] = set()  # armed timeouts; a heap entry not in it is cancelled
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
        # As with cancelAnimationFrame: a callback of the frame being run that an
        # earlier callback of the same frame cancels does not run.
        self._running.pop(handle, None)

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> Any:
        handle = next(self._ids)
        heapq.heappush(self._timeouts, (self._now + max(0.0, float(delay_ms)), handle, callback))
        self._live.add(handle)
        return handle

    def cancel_timeout(self, handle: Any) -> None:
        if not self.ignore_cancel:
            self._live.discard(handle)

    # driving
    @property
    def pending_frames(self) -> int:
        return len(self._frames)

    @property
    def pending_timeouts(self) -> int:
        return len(self._live)

    def next_timeout_at(self) -> float | None:
        self._drop_cancelled_front()
        return self._timeouts[0][0] if self._timeouts else None

    def advance(self, ms: float) -> None:
        if ms < 0:
            raise ValueError("the virtual clock cannot go backwards")
        self._now += ms

    def fire_next_timeout(self) -> bool:
        """Run the earliest timeout due at the current time; False if none is due."""
        self._drop_cancelled_front()
        if not self._timeouts or self._timeouts[0][0] > self._now:
            return False
        _, handle, callback = heapq.heappop(self._timeouts)
        self._live.discard(handle)
        self.timeouts_run += 1
        self._run(callback)
        return True

    def fire_timeouts(self) -> int:
        fired = 0
        while self.fire_next_timeout():
            fired += 1
        return fired

    def run_frame(self) -> int:
        self._running, self._frames = self._frames, {}
        ran = 0
        while self._running:
            handle = next(iter(self._running))
            callback = self._running.pop(handle)
            ran += 1
            self.frames_run += 1
            self._run(callback)
        return ran

    def run_until(self, t_ms: float) -> int:
        """Fire the timeouts due by ``t_ms`` in deadline order, the clock set to each
        deadline, then leave the clock at ``t_ms`` (or where it is, if already later)."""
        fired = 0
        while True:
            at = self.next_timeout_at()
            if at is None or at > t_ms:
                break
            self._now = max(self._now, at)
            fired += self.fire_timeouts()
        self._now = max(self._now, t_ms)
        return fired

    def run_all(self) -> int:
        """Fire every timeout, including ones they arm, until none is left."""
        fired = 0
        while (at := self.next_timeout_at()) is not None:
            fired += self.run_until(at)
        return fired

    def tick(self, ms: float) -> int:
        if ms < 0:
            raise ValueError("the virtual clock cannot go backwards")
        return self.run_until(self._now + ms)

    def frame(self, ms: float = 1000 / 60) -> int:
        self.tick(ms)
        return self.run_frame()

    def _run(self, callback: Callable[[], None]) -> None:
        """Run one timeout or frame callback (a subclass may time or wrap it)."""
        callback()

    def _drop_cancelled_front(self) -> None:
        t = self._timeouts
        while t and t[0][1] not in self._live:
            heapq.heappop(t)
