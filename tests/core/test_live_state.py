"""LiveState: the reducer and its Changes contract for renderers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation import items
from streampace.conversation.items import ItemRef, ToolCallItem
from streampace.conversation.live_state import Changes, LiveState

M = "message"
R = "reasoning"
T = "tool_call"


def start(mid: str, role: str = "assistant") -> dict:
    return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role}


def content(mid: str, delta: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta}


def end(mid: str) -> dict:
    return {"type": "TEXT_MESSAGE_END", "messageId": mid}


RUN_STARTED = {"type": "RUN_STARTED", "threadId": "th", "runId": "r1"}
RUN_FINISHED = {"type": "RUN_FINISHED", "threadId": "th", "runId": "r1"}


class Renderer:
    """A DOM stand-in that follows the Changes contract literally."""

    def __init__(self, state: LiveState) -> None:
        self.state = state
        self.nodes: dict[ItemRef, str] = {}
        self.order: list[ItemRef] = []
        self.ended: set[ItemRef] = set()

    @staticmethod
    def _text(item: Any) -> str:
        return item.args if isinstance(item, ToolCallItem) else item.text

    def render(self, changes: Changes) -> None:
        if changes.reset:
            self.nodes = {ref: self._text(self.state.item(ref)) for ref in self.state.timeline}
            self.order = list(self.state.timeline)
            self.ended = {r for r in self.order if self.state.item(r).ended}
            return
        for ref in changes.created:
            assert ref not in self.nodes
            self.nodes[ref] = self._text(self.state.item(ref))
            self.order.append(ref)
            if self.state.item(ref).ended:
                self.ended.add(ref)
        for ref, pieces in changes.appended.items():
            assert ref not in changes.created
            for piece in pieces:
                self.nodes[ref] += piece  # appendData
        for ref in changes.ended:
            self.ended.add(ref)
        for ref in changes.updated:
            if not self.state.item(ref).ended:
                self.ended.discard(ref)


# -- messages -------------------------------------------------------------------


def test_message_lifecycle_reports_created_appended_ended() -> None:
    s = LiveState()
    ch = s.apply([RUN_STARTED, start("m1"), content("m1", "Hel")])
    assert ch.created == [ItemRef(M, "m1")]
    assert ch.appended == {}  # created items render from state
    assert ch.run_status and not ch.state and not ch.reset
    assert s.messages["m1"].text == "Hel"
    ch = s.apply([content("m1", "lo"), content("m1", " 😀"), end("m1")])
    assert ch.created == []
    assert ch.appended == {ItemRef(M, "m1"): ["lo", " 😀"]}
    assert ch.ended == [ItemRef(M, "m1")]
    assert not ch.run_status
    msg = s.messages["m1"]
    assert (msg.id, msg.role, msg.text, msg.ended) == ("m1", "assistant", "Hello 😀", True)
    assert s.timeline == [ItemRef(M, "m1")]
    assert s.anomalies == 0


def test_user_role_and_name_from_start() -> None:
    s = LiveState()
    s.apply([{"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user", "name": "ann"}])
    assert (s.messages["u"].role, s.messages["u"].name) == ("user", "ann")


def test_empty_batch_and_empty_delta_change_nothing() -> None:
    s = LiveState()
    s.apply([start("m")])
    assert not s.apply([])
    ch = s.apply([content("m", "")])
    assert not ch and s.messages["m"].text == ""


def test_timeline_orders_messages_reasoning_and_tool_calls() -> None:
    s = LiveState()
    ch = s.apply(
        [
            {"type": "REASONING_START", "messageId": "phase"},
            {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "think"},
            {"type": "REASONING_MESSAGE_END", "messageId": "r"},
            {"type": "REASONING_END", "messageId": "phase"},
            start("a"),
            content("a", "calling"),
            {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "search",
             "parentMessageId": "a"},
            end("a"),
        ]
    )
    assert ch.created == [ItemRef(R, "r"), ItemRef(M, "a"), ItemRef(T, "t")]
    assert ch.ended == [ItemRef(R, "r"), ItemRef(M, "a")]
    assert s.timeline == ch.created
    assert s.reasoning["r"].text == "think" and s.reasoning["r"].role == "reasoning"
    assert [type(i).__name__ for i in s.items()] == ["ReasoningItem", "MessageItem",
                                                     "ToolCallItem"]
    assert s.anomalies == 0


def test_same_id_for_message_and_tool_call_are_distinct_items() -> None:
    s = LiveState()
    s.apply([start("x"), {"type": "TOOL_CALL_START", "toolCallId": "x", "toolCallName": "f"}])
    assert s.timeline == [ItemRef(M, "x"), ItemRef(T, "x")]


# -- tool calls ------------------------------------------------------------------


def test_tool_call_args_end_and_result() -> None:
    s = LiveState()
    s.apply([{"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "search"}])
    ch = s.apply(
        [
            {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '{"q":'},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '"cats"}'},
        ]
    )
    assert ch.tool_calls == [ItemRef(T, "t")]
    assert ch.appended == {ItemRef(T, "t"): ['{"q":', '"cats"}']}
    ch = s.apply([{"type": "TOOL_CALL_END", "toolCallId": "t"}])
    assert ch.ended == [ItemRef(T, "t")] and ch.tool_calls == [ItemRef(T, "t")]
    ch = s.apply([{"type": "TOOL_CALL_RESULT", "messageId": "tm", "toolCallId": "t",
                   "content": "3 cats", "role": "tool"}])
    assert ch.updated == [ItemRef(T, "t")] and ch.tool_calls == [ItemRef(T, "t")]
    tool = s.tool_calls["t"]
    assert (tool.name, tool.args, tool.ended, tool.result, tool.result_message_id) == (
        "search", '{"q":"cats"}', True, "3 cats", "tm")
    assert s.anomalies == 0


def test_tool_call_chunks() -> None:
    s = LiveState()
    ch = s.apply(
        [
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "t1", "toolCallName": "f",
             "parentMessageId": "m", "delta": "{"},
            {"type": "TOOL_CALL_CHUNK", "delta": "}"},  # no id: continues t1
            {"type": "TOOL_CALL_CHUNK", "toolCallId": "t2", "toolCallName": "g", "delta": "["},
        ]
    )
    assert ch.created == [ItemRef(T, "t1"), ItemRef(T, "t2")]
    assert ch.ended == [ItemRef(T, "t1")]  # a new chunk stream closes the previous one
    assert s.tool_calls["t1"].args == "{}" and s.tool_calls["t1"].parent_message_id == "m"
    assert s.tool_calls["t2"].name == "g"
    assert s.anomalies == 0


# -- chunks ------------------------------------------------------------------------


def test_text_chunks_take_role_from_the_chunk_that_starts_the_message() -> None:
    s = LiveState()
    ch = s.apply(
        [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "user", "delta": "hi"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": " there"},
        ]
    )
    assert ch.created == [ItemRef(M, "c")]
    assert s.messages["c"].role == "user" and s.messages["c"].text == "hi there"
    # A role on a later chunk does not reset the message.
    ch = s.apply([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "assistant",
                   "delta": "!"}])
    assert ch.appended == {ItemRef(M, "c"): ["!"]}
    assert s.messages["c"].role == "user" and s.messages["c"].text == "hi there!"
    ch = s.apply([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "d", "delta": "x"}, RUN_FINISHED])
    assert s.messages["d"].role == "assistant"
    assert ch.ended == [ItemRef(M, "c"), ItemRef(M, "d")]
    assert s.anomalies == 0


def test_chunk_without_any_open_message_is_an_anomaly() -> None:
    s = LiveState()
    ch = s.apply([{"type": "TEXT_MESSAGE_CHUNK", "delta": "lost?"}])
    assert ch.anomalies == 1 and s.timeline == []


def test_reasoning_chunks_and_legacy_thinking() -> None:
    s = LiveState()
    s.apply(
        [
            {"type": "REASONING_MESSAGE_CHUNK", "messageId": "rc", "delta": "a"},
            {"type": "REASONING_MESSAGE_CHUNK", "delta": "b"},
            {"type": "THINKING_START"},
            {"type": "THINKING_TEXT_MESSAGE_START"},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "old"},
            {"type": "THINKING_TEXT_MESSAGE_END"},
            {"type": "THINKING_END"},
        ]
    )
    assert s.reasoning["rc"].text == "ab"
    assert s.reasoning["thinking-1"].text == "old" and s.reasoning["thinking-1"].ended
    assert s.anomalies == 0


def text_of(item: items.Item) -> str:
    assert isinstance(item, items.MessageItem), item
    return item.text


# -- run and state -----------------------------------------------------------------


def test_run_status_transitions_and_error() -> None:
    s = LiveState()
    assert s.status == "idle"
    s.apply([RUN_STARTED])
    assert (s.status, s.run.thread_id, s.run.run_id) == ("running", "th", "r1")
    ch = s.apply([start("m"), content("m", "partial")])
    assert not ch.run_status
    ch = s.apply([{"type": "RUN_ERROR", "message": "rate limited", "code": "429"}])
    assert ch.run_status and ch.ended == [ItemRef(M, "m")]  # open items end with the run
    assert (s.status, s.run.error, s.run.error_code) == ("error", "rate limited", "429")
    s.apply([{"type": "RUN_STARTED", "threadId": "th", "runId": "r2"}])
    assert (s.status, s.run.error, s.run.run_id) == ("running", None, "r2")
    s.apply([{"type": "RUN_FINISHED", "threadId": "th", "runId": "r2"}])
    assert (s.status,) == ("finished",)  # a tuple: mypy keeps s.status narrowed to "idle"


def test_state_snapshot_and_delta() -> None:
    s = LiveState()
    assert s.state == {}
    ch = s.apply([{"type": "STATE_SNAPSHOT", "snapshot": {"todo": ["a"], "n": 1}}])
    assert ch.state and s.state == {"todo": ["a"], "n": 1}
    ch = s.apply([{"type": "STATE_DELTA", "delta": [
        {"op": "add", "path": "/todo/-", "value": "b"},
        {"op": "replace", "path": "/n", "value": 2},
    ]}])
    assert ch.state and s.state == {"todo": ["a", "b"], "n": 2}


def test_bad_state_delta_is_an_anomaly_and_leaves_state_alone() -> None:
    s = LiveState()
    s.apply([{"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}])
    ch = s.apply([{"type": "STATE_DELTA", "delta": [
        {"op": "replace", "path": "/n", "value": 5},
        {"op": "remove", "path": "/missing"},
    ]}])
    assert not ch.state and ch.anomalies == 1
    assert s.state == {"n": 1}
    assert "STATE_DELTA" in s.anomaly_log[-1]


# -- snapshots ---------------------------------------------------------------------

SNAPSHOT = {
    "type": "MESSAGES_SNAPSHOT",
    "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "find "},
                                                  {"type": "binary", "mimeType": "x"},
                                                  {"type": "text", "text": "cats"}]},
        {"id": "a1", "role": "assistant", "content": "Searching",
         "toolCalls": [{"id": "t1", "type": "function",
                        "function": {"name": "search", "arguments": '{"q":"cats"}'}}]},
        {"id": "tm", "role": "tool", "toolCallId": "t1", "content": "3 cats"},
        {"id": "r1", "role": "reasoning", "content": "hmm"},
        {"id": "a2", "role": "assistant", "content": "Found 3"},
    ],
}


def test_messages_snapshot_replaces_everything_and_resets() -> None:
    s = LiveState()
    s.apply([start("old"), content("old", "gone")])
    ch = s.apply([SNAPSHOT])
    assert ch.reset and ch.created == [] and ch.appended == {}
    assert "old" not in s.messages
    assert s.timeline == [ItemRef(M, "u1"), ItemRef(M, "a1"), ItemRef(T, "t1"),
                          ItemRef(R, "r1"), ItemRef(M, "a2")]
    assert s.messages["u1"].text == "find cats" and s.messages["u1"].role == "user"
    tool = s.tool_calls["t1"]
    assert (tool.name, tool.args, tool.result, tool.parent_message_id) == (
        "search", '{"q":"cats"}', "3 cats", "a1")
    assert s.reasoning["r1"].text == "hmm"
    assert all(item.ended for item in s.items())
    assert s.messages["a1"].raw is SNAPSHOT["messages"][1]
    assert s.anomalies == 0


def test_streaming_resumes_after_a_reconnect_snapshot_without_anomaly() -> None:
    s = LiveState()
    s.apply([RUN_STARTED, start("a2"), content("a2", "Fou")])
    ch = s.apply([SNAPSHOT, content("a2", "nd 3 cats"), end("a2")])
    assert ch.reset
    assert s.messages["a2"].text == "Found 3" + "nd 3 cats"  # snapshot text + the rest
    assert s.messages["a2"].ended
    ch = s.apply([start("a3"), content("a3", "more")])
    assert ch.created == [ItemRef(M, "a3")] and not ch.reset
    assert s.anomalies == 0


def test_snapshot_changes_after_reset_are_reported() -> None:
    s = LiveState()
    s.apply([RUN_STARTED, start("a2")])
    ch = s.apply([SNAPSHOT, content("a2", "!"), end("a2")])
    assert ch.reset  # the rest is reported item by item, after the reset
    assert ch.appended == {ItemRef(M, "a2"): ["!"]}
    assert ch.ended == [ItemRef(M, "a2")]
    assert s.messages["a2"].text == "Found 3!" and s.anomalies == 0


def test_an_item_ended_and_resumed_in_one_batch_is_not_reported_ended() -> None:
    # A chunk stream ended by another event, then continued by a chunk of it.
    s = LiveState()
    ch = s.apply([RUN_STARTED, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "a"},
                  start("m"), {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "b"}])
    assert ch.created == [ItemRef(M, "c"), ItemRef(M, "m")] and ch.ended == []
    assert not s.messages["c"].ended and s.messages["c"].text == "ab"


def test_a_snapshot_item_that_is_not_streaming_belongs_to_an_earlier_run() -> None:
    # A late viewer's snapshot (transcript_views.snapshot_events) holds the items
    # of earlier runs: an id they used names a new item when it comes again.
    s = LiveState()
    s.apply([RUN_STARTED, SNAPSHOT])
    ch = s.apply([start("a2"), content("a2", "new"), end("a2")])
    assert ch.created == [ItemRef(M, "a2", 1)] and not ch.appended
    assert [text_of(i) for i in s.items() if i.id == "a2"] == ["Found 3", "new"]
    assert s.anomalies == 0


def test_malformed_snapshot_entries_are_skipped_and_counted() -> None:
    s = LiveState()
    ch = s.apply([{"type": "MESSAGES_SNAPSHOT", "messages": [
        "nope", {"role": "user"}, {"id": "a", "role": "assistant", "content": "x"},
        {"id": "a", "role": "assistant", "content": "dup"},
        {"id": "t", "role": "tool"},
    ]}])
    assert ch.reset and ch.anomalies == 3
    # An id that repeats is a second item (runs that reused an id are written so).
    assert s.timeline == [ItemRef(M, "a"), ItemRef(M, "a", 1)]
    assert [text_of(i) for i in s.items()] == ["x", "dup"] and s.messages["a"].text == "dup"
    ch = s.apply([{"type": "MESSAGES_SNAPSHOT", "messages": "x"}])
    assert ch.anomalies == 1 and not ch.reset and len(s.timeline) == 2


# -- anomalies ---------------------------------------------------------------------


def test_content_for_unknown_id_creates_the_message_and_counts() -> None:
    s = LiveState()
    ch = s.apply([content("ghost", "boo")])
    assert ch.created == [ItemRef(M, "ghost")] and ch.anomalies == 1
    assert s.messages["ghost"].text == "boo" and s.messages["ghost"].role == "assistant"
    ch = s.apply([{"type": "TOOL_CALL_ARGS", "toolCallId": "tg", "delta": "{}"},
                  {"type": "TOOL_CALL_RESULT", "messageId": "x", "toolCallId": "tr",
                   "content": "r"}])
    assert ch.created == [ItemRef(T, "tg"), ItemRef(T, "tr")] and ch.anomalies == 2
    assert s.tool_calls["tg"].args == "{}" and s.tool_calls["tg"].name is None


def test_content_after_end_is_appended_and_counted() -> None:
    s = LiveState()
    s.apply([start("m"), content("m", "a"), end("m")])
    ch = s.apply([content("m", "b")])
    assert ch.anomalies == 1 and ch.appended == {ItemRef(M, "m"): ["b"]}
    assert s.messages["m"].text == "ab" and s.messages["m"].ended
    s.apply([{"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f"},
             {"type": "TOOL_CALL_END", "toolCallId": "t"}])
    ch = s.apply([{"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "1"}])
    assert ch.anomalies == 1 and s.tool_calls["t"].args == "1"


def test_duplicate_start_and_end_are_ignored_and_counted() -> None:
    s = LiveState()
    s.apply([start("m"), content("m", "keep")])
    ch = s.apply([start("m", role="user")])
    assert ch.anomalies == 1 and not ch.created
    assert s.messages["m"].role == "assistant" and s.messages["m"].text == "keep"
    s.apply([end("m")])
    ch = s.apply([end("m"), end("never"), {"type": "TOOL_CALL_END", "toolCallId": "no"}])
    assert ch.anomalies == 3 and not ch.ended
    s.apply([{"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f"}])
    ch = s.apply([{"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "g"}])
    assert ch.anomalies == 1 and s.tool_calls["t"].name == "f"
    assert s.anomalies == 5
    assert len(s.anomaly_log) == 5


def test_garbage_never_raises() -> None:
    s = LiveState()
    garbage: list[Any] = [
        None, 3, "TEXT_MESSAGE_START", {}, {"type": None}, {"type": "NOPE"},
        {"type": "TEXT_MESSAGE_START"}, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": 5, "delta": "x"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": 7},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": None},
        {"type": "STATE_DELTA", "delta": "not a list"}, {"type": "STATE_SNAPSHOT"},
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a", "toolCalls": ["x", {"id": 1}]}]},
        {"type": "RUN_ERROR", "message": 5},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": 1},
        {"type": "THINKING_TEXT_MESSAGE_END"},
    ]
    ch = s.apply(garbage)
    assert ch.anomalies >= 14
    assert s.status == "error" and s.run.error == "unknown error"
    # Valid events still work afterwards.
    s.apply([start("ok"), content("ok", "fine")])
    assert s.messages["ok"].text == "fine"


def test_valid_ignored_types_are_not_anomalies() -> None:
    s = LiveState()
    ch = s.apply([
        {"type": "STEP_STARTED", "stepName": "s"}, {"type": "STEP_FINISHED", "stepName": "s"},
        {"type": "CUSTOM", "name": "n", "value": 1}, {"type": "RAW", "event": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "x", "content": {}},
    ])
    assert not ch and s.anomalies == 0


# -- cost --------------------------------------------------------------------------


def test_apply_never_joins_whole_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    s = LiveState()
    s.apply([start("m"), {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f"}])

    def forbidden(self: Any) -> str:
        raise AssertionError("apply() read a whole text: O(message length) per delta")

    monkeypatch.setattr(items.TextBuffer, "get", forbidden)
    for _ in range(2000):
        s.apply([content("m", "x"), {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "y"}])
    s.apply([end("m"), RUN_FINISHED])
    monkeypatch.undo()
    assert s.messages["m"].text == "x" * 2000 and s.tool_calls["t"].args == "y" * 2000


def test_reading_text_collapses_parts_once() -> None:
    s = LiveState()
    s.apply([start("m")] + [content("m", str(i % 10)) for i in range(100)])
    text = s.messages["m"].body
    assert len(text._parts) == 100
    assert s.messages["m"].text == "0123456789" * 10
    assert len(text._parts) == 1


# -- property: a renderer following Changes always matches the state ----------------

_PIECES = st.sampled_from(["a", "面", "😀", "👩\u200d💻", "e\u0301", " ", ""])


@st.composite
def _stream(draw: st.DrawFn) -> list[dict]:
    out: list[dict] = [RUN_STARTED]
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["text", "reasoning", "tool", "chunk", "snapshot",
                                     "state"]))
        n = draw(st.integers(0, 100))
        if kind == "text":
            mid = f"m{n}"
            out.append(start(mid, draw(st.sampled_from(["assistant", "user"]))))
            out += [content(mid, p) for p in draw(st.lists(_PIECES, max_size=5))]
            if draw(st.booleans()):
                out.append(end(mid))
        elif kind == "reasoning":
            mid = f"r{n}"
            out.append({"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"})
            out += [{"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": p}
                    for p in draw(st.lists(_PIECES, max_size=4))]
            out.append({"type": "REASONING_MESSAGE_END", "messageId": mid})
        elif kind == "tool":
            tid = f"t{n}"
            out.append({"type": "TOOL_CALL_START", "toolCallId": tid, "toolCallName": "f"})
            out += [{"type": "TOOL_CALL_ARGS", "toolCallId": tid, "delta": p}
                    for p in draw(st.lists(_PIECES, max_size=4))]
            out.append({"type": "TOOL_CALL_END", "toolCallId": tid})
        elif kind == "chunk":
            mid = f"c{n}"
            out += [{"type": "TEXT_MESSAGE_CHUNK", "messageId": mid, "delta": p}
                    for p in draw(st.lists(_PIECES, min_size=1, max_size=4))]
        elif kind == "snapshot":
            out.append({"type": "MESSAGES_SNAPSHOT", "messages": [
                {"id": f"s{n}", "role": "assistant", "content": "snap"}]})
        else:
            out.append({"type": "STATE_DELTA",
                        "delta": [{"op": "add", "path": f"/k{n}", "value": n}]})
    if draw(st.booleans()):
        out.append(RUN_FINISHED)
    return out


@settings(max_examples=150, deadline=None)
@given(stream=_stream(), cuts=st.lists(st.integers(0, 60), max_size=8))
def test_property_renderer_following_changes_matches_state(stream: list[dict],
                                                           cuts: list[int]) -> None:
    s = LiveState()
    renderer = Renderer(s)
    bounds = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        renderer.render(s.apply(stream[lo:hi]))
    # The incremental DOM equals a fresh render of the final state.
    assert renderer.order == s.timeline
    assert renderer.nodes == {ref: Renderer._text(s.item(ref)) for ref in s.timeline}
    assert renderer.ended == {ref for ref in s.timeline if s.item(ref).ended}
    # Text equals the input since the last snapshot (ids are unique per draw,
    # so a repeated id is a duplicate START: the anomaly rule applies).
    last_snapshot = max((i for i, e in enumerate(stream) if e["type"] == "MESSAGES_SNAPSHOT"),
                        default=-1)
    expected: dict[str, str] = {}
    for e in stream[last_snapshot + 1:]:
        if e["type"] in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"):
            expected[e["messageId"]] = expected.get(e["messageId"], "") + e["delta"]
    for mid, text in expected.items():
        assert s.messages[mid].text == text
