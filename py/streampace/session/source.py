"""What a run asks of a source, and the sans-IO form of a source: timed event groups.

A source that knows when its events are due (the simulated model, a recorded
run) says so as an iterator of ``(due_ms, events)`` groups, due times measured
from the run's start.  It never sleeps: ``TimedSteps`` says how long its driver
waits before each group, and the driver waits — the server's adapter
(server/sources/timing.py) on the asyncio clock, the page's run driver
(client/page_runner.py) on its FrameHost timers.  Both then hand each group to the
engine's ``source_group``, the same way as any other source's.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .framing import RunFramer, UpstreamError

__all__ = ["RunRequest", "TimedGroup", "TimedSource", "TimedSteps", "group_by_due",
           "new_run_id", "check_source_end", "source_scenarios", "DUE_SLACK_MS"]

_ids = random.SystemRandom()

# (ms after the run's start at which the events are due, the events)
TimedGroup = tuple[float, list[dict[str, Any]]]

# A little slack when asking whether a group is due: float rounding must not turn
# "due now" into a 1e-12 ms wait that never advances a virtual clock.
DUE_SLACK_MS = 0.01


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


class TimedSteps:
    """A timed source's groups as steps of its driver: wait ``wait_ms(now)``, then
    take the next group (``take``) — or every group ``due(now)`` at once.

    Due times count from one start instant (``start_ms``), so a driver's late
    wake-ups never add up over a long run.  The groups are pulled one at a time,
    when a driver first asks about the next one.
    """

    __slots__ = ("_groups", "start_ms", "_next", "_peeked")

    def __init__(self, groups: Iterable[TimedGroup], start_ms: float) -> None:
        self._groups = iter(groups)
        self.start_ms = start_ms
        self._next: TimedGroup | None = None
        self._peeked = False

    def _peek(self) -> TimedGroup | None:
        if not self._peeked:
            self._next = next(self._groups, None)
            self._peeked = True
        return self._next

    def wait_ms(self, now_ms: float) -> float | None:
        """How long from ``now_ms`` until the next group is due (0 if it is late);
        None: the source has no more."""
        group = self._peek()
        if group is None:
            return None
        return max(0.0, group[0] - self._elapsed(now_ms) + DUE_SLACK_MS)

    def take(self) -> list[dict[str, Any]]:
        """The next group, due or not (its driver waited ``wait_ms`` for it)."""
        group = self._peek()
        if group is None:
            raise RuntimeError("the timed source has no more groups")
        self._peeked = False
        return group[1]

    def due(self, now_ms: float) -> list[dict[str, Any]] | None:
        """The next group if it is due at ``now_ms`` (and move past it), else None."""
        group = self._peek()
        if group is None or group[0] > self._elapsed(now_ms):
            return None
        return self.take()

    def _elapsed(self, now_ms: float) -> float:
        return now_ms - self.start_ms + DUE_SLACK_MS


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
