"""The page's MutationObserver callbacks while an answer streams: who made them, what they cost.

    python -m bench.observers --page demo --trace md_32k [--cpu 4] [--plays 2]

A MutationObserver's callback runs after the frame callback that changed the
DOM (a microtask), inside the frame but outside the Python per frame that the
page's stats() time. A view's DOM work wakes every observer of an ancestor of
the view; PyScript's core has one on the whole document (js_shim/pyscript.js
says what it does and how a view is kept from it). Plays the trace into the
page as `python -m bench --browser` does (bench/whole_frame.py `play_page`),
with a script put into the page before its own (CDP
`Page.addScriptToEvaluateOnNewDocument`) that wraps the MutationObserver
constructor: each observer made is named by where its maker's code is (the
script URLs on its stack, innermost first), and its callbacks
are timed while the probe is on, with the records they were handed. Prints,
per play, each observer's calls, records and callback time next to the frame
callbacks' own Python (count × mean) and the followers' (stats()).
The figures are wall-clock time (the timer's own cost included), for finding
what a frame pays; the bench's tables are the measure of the page.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bench.engines import browser
from bench.frame_trace import _server
from bench.report import md_table
from bench.traces import build_trace
from bench.whole_frame import install_probe, play_page

# The wrapper: the page's own observers are made through it (it runs before
# any script of the page), so it sees every observer; what the page later puts
# on `window.MutationObserver` (js_shim/pyscript.js does while PyScript's core
# loads) extends it.
WRAP_JS = r"""
(() => {
  const Native = window.MutationObserver;
  const made = (window.__observers = []);
  // The scripts on the stack, innermost first (a subclass's module, then its maker's).
  const maker = () => {
    const urls = [];
    for (const line of String(new Error().stack).split("\n")) {
      const m = line.match(/https?:\/\/[^\s)]+?(?=:\d+:\d+)/);
      const path = m ? m[0].replace(/^https?:\/\/[^/]+/, "") : null;
      if (path && urls[urls.length - 1] !== path) urls.push(path);
    }
    return urls.length ? urls.join(" < ") : "(no script on the stack)";
  };
  window.MutationObserver = class extends Native {
    constructor(callback) {
      const slot = { maker: maker(), calls: 0, records: 0, ms: 0 };
      made.push(slot);
      super(function (records, observer) {
        const t = performance.now();
        try { return callback.call(this, records, observer); }
        finally {
          if (window.__probe && window.__probe.on) {
            slot.calls++; slot.records += records.length; slot.ms += performance.now() - t;
          }
        }
      });
    }
  };
})();
//# sourceURL=/__observers__
"""
_READ_JS = "return JSON.stringify(window.__observers)"


def play(page: str, trace_name: str, cpu: float, plays: int,
         seed: int = 1) -> list[dict[str, Any]]:
    """Per play: {"observers": [...], "py": the page's stats()}."""
    trace = build_trace(trace_name, seed=seed)
    out = []
    with _server(trace) as server, browser("chromium", prefix="streampace-obs-") as driver:
        install_probe(driver)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WRAP_JS})
        for _ in range(plays):
            probe = play_page(driver, server.base, server.player, page, trace, cpu)
            out.append({"observers": json.loads(driver.execute_script(_READ_JS)),
                        "py": probe["py"]})
    return out


def report(page: str, trace_name: str, cpu: float, plays: list[dict[str, Any]]) -> str:
    lines = [f"### {page}, {trace_name}, {cpu:g}× CPU: MutationObserver callbacks while "
             "the answer played", ""]
    rows = []
    for i, result in enumerate(plays, 1):
        py = result["py"]
        frames_ms = py.get("n", 0) * py.get("mean", 0.0)
        rows.append([str(i), "frame callbacks (Python)", str(py.get("n", 0)), "—",
                     f"{frames_ms:.0f}"])
        rows.append([str(i), "followers (Python)", "—", "—",
                     f"{py.get('followerMs', 0.0):.0f}"])
        for slot in result["observers"]:
            if slot["calls"]:
                rows.append([str(i), f"observer made by `{slot['maker']}`", str(slot["calls"]),
                             str(slot["records"]), f"{slot['ms']:.1f}"])
    lines.append(md_table(["play", "what", "calls", "records", "ms over the answer"], rows))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.observers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", default="demo", choices=("demo", "embed"))
    ap.add_argument("--trace", default="md_32k")
    ap.add_argument("--cpu", type=float, default=1.0)
    ap.add_argument("--plays", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    result = play(args.page, args.trace, args.cpu, args.plays, args.seed)
    print(report(args.page, args.trace, args.cpu, result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
