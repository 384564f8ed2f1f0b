"""StoreModel: paced transcript -> the headless store's immutable snapshots (CPython)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation.paced_store import StoreModel

RUN = {"type": "RUN_STARTED", "threadId": "th", "runId": "r1"}
DONE = {"type": "RUN_FINISHED", "threadId": "th", "runId": "r1"}


def start(mid: str, role: str = "assistant") -> dict:
    return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role}


def text(mid: str, delta: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta}


def end(mid: str) -> dict:
    return {"type": "TEXT_MESSAGE_END", "messageId": mid}


def think(rid: str, delta: str) -> list[dict]:
    return [{"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": rid, "delta": delta},
            {"type": "REASONING_MESSAGE_END", "messageId": rid}]


def replay(mirror: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
    """What js_shim/store.js does with a patch, over plain dicts."""
    if patch is None:
        return mirror
    out = dict(mirror)
    if "messages" in patch:
        messages = list(mirror["messages"])[:patch["length"]]
        while len(messages) < patch["length"]:
            messages.append(None)
        for index, record in patch["messages"]:
            if "id" in record:
                messages[index] = record
                continue
            grown = dict(mirror["messages"][index], done=record["done"])
            if "more" in record:
                grown["text"] += record["more"]
            if "reasoningMore" in record:
                grown["reasoning"] = grown.get("reasoning", "") + record["reasoningMore"]
            messages[index] = grown
        out["messages"] = messages
    for part in ("run", "connection", "queued"):
        if part in patch:
            out[part] = patch[part]
    return out


def test_identity_holds_until_a_batch_changes_something() -> None:
    model = StoreModel()
    first = model.snapshot
    assert model.snapshot is first and first.messages == () and first.run.status == "idle"
    model.apply([RUN, start("u", "user"), text("u", "hi"), end("u"), start("a"), text("a", "He")])
    second = model.snapshot
    assert second is not first and model.snapshot is second
    user, answer = second.messages
    assert (user.id, user.role, user.text, user.done) == ("u", "user", "hi", True)
    assert (answer.id, answer.text, answer.done) == ("a", "He", False)
    assert second.run.status == "running"
    model.apply([text("a", "llo")])
    third = model.snapshot
    assert third.messages[0] is user  # unchanged message: the same object
    assert third.messages[1].text == "Hello"
    model.apply([])  # nothing changed: the same snapshot
    assert model.snapshot is third


def test_reasoning_and_tool_calls_belong_to_the_answer() -> None:
    model = StoreModel()
    model.apply([RUN, start("u", "user"), text("u", "q"), end("u"), *think("r1", "hmm")])
    holder = model.snapshot.messages[1]
    assert (holder.id, holder.role, holder.text, holder.reasoning) == ("r1", "assistant", "", "hmm")
    key = holder.key
    model.apply([start("a"), text("a", "The answer"),
                 {"type": "TOOL_CALL_START", "toolCallId": "t1", "toolCallName": "search",
                  "parentMessageId": "a"},
                 {"type": "TOOL_CALL_ARGS", "toolCallId": "t1", "delta": '{"q":1}'},
                 {"type": "TOOL_CALL_END", "toolCallId": "t1"},
                 {"type": "TOOL_CALL_RESULT", "toolCallId": "t1", "messageId": "res",
                  "content": "found"},
                 end("a"), DONE])
    snap = model.snapshot
    assert len(snap.messages) == 2
    answer = snap.messages[1]
    assert (answer.id, answer.text, answer.reasoning, answer.done) == ("a", "The answer", "hmm",
                                                                         True)
    assert answer.key == key  # the answer took its reasoning's place over
    assert answer.tool_calls is not None
    (call,) = answer.tool_calls
    assert (call.id, call.name, call.args, call.result, call.done) == (
        "t1", "search", '{"q":1}', "found", True)
    assert snap.record()["messages"][1]["toolCalls"][0]["name"] == "search"
    assert "reasoning" not in snap.record()["messages"][0]
    assert snap.run.status == "finished" and snap.run.error is None


def test_run_statuses_stopped_error_and_lost() -> None:
    for code, status in (("cancelled", "stopped"), ("upstream_error", "error"),
                         ("server_restarted", "lost"), ("run_lost", "lost")):
        model = StoreModel()
        model.apply([RUN, {"type": "RUN_ERROR", "message": "why", "code": code}])
        run = model.snapshot.run
        assert run.status == status
        assert run.error == (None if status == "stopped" else "why")
        assert run.code == code


def test_connection_and_queue_change_the_snapshot_only_when_they_differ() -> None:
    model = StoreModel()
    model.set_connection("connecting", None)
    snap = model.snapshot
    model.set_connection("connecting", None)
    model.set_queued([])
    assert model.snapshot is snap
    model.set_connection("waiting", {"code": "no_server", "message": "No server"})
    model.set_queued([{"prompt": "next"}])
    snap = model.snapshot
    assert snap.connection.state == "waiting" and snap.connection.problem is not None
    assert snap.queued == ({"prompt": "next"},)
    patch = model.take_patch()
    assert patch == {"connection": {"state": "waiting",
                                    "problem": {"code": "no_server", "message": "No server"}},
                     "queued": [{"prompt": "next"}]}
    assert model.take_patch() is None


def test_a_growing_text_is_patched_with_its_new_text_only() -> None:
    model = StoreModel()
    model.apply([RUN, start("a"), text("a", "x" * 5000)])
    model.take_patch()
    model.apply([text("a", "yz")])
    patch = model.take_patch()
    assert patch is not None
    assert patch["messages"] == [[0, {"more": "yz", "done": False}]] and patch["length"] == 1
    model.apply([text("a", "!"), end("a")])
    assert model.take_patch() == {"messages": [[0, {"more": "!", "done": True}]], "length": 1}


def test_a_snapshot_event_rebuilds_and_ids_reused_by_a_later_run_are_new_messages() -> None:
    model = StoreModel()
    model.apply([RUN, start("a"), text("a", "one"), end("a"), DONE])
    model.apply([{**RUN, "runId": "r2"}, start("a"), text("a", "two"), end("a"),
                 {**DONE, "runId": "r2"}])
    assert [(m.id, m.text) for m in model.snapshot.messages] == [("a", "one"), ("a", "two")]
    assert len({m.key for m in model.snapshot.messages}) == 2  # a list key for each
    model.apply([{"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "u", "role": "user", "content": "restored"}]}])
    assert [(m.id, m.text) for m in model.snapshot.messages] == [("u", "restored")]


SCRIPT = [RUN, start("u", "user"), text("u", "Why pace?"), end("u"), *think("r", "think ✨")[:2],
          {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": " more"},
          think("r", "")[2],
          start("a"), text("a", "Because 👩‍👩‍👧 bursts "), text("a", "look bad."),
          {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f"},
          {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "{}"},
          {"type": "TOOL_CALL_END", "toolCallId": "t"}, end("a"),
          {"type": "RUN_ERROR", "message": "gone", "code": "server_restarted"}]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=20))
def test_replaying_the_patches_gives_the_snapshot(cuts: list[int]) -> None:
    model = StoreModel()
    mirror = {"messages": [], **model.snapshot.record()}
    events, at, i = SCRIPT, 0, 0
    while at < len(events):
        n = cuts[i % len(cuts)]
        model.apply(events[at:at + n])
        at, i = at + n, i + 1
        mirror = replay(mirror, model.take_patch())
        assert mirror == model.snapshot.record()
    assert model.snapshot.run.status == "lost"
