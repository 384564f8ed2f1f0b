"""One reducer, many views: the live state, the server's snapshots and history,
and the sim helpers agree on every event sequence (issue 8)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation import events as ev
from streampace.conversation.items import ItemRef, MessageItem, ToolCallItem
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
        if isinstance(item, ToolCallItem):
            out.append((item.kind, item.id, item.name, item.args, item.result))
        elif item.text or item.role != "assistant":
            out.append((item.kind, item.id, item.role, item.text))
    return out


def _texts(state: Transcript) -> dict[str, str]:
    return {i.id: i.text for i in state.items()
            if isinstance(i, MessageItem) and (i.text or i.role != "assistant")}


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
    assert ch.ended == [ItemRef("message", "m")]  # AG-UI: the pending chunk item ends
    ch = live.apply([{"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "b"}])
    assert live.messages["m"].text == "ab" and not live.messages["m"].ended
    assert live.anomalies == 0


# -- ids reused across runs (issue 23) -------------------------------------------


def _agent_run(run: str, answer: str) -> list[dict[str, Any]]:
    """A run of an agent that uses the same ids every run (docs/examples/byo_agent.py)."""
    return [
        {"type": "RUN_STARTED", "threadId": "th", "runId": run},
        {"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u", "delta": f"question {run}"},
        {"type": "TEXT_MESSAGE_END", "messageId": "u"},
        {"type": "REASONING_START", "messageId": "r"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": f"think {run}"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        {"type": "REASONING_END", "messageId": "r"},
        {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f",
         "parentMessageId": "a1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": f'{{"run": "{run}"}}'},
        {"type": "TOOL_CALL_END", "toolCallId": "t"},
        {"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": "t",
         "content": f"result {run}"},
        {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": answer},
        {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
        {"type": "RUN_FINISHED", "threadId": "th", "runId": run},
    ]


_TWO_RUNS = _agent_run("r1", "first answer") + _agent_run("r2", "second answer")
_EXPECTED = [
    ("message", "u", "user", "question r1"), ("reasoning", "r", "reasoning", "think r1"),
    ("tool_call", "t", "f", '{"run": "r1"}', "result r1"),
    ("message", "a1", "assistant", "first answer"),
    ("message", "u", "user", "question r2"), ("reasoning", "r", "reasoning", "think r2"),
    ("tool_call", "t", "f", '{"run": "r2"}', "result r2"),
    ("message", "a1", "assistant", "second answer"),
]


def test_an_id_a_later_run_reuses_is_a_new_item_without_anomaly() -> None:
    live = LiveState()
    live.apply(_TWO_RUNS[:17])
    ch = live.apply(_TWO_RUNS[17:])
    assert _view(live) == _EXPECTED
    assert live.anomalies == 0
    # The second run's items are new refs: created, never appended to the first's.
    assert ch.created == [ItemRef("message", "u", 1), ItemRef("reasoning", "r", 1),
                          ItemRef("tool_call", "t", 1), ItemRef("message", "a1", 1)]
    assert not ch.appended and not ch.updated
    assert live.messages["a1"].text == "second answer"  # an id names its latest item
    first = live.item(ItemRef("message", "a1"))
    assert isinstance(first, MessageItem) and first.text == "first answer"


def test_every_viewer_sees_the_reused_ids_as_new_items() -> None:
    for cut in range(len(_TWO_RUNS) + 1):
        resumed = _resumed(_TWO_RUNS, cut)  # late viewer: server snapshot, then the rest
        assert sorted(_view(resumed), key=repr) == sorted(_EXPECTED, key=repr), cut
        assert resumed.anomalies == 0, cut
        # Another process rebuilding the session from the snapshot (Redis store).
        server = Transcript()
        server.apply(_TWO_RUNS[:cut])
        other = Transcript()
        other.apply(server.snapshot_events())
        other.apply(_TWO_RUNS[cut:])
        assert sorted(_view(other), key=repr) == sorted(_EXPECTED, key=repr), cut
        assert other.history() == Transcript_of(_TWO_RUNS).history(), cut
    # The history an upstream gets names both runs' messages, each with its text.
    history = Transcript_of(_TWO_RUNS).history()
    assert [(m["id"], m["content"]) for m in history if "content" in m] == [
        ("u", "question r1"), ("r", "think r1"), ("res", "result r1"), ("a1", "first answer"),
        ("u", "question r2"), ("r", "think r2"), ("res", "result r2"), ("a1", "second answer")]
    calls = [c["function"]["arguments"] for m in history for c in m.get("toolCalls", ())]
    assert calls == ['{"run": "r1"}', '{"run": "r2"}']


def test_a_snapshot_holds_earlier_runs_and_replays_the_one_that_reuses_their_ids() -> None:
    server = Transcript_of(_TWO_RUNS[:20])  # run 2 has begun: its user message streams
    snap = server.snapshot_events()
    assert [e["type"] for e in snap] == [
        "RUN_STARTED", "MESSAGES_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
        "STATE_SNAPSHOT"]
    # Run 1's items (the call's holder named after its parent, as AG-UI's client does).
    assert [m["id"] for m in snap[1]["messages"]] == ["u", "r", "a1", "res", "a1"]
    assert snap[2:4] == [
        {"type": "TEXT_MESSAGE_START", "messageId": "u", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "u", "delta": "question r2"}]
    viewer = LiveState()
    viewer.apply(snap)
    viewer.apply(_TWO_RUNS[20:])
    assert sorted(_view(viewer), key=repr) == sorted(_EXPECTED, key=repr)
    assert viewer.anomalies == 0


def Transcript_of(events: list[dict[str, Any]]) -> Transcript:  # noqa: N802
    t = Transcript()
    t.apply(events)
    return t


# -- the property: all views agree on random sequences ------------------------------

_TEXT = st.sampled_from(["a", "b ", "é", "😀", "中文", "\n", ""])


@st.composite
def _sequences(draw: st.DrawFn) -> list[dict[str, Any]]:
    """AG-UI runs as agents emit them, with the irregular parts the issue lists:
    id-less chunks, tool calls without parent, content before START, tool-call
    and reasoning chunks, results, state and snapshots in the middle — and,
    as many agents do, the same ids in every run (issue 23)."""
    out: list[dict[str, Any]] = []
    runs = draw(st.integers(1, 3))
    for run in range(runs):
        out += _run(draw, run, out)
        if run < runs - 1 or draw(st.booleans()):
            out.append(draw(st.sampled_from([RUN_FINISHED, RUN_CANCELLED])))
    return out


RUN_CANCELLED = {"type": "RUN_ERROR", "message": "run cancelled by a viewer", "code": "cancelled"}


def _run(draw: st.DrawFn, run: int, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run; its ids (m0, m1, ..., r1, t2, ...) are the ones every run uses."""
    out: list[dict[str, Any]] = [{**RUN_STARTED, "runId": f"r{run}"}]
    if draw(st.booleans()):
        out += [{"type": "TEXT_MESSAGE_START", "messageId": "user", "role": "user"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "user", "delta": f"q{run}"},
                {"type": "TEXT_MESSAGE_END", "messageId": "user"}]
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(
            ["text", "chunk", "early", "tool", "tool_chunk", "reasoning", "reasoning_chunk",
             "result", "state", "step", "snapshot"]))
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
        elif kind == "snapshot":
            # An upstream's MESSAGES_SNAPSHOT mid-run, open items included (as
            # sim.with_snapshot inserts one): each view must take it the same way.
            out.append(messages_snapshot([*before, *out]))
        else:
            out.append({"type": "STEP_STARTED", "stepName": f"s{n}"})
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
    assert _calls(restored) == _calls(live)
    # A viewer resuming from the server's snapshot at any point ends where the live
    # viewer is: same items, same text, same tool calls, same state.
    # (Items still streaming at the cut are re-opened after the snapshot's completed
    # messages, as AG-UI nesting requires, so only the order may differ.)
    cut = data.draw(st.integers(0, len(events)))
    resumed = _resumed(events, cut)
    assert sorted(_view(resumed), key=repr) == sorted(_view(live), key=repr)
    assert resumed.anomalies <= live.anomalies
    assert resumed.state == live.state
    if cut < len(events) or live.status == "running":
        assert resumed.status == live.status  # a snapshot of an idle session has no run
    # The server's history (what an upstream gets) holds every completed item's text.
    server = Transcript()
    server.apply(events)
    history = [(m["id"], m.get("content")) for m in server.history() if m["role"] != "tool"]
    for item in live.items():
        if isinstance(item, MessageItem) and item.ended and item.text:
            assert (item.id, item.text) in history

    # Each run's items are what that run alone makes: an id an earlier run used
    # is a new item with the new text, and reuse is no anomaly.  (A snapshot
    # replaces what came before it, so only sequences without one.)
    if any(e["type"] == "MESSAGES_SNAPSHOT" for e in events):
        return
    alone_anomalies = 0
    for k, run in enumerate(_split_runs(events)):
        alone = Transcript()
        alone.apply(run)
        alone_anomalies += alone.anomalies
        assert _made(alone, lambda _item: True) == _made(
            server, lambda item, k=k: item.run == k + 1), k
    assert live.anomalies <= alone_anomalies


