"""The display leaves code and a formula's source as they are (`literal_end`),
reads a list item's fence as ended with its item (`tail._fence_reading`) and shows
the text after a whole link reference definition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.markdown.literal_end import ends_literal
from streampace.markdown.tail import _fence_reading, display_source
from streampace.markdown.tree import Node

from .test_markdown_streaming import PARSER


@pytest.mark.parametrize(("tail", "shown"), [
    # Indented code in an item: nothing closed, nothing held back.
    ("- a\n\n      print(\"**\", x[", "- a\n\n      print(\"**\", x["),
    ("1. a\n\n       x **b", "1. a\n\n       x **b"),
    ("- a\n\n      x = `y   ", "- a\n\n      x = `y"),
    # A formula's source, in an item and after a paragraph, with what would be markup.
    ("- a\n\n  $$\n  f(x) = [a, b", "- a\n\n  $$\n  f(x) = [a, b"),
    ("- a\n\n  $$\n  \\sum_{i=1}^n x_i^2 + _y", "- a\n\n  $$\n  \\sum_{i=1}^n x_i^2 + _y"),
    ("Text:\n$$\na * b + *c", "Text:\n$$\na * b + *c"),
    ("- $$\n  x^*", "- $$\n  x^*"),
    ("- a\n  \\[\n  x *y", "- a\n  \\[\n  x *y"),
    # Not literal: a paragraph in an item, indented less than four past its
    # content column (here and in a nested item); text after a closed formula;
    # a code-indented line continuing a paragraph; a formula a blank line ended.
    ("- a\n\n    x **b", "- a\n\n    x **b**"),
    ("- a\n  - b\n\n      c **d", "- a\n  - b\n\n      c **d**"),
    ("x\n$$\ny\n$$\nz **a", "x\n$$\ny\n$$\nz **a**"),
    ("- a\n      x **b", "- a\n      x **b**"),
    ("- a\n\n  $$\n  x\n\n  y *z", "- a\n\n  $$\n  x\n\n  y *z*"),
    ("- a\n\npara\n\n  x *z", "- a\n\npara\n\n  x *z*"),
    # Code under an empty quote's line (no paragraph in the quote: the line is
    # no lazy one), at the top level or in the item holding the quote; four
    # columns into that item only: its paragraph.
    (">\n    _y", ">\n    _y"),
    ("> a\n>\n    x *y", "> a\n>\n    x *y"),
    ("- a\n>\n    x *y", "- a\n>\n    x *y"),
    ("- a\n  >\n      x *y", "- a\n  >\n      x *y"),
    ("- a\n  >\n    x *y", "- a\n  >\n    x *y*"),
    ("> a\n    x *y", "> a\n    x *y*"),
    # The same under a quote's empty list item (`>*`: no paragraph in it
    # either), at the quote's start or under its empty line; an item marker
    # under the quote's text goes on that paragraph, whose lazy line it is.
    (">*\n    [](", ">*\n    []("),
    ("> 2.\n    `a", "> 2.\n    `a"),
    (">\n> -\n    x *y", ">\n> -\n    x *y"),
    ("> a\n>*\n    [](", "> a\n>*\n    []()"),
    # And under an empty item outside a quote, at the run's start or under
    # another empty item: the code is that item's, four columns past its
    # content column; less is its paragraph, and an empty item under text
    # is that paragraph's line.
    ("*\n*\n      _y", "*\n*\n      _y"),
    ("-\n  *\n        _y", "-\n  *\n        _y"),
    ("1.\n2.\n       _y", "1.\n2.\n       _y"),
    ("1.\n2.\n      _y", "1.\n2.\n      _y_"),
    ("a\n*\n      _y", "a\n*\n      _y_"),
    # And under an ATX heading (one line: no paragraph open under it), in what
    # holds the heading; in an item, four columns past its content column.
    ("# |\n    *!", "# |\n    *!"),
    ("> # h\n    *x", "> # h\n    *x"),
    ("- a\n  # h\n      *x", "- a\n  # h\n      *x"),
    ("- a\n  # h\n    *x", "- a\n  # h\n    *x*"),
    ("#a\n    *x", "#a\n    *x*"),  # (no heading: a paragraph's line)
    # And under a quote on an item's line (`- >`): the code is in that item.
    ("- >\n      [](", "- >\n      []("),
    ("- >*\n      [](", "- >*\n      []("),
    ("  - >\n        *x", "  - >\n        *x"),
    ("- >\n    *x", "- >\n    *x*"),  # (two columns into the item: its paragraph)
    # Code inside a quote: on its first line, under its empty line, nested, in an
    # item; not where the quote's paragraph or an item in it takes the line, nor
    # under a line without quote marks (a lazy one may keep a paragraph open).
    (">     *x", ">     *x"),
    ("> a\n>\n>     *x [y", "> a\n>\n>     *x [y"),
    ("p\n\n> >     `c", "p\n\n> >     `c"),
    ("> > a\n> >\n> >     _y", "> > a\n> >\n> >     _y"),
    ("- a\n\n  >     *x", "- a\n\n  >     *x"),
    ("> a\nb\n>\n>     *x", "> a\nb\n>\n>     *x"),
    ("> > a\n>\n>     *x", "> > a\n>\n>     *x"),
    ("> a\n>     *x", "> a\n>     *x*"),
    ("> - a\n>\n>     *x", "> - a\n>\n>     *x*"),
    ("> - a\nb\n>\n>     *x", "> - a\nb\n>\n>     *x*"),
    ("> > - a\n> b\n> >\n> >     *x", "> > - a\n> b\n> >\n> >     *x*"),
    # The same with spaces before the quote's marks (the text's first line
    # starts its block: ` >     [-` showed `\-`, its `[` held back).
    (" >     [-", " >     [-"),
    ("   >     *x", "   >     *x"),
    (" >\n >     *x", " >\n >     *x"),
    (" > a\n >     *x", " > a\n >     *x*"),
    # Two markers on one line: a line reaching the inner item's content column
    # is the inner item's (its paragraph six columns in, its code eight in);
    # a lazy line under it continues that paragraph (no table header implied).
    ("- - c\n\n      *x", "- - c\n\n      *x*"),
    ("- - c\n\n        *x", "- - c\n\n        *x"),
    ("- - c\n\n    :\n  |x", "- - c\n\n    :\n  |x"),
    # An item's line starting with one or two backticks or tildes (no fence)
    # and a lazy line: the item holds the heading four columns in, which ends
    # the paragraph whose code span it would have closed.
    ("- `\n)\n    # c", "- `\n)\n    # c"),
    ("- ~~\nb\n    # c *d", "- ~~\nb\n    # c *d*"),
    # A fence its item's end closed: its lines are not text to complete (no
    # table delimiter implied under a code line), the next item's text is.
    ("- a\n  ```\n  | a | b |\n-", "- a\n  ```\n  | a | b |\n"),
    ("- a\n  ```\n  x *y\n- b *c", "- a\n  ```\n  x *y\n- b *c*"),
    # An item's line inside a formula (a mark above it: it may be the formula's
    # or an item with lazy lines) is read both ways: where the two agree on
    # what holds the line after the blank (`- a`, whose code it is), the line
    # is code; where they do not (`  - b` would hold it as its paragraph),
    # the display cannot tell and completes it, as before.
    ("- a\n  $$\n      - b\n  f(x) = [c\n  \n      x = `y", "- a\n  $$\n      - b\n"
     "  f(x) = [c\n  \n      x = `y"),
    ("- a\n  $$\n  - b\n  c\n\n      x = `y", "- a\n  $$\n  - b\n  c\n\n      x = `y`"),
    # An item whose text is `_` or `__` (no rule: that takes three) holds a
    # paragraph, whose lazy line `c` is: the line after the blank is code
    # where it is four columns past what holds it (found by
    # `tests.markdown.fuzz --unseen`).
    ("  2) _\nc\n\n    *b", "  2) _\nc\n\n    *b"),
    ("- __\nc\n\n      *b", "- __\nc\n\n      *b"),
    # An item numbered 2 in the item above's paragraph (at or right of its
    # content column, under its text) is that paragraph's next line, no item:
    # the line after the blank is the outer item's code (it was read as the
    # `2)` item's paragraph, its `~~` closed). Left of that column the
    # marker ends the paragraph and starts a list, which holds the line.
    ("+ 😀\n  2) `\n\n      ~~b", "+ 😀\n  2) `\n\n      ~~b"),
    ("- a\n    2) b\n\n      *c", "- a\n    2) b\n\n      *c"),
    ("+ 😀\n 2) `\n\n      ~~b", "+ 😀\n 2) `\n\n      ~~b~~"),
    ("- # a\n  2) b\n\n      *c", "- # a\n  2) b\n\n      *c*"),
    # A lazy line starting with a pipe, no delimiter row under it or above
    # it, is a paragraph's text like any other: the item holds the line after
    # the blank, four columns past its content column, as code (it could not
    # tell, and completed it). Two columns past, it is the item's paragraph.
    ("+ [\n|\n\n      *e", "+ [\n|\n\n      *e"),
    ("  1. ~\n|\n\n    *e", "  1. ~\n|\n\n    *e"),
    ("+ a\n|x\n\n    *e", "+ a\n|x\n\n    *e*"),
    # A marker four columns past what holds it, under a blank line or first
    # in the text, is code, which holds nothing: the lines after it so far in
    # are that code's, and a line at the left edge a paragraph of its own
    # (`n` had the code's `_` closed on it).
    ("    * 😀\n\n      _|\nn", "    * 😀\n\n      _|\nn"),
    ("- a\n\n      * b\n\n       *c", "- a\n\n      * b\n\n       *c"),
    # Under a line quoted two deep, a block that may end a paragraph, four
    # columns in with no quote marks (an item, numbered any way; a heading,
    # a rule), ends the quotes: markdown-it reads it as code where it falls,
    # in the item holding the quote too. One deep, or plain text, it is the
    # paragraph's lazy line.
    (">> a\n    1. *x", ">> a\n    1. *x"),
    ("> > a\n    - *x", "> > a\n    - *x"),
    (">> a\n    # *x", ">> a\n    # *x"),
    ("- >> a\n      2) *x", "- >> a\n      2) *x"),
    ("> a\n    - *x", "> a\n    - *x*"),
    (">> a\n    x *y", ">> a\n    x *y*"),
    # A `>` line left of an item's content column and four columns in: the
    # quote ends the item's paragraph, and the line is code where it falls
    # (markdown-it); under `- b` it is the item's quote. So do a heading, a
    # fence, a formula's opening, a rule; a list item there continues the
    # paragraph.
    ("  2. b\n    >`c", "  2. b\n    >`c"),
    ("   * )\n    # [](", "   * )\n    # []("),
    ("  2. b\n    ```\n    x *y", "  2. b\n    ```\n    x *y"),
    ("  2. b\n    $$\n    x *y", "  2. b\n    $$\n    x *y"),
    ("  2. b\n    ***\n    x *y", "  2. b\n    ***\n    x *y"),
    ("  2. b\n    - c *d", "  2. b\n    - c *d*"),
    # A list item there ends the paragraph too where it stands less than four
    # columns past what holds the innermost item above (markdown-it's list
    # indent: an item on the same line as another, `   * 2. a`): code where
    # it falls, any number, empty or not (`[](` showed closed, `*a` too).
    ("   * 2. a\n    2) [](", "   * 2. a\n    2) []("),
    (" 1.  - c\n    1. [](", " 1.  - c\n    1. []("),
    (" 10. 2) e\n    * *a", " 10. 2) e\n    * *a"),
    ("   * 2. a\n    2) *b\n    c", "   * 2. a\n    2) *b\n    c"),
    # The same under lazy lines of the item's paragraph; a list item between
    # starts a list of its own, which holds the line.
    ("   * _|\né\n    # !", "   * _|\né\n    # !"),
    ("  2. b\nc\nd\n    >c `d", "  2. b\nc\nd\n    >c `d"),
    ("  2. b\n- c\n    # h *x", "  2. b\n- c\n    # h *x*"),
    # Under a heading on an item's line no paragraph is open: four columns
    # past the item's content column is its code (`*l` closed, `[` held back).
    ("+ #\n      *l", "+ #\n      *l"),
    ("* #\n      [2.", "* #\n      [2."),
    ("+ # h\n    *l", "+ # h\n    *l*"),
    # An item's text of two stars (no rule, no marker) and its lazy line: the
    # line under the blank one, left of the item, is code where it falls.
    (" 10. **\ne\n\n    *e", " 10. **\ne\n\n    *e"),
    ("- **\ne\n\n    *e", "- **\ne\n\n    *e*"),
    # An empty item ends at a line left of its content column (no paragraph
    # takes it as a lazy line): it holds nothing under it, and four columns
    # in under the blank line is code.
    ("-\n[x]:u\n\n    *l", "-\n[x]:u\n\n    *l"),
    ("- a\n  -\nb\n\n    *l", "- a\n  -\nb\n\n    *l"),
    # A lazy line of pipes between, no delimiter row on it or under it: the
    # paragraph's text, no table's header.
    ("10.  a\n|\n    # *e", "10.  a\n|\n    # *e"),
    ("  2. b\n| x\n    >c `d", "  2. b\n| x\n    >c `d"),
    # An item holding an empty item on its line (` 1.  *`): no paragraph is
    # open, so four columns past what holds the next line is code there too
    # (found by `tests.markdown.fuzz --unseen`); under `1. *` the line is the
    # outer item's paragraph.
    (" 1.  *\n    `a", " 1.  *\n    `a"),
    ("1. *\n    `a", "1. *\n    `a`"),
    (" 10. x\n\n  2. b\n    >`c\n    d *e", " 10. x\n\n  2. b\n    >`c\n    d *e"),
    ("- b\n    >`c", "- b\n    >`c`"),
])
def test_code_and_a_formulas_source_show_as_they_are(tail: str, shown: str) -> None:
    assert display_source(tail) == shown


def test_an_outer_item_on_a_line_of_two_markers_holds_what_its_inner_one_cannot() -> None:
    # Found by the property test below with more pieces: the lines under
    # `- - two` left of its inner item's column (a lazy line, a formula's
    # opening) end that item, not the outer one, which holds `    - t` (a
    # nested item, no code); the reading asked only the inner one.
    tail = "- first\n- - two\n      - not an item\n  f(x) = [a, b\n  \\[\n\n    - t"
    lines = tail.split("\n")
    assert not ends_literal(tail, lines)
    assert _last_leaf(PARSER.render(tail, {})[0]) == "t"  # an item's text, as parsed


def test_a_formula_whose_lines_a_fence_may_hold_is_not_read_as_one() -> None:
    # Found by the property test below: the formula's opening came after a
    # blank line inside a fence opened above it, which a later line closed;
    # read as a formula still open, the line after the fence was its source.
    tail = "- first\n  ```\n\n  \\[\n  $$\n  x^* + [a\n      $$\n  ```\n  $"
    lines = tail.split("\n")
    assert not ends_literal(tail, lines)
    assert _last_leaf(PARSER.render(tail, {})[0]) == "$"  # the item's text, as parsed


@pytest.mark.parametrize(("tail", "shown"), [
    # The container of a paragraph is its first line's: an item's line above
    # its lazy lines (a `2.` left of it is a sibling, the `[` shows), but not
    # one above a rule or heading that the paragraph starts under (there the
    # `2.` continues the paragraph, and the `*` closes after it).
    ("1. a\n   b [c\n d\n2. e\n", "1. a\n   b [c\n d\n2. e\n"),
    ("1. a\n   b\n---\nc *x\n2. d", "1. a\n   b\n---\nc *x\n2. d*"),
    ("1. a\n   b\n# h\nc *x\n2. d", "1. a\n   b\n# h\nc *x\n2. d*"),
    # Lazy lines of pipes with no delimiter row under them are the paragraph's
    # (no table's header): the paragraph starts on the item's line above them,
    # and the `-` left of it is an empty sibling that ends it (nothing closed);
    # a `>` inside a line (`<div>`, `x > y`) is text, no quote to give up on.
    ("- a\n  - *open em\n  | a | b |\n  | c | *d |\n  -\n ",
     "- a\n  - *open em\n  | a | b |\n  | c | *d |\n  -\n"),
    ("- a\n  - *open em\n  <div>\n  -\n ", "- a\n  - *open em\n  <div>\n  -\n"),
    ("- a\n  - *open em\n  x > y\n  -\n ", "- a\n  - *open em\n  x > y\n  -\n"),
    # A line of pipes above a setext underline is the heading's: no delimiter
    # row is implied under it (it showed as a table and a rule).
    ("- b\n  | a | b |\n  ---\n", "- b\n  | a | b |\n  ---\n"),
])
def test_a_paragraphs_container_is_its_first_lines(tail: str, shown: str) -> None:
    assert display_source(tail) == shown


@pytest.mark.parametrize(("text", "inside"), [
    ("- a\n\n  ```\n  x\n- b *c", False),   # the next item ended the first one's fence
    ("- ```\nx", False),                   # text at column 0: no lazy line in a fence
    ("1. a\n   ```\n   x\n2. b\n   ```\n   y", True),  # the second item's own fence
    ("  ```\nx", True),                    # a top-level fence: nothing ends it but its closing
    ("- ```\n  x\n\n  y", True),
    ("> ```\nx", True),                    # (quotes: read as before)
])
def test_a_fence_in_a_list_item_ends_with_its_item(text: str, inside: bool) -> None:
    assert _fence_reading(text)[0] is inside


def _last_leaf(nodes: list[Node]) -> Node | None:
    """The block the rendered text ends in, inside its lists, items and quotes."""
    node = nodes[-1] if nodes else None
    while node is not None and not isinstance(node, str) and node[0] in (
            "ul", "ol", "li", "blockquote"):
        node = node[2][-1] if node[2] else None
    return node


# Item lines at several columns (W: the item's content column) after blank
# lines and text: code, formulas opened and closed, paragraphs, nested items.
PIECES = ["- a *b*\n", "1. one\n", "10. ten\n", "\n", "W    code **x\n", "W  nested para\n",
          "W$$\n", "W\\[\n", "W\\]\n", "Wx^* + [a\n", "  - sub\n", "      deeper `y\n",
          "text at column 0\n", "W- sub item\n", "        eight\n", "W    $$\n", "   three\n",
          "W2. two\n", "-\n", "W```\n", "# heading\n", "  a\tb\n", "W>\n", ">\n", "W> q\n",
          "> >\n", "lazy *x\n", "_y\n", "W# h\n",
          # Quote lines: code in them, a list and text in them, nested.
          ">     q *c\n", "W>     q `d\n", "> - it\n", "> >     deep\n", "W> text\n", "> > t\n",
          "> > - i\n", "lazy\n",
          # Two markers on one line: the inner item holds what reaches its column.
          "- - two\n", "W- - in\n", "W      six\n",
          # An item's line inside a formula, a lazy-looking line under it.
          "W    - not an item\n", "Wf(x) = [a, b\n",
          # A quote's line left of an item's content column, four columns in.
          "  2. b\n", "    >c `d\n", "    # h *x\n", "    ```\n", "    ***\n", "é *z\n",
          # A quote on an item's line, empty or holding an empty item.
          "- >\n", "W- >*\n",
          # Empty items under empty items.
          "W-\n", "1.\n", "W2.\n", "*\n", "2)\n"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["- ", "1. ", "10. "]),
       st.lists(st.sampled_from(PIECES), min_size=1, max_size=10), st.data())
def test_what_reads_as_literal_is_code_or_a_formula_for_the_parser(
        marker: str, parts: list[str], data: st.DataObject) -> None:
    """Wherever the text is cut, when the display reads its end as code or a
    formula's source, a parse of the text as it is ends in an indented code
    block or an open formula (the reading is never wrong where it acts)."""
    pad = " " * len(marker)
    text = marker + "first\n" + "".join(part.replace("W", pad) for part in parts)
    tail = text[:data.draw(st.integers(1, len(text)))]
    lines = tail.split("\n")
    lines[-1] = lines[-1].rstrip(" ")
    if not ends_literal(tail, lines):
        return
    leaf = _last_leaf(PARSER.render("\n".join(lines), {})[0])
    assert leaf is not None and not isinstance(leaf, str), tail
    assert (leaf[0] == "pre" and not leaf[1]) or leaf[1] == (("class", "sp-math-source"),), (
        tail, leaf)


@pytest.mark.parametrize(("tail", "shown"), [
    ("[r]: /u\nmore *x", "[r]: /u\nmore *x*"),         # the parse hides the definition
    ("- a\n  [r]: /u\n  b **c", "- a\n  [r]: /u\n  b **c**"),
    ("[r]: /u\n'the ti", ""),                            # a title may be arriving: held back
    ("[r]:\n/u", ""),                                    # its destination on the next line
    ("[r]: /u", ""),                                     # being written
    # No definition: text after its destination that is no title, or after
    # its title (a paragraph, completed as one; `-a*` showed).
    ("[x]:u *y\n.*-a", "[x]:u *y\n.*-a"),
    ("[x]:u *y", "[x]:u *y*"),
    ('[r]: /u "t" z\n*a', '[r]: /u "t" z\n*a*'),
    ("[r]: <a b> *c", "[r]: <a b> *c*"),
    # Code-indented lines under a whole definition: code (no paragraph to
    # continue), in the item holding it too; four columns into that item only:
    # its paragraph.
    ("[r]:u\n    x *y", "[r]:u\n    x *y"),
    ('[r]: /u "t"\n[s]: /v\n    x *y', '[r]: /u "t"\n[s]: /v\n    x *y'),
    ("- a\n\n  [r]: /u\n      x *y", "- a\n\n  [r]: /u\n      x *y"),
    ("- a\n\n  [r]: /u\n    x *y", "- a\n\n  [r]: /u\n    x *y*"),
    # A line that ends such code starts a paragraph of its own (the code's
    # backtick was closed on it, and shown).
    ("[x]:u\n    `\né", "[x]:u\n    `\né"),
    ("[x]:u\n    `\n      a\né *x", "[x]:u\n    `\n      a\né *x*"),
])
def test_the_text_after_a_whole_link_definition_shows(tail: str, shown: str) -> None:
    assert display_source(tail) == shown
