"""bench/whole_frame.py's figures from a hand-made probe record (no browser)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.traces import Trace
from bench.whole_frame import TAIL_MS, frame_figures

from .helpers_bench import direct, text

LEAD = 300.0


def _trace(chars: int = 30_000, batches: int = 100, gap_ms: float = 100.0) -> Trace:
    size = chars // batches
    return direct("synthetic", [(i * gap_ms, [text("x" * size)]) for i in range(batches)])


def _probe(frames: list[list[float]], loaf: Iterable[list[Any]] = (),
           longtasks: Iterable[list[float]] = (), started_at: float = 1000.0) -> dict[str, Any]:
    return {"startedAt": started_at, "frames": frames, "loaf": list(loaf),
            "longtasks": list(longtasks), "errors": []}


def test_frame_cost_that_grows_with_the_answer_shows_in_late_over_early() -> None:
    trace = _trace()  # 10 s: 300 characters every 100 ms
    start = 1000.0 + LEAD
    # One frame every 16 ms; its cost grows with the stream: 1 ms early, 3 ms late.
    frames = [[start + t, 1.0 + 2.0 * t / 10_000.0] for t in range(0, 10_000, 16)]
    out = frame_figures(_probe(frames), trace, LEAD)
    assert out["frame_early_late_n"][0] >= 10 and out["frame_early_late_n"][1] >= 10
    assert out["frame_early_ms"] < 1.3 and out["frame_late_ms"] > 2.7
    assert 2.0 < out["frame_late_early"] < 3.2
    assert out["answer_chars"] == 30_000


def test_flat_frame_cost_reads_as_one() -> None:
    trace = _trace()
    start = 1000.0 + LEAD
    frames = [[start + t, 2.0] for t in range(0, 10_000, 16)]
    assert frame_figures(_probe(frames), trace, LEAD)["frame_late_early"] == 1.0


def test_only_long_frames_and_tasks_while_the_answer_streams_count() -> None:
    trace = _trace()
    start = 1000.0 + LEAD
    end = start + 9_900.0 + TAIL_MS
    loaf = [
        [start - 200.0, 400.0, 300.0, 20.0, 0.0, 350.0, 0.0, []],  # boot's, before the stream
        [start + 500.0, 80.0, 60.0, 15.0, 5.0, 30.0, 0.0, []],
        # Began 100 ms after its start; 12 ms of scripts ran before that.
        [start + 5000.0, 120.0, 20.0, 90.0, 0.0, 70.0, start + 5100.0, [], 12.0],
        [end + 100.0, 300.0, 290.0, 5.0, 0.0, 250.0, 0.0, []],  # the harness's report, after
    ]
    tasks = [[start - 100.0, 200.0], [start + 600.0, 70.0], [end + 50.0, 90.0]]
    out = frame_figures(_probe([], loaf, tasks), trace, LEAD)
    assert out["loaf_n"] == 2 and out["loaf_max_ms"] == 120.0
    assert out["loaf_worst_script_ms"] == 20.0 and out["loaf_worst_style_layout_ms"] == 90.0
    assert out["loaf_worst_wait_ms"] == 88.0
    assert out["loaf_script_ms"] == 80.0 and out["loaf_style_layout_ms"] == 105.0
    assert out["tasks_n"] == 1 and out["tasks_max_ms"] == 70.0
    assert out["frame_p99_ms"] is None and "frame_late_early" not in out


def test_a_short_answer_has_no_late_over_early() -> None:
    trace = _trace(chars=4_000, batches=40)
    start = 1000.0 + LEAD
    frames = [[start + t, 1.0] for t in range(0, 4_000, 16)]
    out = frame_figures(_probe(frames), trace, LEAD)
    assert "frame_late_early" not in out and out["frame_n"] > 100


def test_the_followers_python_is_told_per_frame_beside_the_frame_callbacks() -> None:
    trace = _trace()
    frames = [[1000.0 + LEAD + t, 2.0] for t in range(0, 10_000, 16)]
    probe = _probe(frames)
    probe["py"] = {"n": 400, "p50": 0.5, "p99": 1.5, "mean": 0.6, "followerMs": 100.0}
    out = frame_figures(probe, trace, LEAD)
    assert (out["py_ms_p99"], out["follower_ms_mean"]) == (1.5, 0.25)
    del probe["py"]["followerMs"]  # a page that does not say
    assert frame_figures(probe, trace, LEAD)["follower_ms_mean"] is None
