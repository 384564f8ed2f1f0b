"""Replay a recorded AG-UI run (JSONL with ``timestamp`` fields) with its timing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streampace.conversation import events as ev
from streampace.session.source import TimedGroup, group_by_due

from .base import RunRequest, SourceSpecError
from .timing import PacedSource

__all__ = ["ReplaySource", "load_jsonl"]


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a JSONL recording; errors name the line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceSpecError(f"replay: cannot read {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SourceSpecError(f"replay: {p} is not UTF-8 ({exc.reason})") from None
    out: list[dict[str, Any]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(ev.parse_event(line))
        except ev.EventError as exc:
            raise SourceSpecError(f"replay: {p}:{lineno}: {exc}") from None
    if not out:
        raise SourceSpecError(f"replay: {p} contains no events")
    return out


class ReplaySource(PacedSource):
    name = "replay"
    supports_scenarios = False

    def __init__(self, events: list[dict[str, Any]], speed: float = 1.0) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be > 0, got {speed!r}")
        self.events = events
        self.speed = speed

    @classmethod
    def load(cls, path: str, speed: float = 1.0) -> ReplaySource:
        return cls(load_jsonl(path), speed=speed)

    def _timed(self, request: RunRequest) -> list[tuple[float, dict[str, Any]]]:
        first: float | None = None
        last = 0.0
        out = []
        for event in self.events:
            ts = event.get("timestamp")
            if isinstance(ts, (int, float)) and not isinstance(ts, bool):
                if first is None:
                    first = float(ts)
                # Clock steps backwards in a recording never reorder events.
                last = max(last, (float(ts) - first) / self.speed)
            event = dict(event)
            if event["type"] in (ev.RUN_STARTED, ev.RUN_FINISHED):
                # The recording's ids belong to another thread; this run is the session's.
                event["threadId"] = request.thread_id
                event["runId"] = request.run_id
            out.append((last, event))
        return out

    def timed_groups(self, request: RunRequest) -> Iterator[TimedGroup]:
        return group_by_due(self._timed(request))
