"""What the page's calls through Pyodide's FFI leave behind: counted, not timed.

    python -m bench.ffi_glue --trace md_32k
    python -m bench.ffi_glue --page demo --trace bursty --top 20

Plays the trace into the embed (or the demo) as `python -m bench --browser` does
(bench/whole_frame.py `play_page`) and reports two figures that do not move with
the machine's load, for comparing code on a noisy machine:

- **JS allocations** over the answer, from V8's sampling heap profiler (CDP
  `HeapProfiler.startSampling`, objects the collectors freed included), in total
  and by the function that allocated. Most of the page's JS garbage is Pyodide's
  glue (docs/browser.md, "Per-frame figures"): each value coming back from JS is
  checked with `instanceof PyProxy`, each new proxy's type probed, each attribute
  name decoded; that garbage is what the page's scavenges collect.
- **Crossings** (embed only): how often Pyodide asked `API.isPyProxy` — about once
  per JS value brought into Python — in all, in the page's animation-frame and
  timer callbacks, and in the renderer's and the Markdown view's `apply`.

The two come from two plays: the counting wrapper allocates too. Sampling puts
an allocation on a sampled byte, so the totals move by a few percent between
plays; the counts are exact for a play (the trace's arrivals over a real socket
may split a batch differently from play to play).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
from collections.abc import Iterator
from typing import Any

from bench.engines import browser
from bench.frame_trace import _server
from bench.report import md_table
from bench.traces import build_trace
from bench.whole_frame import install_probe, play_page

SAMPLING_BYTES = 2048

# Wraps Pyodide's `API.isPyProxy` with a counter, then runs COUNT_PY in the page.
_INSTALL_JS = """
const done = arguments[arguments.length - 1];
window.streampace.runtime().then((py) => {
  const api = py._api;
  if (!api || typeof api.isPyProxy !== "function") { done("no pyodide._api.isPyProxy"); return; }
  const real = api.isPyProxy;
  const counter = { n: 0 };
  window.__ffiGlue = counter;
  api.isPyProxy = function (value) { counter.n++; return real.call(this, value); };
  try { py.runPython(arguments[0]); done(true); } catch (err) { done(String(err)); }
}, (err) => done(String(err)));
"""
# Counts per part: the checks made while each runs (nested parts count in both).
# The host's callbacks are the proxies JS calls (`_Callback._fn`), replaced on the
# page's live hosts; the renderer's and the view's `apply` on their classes.
COUNT_PY = r"""
import gc as _gc
import json as _json
import js as _js
from streampace.browser.host import BrowserHost as _Host
from streampace.browser.markdown_dom import MarkdownView as _View
from streampace.browser.renderer import DomRenderer as _Renderer

_counter = _js.__ffiGlue
_parts = {}

def _counted(name, fn):
    def run(*args, **kwargs):
        before = _counter.n
        try:
            return fn(*args, **kwargs)
        finally:
            part = _parts.setdefault(name, [0, 0])
            part[0] += 1
            part[1] += _counter.n - before
    return run

for _cls, _name, _part in ((_Renderer, "apply", "renderer apply"),
                           (_View, "apply", "Markdown view apply")):
    setattr(_cls, _name, _counted(_part, _cls.__dict__[_name]))
for _host in [o for o in _gc.get_objects() if isinstance(o, _Host)]:
    for _attr, _part in (("frame_callback", "frame callbacks"),
                         ("timeout_callback", "timer callbacks")):
        _cb = getattr(_host, _attr)
        if _cb is not None:
            _cb._fn = _counted(_part, _cb._fn)

def __ffi_glue_json():
    return _json.dumps({"total": _counter.n, "parts": _parts})
"""
_START_JS = "window.__ffiGlue.n = 0;"
_READ_JS = ("const done = arguments[arguments.length - 1];"
            " window.streampace.runtime().then((py) => done(py.globals.get('__ffi_glue_json')()));")


def _frame_name(node: dict[str, Any]) -> str:
    frame = node["callFrame"]
    url = frame.get("url", "").rsplit("/", 1)[-1]
    return f"{frame.get('functionName') or '(anonymous)'} {url}".strip()


def allocations(profile: dict[str, Any]) -> tuple[int, list[tuple[str, int]]]:
    """Bytes allocated in a sampling heap profile (CDP `SamplingHeapProfile`), and
    the bytes each function allocated itself, largest first. Walks the call tree
    with a stack of its own: the tree is as deep as the page's JS stacks."""
    by_function: collections.Counter[str] = collections.Counter()
    stack = [profile["head"]]
    while stack:
        node = stack.pop()
        if node.get("selfSize"):
            by_function[_frame_name(node)] += int(node["selfSize"])
        stack.extend(node.get("children", ()))
    return sum(by_function.values()), by_function.most_common()


@contextlib.contextmanager
def _counted(driver: Any) -> Iterator[None]:
    """The checks counted while the trace plays (the embed's runtime)."""
    ok = driver.execute_async_script(_INSTALL_JS, COUNT_PY)
    if ok is not True:
        raise RuntimeError(f"counting the FFI's checks: {ok}")
    driver.execute_script(_START_JS)
    yield


@contextlib.contextmanager
def sampled_allocations(driver: Any, out: dict[str, Any]) -> Iterator[None]:
    """The JS heap's allocations sampled while the trace plays."""
    driver.execute_cdp_cmd("HeapProfiler.enable", {})
    driver.execute_cdp_cmd("HeapProfiler.startSampling", {
        "samplingInterval": SAMPLING_BYTES,
        "includeObjectsCollectedByMajorGC": True,
        "includeObjectsCollectedByMinorGC": True})
    try:
        yield
    finally:
        out["profile"] = driver.execute_cdp_cmd("HeapProfiler.stopSampling", {})["profile"]


def play(page: str, trace_name: str, seed: int = 1) -> dict[str, Any]:
    """{"profile": the heap profile of one play, "counts": the checks of another
    (embed) or None}."""
    trace = build_trace(trace_name, seed=seed)
    out: dict[str, Any] = {"counts": None}
    with _server(trace) as server, browser("chromium", prefix="streampace-ffi-") as driver:
        install_probe(driver)
        play_page(driver, server.base, server.player, page, trace, 1,
                  around=sampled_allocations(driver, out))
        if page == "embed":
            play_page(driver, server.base, server.player, page, trace, 1,
                      around=_counted(driver))
            out["counts"] = json.loads(driver.execute_async_script(_READ_JS))
    return out


def report(page: str, trace_name: str, result: dict[str, Any], top: int) -> str:
    total, by_function = allocations(result["profile"])
    lines = [f"### {page}, {trace_name}: JS allocated while the answer played "
             f"{total / 1e6:.1f} MB (sampled every {SAMPLING_BYTES} bytes)", ""]
    lines.append(md_table(["function (self)", "MB", "share"],
                          [[name, f"{size / 1e6:.2f}", f"{size / total:.0%}"]
                           for name, size in by_function[:top]]))
    counts = result["counts"]
    if counts is not None:
        lines += ["", f"`API.isPyProxy` checks: {counts['total']} in all", ""]
        lines.append(md_table(["part", "calls", "checks", "checks a call"],
                              [[part, str(calls), str(checks), f"{checks / calls:.1f}"]
                               for part, (calls, checks) in sorted(counts["parts"].items())
                               if calls]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ffi_glue", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="embed", choices=("demo", "embed"))
    ap.add_argument("--trace", default="md_32k")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--top", type=int, default=12, help="functions listed by allocation")
    args = ap.parse_args(argv)
    print(report(args.page, args.trace, play(args.page, args.trace, args.seed), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
