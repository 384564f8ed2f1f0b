"""Views of a :class:`~streampace.conversation.transcript.Transcript`.

- ``as_messages``: the conversation as AG-UI messages (MESSAGES_SNAPSHOT,
  an upstream's history).  A tool call goes into its parent assistant
  message's ``toolCalls``; a call without a known parent gets an assistant
  message of its own, with the parent's id or else the call's (as AG-UI's
  client does).  An id several runs reused appears once per item.
- ``snapshot_events``: the events that bring a viewer with no history — or a
  fresh transcript in another process — to the current position.  While a run
  goes on: its RUN_STARTED, a MESSAGES_SNAPSHOT of the timeline up to its last
  item of an earlier run (items still streaming in that part are opened just
  before it, so it resumes them), then the rest — the current run's items —
  replayed as the events that made them: completed ones with their END, open
  ones left open, tool results where they came, the open chunk stream last.
  So the receiver counts runs as the sender does (an id the current run
  reuses names its new item there too) and nothing moves.  Between runs: the
  MESSAGES_SNAPSHOT and the state.
- ``closing_events``: END events for what is open.
- ``texts``: visible text per id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from streampace.conversation import events as ev
from streampace.conversation.events import Stream
from streampace.conversation.items import (
    MESSAGE,
    REASONING,
    Item,
    ItemRef,
    MessageItem,
    RunStatus,
    ToolCallItem,
)

if TYPE_CHECKING:
    from streampace.conversation.transcript import Transcript

__all__ = ["as_messages", "closing_events", "messages_of", "snapshot_events", "texts"]


def texts(t: Transcript) -> dict[str, str]:
    """Visible text per message / reasoning id (a reused id: its latest item)."""
    out: dict[str, str] = {}
    for ref in t.timeline:
        item = t.all_items[ref]
        if isinstance(item, MessageItem):
            out[ref.id] = item.text
    return out


def _refs_of(t: Transcript, streams: Iterable[Stream]) -> set[ItemRef]:
    out = set()
    for stream in streams:
        item = t.find_stream(stream)
        if item is not None:
            out.add(item.ref)
    return out


def as_messages(t: Transcript, exclude: Iterable[Stream] = ()) -> list[dict[str, Any]]:
    """The conversation as AG-UI messages, oldest first, without the items of
    the ``exclude`` streams (kind, id as the tracker names them)."""
    skip = _refs_of(t, exclude)
    return messages_of(t, [ref for ref in t.timeline if ref not in skip])


def messages_of(t: Transcript, refs: list[ItemRef],
                results_before: float = float("inf")) -> list[dict[str, Any]]:
    """The items ``refs`` (in timeline order) as AG-UI messages, tool results placed
    where they arrived (only those that arrived before seq ``results_before``)."""
    out: list[dict[str, Any]] = []
    assistants: dict[str, dict[str, Any] | None] = {}
    results: list[tuple[int, dict[str, Any]]] = []
    for ref in refs:
        item = t.all_items[ref]
        while results and results[0][0] < item.seq:
            out.append(results.pop(0)[1])
        if isinstance(item, ToolCallItem):
            _place_call(item, out, assistants)
            if item.result_message_id is not None and item.result_seq < results_before:
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


def _place_call(item: ToolCallItem, out: list[dict[str, Any]],
                assistants: dict[str, dict[str, Any] | None]) -> None:
    call = {"id": item.id, "type": "function",
            "function": {"name": item.name or "", "arguments": item.args}}
    holder_id = item.parent_message_id or item.id
    if holder_id in assistants and assistants[holder_id] is None:
        holder_id = item.id
    holder = assistants.get(holder_id)
    if holder is not None and any(c["id"] == item.id for c in holder.get("toolCalls", ())):
        # A later run reused the call's id: a holder of its own, so a restore
        # pairs each call with its own result.
        holder = None
    if holder is None:
        holder = assistants[holder_id] = {"id": holder_id, "role": "assistant"}
        out.append(holder)
    holder.setdefault("toolCalls", []).append(call)


def _text_message(item: MessageItem) -> dict[str, Any]:
    if item.raw is not None and item.source == "snapshot":
        # Restored and never resumed: exactly what the snapshot said (list content,
        # activity messages...), tool calls aside: their items re-attach them.
        return {k: v for k, v in item.raw.items() if k != "toolCalls"}
    msg: dict[str, Any] = {"id": item.id, "role": item.role, "content": item.text}
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


def _result_event(item: ToolCallItem) -> dict[str, Any]:
    return {"type": ev.TOOL_CALL_RESULT, "messageId": item.result_message_id,
            "toolCallId": item.id, "content": item.result}


# -- snapshot events -------------------------------------------------------------


def snapshot_events(t: Transcript) -> list[dict[str, Any]]:
    """Events that bring a viewer with no history to the current position."""
    open_streams = list(t.tracker.open)
    open_refs = _refs_of(t, open_streams)
    state = {"type": ev.STATE_SNAPSHOT, "snapshot": t.state}
    if t.run.status is not RunStatus.RUNNING:
        return [_messages_snapshot(t, [r for r in t.timeline if r not in open_refs]), state]
    chunk = t.tracker.chunk_stream
    timeline = t.timeline
    # The snapshot holds the timeline up to its last item of an earlier run (a
    # MESSAGES_SNAPSHOT inside this run may have left items still streaming
    # among those); the rest is the current run's, replayed.
    last = max((i for i, r in enumerate(timeline)
                if t.all_items[r].run < t.runs and r not in open_refs), default=-1)
    prefix, rest = timeline[:last + 1], timeline[last + 1:]
    # Results that came after the first replayed item are replayed where they came,
    # also those of items in the snapshot: the receiver then orders them as we do.
    cutoff = t.all_items[rest[0]].seq if rest else _NEVER
    in_prefix = set(prefix)
    out: list[dict[str, Any]] = [
        {"type": ev.RUN_STARTED, "threadId": t.run.thread_id, "runId": t.run.run_id}]
    # Open phases and steps (no items of their own) first: the items nest in them.
    out.extend(e for s in open_streams if t.find_stream(s) is None for e in _reopen(t, s))
    # Items in the snapshot that still stream are opened before it, so the
    # snapshot resumes them (snapshot_restore) rather than ending them.
    for stream in open_streams:
        item = t.find_stream(stream)
        if item is not None and item.ref in in_prefix and stream != chunk:
            out.append(_reopen(t, stream)[0])
    out.append({"type": ev.MESSAGES_SNAPSHOT, "messages": messages_of(t, prefix, cutoff)})
    out.extend(_replay(t, rest, cutoff, open_streams, chunk))
    # After the replay: it ends a completed chunk-built item the replay ends with.
    out.append(state)
    if chunk is not None:
        # Last: any other event after it would end the chunk stream again, and
        # later id-less chunks must find it open.
        out.extend(_reopen_chunk(t, chunk))
    return out


_NEVER = float("inf")


def _messages_snapshot(t: Transcript, refs: list[ItemRef]) -> dict[str, Any]:
    return {"type": ev.MESSAGES_SNAPSHOT, "messages": messages_of(t, refs)}


def _replay(t: Transcript, refs: list[ItemRef], cutoff: float,
            open_streams: list[Stream], chunk: Stream | None) -> list[dict[str, Any]]:
    """Items ``refs`` as the events that made them, and every result from seq
    ``cutoff`` on, all where they came (the open chunk stream aside)."""
    open_by_ref: dict[ItemRef, Stream] = {}
    for open_stream in open_streams:
        open_item = t.find_stream(open_stream)
        if open_item is not None and open_stream != chunk:
            open_by_ref[open_item.ref] = open_stream
    chunk_item = t.find_stream(chunk) if chunk is not None else None
    parts: list[tuple[int, list[dict[str, Any]]]] = []
    for ref in t.timeline:
        item = t.all_items[ref]
        if (isinstance(item, ToolCallItem) and item.result_message_id is not None
                and item.result_seq >= cutoff and item is not chunk_item):
            parts.append((item.result_seq, [_result_event(item)]))
    for ref in refs:
        item = t.all_items[ref]
        if item is chunk_item:
            continue
        stream = open_by_ref.get(ref)
        parts.append((item.seq, _reopen(t, stream) if stream is not None
                      else _replay_done(item)))
    parts.sort(key=lambda part: part[0])
    return [event for _seq, events in parts for event in events]


def _replay_done(item: Item) -> list[dict[str, Any]]:
    """A completed item of the current run as START / content / END (or one chunk,
    for a chunk-built item: whatever follows it ends it, as it did live)."""
    kind = ev.TOOL_CALL if isinstance(item, ToolCallItem) else (
        ev.REASONING if item.kind == REASONING else ev.MESSAGE)
    start_type, end_type, field = ev.KIND_EVENTS[kind]
    assert field is not None
    text = item.body.get()
    details = _wire_details(kind, item, {})
    if item.source == "chunk":
        chunk: dict[str, Any] = {"type": ev.CHUNK_TYPES[kind], field: item.id, **details}
        if text:
            chunk["delta"] = text
        return [chunk]
    out: list[dict[str, Any]] = [{"type": start_type, field: item.id, **details}]
    if text:
        out.append({"type": ev.CONTENT_TYPES[kind], field: item.id, "delta": text})
    out.append({"type": end_type, field: item.id})
    return out


def _reopen_chunk(t: Transcript, stream: Stream) -> list[dict[str, Any]]:
    out = _reopen(t, stream)
    item = t.find_stream(stream)
    if isinstance(item, ToolCallItem) and item.result_message_id is not None:
        # The result ends the chunk stream; a bare chunk of it re-opens it.
        out += [_result_event(item), {"type": ev.TOOL_CALL_CHUNK, "toolCallId": item.id}]
    return out


def _reopen(t: Transcript, stream: Stream) -> list[dict[str, Any]]:
    """What re-opens an open stream with the text it has so far."""
    details = t.tracker.details(stream)
    start_type, _end, field_name = ev.KIND_EVENTS[stream.kind]
    item = t.find_stream(stream)
    if item is None:
        if field_name is None:
            return [{"type": start_type}]
        return [{"type": start_type, field_name: stream.id}]
    text = item.body.get()
    if stream == t.tracker.chunk_stream:
        chunk: dict[str, Any] = {"type": ev.CHUNK_TYPES[stream.kind]}
        if field_name is not None:
            chunk[field_name] = stream.id
        chunk.update(_wire_details(stream.kind, item, details))
        if text:
            chunk["delta"] = text
        return [chunk]
    start: dict[str, Any] = {"type": start_type}
    if field_name is not None:
        start[field_name] = stream.id
    start.update(_wire_details(stream.kind, item, details))
    out = [start]
    if text:
        rest: dict[str, Any] = {"type": ev.CONTENT_TYPES[stream.kind], "delta": text}
        if field_name is not None:
            rest[field_name] = stream.id
        out.append(rest)
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


def closing_events(t: Transcript) -> list[dict[str, Any]]:
    """END events for what is open, innermost first (the run's own ending aside)."""
    out: list[dict[str, Any]] = []
    for stream in reversed(t.tracker.open):
        _start, end, field_name = ev.KIND_EVENTS[stream.kind]
        if stream == t.tracker.chunk_stream:
            continue  # a chunk stream has no END of its own: the next event ends it
        out.append({"type": end} if field_name is None else
                   {"type": end, field_name: stream.id})
    return out
