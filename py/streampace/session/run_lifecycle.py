"""The lifecycle of one session's run, as a typed state machine (sans-IO).

Every path out of ``STARTING`` or ``RUNNING`` — the run body finishing, an upstream
error, a cancel (even one that lands before the body first ran), a shutdown, a lost
lease — goes through ``ENDING``, where exactly one terminal outcome is decided, and
then back to ``IDLE``.  The first stop wins; later ones are table entries that change
nothing.  With a shared log (the Redis store) the next run may be accepted while this
one is still ``ENDING`` (its terminal event is written, its lease being released):
it waits in ``HANDING_OVER`` and starts the moment this one settles.

The session engine (``streampace.session.engine``) drives it; this module only keeps
the state, so the rules live in one table and are tested without an event loop.
The diagram in docs/architecture.md is ``diagram(RUN_TABLE, RunState.IDLE)``.

A run is also seen from the log: ``RunStatus`` is the run as its events show it
(``conversation/run_status.py``, ``RUN_STATUS_TABLE``), which the transcript folds —
the only view a process has of a run another process runs, and the page's view of
every run.  Whether a run
holds the session is one rule over both, ``run_holder``: the run of this
lifecycle, one that only the shared log shows, or none.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from streampace.conversation.run_status import RunStatus
from streampace.lifecycle import LifecycleError, Machine, table

__all__ = ["RunState", "RunEvent", "RUN_TABLE", "StopEffect", "STOP_EFFECTS", "RunLifecycle",
           "LifecycleError", "Outcome", "STOPPED", "RunHolder", "run_holder"]


class RunState(Enum):
    IDLE = "idle"
    STARTING = "starting"  # accepted; its body has not run yet (a store may still refuse it)
    RUNNING = "running"  # its body streams from the source
    ENDING = "ending"  # the outcome is decided; the terminal event is being written
    HANDING_OVER = "handing_over"  # ENDING, and the next run waits for it to settle


class RunEvent(Enum):
    START = "start"  # a run was accepted
    REFUSE = "refuse"  # the store gave it no lease: it never started
    BEGIN = "begin"  # its body runs for the first time
    STOP = "stop"  # end it with a RUN_ERROR (cancel, shutdown, lost lease)
    END = "end"  # its body is over, with the outcome it saw
    SETTLE = "settle"  # its terminal event is written and its lease released


RUN_TABLE = table(RunState, RunEvent, """
IDLE          START   STARTING      a run message was accepted
IDLE          STOP    IDLE          nothing runs here: a late cancel or a shutdown is a no-op
STARTING      BEGIN   RUNNING       the body runs: it may touch the source
STARTING      REFUSE  IDLE          another process holds the session's run: nothing was written
STARTING      STOP    ENDING        recorded: the body, when it first runs, goes straight to the
                                    ending
STARTING      END     ENDING        the body failed before it began
RUNNING       STOP    ENDING        the first stop decides the outcome
RUNNING       END     ENDING        the source ended, failed or was cut off
ENDING        BEGIN   ENDING        stopped before it began: the body must not touch the source
ENDING        STOP    ENDING        the outcome is decided: a later stop is ignored
ENDING        END     ENDING        the body saw the stop: the recorded outcome wins
ENDING        START   HANDING_OVER  shared log: the terminal event is in the log, the next run waits
ENDING        SETTLE  IDLE          the terminal event is written
HANDING_OVER  BEGIN   HANDING_OVER  stopped before it began: the body must not touch the source
HANDING_OVER  STOP    HANDING_OVER  the ending run's outcome is decided (the queued run keeps the
                                    stop)
