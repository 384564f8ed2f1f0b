"""A code block's lines in boxes (markdown_dom.MarkdownView.code_lines): the same
text in the same order, a box only ever after a line break, however it streams."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.browser.markdown_dom import MarkdownView, PageMarkdownView
from streampace.markdown import render_html
from streampace.markdown.parser import Parser

from .commonmark_spec import normalise
from .fake_dom import FakeDocument, FakeElement, FakeNode, inner_html

PARSER = Parser()


class _Boxed(MarkdownView):
    """Boxes of two line breaks: many boundaries in short code."""

    code_lines = 2


def _is_box(node: FakeNode) -> bool:
    return isinstance(node, FakeElement) and node.attrs.get("class") == "sp-code-lines"


def code_elements(box: FakeElement) -> list[FakeElement]:
    found, stack = [], [box]
    while stack:
        el = stack.pop()
        kids = [k for k in el.children if isinstance(k, FakeElement)]
        if el.tag == "pre":
            found += [k for k in kids if k.tag == "code"]
        stack += kids
    return found


def check_boxes(box: FakeElement) -> int:
    """Every box in a code element starts where a line does (nothing before it, or
    a line break just before it), holds only text and spans, and no box is in
    another; the number of boxes."""
    count = 0
    for code in code_elements(box):
        before = ""
        for child in code.children:
            if _is_box(child):
                assert before == "" or before.endswith("\n"), (before[-20:], child.textContent)
                assert isinstance(child, FakeElement)
                assert not any(_is_box(k) for k in child.children)
                count += 1
            before += child.textContent
    return count


def streamed(kind: type[MarkdownView], text: str, cuts: list[int]) -> tuple[FakeElement, int]:
    doc = FakeDocument()
    box = doc.createElement("div")
    view = kind(doc, box, PARSER)
    boxes, pos = 0, 0
    for cut in sorted(cuts) + [len(text)]:
        view.feed(text[pos:cut])
        pos = cut
        boxes = max(boxes, check_boxes(box))
    view.close()
    check_boxes(box)
    # A page's view marks its text blocks dir="auto"; the one-shot render does not.
    assert normalise(inner_html(box).replace(' dir="auto"', "")) == normalise(
        render_html(text, id_prefix=view.stream.id_prefix))
    return box, boxes


LINES = ["def frame(pending):", "    rate = clamp(pending / 250, 20, 800)  # step",
         "    if rate > 400:", "        return 'fast'", "", "class A:", "    x = \"a\\nb\"",
         "    '''doc", "    more'''", "\tcount += 1", "é = '日本' + \"👩‍💻\""]
CODE = st.lists(st.sampled_from(LINES), min_size=1, max_size=14).map("\n".join)
FENCES = st.sampled_from(["```python\n{}\n```\n", "```\n{}\n```\n", "~~~js\n{}\n~~~\n",
                          "1. step\n\n   ```python\n   {}\n   ```\n", "    {}\n\nAfter.\n",
                          "> ```python\n> {}\n> ```\n"])


@settings(max_examples=150, deadline=None)
@given(FENCES, CODE, st.data())
def test_any_code_streamed_in_boxes_equals_the_one_shot_render(
        fence: str, code: str, data: st.DataObject) -> None:
    indent = "\n   " if fence.startswith("1.") else "\n> " if fence.startswith(">") else (
        "\n    " if fence.startswith("    ") else "\n")
    text = "Intro.\n\n" + fence.format(code.replace("\n", indent))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=25))
    streamed(_Boxed, text, cuts)


def test_a_long_block_streamed_in_small_pieces_has_boxes_of_about_its_limit() -> None:
    rng = random.Random(3)
    lines = [rng.choice(LINES) for _ in range(200)]
    # Highlighted, plain text, and open blocks whose unfinished line a parse ends
    # with a line break (a list item's fence, an indented block).
    for fence, indent in (("```python\n{}\n```\n", ""), ("```\n{}\n```\n", ""),
                          ("1. Run:\n\n   ```python\n{}\n   ```\n", "   "),
                          ("Code:\n\n{}\n\nAfter.\n", "    ")):
        text = fence.format("\n".join(indent + line for line in lines))
        cuts = list(range(0, len(text), 7))
        box, most = streamed(PageMarkdownView, text, cuts)
        # 200 lines, a box about a limit's worth of line breaks: a re-tokenized line's
        # text may be counted twice, and an open block's unfinished line grows in
        # front of its line break, where no box starts (between half and twice).
        limit = PageMarkdownView.code_lines
        assert 200 // limit // 2 <= most <= 2 * 200 // limit, fence
        assert check_boxes(box) == most
        # Never taken back out of the boxes: the code element holds boxes only.
        (code,) = code_elements(box)
        assert all(_is_box(child) for child in code.children), fence


def test_boxes_stay_when_the_line_after_the_boundary_is_re_tokenized() -> None:
    """The text child holding a box's last line break also starts the next line
    ("):\\n    re"); when "re" becomes the keyword "return", only the part in the
    next box is rewritten, the box before keeps its lines."""
    doc = FakeDocument()
    box = doc.createElement("div")
    view = _Boxed(doc, box, PARSER)
    view.feed("```python\ndef f(x):\n    y = 1\n    re")
    before = check_boxes(box)
    assert before >= 1
    view.feed("turn y\n")
    assert check_boxes(box) == before
    view.feed("```\n")
    view.close()
    check_boxes(box)
    assert normalise(inner_html(box)) == normalise(
        render_html("```python\ndef f(x):\n    y = 1\n    return y\n```\n",
                    id_prefix=view.stream.id_prefix))
