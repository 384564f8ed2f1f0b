"""The conversation an AG-UI event stream describes: one reducer for every view.

``Transcript.apply(events)`` folds events into items in timeline order
(messages, reasoning, tool calls with their results — :mod:`.items`), the run
status and the shared state.  Which item an event belongs to (chunk
continuation, legacy thinking ids, what a run end closes) comes from
:class:`events.StreamTracker`, so this model and everything else in the
package agree on it.

Views over it (:mod:`.transcript_views`):

- the page's live model (:mod:`streampace.conversation.live_state` reports what each batch
  changed, for the renderer);
- ``as_messages()``: AG-UI messages (what MESSAGES_SNAPSHOT carries and what an
  upstream agent or model gets as history);
- ``snapshot_events()``: what brings a viewer with no history to the current
  position — and, in another process, rebuilds this transcript (Redis store);
- ``texts()``: visible text per message id (tests and benchmarks).

Cost: O(events + delta text).  Text is kept as a list of parts and joined only
when read, so a long answer never gets re-concatenated per delta.  With
``max_messages`` / ``max_bytes`` the completed items are kept within bounds
(:mod:`.history_bounds`: oldest dropped first, whole, at the end of each run);
the run in progress is never trimmed.

**Ids are per run.**  Agents reuse ids across runs (the same ``messageId``
every run), so an id names an item only until a later run begins: an event
that opens or fills an id whose item an *earlier* run ended makes a new item
with the new text (``ItemRef.use`` tells them apart).  "Earlier run" is counted
by RUN_STARTED events (``runs``); every view — live, late, restored from a
snapshot, in another process — counts the same way, because the snapshot
events carry the items of earlier runs in a MESSAGES_SNAPSHOT and replay the
current run's as events (:mod:`.transcript_views`, :mod:`.snapshot_restore`).

Protocol anomalies never raise.  Each is counted (``anomalies``), described in
``anomaly_log`` and handled by one fixed rule, chosen so that no received text
is ever dropped:

- content / args / END for an unknown id: content and args create the item
  implicitly (message role "assistant", reasoning, or a tool call without a
  name) and are applied; END for an unknown id is ignored.
- content or args after the item's END in the same run: appended anyway (the
  item stays ended); a second END is ignored.
- duplicate START for a known id in the same run: ignored (text, role and state kept).
- a STATE_DELTA patch that does not apply, or a state event over the state's
  bounds (``json_patch.StateLimits``): the state stays as it was (patches are
  atomic, and a costly one stops within its bounds).
- unknown event types, non-dict events, missing/mistyped ids: ignored.

Items restored from MESSAGES_SNAPSHOT count as ended, but one that was still
streaming when the snapshot came (its stream open) may be resumed without an
anomaly: START/content for it reopens it.
So may a chunk-built item that another event ended (AG-UI ends a chunk stream
at the next other event; a chunk for it later continues it).  Open items are
ended when the run finishes or fails.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from streampace.conversation import events as ev
from streampace.conversation import history_bounds, snapshot_restore, transcript_views
from streampace.conversation.events import Stream
from streampace.conversation.items import (
    MESSAGE,
    REASONING,
    TOOL_CALL,
    Item,
    ItemRef,
    MessageItem,
    Observer,
    ReasoningItem,
    RunInfo,
    RunStatus,
    ToolCallItem,
)
from streampace.conversation.json_patch import DEFAULT_STATE_LIMITS, JsonPatchError, StateLimits
from streampace.conversation.run_status import RUN_STATUS_TABLE, RunStatusEvent
from streampace.conversation.shared_state import SharedState
from streampace.lifecycle import Machine

__all__ = ["Transcript"]

# Tracker kind -> the item kind that holds its text (legacy thinking is reasoning).
ITEM_KIND = {ev.MESSAGE: MESSAGE, ev.REASONING: REASONING, ev.THINKING: REASONING,
             ev.TOOL_CALL: TOOL_CALL}
_RUN_BOUNDARIES = ev.RUN_TERMINAL_TYPES | {ev.RUN_STARTED}
_I = TypeVar("_I", MessageItem, ToolCallItem)


def _run_status(status: RunStatus, event: RunStatusEvent) -> RunStatus:
    """The run's status after a run boundary, by the run table's module."""
    return Machine("logged run", RUN_STATUS_TABLE, status).step(event)


def _str_id(event: Mapping[str, Any], name: str) -> str | None:
    value = event.get(name)
    return value if isinstance(value, str) and value else None


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
        # Wire id -> the item that id names now (the latest of its uses).
        self.messages: dict[str, MessageItem] = {}
        self.reasoning: dict[str, ReasoningItem] = {}
        self.tool_calls: dict[str, ToolCallItem] = {}
        self.all_items: dict[ItemRef, Item] = {}  # every item on the timeline
        self.run = RunInfo()
        self.runs = 0  # RUN_STARTED events applied: what "an earlier run" means
        self.shared_state = SharedState({}, state_limits)
        self.anomalies = 0
        self.anomaly_log: deque[str] = deque(maxlen=anomaly_log_size)
        self.trimmed = 0  # messages dropped to stay within the bounds
        self.tracker = ev.StreamTracker(taken=lambda ident: ident in self.reasoning)
        self.open_refs: dict[ItemRef, None] = {}  # items not yet ended, for O(open) run end
        self._seq = 0
        # Items from this seq on belong to the latest run: never trimmed, so a viewer
        # that resumes from a snapshot gets that whole answer (issue 18 item 6).
        self.run_first_seq = 1 << 62
        self._obs: Observer = Observer()
        # (stream, item, type) of the last content appended; see apply_event.
        self._hot: tuple[Stream, Item, str] | None = None

    # -- reading --------------------------------------------------------------

    @property
    def status(self) -> RunStatus:
        return self.run.status

    def item(self, ref: ItemRef) -> Item:
        """The item for a timeline ref (KeyError if unknown)."""
        return self.all_items[ref]

    def items(self) -> list[Item]:
        return [self.all_items[ref] for ref in self.timeline]

    def find(self, kind: str, ident: str) -> Item | None:
        """The item ``ident`` names now (its latest use), by item kind."""
        store: Mapping[str, Item] = (
            self.tool_calls if kind == TOOL_CALL
            else self.reasoning if kind == REASONING else self.messages)
        return store.get(ident)

    def find_stream(self, stream: Stream) -> Item | None:
        """The item a tracker stream is filling (None for phases, steps, unknown ids)."""
        kind = ITEM_KIND.get(stream.kind)
        return self.find(kind, stream.id) if kind is not None else None

    # -- views (transcript_views.py) --------------------------------------------

    def texts(self) -> dict[str, str]:
        """Visible text per message / reasoning id (a reused id: its latest item)."""
        return transcript_views.texts(self)

    def as_messages(self, exclude: Iterable[Stream] = ()) -> list[dict[str, Any]]:
        """The conversation as AG-UI messages, oldest first (``exclude``: open streams)."""
        return transcript_views.as_messages(self, exclude)

    def history(self) -> list[dict[str, Any]]:
        """Completed messages, for an upstream's input (RunAgentInput.messages)."""
        return transcript_views.as_messages(self, self.tracker.open)

    def snapshot_events(self) -> list[dict[str, Any]]:
        """Events that bring a viewer with no history to the current position."""
        return transcript_views.snapshot_events(self)

    def closing_events(self) -> list[dict[str, Any]]:
        """END events for what is open, innermost first (the run's own ending aside)."""
        return transcript_views.closing_events(self)

    # -- applying ---------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The shared state as the events so far leave it."""
        return self.shared_state.value

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
                    item.body.append(delta)
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
        """Count and describe one protocol anomaly (see the module docstring)."""
        self.anomalies += 1
        self._obs.anomalies += 1
        self.anomaly_log.append(what)

    # -- items ------------------------------------------------------------------

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add_item(self, item: Item, store: dict[str, Any], previous: Item | None) -> None:
        """Put a new item on the timeline; ``previous``: the item its id named before
        (for the reducer's modules: snapshot_restore)."""
        item.use = previous.use + 1 if previous is not None else 0
        item.run = self.runs
        item.seq = self.next_seq()
        ref = item.ref
        self.timeline.append(ref)
        self.all_items[ref] = item
        store[item.id] = item
        if not item.ended:
            self.open_refs[ref] = None
        self._obs.create(ref)

    def _current(self, item: _I | None) -> _I | None:
        """``item`` unless an earlier run ended it: then its id names a new item."""
        if item is not None and item.ended and item.run < self.runs:
            return None
        return item

    def _end(self, item: Item, *, by_event: bool) -> None:
        if item.ended:
            return
        item.ended = True
        item.ended_by_event = by_event
        self.open_refs.pop(item.ref, None)
        self._obs.end(item.ref)

    def _end_stream(self, stream: Stream, *, chunk: bool) -> None:
        """An item the tracker closed implicitly: a chunk stream's end, or the run's."""
        item = self.find_stream(stream)
        if item is None:
            return
        if chunk:
            item.source = "chunk"
        self._end(item, by_event=chunk)

    def _reopen_if_resumable(self, item: Item) -> bool:
        """Resume a snapshot or chunk item; True if it was one (so no anomaly)."""
        if item.source == "stream":
            return False
        item.source = "stream"
        if item.ended:
            item.ended = False
            item.ended_by_event = False
            self.open_refs[item.ref] = None
            self._obs.reopen(item.ref)
        return True

    def text_store(self, kind: str) -> dict[str, Any]:
        return self.reasoning if kind == REASONING else self.messages

    def _stream_event(self, event: Mapping[str, Any], role: ev.StreamRole,
                      step: ev.Step) -> None:
        etype = event["type"]
        kind = ITEM_KIND.get(role.kind)
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
            item = self.text_store(kind).get(stream.id)
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
        if item.ended and item.ended_by_event:
            self._anomaly(f"{etype}: {ident!r} already ended")
            return
        item.source = "stream"
        self._end(item, by_event=True)
        item.ended_by_event = True  # also when it was already ended by snapshot/run end

    def _new_text_item(self, kind: str, mid: str, role: str | None = None,
                       name: str | None = None) -> MessageItem:
        store = self.text_store(kind)
        if kind == REASONING:
            item: MessageItem = ReasoningItem(id=mid)
        else:
            item = MessageItem(id=mid, role=role or "assistant", name=name)
        self.add_item(item, store, store.get(mid))
        return item

    def _start_text(self, kind: str, mid: str, event: Mapping[str, Any], *,
                    chunk: bool) -> None:
        existing = self._current(self.text_store(kind).get(mid))
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

    def _append_text(self, kind: str, mid: str, delta: str, etype: str) -> Item:
        item = self._current(self.text_store(kind).get(mid))
        if item is None:
            self._anomaly(f"{etype}: unknown {kind} {mid!r}; created implicitly")
            item = self._new_text_item(kind, mid)
        elif item.ended and not self._reopen_if_resumable(item):
            self._anomaly(f"{etype}: content for {mid!r} after its end")
        if delta:
            item.body.append(delta)
            self._obs.append(item.ref, delta)
        return item

    # -- tool calls -------------------------------------------------------------

    def _new_tool(self, tid: str, name: str | None, parent: str | None) -> ToolCallItem:
        item = ToolCallItem(id=tid, name=name, parent_message_id=parent)
        self.add_item(item, self.tool_calls, self.tool_calls.get(tid))
        return item

    def _tool_event(self, event: Mapping[str, Any], tid: str, phase: str | None,
                    delta: str | None) -> None:
        etype = event["type"]
        chunk = etype == ev.TOOL_CALL_CHUNK
        if phase == ev.CLOSE:
            known = self.tool_calls.get(tid)
            if known is None:
                self._anomaly(f"{etype}: unknown tool call {tid!r}; ignored")
            else:
                self._end_by_event(known, etype, tid)
            return
        item = self._current(self.tool_calls.get(tid))
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
            item.body.append(delta)
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
        item.result_seq = self.next_seq()
        self._obs.update(item.ref)

    # -- run, state, snapshots --------------------------------------------------

    def _run_started(self, event: Mapping[str, Any]) -> None:
        self.runs += 1
        self.run_first_seq = self._seq + 1
        self.run = RunInfo(
            status=_run_status(self.run.status, RunStatusEvent.STARTED),
            thread_id=_str_id(event, "threadId") or self.run.thread_id,
            run_id=_str_id(event, "runId"),
        )
        self._obs.run_status = True

    def _run_ended(self, event: Mapping[str, Any]) -> None:
        # Whatever is still open cannot receive more: show it as complete.
        for ref in list(self.open_refs):
            self._end(self.all_items[ref], by_event=False)
        if event["type"] == ev.RUN_ERROR:
            message = event.get("message")
            code = event.get("code")
            self.run.status = _run_status(self.run.status, RunStatusEvent.ERROR)
            self.run.error = message if isinstance(message, str) else "unknown error"
            self.run.error_code = code if isinstance(code, str) else None
        else:
            self.run.status = _run_status(self.run.status, RunStatusEvent.FINISHED)
        self._obs.run_status = True
        self._trim()

    def _apply_state(self, event: Mapping[str, Any]) -> None:
        # Shared, not copied: nothing mutates the state (json_patch is copy-on-write).
        try:
            self.shared_state.apply(event)
        except JsonPatchError as exc:
            self._anomaly(f"{event['type']}: refused, state unchanged: {exc}")
            return
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
        self.all_items = {}
        self.open_refs = {}
        self._hot = None
        # The tracker keeps what is open: items still streaming are re-opened by
        # the events that follow a reconnect snapshot (or continue, upstream).
        obs = self._obs
        obs.clear_items()
        obs.reset = True
        snapshot_restore.restore(self, messages)
        # Only what happened after the reset is reported item by item.
        obs.clear_items()
        self._trim()

    def _trim(self) -> None:
        if history_bounds.trim(self):
            self._hot = None


_HANDLERS: dict[str, Callable[[Transcript, Mapping[str, Any]], None]] = {
    ev.TOOL_CALL_RESULT: Transcript._tool_result,
    ev.RUN_STARTED: Transcript._run_started,
    ev.RUN_FINISHED: Transcript._run_ended,
    ev.RUN_ERROR: Transcript._run_ended,
    ev.STATE_SNAPSHOT: Transcript._apply_state,
    ev.STATE_DELTA: Transcript._apply_state,
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
