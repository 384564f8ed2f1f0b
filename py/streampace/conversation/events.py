"""AG-UI 1.0 events as plain dicts: type names, validation and pacing classes.

Events stay in their JSON wire shape (camelCase keys) end to end, so what the
scheduler delivers is exactly what the server sent; this module only says what
is valid and how the pacer must treat each type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, NamedTuple

__all__ = [
    "EventError",
    "EVENT_TYPES",
    "LEGACY_TYPES",
    "BARRIER_TYPES",
    "RUN_TERMINAL_TYPES",
    "PACED_CONTENT_TYPES",
    "parse_event",
    "parse_batch",
    "validate_event",
    "is_barrier",
    "is_run_terminal",
    "is_paced_candidate",
    "Stream",
    "Step",
    "StreamRole",
    "StreamTracker",
    "STREAM_ROLES",
    "KIND_EVENTS",
    "CONTENT_TYPES",
    "CHUNK_TYPES",
]

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


class EventError(ValueError):
    """An event that is not valid AG-UI 1.0; the message names the field."""


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
            raise EventError(f"{where}: must be an integer, got {value!r}")
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
        if name not in _PATCH_OPS:
            raise EventError(f"{at}.op: must be one of {sorted(_PATCH_OPS)}, got {name!r}")
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


def _reject_lone_surrogates(value: Any, path: str) -> None:
    # json.loads turns "\ud83d" escapes into lone surrogates; they cannot be
    # encoded to UTF-8 or rendered, so they are refused at the door.
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise EventError(
                f"{path}: contains a lone surrogate at index {exc.start}"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _reject_lone_surrogates(key, path)
            _reject_lone_surrogates(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _reject_lone_surrogates(item, f"{path}[{i}]")


def validate_event(event: Any) -> dict[str, Any]:
    """Check a decoded event; return it unchanged or raise EventError."""
    if not isinstance(event, Mapping):
        raise EventError(f"event: must be a JSON object, got {type(event).__name__}")
    etype = event.get("type")
    if not isinstance(etype, str):
        raise EventError("type: missing or not a string")
    required = _REQUIRED.get(etype)
    if required is None:
        raise EventError(f"type: unknown event type {etype!r}")
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
                f"{etype}.{field}: must be one of {sorted(allowed)}, got {event[field]!r}"
            )
    if etype == STATE_DELTA:
        _check_patch(f"{etype}.delta", event["delta"])
    elif etype == ACTIVITY_DELTA:
        _check_patch(f"{etype}.patch", event["patch"])
    elif etype == MESSAGES_SNAPSHOT:
        _check_messages(f"{etype}.messages", event["messages"])
    _reject_lone_surrogates(dict(event), etype)
    return event if isinstance(event, dict) else dict(event)


def _loads(text: str) -> Any:
    if not isinstance(text, str):
        raise EventError(f"input: must be str, got {type(text).__name__}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventError(f"json: invalid JSON ({exc.msg} at position {exc.pos})") from None


def parse_event(text: str) -> dict[str, Any]:
    """Decode and validate one JSON-encoded AG-UI event."""
    return validate_event(_loads(text))


def parse_batch(text: str) -> list[dict[str, Any]]:
    """Decode and validate a JSON array of events; all valid or EventError.

    The error names the index of the first bad event so the caller can report
    it; nothing from an invalid batch is returned.
    """
    data = _loads(text)
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


# -- stream identity -------------------------------------------------------------
#
# Which item of the conversation an event belongs to, and what it does to it,
# is decided here and nowhere else: delivery compaction, the scheduler, the
# transcript reducer, run framing and the page simulation all read this table
# and the tracker below, so they cannot disagree about chunk continuation or
# nesting (h11's rule: everything that moves the state machine in one module).

# Item kinds.  Message and tool-call ids live in separate spaces, and so do a
# reasoning phase (REASONING_START/END) and the reasoning message inside it,
# which often share one id.
MESSAGE: Final = "message"
REASONING: Final = "reasoning"
REASONING_PHASE: Final = "reasoning_phase"
TOOL_CALL: Final = "tool_call"
STEP: Final = "step"
THINKING: Final = "thinking"  # pre-1.0 reasoning message: no id on the wire
THINKING_PHASE: Final = "thinking_phase"

# What an event does to its item.  CHUNK is the wire form only: the tracker
# resolves each chunk to OPEN (it starts an item) or CONTENT (it continues one).
OPEN: Final = "open"
CONTENT: Final = "content"
CLOSE: Final = "close"
CHUNK: Final = "chunk"


class StreamRole(NamedTuple):
    """An event type's place in the item model: kind, id field (None: no id), phase."""

    kind: str
    id_field: str | None
    phase: str


