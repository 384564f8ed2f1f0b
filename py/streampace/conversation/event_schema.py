"""AG-UI 1.0 events as plain dicts: type names, what is valid, and pacing classes.

Events stay in their JSON wire shape (camelCase keys) end to end, so what the
scheduler delivers is exactly what the server sent; this module only says what
is valid and how the pacer must treat each type.  Which item an event belongs
to is ``stream_identity``'s business.

Validation is the edge every outside event passes (an upstream's, an agent
function's, a server's batch in the page), so it is bounded: the whole event is
walked once, without recursion, within ``MAX_EVENT_DEPTH`` levels and
``MAX_EVENT_NODES`` values (``json_value``) before any field is looked at, and
no error message repeats more than a short excerpt of what it was given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from streampace.bounded_json import JsonLimitError
from streampace.bounded_json import loads as bounded_loads

from .json_value import JsonValueError, measure

__all__ = [
    "EventError",
    "EVENT_TYPES",
    "LEGACY_TYPES",
    "BARRIER_TYPES",
    "RUN_TERMINAL_TYPES",
    "PACED_CONTENT_TYPES",
    "SOURCE_PAUSE_TYPES",
    "MAX_EVENT_DEPTH",
    "MAX_EVENT_NODES",
    "MAX_EVENT_SIZE",
    "MAX_EVENT_BYTES",
    "parse_event",
    "parse_batch",
    "validate_event",
    "is_barrier",
    "is_run_terminal",
    "is_paced_candidate",
    "brief",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "ACTIVITY_SNAPSHOT",
    "ACTIVITY_DELTA",
    "RAW",
    "CUSTOM",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "REASONING_END",
    "REASONING_ENCRYPTED_VALUE",
    "SUBAGENT_STARTED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_ERROR",
    "THINKING_START",
    "THINKING_END",
    "THINKING_TEXT_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END",
]

# Bounds of one event, whoever sends it.  Depth counts the event object itself:
# a state at the shared state's limit (32, json_patch.StateLimits) fits in a
# STATE_SNAPSHOT (33) and in a STATE_DELTA's values (35), and a batch on the
# wire ({"events": [event]}: 2 more) stays within bounded_json's default 64.
MAX_EVENT_DEPTH: Final = 48
# Values in one event: a state at its bound (50 000) fits in a snapshot; walking
# this many costs ~10-15 ms, part of the ~50 ms one event may cost (bench/attack.py).
MAX_EVENT_NODES: Final = 60_000
MAX_EVENT_SIZE: Final = 64 * 1024 * 1024  # estimated characters (json_value.measure)
MAX_EVENT_BYTES: Final = 16 * 1024 * 1024  # one event as JSON text (parse_event)

TEXT_MESSAGE_START: Final = "TEXT_MESSAGE_START"
TEXT_MESSAGE_CONTENT: Final = "TEXT_MESSAGE_CONTENT"
TEXT_MESSAGE_END: Final = "TEXT_MESSAGE_END"
TEXT_MESSAGE_CHUNK: Final = "TEXT_MESSAGE_CHUNK"
TOOL_CALL_START: Final = "TOOL_CALL_START"
TOOL_CALL_ARGS: Final = "TOOL_CALL_ARGS"
TOOL_CALL_END: Final = "TOOL_CALL_END"
TOOL_CALL_CHUNK: Final = "TOOL_CALL_CHUNK"
TOOL_CALL_RESULT: Final = "TOOL_CALL_RESULT"
STATE_SNAPSHOT: Final = "STATE_SNAPSHOT"
STATE_DELTA: Final = "STATE_DELTA"
MESSAGES_SNAPSHOT: Final = "MESSAGES_SNAPSHOT"
ACTIVITY_SNAPSHOT: Final = "ACTIVITY_SNAPSHOT"
ACTIVITY_DELTA: Final = "ACTIVITY_DELTA"
RAW: Final = "RAW"
CUSTOM: Final = "CUSTOM"
RUN_STARTED: Final = "RUN_STARTED"
RUN_FINISHED: Final = "RUN_FINISHED"
RUN_ERROR: Final = "RUN_ERROR"
STEP_STARTED: Final = "STEP_STARTED"
STEP_FINISHED: Final = "STEP_FINISHED"
REASONING_START: Final = "REASONING_START"
REASONING_MESSAGE_START: Final = "REASONING_MESSAGE_START"
REASONING_MESSAGE_CONTENT: Final = "REASONING_MESSAGE_CONTENT"
REASONING_MESSAGE_END: Final = "REASONING_MESSAGE_END"
REASONING_MESSAGE_CHUNK: Final = "REASONING_MESSAGE_CHUNK"
REASONING_END: Final = "REASONING_END"
REASONING_ENCRYPTED_VALUE: Final = "REASONING_ENCRYPTED_VALUE"
SUBAGENT_STARTED: Final = "SUBAGENT_STARTED"
SUBAGENT_FINISHED: Final = "SUBAGENT_FINISHED"
SUBAGENT_ERROR: Final = "SUBAGENT_ERROR"

# Pre-1.0 names still emitted by some runtimes; accepted so old agents work.
THINKING_START: Final = "THINKING_START"
THINKING_END: Final = "THINKING_END"
THINKING_TEXT_MESSAGE_START: Final = "THINKING_TEXT_MESSAGE_START"
THINKING_TEXT_MESSAGE_CONTENT: Final = "THINKING_TEXT_MESSAGE_CONTENT"
THINKING_TEXT_MESSAGE_END: Final = "THINKING_TEXT_MESSAGE_END"

# type -> {field: kind}; kinds: "id" (non-empty str), "str", "list", "dict",
# "any" (present, any JSON value), "str|list".  Optional fields are checked
# for type only when present.
_REQUIRED: Final[dict[str, dict[str, str]]] = {
    TEXT_MESSAGE_START: {"messageId": "id"},
    TEXT_MESSAGE_CONTENT: {"messageId": "id", "delta": "str"},
    TEXT_MESSAGE_END: {"messageId": "id"},
    TEXT_MESSAGE_CHUNK: {},
    TOOL_CALL_START: {"toolCallId": "id", "toolCallName": "str"},
    TOOL_CALL_ARGS: {"toolCallId": "id", "delta": "str"},
    TOOL_CALL_END: {"toolCallId": "id"},
    TOOL_CALL_CHUNK: {},
    TOOL_CALL_RESULT: {"messageId": "id", "toolCallId": "id", "content": "str|list"},
    STATE_SNAPSHOT: {"snapshot": "any"},
    STATE_DELTA: {"delta": "list"},
    MESSAGES_SNAPSHOT: {"messages": "list"},
    ACTIVITY_SNAPSHOT: {"messageId": "id", "activityType": "str", "content": "dict"},
    ACTIVITY_DELTA: {"messageId": "id", "activityType": "str", "patch": "list"},
    RAW: {"event": "any"},
    CUSTOM: {"name": "str", "value": "any"},
    RUN_STARTED: {"threadId": "id", "runId": "id"},
    RUN_FINISHED: {"threadId": "id", "runId": "id"},
    RUN_ERROR: {"message": "str"},
    STEP_STARTED: {"stepName": "str"},
    STEP_FINISHED: {"stepName": "str"},
    REASONING_START: {"messageId": "id"},
    REASONING_MESSAGE_START: {"messageId": "id"},
    REASONING_MESSAGE_CONTENT: {"messageId": "id", "delta": "str"},
    REASONING_MESSAGE_END: {"messageId": "id"},
    REASONING_MESSAGE_CHUNK: {},
    REASONING_END: {"messageId": "id"},
    REASONING_ENCRYPTED_VALUE: {"subtype": "str", "entityId": "id", "encryptedValue": "str"},
    SUBAGENT_STARTED: {"subagentRunId": "id", "name": "str"},
    SUBAGENT_FINISHED: {"subagentRunId": "id"},
    SUBAGENT_ERROR: {"subagentRunId": "id", "message": "str"},
    THINKING_START: {},
    THINKING_END: {},
    THINKING_TEXT_MESSAGE_START: {},
    THINKING_TEXT_MESSAGE_CONTENT: {"delta": "str"},
    THINKING_TEXT_MESSAGE_END: {},
}

_OPTIONAL: Final[dict[str, str]] = {
    "messageId": "id",
    "toolCallId": "id",
    "delta": "str",
    "role": "str",
    "name": "str",
    "parentMessageId": "str",
    "toolCallName": "str",
    "subagentRunId": "str",
    "parentRunId": "str",
    "protocolVersion": "str",
    "code": "str",
    "timestamp": "int",
    "metadata": "dict",
}

# Closed value sets of the AG-UI 1.0 models (ag_ui._generated.models).
_MESSAGE_ROLES: Final = frozenset({"developer", "system", "assistant", "user"})
_ENUMS: Final[dict[tuple[str, str], frozenset[str]]] = {
    ("TEXT_MESSAGE_START", "role"): _MESSAGE_ROLES,
    ("TEXT_MESSAGE_CHUNK", "role"): _MESSAGE_ROLES,
    ("REASONING_MESSAGE_START", "role"): frozenset({"reasoning"}),
    ("TOOL_CALL_RESULT", "role"): frozenset({"tool"}),
    ("REASONING_ENCRYPTED_VALUE", "subtype"): frozenset({"tool-call", "message"}),
}
_SNAPSHOT_ROLES: Final = frozenset(
    {"developer", "system", "assistant", "user", "tool", "activity", "reasoning"}
)
# RFC 6902 operations as AG-UI types them: op -> extra required member.
_PATCH_OPS: Final[dict[str, str | None]] = {
    "add": "value", "replace": "value", "test": "value",
    "remove": None, "move": "from", "copy": "from",
}

LEGACY_TYPES: Final = frozenset(
    {
        THINKING_START,
        THINKING_END,
        THINKING_TEXT_MESSAGE_START,
        THINKING_TEXT_MESSAGE_CONTENT,
        THINKING_TEXT_MESSAGE_END,
    }
)
EVENT_TYPES: Final = frozenset(_REQUIRED) - LEGACY_TYPES

# Events after which the pacer must stop animating and show everything before
# them: the server has declared that segment complete (anchors §1).
BARRIER_TYPES: Final = frozenset(
    {
        TEXT_MESSAGE_END,
        REASONING_END,
        REASONING_MESSAGE_END,
        STATE_SNAPSHOT,
        MESSAGES_SNAPSHOT,
        RUN_FINISHED,
        RUN_ERROR,
        THINKING_END,
        THINKING_TEXT_MESSAGE_END,
    }
)
RUN_TERMINAL_TYPES: Final = frozenset({RUN_FINISHED, RUN_ERROR})

# Types whose non-empty delta may be revealed gradually.  Whether a given
# TEXT_MESSAGE_* event is paced also depends on its message's role (user echoes
# are atomic), which only a stateful consumer knows: see is_paced_candidate.
PACED_CONTENT_TYPES: Final = frozenset(
    {TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_CHUNK, REASONING_MESSAGE_CONTENT}
)


# Events after which a session's paced text pauses for a while: a tool call
# runs before the model writes again (the pacer winds down what is queued
# before it instead of running dry at full speed).
SOURCE_PAUSE_TYPES: Final = frozenset({TOOL_CALL_START})


class EventError(ValueError):
    """An event that is not valid AG-UI 1.0; the message names the field."""


def brief(value: Any, limit: int = 40) -> str:
    """A value for an error message: a short excerpt, never a whole (huge) repr."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
    if isinstance(value, dict):
        return f"an object of {len(value)} members"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    if isinstance(value, (bool, float)) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value) if value.bit_length() <= 64 else "a very large integer"
    return type(value).__name__


