"""Live view model of one AG-UI session, updated batch by batch.

``LiveState.apply(events)`` folds a batch (what the pacing scheduler delivers
in one frame) into messages, reasoning, tool calls, run status and shared
state, and returns a :class:`Changes` that tells a renderer exactly which DOM
nodes to touch: new items in timeline order, the literal strings appended to
each existing item (ready for ``Text.appendData``), ended items, updated
items, tool calls, run status, state, or a full reset after a snapshot.

Cost: O(events + delta text) per batch.  Text is kept as a list of parts and
joined only when read (``item.text``), so a long answer never gets
re-concatenated per delta.

Protocol anomalies never raise.  Each is counted (``LiveState.anomalies``,
``Changes.anomalies``), described in ``LiveState.anomaly_log`` and handled by
one fixed rule, chosen so that no received text is ever dropped:

- content / args / END for an unknown id: content and args create the item
  implicitly (message role "assistant", reasoning, or a tool call without a
  name) and are applied; END for an unknown id is ignored.
- content or args after the item's END: appended anyway (the item stays
  ended); a second END is ignored.
- duplicate START for a known id: ignored (text, role and state kept).
- an invalid STATE_DELTA patch: the state stays as it was (patches are atomic).
- unknown event types, non-dict events, missing/mistyped ids: ignored.

Items restored from MESSAGES_SNAPSHOT count as ended, but may be resumed
without an anomaly: a reconnect snapshot can arrive while a message is still
streaming, so START/content for a snapshot item reopens it.  Open items are
ended (reported in ``Changes.ended``) when the run finishes or fails.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from streampace import events as ev
from streampace.json_patch import JsonPatchError, apply_patch

__all__ = [
    "Changes",
    "ItemRef",
    "LiveState",
    "MessageItem",
    "ReasoningItem",
    "RunInfo",
    "ToolCallItem",
]

MESSAGE: Literal["message"] = "message"
REASONING: Literal["reasoning"] = "reasoning"
TOOL_CALL: Literal["tool_call"] = "tool_call"

RunStatus = Literal["idle", "running", "finished", "error"]


class ItemRef(NamedTuple):
    """Identifies a timeline item; message and tool-call ids live in separate spaces."""

    kind: str  # "message" | "reasoning" | "tool_call"
    id: str


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
    # "snapshot" items were restored from MESSAGES_SNAPSHOT and may be resumed.
    source: Literal["stream", "snapshot"] = "stream"
    _ended_by_event: bool = field(default=False, repr=False)


@dataclass(eq=False)
class MessageItem(_Item):
    role: str = "assistant"
    name: str | None = None
    raw: dict[str, Any] | None = None  # the snapshot message, for non-text content
    _text: _Text = field(default_factory=_Text, repr=False)
    kind: str = MESSAGE

    @property
    def ref(self) -> ItemRef:
        return ItemRef(self.kind, self.id)

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
    _args: _Text = field(default_factory=_Text, repr=False)
    kind: str = TOOL_CALL

    @property
    def ref(self) -> ItemRef:
        return ItemRef(TOOL_CALL, self.id)

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


@dataclass
class Changes:
    """What one ``apply`` changed.

    Renderer contract:
    - ``reset``: the item set was replaced (MESSAGES_SNAPSHOT): rebuild every
      item node from ``state.timeline``; the item lists below then only hold
      what happened after the last reset and can be ignored.
    - ``created``: new items, in timeline order (always appended at the end of
      the timeline).  Render each from its current state (``state.item(ref)``,
      full text included); they do not appear in ``appended``/``updated``.
    - ``appended[ref]``: for items that existed before this batch, the exact
      strings appended to their text (messages, reasoning) or arguments (tool
      calls), in order: ``node.appendData(s)`` for each.
    - ``ended``: items that ended in this batch (also if created in it).
    - ``updated``: existing items with a non-text change (tool name, result,
      reopened after a snapshot).
    - ``tool_calls``: ids of tool calls with any change, created ones included.
    """

    created: list[ItemRef] = field(default_factory=list)
    appended: dict[ItemRef, list[str]] = field(default_factory=dict)
    ended: list[ItemRef] = field(default_factory=list)
    updated: list[ItemRef] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)
    run_status: bool = False
    state: bool = False
    reset: bool = False
    anomalies: int = 0

    def __bool__(self) -> bool:
        return bool(
            self.created or self.appended or self.ended or self.updated or self.tool_calls
            or self.run_status or self.state or self.reset or self.anomalies
        )


class _Recorder:
    """Builds a Changes with ordered, duplicate-free lists in O(1) per note."""

    def __init__(self) -> None:
        self.created: dict[ItemRef, None] = {}
        self.appended: dict[ItemRef, list[str]] = {}
        self.ended: dict[ItemRef, None] = {}
        self.updated: dict[ItemRef, None] = {}
        self.tool_calls: dict[str, None] = {}
        self.run_status = False
        self.state = False
        self.reset = False
        self.anomalies = 0

    def create(self, ref: ItemRef) -> None:
        self.created[ref] = None
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref.id] = None

    def append(self, ref: ItemRef, text: str) -> None:
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref.id] = None
        if ref in self.created:
            return
        bucket = self.appended.get(ref)
        if bucket is None:
            self.appended[ref] = [text]
        else:
            bucket.append(text)

    def end(self, ref: ItemRef) -> None:
        self.ended[ref] = None
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref.id] = None

    def update(self, ref: ItemRef) -> None:
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref.id] = None
        if ref not in self.created:
            self.updated[ref] = None

    def clear_items(self) -> None:
        self.created.clear()
        self.appended.clear()
        self.ended.clear()
        self.updated.clear()
        self.tool_calls.clear()

    def freeze(self) -> Changes:
        return Changes(
            created=list(self.created),
            appended=self.appended,
            ended=list(self.ended),
            updated=list(self.updated),
            tool_calls=list(self.tool_calls),
            run_status=self.run_status,
            state=self.state,
            reset=self.reset,
            anomalies=self.anomalies,
        )


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


class LiveState:
    """The view model; see the module docstring for the rules."""

    def __init__(self, anomaly_log_size: int = 50) -> None:
        self.timeline: list[ItemRef] = []
        self.messages: dict[str, MessageItem] = {}
        self.reasoning: dict[str, ReasoningItem] = {}
        self.tool_calls: dict[str, ToolCallItem] = {}
        self.run = RunInfo()
        self.state: Any = {}
        self.anomalies = 0
        self.anomaly_log: deque[str] = deque(maxlen=anomaly_log_size)
        self._open: dict[ItemRef, None] = {}  # items not yet ended, for O(open) run end
        self._chunk_message: str | None = None
        self._chunk_reasoning: str | None = None
        self._chunk_tool: str | None = None
        self._thinking: str | None = None
        self._thinking_count = 0
        self._rec = _Recorder()

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

    def apply(self, events: Iterable[Mapping[str, Any]]) -> Changes:
        """Fold a batch of events in order; return what changed."""
        self._rec = rec = _Recorder()
        for event in events:
            if not isinstance(event, Mapping):
                self._anomaly(f"event is not an object: {type(event).__name__}")
                continue
            etype = event.get("type")
            handler = _HANDLERS.get(etype) if isinstance(etype, str) else None
            if handler is None:
                if etype not in _IGNORED:
                    self._anomaly(f"unknown event type {etype!r}")
                continue
            try:
                handler(self, event)
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                # Handlers validate what they read; this is the last line of
                # defence so one malformed event cannot take the page down.
                self._anomaly(f"{etype}: malformed event ignored ({exc!r})")
        return rec.freeze()

    def _anomaly(self, what: str) -> None:
        self.anomalies += 1
        self._rec.anomalies += 1
        self.anomaly_log.append(what)

    # -- items ------------------------------------------------------------------

    def _add(self, item: Item) -> None:
        ref = item.ref
        self.timeline.append(ref)
        if not item.ended:
            self._open[ref] = None
        self._rec.create(ref)

    def _end(self, item: Item, *, by_event: bool) -> None:
        if item.ended:
            return
        item.ended = True
        item._ended_by_event = by_event
        self._open.pop(item.ref, None)
        self._rec.end(item.ref)

    def _end_by_event(self, item: Item, etype: str, ident: str | None) -> None:
        """An END event for a known item: a second END is an anomaly."""
        if item.ended and item._ended_by_event:
            self._anomaly(f"{etype}: {ident!r} already ended")
            return
        item.source = "stream"
        self._end(item, by_event=True)
        item._ended_by_event = True  # also when it was already ended by snapshot/run end

    def _reopen_if_snapshot(self, item: Item) -> bool:
        """Resume a snapshot item; True if it was one (so no anomaly)."""
        if item.source != "snapshot":
            return False
        item.source = "stream"
        if item.ended:
            item.ended = False
            self._open[item.ref] = None
            self._rec.update(item.ref)
        return True

    def _text_store(self, kind: str) -> dict[str, Any]:
        return self.reasoning if kind == REASONING else self.messages

    def _new_text_item(
        self, kind: str, mid: str, role: str | None = None, name: str | None = None
    ) -> MessageItem:
        if kind == REASONING:
            item: MessageItem = ReasoningItem(id=mid)
        else:
            item = MessageItem(id=mid, role=role or "assistant", name=name)
        self._text_store(kind)[mid] = item
        self._add(item)
        return item

    def _start_text(self, kind: str, event: Mapping[str, Any]) -> None:
        mid = _str_id(event, "messageId")
        if mid is None:
            self._anomaly(f"{event['type']}: missing messageId")
            return
        existing = self._text_store(kind).get(mid)
        if existing is not None:
            if not self._reopen_if_snapshot(existing):
                self._anomaly(f"{event['type']}: duplicate start for {mid!r} ignored")
            return
        role = event.get("role")
        name = event.get("name")
        self._new_text_item(
            kind, mid, role if isinstance(role, str) and role else None,
            name if isinstance(name, str) else None,
        )

    def _append_text(self, kind: str, mid: str, delta: str, etype: str) -> None:
        item = self._text_store(kind).get(mid)
        if item is None:
            self._anomaly(f"{etype}: unknown {kind} {mid!r}; created implicitly")
            item = self._new_text_item(kind, mid)
        elif item.ended and not self._reopen_if_snapshot(item):
            self._anomaly(f"{etype}: content for {mid!r} after its end")
        if delta:
            item._text.append(delta)
            self._rec.append(item.ref, delta)

    def _content(self, kind: str, event: Mapping[str, Any]) -> None:
        mid = _str_id(event, "messageId")
        delta = event.get("delta")
        if mid is None or not isinstance(delta, str):
            self._anomaly(f"{event['type']}: missing messageId or delta")
            return
        self._append_text(kind, mid, delta, event["type"])

    def _end_text(self, kind: str, event: Mapping[str, Any]) -> None:
        mid = _str_id(event, "messageId")
        item = self._text_store(kind).get(mid) if mid else None
        if item is None:
            self._anomaly(f"{event['type']}: unknown {kind} {mid!r}; ignored")
            return
        self._end_by_event(item, event["type"], mid)

    def _chunk_text(self, kind: str, event: Mapping[str, Any]) -> None:
        attr = "_chunk_reasoning" if kind == REASONING else "_chunk_message"
        active: str | None = getattr(self, attr)
        mid = _str_id(event, "messageId") or active
        if mid is None:
            self._anomaly(f"{event['type']}: no messageId and no open chunk message")
            return
        if active is not None and active != mid:
            # A chunk for another message closes the previous chunk stream.
            previous = self._text_store(kind).get(active)
            if previous is not None:
                self._end(previous, by_event=True)
        setattr(self, attr, mid)
        delta = event.get("delta")
        if delta is not None and not isinstance(delta, str):
            self._anomaly(f"{event['type']}: delta must be a string")
            return
        store = self._text_store(kind)
        if mid not in store:
            role = event.get("role")
            name = event.get("name")
            self._new_text_item(
                kind, mid, role if isinstance(role, str) and role else None,
                name if isinstance(name, str) else None,
            )
        if delta:
            self._append_text(kind, mid, delta, event["type"])

    # -- tool calls -------------------------------------------------------------

    def _new_tool(self, tid: str, name: str | None, parent: str | None) -> ToolCallItem:
        item = ToolCallItem(id=tid, name=name, parent_message_id=parent)
        self.tool_calls[tid] = item
        self._add(item)
        return item

    def _tool_start(self, event: Mapping[str, Any]) -> None:
        tid = _str_id(event, "toolCallId")
        if tid is None:
            self._anomaly("TOOL_CALL_START: missing toolCallId")
            return
        existing = self.tool_calls.get(tid)
        if existing is not None:
            if not self._reopen_if_snapshot(existing):
                self._anomaly(f"TOOL_CALL_START: duplicate start for {tid!r} ignored")
            return
        name = event.get("toolCallName")
        self._new_tool(tid, name if isinstance(name, str) else None,
                       _str_id(event, "parentMessageId"))

    def _tool_append(self, tid: str, delta: str, etype: str) -> None:
        item = self.tool_calls.get(tid)
        if item is None:
            self._anomaly(f"{etype}: unknown tool call {tid!r}; created implicitly")
            item = self._new_tool(tid, None, None)
        elif item.ended and not self._reopen_if_snapshot(item):
            self._anomaly(f"{etype}: args for {tid!r} after its end")
        if delta:
            item._args.append(delta)
            self._rec.append(item.ref, delta)

    def _tool_args(self, event: Mapping[str, Any]) -> None:
        tid = _str_id(event, "toolCallId")
        delta = event.get("delta")
        if tid is None or not isinstance(delta, str):
            self._anomaly("TOOL_CALL_ARGS: missing toolCallId or delta")
            return
        self._tool_append(tid, delta, "TOOL_CALL_ARGS")

    def _tool_end(self, event: Mapping[str, Any]) -> None:
        tid = _str_id(event, "toolCallId")
        item = self.tool_calls.get(tid) if tid else None
        if item is None:
            self._anomaly(f"TOOL_CALL_END: unknown tool call {tid!r}; ignored")
            return
        self._end_by_event(item, "TOOL_CALL_END", tid)

    def _tool_chunk(self, event: Mapping[str, Any]) -> None:
        active = self._chunk_tool
        tid = _str_id(event, "toolCallId") or active
        if tid is None:
            self._anomaly("TOOL_CALL_CHUNK: no toolCallId and no open chunk tool call")
            return
        if active is not None and active != tid:
            previous = self.tool_calls.get(active)
            if previous is not None:
                self._end(previous, by_event=True)
        self._chunk_tool = tid
        delta = event.get("delta")
        if delta is not None and not isinstance(delta, str):
            self._anomaly("TOOL_CALL_CHUNK: delta must be a string")
            return
        name = event.get("toolCallName")
        name = name if isinstance(name, str) and name else None
        item = self.tool_calls.get(tid)
        if item is None:
            self._new_tool(tid, name, _str_id(event, "parentMessageId"))
        elif name is not None and item.name is None:
            item.name = name
            self._rec.update(item.ref)
        if delta:
            self._tool_append(tid, delta, "TOOL_CALL_CHUNK")

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
        self._rec.update(item.ref)

    # -- run, state, snapshots --------------------------------------------------

    def _run_started(self, event: Mapping[str, Any]) -> None:
        self.run = RunInfo(
            status="running",
            thread_id=_str_id(event, "threadId") or self.run.thread_id,
            run_id=_str_id(event, "runId"),
        )
        self._rec.run_status = True

    def _run_ended(self, event: Mapping[str, Any]) -> None:
        # Whatever is still open cannot receive more: show it as complete.
        for ref in list(self._open):
            self._end(self.item(ref), by_event=False)
        self._chunk_message = self._chunk_reasoning = self._chunk_tool = None
        self._thinking = None
        if event["type"] == ev.RUN_ERROR:
            message = event.get("message")
            code = event.get("code")
            self.run.status = "error"
            self.run.error = message if isinstance(message, str) else "unknown error"
            self.run.error_code = code if isinstance(code, str) else None
        else:
            self.run.status = "finished"
        self._rec.run_status = True

    def _state_snapshot(self, event: Mapping[str, Any]) -> None:
        if "snapshot" not in event:
            self._anomaly("STATE_SNAPSHOT: missing snapshot")
            return
        self.state = event["snapshot"]
        self._rec.state = True

    def _state_delta(self, event: Mapping[str, Any]) -> None:
        try:
            self.state = apply_patch(self.state, event.get("delta"))  # type: ignore[arg-type]
        except JsonPatchError as exc:
            self._anomaly(f"STATE_DELTA: patch rejected, state unchanged: {exc}")
            return
        self._rec.state = True

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
        self._thinking = None
        rec = self._rec
        rec.clear_items()
        rec.reset = True
        for index, msg in enumerate(messages):
            mid = _str_id(msg, "id") if isinstance(msg, dict) else None
            if mid is None:
                self._anomaly(f"MESSAGES_SNAPSHOT: message [{index}] has no id; skipped")
                continue
            self._restore(msg, mid)
        # Only what happened after the reset is reported item by item.
        rec.clear_items()
        for attr, store in (("_chunk_message", self.messages),
                            ("_chunk_reasoning", self.reasoning),
                            ("_chunk_tool", self.tool_calls)):
            if getattr(self, attr) not in store:
                setattr(self, attr, None)

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
            tool = ToolCallItem(
                id=tid, ended=True, source="snapshot", parent_message_id=mid,
                name=name if isinstance(name, str) else None,
            )
            tool._args = _Text(arguments if isinstance(arguments, str) else "")
            self.tool_calls[tid] = tool
            self._add(tool)

    # -- legacy THINKING_* (pre-1.0 reasoning) ------------------------------------

    def _thinking_start(self, event: Mapping[str, Any]) -> str:
        # Legacy thinking messages carry no id: number them.
        self._thinking_count += 1
        mid = f"thinking-{self._thinking_count}"
        while mid in self.reasoning:
            self._thinking_count += 1
            mid = f"thinking-{self._thinking_count}"
        self._thinking = mid
        self._new_text_item(REASONING, mid)
        return mid

    def _thinking_content(self, event: Mapping[str, Any]) -> None:
        delta = event.get("delta")
        if not isinstance(delta, str):
            self._anomaly("THINKING_TEXT_MESSAGE_CONTENT: delta must be a string")
            return
        mid = self._thinking
        if mid is None:
            self._anomaly("THINKING_TEXT_MESSAGE_CONTENT: no open thinking message")
            mid = self._thinking_start(event)
        self._append_text(REASONING, mid, delta, event["type"])

    def _thinking_end(self, event: Mapping[str, Any]) -> None:
        if self._thinking is None:
            self._anomaly("THINKING_TEXT_MESSAGE_END: no open thinking message")
            return
        item = self.reasoning.get(self._thinking)
        self._thinking = None
        if item is not None:
            self._end(item, by_event=True)


_HANDLERS: dict[str, Any] = {
    ev.TEXT_MESSAGE_START: lambda s, e: s._start_text(MESSAGE, e),
    ev.TEXT_MESSAGE_CONTENT: lambda s, e: s._content(MESSAGE, e),
    ev.TEXT_MESSAGE_END: lambda s, e: s._end_text(MESSAGE, e),
    ev.TEXT_MESSAGE_CHUNK: lambda s, e: s._chunk_text(MESSAGE, e),
    ev.REASONING_MESSAGE_START: lambda s, e: s._start_text(REASONING, e),
    ev.REASONING_MESSAGE_CONTENT: lambda s, e: s._content(REASONING, e),
    ev.REASONING_MESSAGE_END: lambda s, e: s._end_text(REASONING, e),
    ev.REASONING_MESSAGE_CHUNK: lambda s, e: s._chunk_text(REASONING, e),
    ev.TOOL_CALL_START: LiveState._tool_start,
    ev.TOOL_CALL_ARGS: LiveState._tool_args,
    ev.TOOL_CALL_END: LiveState._tool_end,
    ev.TOOL_CALL_CHUNK: LiveState._tool_chunk,
    ev.TOOL_CALL_RESULT: LiveState._tool_result,
    ev.RUN_STARTED: LiveState._run_started,
    ev.RUN_FINISHED: LiveState._run_ended,
    ev.RUN_ERROR: LiveState._run_ended,
    ev.STATE_SNAPSHOT: LiveState._state_snapshot,
    ev.STATE_DELTA: LiveState._state_delta,
    ev.MESSAGES_SNAPSHOT: LiveState._messages_snapshot,
    ev.THINKING_TEXT_MESSAGE_START: LiveState._thinking_start,
    ev.THINKING_TEXT_MESSAGE_CONTENT: LiveState._thinking_content,
    ev.THINKING_TEXT_MESSAGE_END: LiveState._thinking_end,
}

# Valid events that carry nothing this view model shows.
_IGNORED = frozenset(
    {
        ev.REASONING_START,
        ev.REASONING_END,
        ev.REASONING_ENCRYPTED_VALUE,
        ev.STEP_STARTED,
        ev.STEP_FINISHED,
        ev.ACTIVITY_SNAPSHOT,
        ev.ACTIVITY_DELTA,
        ev.RAW,
        ev.CUSTOM,
        ev.SUBAGENT_STARTED,
        ev.SUBAGENT_FINISHED,
        ev.SUBAGENT_ERROR,
        ev.THINKING_START,
        ev.THINKING_END,
    }
)
