"""Issue 18 items 1 and 2 in the sans-IO parts: the run framer refuses a state event
over the state's bounds before it is logged; transcripts (server, store, page)
never raise on one and all end with the same state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation.json_patch import StateLimits
from streampace.conversation.transcript import Transcript
from streampace.session.framing import RunFramer

STATE = {"a": "x" * 40}
DOUBLING = [{"op": "copy", "from": "", "path": f"/k{i}"} for i in range(22)]


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = {"d": value}
    return value


def _framed(events: list[dict[str, Any]], **framer: Any) -> tuple[RunFramer, list[dict]]:
    f = RunFramer("t", "r", "hi", **framer)
    out = f.feed_group([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, *events])
    if not f.done:
        out += f.finish("upstream_ended_early", "ended")
    return f, out


def test_the_framer_refuses_a_doubling_patch_before_it_is_logged() -> None:
    f, out = _framed([
        {"type": "STATE_SNAPSHOT", "snapshot": STATE},
        {"type": "STATE_DELTA", "delta": DOUBLING},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/later", "value": 1}]},
    ])
    assert [e["type"] for e in out if e["type"].startswith("STATE")] == ["STATE_SNAPSHOT"]
    assert out[-1]["type"] == "RUN_ERROR" and out[-1]["code"] == "state_too_large"
    assert "operation [14] (copy)" in out[-1]["message"]
    assert f.failure is not None and f.failure.code == "state_too_large"
    assert f.state.value == STATE


@pytest.mark.parametrize(("value", "code", "message"), [
    (_deep(600), "upstream_protocol_error", "deeper than 48 levels"),
    (_deep(40), "state_too_large", "deeper than 32 levels"),
])
def test_deep_state_values(value: Any, code: str, message: str) -> None:
    # As an agent function yields them: dicts, never parsed from text.
    for event in ({"type": "STATE_SNAPSHOT", "snapshot": value},
                  {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/v", "value": value}]}):
        _, out = _framed([event])
        assert not [e for e in out if e["type"] == event["type"]]
        assert out[-1]["code"] == code and message in out[-1]["message"], out[-1]


def test_the_framer_checks_against_the_state_the_run_starts_with() -> None:
    limits = StateLimits(max_size=1000)
    conv = Transcript(state_limits=limits)
    conv.apply_event({"type": "STATE_SNAPSHOT", "snapshot": {"big": "y" * 900}})
    add = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/more", "value": "z" * 100}]}
    _, out = _framed([add], state=conv.shared_state, state_limits=limits)
    assert out[-1]["code"] == "state_too_large"
    # A fresh session's state is empty: the same patch fits.
    _, out = _framed([add], state_limits=limits)
    assert out[-1]["code"] == "upstream_ended_early"
    assert add in out


def test_a_patch_that_does_not_apply_is_logged_and_every_transcript_keeps_its_state() -> None:
    failing = {"type": "STATE_DELTA", "delta": [
        {"op": "add", "path": "/ok", "value": 1},
        {"op": "test", "path": "/a", "value": "not this"}]}
    f, out = _framed([{"type": "STATE_SNAPSHOT", "snapshot": STATE}, failing])
    assert failing in out  # not the upstream's fault that we know of: passed on as sent
    assert f.state.value == STATE
    conv = Transcript()
    conv.apply(out)
    assert conv.state == STATE
    assert conv.anomalies == 1 and "state unchanged" in conv.anomaly_log[-1]


def test_a_transcript_given_a_costly_event_notes_it_and_keeps_its_state() -> None:
    # What the page does with a hostile server's batch: no freeze, no exception.
    conv = Transcript()
    conv.apply_event({"type": "STATE_SNAPSHOT", "snapshot": STATE})
    conv.apply_event({"type": "STATE_DELTA", "delta": DOUBLING})
    conv.apply_event({"type": "STATE_SNAPSHOT", "snapshot": _deep(600)})
    conv.apply_event({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/v",
                                                         "value": _deep(600)}]})
    assert conv.state == STATE
    assert conv.anomalies == 3
    assert all("refused, state unchanged" in a for a in conv.anomaly_log)


_VALUE = st.recursive(st.integers(0, 9) | st.text("ab", max_size=30),
                      lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
                      max_leaves=10)
_PATH = st.lists(st.sampled_from(["a", "b", "c", "0", "-"]), min_size=0, max_size=3).map(
    lambda ts: "".join("/" + t for t in ts))
_OP = st.one_of(
    st.builds(lambda p, v: {"op": "add", "path": p, "value": v}, _PATH, _VALUE),
    st.builds(lambda p: {"op": "remove", "path": p}, _PATH),
    st.builds(lambda f, p: {"op": "copy", "from": f, "path": p}, _PATH, _PATH),
    st.builds(lambda f, p: {"op": "move", "from": f, "path": p}, _PATH, _PATH),
)
_STATE_EVENT = st.one_of(
    st.builds(lambda v: {"type": "STATE_SNAPSHOT", "snapshot": v}, _VALUE),
    st.builds(lambda ops: {"type": "STATE_DELTA", "delta": ops}, st.lists(_OP, max_size=6)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_STATE_EVENT, max_size=12))
def test_property_what_the_framer_logs_applies_within_bounds_everywhere(events: list) -> None:
    """Tight limits so that random patches pass them: whatever the framer lets
    through, a transcript applies without a limit anomaly, to the framer's state."""
    limits = StateLimits(max_size=300, max_nodes=40, max_depth=4, max_ops=5, max_work=120)
    f, out = _framed(events, state_limits=limits)
    conv = Transcript(state_limits=limits)
    conv.apply(out)
    assert not [a for a in conv.anomaly_log if "would" in a or "operations" in a]
    assert conv.state == f.state.value
    if out[-1]["code"] == "state_too_large":
        refused = f.failure
        assert refused is not None and "refused" in refused.message


def test_the_transcript_takes_the_framers_result_instead_of_applying_again() -> None:
    """On the server the framer applies each state event, then the session's
    transcript applies the very same event object to the very same state: the
    work (and the walk of a snapshot) is done once."""
    conv = Transcript()
    f = RunFramer("t", "r", "hi", state=conv.shared_state)
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"items": list(range(1000))}}
    delta = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/items/-", "value": 1}]}
    for event in f.feed_group([{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                               snapshot, delta]):
        conv.apply_event(event)
    assert conv.state is f.state.value  # the framer's result, not a second copy
    assert conv.shared_state.measured == f.state.measured
    # Another transcript given equal but distinct objects (a replay from Redis)
    # applies them itself, to the same result.
    import copy

    other = Transcript()
    other.apply([copy.deepcopy(snapshot), copy.deepcopy(delta)])
    assert other.state == conv.state and other.state is not conv.state
