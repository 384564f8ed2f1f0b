"""The conversation an AG-UI event stream describes: one reducer for every view.

``Transcript.apply(events)`` folds events into items in timeline order
(messages, reasoning, tool calls with their results), the run status and the
shared state.  Which item an event belongs to (chunk continuation, legacy
thinking ids, what a run end closes) comes from :class:`events.StreamTracker`,
so this model and everything else in the package agree on it.

Views over it:

- the page's live model (:mod:`streampace.conversation.live_state` reports what each batch
  changed, for the renderer);
- ``as_messages()``: AG-UI messages (what MESSAGES_SNAPSHOT carries and what an
  upstream agent or model gets as history);
- ``snapshot_events()``: what brings a viewer with no history to the current
  position, re-opening the items still streaming so the rest of the run stays
  well nested for that viewer (AG-UI puts only completed messages in a
  MESSAGES_SNAPSHOT, so a re-opened item comes after the completed ones: if an
  item completed while an earlier one was still streaming, which our sources
  never do, a late viewer shows the two in the other order);
- ``texts()``: visible text per message id (tests and benchmarks).

Cost: O(events + delta text).  Text is kept as a list of parts and joined only
when read, so a long answer never gets re-concatenated per delta.  With
``max_messages`` / ``max_bytes`` the completed items are kept within bounds
(oldest dropped first, whole, at the end of each run); the run in progress is
never trimmed.

Protocol anomalies never raise.  Each is counted (``anomalies``), described in
``anomaly_log`` and handled by one fixed rule, chosen so that no received text
is ever dropped:

- content / args / END for an unknown id: content and args create the item
  implicitly (message role "assistant", reasoning, or a tool call without a
  name) and are applied; END for an unknown id is ignored.
- content or args after the item's END: appended anyway (the item stays
  ended); a second END is ignored.
- duplicate START for a known id: ignored (text, role and state kept).
- a STATE_DELTA patch that does not apply, or a state event over the state's
  bounds (``json_patch.StateLimits``): the state stays as it was (patches are
  atomic, and a costly one stops within its bounds).
- unknown event types, non-dict events, missing/mistyped ids: ignored.

Items restored from MESSAGES_SNAPSHOT count as ended, but may be resumed
without an anomaly: a reconnect snapshot can arrive while a message is still
streaming, so START/content for a snapshot item reopens it.  So may a
chunk-built item that another event ended (AG-UI ends a chunk stream at the
next other event; a chunk for it later continues it).  Open items are ended
when the run finishes or fails.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from streampace.conversation import events as ev
from streampace.conversation.events import Stream
from streampace.conversation.json_patch import DEFAULT_STATE_LIMITS, JsonPatchError, StateLimits
from streampace.conversation.shared_state import SharedState

__all__ = [
    "ItemRef",
    "MessageItem",
    "ReasoningItem",
    "RunInfo",
    "ToolCallItem",
    "Transcript",
]

MESSAGE: Literal["message"] = "message"
REASONING: Literal["reasoning"] = "reasoning"
TOOL_CALL: Literal["tool_call"] = "tool_call"

RunStatus = Literal["idle", "running", "finished", "error"]

# A timeline item is named the way events.py names streams: (kind, id).
ItemRef = Stream

# Tracker kind -> the item kind that holds its text (legacy thinking is reasoning).
_ITEM_KIND = {ev.MESSAGE: MESSAGE, ev.REASONING: REASONING, ev.THINKING: REASONING,
              ev.TOOL_CALL: TOOL_CALL}
_RUN_BOUNDARIES = ev.RUN_TERMINAL_TYPES | {ev.RUN_STARTED}
_OVERHEAD_BYTES = 64  # ids, role and structure of one message, roughly


class _Text:
    """Append-only text: O(1) append, joined lazily once per read."""

    __slots__ = ("_parts",)

    def __init__(self, initial: str = "") -> None:
        self._parts: list[str] = [initial] if initial else []

    def append(self, piece: str) -> None:
        self._parts.append(piece)

    def get(self) -> str:
        parts = self._parts
        if len(parts) > 1:
            self._parts = parts = ["".join(parts)]
        return parts[0] if parts else ""


@dataclass(eq=False)
class _Item:
    id: str
    ended: bool = False
    # "snapshot": restored from MESSAGES_SNAPSHOT; "chunk": a chunk stream ended by
    # another event.  Both may be resumed without an anomaly.
    source: Literal["stream", "snapshot", "chunk"] = "stream"
    seq: int = 0  # creation order, shared with tool results (for as_messages())
    _ended_by_event: bool = field(default=False, repr=False)
    _ref: Any = field(default=None, repr=False)  # ItemRef, made once (a ref per delta adds up)

    @property
    def ref(self) -> ItemRef:
        ref = self._ref
        if ref is None:
            ref = self._ref = ItemRef(self.kind, self.id)  # type: ignore[attr-defined]
        return ref


@dataclass(eq=False)
class MessageItem(_Item):
    role: str = "assistant"
    name: str | None = None
    raw: dict[str, Any] | None = None  # the snapshot message, for non-text content
    _text: _Text = field(default_factory=_Text, repr=False)
    kind: str = MESSAGE

    @property
    def text(self) -> str:
        return self._text.get()


@dataclass(eq=False)
class ReasoningItem(MessageItem):
    role: str = "reasoning"
    kind: str = REASONING


@dataclass(eq=False)
class ToolCallItem(_Item):
    name: str | None = None
    parent_message_id: str | None = None
    result: Any = None  # TOOL_CALL_RESULT content (str or list); None until known
    result_message_id: str | None = None
    result_seq: int = 0
    _args: _Text = field(default_factory=_Text, repr=False)
    kind: str = TOOL_CALL

    @property
    def args(self) -> str:
        """Accumulated argument text (usually JSON, possibly still incomplete)."""
        return self._args.get()


Item = MessageItem | ReasoningItem | ToolCallItem


@dataclass
class RunInfo:
    status: RunStatus = "idle"
    error: str | None = None
    error_code: str | None = None
    thread_id: str | None = None
    run_id: str | None = None


class Observer:
    """Told about every change; the base ignores them (LiveState records them)."""

    run_status = False
    state = False
    reset = False
    anomalies = 0

    def create(self, ref: ItemRef) -> None: ...

    def append(self, ref: ItemRef, text: str) -> None: ...

    def end(self, ref: ItemRef) -> None: ...

    def update(self, ref: ItemRef) -> None: ...

    def clear_items(self) -> None: ...


def _str_id(event: Mapping[str, Any], name: str) -> str | None:
    value = event.get(name)
    return value if isinstance(value, str) and value else None


def _content_text(content: Any) -> str:
    """Visible text of an AG-UI message content (str, or a list of input parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))


