"""How smooth can a pacer be on a trace within a lag budget?

    .venv/bin/python -m bench.steering_bound --traces batch40 --seeds 1,3 --hz 60,120

Two bounds, each printed against the jerk target (1.1× `mosoo_450`'s CV,
measured on the same trace and refresh rate):

* **Steering** (causal, idealised): a pacer that knows the trace's true mean
  arrival rate ``r`` (no estimate, no warm-up) and steers a low-passed queue
  toward a target::

      q̄ += (queue − q̄) × (1 − e^(−frame/F))
      rate = r + (q̄ − r × Q*) / T       graphemes per ms, per frame

  swept over the target queue ``Q*`` (ms of text), the steering time ``T`` and
  the queue filter ``F`` (≈ 1 ms: no filter).  When even its smoothest setting
  within the budget misses the jerk target, no law of this family can meet both.
  The same law **estimating** ``r`` from what has arrived so far, as a page
  must, is swept too (F 20–80 ms): the graphemes of the deliveries of the last
  0.5–2 s over the arrival time they cover (from the oldest of them to the
  newest; the oldest one's own text is not counted, it was produced before).
  An earlier estimator divided what arrived over 0.5–2 s by the elapsed time,
  frame by frame: between two deliveries of 150 ms it sagged and jumped back
  at each one, and it got 0.11 / 0.13 on very_fast seed 1 (60 / 120 Hz) where
  this one gets 0.04 / 0.05, as the law told the true rate does.
* **Clairvoyant** (not causal): a pacer that knows every future arrival.  For a
  weight λ it shows ``S_k`` graphemes by frame ``k`` minimising
  ``½ Σ (S_k − S_{k−1})² − λ Σ S_k`` under ``S_k ≤`` what has arrived (the
  smoothest reveals for their mean lag, in the sum-of-squares sense); the
  optimum is the lower convex hull of ``arrived_k + λk²/2`` minus ``λk²/2``
  (a string under uniform load below the arrival curve), swept over λ.  This
  bounds what foresight of the delivery sizes could buy: a target this misses
  is out of reach of any pacer.

Each grapheme shows at the frame that emits it (FIFO); the worst lag of the
chosen setting is printed too (it checks no other target); mean lag and the jerk
CV are computed the way `bench/metrics.py` does (lag from arrival, CV of
per-frame reveals over the 10–90 % arrival window).
"""

from __future__ import annotations

import argparse
import itertools
import math
from dataclasses import dataclass

import numpy as np

from bench.metrics import TraceTruth, compute_metrics
from bench.p1 import variant_trace
from bench.virtual import run_virtual

TARGETS_MS = (0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0, 160.0)
STEER_MS = (50.0, 100.0, 200.0, 400.0, 800.0)
FILTER_MS = (1.0, 20.0, 40.0, 80.0, 160.0)
ESTIMATE_MS = (500.0, 1000.0, 2000.0)
WEIGHTS = tuple(float(w) for w in np.geomspace(1e-4, 50.0, 120))


@dataclass(frozen=True)
class Point:
    lag_ratio: float  # mean lag / the oracle's on the paint grid
    jerk_cv: float
    setting: str
    worst_lag_ms: float = 0.0


def play(arrival: np.ndarray, period: float, target_ms: float, steer_ms: float,
         filter_ms: float = 1.0, estimate_ms: float | None = None,
         generated: np.ndarray | None = None) -> np.ndarray:
    """Paint time of each grapheme (arrival order) under the steering law.

    ``estimate_ms`` None: told the trace's true mean rate; else the rate is
    estimated from the deliveries of the last ``estimate_ms`` (their graphemes
    over the arrival time they cover), as a page would have to.  With
    ``generated`` (each grapheme's production time), the same estimate is made
    on production timestamps instead of arrival times: each delivery stamped
    with its first grapheme's production time in whole ms, as a server that
    stamps each delta on receipt and keeps the first stamp of the deltas it
    merges would (``stamps_of``)."""
    true_rate = len(arrival) / max(float(arrival.max() - arrival.min()), 1e-9)
    keep = math.exp(-period / filter_ms)
    # Deliveries: graphemes landing at the same instant; ends[j] = graphemes through j.
    starts = np.flatnonzero(np.diff(arrival, prepend=-math.inf) > 0)
    landed = arrival[starts]
    ends = np.append(starts[1:], len(arrival))
    stamps = stamps_of(generated, starts) if generated is not None else None
    r = 0.0
    shown_at = np.empty(len(arrival))
    shown, carry = 0, 0.0
    smoothed: float | None = None
    k = math.ceil(float(arrival.min()) / period)
    while shown < len(arrival):
        t = k * period
        arrived = int(np.searchsorted(arrival, t, side="right"))
        if not estimate_ms:
            r = true_rate
        elif stamps is not None:
            r = stamped_rate(stamps, starts, int(np.searchsorted(landed, t, side="right")),
                              estimate_ms, r)
        else:
            d = int(np.searchsorted(landed, t, side="right"))  # deliveries landed
            oldest = int(np.searchsorted(landed, landed[d - 1] - estimate_ms)) if d else 0
            if oldest < d - 1:  # else: nothing in the window but the newest (a pause): keep r
                r = float(ends[d - 1] - ends[oldest]) / float(landed[d - 1] - landed[oldest])
        queue = arrived - shown
        smoothed = queue if smoothed is None else queue + (smoothed - queue) * keep
        rate = r + (smoothed - r * target_ms) / steer_ms
        # Once everything has arrived the tail drains at no less than r.
        rate = max(rate, 0.0 if arrived < len(arrival) else true_rate)
        budget = carry + rate * period
        n = min(int(budget), queue)
        carry = budget - n if queue > n else 0.0
        shown_at[shown:shown + n] = t
        shown += n
        k += 1
    return shown_at


