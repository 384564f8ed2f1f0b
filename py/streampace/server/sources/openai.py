"""An OpenAI-compatible chat-completions endpoint (stream: true), translated to AG-UI.

Works with OpenAI, Ollama, vLLM and llama.cpp's server.  Reasoning arrives as
``reasoning_content`` (DeepSeek, vLLM, llama.cpp) or ``reasoning`` (Ollama,
OpenRouter) on the delta; tool calls as indexed ``tool_calls`` fragments.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from streampace.conversation import events as ev
from streampace.session.framing import UpstreamError, upstream_json_object

from .base import RunRequest, SourceOptions
from .http_upstream import sse_data, tls_context, upstream_text

__all__ = ["OpenAISource", "ChatTranslator", "chat_messages"]

log = logging.getLogger("streampace.server")


def chat_messages(request: RunRequest) -> list[dict[str, str]]:
    """The session's text history in chat-completions form, plus the new prompt."""
    out: list[dict[str, str]] = []
    for msg in request.history:
        role, content = msg.get("role"), msg.get("content")
        roles = ("user", "assistant", "system", "developer")
        if role in roles and isinstance(content, str) and content:
            out.append({"role": "system" if role == "developer" else role, "content": content})
    out.append({"role": "user", "content": request.prompt})
    return out


