"""How smooth can any rate-steering pacer be on a trace within a lag budget?

    .venv/bin/python -m bench.steering_bound --traces batch40 --seeds 1,3 --hz 60,120

An idealised pacer that knows the trace's true mean arrival rate ``r`` (no
estimate, no warm-up) and steers its queue toward a target::

    rate = r + (queue − r × Q*) / T       graphemes per ms, per frame

is swept over the target queue ``Q*`` (ms of text) and the steering time
``T``.  Each grapheme shows at the frame that emits it (FIFO); mean lag and the
jerk CV are computed the way `bench/metrics.py` does (lag from arrival, CV of
per-frame reveals over the 10–90 % arrival window).  The line printed per trace
is the smoothest setting whose mean lag stays within ``--lag`` × the oracle:
when even that misses the jerk target, no steering law can meet both.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from bench.traces import TRACE_KINDS, build_trace

TARGETS_MS = (0.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0, 160.0)
STEER_MS = (50.0, 100.0, 200.0, 400.0, 800.0)


@dataclass(frozen=True)
class Point:
    lag_ratio: float  # mean lag / the oracle's on the paint grid
    jerk_cv: float
    target_ms: float
    steer_ms: float


def play(arrival: np.ndarray, period: float, target_ms: float, steer_ms: float) -> np.ndarray:
    """Paint time of each grapheme (arrival order) under the steering law."""
    r = len(arrival) / max(float(arrival.max() - arrival.min()), 1e-9)
    shown_at = np.empty(len(arrival))
    shown, carry = 0, 0.0
    k = math.ceil(float(arrival.min()) / period)
    while shown < len(arrival):
        t = k * period
        arrived = int(np.searchsorted(arrival, t, side="right"))
        queue = arrived - shown
        rate = r + (queue - r * target_ms) / steer_ms
        # Once everything has arrived the tail drains at no less than r.
        rate = max(rate, 0.0 if arrived < len(arrival) else r)
        budget = carry + rate * period
        n = min(int(budget), queue)
        carry = budget - n if queue > n else 0.0
        shown_at[shown:shown + n] = t
        shown += n
        k += 1
    return shown_at


def jerk_cv(shown_at: np.ndarray, arrival: np.ndarray, period: float) -> float:
    lo, hi = np.percentile(arrival, 10), np.percentile(arrival, 90)
    ticks = np.rint(shown_at / period).astype(np.int64)
    k_lo, k_hi = math.ceil(lo / period), math.floor(hi / period)
    sel = ticks[(ticks >= k_lo) & (ticks <= k_hi)]
    series = np.bincount(sel - k_lo, minlength=k_hi - k_lo + 1).astype(float)
    return float(series.std() / series.mean()) if series.mean() > 0 else math.inf


def sweep(trace: str, seed: int, hz: float) -> tuple[float, list[Point]]:
    """(oracle mean lag ms, every swept setting) for one trace × seed × rate."""
    truth = build_trace(trace, seed=seed).tracked
    period = 1000.0 / hz
    arrival = truth.arrival
    oracle_at = np.ceil((truth.generated + truth.oracle_delay_ms) / period - 1e-9) * period
    oracle = float(np.mean(oracle_at - arrival))
    points = []
    for target in TARGETS_MS:
        for steer in STEER_MS:
            shown_at = play(arrival, period, target, steer)
            points.append(Point(float(np.mean(shown_at - arrival)) / oracle,
                                jerk_cv(shown_at, arrival, period), target, steer))
    return oracle, points


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.steering_bound", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default="batch40")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--hz", default="60,120")
    ap.add_argument("--lag", type=float, default=1.5, help="lag budget, × the oracle")
    args = ap.parse_args(argv)
    for trace in args.traces.split(","):
        if trace not in TRACE_KINDS:
            ap.error(f"unknown trace {trace!r}")
        for seed in (int(s) for s in args.seeds.split(",")):
            for hz in (float(h) for h in args.hz.split(",")):
                oracle, points = sweep(trace, seed, hz)
                within = [p for p in points if p.lag_ratio <= args.lag]
                best = min(within, key=lambda p: p.jerk_cv, default=None)
                head = f"{trace} seed {seed} {hz:g} Hz (oracle {oracle:.1f} ms):"
                if best is None:
                    print(head, f"no setting within {args.lag}× the oracle")
                else:
                    print(head, f"smoothest within {args.lag}× the oracle: jerk CV "
                          f"{best.jerk_cv:.2f} at {best.lag_ratio:.2f}× "
                          f"(Q* {best.target_ms:g} ms, T {best.steer_ms:g} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
