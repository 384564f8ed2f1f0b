"""Issue 29's P1 for the default law, per trace × seed × refresh rate.

    .venv/bin/python -m bench.p1 --traces slow,batch40,fast --seeds 1,2,3,4,5

P1 compares `streampace` with the oracle and with the seed (`mosoo_450`) on
the same trace, seed and refresh rate:

* mean lag ≤ 1.5× the oracle's (on the paint grid) **and** ≤ 0.6× the seed's
  (no fallback to the oracle here, unlike `bench/targets.py`'s lag target);
* jerk CV ≤ 1.1× the seed's;
* longest freeze ≤ the seed's + one frame.

Besides the grid's trace names, ``scenario:network`` builds a variant of the
simulated model (``slow@0.7:direct``, ``fast:batch60``, ``fast:each`` — one
socket message per model event, no batching), so a law can be checked on
cadences the grid does not hold.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from streampace.sim import simulate

from bench.metrics import compute_metrics
from bench.traces import PROMPT, TRACE_KINDS, Trace, build_trace, deliver
from bench.virtual import run_virtual

SUBJECT = "streampace"
SEED = "mosoo_450"
DEFAULT_TRACES = ("slow,batch40,fast,very_fast,long,ultra_fast,tool_pauses,reasoning,"
                  "char2000")


@dataclass(frozen=True)
class P1:
    trace: str
    seed: int
    hz: float
    lag_vs_oracle: float
    lag_vs_seed: float
    jerk_cv: float | None
    seed_jerk_cv: float | None
    freeze_over_ms: float  # our longest freeze − (the seed's + one frame); ≤ 0 meets

    @property
    def misses(self) -> list[str]:
        out = []
        if self.lag_vs_oracle > 1.5:
            out.append(f"lag {self.lag_vs_oracle:.2f}× oracle")
        if self.lag_vs_seed > 0.6:
            out.append(f"lag {self.lag_vs_seed:.2f}× seed")
        if (self.jerk_cv is not None and self.seed_jerk_cv is not None
                and self.jerk_cv > 1.1 * self.seed_jerk_cv + 1e-9):
            out.append(f"jerk CV {self.jerk_cv:.2f} > 1.1× {self.seed_jerk_cv:.2f}")
        if self.freeze_over_ms > 1e-9:
            out.append(f"freeze {self.freeze_over_ms:.1f} ms over")
        return out


def variant_trace(spec: str, seed: int) -> Trace:
    """A grid trace by name, or ``scenario[@speed]:network`` (direct, batchN, each)."""
    if spec in TRACE_KINDS:
        return build_trace(spec, seed=seed)
    scenario, sep, network = spec.partition(":")
    base, _at, speed = scenario.partition("@")
    if not sep or not base:
        raise ValueError(f"not a trace name nor scenario:network: {spec!r}")
    model = [(te.t_ms, dict(te.event)) for te in simulate(
        base, seed=seed, prompt=PROMPT, run_id=f"run-{base}-{seed}", speed=float(speed or 1))]
    if network == "each":
        arrivals = [(t, [e]) for t, e in model]
    elif network == "direct":
        arrivals = deliver(model)
    elif network.startswith("batch"):
        arrivals = deliver(model, max_wait_ms=float(network[len("batch"):]))
    else:
        raise ValueError(f"network must be direct, each or batchN: {network!r}")
    return Trace(spec, model, arrivals, spec, {"seed": seed})


def check(trace: Trace, seed: int, hz: float) -> P1:
    me = compute_metrics(run_virtual(trace, SUBJECT, hz).recorder)
    ref = compute_metrics(run_virtual(trace, SEED, hz).recorder)
    return P1(
        trace.name, seed, hz,
        lag_vs_oracle=me["lag_mean_ms"] / me["oracle_grid_mean_lag_ms"],
        lag_vs_seed=me["lag_mean_ms"] / ref["lag_mean_ms"],
        jerk_cv=me.get("jerk_cv"), seed_jerk_cv=ref.get("jerk_cv"),
        freeze_over_ms=me["longest_freeze_ms"] - ref["longest_freeze_ms"] - 1000.0 / hz,
    )


def parse_cells(argv: list[str] | None, prog: str, doc: str | None,
                seeds: str) -> argparse.Namespace:
    """--traces, --seeds and --hz: the cells a P1 command looks at."""
    ap = argparse.ArgumentParser(prog=prog, description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", default=DEFAULT_TRACES)
    ap.add_argument("--seeds", default=seeds)
    ap.add_argument("--hz", default="60,120")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_cells(argv, "python -m bench.p1", __doc__, "1,2,3")
    met = total = 0
    for spec in args.traces.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            trace = variant_trace(spec, seed)
            for hz in (float(h) for h in args.hz.split(",")):
                p = check(trace, seed, hz)
                total += 1
                met += not p.misses
                cv = f"{p.jerk_cv:.2f}/{p.seed_jerk_cv:.2f}" if (
                    p.jerk_cv is not None and p.seed_jerk_cv is not None) else "—"
                print(f"{spec:16} seed {seed} {hz:>3g} Hz  lag {p.lag_vs_oracle:.2f}× oracle "
                      f"{p.lag_vs_seed:.2f}× seed  jerk CV {cv}  "
                      + ("P1" if not p.misses else "MISS: " + "; ".join(p.misses)), flush=True)
    print(f"P1 met on {met} of {total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
