"""The built-in simulated model (streampace.sim.timed_model) on the asyncio clock."""

from __future__ import annotations

from streampace.sim.timed_model import SimulatedModel

from .timing import PacedSource

__all__ = ["DemoSource"]


class DemoSource(SimulatedModel, PacedSource):
    """`streampace serve --source demo`: the page's simulated model, paced by asyncio."""
