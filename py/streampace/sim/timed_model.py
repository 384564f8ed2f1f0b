"""The simulated model (streampace.sim.scenarios) as a timed source: no network,
deterministic by seed.

The server's `demo` source (server/sources/demo.py) and the page's simulated
session (client/page_session.py) both run this, so the same seed, scenario and
run index give the same events from either.
"""

from __future__ import annotations

from collections.abc import Iterator

from streampace.session.source import RunRequest, TimedGroup, group_by_due
from streampace.sim.scenarios import SCENARIOS, iter_simulate

__all__ = ["SimulatedModel", "DEFAULT_SCENARIO"]

DEFAULT_SCENARIO = "demo"  # a run that names none


class SimulatedModel:
    name = "demo"
    supports_scenarios = True
    trusted = True  # our own simulated model: its events skip per-event validation

    def __init__(self, speed: float = 1.0, seed: int = 0) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be > 0, got {speed!r}")
        self.speed = speed
        self.seed = seed

    @staticmethod
    def scenarios() -> tuple[str, ...]:
        return tuple(SCENARIOS)

    def timed_groups(self, request: RunRequest) -> Iterator[TimedGroup]:
        # Each run of a session gets its own seed so consecutive answers differ,
        # while the same seed reproduces the same sequence of answers.
        timed = iter_simulate(
            request.scenario or DEFAULT_SCENARIO,
            seed=self.seed + request.run_index,
            speed=self.speed,
            prompt=None,  # the framer echoes the prompt, the same way for every source
            thread_id=request.thread_id,
            run_id=request.run_id,
        )
        return group_by_due((te.t_ms, te.event) for te in timed)