STREAM_ROLES: Final[dict[str, StreamRole]] = {
    TEXT_MESSAGE_START: StreamRole(MESSAGE, "messageId", OPEN),
    TEXT_MESSAGE_CONTENT: StreamRole(MESSAGE, "messageId", CONTENT),
    TEXT_MESSAGE_END: StreamRole(MESSAGE, "messageId", CLOSE),
    TEXT_MESSAGE_CHUNK: StreamRole(MESSAGE, "messageId", CHUNK),
    REASONING_START: StreamRole(REASONING_PHASE, "messageId", OPEN),
    REASONING_END: StreamRole(REASONING_PHASE, "messageId", CLOSE),
    REASONING_MESSAGE_START: StreamRole(REASONING, "messageId", OPEN),
    REASONING_MESSAGE_CONTENT: StreamRole(REASONING, "messageId", CONTENT),
    REASONING_MESSAGE_END: StreamRole(REASONING, "messageId", CLOSE),
    REASONING_MESSAGE_CHUNK: StreamRole(REASONING, "messageId", CHUNK),
    TOOL_CALL_START: StreamRole(TOOL_CALL, "toolCallId", OPEN),
    TOOL_CALL_ARGS: StreamRole(TOOL_CALL, "toolCallId", CONTENT),
    TOOL_CALL_END: StreamRole(TOOL_CALL, "toolCallId", CLOSE),
    TOOL_CALL_CHUNK: StreamRole(TOOL_CALL, "toolCallId", CHUNK),
    STEP_STARTED: StreamRole(STEP, "stepName", OPEN),
    STEP_FINISHED: StreamRole(STEP, "stepName", CLOSE),
    THINKING_START: StreamRole(THINKING_PHASE, None, OPEN),
    THINKING_END: StreamRole(THINKING_PHASE, None, CLOSE),
    THINKING_TEXT_MESSAGE_START: StreamRole(THINKING, None, OPEN),
    THINKING_TEXT_MESSAGE_CONTENT: StreamRole(THINKING, None, CONTENT),
    THINKING_TEXT_MESSAGE_END: StreamRole(THINKING, None, CLOSE),
}
# kind -> (START type, END type, id field): what opens and closes each kind.
KIND_EVENTS: Final[dict[str, tuple[str, str, str | None]]] = {
    role.kind: (start, end, role.id_field)
    for start, role in STREAM_ROLES.items() if role.phase == OPEN
    for end, closing in STREAM_ROLES.items()
    if closing.kind == role.kind and closing.phase == CLOSE
}
# kind -> its CONTENT type, for kinds with text.
CONTENT_TYPES: Final[dict[str, str]] = {
    role.kind: etype for etype, role in STREAM_ROLES.items() if role.phase == CONTENT
}
CHUNK_TYPES: Final[dict[str, str]] = {
    role.kind: etype for etype, role in STREAM_ROLES.items() if role.phase == CHUNK
}

# Events that leave an open chunk-built item open.  Every other event closes it:
# AG-UI's client turns chunks into START/CONTENT/END and ends the pending item
# at the next event that is not a chunk of it, except these side channels.
_CHUNK_TRANSPARENT: Final = frozenset(
    {RAW, ACTIVITY_SNAPSHOT, ACTIVITY_DELTA, REASONING_ENCRYPTED_VALUE}
)


class Stream(NamedTuple):
    """One item of the conversation: its kind and id."""

    kind: str
    id: str


class Step(NamedTuple):
    """What one event does, as the tracker resolved it.

    ``stream`` is None for events that belong to no item (run, state,
    snapshots...) and for a chunk or content whose item cannot be told (an
    id-less chunk with no chunk stream before it).  ``closed`` lists the items
    this event ends implicitly *before* it applies: the chunk-built item that a
    different event ends, or everything still open at the end of a run.
    """

    stream: Stream | None
    phase: str | None
    closed: tuple[Stream, ...] = ()


_NO_STEP: Final = Step(None, None)


def _event_id(event: Mapping[str, Any], field: str | None) -> str | None:
    if field is None:
        return None
    value = event.get(field)
    return value if isinstance(value, str) and value else None


