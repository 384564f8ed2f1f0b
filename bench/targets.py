"""Issue 20's targets for the default law, checked as ratios within one run.

Every target compares `streampace` with the oracle, `mosoo_450` or
`cherry_jitter` measured on the same trace at the same refresh rate in the
same run (never a fixed number of milliseconds), so a noisy machine cannot
move them.  A missed target is reported with its figure, never loosened.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.metrics import Recorder, visible_times
from bench.traces import UNSTEADY_TRACES

SUBJECT = "streampace"
SEED = "mosoo_450"
CHERRY = "cherry_jitter"
# Unsteady traces on which Cherry Studio's jitter buffer is still the reference
# for the worst lag (its cushion is made for them).
JITTER_TRACES = frozenset({"jittery", "mobile"})
FAST_MODEL_RATE = 800.0  # graphemes/s: the seed's ceiling


# Why a target can be missed on a trace: analysis, shown under the grid only
# for the misses of the run at hand (the figures themselves come from the run).
WHY_MISSED: dict[tuple[str | None, str], str] = {  # (None, target): any trace
    ("slow", "mean lag ≤ 1.5× oracle"):
        "the oracle shows whole tokens at the model's pace (2–3 tokens per ≈ 180 ms "
        "batch: mean lag ≈ 55 ms); spreading a batch evenly over its interval costs half "
        "an interval plus a frame. Meeting it needs each batch front-loaded in bursts, "
        "the pulsing the issue rules out.",
    ("batch40", "mean lag ≤ 1.5× oracle"):
        "half a 44 ms delivery interval (22 ms) plus the frame grid (≈ 8 ms at 60 Hz) "
        "already exceeds 1.5× the oracle's 18 ms, for any law that spreads a batch; the "
        "oracle is not quantised to frames.",
    ("batch40", "jerk CV ≤ mosoo_450"):
        "the seed's 250 ms backlog averages ≈ 6 batches of token-size noise; the same "
        "evenness needs a comparable cushion, i.e. the seed's lag.",
    ("batch300", "mean lag ≤ 0.6× mosoo_450"):
        "the limit is below the oracle's own mean lag (≈ 145 ms): reachable only by "
        "showing each 300 ms batch in a burst and idling, i.e. pulsing.",
    ("very_fast", "jerk CV ≤ mosoo_450"):
        "the seed is pinned at its 800/s ceiling (a constant 13–14 per frame) while it "
        "falls behind without bound; keeping pace follows the batches' own variation.",
    ("jittery", "jerk CV ≤ mosoo_450"):
        "irregular deliveries: a cushion that never runs dry through the gaps is a lag "
        "of their size; the seed's 250 ms backlog trickles on through them.",
    ("jittery", "worst lag ≤ cherry_jitter"):
        "two batches landing 41 ms apart; the automatic deadline stays under the step "
        "ceiling (1.8× the arrival rate) so as not to jump.",
    ("poisson", "jerk CV ≤ mosoo_450"):
        "exponential gaps (some > 500 ms): the queue runs dry in the long ones unless it "
        "holds a lag of their size; the seed's 250 ms backlog trickles on.",
    ("provider", "jerk CV ≤ mosoo_450"):
        "0.5 s provider pauses: the queue runs dry in each unless it holds 0.5 s of "
        "text; the seed's backlog trickles on through part of the pause.",
    ("provider", "freeze ≤ mosoo_450"):
        "the cluster holdback keeps the last cluster of the delta before each 0.5 s "
        "pause until it expires (150 ms); mosoo_450 runs without holdback.",
    (None, "freeze ≤ mosoo_450"):
        "the cross-delta holdback (issue 12 item 7) holds every delta's last cluster "
        "until the next delta or 150 ms; the first delta (the delivery buffer's fast "
        "path, often one short token) shows at once but for its last cluster, which waits "
        "for the next delivery: ≥ 40 ms (the delivery buffer's start-of-message ramp), "
        "longer where the model itself is slower or pauses — the freeze figure counts "
        "that wait. mosoo_450 runs without holdback; the seed law's slow start hid it.",
    ("paste", "freeze ≤ mosoo_450"):
        "the overload exit shows the 10 000-grapheme paste at once except its last "
        "cluster, which the holdback keeps until the message end ≈ 60 ms later.",
    ("slow", "jerk CV ≤ mosoo_450"):
        "≈ 0.9 graphemes per frame: whether a frame shows 0 or 1 makes the figure; the "
        "two differ in the third decimal.",
    ("cjk_emoji", "mean lag ≤ 1.5× oracle"):
        "within 2 % of the limit (met at 60 Hz); the holdback's wait on each delta's "
        "last cluster adds to the mean — not analysed further.",
    ("cjk_emoji", "TTFT ≤ 1 frame"):
        "the first delta is a single cluster (「), held by the cross-delta holdback "
        "until the second delta ≈ 150 ms later.",
    ("cjk_emoji", "jerk CV ≤ mosoo_450"):
        "≈ 2 graphemes per frame: the queue nearly empties at each delivery and the "
        "integer steps 1/2/3 weigh more; the seed holds 250 ms of text.",
    ("agentic", "jerk CV ≤ mosoo_450"):
        "several short messages, each ended by a barrier, and a reconnect: the queue "
        "empties often by design.",
}


def lag_at(rec: Recorder, frac: float, width: float = 0.02) -> float | None:
    """Mean lag of the graphemes around `frac` of the answer (arrival order)."""
    vis, _ex = visible_times(rec)
    n = len(vis)
    lo, hi = int(n * max(0.0, frac - width)), int(n * min(1.0, frac + width))
    if hi <= lo:
        return None
    seg = vis[lo:hi] - rec.truth.arrival[lo:hi]
    seg = seg[~np.isnan(seg)]
    return float(seg.mean()) if len(seg) else None


def mean_arrival_rate(rec: Recorder) -> float:
    a = rec.truth.arrival
    span = float(a.max() - a.min()) if len(a) else 0.0
    return len(a) * 1000.0 / span if span > 0 else 0.0


def _check(name: str, measured: float | None, limit: float | None, detail: str,
           ) -> dict[str, Any]:
    ok = measured is not None and limit is not None and measured <= limit + 1e-9
    return {"target": name, "measured": measured, "limit": limit, "ok": ok, "detail": detail}


def lag_limit(me: dict[str, Any], seed: dict[str, Any]) -> tuple[float | None, str]:
    """Issue 20's freshness target against the seed: ≤ 0.6× its mean lag where the
    oracle leaves room for that, else ≤ 1.2× the oracle (a target below the
    oracle's own lag could only be met by not smoothing at all)."""
    oracle = me.get("oracle_grid_mean_lag_ms")
    seed_lag = seed.get("lag_mean_ms")
    if oracle is None or seed_lag is None:
        return None, "no oracle"
    if 0.6 * seed_lag >= oracle:
        return 0.6 * seed_lag, f"0.6× mosoo {seed_lag:.1f} ms"
    return 1.2 * oracle, f"1.2× oracle {oracle:.1f} ms (0.6× mosoo {0.6 * seed_lag:.1f} ms < it)"


def trace_targets(trace: str, hz: float, rows: dict[str, dict[str, Any]],
                  recs: dict[str, Recorder]) -> list[dict[str, Any]]:
    """All targets of one trace × refresh rate (rows/recs keyed by strategy)."""
    me, seed = rows.get(SUBJECT), rows.get(SEED)
    if me is None or seed is None:
        return []
    frame = 1000.0 / hz
    out: list[dict[str, Any]] = []
    cherry = rows.get(CHERRY)
    if trace not in UNSTEADY_TRACES:
        oracle = me.get("oracle_grid_mean_lag_ms")
        out.append(_check("mean lag ≤ 1.5× oracle", me.get("lag_mean_ms"),
                          1.5 * oracle if oracle else None,
                          f"oracle on the paint grid {oracle:.1f} ms" if oracle else "no oracle"))
        limit, detail = lag_limit(me, seed)
        out.append(_check("mean lag ≤ 0.6× mosoo_450 (or 1.2× oracle)", me.get("lag_mean_ms"),
                          limit, detail))
    if me.get("jerk_cv") is not None and seed.get("jerk_cv") is not None:
        out.append(_check("jerk CV ≤ 1.1× mosoo_450", me["jerk_cv"], 1.1 * seed["jerk_cv"], ""))
    if seed.get("longest_freeze_ms") is not None:
        out.append(_check("freeze ≤ mosoo_450 + 1 frame", me.get("longest_freeze_ms"),
                          seed["longest_freeze_ms"] + frame, ""))
    rate = mean_arrival_rate(recs[SUBJECT])
    if rate > FAST_MODEL_RATE:
        out.append(_check("max jump ≤ 1.5× mean arrival/frame", me.get("largest_reveal"),
                          1.5 * rate / hz, f"arrival {rate:.0f}/s"))
    else:
        out.append(_check("max jump ≤ mosoo_450 + 2", me.get("largest_reveal"),
                          seed.get("largest_reveal", 0) + 2, ""))
    out.append(_check("broken frames = 0", me.get("broken_reveals"), 0, ""))
    out.append(_check("faithful", 0 if me.get("faithful") else 1, 0, ""))
    out.append(_check("TTFT ≤ 1 frame", me.get("ttft_visible_ms"), frame, ""))
    if me.get("tail_ms") is not None:
        out.append(_check("tail ≤ 1 frame", me["tail_ms"], frame, ""))
    if rate >= 1500.0:
        l10, lend = lag_at(recs[SUBJECT], 0.10), lag_at(recs[SUBJECT], 0.95)
        out.append(_check("lag at end ≤ lag at 10 % + 100 ms", lend,
                          l10 + 100.0 if l10 is not None else None,
                          f"lag at 10 %: {l10:.0f} ms" if l10 is not None else ""))
    if cherry is not None and (trace not in UNSTEADY_TRACES or trace in JITTER_TRACES):
        out.append(_check("worst lag ≤ cherry_jitter", me.get("lag_max_ms"),
                          cherry.get("lag_max_ms"), ""))
    for c in out:
        c.update(trace=trace, hz=hz)
    return out
