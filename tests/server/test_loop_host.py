"""LoopHost: the server's TimerHost on the asyncio loop (ms clock, timeouts, cancel)."""

from __future__ import annotations

import asyncio

from streampace.clock import Timeout
from streampace.server.loop_host import LoopHost


def test_loop_host_times_in_ms_fires_and_cancels() -> None:
    async def body() -> None:
        host = LoopHost()
        loop = asyncio.get_running_loop()
        assert abs(host.now() - loop.time() * 1000) < 50
        fired: list[float] = []
        done = asyncio.Event()
        t0 = host.now()
        def fire() -> None:
            fired.append(host.now() - t0)
            done.set()

        host.request_timeout(fire, 20)
        cancelled = Timeout(host, lambda: fired.append(-1.0))
        cancelled.arm(5)
        cancelled.cancel()
        await asyncio.wait_for(done.wait(), 5)
        await asyncio.sleep(0.02)
        assert len(fired) == 1 and fired[0] >= 19  # loop timers may round a little early

    asyncio.run(body())
