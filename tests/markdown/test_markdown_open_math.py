"""An open display formula: shown as a parse reads its source, never parsed again per delta."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.markdown import FinalBlock, MarkdownStream, SetTail, render_html
from streampace.markdown.open_math import shown_source, source_node
from streampace.markdown.tree import to_html

from .test_markdown_streaming import (
    PARSER,
    _FullEveryTime,
    _same_as_full_at_drawn_cuts,
    _unparsed_from_a_third_on,
)

# Lines of a formula: TeX full of characters that are markup in prose, lines
# that look like other blocks, prefixes of the closing line, indentation.
FORMULA_LINES = [
    "r = \\sum_{k=0}^{n} \\frac{p_k}{\\tau} * x_1 * y", "\\begin{aligned} a &= b \\\\",
    "[a](b) `c` **d** <e> &amp;", "- 1", "# 2", "> 3", "| 4 |", "```", "$", "\\", "\\]x",
    "  indented by two", "      by six", "trailing   ", "\u00a0", "$$ x $$",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["$$", "\\[", "  $$", "   \\["]),
       st.lists(st.sampled_from(FORMULA_LINES), max_size=8), st.data())
def test_an_open_formula_shows_the_source_a_parse_reads(
        opening: str, lines: list[str], data: st.DataObject) -> None:
    """At any cut after the opening line, the source shown is what a parse of
    the text so far shows, but for the partial line's trailing spaces."""
    text = opening + "\n" + "\n".join(lines)
    cut = data.draw(st.integers(len(opening) + 1, len(text)))
    tail = text[:cut]
    shown = shown_source(tail)
    complete, nl, partial = tail.rpartition("\n")
    (node,) = PARSER.render(complete + nl + partial.rstrip(" "), {})[0]
    if partial.strip() == ("$$" if opening.strip() == "$$" else "\\]"):
        # A line cut where it reads as the closing line ("$$ x $$" as "$$"): the
        # parse shows the formula converted, the general path shows it so.
        assert shown is None and node[0] == "div", (tail, node)
        return
    assert shown is not None, tail  # no other closing line, no blank line in these lines
    assert source_node(shown) == node, (tail, shown, node)


@pytest.mark.parametrize("tail", [
    "$$", "$$ x\na\n", "    $$\na\n", "\t$$\na\n", "$$\na\n$$", "$$\na\n  $$  ", "$$\na\n\n",
    "$$\na\n  \nb", "\\[\na\n\\]", "$$\na\tb\n", "$$\na\n$$\u3000",
])
def test_a_tail_that_is_not_one_open_formula_is_left_to_the_display(tail: str) -> None:
    assert shown_source(tail) is None


# No "    ```" line here (see test_markdown_indented.py's PIECES), and a lone
# backslash only with its line break: before `\[` it makes `\\[`, a paragraph
# whose `[` the general path holds back while a formula follows (an older
# display fault; the paragraph's state shows it, as a full render does).
PIECES = [
    "$$\n", "\\[\n", "\\]\n", "$$", "\n", "x_1 * y_2 = \\frac{a}{b}\n", "\\sum_k [a](b)",
    " `c`\n", "  ", "- not a list\n", "Para *em*\n", "# Heading\n", "  $$\n", "$", "\\\n",
    "\\begin{aligned}\n", "a &= b \\\\\n", "\\end{aligned}\n", "after **b**\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14), st.data())
def test_a_streamed_formula_shows_what_the_general_path_shows(
        pieces: list[str], data: st.DataObject) -> None:
    """Beside a stream without the formula state, at every drawn cut; both end
    as the one-shot render."""
    _same_as_full_at_drawn_cuts(MarkdownStream, "".join(pieces), data, 30)


@pytest.mark.parametrize("size", [5, 13, 29])
@pytest.mark.parametrize("opening, closing", [("$$", "$$"), ("\\[", "\\]"), ("  $$", "  $$")])
@pytest.mark.parametrize("after", ["", "\nAfter.\n", "After at once.\n"])
def test_an_open_formula_streams_without_parsing_its_source_again(
        size: int, opening: str, closing: str, after: str) -> None:
    """Forty lines of TeX: from a third of the text until its closing line no
    block parse or render sees its first line; every display is the general
    path's; the formula converts once closed and the stream ends as the
    one-shot render."""
    formula = "".join(f"  r_{i} = \\sum_{{k=0}}^{{{i}}} \\frac{{p_k}}{{\\tau}} * x \\\\\n"
                      for i in range(40))
    text = "Intro.\n\n" + opening + "\n" + formula + closing + "\n" + after
    _unparsed_from_a_third_on(text, "r_0 ", len("Intro.\n\n" + opening + "\n" + formula), size)
    assert "<math" in render_html(text)


def test_an_open_formula_grows_its_source_text() -> None:
    """Each delta shows the source grown at its end (the partial line without
    its trailing spaces, a complete line with them); the closing line converts it."""
    stream = MarkdownStream(parser=PARSER)
    stream.feed("Intro\n\n$$\nx = 1\n")
    shown = []
    for piece in ["y = ", "2  ", "  \n", "  z", "\n", "$"]:
        ops = stream.feed(piece)
        tails = [op for op in ops if isinstance(op, SetTail)]
        assert tails == ops, ops
        shown += [op.nodes[0][2][0] for op in tails]
    assert shown == ["$$\nx = 1\ny =", "$$\nx = 1\ny = 2", "$$\nx = 1\ny = 2    ",
                     "$$\nx = 1\ny = 2    \n  z", "$$\nx = 1\ny = 2    \n  z\n$"], shown
    (final,) = stream.feed("$\n")
    assert isinstance(final, FinalBlock), final
    assert to_html([final.node]).startswith('<div class="sp-math-block"><math')


@pytest.mark.parametrize("text", [
    "\\[\na\n$$\n$$\nb\n", "\\[\n    $$\n\\begin{aligned}\n$$\n$$\n", "\\[\nx\n$$\n\nAfter.\n",
    "$$\na\n\\]\n$$\n",
])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_a_formula_closes_only_at_its_own_closing_line(text: str, size: int) -> None:
    """A `$$` line inside a `\\[` formula (and `\\]` inside a `$$` one) is the
    formula's text: the general path took it as the closing line and ended the
    formula there, unlike the one-shot render (found by the property test above)."""
    for stream in (MarkdownStream(parser=PARSER), _FullEveryTime(parser=PARSER)):
        for at in range(0, len(text), size):
            stream.feed(text[at:at + size])
        stream.close()
        assert stream.to_html() == render_html(text), type(stream).__name__
