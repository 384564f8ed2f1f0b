"""The built-in simulated model (streampace.session.sim_model) on the asyncio clock."""

from __future__ import annotations

from streampace.session.sim_model import SimulatedModel

from .timing import PacedSource

__all__ = ["DemoSource"]


class DemoSource(SimulatedModel, PacedSource):
    """`streampace serve --source demo`: the page's simulated model, paced by asyncio."""
