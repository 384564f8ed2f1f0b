"""The source interface and the ``--source`` parser."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from streampace.session.framing import MAX_UPSTREAM_EVENT_BYTES
from streampace.session.source import RunRequest

__all__ = ["RunRequest", "Source", "SourceSpecError", "SourceOptions", "parse_source"]


class SourceSpecError(ValueError):
    """A ``--source`` value that cannot be used; the message says why."""


class Source(Protocol):
    name: str
    supports_scenarios: bool

    def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        """Yield groups of events as they become due; raise UpstreamError on failure."""
        ...


@dataclass(frozen=True)
class SourceOptions:
    speed: float = 1.0
    seed: int = 0
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    connect_timeout_s: float = 10.0
    stall_timeout_s: float = 60.0  # no bytes from an upstream for this long = stalled
    # One upstream event (an SSE event's data) at most; more ends the run
    # with upstream_protocol_error (docs/security.md).
    max_event_bytes: int = MAX_UPSTREAM_EVENT_BYTES


def parse_source(spec: str, options: SourceOptions | None = None) -> Source:
    options = options or SourceOptions()
    kind, _, arg = spec.partition(":")
    if kind == "demo" and not arg:
        from .demo import DemoSource

        return DemoSource(speed=options.speed, seed=options.seed)
    if kind == "replay":
        from .replay import ReplaySource

        if not arg:
            raise SourceSpecError("replay:PATH needs a path to a JSONL file")
        return ReplaySource.load(arg, speed=options.speed)
    if kind in ("agui", "openai"):
        if not arg.startswith(("http://", "https://")):
            raise SourceSpecError(f"{kind}:URL needs an http:// or https:// URL, got {arg!r}")
        if kind == "agui":
            from .agui import AguiSource

            return AguiSource(arg, options)
        from .openai import OpenAISource

        if not options.model:
            raise SourceSpecError("openai:URL needs --model")
        return OpenAISource(arg, options)
    raise SourceSpecError(
        f"unknown source {spec!r}: use demo, replay:PATH, agui:URL or openai:URL"
    )
