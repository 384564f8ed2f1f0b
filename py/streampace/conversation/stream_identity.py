"""Stream identity: which item of the conversation an AG-UI event belongs to,
and what it does to it.

Decided here and nowhere else: delivery compaction, the scheduler, the
transcript reducer, run framing and the page simulation all read this table
and the tracker below, so they cannot disagree about chunk continuation or
nesting (h11's rule: everything that moves the state machine in one module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from .event_schema import (
    ACTIVITY_DELTA,
    ACTIVITY_SNAPSHOT,
    RAW,
    REASONING_ENCRYPTED_VALUE,
    REASONING_END,
    REASONING_MESSAGE_CHUNK,
    REASONING_MESSAGE_CONTENT,
    REASONING_MESSAGE_END,
    REASONING_MESSAGE_START,
    REASONING_START,
    RUN_STARTED,
    RUN_TERMINAL_TYPES,
    STEP_FINISHED,
    STEP_STARTED,
    TEXT_MESSAGE_CHUNK,
    TEXT_MESSAGE_CONTENT,
    TEXT_MESSAGE_END,
    TEXT_MESSAGE_START,
    THINKING_END,
    THINKING_START,
    THINKING_TEXT_MESSAGE_CONTENT,
    THINKING_TEXT_MESSAGE_END,
    THINKING_TEXT_MESSAGE_START,
    TOOL_CALL_ARGS,
    TOOL_CALL_CHUNK,
    TOOL_CALL_END,
    TOOL_CALL_START,
)

__all__ = [
    "Stream",
    "Step",
    "StreamRole",
    "StreamTracker",
    "STREAM_ROLES",
    "KIND_EVENTS",
    "CONTENT_TYPES",
    "CHUNK_TYPES",
    "MESSAGE",
    "REASONING",
    "REASONING_PHASE",
    "TOOL_CALL",
    "STEP",
    "THINKING",
    "THINKING_PHASE",
    "OPEN",
    "CONTENT",
    "CLOSE",
    "CHUNK",
]

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
        if hot is not None and hot[0] is role and event.get(role.id_field or "") == hot[1]:
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
