"""The built-in simulated model (streampace.session.sim_model) on the asyncio clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from streampace.session.sim_model import SimulatedModel

from .base import RunRequest
from .timing import paced

__all__ = ["DemoSource"]


class DemoSource(SimulatedModel):
    async def stream(self, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        async for group in paced(self.timed_groups(request)):
            yield group
