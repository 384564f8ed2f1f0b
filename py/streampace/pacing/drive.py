"""The scheduler's drive: what it has armed on the host, as one named machine.

The scheduler runs on three host callbacks: an animation frame, a fallback
timeout (so a hidden tab whose frames stopped keeps draining) and a hold timer
(when the head of the queue waits for a held cluster, nothing else is armed).
Which of them may be armed, and what a flush may do, depends on where the
scheduler is; every move is a row of :data:`DRIVE_TABLE`:

* ``IDLE`` — nothing queued, nothing armed.
* ``ARMED`` — work queued: a frame and the fallback timeout are armed; the first
  of them to fire cancels the other and drains.
* ``HELD`` — the head waits on a held cluster: only the hold timer is armed.
* ``DRAINING`` / ``FLUSHING`` — a drain or ``flush_now`` is running (its apply
  may call back into the scheduler): nothing is armed, and a flush asked for
  meanwhile is deferred until it returns.
* ``SETTLING`` — just after a drain or flush: the queue's condition picks the
  next state.

Timers go through :class:`streampace.clock.Timeout` and frames through
:class:`FrameRequest`, both of which ignore a callback the host fires after it
was cancelled, so a drain runs only from the one frame or timeout the machine
armed: at most one commit per frame, whatever the host.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from streampace.clock import FrameHost, Timeout
from streampace.lifecycle import Machine, Rule, Table

__all__ = ["DRIVE_TABLE", "Drive", "DriveEvent", "DriveState", "FrameRequest"]


class DriveState(Enum):
    IDLE = "idle"
    ARMED = "armed"
    HELD = "held"
    DRAINING = "draining"
    FLUSHING = "flushing"
    SETTLING = "settling"


class DriveEvent(Enum):
    WORK = "work"  # the queue has something to deliver
    BLOCKED = "blocked"  # the queue's head waits on a held cluster
    EMPTY = "empty"  # nothing queued
    FRAME = "frame"
    TIMEOUT = "timeout"
    FLUSH = "flush"
    DONE = "done"  # a drain or flush returned


S, E = DriveState, DriveEvent
DRIVE_TABLE: Table[DriveState, DriveEvent] = {
    (S.IDLE, E.WORK): Rule(S.ARMED, "queue became non-empty: arm a frame and the fallback"),
    (S.IDLE, E.BLOCKED): Rule(S.HELD, "only a held cluster queued: arm its hold timer"),
    (S.IDLE, E.EMPTY): Rule(S.IDLE),
    (S.IDLE, E.FLUSH): Rule(S.FLUSHING),
    (S.ARMED, E.WORK): Rule(S.ARMED, "already armed"),
    (S.ARMED, E.BLOCKED): Rule(S.ARMED, "the armed drain finds the head held"),
    (S.ARMED, E.EMPTY): Rule(S.IDLE, "cleared or flushed: cancel frame and fallback"),
    (S.ARMED, E.FRAME): Rule(S.DRAINING, "cancel the fallback"),
    (S.ARMED, E.TIMEOUT): Rule(S.DRAINING, "no frame came (hidden tab): cancel the frame"),
    (S.ARMED, E.FLUSH): Rule(S.FLUSHING, "cancel frame and fallback"),
    (S.HELD, E.WORK): Rule(S.ARMED, "the hold ended: pace again from now"),
    (S.HELD, E.BLOCKED): Rule(S.HELD, "re-arm the hold timer for the head's hold"),
    (S.HELD, E.EMPTY): Rule(S.IDLE, "cancel the hold timer"),
    (S.HELD, E.FLUSH): Rule(S.FLUSHING, "cancel the hold timer"),
    (S.DRAINING, E.WORK): Rule(S.DRAINING, "settled when the drain returns"),
    (S.DRAINING, E.BLOCKED): Rule(S.DRAINING, "settled when the drain returns"),
    (S.DRAINING, E.EMPTY): Rule(S.DRAINING, "settled when the drain returns"),
    (S.DRAINING, E.FLUSH): Rule(S.DRAINING, "deferred until the drain's apply returns"),
    (S.DRAINING, E.DONE): Rule(S.SETTLING),
    (S.FLUSHING, E.WORK): Rule(S.FLUSHING, "settled when the flush returns"),
    (S.FLUSHING, E.BLOCKED): Rule(S.FLUSHING, "settled when the flush returns"),
    (S.FLUSHING, E.EMPTY): Rule(S.FLUSHING, "settled when the flush returns"),
    (S.FLUSHING, E.FLUSH): Rule(S.FLUSHING, "deferred until the flush's apply returns"),
    (S.FLUSHING, E.DONE): Rule(S.SETTLING),
    (S.SETTLING, E.WORK): Rule(S.ARMED, "arm the next frame"),
    (S.SETTLING, E.BLOCKED): Rule(S.HELD, "the head waits on a held cluster"),
    (S.SETTLING, E.EMPTY): Rule(S.IDLE),
}
BUSY = frozenset({S.DRAINING, S.FLUSHING})


class FrameRequest:
    """One re-armable animation-frame request that ignores stale callbacks
    (the frame counterpart of :class:`streampace.clock.Timeout`)."""

    __slots__ = ("_host", "_callback", "_handle", "_gen", "armed")

    def __init__(self, host: FrameHost, callback: Callable[[], None]) -> None:
        self._host = host
        self._callback = callback
        self._handle: Any = None
        self._gen = 0
        self.armed = False

    def arm(self) -> None:
        self.cancel()
        self._gen += 1
        gen = self._gen
        self.armed = True
        self._handle = self._host.request_frame(lambda: self._fire(gen))

    def cancel(self) -> None:
        if self.armed:
            self.armed = False
            self._gen += 1
            handle, self._handle = self._handle, None
            self._host.cancel_frame(handle)

    def _fire(self, gen: int) -> None:
        if gen != self._gen:
            return
        self.armed = False
        self._handle = None
        self._callback()


class Drive:
    """Moves :data:`DRIVE_TABLE`'s machine and arms what each state needs.

    The scheduler gives it ``drain(source)`` (run on a frame or the fallback
    timeout), ``condition() -> (event, hold_until)`` (WORK, BLOCKED with the
    head's hold time, or EMPTY), ``expire_holds()`` (run when the hold timer
    fires) and ``settled(previous, state)`` (after every settle: the scheduler's
    pacing baseline and deferred flushes).
    """

    def __init__(self, host: FrameHost, fallback_ms: float,
                 drain: Callable[[str], None],
                 condition: Callable[[], tuple[DriveEvent, float | None]],
                 expire_holds: Callable[[], None],
                 settled: Callable[[DriveState, DriveState], None]) -> None:
        self._host = host
        self.fallback_ms = fallback_ms
        self._drain = drain
        self._condition = condition
        self._expire_holds = expire_holds
        self._settled = settled
        self.machine: Machine[DriveState, DriveEvent] = Machine(
            "pacing drive", DRIVE_TABLE, DriveState.IDLE)
        self._frame = FrameRequest(host, lambda: self._fired(E.FRAME, "frame"))
        self._fallback = Timeout(host, lambda: self._fired(E.TIMEOUT, "timeout"))
        self._hold = Timeout(host, self._on_hold)
        self._hold_at: float | None = None

    @property
    def state(self) -> DriveState:
        return self.machine.state

    @property
    def busy(self) -> bool:
        return self.machine.state in BUSY

    def settle(self) -> DriveState:
        """Step on the queue's condition and arm what the new state needs."""
        before = self.machine.state
        event, hold_until = self._condition()
        after = self.machine.step(event)
        if after is S.ARMED and before is not S.ARMED:
            self._hold.cancel()
            self._frame.arm()
            self._fallback.arm(self.fallback_ms)
        elif after is S.HELD:
            assert hold_until is not None
            if not self._hold.armed or self._hold_at != hold_until:
                self._hold_at = hold_until
                self._hold.arm(max(0.0, hold_until - self._host.now()))
        elif after is S.IDLE:
            self._cancel_all()
        self._settled(before, after)
        return after

    def begin_flush(self) -> bool:
        """Enter FLUSHING; False if the table defers the flush (one is running)."""
        before = self.machine.state
        if self.machine.step(E.FLUSH) is before:
            return False
        self._cancel_all()
        return True

    def done(self) -> None:
        """A drain or flush returned: settle on the queue's condition."""
        self.machine.step(E.DONE)
        self.settle()

    def _fired(self, event: DriveEvent, source: str) -> None:
        self.machine.step(event)
        self._frame.cancel()
        self._fallback.cancel()
        try:
            self._drain(source)
        finally:
            self.done()

    def _on_hold(self) -> None:
        self._hold_at = None
        self._expire_holds()
        self.settle()

    def _cancel_all(self) -> None:
        self._frame.cancel()
        self._fallback.cancel()
        self._hold.cancel()
        self._hold_at = None
