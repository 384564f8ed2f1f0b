"""Release timed event groups (streampace.session.source) on the asyncio clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

from streampace.session.source import RunRequest, TimedGroup, TimedSource

__all__ = ["paced", "PacedSource"]


async def paced(groups: Iterable[TimedGroup]) -> AsyncIterator[list[dict[str, Any]]]:
    """Yield each group at its due time (ms from the start), sleeping in between.

    Due times are measured from one start instant, so sleep overshoot does not
    accumulate over a long run.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    for t_ms, group in groups:
        delay = start + t_ms / 1000 - loop.time()
        # Sleep even when late (0 s), so viewers' senders run between groups.
        await asyncio.sleep(max(delay, 0.0))
        yield group


class PacedSource:
    """Mixin: a timed source (streampace.session.source.TimedSource) as a server
    Source, its ``timed_groups`` released on the asyncio clock."""

    async def stream(self: TimedSource, request: RunRequest) -> AsyncIterator[list[dict[str, Any]]]:
        async for group in paced(self.timed_groups(request)):
            yield group
