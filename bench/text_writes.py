"""What one streamed text write costs Blink: the ways to grow a laid-out paragraph.

    python -m bench.text_writes --rounds 3

A page's Python per frame counts the DOM calls it makes, and a text write on a
laid-out node does Blink's work inside the call (`python -m bench.page_frames
--spacing frame --attached --parts`: "text writes"). This measures that work
without Python: plain JS in headless Chromium, one write per animation frame
into a `<p dir="auto">` in the document (as the view's Markdown paragraphs), a
few characters each, then a forced layout (`offsetHeight`), timing both:

* `append`: `text.appendData(piece)`, what the view does (browser/markdown_dom.py);
* `new node`: a new Text node after the last one per write;
* `set data`: `text.data = text.data + piece`;
* `append, nodes of N`: appendData, but a new Text node once the last holds N
  characters (`--caps`, default 64, 256 and 4096: the view's cap is
  `_TEXT_NODE_LIMIT` in browser/markdown_dom.py);
* `detached`: `appendData` on a paragraph outside the document (no layout).

Modes alternate within a round, so the machine's load falls on each alike; each
figure is the median over the rounds of a round's mean µs per write. Figures
are for choosing how to write text; the bench's tables are the measure of the page.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from bench.engines import browser

BASE_MODES = ("append", "new node", "set data", "detached")

# arguments: mode, writes, cap (for the capped mode). Resolves [µs in the writes,
# µs in the layouts after them].
_WRITE_JS = r"""
const done = arguments[arguments.length - 1];
const mode = arguments[0], writes = arguments[1], cap = arguments[2];
const box = document.createElement('div');
box.style.cssText = 'width: 600px; font: 16px sans-serif';
const p = document.createElement('p');
p.setAttribute('dir', 'auto');
box.append(p);
if (mode !== 'detached') document.body.append(box);
let text = document.createTextNode('Streamed text arrives');
p.append(text);
const words = ' in bursts, and the reader sees it grow a few letters per frame';
let n = 0, inWrite = 0, inLayout = 0;
const step = () => {
  const piece = words.slice(n % 60, n % 60 + 3);
  const a = performance.now();
  if (mode === 'new node' || (mode === 'capped' && text.length >= cap)) {
    const next = document.createTextNode(piece);
    text.after(next);
    text = next;
  } else if (mode === 'set data') {
    text.data = text.data + piece;
  } else {
    text.appendData(piece);
  }
  const b = performance.now();
  p.offsetHeight;
  inLayout += performance.now() - b;
  inWrite += b - a;
  if (++n < writes) { requestAnimationFrame(step); return; }
  box.remove();
  done([inWrite / n * 1000, inLayout / n * 1000]);
};
requestAnimationFrame(step);
"""


def medians(rounds: list[dict[str, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """Per mode, the median over the rounds of (µs in the write, µs in the layout)."""
    return {mode: (statistics.median(r[mode][0] for r in rounds),
                   statistics.median(r[mode][1] for r in rounds))
            for mode in rounds[0]} if rounds else {}


def table(figures: dict[str, tuple[float, float]], rounds: int, writes: int) -> list[str]:
    lines = [f"One text write per animation frame, {writes} writes, median of {rounds} rounds:",
             "", "| mode | µs in the write | µs in the layout after it | total µs |",
             "|---|---|---|---|"]
    for mode, (write, layout) in figures.items():
        lines.append(f"| {mode} | {write:.0f} | {layout:.0f} | {write + layout:.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.text_writes", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writes", type=int, default=400)
    ap.add_argument("--caps", default="64,256,4096",
                    help="node sizes for the capped appends, comma-separated")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.writes < 1:
        ap.error("--rounds and --writes must be at least 1")
    try:
        caps = [int(c) for c in args.caps.split(",") if c.strip()]
    except ValueError:
        ap.error(f"--caps: whole numbers, comma-separated, not {args.caps!r}")
    if any(c < 1 for c in caps):
        ap.error("--caps: each at least 1")
    modes = [(m, m, 0) for m in BASE_MODES] + [(f"append, nodes of {c}", "capped", c)
                                                for c in caps]
    rounds: list[dict[str, tuple[float, float]]] = []
    with browser("chromium", prefix="streampace-text-writes-") as driver:
        driver.set_script_timeout(max(60, args.writes // 10))
        driver.get("data:text/html,<!doctype html><html lang=en><body><p>page</p></body></html>")
        for _ in range(args.rounds):
            found: dict[str, tuple[float, float]] = {}
            for label, kind, cap in modes:
                write, layout = driver.execute_async_script(_WRITE_JS, kind, args.writes, cap)
                found[label] = (float(write), float(layout))
            rounds.append(found)
    print("\n".join(table(medians(rounds), args.rounds, args.writes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
