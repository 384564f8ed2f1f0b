"""The scheduler's drive: what it has armed on the host, as one named machine.

The scheduler runs on three host callbacks: an animation frame, a fallback
timeout (so a hidden tab whose frames stopped keeps draining) and a hold timer
(when the head of the queue waits for a held cluster, nothing else is armed).
Which of them may be armed, and what a flush may do, depends on where the
scheduler is; every move is a row of :data:`DRIVE_TABLE`:

* ``IDLE`` — nothing queued, nothing armed.
* ``ARMED`` — work queued: a frame and the fallback timeout are armed; the first
  of them to fire cancels the other and drains — except that once the host has
  shown it delivers frames, the fallback is armed for :data:`FRAMES_STOPPED_MS`
  (a fallback that still fires before a frame only re-arms itself until the
  frame has been awaited that long). A host
  whose frames come late (WebKitGTK: 40–300 ms apart while the page's text
  grows) would otherwise drain from timeouts between frames, several drains
  per painted frame, and show the text in a few large steps; so frames stay
  the only clock while they come, and timeouts drain only once frames stopped
  (a hidden tab).
* ``HELD`` — the head waits on a held cluster: only the hold timer is armed.
* ``DRAINING`` / ``FLUSHING`` — a drain or ``flush_now`` is running (its apply
  may call back into the scheduler): nothing is armed, and a flush asked for
  meanwhile is deferred until it returns.
* ``SETTLING`` — just after a drain or flush: the queue's condition picks the
  next state.

Timers go through :class:`streampace.clock.Timeout` and frames through
:class:`streampace.clock.FrameRequest`, both of which ignore a callback the host fires after it
was cancelled, so a drain runs only from the one frame or timeout the machine
armed: at most one commit per frame, whatever the host.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from streampace.clock import FrameHost, FrameRequest, Timeout
from streampace.lifecycle import Machine, table

__all__ = ["DRIVE_TABLE", "FRAMES_STOPPED_MS", "Drive", "DriveEvent", "DriveState",
           "FrameRequest"]

# How long a requested frame may be awaited, on a host that has delivered frames,
# before frames count as stopped and the fallback timeout drains.  Far above a
# slow frame (WebKitGTK under load: ~300 ms); hidden tabs, the case the fallback
# is for, throttle timers to about a second anyway.
FRAMES_STOPPED_MS = 1000.0


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
    LATE = "late"  # the fallback fired first on a host whose frames come: wait for the frame
    FLUSH = "flush"
    DONE = "done"  # a drain or flush returned


DRIVE_TABLE = table(DriveState, DriveEvent, """
IDLE      WORK     ARMED     the queue became non-empty: arm a frame and the fallback timeout
IDLE      BLOCKED  HELD      only a held cluster is queued: arm its hold timer, no frames
IDLE      EMPTY    IDLE      nothing queued, nothing armed
IDLE      FLUSH    FLUSHING  a flush runs its applies now
ARMED     WORK     ARMED     already armed: the frame or the fallback drains it
ARMED     BLOCKED  ARMED     the armed drain finds the head held and settles
ARMED     EMPTY    IDLE      cleared: cancel the frame and the fallback
ARMED     FRAME    DRAINING  a frame came first: cancel the fallback
ARMED     TIMEOUT  DRAINING  no frame came (a hidden tab): cancel the frame
ARMED     LATE     ARMED     frames come, only late: keep the frame, re-arm the fallback
ARMED     FLUSH    FLUSHING  cancel the frame and the fallback; settled when the flush returns
HELD      WORK     ARMED     the hold ended (next delta, barrier, expiry): pace again from now
HELD      BLOCKED  HELD      re-arm the hold timer for the head's hold
HELD      EMPTY    IDLE      cleared: cancel the hold timer
HELD      FLUSH    FLUSHING  cancel the hold timer; settled when the flush returns
DRAINING  WORK     DRAINING  an apply enqueued: settled when the drain returns
DRAINING  BLOCKED  DRAINING  settled when the drain returns
DRAINING  EMPTY    DRAINING  an apply cleared: settled when the drain returns
DRAINING  FLUSH    DRAINING  an apply asked for a flush: deferred until it returns
DRAINING  DONE     SETTLING  the drain returned (or raised)
FLUSHING  WORK     FLUSHING  an apply enqueued: settled when the flush returns
FLUSHING  BLOCKED  FLUSHING  settled when the flush returns
FLUSHING  EMPTY    FLUSHING  an apply cleared: settled when the flush returns
FLUSHING  FLUSH    FLUSHING  an apply asked for another flush: deferred until it returns
FLUSHING  DONE     SETTLING  the flush returned (or raised)
SETTLING  WORK     ARMED     more to deliver: arm the next frame
SETTLING  BLOCKED  HELD      the head waits on a held cluster
SETTLING  EMPTY    IDLE      all delivered
""")
S, E = DriveState, DriveEvent
BUSY = frozenset({S.DRAINING, S.FLUSHING})


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
                 settled: Callable[[DriveState, DriveState], None],
                 frames_stopped_ms: float = FRAMES_STOPPED_MS) -> None:
        self._host = host
        self.fallback_ms = fallback_ms
        self.frames_stopped_ms = frames_stopped_ms
        # Whether the host's last answer to a frame request was a frame (not the
        # fallback), and when the frame now armed was asked for.
        self._frames_come = False
        self._frame_asked_at = 0.0
        self._drain = drain
        self._condition = condition
        self._expire_holds = expire_holds
        self._settled = settled
        self.machine: Machine[DriveState, DriveEvent] = Machine(
            "pacing drive", DRIVE_TABLE, DriveState.IDLE)
        self._frame = FrameRequest(host, lambda: self._fired(E.FRAME, "frame"))
        self._fallback = Timeout(host, self._on_fallback)
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
            self._frame_asked_at = self._host.now()
            self._fallback.arm(self._fallback_delay())
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

    def _fallback_delay(self) -> float:
        """How long the fallback waits: on a host whose frames come it cannot
        drain before a frame has been awaited `frames_stopped_ms` (`_on_fallback`),
        so it is armed for that. Armed 50 ms out after every drain, it woke a
        page every ~50 ms for nothing: the page's host keeps one platform timer
        for the earliest deadline and leaves it armed when that timeout is
        cancelled (browser/host.py), so it fired, found nothing due and re-armed
        -- each time a task into Python (a DevTools trace of the embed at 4x CPU,
        md_32k: ~15 a second, 0.8 ms each)."""
        if self._frames_come:
            return max(self.fallback_ms, self.frames_stopped_ms)
        return self.fallback_ms

    def _on_fallback(self) -> None:
        waited = self._host.now() - self._frame_asked_at
        if self._frames_come and waited < self.frames_stopped_ms:
            self.machine.step(E.LATE)
            self._fallback.arm(max(self.fallback_ms, self.frames_stopped_ms - waited))
            return
        self._frames_come = False
        self._fired(E.TIMEOUT, "timeout")

    def _fired(self, event: DriveEvent, source: str) -> None:
        if event is E.FRAME:
            self._frames_come = True
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
