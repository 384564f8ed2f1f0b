"""The run lifecycle state machine, without an event loop."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streampace.conversation.run_status import RunStatus
from streampace.conversation.transcript import Transcript
from streampace.lifecycle import Machine, unreachable
from streampace.session.run_lifecycle import (
    RUN_TABLE,
    LifecycleError,
    Outcome,
    RunEvent,
    RunHolder,
    RunLifecycle,
    RunState,
    StopEffect,
    run_holder,
)


def test_normal_run_goes_idle_starting_running_ending_idle() -> None:
    lc = RunLifecycle()
    seen = [lc.state]
    lc.start("r1")
    seen.append(lc.state)
    assert lc.begin()
    seen.append(lc.state)
    assert lc.end(Outcome()) == Outcome()
    seen.append(lc.state)
    lc.settle()
    seen.append(lc.state)
    assert seen == [RunState.IDLE, RunState.STARTING, RunState.RUNNING, RunState.ENDING,
                    RunState.IDLE]


def test_stop_before_begin_wins_and_begin_says_do_not_run() -> None:
    lc = RunLifecycle()
    lc.start("r1")
    assert lc.stop("cancelled", "by viewer") is StopEffect.RECORDED
    assert lc.stop("server_shutdown", "later") is StopEffect.NONE  # the first stop decides
    assert lc.begin() is False
    assert lc.end(Outcome()).code == "cancelled"
    lc.settle()
    assert not lc.active


def test_stop_during_run_beats_the_body_outcome() -> None:
    lc = RunLifecycle()
    lc.start("r1")
    lc.begin()
    assert lc.stop("server_shutdown", "bye") is StopEffect.CUT_OFF
    assert lc.end(Outcome("cancelled", "task cancelled")).code == "server_shutdown"


def test_a_stop_while_idle_is_a_table_entry_that_changes_nothing() -> None:
    lc = RunLifecycle()
    assert lc.stop("cancelled", "x") is StopEffect.NONE
    assert lc.state is RunState.IDLE and lc.outcome is None


def state_of(lc: RunLifecycle) -> RunState:
    """Read afresh: mypy keeps `lc.state` narrowed by an earlier assert."""
    return lc.state


def test_refused_run_returns_to_idle_without_an_outcome() -> None:
    lc = RunLifecycle()
    lc.start("r1")
    lc.refuse()
    assert lc.state == RunState.IDLE and lc.outcome is None


def test_a_run_accepted_while_one_ends_starts_when_it_settles() -> None:
    lc = RunLifecycle()
    lc.start("r1")
    lc.begin()
    lc.end(Outcome())
    lc.start("r2")  # shared log: the terminal event is in the log, the lease not yet free
    assert lc.state is RunState.HANDING_OVER and lc.run_id == "r1"
    assert lc.settle() == "r2"
    assert state_of(lc) is RunState.STARTING and lc.run_id == "r2" and lc.outcome is None
    assert lc.runs_started == 2 and lc.runs_settled == 1


def test_a_cancel_while_handing_over_stops_the_queued_run_when_it_starts() -> None:
    lc = RunLifecycle()
    lc.start("r1")
    lc.begin()
    lc.end(Outcome())
    lc.start("r2")
    # The ending run's outcome is decided; the stop is kept for the queued one.
    assert lc.stop("cancelled", "by viewer") is StopEffect.QUEUED
    assert lc.settle() == "r2"
    assert lc.state is RunState.ENDING and lc.outcome == Outcome("cancelled", "by viewer")
    assert lc.begin() is False  # its body must not touch the source
    lc.end(Outcome())
    assert lc.settle() is None and state_of(lc) is RunState.IDLE


def test_transitions_not_in_the_table_raise() -> None:
    lc = RunLifecycle()
    with pytest.raises(LifecycleError):
        lc.settle()
    lc.start("r")
    with pytest.raises(LifecycleError):
        lc.start("again")


@pytest.mark.parametrize(("state", "event"), list(itertools.product(RunState, RunEvent)))
def test_every_pair_is_listed_or_raises(state: RunState, event: RunEvent) -> None:
    machine = Machine("run", RUN_TABLE, state)
    if (state, event) in RUN_TABLE:
        assert machine.step(event) in RunState
    else:
        with pytest.raises(LifecycleError, match=f"run: {event.name} in state {state.name}"):
            machine.step(event)
        assert machine.state is state


def test_every_state_is_reachable_and_every_rule_says_why() -> None:
    assert unreachable(RUN_TABLE, RunState.IDLE, RunState) == []
    assert all(rule.why for rule in RUN_TABLE.values())


@given(st.lists(st.sampled_from(["start", "begin", "stop", "end", "settle", "refuse"])))
def test_any_event_sequence_keeps_state_in_the_table(events: list[str]) -> None:
    lc = RunLifecycle()
    for name in events:
        before = lc.state
        try:
            if name == "start":
                lc.start("r")
            elif name == "begin":
                lc.begin()
            elif name == "stop":
                lc.stop("cancelled", "x")
            elif name == "end":
                lc.end(Outcome())
            elif name == "settle":
                lc.settle()
            else:
                lc.refuse()
        except LifecycleError:
            assert lc.state == before  # a refused event changes nothing
            continue
        assert lc.state in {rule.target for rule in RUN_TABLE.values()} | {RunState.IDLE}
        if lc.state in (RunState.ENDING, RunState.HANDING_OVER):
            assert lc.outcome is not None
    assert lc.runs_settled <= lc.runs_started


@pytest.mark.parametrize("shared", [False, True])
def test_who_holds_the_run_is_the_rule_the_engine_and_its_cancel_had(shared: bool) -> None:
    # Before the rule had one home: the engine held the session while its lifecycle was
    # not IDLE (a local log), or while STARTING/RUNNING/HANDING_OVER or the log showed a
    # run open (a shared log); a cancel stopped the run here whenever the lifecycle was
    # not IDLE, else asked the log's owner.
    for local, logged in itertools.product(RunState, RunStatus):
        if shared:
            held = (local in (RunState.STARTING, RunState.RUNNING, RunState.HANDING_OVER)
                    or logged is RunStatus.RUNNING)
        else:
            held = local is not RunState.IDLE
        expected = (RunHolder.NONE if not held
                    else RunHolder.HERE if local is not RunState.IDLE else RunHolder.ELSEWHERE)
        assert run_holder(local, logged, shared) is expected, (local, logged)


def test_the_transcript_moves_the_run_status_by_its_table() -> None:
    t = Transcript()
    assert t.status is RunStatus.IDLE
    seen = []
    for event in ({"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
                  {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
                  {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
                  {"type": "RUN_ERROR", "message": "stopped", "code": "cancelled"},
                  {"type": "RUN_ERROR", "message": "again"}):
        t.apply([event])
        seen.append(t.status)
    assert seen == [RunStatus.RUNNING, RunStatus.FINISHED, RunStatus.RUNNING, RunStatus.ERROR,
                    RunStatus.ERROR]
    assert t.run.outcome == "error" and type(t.run.outcome) is str  # what the page shows
