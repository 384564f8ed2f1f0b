"""Make every run a viewer sees a well-formed AG-UI run, whatever the source does.

Sources are untrusted (a remote agent, a model endpoint, a file).  The framer
sits between a source and the session log: it validates each event, makes sure
the run opens with RUN_STARTED followed by the user's message, refuses events
that break nesting, and on any ending (normal, upstream failure, cancel,
shutdown) closes what is still open before the single terminal event.

It also holds the session's shared state as of the run's start and applies each
STATE_SNAPSHOT / STATE_DELTA to it, within ``json_patch.StateLimits``, *before*
the event is logged: an event over those bounds ends the run with RUN_ERROR
``state_too_large`` and is never logged, so no viewer and no store ever has to
apply it.  A patch that merely does not apply (a missing path, a failed
``test``) is logged as sent; every transcript, with the same limits and the
same code, notes it and keeps its state, so all of them stay equal.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from streampace.bounded_json import JsonLimitError
from streampace.bounded_json import loads as bounded_loads
from streampace.conversation import events as ev
from streampace.conversation.json_patch import (
    DEFAULT_STATE_LIMITS,
    JsonPatchError,
    JsonPatchLimitError,
    StateLimits,
)
from streampace.conversation.shared_state import STATE_EVENTS, SharedState
from streampace.lifecycle import Machine, table

__all__ = ["FRAME_TABLE", "FrameEvent", "FrameState", "RunFramer", "UpstreamError",
           "upstream_json_object", "STATE_TOO_LARGE", "UPSTREAM_PROTOCOL_ERROR",
           "MAX_UPSTREAM_EVENT_BYTES"]

# RUN_ERROR codes the framer chooses (docs/security.md, docs/protocol.md).
UPSTREAM_PROTOCOL_ERROR = "upstream_protocol_error"  # not a valid AG-UI event / stream
STATE_TOO_LARGE = "state_too_large"  # a state event over StateLimits: refused before logging
# One upstream event as JSON text (an SSE event's data, an agent's JSON string):
# parsing it costs the server's loop ~30-80 ms at worst (bench/attack.py); a
# bigger answer arrives in more events.
MAX_UPSTREAM_EVENT_BYTES = 1024 * 1024


class UpstreamError(Exception):
    """A source failed; ``code`` becomes the RUN_ERROR code viewers see."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def upstream_json_object(text: str, not_json: str, not_object: str,
                         max_bytes: int = MAX_UPSTREAM_EVENT_BYTES) -> dict[str, Any]:
    """``text`` parsed as a JSON object, within the bounds of one event (bytes and
    depth); anything else is an upstream protocol error."""
    try:
        value = bounded_loads(text, max_bytes=max_bytes, max_depth=ev.MAX_EVENT_DEPTH,
                              max_values=ev.MAX_EVENT_NODES)
    except JsonLimitError as exc:
        if exc.reason == "bad_json":
            raise UpstreamError(UPSTREAM_PROTOCOL_ERROR, not_json) from None
        raise UpstreamError(UPSTREAM_PROTOCOL_ERROR, f"upstream event refused: {exc}") from None
    if not isinstance(value, dict):
        raise UpstreamError(UPSTREAM_PROTOCOL_ERROR, not_object)
    return value


# What opens, fills and closes each kind of item comes from events.py's one
# table.  The framer checks nesting for the kinds with an explicit START/END and
# an id (messages, reasoning phases and messages, tool calls, steps); chunks and
# legacy THINKING_* pass through (they carry no nesting of their own to check).
# START type -> (kind, id field, END type)
_OPENERS = {start: (kind, id_field, end)
            for kind, (start, end, id_field) in ev.KIND_EVENTS.items() if id_field is not None}
_CLOSERS = {end: (kind, id_field) for kind, id_field, end in _OPENERS.values()}
_CONTENT = {etype: (role.kind, role.id_field) for etype, role in ev.STREAM_ROLES.items()
            if role.phase == ev.CONTENT and role.id_field is not None}
