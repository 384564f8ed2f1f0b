"""AG-UI 1.0 event validation, cross-checked against the official pydantic models."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core.events import Event, EventType
from pydantic import TypeAdapter, ValidationError
from streampace.conversation import events as ev
from streampace.conversation.events import EventError, parse_batch, parse_event, validate_event

AGUI = TypeAdapter(Event)

VALID = [
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi 👋"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 1700000000000},
    {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "user", "delta": "x"},
    {"type": "TEXT_MESSAGE_CHUNK"},
    {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "f", "parentMessageId": "m"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "t"},
    {"type": "TOOL_CALL_CHUNK", "toolCallId": "t", "delta": "{"},
    {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "t", "content": "ok",
     "role": "tool"},
    {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
    {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1},
                                      {"op": "move", "from": "/a", "path": "/b"},
                                      {"op": "remove", "path": "/b"}]},
    {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "1", "role": "user", "content": "q"}]},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "plan", "content": {}},
    {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "plan",
     "patch": [{"op": "replace", "path": "/x", "value": 2}]},
    {"type": "RAW", "event": {"anything": True}},
    {"type": "CUSTOM", "name": "n", "value": None},
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "metadata": {"k": 1}},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": [1]},
    {"type": "RUN_ERROR", "message": "bad", "code": "E1"},
    {"type": "STEP_STARTED", "stepName": "s"},
    {"type": "STEP_FINISHED", "stepName": "s"},
    {"type": "REASONING_START", "messageId": "r"},
    {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "hmm"},
    {"type": "REASONING_MESSAGE_END", "messageId": "r"},
    {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r", "delta": "h"},
    {"type": "REASONING_END", "messageId": "r"},
    {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "e",
     "encryptedValue": "zz"},
    {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "helper"},
    {"type": "SUBAGENT_FINISHED", "subagentRunId": "s"},
    {"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "x"},
]

# (event, field named in the error)
INVALID = [
    ({"type": "NOPE"}, "type"),
    ({"messageId": "m"}, "type"),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}, "delta"),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 3}, "delta"),
    ({"type": "TEXT_MESSAGE_CONTENT", "delta": "x"}, "messageId"),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "bot"}, "role"),
    ({"type": "TEXT_MESSAGE_END", "messageId": 7}, "messageId"),
    ({"type": "TOOL_CALL_START", "toolCallId": "t"}, "toolCallName"),
    ({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "t", "content": 1},
     "content"),
    ({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "t", "content": "x",
      "role": "user"}, "role"),
    ({"type": "STATE_DELTA", "delta": {}}, "delta"),
    ({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a"}]}, "value"),
    ({"type": "STATE_DELTA", "delta": [{"op": "jump", "path": "/a"}]}, "op"),
    ({"type": "STATE_DELTA", "delta": [{"op": "copy", "path": "/a"}]}, "from"),
    ({"type": "STATE_DELTA", "delta": [5]}, "delta[0]"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "user"}]}, "id"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "1", "role": "bot"}]}, "role"),
    ({"type": "RUN_STARTED", "threadId": "t"}, "runId"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1.5}, "timestamp"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": "now"}, "timestamp"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "metadata": []}, "metadata"),
    ({"type": "RUN_ERROR"}, "message"),
    ({"type": "REASONING_ENCRYPTED_VALUE", "subtype": "x", "entityId": "e",
      "encryptedValue": "v"}, "subtype"),
    ({"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "p", "patch": [{}]}, "op"),
    ({"type": "SUBAGENT_STARTED", "subagentRunId": "s"}, "name"),
]


def test_every_agui_1_0_type_has_a_constant_and_rules() -> None:
    official = {e.value for e in EventType}
    assert official == set(ev.EVENT_TYPES)
    for name in official:
        assert getattr(ev, name) == name


@pytest.mark.parametrize("event", VALID, ids=lambda e: e["type"])
def test_valid_events_pass_ours_and_the_official_models(event: dict[str, Any]) -> None:
    assert validate_event(event) == event
    AGUI.validate_python(event)
    assert parse_event(json.dumps(event)) == event


@pytest.mark.parametrize(("event", "field"), INVALID, ids=lambda x: str(x)[:40])
def test_invalid_events_are_rejected_naming_the_field(event: dict[str, Any], field: str) -> None:
    with pytest.raises(EventError) as info:
        validate_event(event)
    assert field in str(info.value)
    with pytest.raises(ValidationError):
        AGUI.validate_python(event)  # ours is never laxer than the official models


def test_empty_ids_are_rejected_stricter_than_the_models() -> None:
    with pytest.raises(EventError, match="messageId: must be a non-empty string"):
        validate_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "", "delta": "x"})


def test_legacy_thinking_events_are_accepted_but_not_1_0() -> None:
    for legacy in ev.LEGACY_TYPES:
        assert validate_event({"type": legacy, "delta": ""})["type"] == legacy
        assert legacy not in ev.EVENT_TYPES


@pytest.mark.parametrize(("text", "needle"), [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "JSON object"),
    ('"str"', "JSON object"),
    ('{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "\\ud83d"}', "surrogate"),
    ('{"type": "CUSTOM", "name": "n", "value": {"k": ["\\udc00"]}}', "value.k[0]"),
])
def test_parse_event_errors(text: str, needle: str) -> None:
    with pytest.raises(EventError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        parse_event(text)


def test_parse_event_rejects_non_str() -> None:
    with pytest.raises(EventError, match="input"):
        parse_event(b"{}")  # type: ignore[arg-type]


def test_event_error_is_a_value_error() -> None:
    assert issubclass(EventError, ValueError)


def test_parse_batch_all_or_nothing_with_index() -> None:
    good = json.dumps(VALID[:3])
    assert parse_batch(good) == VALID[:3]
    bad = json.dumps([VALID[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}])
    with pytest.raises(EventError, match=r"^\[1\] .*delta"):
        parse_batch(bad)
    with pytest.raises(EventError, match="array"):
        parse_batch(json.dumps(VALID[0]))


def test_classification_helpers() -> None:
    assert ev.is_barrier({"type": "TEXT_MESSAGE_END"})
    assert ev.is_barrier({"type": "MESSAGES_SNAPSHOT"})
    assert not ev.is_barrier({"type": "TOOL_CALL_END"})
    expected_barriers = {"TEXT_MESSAGE_END", "REASONING_END", "REASONING_MESSAGE_END",
                         "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED", "RUN_ERROR",
                         "THINKING_END", "THINKING_TEXT_MESSAGE_END"}
    assert expected_barriers == ev.BARRIER_TYPES
    assert {"RUN_FINISHED", "RUN_ERROR"} == ev.RUN_TERMINAL_TYPES
    assert ev.is_run_terminal({"type": "RUN_ERROR"})
    assert not ev.is_run_terminal({"type": "TEXT_MESSAGE_END"})
    assert ev.is_paced_candidate({"type": "TEXT_MESSAGE_CONTENT", "delta": "a"})
    assert ev.is_paced_candidate({"type": "REASONING_MESSAGE_CONTENT", "delta": "a"})
    assert ev.is_paced_candidate({"type": "TEXT_MESSAGE_CHUNK", "delta": "a"})
    assert not ev.is_paced_candidate({"type": "TEXT_MESSAGE_CONTENT", "delta": ""})
    assert not ev.is_paced_candidate({"type": "TOOL_CALL_ARGS", "delta": "a"})
