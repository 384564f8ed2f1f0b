"""Streamed Markdown figures: per-frame cost, flatness, DOM nodes built, freezes, boot.

    .venv/bin/python bench/markdown_bench.py            # CPython: core cost per frame slice
    .venv/bin/python bench/markdown_bench.py --browser  # headless Chromium (Pyodide)

Frame slices: a 100 000-character Markdown answer (bench/traces_markdown.py) is
fed in slices of 13 characters — 800 graphemes/s at 60 Hz, the pacer's top
rate — and each slice is timed: in CPython through `MarkdownStream`; in the
browser through the real `DomRenderer` (Markdown -> DOM). Flatness compares
slices at 0–5 000 characters with slices at 95 000–100 000.

Browser only:
- boot: milliseconds to import the Markdown parser and build it, on a cold
  (fresh profile) and a warm (reloaded) page — what it adds to boot;
- paced: `md_heavy` and `md_plain` (its visible text without markup) played in
  real time through the page stack (socket -> StreamView -> DomRenderer); per
  animation frame the visible text length is recorded; the longest freeze is the
  longest time the visible text did not change between its first and last change;
  plus Python ms per frame (BrowserHost.frame_work_ms).
By open block size (CPython): each kind of growing block (lists tight, loose,
nested, with paragraphs, one long item, code in an item, indented; tables, quotes,
paragraphs, indented code, display math) streamed to 6 KB, per delta the least
CPU time over 3 plays, max / p90 per size bucket of the open block.
Figures are measured, never asserted; they go to docs/markdown.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from bench.traces_markdown import markdown_document  # noqa: E402

SLICE = 13
DOC_CHARS = 100_000
WINDOW = 5_000


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def summarise(rows: list[tuple[int, float, int]]) -> dict[str, Any]:
    """rows: (document position, ms, DOM nodes created) per slice."""
    early = [ms for pos, ms, _ in rows if pos <= WINDOW]
    late = [ms for pos, ms, _ in rows if pos > DOC_CHARS - WINDOW]
    created = [n for _, _, n in rows]
    allms = [ms for _, ms, _ in rows]
    return {
        "slices": len(rows),
        "ms_p50": round(pct(allms, 50), 4), "ms_p99": round(pct(allms, 99), 4),
        "ms_max": round(max(allms), 3),
        "early_p50": round(pct(early, 50), 4), "early_p99": round(pct(early, 99), 4),
        "late_p50": round(pct(late, 50), 4), "late_p99": round(pct(late, 99), 4),
        "late_over_early_p50": (round(pct(late, 50) / pct(early, 50), 3)
                                if pct(early, 50) else None),
        "late_over_early_mean": (round(statistics.fmean(late) / statistics.fmean(early), 3)
                                 if statistics.fmean(early) else None),
        "mean_ms": round(statistics.fmean(allms), 4),
        "created_p50": pct(created, 50), "created_p99": pct(created, 99),
        "created_max": max(created), "created_mean": round(statistics.fmean(created), 2),
    }


def cpython_slices() -> dict[str, Any]:
    from streampace.markdown import MarkdownStream

    doc = markdown_document(DOC_CHARS, math=True)[:DOC_CHARS]
    stream = MarkdownStream()
    rows = []
    # CPU time of this process: other jobs on the shared machine count less.
    for pos in range(0, len(doc), SLICE):
        t0 = time.process_time()
        stream.feed(doc[pos:pos + SLICE])
        rows.append((pos + SLICE, (time.process_time() - t0) * 1000, 0))
    t0 = time.process_time()
    stream.close()
    out = summarise(rows)
    out.pop("created_p50"), out.pop("created_p99"), out.pop("created_max"), out.pop("created_mean")
    out.update(chars=len(doc), final_blocks=len(stream.blocks), tail_renders=stream.renders,
               plain_appends=stream.plain_appends,
               close_ms=round((time.process_time() - t0) * 1000, 3))
    return out


def _doc_of(kind: str, n: int) -> tuple[str, str]:
    """(open block of about n characters, what keeps streaming into it)."""
    words = ["plain", "words", "**bold**", "*em*", "`code`", "[link](https://e.com/x)", "and"]
    if kind in ("paragraph", "one_line"):
        sep = " " if kind == "one_line" else None
        out, size, i = [], 0, 0
        while size < n:
            w = words[i % len(words)] + (sep or (" " if i % 11 else "\n"))
            out.append(w)
            size += len(w)
            i += 1
        return "".join(out), "more words and **bold** text " * 40
    if kind in ("list", "quote"):
        unit = "- item with **bold** and `code`\n" if kind == "list" else "> quoted *line*\n"
        more = ("- more **items** here\n" if kind == "list" else "> more quoted text\n") * 40
        return unit * (n // len(unit) + 1), more
    if kind == "table":
        rows = [f"| {words[i % 7]} | {words[(i + 3) % 7]} | {i} |\n" for i in range(n // 20)]
        more = "".join(f"| x{i} | **y** | {i} |\n" for i in range(60))
        return "| a | b | c |\n|---|:-:|--:|\n" + "".join(rows), more
    unit = {"hostile_links": "[a](", "hostile_backticks": "`a ", "hostile_emphasis": "_a ",
            "hostile_brackets": "["}[kind]
    return (unit * (n // len(unit) + 1))[:n], unit * 200


def long_and_hostile() -> list[dict[str, Any]]:
    """A 13-character delta into an open block of 2 KB and 32 KB (CPU ms per
    delta), side by side with a one-shot render of the whole block."""
    from streampace.markdown import MarkdownStream, render_html

    rows = []
    for kind in ("paragraph", "one_line", "table", "list", "quote", "hostile_links",
                 "hostile_backticks",
                 "hostile_emphasis", "hostile_brackets"):
        row: dict[str, Any] = {"input": kind}
        for n in (2_000, 32_000):
            doc, more = _doc_of(kind, n)
            stream = MarkdownStream()
            stream.feed(doc)
            ms = []
            for i in range(0, 13 * 40, 13):
                t0 = time.process_time()
                stream.feed(more[i:i + 13])
                ms.append((time.process_time() - t0) * 1000)
            t0 = time.process_time()
            render_html(doc)
            one_shot = (time.process_time() - t0) * 1000
            label = f"{n // 1000}k"
            row[f"delta_p50_{label}"] = round(pct(ms, 50), 3)
            row[f"delta_max_{label}"] = round(max(ms), 3)
            row[f"one_shot_ms_{label}"] = round(one_shot, 1)
        row["max_ratio_32k_2k"] = round(row["delta_max_32k"] / max(row["delta_max_2k"], 1e-3), 2)
        rows.append(row)
    return rows


_W = "plain words and **bold** with `code` and [a link](https://e.com/x) here. "


def _grown(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


# Open blocks that grow, by how their per-delta cost could grow with them.
GROWING: dict[str, Any] = {
    "list_tight": lambda n: _grown("- item with **bold** and `code` and more words\n", n),
    "list_loose": lambda n: _grown("- item with **bold** and `code` and more words\n\n", n),
    "list_nested": lambda n: _grown("- **Topic**: keep the *visible* rate; see "
                                    "[n](https://e.com/x) for `c`.\n  1. a nested step with "
                                    "`inline code`\n  2. and *another* one\n", n),
    "list_nested_long": lambda n: ("- **Topic**: keep the *visible* rate; see "
                                   "[n](https://e.com/x) for `c`.\n")
    + _grown("  - a nested point with *em* and `code`\n", n),
    "list_item_paragraphs": lambda n: _grown("- item head\n\n  " + _W + "\n", n),
    "list_one_long_item": lambda n: "- " + _grown(_W + "\n  ", n),
    "list_item_paragraphs_many": lambda n: "1. **Step**: intro\n\n" + _grown(
        "   " + _W * 3 + "\n\n", n),
    "list_item_mixed": lambda n: "- head\n\n" + _grown(
        "  " + _W + "\n\n  ```py\n  x = 1\n  ```\n\n  ### Sub\n\n  > q\n\n", n),
    "list_item_code": lambda n: "- item\n\n  ```py\n" + _grown(
        "  x = clamp(pending / 250, 20, 800)\n", n),
    # An item ending in a display formula or an indented code block: each line
    # read once by the item's leaf state (item_leaf.py; a parse of the item per
    # delta before it, growing with the item: docs/markdown.md).
    "list_item_math": lambda n: "1. Compute:\n\n   $$\n" + _grown(
        "   r = \\sum_{k=0}^{n} \\frac{p_k}{\\tau} + x\n", n),
    "list_item_indented": lambda n: "- Run:\n\n      " + _grown(
        "rate = clamp(pending / 250, 20, 800)\n      ", n),
    "list_indented": lambda n: _grown(" - indented item with **bold** text\n", n),
    "table": lambda n: "| a | b | c |\n|---|:-:|--:|\n" + _grown("| x **y** | `z` | 12 |\n", n),
    "quote": lambda n: _grown("> quoted *line* with **bold** words and more\n", n),
    "quote_lazy": lambda n: "> " + _grown("lazy line of a quote with *em* text\n", n),
    "paragraph": lambda n: _grown(_W + "\n", n),
    "code_indented": lambda n: _grown("    rate = clamp(pending / 250, 20, 800)  # step\n", n),
    "math_block": lambda n: "$$\n" + _grown("r = \\sum_{k=0}^{n} \\frac{p_k}{\\tau} + x\n", n),
}
SIZE_BUCKETS = (0, 512, 1024, 2048, 4096, 6144)


def by_open_block_size(plays: int = 3) -> list[dict[str, Any]]:
    """Each kind of block streamed in 13-character deltas from its first
    character to 6 KB: per delta the least CPU ms over `plays` plays, then the
    max and p90 over the deltas whose open block was within each size bucket
    (0-512, 512-1K, ...). Flat rows: the cost follows the delta, not the block."""
    from streampace.markdown import MarkdownStream

    rows = []
    for kind, make in GROWING.items():
        head = "# Heading\n\nIntro paragraph.\n\n"
        doc = head + make(SIZE_BUCKETS[-1])
        cuts = range(0, len(doc), SLICE)
        best = [float("inf")] * len(cuts)
        for _ in range(plays):
            stream = MarkdownStream()
            for i, pos in enumerate(cuts):
                t0 = time.thread_time()
                stream.feed(doc[pos:pos + SLICE])
                best[i] = min(best[i], (time.thread_time() - t0) * 1000)
            stream.close()
        row: dict[str, Any] = {"block": kind}
        for lo, hi in zip(SIZE_BUCKETS[:-1], SIZE_BUCKETS[1:], strict=True):
            ms = [best[i] for i, pos in enumerate(cuts) if lo <= pos - len(head) < hi]
            row[f"{lo}-{hi}"] = f"{max(ms):.2f} / {pct(ms, 90):.2f}"
        rows.append(row)
    return rows


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>markdown bench</title></head><body><div id="out"></div>
<script type="module">
import * as bridge from "/js_shim/bridge.js";
const M = (window.mdBench = { phase: "boot", frames: [] });
try {
  const { loadPyodide } = await import("/vendor/pyodide/pyodide.mjs");
  const [py, zip, src] = await Promise.all([
    loadPyodide({ indexURL: "/vendor/pyodide/" }),
    fetch("/bench/streampace.zip").then((r) => r.arrayBuffer()),
    fetch("/bench/markdown_page.py").then((r) => r.text()),
  ]);
  py.registerJsModule("_streampace_bridge", bridge);  // as js_shim/boot.js does
  py.unpackArchive(zip, "zip", { extractDir: "/home/pyodide/md-pkg" });
  py.runPython("import sys; sys.path.insert(0, '/home/pyodide/md-pkg')");
  M.importMs = JSON.parse(py.runPython(src));
  M.py = py;
  M.bridge = bridge;
  M.phase = "ready";
} catch (err) { M.error = String((err && err.stack) || err); M.phase = "error"; }
</script></body></html>
"""

