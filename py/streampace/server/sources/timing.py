"""Release timestamped events on the asyncio clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

__all__ = ["paced"]


async def paced(
    timed: Iterable[tuple[float, dict[str, Any]]],
) -> AsyncIterator[list[dict[str, Any]]]:
    """Yield events grouped by due time (ms from the start), sleeping in between.

    Due times are measured from one start instant, so sleep overshoot does not
    accumulate over a long run.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    group: list[dict[str, Any]] = []
    group_t = 0.0
    for t_ms, event in timed:
        if group and t_ms > group_t:
            yield group
            group = []
        if not group:
            group_t = t_ms
            delay = start + t_ms / 1000 - loop.time()
            # Sleep even when late (0 s), so viewers' senders run between groups.
            await asyncio.sleep(max(delay, 0.0))
        group.append(event)
    if group:
        yield group
