"""Which long frames are V8's garbage collections: its GC log on the page's clock.

    python -m bench.gc_frames --pages embed --trace md_32k --cpu 4 --plays 3
    python -m bench.gc_frames --pages demo,embed --same-tab

Plays the trace into the demo or the embed as `python -m bench --browser` does
(bench/whole_frame.py `play_page`, each page in a fresh tab unless `--same-tab`)
in a Chromium whose V8 logs every collection (`--trace-gc`: kind, heap before
and after, the main thread's pause) with the time since its heap was set up.
Just before the question the page calls `gc()` (`--expose-gc`); that
collection's line ("testing") ties V8's clock to the page's `performance.now()`.
Per play it prints the major collections of the page's process during the
answer with their pauses, and each long animation frame (> 50 ms) with the
collections that ended inside it. A long frame whose wait (bench/whole_frame.py:
the time before its rendering that none of its scripts took) matches a pause
was that collection. The logged collections slow the page a little (one line
each); figures are for finding causes, the bench's tables are the measure.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.engines import browser
from bench.frame_trace import _server
from bench.traces import build_trace
from bench.whole_frame import install_probe, long_frames, play_page, trace_duration_ms

_MARK_JS = "gc(); return performance.now();"
# A collection's line is written when it ends; it ended inside a frame if it is
# within the frame, give or take the log's 1 ms resolution and the frame's own.
_SLACK_MS = 5.0


@dataclass(frozen=True)
class Collection:
    """One line of V8's `--trace-gc` log."""
    pid: str
    isolate: str
    v8_ms: float  # when it ended, ms since the isolate's heap was set up
    kind: str  # "Scavenge", "Mark-Compact", "Incremental Mark-Compact (reduce)", ...
    before_mb: float
    after_mb: float
    pause_ms: float  # the main thread's pause
    reason: str = ""  # what started it, as V8 says ("testing": our gc() marker)

    @property
    def major(self) -> bool:
        return "Mark-Compact" in self.kind

    @property
    def marker(self) -> bool:
        return self.major and self.reason == "testing"


def parse_line(line: str) -> Collection | None:
    """`[pid:0xisolate]   1666 ms: Mark-Compact 10.8 (13.9) -> 8.4 (13.8) MB,
    pooled: 0.0 MB, 58.41 / 0.02 ms (...) testing; GC in old space requested`,
    or None for any other line. Plain splits, no pattern: the format is V8's."""
    text = line.strip()
    if not text.startswith("[") or " ms: " not in text:
        return None
    head, _, rest = text[1:].partition("]")
    pid, _, isolate = head.partition(":")
    when, _, body = rest.strip().partition(" ms: ")
    words = body.split(" ")
    first_size = next((i for i, w in enumerate(words) if w[:1].isdigit()), None)
    if first_size is None or len(words) < first_size + 5 or words[first_size + 2] != "->":
        return None
    parts = body.split("MB, ")
    timing = next((p for p in parts[1:] if " / " in p), None)
    if timing is None:
        return None
    try:
        return Collection(pid=pid, isolate=isolate, v8_ms=float(when),
                          kind=" ".join(words[:first_size]),
                          before_mb=float(words[first_size]),
                          after_mb=float(words[first_size + 3]),
                          pause_ms=float(timing.split(" / ", 1)[0]),
                          reason=_reason(body))
    except ValueError:
        return None


def _reason(body: str) -> str:
    """What V8 says started it: the text after the last ') ', up to ';'."""
    tail = body.rsplit(") ", 1)[-1]
    return tail.split(";", 1)[0].strip()


def parse_log(text: str) -> list[Collection]:
    return [c for c in map(parse_line, text.splitlines()) if c is not None]


# A collection and when it ended on the page's clock: ms since the first message
# was due (the probe's origin, as bench/whole_frame.py counts).
Timed = tuple[float, Collection]


def on_page_clock(log: list[Collection], marker_page_ms: float, origin_ms: float,
                  seen: int) -> list[Timed]:
    """The collections after the `seen` first lines that came from the process and
    isolate of the last marker (`gc()` at `marker_page_ms`), on the page's clock."""
    marks = [c for c in log[:seen] if c.marker]
    if not marks:
        raise RuntimeError("no gc() marker in V8's log: was Chromium started with "
                           "--trace-gc --expose-gc, line-buffered?")
    mark = marks[-1]
    offset = marker_page_ms - mark.v8_ms
    mine = [c for c in log[seen:] if (c.pid, c.isolate) == (mark.pid, mark.isolate)]
    return [(c.v8_ms + offset - origin_ms, c) for c in mine]


