"""An AG-UI agent endpoint: POST a RunAgentInput, forward its SSE events."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from streampace.session.framing import upstream_json_object

from .base import RunRequest, SourceOptions
from .http_upstream import sse_data, tls_context

__all__ = ["AguiSource", "run_agent_input"]


def run_agent_input(request: RunRequest) -> dict[str, Any]:
    user = {"id": f"{request.run_id}-user", "role": "user", "content": request.prompt}
    return {
        "threadId": request.thread_id,
        "runId": request.run_id,
        "state": request.state if request.state is not None else {},
        "messages": [*request.history, user],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


class AguiSource:
    name = "agui"
    supports_scenarios = False

    def __init__(self, url: str, options: SourceOptions) -> None:
        self.url = url
        self.options = options
        tls_context()  # made now, at startup, not during a run

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        stream = sse_data(self.url, run_agent_input(request), self.options)
        async with contextlib.aclosing(stream) as datas:
            async for data in datas:
                if not data.strip():
                    continue
                # Only decoded here: the RunFramer validates every event of an
                # untrusted source, so validating here too would do it twice.
                event = upstream_json_object(
                    data,
                    f"upstream sent an invalid AG-UI event (not JSON): {data[:80]!r}",
                    "upstream sent an invalid AG-UI event (not a JSON object)",
                    self.options.max_event_bytes,
                )
                yield [event]