# Longest delta one logged event carries.  A 10 MB upstream delta becomes many
# events, so the session log can drop its oldest part, each viewer's batches and
# outbound queue stay bounded, and no per-viewer 10 MB JSON string is built.
MAX_EVENT_DELTA = 16_384
_SPLITTABLE = frozenset({ev.TEXT_MESSAGE_CONTENT, ev.REASONING_MESSAGE_CONTENT,
                         ev.TOOL_CALL_ARGS})

# Longest argument text of one tool call.  Its parts are kept until the call
# ends so the END can be checked (the arguments must parse), and that parse
# builds the whole value: bounding the text bounds both (a 4 MiB argument text
# is far past any tool's; it ends the run with a clear error instead).
MAX_TOOL_ARGS_CHARS = 4 * 1024 * 1024

_ONCE = frozenset({ev.MESSAGE, ev.REASONING, ev.TOOL_CALL})  # ids that name one item of a run
_END_TYPE = {kind: (field, end) for kind, field, end in _OPENERS.values()}


class _ToolArgs:
    """An open tool call's argument text so far."""

    __slots__ = ("chars", "parts")

    def __init__(self) -> None:
        self.chars = 0
        self.parts: list[str] = []


class FrameState(Enum):
    WAITING = "waiting"  # nothing framed yet: RUN_STARTED and the prompt come first
    OPEN = "open"  # the run is open: events are checked against what is open
    DONE = "done"  # its terminal event is framed: later events are dropped


class FrameEvent(Enum):
    START = "start"  # RUN_STARTED (the source's or ours) and the prompt's message framed
    UNDO_START = "undo_start"  # the event that opened the run was refused
    END = "end"  # a terminal event framed (the source's, or a RUN_ERROR of ours)


FRAME_TABLE = table(FrameState, FrameEvent, """
WAITING  START       OPEN     the first event opens the run (ours when it is not RUN_STARTED)
OPEN     UNDO_START  WAITING  the first event was refused before anything was returned:
                              finish() opens the run again
OPEN     END         DONE     RUN_FINISHED or RUN_ERROR: everything open was closed first
""")