class Transcript:
    """The reducer; see the module docstring for the rules and the views."""

    def __init__(self, max_messages: int | None = None, max_bytes: int | None = None,
                 anomaly_log_size: int = 50,
                 state_limits: StateLimits = DEFAULT_STATE_LIMITS) -> None:
        if (max_messages is not None and max_messages < 1) or (
                max_bytes is not None and max_bytes < 1):
            raise ValueError("history limits must be >= 1")
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.timeline: list[ItemRef] = []
        self.messages: dict[str, MessageItem] = {}
        self.reasoning: dict[str, ReasoningItem] = {}
        self.tool_calls: dict[str, ToolCallItem] = {}
        self.run = RunInfo()
        self.state: Any = {}  # = self.shared_state.value
        self.shared_state = SharedState(self.state, state_limits)
        self.anomalies = 0
        self.anomaly_log: deque[str] = deque(maxlen=anomaly_log_size)
        self.trimmed = 0  # messages dropped to stay within the bounds
        self.tracker = ev.StreamTracker(taken=lambda ident: ident in self.reasoning)
        self._open: dict[ItemRef, None] = {}  # items not yet ended, for O(open) run end
        self._seq = 0
        self._obs: Observer = Observer()
        # (stream, item, type) of the last content appended; see apply_event.
        self._hot: tuple[Stream, MessageItem, str] | None = None

    # -- reading --------------------------------------------------------------

    @property
    def status(self) -> RunStatus:
        return self.run.status

    def item(self, ref: ItemRef) -> Item:
        """The item for a timeline ref (KeyError if unknown)."""
        if ref.kind == TOOL_CALL:
            return self.tool_calls[ref.id]
        if ref.kind == REASONING:
            return self.reasoning[ref.id]
        return self.messages[ref.id]

    def items(self) -> list[Item]:
        return [self.item(ref) for ref in self.timeline]

    # -- applying ---------------------------------------------------------------

    def apply(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Fold events in order."""
        if isinstance(events, Mapping):
            raise TypeError("apply() takes a list of events; apply_event() takes one")
        for event in events:
            self.apply_event(event)

    def apply_event(self, event: Mapping[str, Any]) -> None:
        hot = self._hot
        if hot is not None and type(event) is dict and event.get("type") == hot[2]:
            # More content for the item the last event appended to: the common case,
            # kept to a tracker lookup and an append.
            step = self.tracker.step(event)
            item = hot[1]
            delta = event.get("delta")
            if (step.stream is hot[0] and not step.closed and type(delta) is str
                    and not item.ended):
                if delta:
                    item._text.append(delta)
                    self._obs.append(item.ref, delta)
                return
            self._hot = None
            self._apply_step(event, step)
            return
        self._hot = None
        if not isinstance(event, Mapping):
            self._anomaly(f"event is not an object: {type(event).__name__}")
            return
        self._apply_step(event, None)

    def _apply_step(self, event: Mapping[str, Any], step: ev.Step | None) -> None:
        etype = event.get("type")
        role = ev.STREAM_ROLES.get(etype) if isinstance(etype, str) else None
        handler = None if role is not None else (
            _HANDLERS.get(etype) if isinstance(etype, str) else None)
        if role is None and handler is None and etype not in _IGNORED:
            self._anomaly(f"unknown event type {etype!r}")
            return
        try:
            if step is None:
                step = self.tracker.step(event)
            for stream in step.closed:
                self._end_stream(stream, chunk=etype not in _RUN_BOUNDARIES)
            if role is not None:
                self._stream_event(event, role, step)
            elif handler is not None:
                handler(self, event)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            # Handlers validate what they read; this is the last line of
            # defence so one malformed event cannot take the page down.
            self._anomaly(f"{etype}: malformed event ignored ({exc!r})")

    def _anomaly(self, what: str) -> None:
        self.anomalies += 1
        self._obs.anomalies += 1
        self.anomaly_log.append(what)

    # -- items ------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _add(self, item: Item) -> None:
        ref = item.ref
        item.seq = self._next_seq()
        self.timeline.append(ref)
        if not item.ended:
            self._open[ref] = None
        self._obs.create(ref)

    def _end(self, item: Item, *, by_event: bool) -> None:
        if item.ended:
            return
        item.ended = True
        item._ended_by_event = by_event
        self._open.pop(item.ref, None)
        self._obs.end(item.ref)

    def _end_stream(self, stream: Stream, *, chunk: bool) -> None:
        """An item the tracker closed implicitly: a chunk stream's end, or the run's."""
        kind = _ITEM_KIND.get(stream.kind)
        item = self._find(kind, stream.id) if kind is not None else None
        if item is None:
            return
        if chunk:
            item.source = "chunk"
        self._end(item, by_event=chunk)

    def _find(self, kind: str, ident: str) -> Item | None:
        if kind == TOOL_CALL:
            return self.tool_calls.get(ident)
        return self._text_store(kind).get(ident)

    def _reopen_if_resumable(self, item: Item) -> bool:
        """Resume a snapshot or chunk item; True if it was one (so no anomaly)."""
        if item.source == "stream":
            return False
        item.source = "stream"
        if item.ended:
            item.ended = False
            item._ended_by_event = False
            self._open[item.ref] = None
            self._obs.update(item.ref)
        return True

    def _text_store(self, kind: str) -> dict[str, Any]:
        return self.reasoning if kind == REASONING else self.messages

    def _stream_event(self, event: Mapping[str, Any], role: ev.StreamRole,
                      step: ev.Step) -> None:
        etype = event["type"]
        kind = _ITEM_KIND.get(role.kind)
        if kind is None:
            return  # steps and reasoning phases: only the tracker keeps them
        stream = step.stream
        if stream is None:
            if step.phase == ev.CONTENT and role.phase == ev.CHUNK:
                self._anomaly(f"{etype}: no {role.id_field} and no open chunk stream")
            else:
                self._anomaly(f"{etype}: missing {role.id_field or 'open item'}")
            return
        delta = event.get("delta")
        if delta is not None and not isinstance(delta, str):
            self._anomaly(f"{etype}: delta must be a string")
            return
        if role.phase == ev.CONTENT and delta is None:
            self._anomaly(f"{etype}: missing delta")
            return
        if kind == TOOL_CALL:
            self._tool_event(event, stream.id, step.phase, delta)
            return
        if step.phase == ev.OPEN:
            self._start_text(kind, stream.id, event, chunk=role.phase == ev.CHUNK)
        elif step.phase == ev.CLOSE:
            item = self._text_store(kind).get(stream.id)
            if item is None:
                self._anomaly(f"{etype}: unknown {kind} {stream.id!r}; ignored")
            else:
                self._end_by_event(item, etype, stream.id)
            return
        if delta is not None:
            item = self._append_text(kind, stream.id, delta, etype)
            if role.phase == ev.CONTENT and role.id_field is not None and not item.ended:
                self._hot = (stream, item, etype)

    def _end_by_event(self, item: Item, etype: str, ident: str | None) -> None:
        """An END event for a known item: a second END is an anomaly."""
        if item.ended and item._ended_by_event:
            self._anomaly(f"{etype}: {ident!r} already ended")
            return
        item.source = "stream"
        self._end(item, by_event=True)
        item._ended_by_event = True  # also when it was already ended by snapshot/run end

    def _new_text_item(self, kind: str, mid: str, role: str | None = None,
                       name: str | None = None) -> MessageItem:
        if kind == REASONING:
            item: MessageItem = ReasoningItem(id=mid)
        else:
            item = MessageItem(id=mid, role=role or "assistant", name=name)
        self._text_store(kind)[mid] = item
        self._add(item)
        return item

    def _start_text(self, kind: str, mid: str, event: Mapping[str, Any], *,
                    chunk: bool) -> None:
        existing = self._text_store(kind).get(mid)
        if existing is not None:
            if not self._reopen_if_resumable(existing) and not chunk:
                self._anomaly(f"{event['type']}: duplicate start for {mid!r} ignored")
            return
        role = event.get("role")
        name = event.get("name")
        self._new_text_item(
            kind, mid, role if isinstance(role, str) and role else None,
            name if isinstance(name, str) else None,
        )

    def _append_text(self, kind: str, mid: str, delta: str, etype: str) -> MessageItem:
        item = self._text_store(kind).get(mid)
        if item is None:
            self._anomaly(f"{etype}: unknown {kind} {mid!r}; created implicitly")
            item = self._new_text_item(kind, mid)
        elif item.ended and not self._reopen_if_resumable(item):
            self._anomaly(f"{etype}: content for {mid!r} after its end")
        if delta:
            item._text.append(delta)
            self._obs.append(item.ref, delta)
        return item

    # -- tool calls -------------------------------------------------------------

    def _new_tool(self, tid: str, name: str | None, parent: str | None) -> ToolCallItem:
        item = ToolCallItem(id=tid, name=name, parent_message_id=parent)
        self.tool_calls[tid] = item
        self._add(item)
        return item

    def _tool_event(self, event: Mapping[str, Any], tid: str, phase: str | None,
                    delta: str | None) -> None:
        etype = event["type"]
        chunk = etype == ev.TOOL_CALL_CHUNK
        item = self.tool_calls.get(tid)
        if phase == ev.CLOSE:
            if item is None:
                self._anomaly(f"{etype}: unknown tool call {tid!r}; ignored")
            else:
                self._end_by_event(item, etype, tid)
            return
        name = event.get("toolCallName")
        name = name if isinstance(name, str) and name else None
        if phase == ev.OPEN:
            if item is None:
                item = self._new_tool(tid, name, _str_id(event, "parentMessageId"))
            elif not self._reopen_if_resumable(item) and not chunk:
                self._anomaly(f"{etype}: duplicate start for {tid!r} ignored")
                return
        if item is None:
            self._anomaly(f"{etype}: unknown tool call {tid!r}; created implicitly")
            item = self._new_tool(tid, None, None)
        elif item.ended and not self._reopen_if_resumable(item):
            self._anomaly(f"{etype}: args for {tid!r} after its end")
        if chunk and name is not None and item.name is None:
            item.name = name
            self._obs.update(item.ref)
        if delta:
            item._args.append(delta)
            self._obs.append(item.ref, delta)

    def _tool_result(self, event: Mapping[str, Any]) -> None:
        tid = _str_id(event, "toolCallId")
        if tid is None:
            self._anomaly("TOOL_CALL_RESULT: missing toolCallId")
            return
        item = self.tool_calls.get(tid)
        if item is None:
            self._anomaly(f"TOOL_CALL_RESULT: unknown tool call {tid!r}; created implicitly")
            item = self._new_tool(tid, None, None)
        item.result = event.get("content")
        item.result_message_id = _str_id(event, "messageId")
        item.result_seq = self._next_seq()
        self._obs.update(item.ref)

    # -- run, state, snapshots --------------------------------------------------

    def _run_started(self, event: Mapping[str, Any]) -> None:
        self.run = RunInfo(
            status="running",
            thread_id=_str_id(event, "threadId") or self.run.thread_id,
            run_id=_str_id(event, "runId"),
        )
        self._obs.run_status = True

    def _run_ended(self, event: Mapping[str, Any]) -> None:
        # Whatever is still open cannot receive more: show it as complete.
        for ref in list(self._open):
            self._end(self.item(ref), by_event=False)
        if event["type"] == ev.RUN_ERROR:
            message = event.get("message")
            code = event.get("code")
            self.run.status = "error"
            self.run.error = message if isinstance(message, str) else "unknown error"
            self.run.error_code = code if isinstance(code, str) else None
        else:
            self.run.status = "finished"
        self._obs.run_status = True
        self._trim()

    def _state_snapshot(self, event: Mapping[str, Any]) -> None:
        self._apply_state(event)

    def _state_delta(self, event: Mapping[str, Any]) -> None:
        self._apply_state(event)

    def _apply_state(self, event: Mapping[str, Any]) -> None:
        # Shared, not copied: nothing mutates the state (json_patch is copy-on-write).
        try:
            self.shared_state.apply(event)
        except JsonPatchError as exc:
            self._anomaly(f"{event['type']}: refused, state unchanged: {exc}")
            return
        self.state = self.shared_state.value
        self._obs.state = True

    def _messages_snapshot(self, event: Mapping[str, Any]) -> None:
        messages = event.get("messages")
        if not isinstance(messages, list):
            self._anomaly("MESSAGES_SNAPSHOT: messages must be an array")
            return
        self.timeline = []
        self.messages = {}
        self.reasoning = {}
        self.tool_calls = {}
        self._open = {}
        self._hot = None
        # The tracker keeps what is open: items still streaming are re-opened by
        # the events that follow a reconnect snapshot (or continue, upstream).
        obs = self._obs
        obs.clear_items()
        obs.reset = True
        for index, msg in enumerate(messages):
            mid = _str_id(msg, "id") if isinstance(msg, dict) else None
            if mid is None:
                self._anomaly(f"MESSAGES_SNAPSHOT: message [{index}] has no id; skipped")
                continue
            self._restore(msg, mid)
        # Only what happened after the reset is reported item by item.
        obs.clear_items()
        self._trim()

    def _restore(self, msg: dict[str, Any], mid: str) -> None:
        role = msg.get("role")
        if role == "tool":
            tid = _str_id(msg, "toolCallId")
            if tid is None:
                self._anomaly(f"MESSAGES_SNAPSHOT: tool message {mid!r} has no toolCallId")
                return
            tool = self.tool_calls.get(tid)
            if tool is None:
                tool = ToolCallItem(id=tid, ended=True, source="snapshot")
                self.tool_calls[tid] = tool
                self._add(tool)
            tool.result = msg.get("content")
            tool.result_message_id = mid
            tool.result_seq = self._next_seq()
            return
        kind = REASONING if role == "reasoning" else MESSAGE
        store = self._text_store(kind)
        if mid in store:
            self._anomaly(f"MESSAGES_SNAPSHOT: duplicate message id {mid!r}; skipped")
            return
        name = msg.get("name")
        if kind == REASONING:
            item: MessageItem = ReasoningItem(id=mid, ended=True, source="snapshot", raw=msg)
        else:
            item = MessageItem(
                id=mid, ended=True, source="snapshot", raw=msg,
                role=role if isinstance(role, str) and role else "assistant",
                name=name if isinstance(name, str) else None,
            )
        item._text = _Text(_content_text(msg.get("content")))
        calls = msg.get("toolCalls")
        # An empty assistant message that only carries tool calls is not shown: a live
        # viewer saw just the tool calls (their TOOL_CALL_START named no message), so
        # the restored view shows just them too.
        if not (kind == MESSAGE and not item.text and isinstance(calls, list) and calls):
            store[mid] = item
            self._add(item)
        if not isinstance(calls, list):
            return
        for call in calls:
            tid = _str_id(call, "id") if isinstance(call, dict) else None
            if tid is None or tid in self.tool_calls:
                self._anomaly(f"MESSAGES_SNAPSHOT: bad or duplicate tool call in {mid!r}")
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            name = function.get("name")
            arguments = function.get("arguments")
            # A holder message named after the call itself stands for "no parent"
            # (that is how as_messages() writes a parentless call).
            tool = ToolCallItem(
                id=tid, ended=True, source="snapshot",
                parent_message_id=None if mid == tid else mid,
                name=name if isinstance(name, str) and name else None,
            )
            tool._args = _Text(arguments if isinstance(arguments, str) else "")
            self.tool_calls[tid] = tool
            self._add(tool)

    # -- bounds -----------------------------------------------------------------

    def _item_bytes(self, item: Item) -> int:
        if isinstance(item, ToolCallItem):
            size = _utf8_len(item.args)
            if isinstance(item.result, str):
                size += _utf8_len(item.result) + _OVERHEAD_BYTES
            return size
        return _utf8_len(item.text) + _OVERHEAD_BYTES

    def _trim(self) -> None:
        """Drop the oldest completed items until both bounds hold."""
        if self.max_messages is None and self.max_bytes is None:
            return
        max_messages = self.max_messages or 1 << 62
        max_bytes = self.max_bytes or 1 << 62
        items = self.items()
        count = len(items)
        total = sum(self._item_bytes(i) for i in items)
        if count <= max_messages and total <= max_bytes:
            return
        self._hot = None
        dropped: set[str] = set()
        keep_from = len(items)
        for index, item in enumerate(items):
            over = count > max_messages or total > max_bytes
            # A tool call whose message went goes too: alone it would be restored
            # under a holder message a live viewer never saw.
            orphan = isinstance(item, ToolCallItem) and item.parent_message_id in dropped
            if not (over or orphan) or item.ref in self._open:
                keep_from = index
                break
            count -= 1
            total -= self._item_bytes(item)
            store = self.tool_calls if item.kind == TOOL_CALL else self._text_store(item.kind)
            store.pop(item.id, None)
            if item.kind == MESSAGE:
                dropped.add(item.id)
            self.trimmed += 1
        self.timeline = self.timeline[keep_from:]

    # -- views ------------------------------------------------------------------

    def texts(self) -> dict[str, str]:
        """Visible text per message / reasoning id, in timeline order."""
        return {ref.id: self.item(ref).text for ref in self.timeline if ref.kind != TOOL_CALL}

    def as_messages(self, exclude: Iterable[Stream] = ()) -> list[dict[str, Any]]:
        """The conversation as AG-UI messages, oldest first.

        A tool call goes into its parent assistant message's ``toolCalls``; a
        call without a known parent gets an assistant message of its own, with
        the parent's id or else the call's (as AG-UI's client does).  Items in
        ``exclude`` (kind, id as the tracker names them) are left out.
        """
        skip = {(_ITEM_KIND.get(s.kind), s.id) for s in exclude}
        out: list[dict[str, Any]] = []
        assistants: dict[str, dict[str, Any] | None] = {}
        results: list[tuple[int, dict[str, Any]]] = []
        for ref in self.timeline:
            item = self.item(ref)
            while results and results[0][0] < item.seq:
                out.append(results.pop(0)[1])
            if (ref.kind, ref.id) in skip:
                continue
            if isinstance(item, ToolCallItem):
                self._place_call(item, out, assistants)
                if item.result_message_id is not None:
                    results.append((item.result_seq, _tool_message(item)))
                    results.sort(key=lambda pair: pair[0])
                continue
            msg = _text_message(item)
            out.append(msg)
            if item.kind == MESSAGE:
                # Only an assistant message can carry tool calls; another role's id
                # is taken, so a call naming it as parent gets a holder of its own.
                assistants[item.id] = msg if msg.get("role") == "assistant" else None
        out.extend(msg for _seq, msg in results)
        return out

    @staticmethod
    def _place_call(item: ToolCallItem, out: list[dict[str, Any]],
                    assistants: dict[str, dict[str, Any] | None]) -> None:
        call = {"id": item.id, "type": "function",
                "function": {"name": item.name or "", "arguments": item.args}}
        holder_id = item.parent_message_id or item.id
        if holder_id in assistants and assistants[holder_id] is None:
            holder_id = item.id
        holder = assistants.get(holder_id)
        if holder is None:
            holder = assistants[holder_id] = {"id": holder_id, "role": "assistant"}
            out.append(holder)
        holder.setdefault("toolCalls", []).append(call)

    def history(self) -> list[dict[str, Any]]:
        """Completed messages, for an upstream's input (RunAgentInput.messages)."""
        return self.as_messages(exclude=self.tracker.open)

    def snapshot_events(self) -> list[dict[str, Any]]:
        """Events that bring a viewer with no history to the current position."""
        open_streams = self.tracker.open
        snap = [
            {"type": ev.MESSAGES_SNAPSHOT, "messages": self.as_messages(exclude=open_streams)},
            {"type": ev.STATE_SNAPSHOT, "snapshot": self.state},
        ]
        if self.run.status != "running":
            return snap
        out: list[dict[str, Any]] = [
            {"type": ev.RUN_STARTED, "threadId": self.run.thread_id, "runId": self.run.run_id},
            *snap,
        ]
        chunk = self.tracker.chunk_stream
        for stream in open_streams:
            if stream != chunk:
                out.extend(self._reopen(stream))
        if chunk is not None:
            # Last: any other event after it would end the chunk stream again, and
            # later id-less chunks must find it open.
            out.extend(self._reopen(chunk))
        return out

    def closing_events(self) -> list[dict[str, Any]]:
        """END events for what is open, innermost first (the run's own ending aside)."""
        out: list[dict[str, Any]] = []
        for stream in reversed(self.tracker.open):
            _start, end, field_name = ev.KIND_EVENTS[stream.kind]
            if stream == self.tracker.chunk_stream:
                continue  # a chunk stream has no END of its own: the next event ends it
            out.append({"type": end} if field_name is None else
                       {"type": end, field_name: stream.id})
        return out

    def _reopen(self, stream: Stream) -> list[dict[str, Any]]:
        details = self.tracker.details(stream)
        start_type, _end, field_name = ev.KIND_EVENTS[stream.kind]
        kind = _ITEM_KIND.get(stream.kind)
        item = self._find(kind, stream.id) if kind is not None else None
        if kind is None or item is None:
            if field_name is None:
                return [{"type": start_type}]
            return [{"type": start_type, field_name: stream.id}]
        text = item.args if isinstance(item, ToolCallItem) else item.text
        if stream == self.tracker.chunk_stream:
            chunk: dict[str, Any] = {"type": ev.CHUNK_TYPES[stream.kind], field_name: stream.id}
            chunk.update(_wire_details(stream.kind, item, details))
            if text:
                chunk["delta"] = text
            return [chunk]
        start: dict[str, Any] = {"type": start_type}
        if field_name is not None:
            start[field_name] = stream.id
        start.update(_wire_details(stream.kind, item, details))
        content = ev.CONTENT_TYPES[stream.kind]
        out = [start]
        if text:
            rest: dict[str, Any] = {"type": content, "delta": text}
            if field_name is not None:
                rest[field_name] = stream.id
            out.append(rest)
        if isinstance(item, ToolCallItem) and item.result_message_id is not None:
            # A result may come before its call's END; it left with the snapshot.
            out.append({"type": ev.TOOL_CALL_RESULT, "messageId": item.result_message_id,
                        "toolCallId": item.id, "content": item.result})
        return out


def _wire_details(kind: str, item: Item, details: dict[str, Any]) -> dict[str, Any]:
    """The START / first-chunk fields that re-open ``item`` as it was opened."""
    if isinstance(item, ToolCallItem):
        out: dict[str, Any] = {"toolCallName": item.name or details.get("name") or ""}
        if item.parent_message_id:
            out["parentMessageId"] = item.parent_message_id
        return out
    if kind == ev.MESSAGE:
        out = {"role": item.role}
        if item.name:
            out["name"] = item.name
        return out
    if kind == ev.REASONING:
        return {"role": "reasoning"}
    return {}


def _text_message(item: MessageItem) -> dict[str, Any]:
    if item.raw is not None and item.source == "snapshot":
        # Restored and never resumed: exactly what the snapshot said (list content,
        # activity messages...), tool calls aside: their items re-attach them.
        msg = {k: v for k, v in item.raw.items() if k != "toolCalls"}
        return msg
    msg = {"id": item.id, "role": item.role, "content": item.text}
    if item.name:
        msg["name"] = item.name
    return msg


def _tool_message(item: ToolCallItem) -> dict[str, Any]:
    content = item.result
    return {
        "id": item.result_message_id,
        "role": "tool",
        "content": content if isinstance(content, str) else json.dumps(content),
        "toolCallId": item.id,
    }


_HANDLERS: dict[str, Any] = {
    ev.TOOL_CALL_RESULT: Transcript._tool_result,
    ev.RUN_STARTED: Transcript._run_started,
    ev.RUN_FINISHED: Transcript._run_ended,
    ev.RUN_ERROR: Transcript._run_ended,
    ev.STATE_SNAPSHOT: Transcript._state_snapshot,
    ev.STATE_DELTA: Transcript._state_delta,
    ev.MESSAGES_SNAPSHOT: Transcript._messages_snapshot,
}

# Valid events that carry nothing this model keeps.
_IGNORED = frozenset(
    {
        ev.REASONING_ENCRYPTED_VALUE,
        ev.ACTIVITY_SNAPSHOT,
        ev.ACTIVITY_DELTA,
        ev.RAW,
        ev.CUSTOM,
        ev.SUBAGENT_STARTED,
        ev.SUBAGENT_FINISHED,
        ev.SUBAGENT_ERROR,
    }
)
