"""bench.page_frames' figures: a frame's least time over runs, the replay's own code."""

from __future__ import annotations

from bench.page_frames import (
    PART_ORDER,
    REPLAY_PY,
    gc_report,
    least_per_frame,
    parts_report,
    quantile,
    report,
)


def test_a_frame_counts_its_least_time_over_the_runs() -> None:
    runs = [[[17, 0.3], [33, 9.0], [50, 0.2]],
            [[17, 5.0], [33, 0.4], [50, 0.2], [67, 1.0]]]
    at, least = least_per_frame(runs)
    assert at == [17, 33, 50]  # the frames every run has
    assert least == [0.3, 0.4, 0.2]


def test_quantiles_and_the_report_name_the_slowest_frames() -> None:
    assert quantile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.99) == 4.0
    lines = report("as is", [[[17, 0.3], [33, 2.5]], [[17, 0.4], [33, 1.5]]], slowest=1)
    assert lines[0].startswith("as is: 2 frames; least over 2 runs: p50 0.30, p90 1.50")
    assert "each run's own p99 [2.5, 1.5]" in lines[0]
    assert lines[1].endswith("33: 1.50")


def test_the_replay_code_compiles() -> None:
    compile(REPLAY_PY, "<page>", "exec")


def test_the_gc_line_counts_the_pauses_each_run_had_in_its_frames() -> None:
    runs = [{"frames": [[17, 0.3, 0.0], [33, 2.5, 1.75]], "gc_outside_ms": 3.0, "objects": 10},
            {"frames": [[17, 0.4, 0.5], [33, 1.5, 0.25]], "gc_outside_ms": 0.0, "objects": 12}]
    line = gc_report(runs)
    assert "pauses, max ms): 1 1.75, 2 0.50;" in line
    assert "outside frames per run (pauses, max, total ms): 0 0.00 3.0, 0 0.00 0.0;" in line
    assert line.endswith("objects after each run: 10, 12")


def test_the_parts_lines_give_each_part_per_frame_and_its_share() -> None:
    runs = [{"frames": [[17, 0.5], [33, 0.5]], "parts": {"DOM commit": 0.5, "text writes": 0.2}},
            {"frames": [[17, 1.0], [33, 1.0]], "parts": {"DOM commit": 1.0, "text writes": 0.4}},
            {"frames": [[17, 0.6], [33, 0.6]], "parts": {"DOM commit": 0.6, "text writes": 0.3}}]
    lines = parts_report(runs)
    # Medians over the runs of ms per frame: frame 0.6, commit 0.3, text 0.15.
    assert lines[0] == "  parts, ms per frame with work (median of 3 runs): frame 0.600"
    assert "    DOM commit 0.300 (50 %)" in lines
    assert "        text writes 0.150 (25 %)" in lines
    assert "    live state 0.000 (0 %)" in lines  # not timed in these runs: none


def test_no_parts_lines_without_timed_runs() -> None:
    assert parts_report([{"frames": [[17, 0.5]], "parts": None}]) == []


def test_the_report_rows_are_the_parts_the_page_times() -> None:
    # PART_ORDER (host side) names each of REPLAY_PY's _PARTS (page side), once.
    timed = {line.split('"')[1] for line in REPLAY_PY.splitlines()
             if line.startswith('    ("') and '"streampace.' in line}
    assert timed == {name for name, _depth in PART_ORDER}
    assert len(PART_ORDER) == len(timed)
