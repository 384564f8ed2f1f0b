"""Markdown traces: answers as models write them (headings, lists, tables, code, links).

* `md_heavy` — one Markdown-heavy answer (~4 000 characters): headings, nested
  lists, a table, two fenced code blocks, links, emphasis, a quote.
* `md_long` — a long answer (≥ 50 000 characters, ~600 blocks) made of such
  sections.
* `md_plain` — the visible text of `md_heavy` without any markup, streamed with
  the same cadence: the baseline for "does invisible source read as a freeze?".

Text is cut into model tokens (a word and its trailing space, long words split)
and emitted at a fast model's pace (~110 tokens/s, deterministic jitter), then
goes through the same `DeliveryBuffer` as every other trace.
"""

from __future__ import annotations

import random
from typing import Any

from streampace.markdown.parser import Parser
from streampace.markdown.tree import text_of

from bench.traces import EXTRA_TRACES, Model, Trace, deliver

__all__ = ["MARKDOWN_TRACES", "build_markdown_trace", "markdown_document", "plain_twin"]

MARKDOWN_TRACES: dict[str, str] = {
    "md_heavy": "Markdown-heavy answer: headings, lists, a table, two code blocks, links",
    "md_long": "long Markdown answer, >= 50 000 characters, many blocks",
    "md_plain": "md_heavy's visible text without markup, same cadence",
}

# The browser-only Markdown traces (bench/traces.py) are played by a fast model
# (~3 ms a token, ≈ 1 300 characters/s).
_FAST = tuple(name for name in EXTRA_TRACES if name.startswith("md_"))

_TOPICS = ["pacing", "batching", "rendering", "selection", "reconnects", "graphemes",
           "backpressure", "snapshots", "tool calls", "reasoning"]


def _section(i: int, rng: random.Random, math: bool = False) -> str:
    topic = _TOPICS[i % len(_TOPICS)]
    n = rng.randint(2, 4)
    items = "\n".join(
        f"- **{topic.title()} {k + 1}**: keep the *visible* rate steady; see "
        f"[the notes](https://example.com/{topic.replace(' ', '-')}/{i}-{k}) for `case {k}`."
        for k in range(n))
    rows = "\n".join(f"| {topic} {k} | {rng.randint(1, 99)} ms | {'yes' if k % 2 else 'no'} |"
                     for k in range(rng.randint(2, 5)))
    code = "\n".join(f"    rate = clamp(pending / {250 + k * 10}, 20, 800)  # step {k}"
                     for k in range(rng.randint(3, 8)))
    return (
        f"## {i + 1}. {topic.title()} in practice\n\n"
        f"When the stream is about **{topic}**, the display should stay calm: text arrives in "
        f"bursts, but it is revealed at a steady pace, and ~~nothing~~ no block flickers. "
        f"A sentence with a [reference link](https://developer.mozilla.org/docs/Web/API/"
        f"Window/requestAnimationFrame \"rAF\") and a bare URL https://example.org/{i}.\n\n"
        f"{items}\n"
        f"  1. a nested step with `inline code`\n"
        f"  2. and *another* one\n\n"
        f"| case | cost | paced? |\n|:-----|-----:|:------:|\n{rows}\n\n"
        f"```python\ndef frame_{i}(pending):\n{code}\n    return rate\n```\n\n"
        f"> Note: a quote about {topic}, with **bold** and _emphasis_.\n\n"
        + (f"The rate follows $r = \\min(\\frac{{p}}{{\\tau}}, r_{{max}})$ for $p$ pending "
           f"graphemes, at a cost of $5 to $10 a month:\n\n"
           f"$$\nr_{{{i}}} = \\sum_{{k=0}}^{{n}} \\frac{{p_k}}{{\\tau}}\n$$\n\n" if math else "")
    )


def markdown_document(min_chars: int, seed: int = 1, math: bool = False) -> str:
    """A long Markdown answer; `math` adds a formula paragraph and a display
    block to each section (the traces built from it are unchanged without)."""
    rng = random.Random(seed)
    parts = ["# Streaming Markdown, measured\n\n"]
    size = len(parts[0])
    i = 0
    while size < min_chars:
        part = _section(i, rng, math)
        parts.append(part)
        size += len(part)
        i += 1
    parts.append("```js\nconsole.log('the end');\n```\n\nThat is all.\n")
    return "".join(parts)


def _nested_section(i: int, rng: random.Random) -> str:
    """Steps as assistants write them: each a bold lead line, then 3-8
    sub-points with emphasis, code and a link in a nested list."""
    topic = _TOPICS[i % len(_TOPICS)]
    steps = []
    for k in range(rng.randint(3, 5)):
        subs = "".join(
            f"   - {rng.choice(['check', 'keep', 'measure', 'note'])} the *{topic}* "
            f"{['budget', 'cadence', 'backlog', 'order'][j % 4]} with `step_{k}_{j}`"
            + (f" ([why](https://example.com/{topic.replace(' ', '-')}/{k}/{j}))" if j % 3 == 0
               else "") + "\n"
            for j in range(rng.randint(3, 8)))
        steps.append(f"{k + 1}. **{topic.title()}, step {k + 1}**: what to do first, and why "
                     f"it keeps the display calm.\n{subs}")
    return (f"## {i + 1}. {topic.title()}, step by step\n\n"
            f"The steps below are in the order that matters.\n\n" + "".join(steps) + "\n")


