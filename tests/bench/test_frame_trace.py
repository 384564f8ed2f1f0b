"""bench/frame_trace.py's summary of a DevTools trace, from hand-made trace events
(no browser)."""

from __future__ import annotations

from typing import Any

from bench.frame_trace import BINS, late_early, summarise
from bench.traces import Trace

from .helpers_bench import direct, text

LEAD = 300.0
MAIN = {"pid": 7, "tid": 7}
START_US = 5_000_000.0


def _trace() -> Trace:
    # 10 s of answer: 300 characters every 100 ms, 30 000 in all.
    return direct("synthetic", [(i * 100.0, [text("x" * 300)]) for i in range(100)])


def _events(paint_us: Any, other_thread: bool = True) -> list[dict[str, Any]]:
    """A probe mark, then one frame every 16 ms over the answer and its tail, each with
    a Paint of `paint_us(t_ms)` µs; the same Paints on a raster thread (not counted)."""
    events: list[dict[str, Any]] = [
        {**MAIN, "name": "probe:start", "ph": "R", "ts": START_US},
        # Before the stream (the page's boot): never counted.
        {**MAIN, "name": "Paint", "ph": "X", "ts": START_US + 10_000, "dur": 90_000,
         "tdur": 90_000},
    ]
    origin = START_US + LEAD * 1000.0
    for k in range(0, 11_000, 16):
        ts = origin + k * 1000.0
        cost = paint_us(k)
        events += [{**MAIN, "name": "BeginMainThreadFrame", "ph": "I", "ts": ts},
                   {**MAIN, "name": "Paint", "ph": "X", "ts": ts + 100, "dur": cost,
                    "tdur": cost},
                   {**MAIN, "name": "Layout", "ph": "X", "ts": ts + 50, "dur": 100,
                    "tdur": 100, "args": {"beginData": {"dirtyObjects": 3,
                                                        "totalObjects": 10 + k}}}]
        if other_thread:
            events.append({"pid": 7, "tid": 9, "name": "Paint", "ph": "X", "ts": ts,
                           "dur": 50_000, "tdur": 50_000})
    return events


def test_a_step_that_grows_with_the_answer_reads_in_late_over_early() -> None:
    s = summarise(_events(lambda t_ms: 1000 + 2 * t_ms / 10), _trace(), LEAD)
    # A tenth of the answer every second; the last tenth has its 300 ms tail too.
    assert len(s["frames"]) == BINS and all(60 <= n <= 64 for n in s["frames"][:-1])
    assert 70 <= s["frames"][-1] <= 85
    per_frame = [v / n for v, n in zip(s["ms"]["Paint"], s["frames"], strict=True)]
    assert per_frame == sorted(per_frame)  # grows bin by bin
    assert 1.0 < per_frame[0] < 1.3 and 2.7 < per_frame[-1] < 3.2
    ratio = late_early(s)
    assert ratio is not None and 2.3 < ratio < 2.9
    objects = s["counts"]["objects total"]
    assert min(objects[-1]) > max(objects[0])


def test_a_flat_step_reads_as_one_and_other_threads_do_not_count() -> None:
    s = summarise(_events(lambda _t: 2000), _trace(), LEAD)
    assert abs((late_early(s) or 0.0) - 1.0) < 1e-9
    for v, n in zip(s["ms"]["Paint"], s["frames"], strict=True):
        assert abs(v / n - 2.0) < 1e-9  # neither the boot's Paint nor the raster thread's


def test_a_step_nested_in_one_of_its_own_counts_once() -> None:
    """Blink nests a scroller's Paint in the document's: the outer one's time
    holds the inner one's."""
    events = _events(lambda _t: 2000)
    for e in list(events):
        if e["name"] == "Paint" and e.get("tid") == 7 and e["dur"] == 2000:
            events.append({**MAIN, "name": "Paint", "ph": "X", "ts": e["ts"] + 500,
                           "dur": 1200, "tdur": 1200})
            # A later Paint of the same frame, after the first: counted.
            events.append({**MAIN, "name": "Paint", "ph": "X", "ts": e["ts"] + 2500,
                           "dur": 300, "tdur": 300})
    s = summarise(events, _trace(), LEAD)
    for v, n in zip(s["ms"]["Paint"], s["frames"], strict=True):
        assert abs(v / n - 2.3) < 1e-9