PAGE_PY = r'''
import json, time
_t = time.perf_counter()
import streampace.browser.renderer  # noqa: the view code, without the parser
_t_view = time.perf_counter()
from streampace.markdown.parser import Parser
Parser()
_t_md = time.perf_counter()

import js
from streampace.browser.controller import StreamView
from streampace.browser.renderer import DomRenderer
from streampace.browser.host import BrowserHost

def slices(doc, step):
    # The same slices into a Markdown body and a plain-text body, interleaved,
    # so machine load hits both alike: the ratio is the Markdown overhead.
    boxes, renderers = [], []
    for fmt in ("markdown", "text"):
        box = js.document.createElement("div")
        js.document.getElementById("out").append(box)
        r = DomRenderer(box, js.mdBench.bridge, emit_events=False, text_format=fmt)
        r.apply([{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
        boxes.append(box)
        renderers.append(r)
    node = renderers[0]._nodes[next(iter(renderers[0]._nodes))]
    perf = js.performance
    rows, text_ms, replaced = [], [], []
    for pos in range(0, len(doc), step):
        event = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": doc[pos:pos + step]}]
        before, rebuilt = node.view.created, node.view.replaced
        t0 = perf.now()
        renderers[0].apply(event)
        t1 = perf.now()
        renderers[1].apply(event)
        text_ms.append(perf.now() - t1)
        rows.append((pos + step, t1 - t0, node.view.created - before))
        replaced.append(node.view.replaced - rebuilt)
    for r in renderers:
        r.apply([{"type": "TEXT_MESSAGE_END", "messageId": "m"}])
    out = {"rows": rows, "text_ms": text_ms, "replaced": replaced,
           "blocks": len(node.view.final),
           "dom_elements": boxes[0].getElementsByTagName("*").length,
           "renders": node.view.stream.renders, "plain_appends": node.view.stream.plain_appends}
    for box in boxes:
        box.remove()
    return json.dumps(out)

class Paced:
    def __init__(self, url):
        self.box = js.document.createElement("div")
        js.document.getElementById("out").replaceChildren(self.box)
        self.host = BrowserHost()
        self.view = StreamView(js.mdBench.bridge, self.box, host=self.host)
        self.view.connect(js.mdBench.bridge.openSession(url, autoReconnect=False))

    def result(self):
        return json.dumps({"frame_ms": list(self.host.frame_work_ms),
                           "stats": self.view.stats()})

json.dumps({"view_ms": (_t_view - _t) * 1000, "markdown_ms": (_t_md - _t_view) * 1000})
'''


