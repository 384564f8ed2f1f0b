"""The session engine alone: inputs in, outputs out, no event loop, no socket."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from streampace.client.page_runner import PageRunner
from streampace.conversation.transcript import Transcript
from streampace.lifecycle import LifecycleError
from streampace.session import client_messages as cm
from streampace.session.engine import EVICTED, SHUTDOWN_REFUSAL, SessionEngine
from streampace.session.log import SessionLog
from streampace.session.outputs import (
    Attach,
    Deliver,
    Disconnect,
    Emit,
    LogReplaced,
    Output,
    PublishCancel,
    Refusal,
    Reply,
    RunEnded,
    StartRun,
    StopRun,
)
from streampace.session.run_lifecycle import Outcome, RunState
from streampace.session.session_lifecycle import SessionState
from streampace.session.source import new_run_id
from streampace.sim.timed_model import SimulatedModel
from streampace.testing import ManualHost


def engine(*, shared: bool = False, trusted: bool = False, scenarios: Any = None,
           log_events: int = 1000) -> tuple[SessionEngine, ManualHost]:
    host = ManualHost()
    ids = random.Random(1)
    eng: SessionEngine[Any] = SessionEngine("s", epoch="e1", log=SessionLog(log_events, 1 << 20),
                        transcript=Transcript(100, 1 << 20), clock=host.now,
                        run_ids=lambda: new_run_id(ids), scenarios=scenarios,
                        trusted=trusted, shared_log=shared)
    return eng, host


def timed_runner(eng: SessionEngine, host: ManualHost, source: Any
                 ) -> tuple[PageRunner, list[Output]]:
    """The page's run driver on ``source``; what it asks is kept, Emits logged at once."""
    done: list[Output] = []

    def apply(outputs: list[Output]) -> None:
        for out in outputs:
            done.append(out)
            if isinstance(out, Emit):
                done.extend(eng.append(out.events))
            elif isinstance(out, RunEnded):
                done.extend(eng.settle_run(out.run_id))

    return PageRunner(host, eng, source, apply), done


def next_timeout(host: ManualHost) -> bool:
    """Move the clock to the next timeout and fire it; False if none is armed."""
    at = host.next_timeout_at()
    return at is not None and host.run_until(at) > 0


def emitted(outputs: list[Output]) -> list[dict[str, Any]]:
    return [e for out in outputs if isinstance(out, Emit) for e in out.events]


def log_emits(eng: SessionEngine, outputs: list[Output]) -> list[Output]:
    """What a memory store does with Emits: log them at once."""
    out: list[Output] = []
    for o in outputs:
        out.append(o)
        if isinstance(o, Emit):
            out += eng.append(o.events)
    return out


# Read afresh: after `assert eng.run_state is X`, mypy keeps it narrowed to X
# across the engine calls that move it on.
def run_state(eng: SessionEngine) -> RunState:
    return eng.run_state


def session_state(eng: SessionEngine) -> SessionState:
    return eng.state


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def test_resume_attaches_live_from_the_log_or_from_a_snapshot() -> None:
    eng, _ = engine()
    eng.append([{"type": "STEP_STARTED", "stepName": f"s{i}"} for i in range(3)])
    [a] = eng.receive("v1", cm.ResumeMessage(1, None))
    assert isinstance(a, Attach) and (a.mode, a.after, a.snapshot) == ("log", 1, None)
    assert json.loads(a.text) == {"type": "attached", "protocol": 3, "sessionId": "s",
                                  "epoch": "e1", "mode": "log", "after": 1}
    [b] = eng.receive("v2", cm.ResumeMessage(1, "another-epoch"))
    assert isinstance(b, Attach) and b.mode == "snapshot" and b.after == 3
    assert b.snapshot is not None and b.snapshot[0]["type"] == "MESSAGES_SNAPSHOT"
    [again] = eng.receive("v1", cm.ResumeMessage(0, None))
    assert isinstance(again, Refusal) and again.code == "already_attached"
    assert eng.viewers == {"v1", "v2"}
    eng.leave("v1")
    assert eng.viewers == {"v2"}