def _calls(state: Transcript) -> list[tuple[Any, ...]]:
    return sorted((i.id, i.name, i.args) for i in state.items() if isinstance(i, ToolCallItem))


def _split_runs(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    runs: list[list[dict[str, Any]]] = []
    for e in events:
        if e["type"] == "RUN_STARTED":
            runs.append([])
        runs[-1].append(e)
    return runs


def _made(state: Transcript, which: Any) -> list[tuple[Any, ...]]:
    """Items with text, arguments or a name (not a bare call a result created)."""
    out: list[tuple[Any, ...]] = []
    for item in state.items():
        if not which(item):
            continue
        if isinstance(item, ToolCallItem):
            if item.name or item.args:
                out.append((item.kind, item.id, item.name, item.args))
        elif item.text or item.role != "assistant":
            out.append((item.kind, item.id, item.role, item.text))
    return out


@settings(max_examples=150, deadline=None)
@given(_sequences(), st.data())
def test_snapshot_events_rebuild_the_transcript_in_another_process(
        events: list[dict[str, Any]], data: st.DataObject) -> None:
    """What the Redis store does: a process rebuilds a session from the snapshot
    events and carries on with the log; both then say the same in every view."""
    cut = data.draw(st.integers(0, len(events)))
    server = Transcript()
    server.apply(events[:cut])
    other = Transcript()
    other.apply(server.snapshot_events())
    assert _norm(other.snapshot_events()) == _norm(server.snapshot_events())
    assert _norm(other.history()) == _norm(server.history())
    server.apply(events[cut:])
    other.apply(events[cut:])
    assert sorted(_view(other), key=repr) == sorted(_view(server), key=repr)
    assert _norm(other.history()) == _norm(server.history())
    assert _norm(other.snapshot_events()) == _norm(server.snapshot_events())


def _norm(value: Any) -> Any:
    """Without the empty ``content`` of an assistant message that holds tool calls:
    a restore keeps such a message only as the calls' holder (transcript.py)."""
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        if value.get("toolCalls") and value.get("content") == "":
            value = {k: v for k, v in value.items() if k != "content"}
        return {k: _norm(v) for k, v in value.items()}
    return value
