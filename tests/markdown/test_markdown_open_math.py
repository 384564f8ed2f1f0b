"""Display formulas while they stream: closed only at their own closing line."""

from __future__ import annotations

import pytest
from streampace.markdown import MarkdownStream, render_html

from .test_markdown_streaming import PARSER, _FullEveryTime


@pytest.mark.parametrize("text", [
    "\\[\na\n$$\n$$\nb\n", "\\[\n    $$\n\\begin{aligned}\n$$\n$$\n", "\\[\nx\n$$\n\nAfter.\n",
    "$$\na\n\\]\n$$\n",
])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_a_formula_closes_only_at_its_own_closing_line(text: str, size: int) -> None:
    """A `$$` line inside a `\\[` formula (and `\\]` inside a `$$` one) is the
    formula's text: the general path took it as the closing line and ended the
    formula there, unlike the one-shot render."""
    for stream in (MarkdownStream(parser=PARSER), _FullEveryTime(parser=PARSER)):
        for at in range(0, len(text), size):
            stream.feed(text[at:at + size])
        stream.close()
        assert stream.to_html() == render_html(text), type(stream).__name__