def test_a_run_from_start_to_settle() -> None:
    eng, _ = engine()
    out = eng.receive("v", cm.RunMessage("hello", None))
    assert isinstance(out[0], Attach) and out[0].mode == "live"  # a run attaches from now
    [start] = out[1:]
    assert isinstance(start, StartRun) and eng.run_state is RunState.STARTING
    assert eng.run_held
    request = eng.begin_run(start.run_id)
    assert request is not None and request.prompt == "hello" and request.run_index == 0
    assert run_state(eng) is RunState.RUNNING
    mid = "m1"
    out = log_emits(eng, eng.source_group(start.run_id, [
        {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": mid}]))
    assert types(emitted(out))[:4] == ["RUN_STARTED", "TEXT_MESSAGE_START",
                                        "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    deliver = [o for o in out if isinstance(o, Deliver)]
    assert deliver and deliver[0].first == 1 and deliver[-1].through == eng.log.head == 7
    log_emits(eng, eng.source_group(start.run_id, [
        {"type": "RUN_FINISHED", "threadId": "s", "runId": start.run_id}]))
    assert not eng.wants_source(start.run_id)
    assert eng.end_run(start.run_id) == [RunEnded(start.run_id)]  # ended by the source
    assert eng.settle_run(start.run_id) == []
    assert run_state(eng) is RunState.IDLE and not eng.run_held and eng.runs.runs_settled == 1


def test_a_cancel_stops_a_running_body_and_its_stop_wins() -> None:
    eng, _ = engine()
    [start] = eng.start_run("p", None)
    assert isinstance(start, StartRun)
    eng.begin_run(start.run_id)
    assert eng.receive("v", cm.CancelMessage()) == [StopRun(start.run_id)]
    assert eng.receive("v", cm.CancelMessage()) == []  # decided: a second stop is ignored
    out = log_emits(eng, eng.end_run(start.run_id, Outcome("cancelled", "task cancelled")))
    assert emitted(out)[-1] == {"type": "RUN_ERROR", "code": cm.CANCEL_CODE,
                                "message": cm.CANCEL_MESSAGE}
    assert isinstance(out[-1], RunEnded)


def test_a_cancel_before_the_body_began_ends_the_run_with_one_terminal_event() -> None:
    eng, _ = engine()
    [start] = eng.start_run("p", None)
    assert isinstance(start, StartRun)
    assert eng.stop("cancelled", "x") == []  # recorded: no task to cancel yet
    assert eng.begin_run(start.run_id) is None
    out = eng.end_run(start.run_id, Outcome())
    assert types(emitted(out)) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                   "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert eng.settle_run(start.run_id) == [] and eng.run_count == 0


def test_a_refused_run_replies_to_the_viewer_that_asked() -> None:
    eng, _ = engine()
    eng.attach("v", None)
    [start] = eng.receive("v", cm.RunMessage("p", None))
    assert isinstance(start, StartRun)
    [reply] = eng.run_refused(start.run_id, "run_active", "busy elsewhere")
    assert isinstance(reply, Reply) and reply.viewer == "v"
    assert json.loads(reply.text) == {"type": "error", "code": "run_active",
                                      "message": "busy elsewhere"}
    assert eng.run_state is RunState.IDLE and eng.log.head == 0


def test_client_rules_refuse_with_the_protocol_codes() -> None:
    eng, _ = engine(scenarios=("fast",))
    assert [o.code for o in eng.receive("v", cm.CancelMessage())
            if isinstance(o, Refusal)] == ["no_run"]
    assert [o.code for o in eng.receive("v", cm.RunMessage("p", "nope"))
            if isinstance(o, Refusal)] == ["bad_scenario"]
    eng.receive("v", cm.RunMessage("p", "fast"))
    assert [o.code for o in eng.receive("v", cm.RunMessage("p", "fast"))
            if isinstance(o, Refusal)] == ["run_active"]


def test_shutdown_stops_the_run_and_refuses_new_ones() -> None:
    eng, _ = engine()
    [start] = eng.start_run("p", None)
    assert isinstance(start, StartRun)
    eng.begin_run(start.run_id)
    assert eng.shut_down("server_shutdown", "bye") == [StopRun(start.run_id)]
    assert eng.state is SessionState.SHUTTING_DOWN
    log_emits(eng, eng.end_run(start.run_id, Outcome("cancelled", "x")))
    eng.settle_run(start.run_id)
    [refusal] = eng.receive("v", cm.RunMessage("again", None))  # refused before attaching
    assert isinstance(refusal, Refusal)
    assert json.loads(refusal.text)["message"] == SHUTDOWN_REFUSAL
    assert eng.shut_down("server_shutdown", "bye") == []  # a second one changes nothing
    assert eng.evict() == []  # idle: it may still be forgotten while the server stops
    assert session_state(eng) is SessionState.EVICTED


def test_a_stop_for_another_run_is_ignored() -> None:
    eng, _ = engine()
    [start] = eng.start_run("p", None)
    assert isinstance(start, StartRun)
    eng.begin_run(start.run_id)
    assert eng.stop("run_lost", "old lease", run_id="run-000000000000") == []
    assert eng.run_state is RunState.RUNNING


def test_shared_log_a_run_elsewhere_holds_the_session_and_a_cancel_is_published() -> None:
    eng, _ = engine(shared=True)
    eng.append([{"type": "RUN_STARTED", "threadId": "s", "runId": "r-other"}])
    assert eng.run_held and eng.run_state is RunState.IDLE
    assert eng.receive("v", cm.CancelMessage()) == [
        PublishCancel(cm.CANCEL_CODE, cm.CANCEL_MESSAGE)]
    assert [o.code for o in eng.receive("v", cm.RunMessage("p", None))
            if isinstance(o, Refusal)] == ["run_active"]


def test_shared_log_the_next_run_waits_for_the_ending_one_to_settle() -> None:
    eng, _ = engine(shared=True)
    [start] = eng.start_run("first", None)
    assert isinstance(start, StartRun)
    eng.begin_run(start.run_id)
    ending = eng.end_run(start.run_id, Outcome("upstream_http_error", "boom"))
    eng.append(emitted(ending))  # the store wrote the terminal event; the lease is not free yet
    assert eng.run_state is RunState.ENDING and not eng.run_held
    assert eng.receive("v", cm.RunMessage("second", None))[1:] == []  # queued
    assert run_state(eng) is RunState.HANDING_OVER and eng.run_held
    [nxt] = eng.settle_run(start.run_id)
    assert isinstance(nxt, StartRun) and nxt.run_id != start.run_id
    request = eng.begin_run(nxt.run_id)
    assert request is not None and request.prompt == "second" and request.run_index == 1


def test_a_reload_replaces_the_log_and_says_so() -> None:
    eng, _ = engine(shared=True)
    assert eng.load("e2", SessionLog(10, 1000), Transcript(10, 1000), replacing=False) == []
    assert eng.epoch == "e2"
    assert eng.load("e2", SessionLog(10, 1000), Transcript(10, 1000), True) == [LogReplaced()]


def test_a_timed_run_is_paced_by_its_driver_and_a_cancel_ends_it_at_once() -> None:
    eng, host = engine(trusted=True, scenarios=("agentic",))
    runner, done = timed_runner(eng, host, SimulatedModel(speed=50.0, seed=3))
    [_attach, start] = eng.receive("v", cm.RunMessage("hello", "agentic"))
    assert isinstance(start, StartRun)
    runner.start(start.run_id)
    assert done == [] and host.next_timeout_at() == host.now()  # the next turn of the clock
    for _ in range(3):
        assert next_timeout(host)
    logged = emitted(done)
    assert logged[0]["type"] == "RUN_STARTED" and logged[-1]["type"] != "RUN_ERROR"
    assert host.pending_timeouts == 1 and eng.wants_source(start.run_id)
    [stop] = eng.receive("v", cm.CancelMessage())
    assert stop == StopRun(start.run_id)
    done.clear()
    runner.stop(stop.run_id)
    assert isinstance(done[0], Emit) and isinstance(done[-1], RunEnded)
    assert emitted(done)[-1]["code"] == cm.CANCEL_CODE
    assert host.pending_timeouts == 0 and eng.run_state is RunState.IDLE
    assert not eng.run_held


def test_a_timed_run_ends_when_its_source_has_no_more() -> None:
    eng, host = engine(trusted=True)
    runner, done = timed_runner(eng, host, SimulatedModel(speed=100.0, seed=3))
    [start] = eng.start_run("hello", None)
    assert isinstance(start, StartRun)
    runner.start(start.run_id)
    for _ in range(10_000):
        if not next_timeout(host):
            break
    events = emitted(done)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert isinstance(done[-1], RunEnded) and eng.run_state is RunState.IDLE
    assert host.pending_timeouts == 0


def test_a_cancel_sent_while_a_timed_runs_events_go_out_ends_it_once() -> None:
    # A viewer that answers an event at once (its sink runs inside the driver's apply)
    # stops the run between two groups due in the same fire: the rest is not framed.
    eng, host = engine(trusted=True)
    done: list[Output] = []
    runner: PageRunner

    def apply(outputs: list[Output]) -> None:
        for out in outputs:
            done.append(out)
            if isinstance(out, Emit):
                apply(eng.append(out.events))
                if eng.run_state is RunState.RUNNING and len(emitted(done)) >= 3:
                    [stop] = eng.receive("v", cm.CancelMessage())
                    assert isinstance(stop, StopRun)
                    runner.stop(stop.run_id)
            elif isinstance(out, RunEnded):
                apply(eng.settle_run(out.run_id))

    runner = PageRunner(host, eng, SimulatedModel(speed=1e6, seed=3), apply)
    [start] = eng.start_run("hello", None)
    assert isinstance(start, StartRun)
    runner.start(start.run_id)
    host.run_until(1.0)  # at this speed every group is due in the first fire
    events = emitted(done)
    assert [e["type"] for e in events].count("RUN_ERROR") == 1
    assert events[-1] == {"type": "RUN_ERROR", "message": cm.CANCEL_MESSAGE,
                          "code": cm.CANCEL_CODE}
    assert [o for o in done if isinstance(o, RunEnded)] == [RunEnded(start.run_id)]
    assert eng.run_state is RunState.IDLE and host.pending_timeouts == 0


def test_eviction_closes_bound_connections_and_answers_later_inputs() -> None:
    eng, _ = engine()
    eng.connect("early")  # bound at the handshake, never attached
    assert eng.idle
    assert eng.evict() == [Disconnect("early", EVICTED)]
    assert eng.receive("early", cm.ResumeMessage(0, None)) == [Disconnect("early", EVICTED)]
    assert eng.connect("late") == [Disconnect("late", EVICTED)]
    assert eng.state is SessionState.EVICTED
    with pytest.raises(LifecycleError):
        eng.evict()  # forgotten once: a second eviction is a bug in the store
    busy, _ = engine()
    busy.attach("v", None)
    with pytest.raises(LifecycleError, match="in use"):
        busy.evict()  # the guard on EVICT (eviction.check_forgettable)
    assert busy.state is SessionState.OPEN


def test_an_input_for_a_run_that_is_not_current_is_a_bug() -> None:
    eng, _ = engine()
    with pytest.raises(RuntimeError):
        eng.begin_run("run-nope")
    [start] = eng.start_run("p", None)
    assert isinstance(start, StartRun)
    with pytest.raises(LifecycleError):
        eng.start_run("again", None)  # the lifecycle takes one run at a time
