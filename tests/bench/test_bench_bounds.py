"""bench.steering_bound's clairvoyant schedule, bench.p1's checks and bench.p1_report's
classification of the misses (figures only)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.p1 import P1, variant_trace
from bench.p1_report import Miss, classify, lag_budget, render
from bench.steering_bound import (
    Point,
    clairvoyant,
    jerk_cv,
    play,
    smoothest,
    stamped_rate,
    stamps_of,
)

PERIOD = 1000.0 / 60.0


def _bursts(size: int, every_frames: int, count: int) -> np.ndarray:
    """`size` graphemes landing together every `every_frames` frames."""
    return np.repeat(np.arange(count) * every_frames * PERIOD + 1.0, size)


def test_clairvoyant_never_shows_a_grapheme_before_it_arrives() -> None:
    arrival = np.sort(np.random.default_rng(7).uniform(0.0, 3000.0, 900))
    for weight in (0.0, 0.01, 1.0, 50.0):
        shown = clairvoyant(arrival, PERIOD, weight)
        assert np.all(shown >= arrival - 1e-9)
        assert np.all(np.diff(shown) >= 0.0)  # first in, first shown


def test_clairvoyant_weight_trades_evenness_for_freshness() -> None:
    arrival = _bursts(size=30, every_frames=6, count=40)
    smooth = clairvoyant(arrival, PERIOD, 0.0)
    fresh = clairvoyant(arrival, PERIOD, 50.0)
    assert jerk_cv(smooth, arrival, PERIOD) < 0.1  # 5 a frame, bursts spread out
    assert jerk_cv(fresh, arrival, PERIOD) > 2.0  # each burst shown as it lands
    assert np.mean(fresh - arrival) < np.mean(smooth - arrival)


def test_p1_names_each_part_it_misses() -> None:
    ok = P1("t", 1, 60.0, 1.2, 0.4, 0.30, 0.30, -5.0)
    assert ok.misses == []
    bad = P1("t", 1, 60.0, 1.6, 0.7, 0.40, 0.30, 2.0)
    assert [m.split()[0] for m in bad.misses] == ["lag", "lag", "jerk", "freeze"]


def test_variant_traces_follow_their_network() -> None:
    each = variant_trace("slow:each", 1)
    assert len(each.arrivals) == len(each.model)
    batched = variant_trace("fast:batch60", 1)
    assert 1 < len(batched.arrivals) < len(batched.model)
    with pytest.raises(ValueError):
        variant_trace("fast:carrier-pigeon", 1)


def test_steering_that_estimates_the_rate_keeps_up_with_a_steady_source() -> None:
    # 6 graphemes a frame, every frame: told or estimated, the rate is the
    # source's, so each frame shows what it got (CV 0, lag under a frame).
    arrival = np.repeat(np.arange(300) * PERIOD + 1.0, 6)
    for estimate in (None, 500.0):
        shown = play(arrival, PERIOD, 0.0, 100.0, 20.0, estimate)
        assert np.all(shown >= arrival - 1e-9)
        assert jerk_cv(shown, arrival, PERIOD) < 0.05
        assert np.mean(shown - arrival) < PERIOD


def test_smoothest_honours_the_worst_lag_bound() -> None:
    points = [Point(1.2, 0.2, "smooth but late", 300.0), Point(1.3, 0.3, "on time", 200.0)]
    assert smoothest(points, 1.5) == points[0]
    assert smoothest(points, 1.5, worst_ms=250.0) == points[1]
    assert smoothest(points, 1.1) is None


def test_p1_lag_budget_is_the_tighter_of_the_oracle_and_seed_bounds() -> None:
    # 1.5× the oracle, unless 0.6× the seed's lag is less (here the seed's lag
    # is 2× the oracle's: 0.6 × 2 = 1.2× the oracle).
    assert lag_budget(P1("t", 1, 60.0, 1.0, 0.1, 0.3, 0.3, 0.0)) == 1.5
    assert lag_budget(P1("t", 1, 60.0, 1.0, 0.5, 0.3, 0.3, 0.0)) == pytest.approx(1.2)


def test_met_cells_and_freeze_misses_are_not_swept() -> None:
    # Either would raise if it built the trace to sweep it.
    for cell in (P1("no-such-trace", 1, 60.0, 1.2, 0.4, 0.30, 0.30, -5.0),
                 P1("no-such-trace", 1, 60.0, 1.6, 0.4, 0.40, 0.30, 2.0)):
        miss = classify(cell)
        assert miss.verdict is None and miss.bounds == (None, None, None)


def test_a_lag_miss_is_classified_within_its_own_budget() -> None:
    # The same batch40 cell, had ours been over 0.6× the seed's lag with the
    # seed only 1.5× the oracle's: the budget is 0.9× the oracle, fresher than
    # the oracle itself, and no pacer is that fresh and under the jerk limit.
    miss = classify(P1("batch40", 1, 60.0, 1.1, 1.1 / 1.5, 0.36, 0.18, -10.0))
    assert miss.budget == pytest.approx(0.9)
    assert all(p is None or p.lag_ratio <= 0.9 for p in miss.bounds)
    assert miss.verdict == "none"


def test_batch40s_jerk_limit_takes_foresight_within_p1s_lag_budget() -> None:
    # batch40, seed 1, 60 Hz (limit 1.1 × 0.18): a steering law told the rate
    # or estimating it stays over the limit within 1.5× the oracle; the
    # clairvoyant schedule is under it.  The verdict depends on the trace and
    # the bounds only, not on our law's figures.
    miss = classify(P1("batch40", 1, 60.0, 1.1, 0.13, 0.36, 0.18, -10.0))
    told, estimating, foresight = miss.bounds
    assert told is not None and estimating is not None and foresight is not None
    assert min(told.jerk_cv, estimating.jerk_cv) > 1.1 * 0.18 > foresight.jerk_cv
    assert max(p.lag_ratio for p in miss.bounds if p is not None) <= 1.5
    assert miss.verdict == "foresight"
    table = render([miss.p1], [miss], "1", "60")
    assert "| `batch40` | 0 of 1 | 0 / 0 / 1 / 0 | 0 |" in table


def test_a_delivery_is_stamped_with_its_first_graphemes_production_time() -> None:
    generated = np.array([10.7, 11.0, 40.2, 39.0, 80.9])  # a late-merged grapheme at 39.0
    starts = np.array([0, 2, 3])  # deliveries: [10.7, 11.0], [40.2], [39.0, 80.9]
    # Whole ms, and never older than the stamp before (the page keeps the last).
    assert stamps_of(generated, starts).tolist() == [10.0, 40.0, 40.0]


def test_stamps_that_are_the_arrivals_minus_a_constant_tell_the_same_rate() -> None:
    # Our server's batches: each delivery stamped with its first delta's time,
    # which lands one max-wait later.  The estimate from stamps then plays the
    # arrivals exactly as the estimate from arrival times does.
    arrival = _bursts(size=20, every_frames=9, count=60) + 150.0
    generated = arrival - 150.0 + np.tile(np.arange(20) * 7.0, 60)
    from_arrivals = play(arrival, PERIOD, 80.0, 400.0, 40.0, 1000.0)
    from_stamps = play(arrival, PERIOD, 80.0, 400.0, 40.0, 1000.0, generated)
    assert np.array_equal(from_arrivals, from_stamps)


def test_a_pause_does_not_drag_the_estimated_rate_down() -> None:
    # Two deliveries 3 s apart: none but the newest is within a 2 s window, so
    # the rate learnt before the pause is kept (a tool call is no slow model).
    stamps = np.array([0.0, 100.0, 200.0, 3200.0])
    starts = np.array([0, 50, 100, 150])
    assert stamped_rate(stamps, starts, 3, 2000.0, 0.0) == pytest.approx(0.5)
    assert stamped_rate(stamps, starts, 4, 2000.0, 0.5) == 0.5


def test_a_causal_miss_met_only_past_cherry_jitters_worst_lag_is_told_apart() -> None:
    # very_fast-like cell: the estimating law meets the limit (0.05 ≤ 0.077)
    # only with a long queue; within cherry_jitter's worst lag its best is 0.18.
    cell = P1("very_fast", 1, 120.0, 1.02, 0.15, 0.15, 0.07, -5.0)
    bounds = (Point(1.49, 0.05, "told"), Point(1.48, 0.05, "estimating", 223.0),
              Point(1.3, 0.02, "clairvoyant"))
    past = Miss(cell, "causal", bounds, 1.5, Point(1.0, 0.18, "estimating", 189.0))
    within = Miss(cell, "causal", bounds, 1.5, Point(1.2, 0.06, "estimating", 185.0))
    nothing = Miss(cell, "causal", bounds, 1.5, None)
    assert past.costs_worst_lag and nothing.costs_worst_lag and not within.costs_worst_lag
    assert not Miss(cell, "foresight", bounds, 1.5).costs_worst_lag
    table = render([cell], [past], "1", "120")
    assert "causal, past the worst lag (0.18 within it) |" in table
    assert "1 of the 1 causal misses" in table
    assert render([cell], [within], "1", "120").rstrip().endswith("| causal |")
