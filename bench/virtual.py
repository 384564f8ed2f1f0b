"""Virtual-clock runner: replays a trace's arrivals against one strategy.

The host is the core's ManualHost (streampace.testing) driven by a small
discrete-event loop.  Frames tick on a fixed vsync grid (k * 1000/hz ms); a commit made at
time t becomes visible at the first paint at or after t, whatever clock the
strategy used (rAF, timer or the arrival itself).  Nothing here reads the wall
clock except the CPU probe around strategy callbacks.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from streampace.testing import ManualHost

from bench.metrics import Recorder
from bench.strategies import Strategy, make_strategy
from bench.traces import Trace


class VirtualHost(ManualHost):
    """ManualHost with trace arrivals, a vsync grid and per-callback CPU accounting.

    Same-time order: data lands before timers, frames run last.
    """

    def __init__(self, hz: float) -> None:
        super().__init__()
        self.period = 1000.0 / hz
        self._arrivals: list[tuple[float, int, Callable[[], None]]] = []
        self._arrival_ids = itertools.count()
        self._last_tick = -1
        self._in_drain = True  # timeouts and frames are drains; arrivals are not
        self.cpu_ns = 0  # inside frame and timer callbacks (the drains)
        self.drains = 0
        self.arrival_cpu_ns = 0  # inside receive(): enqueue work, or the paint itself for naive
        self.arrivals = 0
        self.exclude_ns = 0  # time spent in the recorder, subtracted from cpu_ns

    # loop ---------------------------------------------------------------
    def at(self, t_ms: float, callback: Callable[[], None]) -> None:
        heapq.heappush(self._arrivals, (t_ms, next(self._arrival_ids), callback))

    def _next_tick(self) -> int:
        k = math.ceil(self._now / self.period - 1e-9)
        return max(k, self._last_tick + 1)

    def _run(self, callback: Callable[[], None]) -> None:
        ex0 = self.exclude_ns
        t0 = time.perf_counter_ns()
        callback()
        spent = time.perf_counter_ns() - t0 - (self.exclude_ns - ex0)
        if self._in_drain:
            self.cpu_ns += spent
            self.drains += 1
        else:
            self.arrival_cpu_ns += spent
            self.arrivals += 1

    def run(self, until_ms: float) -> bool:
        """Run until nothing is scheduled; False if `until_ms` cut it short."""
        while True:
            arrival_t = self._arrivals[0][0] if self._arrivals else None
            timer_t = self.next_timeout_at()
            tick_t = None
            if self.pending_frames:
                k = self._next_tick()
                tick_t = k * self.period
            if arrival_t is not None and (timer_t is None or arrival_t <= timer_t) and (
                tick_t is None or arrival_t <= tick_t
            ):
                if arrival_t > until_ms:
                    return False
                self._now = max(self._now, arrival_t)
                self._in_drain = False
                try:
                    self._run(heapq.heappop(self._arrivals)[2])
                finally:
                    self._in_drain = True
            elif timer_t is not None and (tick_t is None or timer_t <= tick_t):
                if timer_t > until_ms:
                    return False
                self._now = max(self._now, timer_t)
                self.fire_next_timeout()
            elif tick_t is not None:
                if tick_t > until_ms:
                    return False
                self._now = tick_t
                self._last_tick = k
                self.run_frame()
            else:
                return True


@dataclass
class RunResult:
    strategy: str
    trace: str
    hz: float
    recorder: Recorder
    finished: bool
    cpu_us_per_drain: float | None
    drains: int
    cpu_ms_total: float
    end_ms: float


def run_virtual(
    trace: Trace,
    strategy: str | Callable[..., Strategy],
    hz: float = 60.0,
    *,
    give_up_after_ms: float = 3_600_000.0,
) -> RunResult:
    """Play `trace.arrivals` into one strategy on a virtual clock."""
    host = VirtualHost(hz)
    recorder = Recorder(trace.tracked, host.period)

    def commit(events: list[dict], reason: str) -> None:
        t0 = time.perf_counter_ns()
        recorder.commit(host.now(), events, reason)
        host.exclude_ns += time.perf_counter_ns() - t0

    strat = make_strategy(strategy, host, commit) if isinstance(strategy, str) else strategy(
        host, commit
    )
    for t_ms, batch in trace.arrivals:
        host.at(t_ms, functools.partial(strat.receive, batch))
    last = trace.arrivals[-1][0] if trace.arrivals else 0.0
    finished = host.run(last + give_up_after_ms)
    return RunResult(
        strategy=strat.name,
        trace=trace.name,
        hz=hz,
        recorder=recorder,
        finished=finished,
        # A strategy without frames or timers (naive) drains inside receive().
        cpu_us_per_drain=(
            host.cpu_ns / host.drains / 1000.0
            if host.drains
            else (host.arrival_cpu_ns / host.arrivals / 1000.0 if host.arrivals else None)
        ),
        drains=host.drains or host.arrivals,
        cpu_ms_total=(host.cpu_ns + host.arrival_cpu_ns) / 1e6,
        end_ms=host.now(),
    )
