"""The server's TimerHost (streampace.clock) on the running asyncio loop.

The core's delivery buffers ask this for their batching timers; the loop's own
clock gives the time, so a timer and ``now()`` never disagree.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["LoopHost"]


class LoopHost:
    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop or asyncio.get_running_loop()

    def now(self) -> float:
        return self.loop.time() * 1000.0

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> asyncio.TimerHandle:
        return self.loop.call_later(max(0.0, delay_ms) / 1000.0, callback)

    def cancel_timeout(self, handle: asyncio.TimerHandle) -> None:
        handle.cancel()