def stamps_of(generated: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each delivery's timestamp: its first grapheme's production time, whole ms
    (made non-decreasing: the page reads a stamp older than the last as the last)."""
    return np.maximum.accumulate(np.floor(generated[starts]))


def stamped_rate(stamps: np.ndarray, starts: np.ndarray, d: int, window_ms: float,
                  r: float) -> float:
    """Graphemes per ms from the timestamps of the ``d`` deliveries landed so far:
    the text of the deliveries stamped within the window, up to the newest (whose
    own text's end is not known yet), over the stamp time it covers."""
    if d < 2:
        return r
    oldest = int(np.searchsorted(stamps[:d], stamps[d - 1] - window_ms))
    span = float(stamps[d - 1] - stamps[oldest]) if oldest < d - 1 else 0.0
    return float(starts[d - 1] - starts[oldest]) / span if span > 0 else r


def _lower_hull(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex hull of points sorted by x (monotone chain)."""
    hx: list[float] = []
    hy: list[float] = []
    for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
        while len(hx) >= 2 and (hy[-1] - hy[-2]) * (x - hx[-2]) >= (y - hy[-2]) * (hx[-1] - hx[-2]):
            hx.pop()
            hy.pop()
        hx.append(x)
        hy.append(y)
    return np.array(hx), np.array(hy)


def clairvoyant(arrival: np.ndarray, period: float, weight: float) -> np.ndarray:
    """Paint time of each grapheme under the clairvoyant schedule for ``weight``
    (λ, graphemes per frame²: 0 = the smoothest; larger = fresher)."""
    n = len(arrival)
    first = math.ceil(float(arrival.min()) / period - 1e-9)
    last = math.ceil(float(arrival.max()) / period - 1e-9)
    ticks = np.arange(first - 1, last + 1)
    arrived = np.searchsorted(arrival, ticks * period + 1e-9, side="right").astype(float)
    arrived[0] = 0.0  # nothing is shown before the first frame
    j = (ticks - ticks[0]).astype(float)
    load = weight * j * j / 2.0
    hx, hy = _lower_hull(j, arrived + load)
    shown = np.floor(np.interp(j, hx, hy) - load + 1e-9)  # whole graphemes
    shown = np.minimum(np.maximum.accumulate(shown), arrived)
    shown[-1] = n
    frame = np.searchsorted(shown, np.arange(1, n + 1), side="left")
    return ticks[frame] * period


def jerk_cv(shown_at: np.ndarray, arrival: np.ndarray, period: float) -> float:
    lo, hi = np.percentile(arrival, 10), np.percentile(arrival, 90)
    ticks = np.rint(shown_at / period).astype(np.int64)
    k_lo, k_hi = math.ceil(lo / period), math.floor(hi / period)
    sel = ticks[(ticks >= k_lo) & (ticks <= k_hi)]
    series = np.bincount(sel - k_lo, minlength=k_hi - k_lo + 1).astype(float)
    return float(series.std() / series.mean()) if series.mean() > 0 else math.inf


def _point(shown_at: np.ndarray, arrival: np.ndarray, period: float, oracle: float,
           setting: str) -> Point:
    if np.any(shown_at < arrival - 1e-9):
        raise AssertionError(f"{setting}: a grapheme shown before it arrived")
    lag = shown_at - arrival
    return Point(float(np.mean(lag)) / oracle, jerk_cv(shown_at, arrival, period), setting,
                 float(np.max(lag)))


def sweep(trace: str, seed: int, hz: float
          ) -> tuple[float, list[Point], list[Point], list[Point]]:
    """(oracle mean lag ms, steering points told r, steering points estimating r,
    clairvoyant points) for one cell."""
    truth, period, oracle = _cell(trace, seed, hz)
    arrival = truth.arrival
    steering = [
        _point(play(arrival, period, q, t, f), arrival, period, oracle,
               f"Q* {q:g} ms, T {t:g} ms, F {f:g} ms")
        for q, t, f in itertools.product(TARGETS_MS, STEER_MS, FILTER_MS)]
    estimating = [
        _point(play(arrival, period, q, t, f, e), arrival, period, oracle,
               f"Q* {q:g} ms, T {t:g} ms, F {f:g} ms, estimate over {e:g} ms")
        for q, t, f, e in itertools.product(TARGETS_MS, STEER_MS, FILTER_MS[1:4],
                                            ESTIMATE_MS)]
    foresight = [_point(clairvoyant(arrival, period, w), arrival, period, oracle,
                        f"λ {w:.3g}") for w in WEIGHTS]
    return oracle, steering, estimating, foresight


def _cell(trace: str, seed: int, hz: float) -> tuple[TraceTruth, float, float]:
    """(the trace's truth, frame period, the oracle's mean lag on the paint grid)."""
    truth = variant_trace(trace, seed).tracked
    period = 1000.0 / hz
    oracle_at = np.ceil((truth.generated + truth.oracle_delay_ms) / period - 1e-9) * period
    return truth, period, float(np.mean(oracle_at - truth.arrival))


def stamped(trace: str, seed: int, hz: float) -> list[Point]:
    """The estimating steering law's points with the rate estimated from production
    timestamps (``play``'s ``generated``) instead of arrival times."""
    truth, period, oracle = _cell(trace, seed, hz)
    arrival = truth.arrival
    return [_point(play(arrival, period, q, t, f, e, truth.generated), arrival, period,
                   oracle, f"Q* {q:g} ms, T {t:g} ms, F {f:g} ms, stamps over {e:g} ms")
            for q, t, f, e in itertools.product(TARGETS_MS, STEER_MS, FILTER_MS[1:4],
                                                ESTIMATE_MS)]


def smoothest(points: list[Point], budget: float, worst_ms: float | None = None
              ) -> Point | None:
    """The lowest jerk CV within the mean-lag budget (and the worst-lag bound)."""
    return min((p for p in points if p.lag_ratio <= budget
                and (worst_ms is None or p.worst_lag_ms <= worst_ms + 1e-9)),
               key=lambda p: p.jerk_cv, default=None)


def measured(trace: str, seed: int, hz: float, strategy: str, figure: str) -> float | None:
    value = compute_metrics(run_virtual(variant_trace(trace, seed), strategy, hz)
                            .recorder).get(figure)
    return float(value) if value is not None else None


def _describe(name: str, best: Point | None, budget: float, limit: float | None) -> str:
    if best is None:
        return f"{name}: nothing within {budget}× the oracle"
    verdict = "" if limit is None else (" — meets" if best.jerk_cv <= limit else " — misses")
    return (f"{name}: jerk CV {best.jerk_cv:.3f} at {best.lag_ratio:.2f}× "
            f"(worst lag {best.worst_lag_ms:.0f} ms; {best.setting}){verdict}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.steering_bound", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default="batch40",
                    help="grid trace names or scenario[@speed]:network variants (bench.p1)")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--hz", default="60,120")
    ap.add_argument("--lag", type=float, default=1.5, help="lag budget, × the oracle")
    ap.add_argument("--worst-cherry", action="store_true",
                    help="also keep the worst lag within cherry_jitter's on the same cell "
                         "(bench/targets.py's worst-lag target)")
    ap.add_argument("--stamps", action="store_true",
                    help="also the estimating law fed production timestamps (each delivery "
                         "stamped with its first grapheme's production time) instead of "
                         "arrival times")
    args = ap.parse_args(argv)
    for trace in args.traces.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            for hz in (float(h) for h in args.hz.split(",")):
                oracle, steering, estimating, foresight = sweep(trace, seed, hz)
                seed_cv = measured(trace, seed, hz, "mosoo_450", "jerk_cv")
                worst = (measured(trace, seed, hz, "cherry_jitter", "lag_max_ms")
                         if args.worst_cherry else None)
                limit = 1.1 * seed_cv if seed_cv is not None else None
                print(f"{trace} seed {seed} {hz:g} Hz (oracle {oracle:.1f} ms; jerk target "
                      + (f"≤ {limit:.3f} = 1.1× mosoo_450's {seed_cv:.3f}" if limit else "none")
                      + f"), smoothest within {args.lag}× the oracle"
                      + (f" and a worst lag ≤ cherry_jitter's {worst:.0f} ms:" if worst else ":"))
                laws = [("steering, told r", steering), ("steering, estimating r", estimating)]
                if args.stamps:
                    laws.append(("steering, estimating r from timestamps",
                                 stamped(trace, seed, hz)))
                for name, points in (*laws, ("clairvoyant", foresight)):
                    print("  " + _describe(name, smoothest(points, args.lag, worst),
                                           args.lag, limit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
