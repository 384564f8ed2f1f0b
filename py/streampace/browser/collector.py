"""The cyclic garbage collector, run between animation frames instead of in them.

The collector starts when the young generation's count of tracked objects
crosses its first threshold, so on its own it runs inside whatever allocates
next: in the page that is mostly a frame's Python (the Markdown parse, the DOM
plan). A pause there lands in one frame: replayed in the page (`python -m
bench.page_frames --trace md_32k`), pauses of 4-18 ms at 1x fell in frames whose
own Python is ~0.5 ms.

`FrameCollector` owns the threshold while the page streams: after a frame's
work it looks at the young count, and once that is past the interpreter's own
threshold it asks the host for a timeout, a task of its own between frames
(never a frame callback), that runs one collection step. The automatic
collector stays on as the fallback, its first threshold raised `fallback`
times: a page whose timers stop (a hidden tab is throttled) still collects,
and memory stays bounded whatever the host does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from streampace.clock import Timeout, TimerHost

__all__ = ["FrameCollector"]

# The fallback: the automatic collector starts this many times later than the
# interpreter would on its own (a young generation of 8000 in 3.14, 2800 in 3.11).
_FALLBACK = 4
# The interpreter's own first threshold, read when this module is imported
# (into the page's snapshot, before anything of ours changes it).
_INTERPRETER_YOUNG = gc.get_threshold()[0]
# One step: in 3.14 (incremental) an increment of the old generation with the
# young one; in 3.11 the two younger generations. Never the full heap.
_STEP_GENERATION = 1


class FrameCollector:
    """Collect in a timer after the frame that filled the young generation.

    `timers`: the page's host (its timeouts run as their own tasks, never
    inside an animation frame). `after_frame()` is what a host calls once a
    frame's callbacks have run. `collect(generation)` is the collector (tests
    count its calls). `stop()` gives the threshold back.
    """

    def __init__(self, timers: TimerHost, fallback: int = _FALLBACK,
                 collect: Callable[[int], Any] = gc.collect) -> None:
        self._collect = collect
        self._saved = gc.get_threshold()
        self.young_limit = _INTERPRETER_YOUNG
        self._timeout = Timeout(timers, self.step)
        self.steps = 0
        self.running = True
        gc.set_threshold(self.young_limit * max(1, fallback), *self._saved[1:])

    def after_frame(self) -> None:
        """Cheap, called every frame: a collection step is due once the young
        generation is as full as the interpreter would let it get."""
        if self.running and not self._timeout.armed and gc.get_count()[0] >= self.young_limit:
            self._timeout.arm(0.0)

    def step(self) -> None:
        """One collection step (from the timer: between frames)."""
        if not self.running:
            return
        self.steps += 1
        self._collect(_STEP_GENERATION)

    def stop(self) -> None:
        """Cancel a pending step and give the interpreter its threshold back."""
        if not self.running:
            return
        self.running = False
        self._timeout.cancel()
        gc.set_threshold(*self._saved)
