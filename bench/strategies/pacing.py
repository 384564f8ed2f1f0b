"""streampace and mosoo_450: the project's real PacingScheduler, two configs.

`streampace` is the default config (adaptive playout); `mosoo_450` is the
seed's algorithm (`PacingConfig.seed()`) with its exact constants (τ 250 ms,
20–800 graphemes/s, 4096 overload, 512 events, 50 ms fallback) and per-event
segmentation — holdback_ms=0.
"""

from __future__ import annotations

from typing import Any, ClassVar

from streampace.conversation.events import BARRIER_TYPES
from streampace.pacing.scheduler import PacingConfig, PacingScheduler

from bench.strategies.base import Commit, Host, Strategy

_SESSION = "bench"


class _Scheduled(Strategy):
    config: ClassVar[PacingConfig]

    def __init__(self, host: Host, commit: Commit) -> None:
        super().__init__(host, commit)
        self.scheduler = PacingScheduler(host, self._apply, self.config)
        self._overloads = 0

    def _apply(self, session_id: str, events: list[dict[str, Any]]) -> bool:
        overloads = self.scheduler.stats()["overloads"]
        if overloads != self._overloads:
            self._overloads = overloads
            reason = "overload"
        elif any(e.get("type") in BARRIER_TYPES for e in events):
            reason = "barrier"
        else:
            reason = "paced"
        self.commit(events, reason)
        return True

    def receive(self, events: list[dict[str, Any]]) -> None:
        self.scheduler.enqueue(_SESSION, events)


class Streampace(_Scheduled):
    name = "streampace"
    summary = "streampace PacingScheduler, default: adaptive playout (cluster holdback on)"
    config = PacingConfig()


class Mosoo450(_Scheduled):
    name = "mosoo_450"
    summary = "the seed: τ 250 ms, 20–800/s, 4096 overload, per-event segmentation"
    config = PacingConfig.seed(
        tau_ms=250,
        min_rate=20,
        max_rate=800,
        overload_graphemes=4096,
        max_events_per_frame=512,
        fallback_ms=50,
        holdback_ms=0,
    )
