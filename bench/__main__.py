"""`python -m bench`: run every strategy on every trace and write the report.

    python -m bench             # full: 22 traces × 10 strategies × 60/120 Hz
    python -m bench --quick     # 8 traces, 60 Hz, one repeat (< 1 min)
    python -m bench --browser   # real headless Chromium, streampace vs mosoo_450 vs naive
    python -m bench --boot      # navigation → ready: stock PyScript vs Pyodide vs embed vs demo
    python -m bench.sizes       # what users download: wheel, npm tarball, runtime files
    python -m bench.continuity  # reload mid-answer, a forbidden boot, no server: time shown
    python -m bench.frame_trace # a DevTools trace of one page and trace: which step grows
"""

from __future__ import annotations

import argparse
import datetime as _dt
import platform
import sys
import time
from pathlib import Path
from typing import Any

from bench.metrics import compute_metrics, lag_growth_per_s, largest_batch_graphemes
from bench.report import (
    git_state,
    headline_table,
    targets_table,
    write_json,
    write_markdown,
    write_plots,
    write_tradeoff_plot,
)
from bench.strategies import STRATEGIES
from bench.targets import trace_targets
from bench.traces import QUICK_TRACES, TRACE_KINDS, Trace, build_trace
from bench.virtual import RunResult, run_virtual

RESULTS = Path(__file__).resolve().parent / "results"
PLOT_TRACES = ("bursty", "jittery", "cjk_emoji")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_suite(
    traces: list[Trace], strategies: list[str], hzs: list[float], repeat: int = 1,
) -> tuple[list[dict[str, Any]], dict[tuple[str, str, float], RunResult]]:
    rows: list[dict[str, Any]] = []
    results: dict[tuple[str, str, float], RunResult] = {}
    # Warm every code path once (regex compiles, first-call caches) so the CPU
    # probe of the first measured cell is not an outlier.
    if traces:
        warm = Trace("warm-up", traces[0].model[:60], traces[0].arrivals[:6])
        for name in strategies:
            run_virtual(warm, name, hzs[0])
    for trace in traces:
        t0 = time.perf_counter()
        for hz in hzs:
            for name in strategies:
                res = run_virtual(trace, name, hz)
                cpu = [res.cpu_us_per_drain]
                # Figures are deterministic; only the CPU probe varies, so the
                # repeats are for it alone (min = least disturbed by neighbours).
                for _ in range(repeat - 1):
                    cpu.append(run_virtual(trace, name, hz).cpu_us_per_drain)
                m = compute_metrics(res.recorder)
                m.update(
                    strategy=name, trace=trace.name, hz=hz, finished=res.finished,
                    cpu_us_per_drain=min((c for c in cpu if c is not None), default=None),
                    cpu_ms_total=res.cpu_ms_total, drains=res.drains,
                )
                rows.append(m)
                results[(trace.name, name, hz)] = res
        _log(f"  {trace.name}: {time.perf_counter() - t0:.1f} s")
    return rows, results


def anchor_checks(
    traces: dict[str, Trace], rows: list[dict[str, Any]], hz: float
) -> list[dict[str, Any]]:
    """The anchors' known behaviour, measured in this run (also asserted in tests)."""
    by = {(r["trace"], r["strategy"]): r for r in rows if r["hz"] == hz}
    checks = []
    for tname in ("fast", "bursty", "cjk_emoji"):
        if tname in traces and (tname, "naive") in by:
            want = largest_batch_graphemes(traces[tname].tracked)
            got = by[(tname, "naive")]["largest_reveal"]
            checks.append({"name": f"naive max jump = largest batch ({tname})",
                           "expected": str(want), "measured": str(got), "ok": got == want})
    if ("fast", "mosoo_450") in by:
        lag = by[("fast", "mosoo_450")]["lag_steady_mean_ms"]
        checks.append({"name": "mosoo_450 steady mean lag ≈ τ (fast)", "expected": "250 ± 20%",
                       "measured": f"{lag:.0f} ms", "ok": 200 <= lag <= 300})
    return checks


