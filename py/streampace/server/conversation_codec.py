"""A Conversation as plain JSON and back, for the Redis store's snapshot key.

A process that opens a session whose stream has been trimmed rebuilds the
conversation from the last snapshot (taken at sequence number ``seq``) plus the
stream's events after it, so its MESSAGES_SNAPSHOT / STATE_SNAPSHOT equal those of
a process that saw every event.  The only non-tree part of a Conversation is an
open tool call, which points into its parent message's ``toolCalls``: it is stored
as (message index, call index) and re-linked on load.
"""

from __future__ import annotations

from typing import Any

from .conversation import Conversation

__all__ = ["dump_conversation", "load_conversation"]


def _locate(messages: list[dict[str, Any]], call: dict[str, Any]) -> list[int] | None:
    for mi, msg in enumerate(messages):
        for ci, c in enumerate(msg.get("toolCalls") or ()):
            if c is call:
                return [mi, ci]
    return None


def dump_conversation(conv: Conversation) -> dict[str, Any]:
    opened: list[list[Any]] = []
    for (kind, ident), info in conv._open.items():
        if kind == "tool":
            where = _locate(conv.messages, info["call"])
            opened.append([kind, ident, {"at": where, "parent": info.get("parent"),
                                         "args": "".join(info.get("args") or ())}])
        else:
            opened.append([kind, ident, info])
    # Text still streaming lives in parts until its message ends: store it joined.
    messages = [dict(m, content=conv._text(m["id"])) if m.get("id") in conv._parts else m
                for m in conv.messages]
    return {
        "messages": messages,
        "state": conv.state,
        "run": list(conv.run) if conv.run is not None else None,
        "open": opened,
    }


def load_conversation(data: dict[str, Any]) -> Conversation:
    conv = Conversation()
    conv.messages = list(data.get("messages") or [])
    conv._by_id = {m["id"]: m for m in conv.messages if isinstance(m.get("id"), str)}
    conv.state = data.get("state", {})
    run = data.get("run")
    conv.run = (run[0], run[1]) if run else None
    for kind, ident, info in data.get("open") or ():
        if kind == "tool":
            where = info.get("at")
            if where is None:
                continue  # a call we cannot re-link cannot be re-opened either
            call = conv.messages[where[0]]["toolCalls"][where[1]]
            args = info.get("args", call["function"].get("arguments", ""))
            conv._open[(kind, ident)] = {"call": call, "parent": info.get("parent"),
                                         "args": [args] if args else []}
        else:
            conv._open[(kind, ident)] = dict(info)
    return conv
