"""One reducer, many views: the live state, the server's snapshots and history,
and the sim helpers agree on every event sequence (issue 8)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation import events as ev
from streampace.conversation.live_state import LiveState
from streampace.conversation.transcript import Transcript
from streampace.sim import messages_snapshot, visible_text

RUN_STARTED = {"type": "RUN_STARTED", "threadId": "th", "runId": "r1"}
RUN_FINISHED = {"type": "RUN_FINISHED", "threadId": "th", "runId": "r1"}


def _view(state: Transcript) -> list[tuple[Any, ...]]:
    """What a reader sees: every item's kind, id, role/name and text, in order.

    An empty assistant message is left out: in AG-UI messages it is only the
    holder of tool calls, and a restored view does not show it (transcript.py).
    """
    out: list[tuple[Any, ...]] = []
    for item in state.items():
        if item.kind == "tool_call":
            out.append((item.kind, item.id, item.name, item.args, item.result))
        elif item.text or item.role != "assistant":
            out.append((item.kind, item.id, item.role, item.text))
    return out


def _texts(state: Transcript) -> dict[str, str]:
    return {i.id: i.text for i in state.items()
            if i.kind != "tool_call" and (i.text or i.role != "assistant")}


def _resumed(events: list[dict[str, Any]], cut: int) -> LiveState:
    """A viewer that attaches after ``cut`` events: server snapshot, then the rest."""
    server = Transcript()
    server.apply(events[:cut])
    viewer = LiveState()
    viewer.apply(server.snapshot_events())
    viewer.apply(events[cut:])
    return viewer


# -- the five divergences of the issue, one rule each ------------------------------


def test_a_viewer_resuming_after_an_idless_chunk_gets_the_whole_text() -> None:
    events = [RUN_STARTED,
              {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "Hel"},
              {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"}]
    for cut in range(len(events) + 1):
        viewer = _resumed(events, cut)
        assert viewer.messages["m"].text == "Hello", cut
        assert viewer.anomalies == 0
    # The snapshot re-opens the chunk stream last, so later id-less chunks find it.
    server = Transcript()
    server.apply(events[:2])
    assert server.snapshot_events()[-1] == {
        "type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "assistant", "delta": "Hel"}


def test_a_tool_call_without_parent_gets_a_message_named_after_it() -> None:
    events = [RUN_STARTED, {"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "f"},
              {"type": "TOOL_CALL_ARGS", "toolCallId": "t1", "delta": "{}"},
              {"type": "TOOL_CALL_END", "toolCallId": "t1"}, RUN_FINISHED]
    live = LiveState()
    live.apply(events)
    assert live.tool_calls["t1"].parent_message_id is None
    # As AG-UI's client does: the holder message takes the parent's id, else the call's.
    assert messages_snapshot(events)["messages"] == [
        {"id": "t1", "role": "assistant", "toolCalls": [
            {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
    restored = LiveState()
    restored.apply([messages_snapshot(events)])
    assert _view(restored) == _view(live)
    assert restored.tool_calls["t1"].parent_message_id is None


def test_content_before_its_start_is_kept_by_every_view() -> None:
    events = [RUN_STARTED, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "early"},
              {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": " text"},
              {"type": "TEXT_MESSAGE_END", "messageId": "m"}, RUN_FINISHED]
    live = LiveState()
    live.apply(events)
    assert live.messages["m"].text == "early text"
    assert visible_text(events) == {"m": "early text"}
    assert messages_snapshot(events)["messages"][0]["content"] == "early text"
    for cut in range(len(events) + 1):
        assert _resumed(events, cut).messages["m"].text == "early text", cut


def test_tool_call_chunks_reach_every_view() -> None:
    events = [RUN_STARTED,
              {"type": "TOOL_CALL_CHUNK", "toolCallId": "t", "toolCallName": "search",
               "parentMessageId": "a", "delta": '{"q":'},
              {"type": "TOOL_CALL_CHUNK", "delta": ' "x"}'}, RUN_FINISHED]
    live = LiveState()
    live.apply(events)
    assert live.tool_calls["t"].args == '{"q": "x"}' and live.tool_calls["t"].name == "search"
    history = Transcript()
    history.apply(events)
    assert history.history() == [{"id": "a", "role": "assistant", "toolCalls": [
        {"id": "t", "type": "function",
         "function": {"name": "search", "arguments": '{"q": "x"}'}}]}]
    for cut in range(len(events) + 1):
        assert _view(_resumed(events, cut)) == _view(live), cut


def test_reasoning_chunks_reach_every_view() -> None:
    events = [RUN_STARTED, {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r", "delta": "think"},
              {"type": "REASONING_MESSAGE_CHUNK", "delta": "ing"}]
    live = LiveState()
    live.apply(events)
    assert live.reasoning["r"].text == "thinking"
    assert visible_text(events) == {"r": "thinking"}
    assert messages_snapshot(events)["messages"] == [
        {"id": "r", "role": "reasoning", "content": "thinking"}]
    for cut in range(len(events) + 1):
        assert _view(_resumed(events, cut)) == _view(live), cut


def test_a_chunk_stream_ends_at_the_next_other_event_and_may_continue() -> None:
    live = LiveState()
    ch = live.apply([RUN_STARTED, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
                     {"type": "STEP_STARTED", "stepName": "s"}])
    assert ch.ended == [ev.Stream("message", "m")]  # AG-UI: the pending chunk item ends
    ch = live.apply([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "b"}])
    assert live.messages["m"].text == "ab" and not live.messages["m"].ended
    assert live.anomalies == 0


# -- the property: all views agree on random sequences ------------------------------

_TEXT = st.sampled_from(["a", "b ", "é", "😀", "中文", "\n", ""])


@st.composite
def _sequences(draw: st.DrawFn) -> list[dict[str, Any]]:
    """AG-UI runs as agents emit them, with the irregular parts the issue lists:
    id-less chunks, tool calls without parent, content before START, tool-call
    and reasoning chunks, results, state and snapshots in the middle."""
    out: list[dict[str, Any]] = [RUN_STARTED]
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(
            ["text", "chunk", "early", "tool", "tool_chunk", "reasoning", "reasoning_chunk",
             "result", "state", "step"]))
        mid = f"m{n}"
        pieces = draw(st.lists(_TEXT, min_size=1, max_size=4))
        if kind == "text":
            role = draw(st.sampled_from(["assistant", "user"]))
            out.append({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role})
            out += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": p}
                    for p in pieces]
            if draw(st.booleans()):
                out.append({"type": "TEXT_MESSAGE_END", "messageId": mid})
        elif kind == "early":
            out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": pieces[0]})
        elif kind == "chunk":
            out.append({"type": "TEXT_MESSAGE_CHUNK", "messageId": mid, "delta": pieces[0]})
            out += [{"type": "TEXT_MESSAGE_CHUNK", "delta": p} for p in pieces[1:]]
        elif kind in ("tool", "tool_chunk"):
            parent = draw(st.sampled_from([None, "m0", f"p{n}"]))
            first: dict[str, Any] = {"toolCallId": f"t{n}", "toolCallName": "f"}
            if parent is not None:
                first["parentMessageId"] = parent
            if kind == "tool":
                out.append({"type": "TOOL_CALL_START", **first})
                out += [{"type": "TOOL_CALL_ARGS", "toolCallId": f"t{n}", "delta": p}
                        for p in pieces]
                if draw(st.booleans()):
                    out.append({"type": "TOOL_CALL_END", "toolCallId": f"t{n}"})
            else:
                out.append({"type": "TOOL_CALL_CHUNK", **first, "delta": pieces[0]})
                out += [{"type": "TOOL_CALL_CHUNK", "delta": p} for p in pieces[1:]]
        elif kind == "reasoning":
            out.append({"type": "REASONING_START", "messageId": f"r{n}"})
            out.append({"type": "REASONING_MESSAGE_START", "messageId": f"r{n}",
                        "role": "reasoning"})
            out += [{"type": "REASONING_MESSAGE_CONTENT", "messageId": f"r{n}", "delta": p}
                    for p in pieces]
            if draw(st.booleans()):
                out.append({"type": "REASONING_MESSAGE_END", "messageId": f"r{n}"})
                out.append({"type": "REASONING_END", "messageId": f"r{n}"})
        elif kind == "reasoning_chunk":
            out.append({"type": "REASONING_MESSAGE_CHUNK", "messageId": f"r{n}",
                        "delta": pieces[0]})
            out += [{"type": "REASONING_MESSAGE_CHUNK", "delta": p} for p in pieces[1:]]
        elif kind == "result":
            tools = [e["toolCallId"] for e in out if e.get("toolCallName")]
            if tools:
                out.append({"type": "TOOL_CALL_RESULT", "messageId": f"res{n}",
                            "toolCallId": draw(st.sampled_from(tools)), "content": "ok"})
        elif kind == "state":
            out.append({"type": "STATE_DELTA",
                        "delta": [{"op": "add", "path": f"/k{n}", "value": n}]})
        else:
            out.append({"type": "STEP_STARTED", "stepName": f"s{n}"})
    if draw(st.booleans()):
        out.append(RUN_FINISHED)
    return out


@settings(max_examples=150, deadline=None)
@given(_sequences(), st.data())
def test_live_state_server_snapshots_and_sim_views_agree(events: list[dict[str, Any]],
                                                         data: st.DataObject) -> None:
    for e in events:
        ev.validate_event(e)
    # The live page, fed in random batches.
    live = LiveState()
    i = 0
    while i < len(events):
        n = data.draw(st.integers(1, 4))
        live.apply(events[i:i + n])
        i += n
    # The sim's text view and its MESSAGES_SNAPSHOT say the same.
    assert visible_text(events) == live.texts()
    restored = LiveState()
    restored.apply([messages_snapshot(events)])
    assert _texts(restored) == _texts(live)
    assert {t: (c.name, c.args) for t, c in restored.tool_calls.items()} == {
        t: (c.name, c.args) for t, c in live.tool_calls.items()}
    # A viewer resuming from the server's snapshot at any point ends where the live
    # viewer is: same items, same text, same tool calls, same state.
    # (Items still streaming at the cut are re-opened after the snapshot's completed
    # messages, as AG-UI nesting requires, so only the order may differ.)
    cut = data.draw(st.integers(0, len(events)))
    resumed = _resumed(events, cut)
    assert sorted(_view(resumed), key=repr) == sorted(_view(live), key=repr)
    assert resumed.state == live.state
    if cut < len(events) or live.status == "running":
        assert resumed.status == live.status  # a snapshot of an idle session has no run
    # The server's history (what an upstream gets) holds every completed item's text.
    server = Transcript()
    server.apply(events)
    texts = {m["id"]: m.get("content") for m in server.history() if m["role"] != "tool"}
    for item in live.items():
        if item.kind != "tool_call" and item.ended and item.text:
            assert texts.get(item.id) == item.text
