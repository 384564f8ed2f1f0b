"""Release timed event groups (streampace.session.source) on the asyncio clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

from streampace.session.source import RunRequest, TimedGroup, TimedSource, TimedSteps

__all__ = ["paced", "PacedSource"]


async def paced(groups: Iterable[TimedGroup]) -> AsyncIterator[list[dict[str, Any]]]:
    """Yield each group at its due time (ms from the start), sleeping in between
    as ``TimedSteps`` says (the page's run driver waits by the same steps)."""
    loop = asyncio.get_running_loop()
    steps = TimedSteps(groups, loop.time() * 1000.0)
    while (wait_ms := steps.wait_ms(loop.time() * 1000.0)) is not None:
        # Sleep even when late (0 s), so viewers' senders run between groups.
        await asyncio.sleep(wait_ms / 1000.0)
        yield steps.take()


class PacedSource:
    """Mixin: a timed source (streampace.session.source.TimedSource) as a server
    Source, its ``timed_groups`` released on the asyncio clock."""

    async def stream(self: TimedSource, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        async for group in paced(self.timed_groups(request)):
            yield group
