"""The harness reproduces what is known about the anchors (virtual clock only)."""

from __future__ import annotations

import pytest

from bench.metrics import compute_metrics, lag_growth_per_s, largest_batch_graphemes
from bench.traces import build_trace
from bench.virtual import run_virtual

from .helpers_bench import MID, delivered, direct, steady_model, text

START = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": MID, "role": "assistant"},
]
FINISH = [
    {"type": "TEXT_MESSAGE_END", "messageId": MID},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


@pytest.mark.parametrize("strategy", ["naive", "raf_all"])
def test_naive_largest_jump_is_the_largest_batch(strategy: str) -> None:
    trace = direct("batches", [
        (0.0, START),
        (100.0, [text("a" * 5)]),
        (300.0, [text("b" * 40)]),
        (500.0, [text("c" * 12)]),
        (700.0, FINISH),
    ])
    m = compute_metrics(run_virtual(trace, strategy, 60).recorder)
    assert m["largest_reveal"] == 40
    assert m["faithful"]
    # Shown on the very next paint: lag never exceeds one frame.
    assert m["lag_max_ms"] <= 1000 / 60 + 1e-6


def test_naive_jump_equals_delivery_batch_on_a_buffered_stream() -> None:
    trace = delivered("steady", steady_model(300, 2.0))
    truth = trace.tracked
    biggest = largest_batch_graphemes(truth)
    assert 40 <= biggest <= 50  # 150 ms of a 300/s stream per socket message
    m = compute_metrics(run_virtual(trace, "naive", 60).recorder)
    assert m["largest_reveal"] == biggest


@pytest.mark.parametrize("hz", [60, 120])
def test_mosoo_450_steady_state_lag_is_about_tau(hz: int) -> None:
    trace = delivered("steady", steady_model(200, 4.0))
    m = compute_metrics(run_virtual(trace, "mosoo_450", hz).recorder)
    assert 200 <= m["lag_steady_mean_ms"] <= 300, m["lag_steady_mean_ms"]
    # Smooth while doing it: no paint shows more than the 800/s cap allows.
    assert m["largest_reveal"] <= 800 / hz + 2


def test_typewriter_falls_behind_a_fast_model_without_bound() -> None:
    short = delivered("2s", steady_model(200, 2.0))
    long = delivered("4s", steady_model(200, 4.0))
    r_short = run_virtual(short, "typewriter", 60)
    r_long = run_virtual(long, "typewriter", 60)
    m_short, m_long = compute_metrics(r_short.recorder), compute_metrics(r_long.recorder)
    # 62.5 graphemes/s against 200/s: the deficit grows linearly with stream time.
    assert m_long["lag_max_ms"] > 1.9 * m_short["lag_max_ms"]
    expected = 800 * 16 - 4000  # 800 graphemes at 16 ms minus the stream's length
    assert abs(m_long["lag_max_ms"] - expected) < 0.1 * expected
    slope = lag_growth_per_s(r_long.recorder)
    assert slope is not None and slope > 2000  # ≈ 200/62.5 − 1 = 2.2 s per s
    # A paced strategy on the same trace does not drift.
    paced_slope = lag_growth_per_s(run_virtual(long, "mosoo_450", 60).recorder)
    assert paced_slope is not None and paced_slope < 100


def test_60_and_120_hz_show_the_same_progress_for_mosoo_450() -> None:
    trace = delivered("steady", steady_model(200, 2.0))
    a = run_virtual(trace, "mosoo_450", 60).recorder
    b = run_virtual(trace, "mosoo_450", 120).recorder
    from bench.metrics import visible_series

    ta, na = visible_series(a)
    tb, nb = visible_series(b)
    for t in (300.0, 700.0, 1100.0, 1500.0):
        shown_a = int((ta <= t).sum())
        shown_b = int((tb <= t).sum())
        assert abs(shown_a - shown_b) <= 4, (t, shown_a, shown_b)


def test_split_cluster_broken_for_mosoo_450_never_for_streampace() -> None:
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    head, tail = family[:3], family[3:]  # split after the first ZWJ
    # The half cluster arrives alone after the rest has drained, and its
    # completion 120 ms later: after the seed showed the half, within
    # streampace's 150 ms holdback.
    trace = direct("split", [
        (0.0, START),
        (100.0, [text("hello ")]),
        (500.0, [text(head)]),
        (620.0, [text(tail + " world")]),
        (800.0, FINISH),
    ])
    mosoo = compute_metrics(run_virtual(trace, "mosoo_450", 60).recorder)
    ours = compute_metrics(run_virtual(trace, "streampace", 60).recorder)
    assert mosoo["broken_reveals"] >= 1
    assert ours["broken_reveals"] == 0
    assert ours["faithful"] and mosoo["faithful"]


def test_cjk_emoji_trace_streampace_never_broken_mosoo_is() -> None:
    trace = build_trace("cjk_emoji", seed=1)
    ours = compute_metrics(run_virtual(trace, "streampace", 60).recorder)
    mosoo = compute_metrics(run_virtual(trace, "mosoo_450", 60).recorder)
    assert ours["broken_reveals"] == 0
    assert mosoo["broken_reveals"] > 0
    assert ours["faithful"] and mosoo["faithful"]
