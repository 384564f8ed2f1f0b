"""Report writers: Markdown tables, a JSON file with every figure, PNG plots."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# (metric key, column title, how to aggregate across traces, format)
HEADLINE: tuple[tuple[str, str, str, str], ...] = (
    ("ttft_visible_ms", "TTFT ms (med)", "median", "ms"),
    ("lag_p50_ms", "lag p50 ms (med)", "median", "ms"),
    ("lag_p95_ms", "lag p95 ms (worst)", "max", "ms"),
    ("lag_ratio", "mean lag / oracle (med)", "median", "x"),
    ("longest_freeze_ms", "freeze ms (worst)", "max", "ms"),
    ("largest_reveal", "max jump (worst)", "max", "int"),
    ("jerk_cv", "jerk CV (med)", "median", "x"),
    ("tail_ms", "tail ms (worst)", "max", "ms"),
    ("broken_reveals", "broken frames (sum)", "sum", "int"),
    ("commits_per_s", "commits/s (med)", "median", "x1"),
    ("cpu_us_per_drain", "µs/drain (med)", "median", "x1"),
)
PER_TRACE: tuple[tuple[str, str, str], ...] = (
    ("ttft_visible_ms", "TTFT ms", "ms"),
    ("lag_p50_ms", "lag p50", "ms"),
    ("lag_p95_ms", "lag p95", "ms"),
    ("lag_max_ms", "lag max", "ms"),
    ("lag_ratio", "lag/oracle", "x"),
    ("longest_freeze_ms", "freeze ms", "ms"),
    ("largest_reveal", "max jump", "int"),
    ("jerk_cv", "jerk CV", "x"),
    ("tail_ms", "tail ms", "ms"),
    ("broken_reveals", "broken", "int"),
    ("commits_per_s", "commits/s", "x1"),
    ("cpu_us_per_drain", "µs/drain", "x1"),
    ("faithful", "faithful", "bool"),
)


def fmt(value: Any, kind: str) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "—"
    if kind == "bool":
        return "yes" if value else "**NO**"
    if kind == "int":
        return str(int(value))
    if kind == "ms":
        return f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}"
    if kind == "x1":
        return f"{value:.1f}"
    if kind == "x3":
        return f"{value:.3f}"
    return f"{value:.2f}"


def _tab10(plt: Any) -> Any:
    """The ten colours of matplotlib's `tab10` (a listed colour map)."""
    from matplotlib.colors import ListedColormap

    cmap = plt.get_cmap("tab10")
    assert isinstance(cmap, ListedColormap)
    return cmap.colors


def _agg(values: list[float | None], how: str) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if how == "median":
        return float(statistics.median(vals))
    if how == "max":
        return float(max(vals))
    return float(sum(vals))


def headline_rows(runs: Sequence[dict[str, Any]], hz: float) -> list[list[str]]:
    strategies = list(dict.fromkeys(r["strategy"] for r in runs))
    rows = []
    for s in strategies:
        mine = [r for r in runs if r["strategy"] == s and r["hz"] == hz]
        row = [f"`{s}`"]
        for key, _title, how, kind in HEADLINE:
            row.append(fmt(_agg([r.get(key) for r in mine], how), kind))
        rows.append(row)
    return rows


def md_table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def headline_table(runs: Sequence[dict[str, Any]], hz: float) -> str:
    return md_table(["strategy", *(h[1] for h in HEADLINE)], headline_rows(runs, hz))


def trace_table(runs: Sequence[dict[str, Any]], trace: str, hz: float) -> str:
    rows = []
    for r in runs:
        if r["trace"] == trace and r["hz"] == hz:
            rows.append([f"`{r['strategy']}`", *(fmt(r.get(k), kind) for k, _t, kind in PER_TRACE)])
    return md_table(["strategy", *(t for _k, t, _f in PER_TRACE)], rows)


SMOOTH_ENOUGH = "jerk CV ≤ mosoo_450's, freeze ≤ mosoo_450's, max jump ≤ mosoo_450's + 2, " \
    "0 broken frames, faithful"


def _smooth_enough(r: dict[str, Any], seed: dict[str, Any]) -> bool:
    def le(a: Any, b: Any, slack: float = 0.0) -> bool:
        return a is None or (b is not None and a <= b + slack)

    return (bool(r.get("faithful")) and not r.get("broken_reveals")
            and le(r.get("jerk_cv"), seed.get("jerk_cv"))
            and le(r.get("longest_freeze_ms"), seed.get("longest_freeze_ms"))
            and le(r.get("largest_reveal"), seed.get("largest_reveal"), 2))