def browser(out: dict[str, Any]) -> None:
    from bench.browser_bench import BenchServer, chromium
    from bench.traces import build_trace

    traces = {name: build_trace(name) for name in ("md_heavy", "md_plain")}
    server = BenchServer(traces)
    app_routes = server._app

    def app() -> Any:  # the bench server plus this page
        from starlette.responses import HTMLResponse, PlainTextResponse
        from starlette.routing import Route

        base = app_routes()
        base.router.routes.insert(0, Route(
            "/bench/markdown_page", lambda _r: HTMLResponse(PAGE)))
        base.router.routes.insert(0, Route(
            "/bench/markdown_page.py", lambda _r: PlainTextResponse(PAGE_PY)))
        return base

    server._app = app  # type: ignore[method-assign]
    server.start()
    try:
        with chromium() as driver:
            boots = []
            for label in ("cold", "warm", "warm", "warm"):
                driver.get(f"{server.base}/bench/markdown_page")
                _wait(driver, 180)
                boots.append((label, driver.execute_script("return window.mdBench.importMs")))
            out["boot"] = {
                "cold": {k: round(v, 1) for k, v in boots[0][1].items()},
                "warm_runs": [{k: round(v, 1) for k, v in ms.items()} for _, ms in boots[1:]],
                "warm_markdown_ms_median": round(statistics.median(
                    ms["markdown_ms"] for _, ms in boots[1:]), 1),
            }
            doc = markdown_document(DOC_CHARS, math=True)[:DOC_CHARS]
            raw = json.loads(driver.execute_script(
                "const f = window.mdBench.py.globals.get('slices');"
                "const r = f(arguments[0], arguments[1]); f.destroy(); return r;", doc, SLICE))
            rows = [(int(p), float(ms), int(n)) for p, ms, n in raw["rows"]]
            text = [(p, ms, 0) for (p, _m, _n), ms in zip(rows, raw["text_ms"], strict=True)]
            md, plain = summarise(rows), summarise(text)
            out["browser_slices"] = md | {
                "final_blocks": raw["blocks"], "dom_elements": raw["dom_elements"],
                "tail_renders": raw["renders"], "plain_appends": raw["plain_appends"],
                "replaced_p99": pct(raw["replaced"], 99), "replaced_max": max(raw["replaced"]),
                "replaced_mean": round(statistics.fmean(raw["replaced"]), 3),
                "text_format_ms_p50": plain["ms_p50"], "text_format_ms_p99": plain["ms_p99"],
                "text_format_mean_ms": plain["mean_ms"],
                "text_format_late_over_early_mean": plain["late_over_early_mean"]}
            out["paced"] = {}
            for name, trace in traces.items():
                out["paced"][name] = _paced(driver, server, trace)
    finally:
        server.stop()


