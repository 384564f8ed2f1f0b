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
that hit it in some runs left out. With `--variant` files (Python exec'd with
`view` and `host` before each run, e.g. an option switched off), the variants'
runs alternate in one page, so the machine's load falls on each alike: an A/B
of one change. Figures are for comparing code; the bench's tables are the measure
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
from streampace.browser.controller import StreamView as _StreamView
from streampace.testing import ManualHost as _ManualHost

def _page_bridge():
    # The embed's own view holds the page's bridge (js_shim/bridge.js).
    for obj in _gc.get_objects():
        if isinstance(obj, _StreamView) and not obj.closed:
            return obj.bridge
    raise RuntimeError("no mounted view on the page")

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
    if variant_source:
        exec(variant_source, {"view": view, "host": host})
    socket = _Socket()
    view.connect(socket)
    socket.sink("open", None)
    first = arrivals[0][0]
    frame_ms = 1000 / 60
    end = arrivals[-1][0] - first + 2300.0
    t, k, out = 0.0, 0, []
    while t < end:
        t += frame_ms
        while k < len(arrivals) and arrivals[k][0] - first + 300.0 <= t:
            socket.sink("message", _json.dumps({"through": k + 1, "events": arrivals[k][1]}))
            k += 1
        host.run_until(t)
        if host.pending_frames:
            t0 = now()
            host.run_frame()
            out.append([round(t), now() - t0])
    view.close()
    return _json.dumps(out)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.page_frames", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--cpu", type=float, default=1.0,
                    help="DevTools CPU throttling while replaying (4 = a mid-range phone)")
    ap.add_argument("--variant", action="append", default=[],
                    help="a Python file exec'd with `view` and `host` before each run "
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
        print("\n".join(report(name, done, args.slowest)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