def frames_and_collections(frames: list[dict[str, Any]],
                           play: list[Timed]) -> list[tuple[dict[str, Any], list[Timed]]]:
    """Each long frame with the collections that ended inside it."""
    return [(f, [(at, c) for at, c in play
                 if f["at_ms"] - _SLACK_MS <= at <= f["at_ms"] + f["ms"] + _SLACK_MS])
            for f in frames]


def report_lines(tag: str, play: list[Timed], frames: list[dict[str, Any]],
                 answer_ms: float) -> list[str]:
    during = [(at, c) for at, c in play if 0 <= at <= answer_ms]
    scavenges = [c for _at, c in during if not c.major]
    lines = [f"{tag}: {len(during)} collections while the answer streamed — "
             f"{len(scavenges)} scavenges ({sum(c.pause_ms for c in scavenges):.0f} ms), "
             f"{len(during) - len(scavenges)} major:"]
    lines += [f"    {at:8.0f} ms  {c.kind}, {c.before_mb:g} -> {c.after_mb:g} MB, "
              f"pause {c.pause_ms:.1f} ms ({c.reason})" for at, c in during if c.major]
    for f, inside in frames_and_collections(frames, play):
        waited = f.get("waited_ms")
        gcs = "; ".join(f"{c.kind} {c.pause_ms:.1f} ms" for _at, c in inside) or "none"
        lines.append(f"  LoAF at {f['at_ms']:7.0f} ms: {f['ms']:.0f} ms (script "
                     f"{f['script_ms']:.0f}, waited "
                     f"{'?' if waited is None else f'{waited:.0f}'}); collections in it: {gcs}")
    return lines


@contextlib.contextmanager
def _marked(driver: Any, log_path: Path, into: dict[str, Any]) -> Iterator[None]:
    into["marker_ms"] = float(driver.execute_script(_MARK_JS))
    time.sleep(0.3)  # the marker's line reaches the file
    into["seen"] = len(parse_log(log_path.read_text(errors="replace")))
    yield


def run(pages: list[str], trace_name: str, cpu: float, plays: int, same_tab: bool) -> None:
    from bench.browser_bench import LEAD_MS, own_tab

    trace = build_trace(trace_name, seed=1)
    answer_ms = trace_duration_ms(trace)
    with tempfile.TemporaryDirectory(prefix="streampace-gc-") as tmp:
        log_path = Path(tmp) / "v8.log"
        for n in range(plays):
            log_path.write_text("")
            with _server(trace) as server, browser("chromium", prefix="streampace-gc-",
                                                   v8_log=log_path) as driver:
                if same_tab:
                    install_probe(driver)
                for page in pages:
                    if not same_tab:
                        own_tab(driver, cdp=True)
                    mark: dict[str, Any] = {}
                    probe = play_page(driver, server.base, server.player, page, trace, cpu,
                                      around=_marked(driver, log_path, mark))
                    time.sleep(0.5)
                    log = parse_log(log_path.read_text(errors="replace"))
                    play = on_page_clock(log, mark["marker_ms"],
                                         float(probe["startedAt"]) + LEAD_MS, mark["seen"])
                    frames = long_frames(probe, trace, LEAD_MS)
                    print("\n".join(report_lines(f"play {n + 1} {page}", play, frames,
                                                 answer_ms)), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.gc_frames",
                                 description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pages", default="embed",
                    help="pages played one after the other in one browser: demo, embed")
    ap.add_argument("--trace", default="md_32k")
    ap.add_argument("--cpu", type=float, default=4.0)
    ap.add_argument("--plays", type=int, default=1, help="browsers, one after the other")
    ap.add_argument("--same-tab", action="store_true",
                    help="every page in the first tab (the bench before fresh tabs)")
    args = ap.parse_args(argv)
    pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    if not pages or set(pages) - {"demo", "embed"}:
        raise SystemExit("--pages: demo and/or embed, comma-separated")
    run(pages, args.trace, args.cpu, max(1, args.plays), args.same_tab)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
