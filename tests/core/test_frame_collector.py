"""browser/collector.py: the cyclic collector runs in a timeout after the frame
that filled the young generation, never inside a frame callback (CPython, the
host stand-in; the page's wiring: browser/page_host.py)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from streampace.browser.collector import FrameCollector
from streampace.testing import ManualHost


class FrameEndHost(ManualHost):
    """ManualHost that tells `frame_end_listeners` after a frame's callbacks, as
    BrowserHost does, and records whether a frame callback is running."""

    def __init__(self) -> None:
        super().__init__()
        self.frame_end_listeners: list[Callable[[], None]] = []
        self.in_frame = False

    def run_frame(self) -> int:
        self.in_frame = True
        try:
            ran = super().run_frame()
        finally:
            self.in_frame = False
        for listener in self.frame_end_listeners:
            listener()
        return ran


@pytest.fixture
def threshold() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.collect()  # the young count starts at 0
    yield saved
    gc.set_threshold(*saved)


def _rig(collected: list[tuple[int, bool]]) -> tuple[FrameEndHost, FrameCollector]:
    host = FrameEndHost()
    collector = FrameCollector(
        host, collect=lambda generation: collected.append((generation, host.in_frame)))
    host.frame_end_listeners.append(collector.after_frame)
    return host, collector


def _allocating_frame(kept: list[Any], n: int) -> Callable[[], None]:
    """A frame callback that leaves `n` new tracked objects alive."""
    def frame() -> None:
        kept.extend([] for _ in range(n))
    return frame


def test_a_full_young_generation_is_collected_in_a_timeout_after_the_frame(
        threshold: tuple[int, int, int]) -> None:
    collected: list[tuple[int, bool]] = []
    host, collector = _rig(collected)
    kept: list[Any] = []
    host.request_frame(_allocating_frame(kept, collector.young_limit + 100))
    host.run_frame()
    assert collected == []  # the frame ran no collection
    assert host.pending_timeouts == 1
    host.run_until(host.now())
    assert collected == [(1, False)]  # one step, from the timer
    assert collector.steps == 1
    collector.stop()


def test_a_frame_below_the_limit_asks_for_nothing(threshold: tuple[int, int, int]) -> None:
    collected: list[tuple[int, bool]] = []
    host, collector = _rig(collected)
    host.request_frame(lambda: None)
    host.run_frame()
    assert host.pending_timeouts == 0
    collector.stop()


def test_one_step_is_asked_for_however_many_frames_end_before_it_runs(
        threshold: tuple[int, int, int]) -> None:
    collected: list[tuple[int, bool]] = []
    host, collector = _rig(collected)
    kept: list[Any] = []
    for _ in range(3):
        host.request_frame(_allocating_frame(kept, collector.young_limit))
        host.run_frame()
    assert host.pending_timeouts == 1
    host.run_all()
    assert collected == [(1, False)]
    collector.stop()


def test_the_automatic_collector_stays_on_as_a_later_fallback_until_stopped(
        threshold: tuple[int, int, int]) -> None:
    host, collector = _rig([])
    assert gc.isenabled()
    assert gc.get_threshold() == (collector.young_limit * 4, *threshold[1:])
    collector.stop()
    assert gc.get_threshold() == threshold


def test_stop_cancels_a_pending_step(threshold: tuple[int, int, int]) -> None:
    collected: list[tuple[int, bool]] = []
    host, collector = _rig(collected)
    kept: list[Any] = []
    host.request_frame(_allocating_frame(kept, collector.young_limit + 100))
    host.run_frame()
    collector.stop()
    host.run_all()
    assert collected == []
    collector.after_frame()  # stopped: asks for nothing more
    assert host.pending_timeouts == 0


def test_a_real_step_collects_cycles_made_in_frames(threshold: tuple[int, int, int]) -> None:
    host = FrameEndHost()
    collector = FrameCollector(host)
    host.frame_end_listeners.append(collector.after_frame)
    found: list[int] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop":
            found.append(info["collected"])

    def make_cycles() -> None:
        for _ in range(collector.young_limit):
            node: list[Any] = []
            node.append(node)

    gc.callbacks.append(on_gc)
    try:
        host.request_frame(make_cycles)
        host.run_frame()
        in_frames = list(found)
        host.run_all()
    finally:
        gc.callbacks.remove(on_gc)
        collector.stop()
    assert in_frames == []
    assert sum(found) >= collector.young_limit  # the cycles went in the step
