"""What the page's long animation frames do: each one's scripts and its CPU profile.

    python -m bench.long_frames --page embed --trace bursty --cpu 4

Plays the trace into the demo or the embed exactly as `python -m bench --browser`
does (bench/whole_frame.py `play_page`) while Chromium records a trace with V8's
sampling profiler on (`disabled-by-default-v8.cpu_profiler`), then prints, for
every long animation frame (> 50 ms) while the answer streams: when it came
(ms since the first message was due), its scripts (the probe's LoAF script
attribution) and the functions the profiler saw in it, by inclusive and by self
time. Python runs inside the wasm interpreter, so its frames show as CPython's
C functions (`gc_collect_main`, `_PyEval_EvalFrameDefault`, ...) and as the JS
of Pyodide's FFI; a script's invoker tells which of our callbacks ran.
Figures are for finding causes; the bench's tables are the measure.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

from bench.engines import browser
from bench.frame_trace import CATEGORIES, MARK, DevToolsTracer, _server
from bench.traces import Trace, build_trace
from bench.whole_frame import (
    TAIL_MS,
    install_probe,
    long_frame_lines,
    long_frames,
    play_page,
    set_phone,
    trace_duration_ms,
)

PROFILER = "disabled-by-default-v8.cpu_profiler"
# Python's own profile of each slow callback (cProfile inside the page; it slows
# the Python it measures, so only the split between functions is worth reading).
PY_PROFILE = r"""
import cProfile, gc, io, pstats, time
import js
from streampace.browser.host import BrowserHost
from streampace.client.connection import SessionConnection

_slow = []
_gc = []
def _gc_cb(phase, info):
    if phase == "start":
        _gc.append([js.performance.now(), None, info.get("generation")])
    elif _gc and _gc[-1][1] is None:
        _gc[-1][1] = js.performance.now() - _gc[-1][0]
gc.callbacks.append(_gc_cb)

# One profiler at a time: a callback run inside another (the page's warm-up
# steps a throwaway view's host from the page host's timer) is profiled as part
# of the outer one; enabling a second profiler raises, which stopped the warm-up.
_active = [False]

def _profiled(name, fn):
    def wrapped(*args, **kwargs):
        if _active[0]:
            return fn(*args, **kwargs)
        _active[0] = True
        prof = cProfile.Profile()
        t0 = js.performance.now()
        prof.enable()
        try:
            return fn(*args, **kwargs)
        finally:
            prof.disable()
            _active[0] = False
            ms = js.performance.now() - t0
            if ms > THRESHOLD:
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(22)
                gcs = [g for g in _gc if g[0] >= t0 and g[0] <= t0 + ms]
                _slow.append({"what": name, "at": t0, "ms": ms, "gc": gcs,
                              "profile": out.getvalue()})
    return wrapped

BrowserHost._run_all = _profiled("frame/timer callbacks", BrowserHost._run_all)
SessionConnection._dispatch = _profiled("socket report", SessionConnection._dispatch)

def __slow_json():
    import json
    return json.dumps({"slow": _slow, "gc": _gc})