def who_wins_table(runs: Sequence[dict[str, Any]], hz: float) -> str:
    """Per trace: freshest strategy that is as smooth as the seed, freshest and smoothest."""
    rows = []
    for trace in dict.fromkeys(r["trace"] for r in runs):
        mine = {r["strategy"]: r for r in runs if r["trace"] == trace and r["hz"] == hz}
        seed = mine.get("mosoo_450")
        lagged = [r for r in mine.values() if r.get("lag_mean_ms") is not None
                  and r.get("faithful")]
        if seed is None or not lagged:
            continue

        def name(r: dict[str, Any] | None, key: str, kind: str) -> str:
            return "—" if r is None else f"`{r['strategy']}` ({fmt(r.get(key), kind)})"

        smooth = [r for r in lagged if _smooth_enough(r, seed)]
        best_smooth = min(smooth, key=lambda r: r["lag_mean_ms"], default=None)
        freshest = min(lagged, key=lambda r: r["lag_mean_ms"])
        with_cv = [r for r in lagged if r.get("jerk_cv") is not None]
        smoothest = min(with_cv, key=lambda r: r["jerk_cv"], default=None)
        order = sorted(smooth, key=lambda r: r["lag_mean_ms"])
        rank = next((i + 1 for i, r in enumerate(order) if r["strategy"] == "streampace"), None)
        rows.append([f"`{trace}`", name(best_smooth, "lag_mean_ms", "ms"),
                     name(freshest, "lag_mean_ms", "ms"), name(smoothest, "jerk_cv", "x"),
                     f"{rank} of {len(order)}" if rank else "not smooth enough"])
    return md_table(["trace", "freshest of those as smooth as the seed (mean lag ms)",
                     "freshest overall", "smoothest (jerk CV)", "streampace's place"], rows)


def targets_table(targets: Sequence[dict[str, Any]]) -> str:
    """Issue 20's targets: one row per trace × Hz, one column per target."""
    names = list(dict.fromkeys(t["target"] for t in targets))
    keys = list(dict.fromkeys((t["trace"], t["hz"]) for t in targets))
    cells = {(t["trace"], t["hz"], t["target"]): t for t in targets}
    rows = []
    for trace, hz in keys:
        row = [f"`{trace}` {hz:g} Hz"]
        for n in names:
            t = cells.get((trace, hz, n))
            if t is None:
                row.append("")
            elif t["ok"]:
                row.append("ok")
            else:
                m, lim = t["measured"], t["limit"]
                row.append(f"**miss** {fmt(m, 'x')} > {fmt(lim, 'x')}"
                           if m is not None and lim is not None else "**miss**")
        rows.append(row)
    return md_table(["trace", *names], rows)


