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
_AVERAGING = (
    "delivery sizes vary by a third or more from one delivery to the next; the seed's "
    "250 ms backlog averages several of them (at 2.5× our lag), adaptive playout follows "
    "each within about one span. A wider horizon (H = 0.3 × the cushion, measured) lowers "
    "the CV here but pushes the worst lag over cherry_jitter's on fast, long, md_long and "
    "ultra_fast, and the mean lag over 1.5× the oracle on long and md_long. Under the "
    "same limits (mean lag ≤ 1.5× the oracle, worst lag ≤ cherry_jitter's) ")
_STEERING = ("the smoothest steering law that estimates the rate from arrivals "
             "(`python -m bench.steering_bound --worst-cherry`) gets ")
WHY_MISSED: dict[tuple[str | None, str], str] = {  # (None, target): any trace
    ("very_fast", "jerk CV ≤ 1.1× mosoo_450"):
        "the seed is pinned at its 800/s ceiling (13–14 graphemes every frame: CV 0.04) "
        "while it falls behind a 1 400/s model without bound (mean lag ≈ 530 ms, 6× the "
        "oracle). CV 0.04 within 1.5× the oracle takes a play-out rate held almost "
        "constant: a steering law told the model's mean rate reaches 0.035 / 0.048 (60 / "
        "120 Hz, seed 1) at 1.38× / 1.49×; estimating it from the deliveries of the last "
        "0.5–2 s (their graphemes over the arrival time they cover), as a page can, 0.040 / "
        "0.053 at 1.37× / 1.48× (`python -m bench.steering_bound --traces very_fast`). "
        "Over seeds 1–5 the estimating law is under the limit at 120 Hz on 4 of 5 seeds "
        "(0.053–0.074; seed 2 0.101) and at 60 Hz on none (0.040–0.104, limit 0.039); "
        "ours follows each delivery within about one span: 0.15–0.25 (P1 section "
        "below). It does so only with ≈ 160 ms of text queued: worst lag ≈ 220 ms, past "
        "cherry_jitter's 180–190 (a target met here); within that worst lag as well its "
        "smoothest is 0.11–0.18 at 120 Hz on seeds 1, 3, 4 and 5 (`--worst-cherry`), so "
        "meeting P1 there would lose the worst-lag target. Production timestamps would not "
        "help: our server's batches keep one stamp each, which lands one buffer wait "
        "before the batch (`--stamps`: 0.047–0.126 at 60 Hz; docs/pacing.md).",
    ("reasoning", "jerk CV ≤ 1.1× mosoo_450"):
        "the answer after the thinking is the very_fast model: the seed is pinned at its "
        "800/s ceiling (CV 0.04) and falls ≈ 0.5 s behind; a steering law estimating the "
        "rate gets 0.043 / 0.056 (60 / 120 Hz, seed 1) within 1.5× the oracle (limits 0.039 "
        "/ 0.078): a causal law could meet the 120 Hz cell, but only past cherry_jitter's "
        "worst lag (within it: 0.12–0.18 at 120 Hz on seeds 1, 3, 4 and 5); see very_fast.",
    ("batch40", "jerk CV ≤ 1.1× mosoo_450"):
        "19-grapheme batches every 44 ms whose sizes vary by ±31 %: the seed's 250 ms "
        "backlog averages ≈ 6 of them (at 8× the oracle's lag); the lag target allows "
        "1.5× (40 ms at 60 Hz, 34 at 120). A causal steering law told the true mean rate, "
        "with a low-passed queue, swept over target queue, gain and filter, stays at CV "
        "0.20–0.35 within 1.5× the oracle on seeds 1–5 at 60 and 120 Hz, over the limit in "
        "all 10 cells (`python -m bench.steering_bound --seeds 1,2,3,4,5`; estimating the "
        "rate, seed 1: 0.25 / 0.29). Not impossible "
        "in principle: a clairvoyant schedule that knows every future delivery reaches "
        "0.11–0.25 there (9 of 10 cells within the limit): what it uses is the sizes of "
        "deliveries not yet sent, which a page cannot know. Not a warm-up effect: over "
        "30–90 % of the answer our CV is 0.37–0.38.",
    ("cjk_emoji", "jerk CV ≤ 1.1× mosoo_450"):
        _AVERAGING + _STEERING + "0.45 / 0.59 here (60 / 120 Hz, seed 1; limits 0.47 / "
        "0.62) at 1.29× / 1.44× the oracle: a law steering slowly toward a queue target "
        "could meet this one (not built; that model shows each grapheme at its arrival, "
        "without the cross-delta cluster holdback).",
    ("md_heavy", "jerk CV ≤ 1.1× mosoo_450"):
        _AVERAGING + _STEERING + "0.33 / 0.38 here (60 / 120 Hz, seed 1; limits 0.34 / "
        "0.36) at 1.38× / 1.32× the oracle: under the limit at 60 Hz (a law steering "
        "toward a queue target could meet that one; not built), over at 120 Hz, as ours; "
        "a steering law told the true rate 0.37 / 0.40; only a clairvoyant schedule is "
        "under at both (0.27 / 0.28).",
    ("md_plain", "jerk CV ≤ 1.1× mosoo_450"):
        _AVERAGING + _STEERING + "0.32 / 0.37 here (60 / 120 Hz, seed 1; limits 0.30 / "
        "0.31), a steering law told the true rate 0.35 / 0.36: over, as ours; only a "
        "clairvoyant schedule is under (0.27 / 0.29).",
    ("tool_pauses", "jerk CV ≤ 1.1× mosoo_450"):
        "two 2 s tool-call pauses mid-message count as empty frames for every strategy; the "
        "seed's 250 ms backlog trickles into the start of each (it shows the text before a "
        "pause up to 1 s late: worst lag 1 040 ms). Ours winds down the text queued when a "
        "tool call is announced over five cushions (at most 1 s; docs/pacing.md, "
        "\"Announced pauses\"): met on seeds 1–5 at 60 and 120 Hz when it landed (jerk CV "
        "1.09–1.35 against limits 1.13–1.38), with a margin of 0.4 % on seed 3 at 60 Hz. "
        "The clairvoyant schedule slows down before each pause it foresees; a page only "
        "knows of a pause once the tool call's start has arrived.",
    ("jittery", "jerk CV ≤ 1.1× mosoo_450"):
        "1–2 s stalls released head-of-line: the seed's backlog trickles through part of "
        "each; our cushion widens after text-rich late deliveries (≤ 600 ms) but a cushion "
        "as long as the stalls would break the worst-lag target (cherry_jitter's 228 ms, met).",
    ("ultra_fast", "worst lag ≤ cherry_jitter"):
        "within 2 %: a delivery larger than usual is spread over the cushion plus the "
        "horizon, and cherry_jitter's catch-up term shows its tail a few ms sooner; a "
        "shorter horizon costs jerk elsewhere.",
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
