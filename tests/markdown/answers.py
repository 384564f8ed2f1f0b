"""Random chat answers: the Markdown a model's answer usually holds.

Bold labels, bold links and bold code, code spans, links, images, bare URLs,
strikethrough, headings, paragraphs of two lines, lists (numbered, nested,
tasks) whose items may hold a paragraph, a fence, a table or a quote at the
item's content column, fences, tables, quotes and thematic breaks. Used by
`test_markdown_streaming` (a few, every piece checked) and by
`fuzz.py --answers` (many).
"""

from __future__ import annotations

import random

__all__ = ["random_answer"]

_INLINE = ["**Note:**", "**bold**", "*it*", "`code`", "**`cmd --x`**", "[link](https://e.org/a)",
           "**[Bold link](https://e.org)**", "~~old~~", "_em_", "word", "words here",
           "a, b and c.", "(see `x`)", "**Step 1:** do it", "`a_b`", "x * y", "2 * 3 = 6",
           "snake_case", "![img](/i.png)", "https://e.org/x", "e.g.", "it's", '"quoted"',
           "**a** and *b*", "***both***"]
_MARKERS = ["-", "*", "1."]


def _inline(rng: random.Random) -> str:
    return " ".join(rng.choice(_INLINE) for _ in range(rng.randint(1, 6)))


def _list(rng: random.Random, indent: str, depth: int) -> str:
    marker = rng.choice(_MARKERS)
    out = []
    for i in range(rng.randint(1, 4)):
        mark = f"{i + 1}." if marker == "1." else marker
        out.append(f"{indent}{mark} {_inline(rng)}\n")
        if depth < 2 and rng.random() < 0.4:  # a block in the item, at its content column
            out.append(_block(rng, indent + " " * (len(mark) + 1), depth + 1))
    return "".join(out)


def _table(rng: random.Random, indent: str) -> str:
    rows = "".join(f"{indent}| {_inline(rng)} | {rng.randint(0, 9)} |\n"
                   for _ in range(rng.randint(0, 3)))
    return f"{indent}| Name | Value |\n{indent}|---|---|\n{rows}"


def _block(rng: random.Random, indent: str = "", depth: int = 0) -> str:
    kind = rng.randrange(9)
    if kind == 0:
        return f"{indent}{rng.choice(['#', '##', '###'])} {_inline(rng)}\n"
    if kind == 1:
        return f"{indent}{_inline(rng)}\n{indent}{_inline(rng)}\n"
    if kind == 2:
        return _list(rng, indent, depth)
    if kind == 3:
        lang = rng.choice(["python", "bash", ""])
        return (f"{indent}```{lang}\n{indent}x = 1  # **not bold**\n{indent}print(`x`)\n"
                f"{indent}```\n")
    if kind == 4:
        return _table(rng, indent)
    if kind == 5:
        return f"{indent}> {_inline(rng)}\n{indent}> {_inline(rng)}\n"
    if kind == 6:
        return f"{indent}---\n"
    if kind == 7:
        return f"{indent}- [ ] {_inline(rng)}\n{indent}- [x] {_inline(rng)}\n"
    return f"{indent}{_inline(rng)}\n"


def random_answer(rng: random.Random) -> str:
    return "".join(_block(rng) + rng.choice(["\n", "\n", ""]) for _ in range(rng.randint(2, 6)))
