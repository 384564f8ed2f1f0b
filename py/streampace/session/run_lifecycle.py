"""The lifecycle of one session's run, as an explicit state machine (sans-IO).

    idle --start--> starting --begin--> running --end--> ending --settle--> idle
      ^                |  |                 |                ^
      +----refuse------+  +------stop-------+-----stop-------+

Every path out of ``starting`` or ``running`` — the run body finishing, an upstream
error, a cancel (even one that lands before the run's task first ran), a shutdown, a
lost lease — goes through ``ending``, where exactly one terminal outcome is decided,
and then back to ``idle``.  The first stop request wins; later ones are ignored.

The server adapter drives it (``server/session.py``); this module only keeps the
state, so the rules live in one place and can be tested without an event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from streampace.lifecycle import LifecycleError, step

__all__ = ["RunState", "RunLifecycle", "LifecycleError", "Outcome", "TRANSITIONS"]


class RunState:
    IDLE = "idle"
    STARTING = "starting"  # accepted, its task created but not yet run
    RUNNING = "running"  # its task is streaming from the source
    ENDING = "ending"  # the outcome is decided; the terminal event is being written


# (state, event) -> next state.  Anything not listed is a LifecycleError.
TRANSITIONS: dict[tuple[str, str], str] = {
    (RunState.IDLE, "start"): RunState.STARTING,
    (RunState.STARTING, "begin"): RunState.RUNNING,
    (RunState.STARTING, "refuse"): RunState.IDLE,  # another process holds the session's run
    (RunState.STARTING, "stop"): RunState.ENDING,
    (RunState.RUNNING, "stop"): RunState.ENDING,
    (RunState.STARTING, "end"): RunState.ENDING,
    (RunState.RUNNING, "end"): RunState.ENDING,
    (RunState.ENDING, "stop"): RunState.ENDING,  # already decided: ignored
    (RunState.ENDING, "end"): RunState.ENDING,
    (RunState.ENDING, "settle"): RunState.IDLE,
}


@dataclass(frozen=True)
class Outcome:
    """How a run ended: ``code`` None means it finished on its own (its terminal
    event came from the source); otherwise a RUN_ERROR with this code and message."""

    code: str | None = None
    message: str = ""


class RunLifecycle:
    def __init__(self) -> None:
        self.state = RunState.IDLE
        self.run_id: str | None = None
        self.outcome: Outcome | None = None  # set on entering ENDING
        self.runs_started = 0
        self.runs_settled = 0

    def _go(self, event: str) -> None:
        self.state = step(TRANSITIONS, self.state, event, "run lifecycle")

    @property
    def active(self) -> bool:
        """A run holds the session (any state but idle): a new one is refused."""
        return self.state != RunState.IDLE

    def start(self, run_id: str) -> None:
        self._go("start")
        self.run_id = run_id
        self.outcome = None
        self.runs_started += 1

    def refuse(self) -> None:
        """The run could not take the session (its lease is held elsewhere): it never
        started, wrote nothing, and needs no terminal event."""
        self._go("refuse")
        self.run_id = None

    def begin(self) -> bool:
        """The run's task runs for the first time; False if it was stopped before that
        (the task must then not touch the source)."""
        if self.state == RunState.ENDING:
            return False
        self._go("begin")
        return True

    def stop(self, code: str, message: str) -> bool:
        """Ask the run to stop with RUN_ERROR ``code``; True if this request decided
        the outcome (False when idle or already ending)."""
        if self.state in (RunState.IDLE, RunState.ENDING):
            return False
        self._go("stop")
        self.outcome = Outcome(code, message)
        return True

    def end(self, outcome: Outcome) -> Outcome:
        """The run's body is over with ``outcome``; returns the outcome that counts
        (an earlier stop request wins over what the body saw)."""
        self._go("end")
        if self.outcome is None:
            self.outcome = outcome
        return self.outcome

    def settle(self) -> None:
        """The terminal event is written: back to idle."""
        self._go("settle")
        self.run_id = None
        self.runs_settled += 1