class RunFramer:
    def __init__(self, thread_id: str, run_id: str, prompt: str, validate: bool = True, *,
                 state: SharedState | Any = None,
                 state_limits: StateLimits = DEFAULT_STATE_LIMITS) -> None:
        """``state``: the session's shared state when the run starts, as the
        transcript's ``shared_state`` (taken as is) or a plain value (measured);
        the run's state events are checked against it."""
        self.validate = validate  # False only for our own simulated model
        self.thread_id = thread_id
        self.run_id = run_id
        self.prompt = prompt
        self._frames: Machine[FrameState, FrameEvent] = Machine(
            "framer", FRAME_TABLE, FrameState.WAITING)
        self.failure: UpstreamError | None = None  # why feed_group ended the run
        self._open: dict[tuple[str, str], None] = {}  # insertion-ordered set
        # Argument text of open tool calls: a TOOL_CALL_END is only ever sent for
        # arguments that parse as JSON (ag-ui-validate AGUI204).
        self._args: dict[str, _ToolArgs] = {}
        self._ended: set[tuple[str, str]] = set()  # ids may not be reused in a run (AGUI104)
        self.state = SharedState(None, state_limits)
        self.use_state(state)

    @property
    def phase(self) -> FrameState:
        return self._frames.state

    @property
    def done(self) -> bool:
        """The run's terminal event is framed: the source has nothing more to give."""
        return self._frames.state is FrameState.DONE

    def use_state(self, state: SharedState | Any) -> None:
        """The session's shared state as the run starts (a transcript's
        ``shared_state``, taken as is, or a plain value, measured): the run's
        state events are checked against it.  Call it before the first event."""
        self.state = (state.copy() if isinstance(state, SharedState)
                      else SharedState(state, self.state.limits))

    def _start(self, event: dict[str, Any] | None) -> list[dict[str, Any]]:
        self._frames.step(FrameEvent.START)
        if event is None:
            event = {"type": ev.RUN_STARTED, "threadId": self.thread_id, "runId": self.run_id}
        else:
            event = self._own_ids(event)
        mid = f"{self.run_id}-user"
        return [
            event,
            {"type": ev.TEXT_MESSAGE_START, "messageId": mid, "role": "user"},
            {"type": ev.TEXT_MESSAGE_CONTENT, "messageId": mid, "delta": self.prompt},
            {"type": ev.TEXT_MESSAGE_END, "messageId": mid},
        ]

    def _args_parse(self, tool_call_id: str) -> bool:
        args = self._args.get(tool_call_id)
        if args is None or not args.parts:
            return True  # a tool without arguments
        try:
            # Length bounded as the parts arrive (MAX_TOOL_ARGS_CHARS), depth here.
            bounded_loads("".join(args.parts), max_bytes=4 * MAX_TOOL_ARGS_CHARS,
                          max_depth=ev.MAX_EVENT_DEPTH)
        except JsonLimitError:
            return False
        return True

    def _close_open(self) -> list[dict[str, Any]]:
        """Close everything open, innermost first.

        A tool call cut off mid-arguments (stall, cancel, upstream error) stays
        open: its END would claim arguments that do not parse.  The RUN_ERROR
        that always follows ends it (AG-UI treats what is open at RUN_ERROR as
        the failure's debris).
        """
        out = []
        for kind, ident in reversed(list(self._open)):
            if kind == ev.TOOL_CALL and not self._args_parse(ident):
                continue
            field, end = _END_TYPE[kind]
            out.append({"type": end, field: ident})
        self._open.clear()
        self._args.clear()
        return out

    def _own_ids(self, event: dict[str, Any]) -> dict[str, Any]:
        """The session's threadId / runId on an upstream's RUN_STARTED / RUN_FINISHED.

        Viewers, the conversation and the next run's input all key on these, so an
        upstream may not choose them (docs/protocol.md: threadId = session id).
        """
        if event.get("threadId") == self.thread_id and event.get("runId") == self.run_id:
            return event
        return {**event, "threadId": self.thread_id, "runId": self.run_id}

    def feed_group(self, group: list[Any]) -> list[dict[str, Any]]:
        """Events to log for one group of source events, never raising for bad input.

        An invalid event ends the run right there (``failure`` says why): what
        was framed before it in the same group is kept, then everything open is
        closed and RUN_ERROR follows, so viewers never see an END whose START
        was thrown away.
        """
        out: list[dict[str, Any]] = []
        for event in group:
            try:
                out.extend(_split_large(self.feed(event)))
            except UpstreamError as exc:
                self.failure = exc
                out.extend(self.finish(exc.code, exc.message))
            if self.done:
                break
        return out

    def feed(self, event: Any) -> list[dict[str, Any]]:
        """Events to log for one source event; raises UpstreamError if it is invalid."""
        frames = self._frames.state
        if frames is FrameState.DONE:
            return []
        if self.validate:
            try:
                event = ev.validate_event(event)
            except ev.EventError as exc:
                raise UpstreamError(
                    UPSTREAM_PROTOCOL_ERROR, f"invalid AG-UI event: {exc}"
                ) from None
        t = event["type"]
        out: list[dict[str, Any]] = []
        if frames is FrameState.WAITING:
            if t == ev.RUN_STARTED:
                return self._start(event)
            out.extend(self._start(None))
            try:
                return out + self._frame(event, t)
            except UpstreamError:
                self._frames.step(FrameEvent.UNDO_START)
                raise
        if t == ev.RUN_STARTED:
            raise UpstreamError("upstream_protocol_error", "RUN_STARTED inside a running run")
        return self._frame(event, t)

    def _check_state(self, event: dict[str, Any], t: str) -> None:
        """Apply a state event to the run's copy of the state; UpstreamError if it
        is over the state's bounds (nothing changed then)."""
        try:
            self.state.apply(event)
        except JsonPatchLimitError as exc:
            raise UpstreamError(STATE_TOO_LARGE, f"{t} refused: {exc}") from None
        except JsonPatchError:
            pass  # does not apply: logged as sent, and every transcript keeps its state

    def _frame(self, event: dict[str, Any], t: str) -> list[dict[str, Any]]:
        """One valid event of a started run; raises before changing anything if it is refused."""
        out: list[dict[str, Any]] = []
        if t in STATE_EVENTS:
            self._check_state(event, t)
        if t in ev.RUN_TERMINAL_TYPES:
            if t == ev.RUN_FINISHED:
                for kind, ident in self._open:
                    if kind == ev.TOOL_CALL and not self._args_parse(ident):
                        raise UpstreamError(
                            "upstream_protocol_error",
                            f"run finished with tool call {ident!r} cut off mid-arguments",
                        )
            out.extend(self._close_open())
            out.append(self._own_ids(event) if t == ev.RUN_FINISHED else event)
            self._frames.step(FrameEvent.END)
            return out
        if t in _OPENERS:
            kind, field, _ = _OPENERS[t]
            key = (kind, event[field])
            if key in self._open or (kind in _ONCE and key in self._ended):
                raise UpstreamError("upstream_protocol_error", f"{t} for {event[field]!r} twice")
            self._open[key] = None
        elif t in _CLOSERS:
            kind, field = _CLOSERS[t]
            key = (kind, event[field])
            if key not in self._open:
                raise UpstreamError(
                    "upstream_protocol_error", f"{t} for {event[field]!r} that is not open"
                )
            if kind == ev.TOOL_CALL and not self._args_parse(event[field]):
                raise UpstreamError(
                    "upstream_protocol_error",
                    f"tool call {event[field]!r} ended with arguments that are not JSON",
                )
            del self._open[key]
            if kind in _ONCE:
                self._ended.add(key)
            if kind == ev.TOOL_CALL:
                self._args.pop(event[field], None)
        elif t in _CONTENT:
            kind, field = _CONTENT[t]
            if (kind, event[field]) not in self._open:
                raise UpstreamError(
                    "upstream_protocol_error", f"{t} for {event[field]!r} that is not open"
                )
            if kind == ev.TOOL_CALL and isinstance(event.get("delta"), str):
                self._keep_args(event[field], event["delta"])
        out.append(event)
        return out

    def _keep_args(self, tool_call_id: str, delta: str) -> None:
        args = self._args.setdefault(tool_call_id, _ToolArgs())
        if args.chars + len(delta) > MAX_TOOL_ARGS_CHARS:
            raise UpstreamError(
                "upstream_protocol_error",
                f"tool call {tool_call_id!r}: arguments over {MAX_TOOL_ARGS_CHARS} characters",
            )
        args.chars += len(delta)
        args.parts.append(delta)

    def finish(self, code: str, message: str) -> list[dict[str, Any]]:
        """End the run with RUN_ERROR (if not ended yet), closing what is open."""
        if self.done:
            return []
        out = self._start(None) if self._frames.state is FrameState.WAITING else []
        out.extend(self._close_open())
        out.append({"type": ev.RUN_ERROR, "message": message, "code": code})
        self._frames.step(FrameEvent.END)
        return out


def _split_large(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cut deltas longer than MAX_EVENT_DELTA into consecutive events (lossless)."""
    if not any(
        e["type"] in _SPLITTABLE and len(e.get("delta") or "") > MAX_EVENT_DELTA for e in events
    ):
        return events
    out: list[dict[str, Any]] = []
    for e in events:
        delta = e.get("delta")
        if e["type"] in _SPLITTABLE and isinstance(delta, str) and len(delta) > MAX_EVENT_DELTA:
            out.extend({**e, "delta": delta[i:i + MAX_EVENT_DELTA]}
                       for i in range(0, len(delta), MAX_EVENT_DELTA))
        else:
            out.append(e)
    return out