class StreamTracker:
    """Open items of a session, and the one rule for id-less chunks.

    ``step(event)`` resolves the event's item (chunk continuation, legacy
    thinking ids) and updates the set of open items; ``open`` lists them in
    opening order with the details later views need (role, name, parent).
    The tracker never raises: out-of-order input resolves to the most useful
    item, and what to make of it (anomaly, refusal) is the consumer's call.

    Chunk rule (AG-UI 1.0): a chunk with an id starts that item unless it is
    the item the chunk stream is on; a chunk without an id continues the chunk
    stream of its kind.  Beyond AG-UI, so no text is lost: an id-less chunk
    after its stream was ended by another event goes back to that stream's
    last item (AG-UI's client would reject it).
    """

    __slots__ = ("open", "taken", "_chunk", "_last_chunk", "_thinking", "_thinking_count",
                 "_hot")

    def __init__(self, taken: Callable[[str], bool] | None = None) -> None:
        # ``taken(id)``: an id already in use, which a generated thinking id must avoid
        # (after a snapshot restore, "thinking-1" may already exist).
        self.taken = taken
        self.open: dict[Stream, dict[str, Any]] = {}
        self._chunk: Stream | None = None  # the chunk-built item now open
        self._last_chunk: dict[str, str] = {}  # kind -> id of its latest chunk item
        self._thinking: str | None = None  # the open legacy thinking message
        self._thinking_count = 0
        # The last content step, reused while the next events are content of the
        # same item (most events are): (role, id, step).  Any other event clears
        # it, so a reused step is always what the slow path would return.
        self._hot: tuple[StreamRole, str, Step] | None = None

    @property
    def chunk_stream(self) -> Stream | None:
        """The chunk-built item still open (at most one), if any."""
        return self._chunk

    def details(self, stream: Stream) -> dict[str, Any]:
        """Role / name / parent recorded when ``stream`` opened ({} if not open)."""
        return self.open.get(stream) or {}

    def reset(self) -> None:
        """Forget what is open (``end_all`` without the chunk history)."""
        self._hot = None
        self.open.clear()
        self._chunk = None
        self._thinking = None

    def end_all(self) -> tuple[Stream, ...]:
        """Close everything (a run's start or end); returns what was open, in opening order."""
        closed = tuple(self.open)
        self.reset()
        self._last_chunk.clear()
        return closed

    def step(self, event: Mapping[str, Any]) -> Step:
        etype = event.get("type")
        role = STREAM_ROLES.get(etype) if isinstance(etype, str) else None
        hot = self._hot
        if hot is not None and hot[0] is role and event.get(role.id_field) == hot[1]:
            return hot[2]
        self._hot = None
        if role is None:
            if etype in RUN_TERMINAL_TYPES or etype == RUN_STARTED:
                # Nothing outlives its run (a new run starts with nothing open).
                closed = self.end_all()
                return Step(None, None, closed) if closed else _NO_STEP
            if etype in _CHUNK_TRANSPARENT or self._chunk is None:
                return _NO_STEP
            return Step(None, None, self._end_chunk())
        if role.phase == CHUNK:
            return self._chunk_step(role.kind, _event_id(event, role.id_field), event)
        closed = self._end_chunk() if self._chunk is not None else ()
        if role.kind == THINKING:
            stream = self._thinking_stream(role.phase)
            if stream is None:
                return Step(None, role.phase, closed)
        elif role.id_field is None:  # THINKING_START/END: one phase at a time
            stream = Stream(role.kind, "thinking")
        else:
            ident = _event_id(event, role.id_field)
            if ident is None:
                return Step(None, role.phase, closed)
            stream = Stream(role.kind, ident)
        if role.phase == OPEN:
            if stream not in self.open:
                self.open[stream] = _details(event)
        elif role.phase == CONTENT:
            if stream not in self.open and role.kind != THINKING:
                # Content with no START before it: the item exists from here on
                # and stays open until its END or the run's end, like any other.
                self.open[stream] = {}
            step = Step(stream, CONTENT, closed)
            if role.id_field is not None:
                self._hot = (role, stream.id, Step(stream, CONTENT) if closed else step)
            return step
        elif role.phase == CLOSE:
            self.open.pop(stream, None)
        return Step(stream, role.phase, closed)

    def _end_chunk(self) -> tuple[Stream, ...]:
        stream, self._chunk = self._chunk, None
        if stream is None or self.open.pop(stream, None) is None:
            return ()
        return (stream,)

    def _chunk_step(self, kind: str, ident: str | None, event: Mapping[str, Any]) -> Step:
        current = self._chunk
        if ident is None:
            if current is not None and current.kind == kind:
                return Step(current, CONTENT)
            last = self._last_chunk.get(kind)
            if last is None:
                return Step(None, CONTENT)
            ident = last
        stream = Stream(kind, ident)
        if stream == current:
            return Step(stream, CONTENT)
        closed = self._end_chunk() if current is not None else ()
        self._last_chunk[kind] = ident
        if stream in self.open:
            # Chunks for an item a START opened are just its content.
            return Step(stream, CONTENT, closed)
        self.open[stream] = _details(event)
        self._chunk = stream
        return Step(stream, OPEN, closed)

    def _thinking_stream(self, phase: str) -> Stream | None:
        if phase == OPEN or (self._thinking is None and phase == CONTENT):
            # Legacy thinking messages carry no id: number them.  Content with
            # none open starts one too (its consumer sees content for a new item).
            self._thinking_count += 1
            ident = f"thinking-{self._thinking_count}"
            while self.taken is not None and self.taken(ident):
                self._thinking_count += 1
                ident = f"thinking-{self._thinking_count}"
            self._thinking = ident
        elif self._thinking is None:
            return None
        stream = Stream(THINKING, self._thinking)
        if phase == CLOSE:
            self._thinking = None
        return stream


def _details(event: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for src, dst in (("role", "role"), ("name", "name"), ("toolCallName", "name"),
                     ("parentMessageId", "parent")):
        value = event.get(src)
        if isinstance(value, str) and value:
            out[dst] = value
    return out
