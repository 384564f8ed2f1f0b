"""What a run asks of a source, and the sans-IO form of a source: timed event groups.

A source that knows when its events are due (the simulated model, a recorded
run) says so as an iterator of ``(due_ms, events)`` groups, due times measured
from the run's start.  It never sleeps: the server's adapter
(server/sources/timing.py) waits on the asyncio clock, the page's simulated
session (sim/page_session.py) on its FrameHost timers, and both feed each
group through the same RunFramer into the same session log.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .framing import RunFramer, UpstreamError

__all__ = ["RunRequest", "TimedGroup", "TimedSource", "group_by_due", "new_run_id",
           "check_source_end", "source_scenarios"]

_ids = random.SystemRandom()

# (ms after the run's start at which the events are due, the events)
TimedGroup = tuple[float, list[dict[str, Any]]]


@dataclass(frozen=True)
class RunRequest:
    thread_id: str
    run_id: str
    prompt: str
    scenario: str | None = None
    run_index: int = 0  # 0 for a session's first run, then 1, 2, ...
    history: list[dict[str, Any]] = field(default_factory=list)  # completed AG-UI messages
    state: Any = None


class TimedSource(Protocol):
    name: str
    supports_scenarios: bool
    trusted: bool  # our own code: its events skip the framer's per-event validation

    def timed_groups(self, request: RunRequest) -> Iterator[TimedGroup]:
        """The run's events grouped by due time, in order (due times never decrease)."""
        ...


def source_scenarios(source: Any) -> Collection[str] | None:
    """The scenario names a run may ask ``source`` for; None: it has none (the
    engine then ignores a run message's ``scenario`` field)."""
    scenarios = getattr(source, "scenarios", None)
    if getattr(source, "supports_scenarios", False) and scenarios is not None:
        return scenarios()
    return None


def group_by_due(timed: Iterable[tuple[float, dict[str, Any]]]) -> Iterator[TimedGroup]:
    """Consecutive events with the same due time as one group, lazily."""
    group: list[dict[str, Any]] = []
    group_t = 0.0
    for t_ms, event in timed:
        if group and t_ms > group_t:
            yield group_t, group
            group = []
        if not group:
            group_t = t_ms
        group.append(event)
    if group:
        yield group_t, group


def new_run_id(rng: random.Random | None = None) -> str:
    """A fresh run id, ``run-`` and 12 hex digits (message ids are derived from it).

    ``rng`` makes them reproducible (a seeded page simulation); by default they
    come from the OS, so ids of concurrent sessions never collide.
    """
    return f"run-{(rng or _ids).getrandbits(48):012x}"


def check_source_end(framer: RunFramer) -> None:
    """A source stopped yielding: raise why the run cannot simply end there.

    Either the framer already ended the run for an invalid event (its
    ``failure``), or the source stopped before its terminal event.
    """
    if framer.failure is not None:
        raise framer.failure  # already ended in the log; the caller records it
    if not framer.done:
        raise UpstreamError(
            "upstream_ended_early", "the source ended without RUN_FINISHED or RUN_ERROR"
        )
