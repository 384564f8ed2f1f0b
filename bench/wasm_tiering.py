"""How often V8 recompiles the Python interpreter's main loop while a page answers.

    python -m bench.wasm_tiering --page embed --trace bursty --cpu 1 --loads 3
    python -m bench.wasm_tiering --settle 2      # the question 2 s after ready

Python runs inside one wasm function, CPython's `_PyEval_EvalFrameDefault`
(the largest function of Pyodide's module). V8 compiles it first with its
baseline compiler (Liftoff), then optimises it (TurboFan) in the background.
The optimised code inlines the C functions it saw called through function
pointers; when another one turns up, V8 throws that code away
(deoptimises), compiles the baseline code again on the main thread, and the
loop runs slowly until it is optimised again. Each time is a
`wasm.CompileBaseline` event of that function in a DevTools trace.

Per page load (a fresh navigation, traced from before it), this prints when
each such compile came, in ms from the question (negative: before it, in the
boot or the page's warm-up, browser/warm.py) and how long it held the main
thread, then the page's Python ms per frame for the answer. The page and the
answer are as in `python -m bench --browser` (bench/whole_frame.py
`play_page`); `--settle` is how long the page stays idle between ready and
the question (the bench's 0.3 s by default). Figures are for finding causes;
the bench's tables are the measure.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from bench.engines import browser
from bench.frame_trace import MARK, DevToolsTracer, _server
from bench.traces import build_trace
from bench.whole_frame import SETTLE_S, install_probe, play_page

CATEGORIES = ("blink.user_timing", "v8.wasm", "disabled-by-default-v8.wasm.detailed")


def interpreter_compiles(events: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The baseline compiles of the module's largest function (the interpreter's
    loop): (ms from the probe's start mark, ms they took), in order."""
    compiles = [e for e in events if e.get("name") == "wasm.CompileBaseline"
                and e.get("ph") == "X" and "funcIndex" in (e.get("args") or {})]
    marks = [e for e in events if e.get("name") == MARK]
    if not compiles or not marks:
        return []
    largest = max(compiles, key=lambda e: e["args"].get("bodySize", 0))["args"]["funcIndex"]
    origin = float(marks[-1]["ts"])
    return sorted(((float(e["ts"]) - origin) / 1000.0, float(e.get("dur", 0)) / 1000.0)
                  for e in compiles if e["args"]["funcIndex"] == largest)


def _load(driver: Any, server: Any, page: str, trace: Any, cpu: float,
          settle_s: float) -> tuple[list[tuple[float, float]], dict[str, Any]]:
    driver.get("about:blank")  # traced from before the navigation: the boot's compiles too
    tracer = DevToolsTracer(driver, CATEGORIES)
    with tracer:
        probe = play_page(driver, server.base, server.player, page, trace, cpu,
                          settle_s=settle_s)
    return interpreter_compiles(tracer.events), probe.get("py") or {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.wasm_tiering",
                                 description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--page", default="embed", choices=("demo", "embed"))
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--cpu", type=float, default=1.0)
    ap.add_argument("--loads", type=int, default=3)
    ap.add_argument("--settle", type=float, default=SETTLE_S,
                    help="seconds between ready and the question (default: the bench's)")
    args = ap.parse_args(argv)
    trace = build_trace(args.trace)
    during: list[int] = []
    with _server(trace) as server, browser("chromium", prefix="streampace-tiering-") as driver:
        install_probe(driver)
        for n in range(args.loads):
            compiles, py = _load(driver, server, args.page, trace, args.cpu, args.settle)
            answer = [c for c in compiles if c[0] >= 0]
            during.append(len(answer))
            print(f"load {n + 1}: {len(compiles)} compiles of the interpreter's loop, "
                  f"{len(answer)} after the question; Python ms/frame p50 "
                  f"{py.get('p50', 0):.1f} p99 {py.get('p99', 0):.1f}")
            print("   " + ", ".join(f"{at:.0f} ms ({ms:.1f})" for at, ms in compiles))
    print(f"{args.page} {args.trace} {args.cpu:g}x CPU, settle {args.settle:g} s: compiles "
          f"after the question per load {during}, median {statistics.median(during):g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
