"""The page's own Python per frame, without the machine's noise: replayed in the page.

    python -m bench.page_frames --trace bursty --runs 8
    python -m bench.page_frames --cpu 4 --variant a.py --variant b.py

`python -m bench --browser` times each animation frame's Python with the wall
clock while the trace plays in real time, so on a shared machine its p99 is
mostly the frames the OS or DevTools' throttling happened to pause (one run's
p99 on bursty ranged 0.8-5.9 ms at 1x, load 1-3, for the same code). Here the
booted embed replays the trace through a fresh `StreamView` of its own on a
detached element (never laid out), on a virtual 60 Hz clock (the same frames
every run), in the page's real Pyodide with the real DOM calls, `--runs` times;
a frame's figure is its least time over the runs: its own cost, the pauses
that hit it in some runs left out. The cyclic collector's pauses land on other
frames each run, so they are printed apart, per run: in frames and between
them. With `--variant` files (Python exec'd with `view`, `host` and
`collector` before each run, e.g. an option switched off), the variants' runs
alternate in one page, so the machine's load falls on each alike: an A/B of
one change. Figures are for comparing code; the bench's tables are the measure
of the page.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.engines import browser
from bench.frame_trace import _server
from bench.server_load import percentile
from bench.traces import build_trace
from bench.whole_frame import _READY_JS, BOOT_TIMEOUT_S, _wait, set_cpu

# Defines `_replay(arrivals_json, variant_source)` in the page's Python: the
# trace through a new StreamView on a virtual clock, each frame's ms (JSON).
REPLAY_PY = r"""
import gc as _gc
import json as _json
import js as _js
from streampace.browser.collector import FrameCollector as _FrameCollector
from streampace.browser.controller import StreamView as _StreamView
from streampace.browser.page_host import page_collector as _page_collector
from streampace.testing import ManualHost as _ManualHost

def _find_bridge():
    # The embed's own view holds the page's bridge (js_shim/bridge.js). Found
    # once: gc.get_objects() leaves out what a variant's gc.freeze() froze.
    for obj in _gc.get_objects():
        if isinstance(obj, _StreamView) and not obj.closed:
            return obj.bridge
    raise RuntimeError("no mounted view on the page")

_bridge = _find_bridge()

def _page_bridge():
    return _bridge

class _Socket:
    url = "ws://127.0.0.1/replay"
    sink = None
    def attach(self, sink): self.sink = sink
    def detach(self): self.sink = None
    def close(self, *args): self.sink = None
    def send(self, data): return True

def _replay(arrivals_json, variant_source):
    now = _js.performance.now
    arrivals = _json.loads(arrivals_json)
    host = _ManualHost()
    view = _StreamView(_page_bridge(), _js.document.createElement("div"), host=host,
                       scroll=False, heading_base="off")
    # The page's policy on the replay's clock: where the page runs the cyclic
    # collector in timeouts after its frames (browser/collector.py), so does
    # the replay (the page's own timeouts cannot fire while it runs).
    threshold = _gc.get_threshold()
    collector = _FrameCollector(host) if _page_collector() is not None else None
    if collector is not None:
        played = host.run_frame
        def run_frame():
            n = played()
            collector.after_frame()
            return n
        host.run_frame = run_frame
    if variant_source:
        exec(variant_source, {"view": view, "host": host, "collector": collector})
    socket = _Socket()
    view.connect(socket)
    socket.sink("open", None)
    first = arrivals[0][0]
    frame_ms = 1000 / 60
    end = arrivals[-1][0] - first + 2300.0
    t, k, out = 0.0, 0, []
    # The collector's pauses: [ms in frames, ms elsewhere (messages, timers)].
    pause, gc_at, outside = [0.0, 0.0], [0.0], []
    in_frame = [0]
    def on_gc(phase, _info):
        if phase == "start":
            gc_at[0] = now()
        else:
            took = now() - gc_at[0]  # read once: the total and the longest agree
            pause[1 - in_frame[0]] += took
            if not in_frame[0]:
                outside.append(took)
    _gc.callbacks.append(on_gc)
    try:
        while t < end:
            t += frame_ms
            while k < len(arrivals) and arrivals[k][0] - first + 300.0 <= t:
                socket.sink("message", _json.dumps({"through": k + 1, "events": arrivals[k][1]}))
                k += 1
            host.run_until(t)
            if host.pending_frames:
                in_frame[0], before = 1, pause[0]
                t0 = now()
                host.run_frame()
                out.append([round(t), now() - t0, pause[0] - before])
                in_frame[0] = 0
        view.close()
    finally:
        _gc.callbacks.remove(on_gc)
        if collector is not None:
            collector.stop()
        _gc.set_threshold(*threshold)
    return _json.dumps({"frames": out, "gc_outside_ms": pause[1],
                        "gc_outside_max_ms": max(outside, default=0.0),
                        "gc_outside_n": len(outside),
                        "objects": len(_gc.get_objects())})