def _wait(driver: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        phase = driver.execute_script("return window.mdBench && window.mdBench.phase")
        if phase == "ready":
            return
        if phase == "error":
            raise RuntimeError(driver.execute_script("return window.mdBench.error"))
        time.sleep(0.1)
    raise TimeoutError("markdown bench page did not boot")


def _paced(driver: Any, server: Any, trace: Any) -> dict[str, Any]:
    driver.execute_script(
        "const M = window.mdBench; M.frames = [];"
        "const P = M.py.globals.get('Paced'); M.paced = P(arguments[0]); P.destroy();"
        "const tick = () => { const b = document.querySelector('#out .sp-message .sp-text');"
        "  M.frames.push([performance.now(), b ? b.textContent.length : 0]);"
        "  if (!M.stop) requestAnimationFrame(tick); };"
        "M.stop = false; requestAnimationFrame(tick);", server.ws_url(trace.name))
    duration = (trace.arrivals[-1][0] - trace.arrivals[0][0]) / 1000 + 60
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        done = driver.execute_script(
            "const n = document.querySelector('#out .sp-message');"
            "return n && n.getAttribute('data-state') === 'done'")
        if done:
            break
        time.sleep(0.2)
    time.sleep(0.5)
    data = driver.execute_script(
        "const M = window.mdBench; M.stop = true; const r = M.paced.result();"
        "return {frames: M.frames, result: r};")
    result = json.loads(data["result"])
    frames = data["frames"]
    changes = [t for (t, n), (_t0, n0) in zip(frames[1:], frames, strict=False) if n != n0]
    gaps = [b - a for a, b in zip(changes, changes[1:], strict=False)]
    work = result["frame_ms"]
    return {
        "chars": trace.meta["chars"],
        "frames_with_change": len(changes),
        "longest_freeze_ms": round(max(gaps), 1) if gaps else None,
        "freeze_p99_ms": round(pct(gaps, 99), 1) if gaps else None,
        "frame_ms_p50": round(pct(work, 50), 3), "frame_ms_p99": round(pct(work, 99), 3),
        "markdown_dom": result["stats"].get("markdownDom"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--browser", action="store_true", help="also measure in headless Chromium")
    ap.add_argument("-o", "--output", default=str(ROOT / "bench" / "results" / "markdown.json"))
    args = ap.parse_args()
    out: dict[str, Any] = {"slice_chars": SLICE, "doc_chars": DOC_CHARS,
                           "cpython_slices": cpython_slices(),
                           "long_and_hostile": long_and_hostile(),
                           "by_open_block_size": by_open_block_size()}
    if args.browser:
        browser(out)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