def typewriter_check(results: dict[tuple[str, str, float], RunResult], hz: float
                     ) -> dict[str, Any] | None:
    res = results.get(("fast", "typewriter", hz))
    if res is None:
        return None
    slope = lag_growth_per_s(res.recorder)
    return {"name": "typewriter lag grows with stream time (fast)",
            "expected": "> 0.5 s per s", "measured": f"{(slope or 0) / 1000:.2f} s per s",
            "ok": slope is not None and slope > 500}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small run, under a minute")
    ap.add_argument("--browser", action="store_true", help="real headless Chromium mode")
    ap.add_argument("--boot", action="store_true",
                    help="boot benchmark in headless Chromium (bench/boot.py; --repeat = rounds, "
                         "default 5, quick 2)")
    ap.add_argument("--engine", default="chromium",
                    help="--browser: comma-separated engines, run one after another and "
                         "compared side by side (chromium, firefox, webkit; default chromium)")
    ap.add_argument("--breakdown", action="store_true",
                    help="--browser: one extra instrumented streampace run per trace, "
                         "per-frame cost by part")
    ap.add_argument("--cpu", type=float, default=1.0,
                    help="--browser: slow the renderer N times while a trace plays "
                         "(DevTools CPU throttling; 4 ≈ a mid-range phone)")
    ap.add_argument("--phone", action="store_true",
                    help="--browser: play on a phone's screen (390 x 844 CSS px at 3x device "
                         "pixels, touch; DevTools device emulation; with --cpu 4 about a "
                         "mid-range phone)")
    ap.add_argument("--settle", type=float, default=None,
                    help="--browser: seconds the demo and the embed stay idle between ready "
                         "and the question (default 0.3)")
    ap.add_argument("--pages", help="--browser: comma-separated pages among bench,demo,embed "
                    "(default all three)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="output directory")
    ap.add_argument("--traces", help="comma-separated trace names "
                    "(--browser default: bursty,cjk_emoji,md_32k,answer_100k)")
    ap.add_argument("--strategies", help="comma-separated strategy names")
    ap.add_argument("--hz", help="comma-separated refresh rates (default 60,120; quick 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int,
                    help="virtual: runs per cell for the CPU probe (default 3, quick 1); "
                         "--browser: rounds of every strategy × trace (default 3, quick 1)")
    ap.add_argument("--reference", action="store_true",
                    help="also write bench/results/REFERENCE.md (with browser.md if present)")
    args = ap.parse_args(argv)

    if args.boot:
        from bench.boot import main as boot_main

        rounds = args.repeat or (2 if args.quick else 5)
        return boot_main(["--rounds", str(rounds), "--out", str(args.out)])

    if args.browser:
        from bench.browser_bench import main as browser_main

        return browser_main(args)

    started = time.perf_counter()
    trace_names = (args.traces.split(",") if args.traces
                   else list(QUICK_TRACES if args.quick else TRACE_KINDS))
    strategies = args.strategies.split(",") if args.strategies else list(STRATEGIES)
    for s in strategies:
        if s not in STRATEGIES:
            ap.error(f"unknown strategy {s!r}; choose from {', '.join(STRATEGIES)}")
    for t in trace_names:
        if t not in TRACE_KINDS:
            ap.error(f"unknown trace {t!r}; choose from {', '.join(TRACE_KINDS)}")
    hzs = [float(h) for h in args.hz.split(",")] if args.hz else (
        [60.0] if args.quick else [60.0, 120.0])
    repeat = args.repeat if args.repeat else (1 if args.quick else 3)

    out: Path = args.out
    (out / "traces").mkdir(parents=True, exist_ok=True)
    _log(f"building {len(trace_names)} traces …")
    traces: dict[str, Trace] = {}
    for name in trace_names:
        tr = build_trace(name, seed=args.seed)
        tr.save(out / "traces" / f"{name}.jsonl")
        traces[name] = tr
    _log(f"running {len(strategies)} strategies × {len(traces)} traces × {hzs} Hz "
         f"(repeat {repeat}) …")
    rows, results = run_suite(list(traces.values()), strategies, hzs, repeat)

    targets = []
    for tname in traces:
        for hz in hzs:
            cell = {r["strategy"]: r for r in rows if r["trace"] == tname and r["hz"] == hz}
            recs = {s: results[(tname, s, hz)].recorder for s in strategies
                    if (tname, s, hz) in results}
            targets += trace_targets(tname, hz, cell, recs)
    checks = anchor_checks(traces, rows, hzs[0])
    tw = typewriter_check(results, hzs[0])
    if tw:
        checks.append(tw)
    plots: list[str] = []
    try:
        import matplotlib  # noqa: F401  (the optional `bench` extra)
    except ImportError:
        _log("matplotlib is not installed (pip install -e '.[bench]'): plots skipped")
    else:
        for pt in PLOT_TRACES[:1] if args.quick else PLOT_TRACES:
            if pt in traces:
                recs = {s: results[(pt, s, hzs[0])].recorder for s in strategies}
                plots += write_plots(out, pt, recs)
        plots += [write_tradeoff_plot(out, rows, hz) for hz in hzs]

    wall = time.perf_counter() - started
    command = " ".join(["python -m bench", *(sys.argv[1:] if argv is None else argv)])
    data = {
        "meta": {
            "command": command,
            "date": _dt.datetime.now().isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {platform.system()}, {_cpus()} CPUs",
            "python": platform.python_version(),
            "git": git_state(),
            "wall_s": wall,
            "hz": hzs,
            "repeat": repeat,
            "strategies": {s: STRATEGIES[s].summary for s in strategies},
            "traces": {
                n: {**t.meta, "description": t.description,
                    "oracle_delay_ms": t.tracked.oracle_delay_ms,
                    "largest_batch_graphemes": largest_batch_graphemes(t.tracked)}
                for n, t in traces.items()
            },
        },
        "checks": checks,
        "targets": targets,
        "runs": rows,
        "plots": plots,
    }
    write_json(out / "results.json", data)
    write_markdown(out / "results.md", data)
    print(headline_table(rows, hzs[0]))
    if targets:
        missed = [t for t in targets if not t["ok"] and t["hz"] == hzs[0]]
        print(f"\nissue 20 targets at {hzs[0]:g} Hz: "
              f"{sum(1 for t in targets if t['ok'] and t['hz'] == hzs[0])} met, "
              f"{len(missed)} missed")
        if missed:
            print(targets_table(missed))
    if args.reference:
        _log(f"wrote {write_reference(out)}")
    bad = [c["name"] for c in checks if not c["ok"]]
    unfaithful = [f"{r['strategy']}/{r['trace']}" for r in rows if not r["faithful"]]
    _log(f"wrote {out / 'results.md'}, results.json, {len(plots)} plots in {wall:.1f} s")
    if bad:
        _log("harness checks FAILED: " + "; ".join(bad))
    if unfaithful:
        _log("final text differs from what arrived: " + ", ".join(unfaithful))
    return 1 if bad else 0


def write_reference(out: Path) -> Path:
    """bench/results/REFERENCE.md: the last full report (+ browser section), no images,
    then issue 29's P1 over seeds 1–5 (`bench.p1_report`)."""
    text = (out / "results.md").read_text(encoding="utf-8")
    head, _sep, _plots = text.partition("\n## Plots\n")
    parts = [head.rstrip() + "\n"]
    browser = out / "browser.md"
    if browser.is_file():
        body = browser.read_text(encoding="utf-8").split("\n", 1)[1]
        parts.append("\n## Real browser (`python -m bench --browser`)\n" + body)
    # Issue 29's P1 over five seeds, each jerk miss classified (≈ 1 min).
    from bench.p1_report import p1_section

    parts.append("\n" + p1_section())
    ref = RESULTS / "REFERENCE.md"
    ref.write_text("\n".join(parts), encoding="utf-8")
    return ref


def _cpus() -> int:
    import os

    return os.cpu_count() or 0


if __name__ == "__main__":
    raise SystemExit(main())
