"""Size bounds of a transcript's history: drop the oldest completed items, whole.

A server keeps every session's conversation for late viewers and for the next
run's input; ``Transcript(max_messages=..., max_bytes=...)`` bounds it.  The
transcript calls :func:`trim` at the end of each run and after a snapshot.  The
latest run's items (the one in progress, or the one that just ended) are never
trimmed: the bounds hold for the history before it, and a viewer that resumes
from a snapshot gets that run's whole answer (issue 18 item 6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streampace.conversation.items import MESSAGE, REASONING, Item, ToolCallItem, utf8_len

if TYPE_CHECKING:
    from streampace.conversation.transcript import Transcript

__all__ = ["item_bytes", "trim"]

_OVERHEAD_BYTES = 64  # ids, role and structure of one message, roughly


def item_bytes(item: Item) -> int:
    """What an item weighs in the history: its text (UTF-8) plus a fixed overhead."""
    if isinstance(item, ToolCallItem):
        size = utf8_len(item.args)
        if isinstance(item.result, str):
            size += utf8_len(item.result) + _OVERHEAD_BYTES
        return size
    return utf8_len(item.text) + _OVERHEAD_BYTES


def trim(t: Transcript) -> bool:
    """Drop the oldest completed items until both bounds hold; True if any went."""
    if t.max_messages is None and t.max_bytes is None:
        return False
    max_messages = t.max_messages or 1 << 62
    max_bytes = t.max_bytes or 1 << 62
    items = t.items()
    count = len(items)
    total = sum(item_bytes(i) for i in items)
    if count <= max_messages and total <= max_bytes:
        return False
    dropped: set[str] = set()
    keep_from = len(items)
    for index, item in enumerate(items):
        over = count > max_messages or total > max_bytes
        # A tool call whose message went goes too: alone it would be restored
        # under a holder message a live viewer never saw.
        orphan = isinstance(item, ToolCallItem) and item.parent_message_id in dropped
        ref = item.ref
        if not (over or orphan) or ref in t.open_refs or item.seq >= t.run_first_seq:
            keep_from = index
            break
        count -= 1
        total -= item_bytes(item)
        del t.all_items[ref]
        if isinstance(item, ToolCallItem):
            _unname(t.tool_calls, item)
        else:
            _unname(t.reasoning if item.kind == REASONING else t.messages, item)
        if item.kind == MESSAGE:
            dropped.add(item.id)
        t.trimmed += 1
    t.timeline = t.timeline[keep_from:]
    return True


def _unname(store: dict[str, Any], item: Item) -> None:
    if store.get(item.id) is item:  # else a later use of the id stays named by it
        del store[item.id]
