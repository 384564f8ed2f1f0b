"""Shared plumbing for HTTP upstreams: one SSE request, failures as UpstreamError.

What a viewer may read: every failure becomes a RUN_ERROR that every viewer of
the session sees, so its message says what kind of failure it was and never
how the server is configured — no upstream URL, host or port, no exception
text that may carry them.  Those go to the server's log.  An upstream's own
error message (OpenAI-style ``{"error": {"message": ...}}``) is shown, cut
short: it is addressed to the client; any other error body is only logged.
"""

from __future__ import annotations

import functools
import logging
import ssl
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from streampace.bounded_json import JsonLimitError
from streampace.bounded_json import loads as bounded_loads
from streampace.session.framing import UpstreamError

from .base import SourceOptions
from .sse import SseDecoder, SseError

__all__ = ["sse_data", "upstream_text", "tls_context"]

log = logging.getLogger("streampace.server")

_BODY_EXCERPT = 300


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context per process.  httpx builds one per client by loading the
    CA bundle, ~60 ms of the event loop's time on every run (every other session
    waits); sources call this when they are made, so it happens at startup."""
    return httpx.create_ssl_context()


def upstream_text(text: str, limit: int = _BODY_EXCERPT) -> str:
    """Text an upstream chose, fit for a viewer's error line: one line, cut short."""
    return " ".join(text.split())[:limit]


async def sse_data(
    url: str, body: dict[str, Any], options: SourceOptions, headers: dict[str, str] | None = None
) -> AsyncGenerator[str, None]:
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
    request_headers = {
        "Accept": "text/event-stream",
        "Cache-Control": "no-store",
        # A compressed stream would be inflated chunk by chunk without a bound.
        "Accept-Encoding": "identity",
        **(headers or {}),
    }
    max_bytes = options.max_event_bytes
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False, verify=tls_context()) as client,
            client.stream("POST", url, json=body, headers=request_headers) as response,
        ):
            if response.status_code >= 400:
                excerpt = await _error_message(response, url)
                raise UpstreamError(
                    "upstream_http_error",
                    f"upstream returned HTTP {response.status_code}"
                    + (f": {excerpt}" if excerpt else ""),
                )
            content_type = response.headers.get("content-type", "")
            if content_type.partition(";")[0].strip().lower() != "text/event-stream":
                raise UpstreamError(
                    "upstream_protocol_error",
                    f"upstream did not answer with an SSE stream (Content-Type "
                    f"{upstream_text(content_type, 60) or 'missing'})",
                )
            decoder = SseDecoder(max_bytes)
            async for chunk in response.aiter_bytes():
                for sse in decoder.feed(chunk):
                    if sse.event == "message":  # named events (pings...) carry no AG-UI data
                        yield sse.data
            for sse in decoder.close():
                if sse.event == "message":
                    yield sse.data
    except UpstreamError:
        raise
    except SseError as exc:
        raise UpstreamError("upstream_protocol_error", f"upstream sent {exc}"
                            if exc.reason == "bad_utf8" else f"upstream stream refused: {exc}"
                            ) from None
    except httpx.HTTPError as exc:
        raise _transport_error(exc, url, options) from None


def _transport_error(exc: httpx.HTTPError, url: str, options: SourceOptions) -> UpstreamError:
    """What the viewers are told of a failed exchange with the upstream.  The URL
    and the exception's own text go to the server's log only: they may name hosts
    and ports every viewer of the session would otherwise see."""
    name = type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        code = "upstream_timeout"
        shown = f"could not connect to the upstream within {options.connect_timeout_s:g} s"
    elif isinstance(exc, httpx.ReadTimeout):
        code = "upstream_timeout"
        shown = f"upstream sent nothing for {options.stall_timeout_s:g} s (stalled)"
    elif isinstance(exc, httpx.TimeoutException):
        code, shown = "upstream_timeout", "upstream timed out"
    elif isinstance(exc, httpx.ConnectError):
        code, shown = "upstream_unreachable", "cannot connect to the upstream"
    elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        code, shown = "upstream_protocol_error", f"upstream connection broke ({name})"
    else:
        code, shown = "upstream_unreachable", f"upstream request failed ({name})"
    log.warning("upstream %s: %s: %r", url, shown, exc)
    return UpstreamError(code, shown)


async def _error_message(response: httpx.Response, url: str) -> str:
    """The upstream's own error message, if its error body has one; the body is
    read only up to a few excerpts' worth, and logged, never shown raw."""
    raw = b""
    try:
        async for chunk in response.aiter_bytes():
            raw += chunk
            if len(raw) >= _BODY_EXCERPT * 4:
                break
    except httpx.HTTPError:
        return ""
    text = raw[: _BODY_EXCERPT * 4].decode("utf-8", "replace").strip()
    log.warning("upstream %s: HTTP %s: %s", url, response.status_code, upstream_text(text))
    try:  # OpenAI-style {"error": {"message": ...}}, or {"error": "..."}
        data = bounded_loads(text, max_bytes=_BODY_EXCERPT * 16, max_depth=8)
    except JsonLimitError:
        return ""
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return upstream_text(err["message"])
    if isinstance(err, str):
        return upstream_text(err)
    return ""
