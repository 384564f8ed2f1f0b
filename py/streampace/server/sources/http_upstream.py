"""Shared plumbing for HTTP upstreams: one SSE request, failures as UpstreamError."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import SSEError, aconnect_sse

from streampace.session.framing import UpstreamError

from .base import SourceOptions

__all__ = ["sse_data"]

log = logging.getLogger("streampace.server")

_BODY_EXCERPT = 300


async def sse_data(
    url: str, body: dict[str, Any], options: SourceOptions, headers: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """POST ``body`` as JSON and yield each SSE event's ``data`` field.

    Every failure mode is raised as UpstreamError with a code and a message a
    user can act on; the request is closed when the caller stops iterating.
    """
    timeout = httpx.Timeout(
        connect=options.connect_timeout_s,
        read=options.stall_timeout_s,
        write=options.connect_timeout_s,
        pool=options.connect_timeout_s,
    )
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False) as client,
            aconnect_sse(client, "POST", url, json=body, headers=dict(headers or {})) as source,
        ):
            response = source.response
            if response.status_code >= 400:
                excerpt = await _excerpt(response)
                raise UpstreamError(
                    "upstream_http_error",
                    f"upstream returned HTTP {response.status_code}"
                    + (f": {excerpt}" if excerpt else ""),
                )
            async for sse in source.aiter_sse():
                if sse.event not in ("", "message"):
                    continue  # named events (e.g. comments/pings) carry no AG-UI data
                yield sse.data
    except UpstreamError:
        raise
    except httpx.ConnectTimeout:
        raise UpstreamError(
            "upstream_timeout", f"could not connect to {url} within {options.connect_timeout_s:g} s"
        ) from None
    except httpx.ReadTimeout:
        raise UpstreamError(
            "upstream_timeout",
            f"upstream sent nothing for {options.stall_timeout_s:g} s (stalled)",
        ) from None
    except httpx.TimeoutException as exc:
        raise UpstreamError("upstream_timeout", f"upstream timed out: {exc!r}") from None
    except httpx.ConnectError as exc:
        raise UpstreamError("upstream_unreachable", f"cannot connect to {url}: {exc}") from None
    except SSEError as exc:
        raise UpstreamError("upstream_protocol_error", f"not an SSE stream: {exc}") from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise UpstreamError(
            "upstream_protocol_error", f"upstream connection broke: {exc or type(exc).__name__}"
        ) from None
    except httpx.HTTPError as exc:
        raise UpstreamError("upstream_unreachable", f"upstream request failed: {exc!r}") from None


async def _excerpt(response: httpx.Response) -> str:
    try:
        raw = await response.aread()
    except httpx.HTTPError:
        return ""
    text = raw[: _BODY_EXCERPT * 4].decode("utf-8", "replace").strip()
    try:  # OpenAI-style {"error": {"message": ...}}
        err = json.loads(text).get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            text = err["message"]
        elif isinstance(err, str):
            text = err
    except (ValueError, AttributeError):
        pass
    return " ".join(text.split())[:_BODY_EXCERPT]