"""
_DEFINE_JS = ("const done = arguments[arguments.length - 1];"
              " window.streampace.runtime().then((py) => { py.runPython(arguments[0]);"
              " done(true); }, (err) => done(String(err)));")
_REPLAY_JS = ("const done = arguments[arguments.length - 1];"
              " window.streampace.runtime().then((py) => {"
              " try { done(py.globals.get('_replay')(arguments[0], arguments[1])); }"
              " catch (err) { done('error: ' + String(err)); } });")


def quantile(values: list[float], q: float) -> float:
    """The nearest-rank `q` quantile (0–1) of `values`."""
    return percentile(sorted(values), q * 100.0)


def least_per_frame(runs: list[list[list[float]]]) -> tuple[list[int], list[float]]:
    """Each frame's least time over the runs (frames are the same virtual times)."""
    n = min(len(run) for run in runs)
    return ([int(runs[0][i][0]) for i in range(n)],
            [min(run[i][1] for run in runs) for i in range(n)])


def report(name: str, runs: list[list[list[float]]], slowest: int) -> list[str]:
    at, least = least_per_frame(runs)
    single = [round(quantile([f[1] for f in run], 0.99), 2) for run in runs]
    top = sorted(range(len(least)), key=lambda i: -least[i])[:slowest]
    return [f"{name}: {len(least)} frames; least over {len(runs)} runs: p50 "
            f"{quantile(least, 0.5):.2f}, p90 {quantile(least, 0.9):.2f}, p99 "
            f"{quantile(least, 0.99):.2f}, max {max(least):.2f}, mean "
            f"{sum(least) / len(least):.3f} ms; each run's own p99 {single}",
            "  slowest (virtual ms: ms): " + ", ".join(f"{at[i]}: {least[i]:.2f}" for i in top)]


def gc_report(runs: list[dict[str, Any]]) -> str:
    """The cyclic collector's pauses per run: inside frames (the least-over-runs
    figures leave most of them out, as they land on other frames each run) and
    outside (socket messages, timers), and the objects left after each run."""
    inside = [[f[2] for f in run["frames"] if len(f) > 2 and f[2] > 0] for run in runs]
    return ("  gc in frames per run (pauses, max ms): "
            + ", ".join(f"{len(p)} {max(p, default=0):.2f}" for p in inside)
            + "; outside frames per run (pauses, max, total ms): "
            + ", ".join(f"{run.get('gc_outside_n', 0)} {run.get('gc_outside_max_ms', 0):.2f}"
                        f" {run['gc_outside_ms']:.1f}" for run in runs)
            + "; objects after each run: " + ", ".join(str(run["objects"]) for run in runs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.page_frames", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--cpu", type=float, default=1.0,
                    help="DevTools CPU throttling while replaying (4 = a mid-range phone)")
    ap.add_argument("--variant", action="append", default=[],
                    help="a Python file exec'd with `view`, `host` and `collector` (the "
                         "page's gc policy on the replay's host, or None) before each run "
                         "(repeat for an A/B; default: the code as it is)")
    ap.add_argument("--slowest", type=int, default=8)
    args = ap.parse_args(argv)
    trace = build_trace(args.trace, seed=args.seed)
    arrivals = json.dumps([[t, batch] for t, batch in trace.arrivals])
    variants: dict[str, str] = {"as is": ""} if not args.variant else {
        name: Path(name).read_text(encoding="utf-8") for name in args.variant}
    runs: dict[str, list[Any]] = {name: [] for name in variants}
    with _server(trace) as server, browser("chromium", prefix="streampace-frames-") as driver:
        driver.get(f"{server.base}/bench/embed")
        _wait(driver, _READY_JS, BOOT_TIMEOUT_S, "embed")
        ok = driver.execute_async_script(_DEFINE_JS, REPLAY_PY)
        if ok is not True:
            raise RuntimeError(f"could not set up the replay: {ok}")
        set_cpu(driver, args.cpu)
        try:
            for _ in range(args.runs):
                for name, source in variants.items():  # alternating: load falls alike
                    out = driver.execute_async_script(_REPLAY_JS, arrivals, source)
                    if out.startswith("error"):
                        raise RuntimeError(f"{name}: {out}")
                    runs[name].append(json.loads(out))
        finally:
            set_cpu(driver, 1)
    print(f"trace {args.trace} (seed {args.seed}), --cpu {args.cpu:g}, replayed in the embed "
          "on a virtual 60 Hz clock, a detached view:")
    for name, done in runs.items():
        print("\n".join(report(name, [run["frames"] for run in done], args.slowest)))
        print(gc_report(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
