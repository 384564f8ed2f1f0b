"""The sans-IO session parts the server and the page share (streampace.session)."""

from __future__ import annotations

import random

import pytest
from streampace.client.backoff import backoff_delay_ms
from streampace.session import protocol
from streampace.session.client_messages import (
    ClientError,
    RunMessage,
    check_cancel,
    check_resume,
    check_run,
)
from streampace.session.framing import FrameState, RunFramer, UpstreamError
from streampace.session.log import LARGE_EVENT_BYTES, SessionLog
from streampace.session.source import RunRequest, group_by_due, new_run_id
from streampace.sim import simulate
from streampace.sim.timed_model import SimulatedModel


def delta(text: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": text}


def test_the_log_reports_large_events_to_its_hook_only() -> None:
    seen: list[int] = []
    log = SessionLog(on_large_events=seen.append)
    log.append([delta("small"), delta("x" * LARGE_EVENT_BYTES), delta("y" * LARGE_EVENT_BYTES)])
    log.append([delta("small again")])
    assert len(seen) == 1 and seen[0] > 2 * LARGE_EVENT_BYTES  # once per append, both events
    SessionLog().append([delta("x" * LARGE_EVENT_BYTES)])  # no hook: nothing to call


def test_attach_mode_serves_from_the_log_only_what_it_holds_in_its_epoch() -> None:
    log = SessionLog(max_events=3)
    log.append([delta(str(i)) for i in range(5)])  # holds seqs 3..5
    assert protocol.attach_mode(log, None, None, "e1") == protocol.ATTACH_LIVE
    assert protocol.attach_mode(log, 2, None, "e1") == protocol.ATTACH_LOG
    assert protocol.attach_mode(log, 5, "e1", "e1") == protocol.ATTACH_LOG
    assert protocol.attach_mode(log, 1, "e1", "e1") == protocol.ATTACH_SNAPSHOT  # seq 2 was dropped
    assert protocol.attach_mode(log, 6, "e1", "e1") == protocol.ATTACH_SNAPSHOT  # beyond the end
    assert protocol.attach_mode(log, 4, "e0", "e1") == protocol.ATTACH_SNAPSHOT  # other epoch


def test_server_messages_are_compact_json() -> None:
    assert protocol.batch_message(3, [delta("é")]) == (
        '{"through":3,"events":[{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"é"}]}')
    assert protocol.error_message("no_run", "no run is in progress") == (
        '{"type":"error","code":"no_run","message":"no run is in progress"}')
    assert protocol.attached_message("s", "e", protocol.ATTACH_LOG, 7) == (
        '{"type":"attached","protocol":3,"sessionId":"s","epoch":"e","mode":"log","after":7}')


def test_run_rules() -> None:
    scenarios = ("demo", "fast")
    assert check_run(RunMessage("hi", "fast"), scenarios, running=False) == "fast"
    assert check_run(RunMessage("hi", None), scenarios, running=False) is None
    assert check_run(RunMessage("hi", "anything"), None, running=False) is None  # ignored
    for msg, running, code in ((RunMessage("hi", "nope"), False, "bad_scenario"),
                               (RunMessage("hi", "nope"), True, "bad_scenario"),
                               (RunMessage("hi", "fast"), True, "run_active")):
        with pytest.raises(ClientError) as err:
            check_run(msg, scenarios, running)
        assert err.value.code == code
    with pytest.raises(ClientError, match="already attached"):
        check_resume(True)
    check_resume(False)
    with pytest.raises(ClientError, match="no run"):
        check_cancel(False)
    check_cancel(True)


def test_group_by_due_keeps_order_and_groups_equal_due_times() -> None:
    a, b, c, d = (delta(x) for x in "abcd")
    assert list(group_by_due([(0.0, a), (0.0, b), (5.0, c), (7.5, d)])) == [
        (0.0, [a, b]), (5.0, [c]), (7.5, [d])]
    assert list(group_by_due([])) == []


def test_the_simulated_model_is_the_sim_with_the_run_index_added_to_the_seed() -> None:
    model = SimulatedModel(speed=2.0, seed=10)
    request = RunRequest("t", "run-x", "prompt", "fast", run_index=3)
    groups = list(model.timed_groups(request))
    expected = simulate("fast", seed=13, speed=2.0, thread_id="t", run_id="run-x")
    assert [e for _, g in groups for e in g] == [te.event for te in expected]
    assert [t for t, _ in groups] == sorted({te.t_ms for te in expected})


def test_run_ids_are_reproducible_with_a_seeded_rng_only() -> None:
    ids = [new_run_id(random.Random(4)) for _ in range(2)]
    assert ids[0] == ids[1] and ids[0].startswith("run-") and len(ids[0]) == 16
    assert new_run_id() != new_run_id()


def test_backoff_grows_with_jitter_and_a_cap() -> None:
    rng = random.Random(7)
    for attempt in range(8):
        ceiling = min(10_000, 250 * 2 ** attempt)
        delays = [backoff_delay_ms(attempt, rng=rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len({round(d, 3) for d in delays}) > 40  # jittered, not a fixed delay


def phase_of(framer: RunFramer) -> FrameState:
    """Read afresh: mypy keeps `framer.phase` narrowed by an earlier assert."""
    return framer.phase


def test_the_framer_moves_through_its_table() -> None:
    framer = RunFramer("t", "r", "hi")
    assert framer.phase is FrameState.WAITING
    # A first event that is refused returns nothing and leaves the run unopened...
    with pytest.raises(UpstreamError):
        framer.feed({"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"})
    assert framer.phase is FrameState.WAITING and not framer.done
    # ... so the RUN_ERROR that ends it opens it first: viewers get a whole run.
    out = framer.finish("upstream_protocol_error", "bad")
    assert [e["type"] for e in out] == ["RUN_STARTED", "TEXT_MESSAGE_START",
                                        "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert phase_of(framer) is FrameState.DONE and framer.done
    assert framer.feed({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}) == []
    assert framer.finish("again", "x") == []
