"""Virtual-clock runner: replays a trace's arrivals against one strategy.

The host is a small discrete-event loop implementing the core's FrameHost
protocol.  Frames tick on a fixed vsync grid (k * 1000/hz ms); a commit made at
time t becomes visible at the first paint at or after t, whatever clock the
strategy used (rAF, timer or the arrival itself).  Nothing here reads the wall
clock except the CPU probe around strategy callbacks.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.metrics import Recorder
from bench.strategies import Strategy, make_strategy
from bench.traces import Trace

_ARRIVAL, _TIMER = 0, 1  # same-time order: data lands before timers, frames run last


class VirtualHost:
    """FrameHost on a virtual clock, with per-callback CPU accounting."""

    def __init__(self, hz: float) -> None:
        self.period = 1000.0 / hz
        self._now = 0.0
        self._seq = 0
        self._heap: list[tuple[float, int, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._frames: dict[int, Callable[[], None]] = {}
        self._running: dict[int, Callable[[], None]] = {}  # this tick's, still to run
        self._last_tick = -1
        self.cpu_ns = 0  # inside frame and timer callbacks (the drains)
        self.drains = 0
        self.arrival_cpu_ns = 0  # inside receive(): enqueue work, or the paint itself for naive
        self.arrivals = 0
        self.exclude_ns = 0  # time spent in the recorder, subtracted from cpu_ns

    # FrameHost protocol -------------------------------------------------
    def now(self) -> float:
        return self._now

    def request_frame(self, callback: Callable[[], None]) -> Any:
        self._seq += 1
        self._frames[self._seq] = callback
        return self._seq

    def cancel_frame(self, handle: Any) -> None:
        self._frames.pop(handle, None)
        self._running.pop(handle, None)

    def request_timeout(self, callback: Callable[[], None], delay_ms: float) -> Any:
        self._seq += 1
        heapq.heappush(
            self._heap, (self._now + max(0.0, float(delay_ms)), _TIMER, self._seq, callback)
        )
        return self._seq

    def cancel_timeout(self, handle: Any) -> None:
        self._cancelled.add(handle)

    # loop ---------------------------------------------------------------
    def at(self, t_ms: float, callback: Callable[[], None]) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t_ms, _ARRIVAL, self._seq, callback))

    def _next_tick(self) -> int:
        k = math.ceil(self._now / self.period - 1e-9)
        return max(k, self._last_tick + 1)

    def _timed(self, callback: Callable[[], None], drain: bool) -> None:
        ex0 = self.exclude_ns
        t0 = time.perf_counter_ns()
        callback()
        spent = time.perf_counter_ns() - t0 - (self.exclude_ns - ex0)
        if drain:
            self.cpu_ns += spent
            self.drains += 1
        else:
            self.arrival_cpu_ns += spent
            self.arrivals += 1

    def run(self, until_ms: float) -> bool:
        """Run until nothing is scheduled; False if `until_ms` cut it short."""
        while True:
            heap = self._heap
            while heap and heap[0][2] in self._cancelled:
                self._cancelled.discard(heapq.heappop(heap)[2])
            tick_t = None
            if self._frames:
                k = self._next_tick()
                tick_t = k * self.period
            if heap and (tick_t is None or heap[0][0] <= tick_t):
                t, kind, _seq, cb = heapq.heappop(heap)
                if t > until_ms:
                    return False
                self._now = max(self._now, t)
                self._timed(cb, drain=kind == _TIMER)
            elif tick_t is not None:
                if tick_t > until_ms:
                    return False
                self._now = tick_t
                self._last_tick = k
                self._running, self._frames = self._frames, {}
                while self._running:
                    handle = next(iter(self._running))
                    self._timed(self._running.pop(handle), drain=True)
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
        host.at(t_ms, lambda batch=batch: strat.receive(batch))
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