class ChatTranslator:
    """Turns chat-completion chunks into AG-UI events for one run."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self._text_id: str | None = None
        self._text_count = 0
        self._reasoning_id: str | None = None
        self._reasoning_count = 0
        self._tool: str | None = None  # open tool call id
        self._tools: dict[int, str] = {}  # index -> id
        self.finish_reason: str | None = None

    def start(self) -> list[dict[str, Any]]:
        return [{"type": ev.RUN_STARTED, "threadId": self.thread_id, "runId": self.run_id}]

    def _assistant_id(self) -> str:
        return f"{self.run_id}-assistant-{max(self._text_count, 1)}"

    def _close_reasoning(self) -> list[dict[str, Any]]:
        if self._reasoning_id is None:
            return []
        rid, self._reasoning_id = self._reasoning_id, None
        return [
            {"type": ev.REASONING_MESSAGE_END, "messageId": rid},
            {"type": ev.REASONING_END, "messageId": rid},
        ]

    def _close_text(self) -> list[dict[str, Any]]:
        if self._text_id is None:
            return []
        mid, self._text_id = self._text_id, None
        return [{"type": ev.TEXT_MESSAGE_END, "messageId": mid}]

    def _close_tool(self) -> list[dict[str, Any]]:
        if self._tool is None:
            return []
        tid, self._tool = self._tool, None
        return [{"type": ev.TOOL_CALL_END, "toolCallId": tid}]

    def chunk(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """Events for one chunk; UpstreamError for an error chunk or a field of the
        wrong type (never dropped silently: the run ends, what came before stays)."""
        err = data.get("error")
        if err is not None:
            msg = err.get("message") if isinstance(err, dict) else err
            msg = upstream_text(msg) if isinstance(msg, str) else _kind(msg)
            raise UpstreamError("upstream_http_error", f"upstream reported an error: {msg}")
        choices = _typed(data, "choices", list, "chunk")
        if not choices:
            return []  # e.g. a trailing usage-only chunk
        choice = choices[0]
        if not isinstance(choice, dict):
            raise UpstreamError("upstream_protocol_error", "choices[0] is not an object")
        delta = _typed(choice, "delta", dict, "choices[0]") or {}
        for name in ("content", "reasoning_content", "reasoning", "role", "refusal"):
            _typed(delta, name, str, "choices[0].delta")
        _typed(choice, "finish_reason", str, "choices[0]")
        out: list[dict[str, Any]] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out += self._close_text() + self._close_tool()
            if self._reasoning_id is None:
                self._reasoning_count += 1
                rid = f"{self.run_id}-reasoning-{self._reasoning_count}"
                self._reasoning_id = rid
                out += [
                    {"type": ev.REASONING_START, "messageId": rid},
                    {"type": ev.REASONING_MESSAGE_START, "messageId": rid, "role": "reasoning"},
                ]
            out.append(
                {"type": ev.REASONING_MESSAGE_CONTENT, "messageId": self._reasoning_id,
                 "delta": reasoning}
            )
        content = delta.get("content")
        if isinstance(content, str) and content:
            out += self._close_reasoning() + self._close_tool()
            if self._text_id is None:
                self._text_count += 1
                self._text_id = self._assistant_id()
                out.append(
                    {"type": ev.TEXT_MESSAGE_START, "messageId": self._text_id,
                     "role": "assistant"}
                )
            out.append({"type": ev.TEXT_MESSAGE_CONTENT, "messageId": self._text_id,
                        "delta": content})
        for call in _typed(delta, "tool_calls", list, "choices[0].delta") or ():
            out += self._tool_fragment(call)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
        return out

    def _tool_fragment(self, call: Any) -> list[dict[str, Any]]:
        if not isinstance(call, dict):
            raise UpstreamError("upstream_protocol_error", "tool_calls entry is not an object")
        index = call.get("index", 0)
        if isinstance(index, bool) or not isinstance(index, int):
            raise UpstreamError("upstream_protocol_error",
                                f"tool_calls[].index must be an integer, got {_kind(index)}")
        fn = call.get("function")
        if fn is None:
            fn = {}
        elif not isinstance(fn, dict):
            raise UpstreamError("upstream_protocol_error",
                                f"tool_calls[].function must be an object, got {_kind(fn)}")
        # Continuation fragments may send null for what they do not repeat; any
        # other non-string is garbage we would otherwise pass on or crash on.
        for where, value in (("id", call.get("id")), ("function.name", fn.get("name")),
                             ("function.arguments", fn.get("arguments"))):
            if value is not None and not isinstance(value, str):
                raise UpstreamError("upstream_protocol_error",
                                    f"tool_calls[].{where} must be a string, got {_kind(value)}")
        out: list[dict[str, Any]] = []
        tid = self._tools.get(index)
        if tid is None:
            out += self._close_reasoning() + self._close_text() + self._close_tool()
            call_id = call.get("id")
            tid = call_id if isinstance(call_id, str) and call_id else (
                f"{self.run_id}-call-{len(self._tools) + 1}"
            )
            self._tools[index] = tid
            self._tool = tid
            name = fn.get("name") if isinstance(fn.get("name"), str) else ""
            out.append({"type": ev.TOOL_CALL_START, "toolCallId": tid, "toolCallName": name,
                        "parentMessageId": self._assistant_id()})
        elif tid != self._tool:
            raise UpstreamError(
                "upstream_protocol_error", f"tool call {index} resumed after another began"
            )
        args = fn.get("arguments")
        if isinstance(args, str) and args:
            out.append({"type": ev.TOOL_CALL_ARGS, "toolCallId": tid, "delta": args})
        return out

    def finish(self) -> list[dict[str, Any]]:
        out = self._close_reasoning() + self._close_text() + self._close_tool()
        result = {"finishReason": self.finish_reason} if self.finish_reason else None
        end: dict[str, Any] = {"type": ev.RUN_FINISHED, "threadId": self.thread_id,
                               "runId": self.run_id}
        if result:
            end["result"] = result
        return [*out, end]


def _typed(obj: dict[str, Any], name: str, kind: type, where: str) -> Any:
    """``obj[name]`` if it is absent, null or of ``kind``; otherwise the chunk is garbage."""
    value = obj.get(name)
    if value is not None and not isinstance(value, kind):
        names: dict[type, str] = {str: "a string", list: "an array", dict: "an object"}
        expected = names[kind]
        raise UpstreamError("upstream_protocol_error",
                            f"{where}.{name} must be {expected}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


class OpenAISource:
    name = "openai"
    supports_scenarios = False

    def __init__(self, url: str, options: SourceOptions) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self.options = options
        tls_context()  # made now, at startup, not during a run

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.options.api_key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        tr = ChatTranslator(request.thread_id, request.run_id)
        body = {"model": self.options.model, "messages": chat_messages(request), "stream": True}
        yield tr.start()
        done = False
        stream = sse_data(self.url, body, self.options, self._headers())
        async with contextlib.aclosing(stream) as datas:
            async for data in datas:
                if data.strip() == "[DONE]":
                    done = True
                    break
                chunk = upstream_json_object(
                    data,
                    f"upstream sent non-JSON data: {data[:80]!r}",
                    "upstream chunk is not an object",
                    self.options.max_event_bytes,
                )
                events = tr.chunk(chunk)
                if events:
                    yield events
        if not done and tr.finish_reason is None:
            raise UpstreamError(
                "upstream_ended_early", "upstream closed the stream before finishing"
            )
        yield tr.finish()
