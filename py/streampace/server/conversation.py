"""What a session has said so far, rebuilt from its events.

The session log is bounded, so a viewer that falls too far behind cannot be
replayed event by event.  This model keeps the conversation itself (messages,
tool calls, shared state, the run in progress and what is open in it) so the
server can send MESSAGES_SNAPSHOT + STATE_SNAPSHOT instead, re-opening the
items still streaming so the rest of the run stays well nested for that viewer.
It also supplies the history sent to upstream agents and models.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from streampace import events as ev

__all__ = ["Conversation"]

log = logging.getLogger("streampace.server")

try:  # the core's RFC 6902 implementation, when present
    from streampace.json_patch import apply_patch as _apply_patch  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - depends on a sibling module
    _apply_patch = None


class Conversation:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
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
            msg = self._message(mid, role)
            msg["content"] = (msg.get("content") or "") + delta

    def apply(self, event: dict[str, Any]) -> None:
        t = event.get("type")
        if t == ev.RUN_STARTED:
            self.run = (event["threadId"], event["runId"])
            self._open.clear()
        elif t in ev.RUN_TERMINAL_TYPES:
            self.run = None
            self._open.clear()
        elif t == ev.TEXT_MESSAGE_START:
            mid = event["messageId"]
            self._message(mid, event.get("role") or "assistant")
            self._open[("text", mid)] = {"role": event.get("role") or "assistant"}
        elif t == ev.TEXT_MESSAGE_CONTENT:
            self._append_text(event["messageId"], "assistant", event.get("delta"))
        elif t == ev.TEXT_MESSAGE_END:
            self._open.pop(("text", event["messageId"]), None)
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
        elif t == ev.TOOL_CALL_START:
            self._tool_start(event)
        elif t == ev.TOOL_CALL_ARGS:
            call = self._open.get(("tool", event["toolCallId"]))
            if call is not None and isinstance(event.get("delta"), str):
                call["call"]["function"]["arguments"] += event["delta"]
        elif t == ev.TOOL_CALL_END:
            self._open.pop(("tool", event["toolCallId"]), None)
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
            self.messages = [dict(m) for m in event["messages"] if isinstance(m, dict)]
            self._by_id = {m["id"]: m for m in self.messages if isinstance(m.get("id"), str)}
        elif t == ev.STATE_SNAPSHOT:
            self.state = copy.deepcopy(event["snapshot"])
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
        self._open[("tool", tid)] = {"call": call, "parent": event.get("parentMessageId")}

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
            out = copy.deepcopy(msg)
            if "toolCalls" in out:
                calls = [c for c in out["toolCalls"] if c.get("id") not in open_tools]
                if calls:
                    out["toolCalls"] = calls
                else:
                    del out["toolCalls"]
                    if not out.get("content"):
                        continue
            done.append(out)
        snap = [
            {"type": ev.MESSAGES_SNAPSHOT, "messages": done},
            {"type": ev.STATE_SNAPSHOT, "snapshot": copy.deepcopy(self.state)},
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
            args = call["function"]["arguments"]
            rest = [{"type": ev.TOOL_CALL_ARGS, "toolCallId": ident, "delta": args}] if args else []
            return [start, *rest]
        text = self._by_id.get(ident, {}).get("content") or ""
        if kind == "reasoning":
            start = {"type": ev.REASONING_MESSAGE_START, "messageId": ident, "role": "reasoning"}
            content_type = ev.REASONING_MESSAGE_CONTENT
        else:
            start = {"type": ev.TEXT_MESSAGE_START, "messageId": ident, "role": info["role"]}
            content_type = ev.TEXT_MESSAGE_CONTENT
        rest = [{"type": content_type, "messageId": ident, "delta": text}] if text else []
        return [start, *rest]

    def history(self) -> list[dict[str, Any]]:
        """Completed messages, for an upstream's input (RunAgentInput.messages)."""
        open_ids = {i for (k, i) in self._open if k != "step"}
        return [copy.deepcopy(m) for m in self.messages if m.get("id") not in open_ids]
