"""What a session has said so far, rebuilt from its events.

The session log is bounded, so a viewer that falls too far behind cannot be
replayed event by event.  This model keeps the conversation itself (messages,
tool calls, shared state, the run in progress and what is open in it) so the
server can send MESSAGES_SNAPSHOT + STATE_SNAPSHOT instead, re-opening the
items still streaming so the rest of the run stays well nested for that viewer.
It also supplies the history sent to upstream agents and models.

Memory is bounded: completed messages are kept within ``max_messages`` and
``max_bytes`` (UTF-8 of their text and tool-call arguments), oldest dropped
first, whole; the run in progress is never trimmed.  Streaming text is kept as
a list of parts and joined once when its message ends, so a long answer of
tiny deltas costs O(text), and nothing is deep-copied per run.
"""

from __future__ import annotations

import logging
from typing import Any

from streampace import events as ev

__all__ = ["Conversation", "DEFAULT_HISTORY_BYTES", "DEFAULT_HISTORY_MESSAGES"]

DEFAULT_HISTORY_MESSAGES = 1_000
DEFAULT_HISTORY_BYTES = 4 * 1024 * 1024

log = logging.getLogger("streampace.server")

try:  # the core's RFC 6902 implementation, when present
    from streampace.json_patch import apply_patch as _apply_patch  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on a sibling module
    _apply_patch = None


def _message_bytes(msg: dict[str, Any]) -> int:
    size = 0
    content = msg.get("content")
    if isinstance(content, str):
        size += len(content) if content.isascii() else len(content.encode("utf-8", "replace"))
    for call in msg.get("toolCalls") or ():
        size += len(call["function"]["arguments"].encode("utf-8", "replace"))
    return size + 64  # ids, role and structure, roughly


