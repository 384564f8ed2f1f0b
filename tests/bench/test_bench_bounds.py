"""bench.steering_bound's clairvoyant schedule and bench.p1's checks (figures only)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.p1 import P1, variant_trace
from bench.steering_bound import Point, clairvoyant, jerk_cv, play, smoothest

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
