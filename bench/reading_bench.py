"""What the live region costs per frame (CPython, side by side in one run).

    .venv/bin/python bench/reading_bench.py

Feeds answers a few characters per "frame" into `MarkdownStream` (what the
page's Markdown view parses every frame) and, beside it, the same plus what
`browser/announce.py` adds per frame: the spoken form of the new final blocks
and of the open tail (`reading.spoken`) and `reading.Announcer.update/take`.
Reports microseconds per frame p50/p99 and the total, and the ratios. The
answers: the simulated model's long Markdown answer with one long paragraph
(the incremental OPEN state), and 60 000 characters of words without a
sentence end (hostile: the announcer must not rescan it every frame).
Figures are measured, never asserted; in the page Pyodide is slower than
CPython by a roughly constant factor, so the ratios carry over, not the times.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from streampace.markdown.stream import MarkdownStream  # noqa: E402
from streampace.reading.announcer import Announcer  # noqa: E402
from streampace.reading.spoken import spoken_block  # noqa: E402
from streampace.sim import text as simtext  # noqa: E402

DELTA = 6  # characters per frame


def answers() -> dict[str, str]:
    rng = random.Random(1)
    parts = []
    for _ in range(40):
        parts.append(rng.choice(simtext.EN_PARAGRAPHS))
        parts.append(rng.choice(simtext.EN_BLOCKS))
    parts.append("A long paragraph sentence, with clauses. " * 300)
    run_on = " ".join(f"word{i}" for i in range(8000))
    return {"markdown answer": "\n\n".join(parts), "run-on words": run_on}


def frames(doc: str, reader: bool) -> list[float]:
    stream = MarkdownStream()
    announcer = Announcer(lambda: 0.0)
    seen = 0
    out = []
    for i in range(0, len(doc), DELTA):
        t0 = time.perf_counter()
        stream.feed(doc[i:i + DELTA])
        if reader:
            finals = [spoken_block(b) for b in stream.blocks[seen:]]
            seen = len(stream.blocks)
            tail = list(stream.tail_nodes)
            if tail and not isinstance(tail[-1], str) and tail[-1][0] in ("pre", "table"):
                tail.pop()
            announcer.update("m", finals, "\n".join(spoken_block(n) for n in tail), False)
            announcer.take()
        out.append((time.perf_counter() - t0) * 1e6)
    return sorted(out)


def main() -> None:
    print(f"{'answer':18} {'':14} {'p50 us':>8} {'p99 us':>8} {'total ms':>9}")
    for name, doc in answers().items():
        rows = {}
        for _ in range(2):  # the second round is reported (warm)
            rows = {label: frames(doc, reader) for label, reader in
                    (("markdown only", False), ("plus reader", True))}
        for label, times in rows.items():
            p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
            print(f"{name:18} {label:14} {p50:8.1f} {p99:8.1f} {sum(times) / 1000:9.0f}")
        base, plus = rows["markdown only"], rows["plus reader"]
        print(f"{name:18} {'ratio':14} {plus[len(plus) // 2] / base[len(base) // 2]:8.2f} "
              f"{plus[int(len(plus) * .99)] / base[int(len(base) * .99)]:8.2f} "
              f"{sum(plus) / sum(base):9.2f}")


if __name__ == "__main__":
    main()
