"""A source made of the application's own function: bring your own agent.

The function gets the run (``RunRequest``: prompt, history, state, ids) and returns
an async iterator of AG-UI events. An event may be a dict in wire shape, an
``ag_ui.core`` event object (anything with pydantic's ``model_dump``), or text as
an AG-UI SSE encoder writes it (``data: {...}`` blocks) or plain JSON — the forms
agent frameworks' AG-UI adapters yield. Every event is validated by the run framer
like any other untrusted source's; RUN_STARTED and the user's message are added
when missing, and RUN_FINISHED when the iterator ends without a terminal event.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from streampace.conversation import events as ev
from streampace.session.framing import UpstreamError, upstream_json_object

from .sources.base import RunRequest

__all__ = ["Agent", "AgentSource", "as_events"]

Agent = Callable[[RunRequest], AsyncIterator[Any]]


def _parse_json(text: str) -> dict[str, Any]:
    return upstream_json_object(
        text,
        f"the agent yielded text that is not JSON: {text[:60]!r}",
        "the agent yielded JSON that is not an object",
    )


def _sse_events(text: str) -> list[dict[str, Any]]:
    """The events in SSE-encoded text (blank-line separated blocks of ``data:`` lines)."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in block.split("\n")
                if line.startswith("data:")]
        if data:
            out.append(_parse_json("\n".join(data)))
    return out


def as_events(item: Any) -> list[dict[str, Any]]:
    """The AG-UI events (wire-shape dicts) in one item the agent yielded."""
    if isinstance(item, dict):
        return [item]
    if hasattr(item, "model_dump"):  # ag_ui.core events (pydantic models, camelCase aliases)
        return [item.model_dump(mode="json", by_alias=True, exclude_none=True)]
    if isinstance(item, bytes):
        try:
            item = item.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UpstreamError("upstream_protocol_error",
                                f"the agent yielded invalid UTF-8 (at byte {exc.start})") from None
    if isinstance(item, str):
        text = item.strip()
        if not text:
            return []
        return [_parse_json(text)] if text.startswith("{") else _sse_events(text)
    raise UpstreamError(
        "upstream_protocol_error",
        f"the agent yielded a {type(item).__name__}; yield AG-UI events (dicts, ag_ui.core "
        "events or SSE text)",
    )


class AgentSource:
    """Adapts an application's agent function to the server's Source interface."""

    supports_scenarios = False

    def __init__(self, agent: Agent, name: str | None = None) -> None:
        if not callable(agent):
            raise TypeError(f"agent must be a function of the run, got {type(agent).__name__}")
        self.agent = agent
        self.name = name or getattr(agent, "__name__", "agent")

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        items = self.agent(request)
        if not hasattr(items, "__aiter__"):
            raise TypeError(f"{self.name}() must return an async iterator of AG-UI events")
        thread_id, run_id = request.thread_id, request.run_id
        ended = False
        async with contextlib.AsyncExitStack() as stack:
            if hasattr(items, "aclose"):  # a cancelled run closes the agent's generator
                stack.push_async_callback(items.aclose)
            async for item in items:
                for event in as_events(item):
                    kind = event.get("type")
                    if kind == ev.RUN_STARTED:
                        thread_id = event.get("threadId", thread_id)
                        run_id = event.get("runId", run_id)
                    ended = ended or kind in ev.RUN_TERMINAL_TYPES
                    yield [event]
        if not ended:
            yield [{"type": ev.RUN_FINISHED, "threadId": thread_id, "runId": run_id}]