def _check_kind(etype: str, field: str, value: Any, kind: str) -> None:
    where = f"{etype}.{field}"
    if kind == "id":
        if not isinstance(value, str):
            raise EventError(f"{where}: must be a string, got {type(value).__name__}")
        if not value:
            raise EventError(f"{where}: must be a non-empty string")
    elif kind == "str":
        if not isinstance(value, str):
            raise EventError(f"{where}: must be a string, got {type(value).__name__}")
    elif kind == "list":
        if not isinstance(value, list):
            raise EventError(f"{where}: must be an array, got {type(value).__name__}")
    elif kind == "dict":
        if not isinstance(value, dict):
            raise EventError(f"{where}: must be an object, got {type(value).__name__}")
    elif kind == "int":
        # JSON numbers: AG-UI timestamps are integers (ms); 5.0 is accepted as 5.
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ):
            raise EventError(f"{where}: must be an integer, got {brief(value)}")
    elif kind == "str|list" and not isinstance(value, (str, list)):
        raise EventError(f"{where}: must be a string or an array, got {type(value).__name__}")


def _objects(where: str, items: list[Any], what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, item) for each item of an array that must hold objects."""
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise EventError(f"{at}: must be a {what} object")
        yield at, item


def _check_patch(where: str, ops: list[Any]) -> None:
    for at, op in _objects(where, ops, "JSON Patch operation"):
        name = op.get("op")
        if not isinstance(name, str) or name not in _PATCH_OPS:
            raise EventError(
                f"{at}.op: must be one of {sorted(_PATCH_OPS)}, got {brief(name)}")
        if not isinstance(op.get("path"), str):
            raise EventError(f"{at}.path: required string is missing")
        extra = _PATCH_OPS[name]
        if extra == "value" and "value" not in op:
            raise EventError(f"{at}.value: required for {name!r}")
        if extra == "from" and not isinstance(op.get("from"), str):
            raise EventError(f"{at}.from: required string for {name!r}")


def _check_messages(where: str, messages: list[Any]) -> None:
    for at, msg in _objects(where, messages, "message"):
        if not isinstance(msg.get("id"), str):
            raise EventError(f"{at}.id: required string is missing")
        if msg.get("role") not in _SNAPSHOT_ROLES:
            raise EventError(f"{at}.role: must be one of {sorted(_SNAPSHOT_ROLES)}")


def _check_bounds(event: Mapping[str, Any], etype: str) -> None:
    """The whole event is JSON within the bounds of one event.

    json.loads turns "\\ud83d" escapes into lone surrogates; they cannot be
    encoded to UTF-8 or rendered, so they are refused here too.  An agent
    function's dicts may hold anything: non-JSON values are refused.
    """
    try:
        measure(event if isinstance(event, dict) else dict(event), max_size=MAX_EVENT_SIZE,
                max_nodes=MAX_EVENT_NODES, max_depth=MAX_EVENT_DEPTH, path=etype)
    except JsonValueError as exc:
        if exc.reason == "too_deep":
            raise EventError(f"{exc.path}: nested deeper than {MAX_EVENT_DEPTH} levels "
                             "(counting the event)") from None
        raise EventError(str(exc)) from None


def validate_event(event: Any) -> dict[str, Any]:
    """Check a decoded event; return it unchanged or raise EventError."""
    if not isinstance(event, Mapping):
        raise EventError(f"event: must be a JSON object, got {type(event).__name__}")
    etype = event.get("type")
    if not isinstance(etype, str):
        raise EventError("type: missing or not a string")
    required = _REQUIRED.get(etype)
    if required is None:
        raise EventError(f"type: unknown event type {brief(etype)}")
    _check_bounds(event, etype)
    for field, kind in required.items():
        if field not in event:
            raise EventError(f"{etype}.{field}: required field is missing")
        _check_kind(etype, field, event[field], kind)
    for field, kind in _OPTIONAL.items():
        if field not in required and event.get(field) is not None:
            _check_kind(etype, field, event[field], kind)
    for (enum_type, field), allowed in _ENUMS.items():
        if enum_type == etype and event.get(field) is not None and event[field] not in allowed:
            raise EventError(
                f"{etype}.{field}: must be one of {sorted(allowed)}, got {brief(event[field])}"
            )
    if etype == STATE_DELTA:
        _check_patch(f"{etype}.delta", event["delta"])
    elif etype == ACTIVITY_DELTA:
        _check_patch(f"{etype}.patch", event["patch"])
    elif etype == MESSAGES_SNAPSHOT:
        _check_messages(f"{etype}.messages", event["messages"])
    return event if isinstance(event, dict) else dict(event)


def _loads(text: str, max_depth: int) -> Any:
    if not isinstance(text, str):
        raise EventError(f"input: must be str, got {type(text).__name__}")
    try:
        return bounded_loads(text, max_bytes=MAX_EVENT_BYTES, max_depth=max_depth)
    except JsonLimitError as exc:
        raise EventError(f"json: {exc}") from None


def parse_event(text: str) -> dict[str, Any]:
    """Decode and validate one JSON-encoded AG-UI event."""
    return validate_event(_loads(text, MAX_EVENT_DEPTH))


def parse_batch(text: str) -> list[dict[str, Any]]:
    """Decode and validate a JSON array of events; all valid or EventError.

    The error names the index of the first bad event so the caller can report
    it; nothing from an invalid batch is returned.
    """
    data = _loads(text, MAX_EVENT_DEPTH + 1)
    if not isinstance(data, list):
        raise EventError(f"batch: must be a JSON array, got {type(data).__name__}")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(data):
        try:
            out.append(validate_event(item))
        except EventError as exc:
            raise EventError(f"[{i}] {exc}") from None
    return out


def is_barrier(event: Mapping[str, Any]) -> bool:
    return event.get("type") in BARRIER_TYPES


def is_run_terminal(event: Mapping[str, Any]) -> bool:
    return event.get("type") in RUN_TERMINAL_TYPES


def is_paced_candidate(event: Mapping[str, Any]) -> bool:
    """A content event with visible text; the role check is the caller's."""
    if event.get("type") not in PACED_CONTENT_TYPES:
        return False
    delta = event.get("delta")
    return isinstance(delta, str) and delta != ""