def _sections(title: str, section: Any, min_chars: int, seed: int) -> str:
    """A long answer: `title`, then `section(i, rng)` for i = 0, 1, ... until
    it holds `min_chars` characters, then a last line."""
    rng = random.Random(seed)
    parts = [f"# {title}\n\n"]
    size, i = len(parts[0]), 0
    while size < min_chars:
        parts.append(section(i, rng))
        size += len(parts[-1])
        i += 1
    parts.append("That is all.\n")
    return "".join(parts)


def nested_document(min_chars: int, seed: int = 1) -> str:
    """A long answer of numbered steps, each with a nested list of sub-points."""
    return _sections("Streaming Markdown, step by step", _nested_section, min_chars, seed)


_CODE_LINES = ("result = pace(batch, budget_ms=8.0)", "for event in stream:",
               "    if event.kind == 'end':", "        break", "    queue.append(event.text)",
               "print(f'shown {len(queue)} events')  # done",
               "config = {'max_lag': 120, 'budget': 8}", "await socket.send(json.dumps(config))")


def _steps_code_section(i: int, rng: random.Random) -> str:
    """Steps as assistants write a how-to: each a bold lead line, a blank line
    and a code block of 6-40 lines inside the item."""
    topic = _TOPICS[i % len(_TOPICS)]
    steps = []
    for k in range(rng.randint(2, 4)):
        code = "".join(f"   {rng.choice(_CODE_LINES)}\n" for _ in range(rng.randint(6, 40)))
        steps.append(f"{k + 1}. **{topic.title()}, step {k + 1}**: run this, then check the "
                     f"*{topic}*:\n\n   ```python\n{code}   ```\n\n")
    return f"## {i + 1}. {topic.title()}\n\n" + "".join(steps)


def steps_code_document(min_chars: int, seed: int = 1) -> str:
    """A long how-to answer: numbered steps, each with a code block in its item."""
    return _sections("Streaming Markdown, with code", _steps_code_section, min_chars, seed)


def long_code_document(seed: int = 1) -> str:
    """An answer that is mostly code: a 450-line Python block, then a 160-line plain
    one in a list item (how a model writes out a whole module and its log)."""
    rng = random.Random(seed)
    module = "".join(f"{rng.choice(_CODE_LINES)}\n" for _ in range(450))
    log = "".join(f"   {k:04d} paced {rng.randint(1, 99)} graphemes, lag "
                  f"{rng.randint(20, 400)} ms\n" for k in range(160))
    return ("# The whole module\n\nHere it is, in one piece:\n\n"
            f"```python\n{module}```\n\nAnd what it printed:\n\n"
            f"1. The log:\n\n   ```\n{log}   ```\n\nThat is all.\n")


def heavy_document(seed: int = 1) -> str:
    """Headings, lists, a table, two code blocks (one per section + the last), links."""
    return markdown_document(3500, seed)


def plain_twin(text: str) -> str:
    """The visible text of `text`: what a reader sees, markup removed."""
    nodes = Parser().render(text, {})[0]
    return "\n\n".join(text_of(node).strip("\n") for node in nodes)


def _tokens(text: str, rng: random.Random) -> list[str]:
    out: list[str] = []
    word = ""
    for ch in text:
        word += ch
        if ch in " \n" or len(word) >= rng.randint(5, 9):
            out.append(word)
            word = ""
    if word:
        out.append(word)
    return out


def _model(text: str, seed: int, run_id: str, gap_ms: float = 9.0) -> Model:
    rng = random.Random(seed)
    t = 0.0
    mid = f"{run_id}-m1"
    model: Model = [
        (t, {"type": "RUN_STARTED", "threadId": "bench", "runId": run_id}),
        (t + 300.0, {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}),
    ]
    t += 300.0
    for token in _tokens(text, rng):
        t += rng.expovariate(1 / gap_ms)  # 9 ms: ~110 tokens/s
        model.append((round(t, 3), {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid,
                                    "delta": token}))
    model.append((round(t + 5, 3), {"type": "TEXT_MESSAGE_END", "messageId": mid}))
    model.append((round(t + 10, 3), {"type": "RUN_FINISHED", "threadId": "bench",
                                     "runId": run_id}))
    return model


def build_markdown_trace(name: str, seed: int = 1) -> Trace:
    if name == "md_heavy":
        text = heavy_document(seed)
    elif name == "md_long":
        text = markdown_document(50_000, seed)
    elif name == "md_plain":
        text = plain_twin(heavy_document(seed))
    elif name == "md_32k":
        text = markdown_document(32_000, seed)
    elif name == "md_nested":
        text = nested_document(16_000, seed)
    elif name == "md_steps_code":
        text = steps_code_document(16_000, seed)
    elif name == "md_long_code":
        text = long_code_document(seed)
    else:
        raise ValueError(f"unknown Markdown trace {name!r}")
    # md_32k (browser only): a fast model (~3 ms a token, ≈ 1 300 characters/s),
    # so the long answer plays in about half a minute.
    model = _model(text, seed, f"run-{name}-{seed}", 3.0 if name in _FAST else 9.0)
    arrivals = deliver(model)
    meta: dict[str, Any] = {"scenario": name, "seed": seed, "network": "direct",
                            "socket_messages": len(arrivals), "chars": len(text)}
    description = MARKDOWN_TRACES.get(name) or EXTRA_TRACES[name]
    trace = Trace(name, model, arrivals, description, meta)
    meta["graphemes"] = trace.tracked.total
    meta["duration_ms"] = round(model[-1][0], 1)
    return trace
