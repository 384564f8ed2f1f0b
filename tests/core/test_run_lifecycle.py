"""The run lifecycle state machine, without an event loop."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streampace.session.run_lifecycle import (
    TRANSITIONS,
    LifecycleError,
    Outcome,
    RunLifecycle,
    RunState,
)


def test_normal_run_goes_idle_starting_running_ending_idle():
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
    assert seen == ["idle", "starting", "running", "ending", "idle"]


def test_stop_before_begin_wins_and_begin_says_do_not_run():
    lc = RunLifecycle()
    lc.start("r1")
    assert lc.stop("cancelled", "by viewer")
    assert not lc.stop("server_shutdown", "later")  # the first stop decides
    assert lc.begin() is False
    assert lc.end(Outcome()).code == "cancelled"
    lc.settle()
    assert not lc.active


def test_stop_during_run_beats_the_body_outcome():
    lc = RunLifecycle()
    lc.start("r1")
    lc.begin()
    lc.stop("server_shutdown", "bye")
    assert lc.end(Outcome("cancelled", "task cancelled")).code == "server_shutdown"


def test_refused_run_returns_to_idle_without_an_outcome():
    lc = RunLifecycle()
    lc.start("r1")
    lc.refuse()
    assert lc.state == RunState.IDLE and lc.outcome is None


def test_transitions_not_in_the_table_raise():
    lc = RunLifecycle()
    with pytest.raises(LifecycleError):
        lc.settle()
    lc.start("r")
    with pytest.raises(LifecycleError):
        lc.start("again")


@given(st.lists(st.sampled_from(["start", "begin", "stop", "end", "settle", "refuse"])))
def test_any_event_sequence_keeps_state_in_the_table(events):
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
        assert lc.state in {s for _, s in TRANSITIONS.items()} | {RunState.IDLE}
        if lc.state == RunState.ENDING:
            assert lc.outcome is not None
    assert lc.runs_settled <= lc.runs_started