"""
TOP = 14


def samples(events: list[dict[str, Any]]) -> list[tuple[float, list[str]]]:
    """(ts µs, stack leaf first) of every sample of the profile with the most
    samples (the page's main thread), on the trace's clock."""
    nodes: dict[str, dict[int, tuple[int | None, str]]] = collections.defaultdict(dict)
    starts: dict[str, float] = {}
    raw: dict[str, list[tuple[float, int]]] = collections.defaultdict(list)
    now: dict[str, float] = {}
    for e in events:
        name = e.get("name")
        if name == "Profile":
            pid = str(e.get("id"))
            starts[pid] = float((e.get("args") or {}).get("data", {}).get("startTime", 0))
            now[pid] = starts[pid]
        elif name == "ProfileChunk":
            pid = str(e.get("id"))
            data = (e.get("args") or {}).get("data", {})
            profile = data.get("cpuProfile") or {}
            for n in profile.get("nodes") or []:
                frame = n.get("callFrame") or {}
                label = frame.get("functionName") or "(anonymous)"
                url = (frame.get("url") or "").rsplit("/", 1)[-1]
                if url:
                    label += f" {url}"
                nodes[pid][int(n["id"])] = (n.get("parent"), label)
            t = now.get(pid, 0.0)
            for node, delta in zip(profile.get("samples") or [], data.get("timeDeltas") or [],
                                   strict=False):
                t += float(delta)
                raw[pid].append((t, int(node)))
            now[pid] = t
    if not raw:
        return []
    pid = max(raw, key=lambda k: len(raw[k]))
    table = nodes[pid]
    out = []
    for t, node in raw[pid]:
        stack = []
        at: int | None = node
        while at is not None and at in table:
            parent, label = table[at]
            stack.append(label)
            at = parent
        out.append((t, stack))
    return out


def mark_ts(events: list[dict[str, Any]]) -> float:
    return next(float(e["ts"]) for e in events
                if e.get("name") == MARK and e.get("ph") in ("R", "I", "b", "n"))


def frame_profile(stacks: list[list[str]]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(inclusive, self) sample counts by function over `stacks`."""
    incl: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for stack in stacks:
        if not stack:
            continue
        own[stack[0]] += 1
        for label in set(stack):
            incl[label] += 1
    return incl.most_common(TOP * 3), own.most_common(TOP)


_BORING = ("(root)", "(program)", "(anonymous)")


def report(events: list[dict[str, Any]], probe: dict[str, Any], trace: Trace,
           lead_ms: float) -> list[str]:
    frames = long_frames(probe, trace, lead_ms)
    prof = samples(events)
    # The probe's start: performance.now() `startedAt` and the mark's trace ts.
    offset_us = mark_ts(events) - float(probe["startedAt"]) * 1000.0
    step_us = (prof[-1][0] - prof[0][0]) / max(1, len(prof) - 1) if len(prof) > 1 else 0.0
    lines = [f"{len(frames)} long animation frames; profile: {len(prof)} samples, "
             f"{step_us:.0f} µs apart"]
    for f in frames:
        lines += long_frame_lines([f])
        start = (float(probe["startedAt"]) + lead_ms + f["at_ms"]) * 1000.0 + offset_us
        end = start + f["ms"] * 1000.0
        inside = [s for t, s in prof if start <= t <= end]
        if not inside:
            lines.append("      (no samples)")
            continue
        incl, own = frame_profile(inside)
        n = len(inside)
        lines.append(f"      samples {n}; inclusive: " + ", ".join(
            f"{label} {100 * c / n:.0f}%" for label, c in incl
            if label not in _BORING)[:900])
        lines.append("      self: " + ", ".join(
            f"{label} {100 * c / n:.0f}%" for label, c in own)[:600])
    return lines


_RUN_PY_JS = ("const done = arguments[arguments.length - 1];"
              " window.streampace.runtime().then((py) => {"
              " py.runPython(arguments[0]); done(true); },"
              " (err) => done(String(err)));")
_SLOW_JS = ("const done = arguments[arguments.length - 1];"
            " window.streampace.runtime().then((py) => done(py.globals.get('__slow_json')()));")


@contextlib.contextmanager
def _python_profiled(driver: Any, threshold_ms: float) -> Iterator[None]:
    """cProfile around our Python's callbacks in the booted embed, then the trace."""
    ok = driver.execute_async_script(_RUN_PY_JS, f"THRESHOLD = {threshold_ms}\n" + PY_PROFILE)
    if ok is not True:
        raise RuntimeError(f"could not profile the page's Python: {ok}")
    yield


def python_report(slow: dict[str, Any], probe: dict[str, Any], lead_ms: float) -> list[str]:
    origin = float(probe["startedAt"]) + lead_ms
    run_gc = [g for g in slow["gc"] if g[0] >= origin and g[1] is not None]
    lines = [f"{len(slow['slow'])} slow Python callbacks; gc collections during the run: "
             f"{len(run_gc)}, " + ", ".join(
                 f"gen{gen} {len(ms)} (max {max(ms):.1f} ms, total {sum(ms):.0f})"
                 for gen in sorted({g[2] for g in run_gc})
                 for ms in [[g[1] for g in run_gc if g[2] == gen]])]
    lines += [f"  gc at {g[0] - origin:7.0f} ms: gen{g[2]} {g[1]:.1f} ms"
              for g in run_gc if g[1] > 5.0]
    for s in slow["slow"]:
        gcs = ", ".join(f"gen{g[2]} {g[1] or 0:.1f} ms" for g in s["gc"])
        lines.append(f"  {s['what']} at {s['at'] - origin:7.0f} ms: {s['ms']:.0f} ms"
                     + (f" (gc: {gcs})" if gcs else ""))
        body = s["profile"].split("ncalls", 1)[-1]
        lines += ["    ncalls" + line if i == 0 else "    " + line
                  for i, line in enumerate(body.strip("\n").splitlines()[:26])]
    return lines


_TOP_EVENTS = ("FunctionCall", "EventDispatch", "TimerFire", "FireAnimationFrame")
_PARTS = ("FunctionCall", "MajorGC", "MinorGC", "UpdateLayoutTree", "Layout", "PrePaint",
          "Paint", "Commit")


def _describe(e: dict[str, Any]) -> str:
    data = (e.get("args") or {}).get("data") or {}
    what = data.get("type") or data.get("functionName") or (data.get("url") or "").rsplit(
        "/", 1)[-1]
    return f"{e['name']}:{what}" if what else str(e["name"])


def cpu_frames(events: list[dict[str, Any]], trace: Trace, lead_ms: float,
               over_ms: float) -> list[str]:
    """The main thread's CPU time (trace `tdur`: without the time it waited for a
    CPU on a loaded machine) per animation frame, from the first task after one
    frame's rendering to the next rendering; the frames over `over_ms` with
    their tasks. At `--cpu 1` a frame over 12.5 ms CPU would be over 50 ms at 4x."""
    import bisect

    start = mark_ts(events)
    pid, tid = next((e["pid"], e["tid"]) for e in events if e.get("name") == MARK)
    origin = start + lead_ms * 1000.0
    main = sorted((e for e in events if e.get("pid") == pid and e.get("tid") == tid
                   and e.get("ph") == "X" and float(e["ts"]) >= start),
                  key=lambda e: (float(e["ts"]), -float(e.get("dur", 0))))
    starts = [float(e["ts"]) for e in main]
    groups: list[list[tuple[dict[str, Any], list[dict[str, Any]]]]] = []
    current: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for i, task in enumerate(main):
        if task["name"] != "RunTask":
            continue
        end = float(task["ts"]) + float(task.get("dur", 0))
        j = bisect.bisect_right(starts, end, lo=i + 1)
        inner = main[i + 1:j]
        current.append((task, inner))
        if any(e["name"] == "WebFrameWidgetImpl::BeginMainFrame" for e in inner):
            groups.append(current)
            current = []
    end_us = origin + (trace_duration_ms(trace) + TAIL_MS) * 1000.0
    rows = [(sum(float(t.get("tdur", 0)) for t, _ in g) / 1000.0, g) for g in groups
            if origin <= float(g[-1][0]["ts"]) <= end_us]
    if not rows:
        return ["no frames"]
    cpu = sorted(r[0] for r in rows)
    lines = [f"{len(rows)} frames while streaming: CPU ms p50 {cpu[len(cpu) // 2]:.1f}, "
             f"p99 {cpu[min(len(cpu) - 1, round(0.99 * (len(cpu) - 1)))]:.1f}, max "
             f"{cpu[-1]:.1f}; {sum(c > over_ms for c in cpu)} over {over_ms:g} ms"]
    for total, g in rows:
        if total <= over_ms:
            continue
        wall = (float(g[-1][0]["ts"]) + float(g[-1][0].get("dur", 0)) - float(g[0][0]["ts"]))
        lines.append(f"  frame at {(float(g[0][0]['ts']) - origin) / 1000:7.0f} ms: CPU "
                     f"{total:5.1f} ms (wall {wall / 1000:.0f})")
        for task, inner in g:
            if float(task.get("tdur", 0)) < 300:
                continue
            parts: dict[str, float] = collections.defaultdict(float)
            for e in inner:
                if e["name"] in _PARTS:
                    parts[e["name"]] += float(e.get("tdur", 0)) / 1000.0
            top = next((e for e in inner if e["name"] in _TOP_EVENTS), None)
            biggest = sorted(parts.items(), key=lambda kv: -kv[1])[:6]
            lines.append(f"    task {float(task.get('tdur', 0)) / 1000:5.1f} "
                         f"{_describe(top) if top else '?'}: "
                         + ", ".join(f"{k} {v:.1f}" for k, v in biggest))
    return lines


@contextlib.contextmanager
def _injected(driver: Any, path: str | None, inner: Any) -> Iterator[None]:
    if path:
        with open(path, encoding="utf-8") as f:
            ok = driver.execute_async_script(_RUN_PY_JS, f.read())
        if ok is not True:
            raise RuntimeError(f"{path}: {ok}")
    with inner if inner is not None else contextlib.nullcontext():
        yield


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.long_frames", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="embed", choices=("demo", "embed"))
    ap.add_argument("--trace", default="bursty")
    ap.add_argument("--cpu", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phone", action="store_true",
                    help="on a phone's screen (bench/whole_frame.py PHONE)")
    ap.add_argument("--python", type=float, default=None, metavar="MS",
                    help="instead of V8's profiler: cProfile our Python's callbacks in the "
                         "page (embed only) and print those slower than MS")
    ap.add_argument("--cpu-frames", type=float, default=None, metavar="MS",
                    help="instead of V8's profiler: each frame's CPU time from the trace, "
                         "listing frames over MS")
    ap.add_argument("--inject", default=None, help="a Python file run in the booted embed "
                    "before the trace (to try a cause)")
    args = ap.parse_args(argv)
    from bench.browser_bench import LEAD_MS

    trace = build_trace(args.trace, seed=args.seed)
    with _server(trace) as server, browser("chromium", prefix="streampace-loaf-") as driver:
        install_probe(driver)
        if args.phone:
            set_phone(driver)
        if args.python is not None:
            probe = play_page(driver, server.base, server.player, args.page, trace, args.cpu,
                              around=_injected(driver, args.inject,
                                               _python_profiled(driver, args.python)))
            slow = json.loads(driver.execute_async_script(_SLOW_JS))
            print("\n".join(long_frame_lines(long_frames(probe, trace, LEAD_MS))))
            print("\n".join(python_report(slow, probe, LEAD_MS)))
        else:
            tracer = DevToolsTracer(driver, CATEGORIES if args.cpu_frames else (
                *CATEGORIES, PROFILER))
            probe = play_page(driver, server.base, server.player, args.page, trace, args.cpu,
                              around=_injected(driver, args.inject, tracer))
            if args.cpu_frames:
                print("\n".join(long_frame_lines(long_frames(probe, trace, LEAD_MS))))
                print("\n".join(cpu_frames(tracer.events, trace, LEAD_MS, args.cpu_frames)))
            else:
                print("\n".join(report(tracer.events, probe, trace, LEAD_MS)))
    print(f"Python ms/frame: {probe.get('py')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