HANDING_OVER  END     HANDING_OVER  the ending run's body is over
HANDING_OVER  SETTLE  STARTING      the queued run starts
""")


class StopEffect(Enum):
    """What a STOP does besides its move (``STOP_EFFECTS``)."""

    NONE = "none"  # nothing runs, or the outcome is decided: the stop changes nothing
    RECORDED = "recorded"  # decides the outcome; the body, when it first runs, ends the run
    CUT_OFF = "cut_off"  # decides the outcome; the driver stops the running body (StopRun)
    QUEUED = "queued"  # kept for the run queued behind the ending one (the first one wins)


# What a STOP does, by the state it is taken in: one entry per STOP rule of RUN_TABLE
# (checked below), so what a stop means is read from here and never from a state
# compared beside the table.
STOP_EFFECTS = {
    RunState.IDLE: StopEffect.NONE,
    RunState.STARTING: StopEffect.RECORDED,
    RunState.RUNNING: StopEffect.CUT_OFF,
    RunState.ENDING: StopEffect.NONE,
    RunState.HANDING_OVER: StopEffect.QUEUED,
}
if set(STOP_EFFECTS) != {state for state, event in RUN_TABLE if event is RunEvent.STOP}:
    raise ValueError("STOP_EFFECTS must name exactly the states RUN_TABLE lets a STOP leave")


@dataclass(frozen=True)
class Outcome:
    """How a run ended: ``code`` None means it finished on its own (its terminal
    event came from the source); otherwise a RUN_ERROR with this code and message."""

    code: str | None = None
    message: str = ""


# What a run's body saw when its driver stopped it (a StopRun): the stop recorded
# before, and not this, is what the run ends with.
STOPPED = Outcome("cancelled", "run cancelled")


class RunLifecycle:
    """One session's run: its state (``RUN_TABLE``), its id and its decided outcome."""

    def __init__(self) -> None:
        self._machine: Machine[RunState, RunEvent] = Machine("run", RUN_TABLE, RunState.IDLE)
        self.run_id: str | None = None
        self.outcome: Outcome | None = None  # set on entering ENDING
        self.runs_started = 0
        self.runs_settled = 0
        # HANDING_OVER: the run waiting for the ending one, and a stop it already got.
        self.queued: str | None = None
        self.queued_stop: Outcome | None = None

    @property
    def state(self) -> RunState:
        return self._machine.state

    @property
    def active(self) -> bool:
        """A run holds this lifecycle (any state but IDLE)."""
        return self._machine.state is not RunState.IDLE

    def start(self, run_id: str) -> None:
        """Accept a run (from IDLE), or queue it behind the one ENDING (shared log)."""
        if self._machine.step(RunEvent.START) is RunState.STARTING:
            self._started(run_id)
        else:
            self.queued, self.queued_stop = run_id, None

    def _started(self, run_id: str) -> None:
        self.run_id = run_id
        self.outcome = None
        self.runs_started += 1

    def refuse(self) -> None:
        """The run could not take the session (its lease is held elsewhere): it never
        started, wrote nothing, and needs no terminal event."""
        self._machine.step(RunEvent.REFUSE)
        self.run_id = None

    def begin(self) -> bool:
        """The run's body runs for the first time; False if it was stopped before that
        (the body must then not touch the source)."""
        return self._machine.step(RunEvent.BEGIN) is RunState.RUNNING

    def stop(self, code: str, message: str) -> StopEffect:
        """Ask the run to stop with RUN_ERROR ``code``: what the stop did
        (``STOP_EFFECTS``)."""
        effect = STOP_EFFECTS[self._machine.state]
        self._machine.step(RunEvent.STOP)
        if effect is StopEffect.RECORDED or effect is StopEffect.CUT_OFF:
            self.outcome = Outcome(code, message)
        elif effect is StopEffect.QUEUED and self.queued_stop is None:
            # Meant for the run the viewer asked for last: it starts already stopped.
            self.queued_stop = Outcome(code, message)
        return effect

    def end(self, outcome: Outcome) -> Outcome:
        """The run's body is over with ``outcome``; returns the outcome that counts
        (an earlier stop wins over what the body saw)."""
        self._machine.step(RunEvent.END)
        if self.outcome is None:
            self.outcome = outcome
        return self.outcome

    def settle(self) -> str | None:
        """The terminal event is written: back to IDLE, or the queued run starts
        (its id is returned; a stop it got while queued is applied at once)."""
        nxt = self._machine.step(RunEvent.SETTLE)
        self.runs_settled += 1
        self.run_id = None
        if nxt is not RunState.STARTING:
            return None
        run_id, stop = self.queued, self.queued_stop
        self.queued = self.queued_stop = None
        if run_id is None:
            raise LifecycleError("run: SETTLE into STARTING without a queued run")
        self._started(run_id)
        if stop is not None:
            self.stop(stop.code or "cancelled", stop.message)
        return run_id


class RunHolder(Enum):
    """Who holds the session's run (``run_holder``)."""

    NONE = "none"  # nobody: a run may start, a cancel has nothing to stop
    HERE = "here"  # this engine's run: a cancel stops it here
    ELSEWHERE = "elsewhere"  # only the shared log shows one: its owner is asked to stop it


# The states in which a run of this lifecycle holds the session even with a shared log.
_HOLDING = frozenset({RunState.STARTING, RunState.RUNNING, RunState.HANDING_OVER})


def run_holder(local: RunState, logged: RunStatus, shared_log: bool) -> RunHolder:
    """Who holds the session's run, from this lifecycle's state and the log's status.

    With a log of its own, a run holds the session until it settles.  With a shared
    log (Redis) it holds it until its terminal event is in the log — the same write
    frees its lease, so any process may start the next one (which waits in
    ``HANDING_OVER`` here); and a run the log shows open that this lifecycle does not
    run is another process's.
    """
    if not shared_log:
        return RunHolder.NONE if local is RunState.IDLE else RunHolder.HERE
    if local in _HOLDING:
        return RunHolder.HERE
    if logged is not RunStatus.RUNNING:
        return RunHolder.NONE
    return RunHolder.HERE if local is RunState.ENDING else RunHolder.ELSEWHERE