def write_markdown(path: Path, data: dict[str, Any]) -> None:
    meta = data["meta"]
    runs = data["runs"]
    hzs = meta["hz"]
    out = [
        "# streampace benchmark",
        "",
        f"Generated by `{meta['command']}` on {meta['date']} ({meta['machine']}), "
        f"code at {meta['git']['head']}"
        f"{' with uncommitted core edits' if meta['git']['core_uncommitted'] else ''}; "
        f"wall time {meta['wall_s']:.1f} s.  Virtual clock (CPython {meta['python']}): every "
        "figure is computed from the run, none edited by hand.  Lag = arrival at the browser "
        "→ first paint showing the grapheme; commits become visible at the next vsync.",
        "",
        f"## Main results ({hzs[0]:g} Hz, aggregated over {len(meta['traces'])} traces)",
        "",
        headline_table(runs, hzs[0]),
        "",
        "Columns: TTFT = first text visible after the first text arrived; *oracle* = the "
        "smallest constant delay after generation at which every grapheme could be shown at "
        "the model's own pace without waiting for data (ratio < 1: the strategy shows text "
        "sooner than that, i.e. it does not smooth); freeze = longest time text was pending "
        "with nothing new painted; max jump = most graphemes revealed by one paint, barrier "
        "and overload flushes excluded; jerk CV = coefficient of variation of graphemes per "
        "frame between the 10th and 90th arrival percentiles; tail = terminal event → all "
        "text visible; broken frames = paints whose text ends inside a grapheme cluster a "
        "later paint completes; µs/drain = CPU per frame/timer callback in this CPython run "
        "(min over repeats; noisy shared machine; for the eight baselines it measures the "
        "bench's own implementations of their descriptions).",
        "",
    ]
    for hz in hzs[1:]:
        out += [f"## Same at {hz:g} Hz", "", headline_table(runs, hz), ""]
    if data.get("targets"):
        met = sum(1 for t in data["targets"] if t["ok"])
        out += ["## Issue 20 targets (streampace default vs the oracle, mosoo_450 and "
                "cherry_jitter, same run)", "",
                f"{met} of {len(data['targets'])} met.  Each cell is a ratio within this run "
                "(`bench/targets.py`); a miss shows measured > limit.", "",
                targets_table(data["targets"]), ""]
        from bench.targets import WHY_MISSED

        why = list(dict.fromkeys((t["trace"], t["target"]) for t in data["targets"]
                                 if not t["ok"]))
        if why:
            out += ["Why the misses (analysis; the figures are the grid's):", ""]
            out += [f"- `{tr}`, {tg}: "
                    + WHY_MISSED.get((tr, tg), WHY_MISSED.get((None, tg), "not analysed yet."))
                    for tr, tg in why]
            out.append("")
    for hz in hzs:
        out += [f"## Who wins ({hz:g} Hz)", "",
                f"Smooth enough = {SMOOTH_ENOUGH}, on that trace.", "",
                who_wins_table(runs, hz), ""]
    if data.get("checks"):
        out += ["## Harness checks (anchors reproduced)", "",
                md_table(["check", "expected", "measured", "ok"],
                         [[c["name"], c["expected"], c["measured"],
                           "yes" if c["ok"] else "**NO**"] for c in data["checks"]]), ""]
    out += ["## Traces", "",
            md_table(["trace", "what", "graphemes", "socket messages", "duration ms",
                      "oracle delay ms"],
                     [[f"`{name}`", t["description"], str(t["graphemes"]),
                       str(t["socket_messages"]), fmt(t["duration_ms"], "ms"),
                       fmt(t["oracle_delay_ms"], "ms")]
                      for name, t in meta["traces"].items()]), ""]
    for trace in meta["traces"]:
        out += [f"## `{trace}` at {hzs[0]:g} Hz", "", trace_table(runs, trace, hzs[0]), ""]
    if data.get("plots"):
        out += ["## Plots", ""]
        out += [f"![{p}]({p})" for p in data["plots"]]
        out.append("")
    if data.get("browser"):
        out += ["## Real browser", "", data["browser"].get("markdown", ""), ""]
    path.write_text("\n".join(out), encoding="utf-8")


def write_json(path: Path, data: dict[str, Any]) -> None:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and not np.isfinite(v):
            return None
        if isinstance(v, (np.floating, np.integer)):
            return v.item()
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    path.write_text(json.dumps(clean(data), indent=1, ensure_ascii=False), encoding="utf-8")


