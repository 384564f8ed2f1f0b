"""The built-in simulated model (streampace.sim): no network, deterministic by seed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from .base import RunRequest
from .timing import paced

__all__ = ["DemoSource"]


class DemoSource:
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
        from streampace.sim import SCENARIOS

        return tuple(SCENARIOS)

    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        from streampace.sim import iter_simulate

        # Each run of a session gets its own seed so consecutive answers differ,
        # while the same --seed reproduces the same sequence of answers.
        timed = iter_simulate(
            request.scenario or "demo",
            seed=self.seed + request.run_index,
            speed=self.speed,
            prompt=None,  # the framer echoes the prompt, the same way for every source
            thread_id=request.thread_id,
            run_id=request.run_id,
        )
        async for group in paced((te.t_ms, te.event) for te in timed):
            yield group