class Conversation:
    def __init__(self, max_messages: int = DEFAULT_HISTORY_MESSAGES,
                 max_bytes: int = DEFAULT_HISTORY_BYTES) -> None:
        if max_messages < 1 or max_bytes < 1:
            raise ValueError("history limits must be >= 1")
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self.messages: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        # Text still streaming: message id -> parts not yet joined into "content".
        self._parts: dict[str, list[str]] = {}
        self.trimmed = 0  # messages dropped to stay within the bounds
        self.state: Any = {}
        self.run: tuple[str, str] | None = None  # (threadId, runId) of the active run
        # Open items in opening order: (kind, id) -> details; kinds: step, text,
        # reasoning_phase, reasoning, tool.
        self._open: dict[tuple[str, str], dict[str, Any]] = {}

    # -- model --------------------------------------------------------------

    def _message(self, mid: str, role: str) -> dict[str, Any]:
        msg = self._by_id.get(mid)
        if msg is None:
            msg = {"id": mid, "role": role, "content": ""}
            self.messages.append(msg)
            self._by_id[mid] = msg
        return msg

    def _append_text(self, mid: str, role: str, delta: Any) -> None:
        if isinstance(delta, str) and delta:
            parts = self._parts.get(mid)
            if parts is None:
                msg = self._message(mid, role)
                parts = self._parts[mid] = [msg["content"]] if msg.get("content") else []
            parts.append(delta)

    def _join(self, mid: str) -> None:
        """Fold a message's streamed parts into its content (once per message end)."""
        parts = self._parts.pop(mid, None)
        if parts is not None:
            msg = self._by_id.get(mid)
            if msg is not None:
                msg["content"] = "".join(parts)

    def _join_all(self) -> None:
        for mid in list(self._parts):
            self._join(mid)

    def _text(self, mid: str) -> str:
        """A message's text so far, without joining its parts for good."""
        parts = self._parts.get(mid)
        if parts is not None:
            return "".join(parts)
        return self._by_id.get(mid, {}).get("content") or ""

    def _trim(self) -> None:
        """Drop the oldest completed messages until both bounds hold."""
        open_ids = {i for (k, i) in self._open if k != "step"}
        count = len(self.messages)
        total = sum(_message_bytes(m) for m in self.messages)
        if count <= self.max_messages and total <= self.max_bytes:
            return
        keep: list[dict[str, Any]] = []
        for i, msg in enumerate(self.messages):
            over = count > self.max_messages or total > self.max_bytes
            # A tool result whose call went with an older message goes too: alone it
            # would be restored as a nameless tool call a live viewer never saw.
            orphan = msg.get("role") == "tool" and i > 0
            if (over or orphan) and (
                msg.get("id") not in open_ids and msg.get("id") not in self._parts
            ):
                count -= 1
                total -= _message_bytes(msg)
                self._by_id.pop(msg.get("id"), None)  # type: ignore[arg-type]
                self.trimmed += 1
                continue
            keep.extend(self.messages[i:])
            break
        self.messages = keep

    def apply(self, event: dict[str, Any]) -> None:
        t = event.get("type")
        if t == ev.RUN_STARTED:
            self.run = (event["threadId"], event["runId"])
            self._open.clear()
        elif t in ev.RUN_TERMINAL_TYPES:
            self.run = None
            for (kind, _), info in self._open.items():
                if kind == "tool":  # cut off mid-arguments: keep what viewers were shown
                    info["call"]["function"]["arguments"] = "".join(info["args"])
            self._open.clear()
            self._join_all()  # chunk streams have no END
            self._trim()
        elif t == ev.TEXT_MESSAGE_START:
            mid = event["messageId"]
            self._message(mid, event.get("role") or "assistant")
            self._open[("text", mid)] = {"role": event.get("role") or "assistant"}
        elif t == ev.TEXT_MESSAGE_CONTENT:
            self._append_text(event["messageId"], "assistant", event.get("delta"))
        elif t == ev.TEXT_MESSAGE_END:
            self._open.pop(("text", event["messageId"]), None)
            self._join(event["messageId"])
        elif t == ev.TEXT_MESSAGE_CHUNK:
            mid = event.get("messageId")
            if isinstance(mid, str) and mid:
                self._message(mid, event.get("role") or "assistant")
                self._append_text(mid, "assistant", event.get("delta"))
        elif t == ev.REASONING_START:
            self._open[("reasoning_phase", event["messageId"])] = {}
        elif t == ev.REASONING_END:
            self._open.pop(("reasoning_phase", event["messageId"]), None)
        elif t == ev.REASONING_MESSAGE_START:
            self._message(event["messageId"], "reasoning")
            self._open[("reasoning", event["messageId"])] = {}
        elif t == ev.REASONING_MESSAGE_CONTENT:
            self._append_text(event["messageId"], "reasoning", event.get("delta"))
        elif t == ev.REASONING_MESSAGE_END:
            self._open.pop(("reasoning", event["messageId"]), None)
            self._join(event["messageId"])
        elif t == ev.TOOL_CALL_START:
            self._tool_start(event)
        elif t == ev.TOOL_CALL_ARGS:
            call = self._open.get(("tool", event["toolCallId"]))
            if call is not None and isinstance(event.get("delta"), str):
                call["args"].append(event["delta"])
        elif t == ev.TOOL_CALL_END:
            info = self._open.pop(("tool", event["toolCallId"]), None)
            if info is not None:
                info["call"]["function"]["arguments"] = "".join(info["args"])
        elif t == ev.STEP_STARTED:
            self._open[("step", event["stepName"])] = {}
        elif t == ev.STEP_FINISHED:
            self._open.pop(("step", event["stepName"]), None)
        elif t == ev.TOOL_CALL_RESULT:
            msg = {
                "id": event["messageId"],
                "role": "tool",
                "content": event["content"],
                "toolCallId": event["toolCallId"],
            }
            self.messages.append(msg)
            self._by_id[msg["id"]] = msg
        elif t == ev.MESSAGES_SNAPSHOT:
            self._parts.clear()
            self.messages = [dict(m) for m in event["messages"] if isinstance(m, dict)]
            self._by_id = {m["id"]: m for m in self.messages if isinstance(m.get("id"), str)}
            self._trim()
        elif t == ev.STATE_SNAPSHOT:
            # Shared, not copied: nothing mutates it (json_patch is copy-on-write).
            self.state = event["snapshot"]
        elif t == ev.STATE_DELTA:
            self._state_delta(event["delta"])

    def _tool_start(self, event: dict[str, Any]) -> None:
        tid = event["toolCallId"]
        parent = event.get("parentMessageId")
        if not (isinstance(parent, str) and parent):
            parent = f"{tid}-message"
        msg = self._message(parent, "assistant")
        call = {
            "id": tid,
            "type": "function",
            "function": {"name": event.get("toolCallName", ""), "arguments": ""},
        }
        msg.setdefault("toolCalls", []).append(call)
        self._open[("tool", tid)] = {"call": call, "args": [],
                                     "parent": event.get("parentMessageId")}

    def _state_delta(self, patch: list[Any]) -> None:
        if _apply_patch is None:
            log.warning("STATE_DELTA ignored for snapshots: streampace.json_patch unavailable")
            return
        try:
            self.state = _apply_patch(self.state, patch)  # returns a new document
        except Exception as exc:  # a bad patch must not break the session
            log.warning("STATE_DELTA could not be applied to the snapshot state: %s", exc)

    # -- outputs ------------------------------------------------------------

    def snapshot_events(self) -> list[dict[str, Any]]:
        """Events that bring a viewer with no history to the current position."""
        open_text = {i for (k, i) in self._open if k in ("text", "reasoning")}
        open_tools = {i for (k, i) in self._open if k == "tool"}
        done: list[dict[str, Any]] = []
        for msg in self.messages:
            if msg.get("id") in open_text:
                continue
            out = dict(msg)  # one level: the snapshot filters toolCalls, strings are shared
            if msg.get("id") in self._parts:
                out["content"] = self._text(msg["id"])  # a chunk stream still running
            if "toolCalls" in out:
                calls = [dict(c, function=dict(c["function"])) for c in out["toolCalls"]
                         if c.get("id") not in open_tools]
                if calls:
                    out["toolCalls"] = calls
                else:
                    del out["toolCalls"]
                    if not out.get("content"):
                        continue
            done.append(out)
        snap = [
            {"type": ev.MESSAGES_SNAPSHOT, "messages": done},
            {"type": ev.STATE_SNAPSHOT, "snapshot": self.state},
        ]
        if self.run is None:
            return snap
        thread_id, run_id = self.run
        out_events: list[dict[str, Any]] = [
            {"type": ev.RUN_STARTED, "threadId": thread_id, "runId": run_id},
            *snap,
        ]
        for (kind, ident), info in self._open.items():
            out_events.extend(self._reopen(kind, ident, info))
        return out_events

    def _reopen(self, kind: str, ident: str, info: dict[str, Any]) -> list[dict[str, Any]]:
        if kind == "step":
            return [{"type": ev.STEP_STARTED, "stepName": ident}]
        if kind == "reasoning_phase":
            return [{"type": ev.REASONING_START, "messageId": ident}]
        if kind == "tool":
            call = info["call"]
            start = {
                "type": ev.TOOL_CALL_START,
                "toolCallId": ident,
                "toolCallName": call["function"]["name"],
            }
            if info.get("parent"):
                start["parentMessageId"] = info["parent"]
            args = "".join(info["args"])
            rest = [{"type": ev.TOOL_CALL_ARGS, "toolCallId": ident, "delta": args}] if args else []
            return [start, *rest]
        text = self._text(ident)
        if kind == "reasoning":
            start = {"type": ev.REASONING_MESSAGE_START, "messageId": ident, "role": "reasoning"}
            content_type = ev.REASONING_MESSAGE_CONTENT
        else:
            start = {"type": ev.TEXT_MESSAGE_START, "messageId": ident, "role": info["role"]}
            content_type = ev.TEXT_MESSAGE_CONTENT
        rest = [{"type": content_type, "messageId": ident, "delta": text}] if text else []
        return [start, *rest]

    def history(self) -> list[dict[str, Any]]:
        """Completed messages, for an upstream's input (RunAgentInput.messages).

        The dicts are the conversation's own (no copy per run: the history is
        bounded but may still be megabytes); sources only read them.
        """
        open_ids = {i for (k, i) in self._open if k != "step"}
        self._join_all_completed(open_ids)
        return [m for m in self.messages if m.get("id") not in open_ids]

    def _join_all_completed(self, open_ids: set[str]) -> None:
        for mid in [m for m in self._parts if m not in open_ids]:
            self._join(mid)