def write_tradeoff_plot(out_dir: Path, runs: Sequence[dict[str, Any]], hz: float) -> str:
    """Lag versus smoothness, one panel per trace, every strategy one point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = list(dict.fromkeys(r["trace"] for r in runs))
    cols = 4
    rows = (len(traces) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    colors = _tab10(plt)
    strategies = list(dict.fromkeys(r["strategy"] for r in runs))
    marks = {"streampace": ("*", 220), "mosoo_450": ("s", 90)}
    for ax, trace in zip(axes.flat, traces, strict=False):
        for k, name in enumerate(strategies):
            r = next((x for x in runs if x["trace"] == trace and x["strategy"] == name
                      and x["hz"] == hz), None)
            if r is None or r.get("lag_mean_ms") is None or r.get("jerk_cv") is None:
                continue
            marker, size = marks.get(name, ("o", 40))
            ax.scatter(max(r["lag_mean_ms"], 1.0), r["jerk_cv"], marker=marker, s=size,
                       color=colors[k % 10], edgecolor="black" if name in marks else "none",
                       label=name, zorder=3 if name in marks else 2)
        ax.set_xscale("log")
        ax.set_title(trace, fontsize=10)
        ax.set_xlabel("mean lag ms (log)", fontsize=8)
        ax.set_ylabel("jerk CV (lower = smoother)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="both")
    for ax in list(axes.flat)[len(traces):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8)
    fig.suptitle(f"Lag vs smoothness at {hz:g} Hz — bottom left wins "
                 "(★ streampace default, ■ seed = mosoo_450)")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    fname = f"lag_vs_smoothness_{hz:g}hz.png"
    fig.savefig(out_dir / fname, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return fname


def write_plots(out_dir: Path, trace: str, recorders: dict[str, Any]) -> list[str]:
    """visible graphemes over time, lag CDFs and per-frame reveal histograms for one trace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bench.metrics import lags, reveals_per_frame, visible_series

    names: list[str] = []
    truth = next(iter(recorders.values())).truth
    t0 = float(np.min(truth.arrival)) if truth.total else 0.0

    colors = _tab10(plt)
    arr = np.sort(truth.arrival)
    gen = np.sort(truth.generated)
    fig, ax = plt.subplots(figsize=(10, 6))
    ax.step((arr - t0) / 1000, np.arange(1, len(arr) + 1), where="post", color="black",
            lw=1, ls="--", label="arrived (socket)")
    series = {name: visible_series(rec) for name, rec in recorders.items()}
    for k, (name, (t, n)) in enumerate(series.items()):
        ax.step((t - t0) / 1000, n, where="post", lw=1.2, color=colors[k % 10], label=name)
    end = (float(np.max(arr)) - t0) / 1000 if len(arr) else 1.0
    ax.set_xlim(0, end * 1.35 + 0.5)
    ax.set_ylim(0, len(arr) * 1.05 + 1)
    ax.set_xlabel("time since first arrival (s)")
    ax.set_ylabel("graphemes visible")
    ax.set_title(f"Visible text over time — trace '{trace}'")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fname = f"visible_{trace}.png"
    fig.savefig(out_dir / fname, dpi=110, bbox_inches="tight")
    plt.close(fig)
    names.append(fname)

    # The same, one panel per strategy, zoomed on a 2 s window of the steady part.
    lo = float(np.percentile(arr, 30)) if len(arr) else 0.0
    hi = lo + 2000.0
    n_lo = int(np.searchsorted(arr, lo))
    n_hi = int(np.searchsorted(arr, hi))
    cols = 5
    rows = (len(series) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False,
                             sharey=True)
    for k, (ax, (name, (t, n))) in enumerate(zip(axes.flat, series.items(), strict=False)):
        ax.step((arr - lo) / 1000, np.arange(1, len(arr) + 1), where="post", color="black",
                lw=0.8, ls="--")
        ax.plot((gen - lo) / 1000, np.arange(1, len(gen) + 1), color="grey", lw=0.8, ls=":")
        ax.step((t - lo) / 1000, n, where="post", color=colors[k % 10], lw=1.4)
        ax.set_xlim(0, 2.0)
        ax.set_ylim(max(0, n_lo - 0.3 * (n_hi - n_lo)), n_hi + 0.1 * (n_hi - n_lo) + 1)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(series):]:
        ax.axis("off")
    fig.suptitle(f"Visible graphemes, 2 s of '{trace}' (dashed: arrived, dotted: generated)")
    fig.tight_layout()
    fname = f"visible_zoom_{trace}.png"
    fig.savefig(out_dir / fname, dpi=100, bbox_inches="tight")
    plt.close(fig)
    names.append(fname)

    fig, ax = plt.subplots(figsize=(10, 6))
    for name, rec in recorders.items():
        lag = np.sort(lags(rec))
        if len(lag):
            ax.step(np.maximum(lag, 1.0), np.arange(1, len(lag) + 1) / len(lag), where="post",
                    label=name)
    oracle = np.sort(truth.oracle_lag_ms)
    if len(oracle):
        ax.step(np.maximum(oracle, 1.0), np.arange(1, len(oracle) + 1) / len(oracle),
                where="post", color="black", ls="--", label="oracle")
    ax.set_xscale("log")
    ax.set_xlabel("lag arrival → visible (ms, log)")
    ax.set_ylabel("fraction of graphemes")
    ax.set_title(f"Lag CDF — trace '{trace}'")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fname = f"lag_cdf_{trace}.png"
    fig.savefig(out_dir / fname, dpi=110, bbox_inches="tight")
    plt.close(fig)
    names.append(fname)

    panels = len(recorders)
    cols = 5
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, (name, rec) in zip(axes.flat, recorders.items(), strict=False):
        counts = reveals_per_frame(rec)
        if len(counts):
            ax.hist(counts, bins=np.arange(1, max(counts.max(), 2) + 2) - 0.5
                    if counts.max() <= 60 else 40, color="tab:blue")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("graphemes per paint", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[panels:]:
        ax.axis("off")
    fig.suptitle(f"Per-frame reveal sizes (paints that showed text; flushes excluded) — "
                 f"'{trace}'")
    fig.tight_layout()
    fname = f"reveal_hist_{trace}.png"
    fig.savefig(out_dir / fname, dpi=100, bbox_inches="tight")
    plt.close(fig)
    names.append(fname)
    return names


def git_state() -> dict[str, Any]:
    """Which code produced the figures: HEAD, and whether the core had local edits."""
    import subprocess

    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"head": git("rev-parse", "--short", "HEAD"),
            "core_uncommitted": bool(git("status", "--porcelain", "--", ":(glob)py/streampace/*.py",
                                         "py/streampace/browser"))}
