"""A MESSAGES_SNAPSHOT as transcript items (part of the reducer in transcript.py).

Which run a restored item belongs to decides what a later event with its id
does (transcript.py: ids are per run):

- an item whose stream is open — a message still streaming when an upstream
  sent the snapshot — belongs to the current run, stays open and goes on with
  its next START or content (``source="snapshot"``);
- every other item is ended and counts as made by an earlier run: the next
  use of its id is a new item.  That is what the snapshot of a late viewer needs
  (``snapshot_events``: the current run's items come after it as events).

An id that repeats is a new item: a snapshot of a conversation whose runs
reused ids names them that way (``as_messages``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streampace.conversation.items import (
    MESSAGE,
    REASONING,
    Item,
    MessageItem,
    ReasoningItem,
    TextBuffer,
    ToolCallItem,
    content_text,
)

if TYPE_CHECKING:
    from streampace.conversation.transcript import Transcript

__all__ = ["restore"]


def _str_id(value: Any, name: str) -> str | None:
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def _add(t: Transcript, item: Item, store: dict[str, Any]) -> None:
    t.add_item(item, store, store.get(item.id))
    item.run = t.runs - 1  # until restore() finds it streaming


def restore(t: Transcript, messages: list[Any]) -> None:
    """Add the snapshot's messages to ``t`` (already emptied), in order."""
    for index, msg in enumerate(messages):
        mid = _str_id(msg, "id")
        if mid is None:
            t._anomaly(f"MESSAGES_SNAPSHOT: message [{index}] has no id; skipped")
            continue
        if msg.get("role") == "tool":
            _restore_result(t, msg, mid)
        else:
            _restore_message(t, msg, mid)
    # What is still streaming: the latest item of each open stream (an id the
    # snapshot names twice was reused; its earlier items are done).
    for stream in t.tracker.open:
        item = t.find_stream(stream)
        if item is not None:
            item.ended = False  # its END or the run's end ends it
            item.run = t.runs
            t.open_refs[item.ref] = None


def _restore_result(t: Transcript, msg: dict[str, Any], mid: str) -> None:
    tid = _str_id(msg, "toolCallId")
    if tid is None:
        t._anomaly(f"MESSAGES_SNAPSHOT: tool message {mid!r} has no toolCallId")
        return
    tool = t.tool_calls.get(tid)
    if tool is None:
        tool = ToolCallItem(id=tid, ended=True, source="snapshot")
        _add(t, tool, t.tool_calls)
    tool.result = msg.get("content")
    tool.result_message_id = mid
    tool.result_seq = t.next_seq()


def _restore_message(t: Transcript, msg: dict[str, Any], mid: str) -> None:
    role = msg.get("role")
    kind = REASONING if role == "reasoning" else MESSAGE
    store = t.text_store(kind)
    name = msg.get("name")
    if kind == REASONING:
        item: MessageItem = ReasoningItem(id=mid, ended=True, source="snapshot", raw=msg)
    else:
        item = MessageItem(
            id=mid, ended=True, source="snapshot", raw=msg,
            role=role if isinstance(role, str) and role else "assistant",
            name=name if isinstance(name, str) else None,
        )
    item.body = TextBuffer(content_text(msg.get("content")))
    calls = msg.get("toolCalls")
    # An empty assistant message that only carries tool calls is not shown: a live
    # viewer saw just the tool calls (their TOOL_CALL_START named no message), so
    # the restored view shows just them too.
    if not (kind == MESSAGE and not item.text and isinstance(calls, list) and calls):
        _add(t, item, store)
    if isinstance(calls, list):
        for call in calls:
            _restore_call(t, call, mid)


def _restore_call(t: Transcript, call: Any, mid: str) -> None:
    tid = _str_id(call, "id")
    if tid is None:
        t._anomaly(f"MESSAGES_SNAPSHOT: bad tool call in {mid!r}")
        return
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
    tool.body = TextBuffer(arguments if isinstance(arguments, str) else "")
    _add(t, tool, t.tool_calls)
