"""One accepted run of a session: what it was asked, its framer, and — for a
timed source that the engine paces itself — where its playback is.

Data only; the rules of what may happen to a run are the run lifecycle
(``run_lifecycle.RUN_TABLE``) and the engine that drives it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic

from .framing import RunFramer
from .outputs import Viewer
from .source import TimedGroup

__all__ = ["ActiveRun", "TimedPlayback", "DUE_SLACK_MS"]

# A little slack when comparing due times: float rounding must not turn "due now"
# into a 1e-12 ms re-arm that never advances the clock.
DUE_SLACK_MS = 0.01


class TimedPlayback:
    """A timed source's groups, released when due (ms since ``start_ms``)."""

    __slots__ = ("_groups", "start_ms", "next")

    def __init__(self, groups: Iterator[TimedGroup], start_ms: float) -> None:
        self._groups = groups
        self.start_ms = start_ms
        self.next: TimedGroup | None = next(groups, None)

    def due(self, now_ms: float) -> list[dict[str, Any]] | None:
        """The next group if it is due at ``now_ms`` (and move past it), else None."""
        group = self.next
        if group is None or group[0] > self.elapsed(now_ms):
            return None
        self.next = next(self._groups, None)
        return group[1]

    def elapsed(self, now_ms: float) -> float:
        return now_ms - self.start_ms + DUE_SLACK_MS

    def wait_ms(self, now_ms: float) -> float | None:
        """How long until the next group is due (None: the source has no more)."""
        if self.next is None:
            return None
        return max(0.0, self.next[0] - self.elapsed(now_ms) + DUE_SLACK_MS)


@dataclass
class ActiveRun(Generic[Viewer]):
    run_id: str
    prompt: str
    scenario: str | None
    framer: RunFramer
    requester: Viewer | None = None  # the viewer whose `run` it was (gets a refusal)
    playback: TimedPlayback | None = field(default=None)
