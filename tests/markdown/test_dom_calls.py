"""The Markdown view's element building through `DomCalls` (browser/dom_calls.py):
an element is made with its attributes in one call, children go in with one."""

from __future__ import annotations

from typing import Any

from streampace.browser.dom_calls import DomCalls, doc_calls
from streampace.browser.markdown_dom import MarkdownView, PageMarkdownView
from streampace.markdown import MarkdownStream, render_html

from .fake_dom import FakeDocument, FakeElement, inner_html


class Recorded:
    """`doc_calls(doc)`, each call written down: (name, tag or element, args)."""

    def __init__(self, doc: FakeDocument) -> None:
        self.log: list[tuple[str, Any, tuple]] = []
        real = doc_calls(doc)

        def element(tag: str, *attributes: str) -> Any:
            self.log.append(("element", tag, attributes))
            return real.element(tag, *attributes)

        def append(parent: Any, *children: Any) -> None:
            self.log.append(("append", parent, children))
            real.append(parent, *children)

        def set_attribute(el: Any, name: str, value: str) -> None:
            self.log.append(("set_attribute", el, (name, value)))
            real.set_attribute(el, name, value)

        def append_data(node: Any, text: str) -> None:
            self.log.append(("append_data", node, (text,)))
            real.append_data(node, text)

        self.calls = DomCalls(element, append, set_attribute, append_data)

    def named(self, name: str) -> list[tuple[str, Any, tuple]]:
        return [entry for entry in self.log if entry[0] == name]


def _view(cls: type[MarkdownView] = MarkdownView) -> tuple[FakeElement, MarkdownView, Recorded]:
    doc = FakeDocument()
    box = doc.createElement("div")
    recorded = Recorded(doc)
    return box, cls(doc, box, MarkdownStream().parser, recorded.calls), recorded


def test_a_code_lines_token_spans_are_made_with_their_class_in_one_call_each() -> None:
    box, view, recorded = _view()
    view.feed("```python\nx = 1\n")
    recorded.log.clear()
    view.feed("def f(a, b): return a + b  # sum\n")
    spans = [args for name, tag, args in recorded.named("element") if tag == "span"]
    assert len(spans) >= 4
    assert all(args[0] == "class" and args[1].startswith("sp-hl-") for args in spans), spans
    assert recorded.named("set_attribute") == []  # nothing set on an element after it is made
    into = [parent.tag for _name, parent, _kids in recorded.named("append")]
    assert into.count("code") == 1  # the line's new tokens go in together
    assert into.count("span") == len(spans)  # each span's text, made with it
    assert 'class="sp-hl-k">def</span>' in inner_html(box)


def test_a_page_views_blocks_get_dir_auto_when_they_are_made() -> None:
    box, view, recorded = _view(PageMarkdownView)
    view.feed("Some *text* here.\n\n- one\n- two\n\n")
    made = {tag: args for name, tag, args in recorded.named("element")}
    assert made["p"] == ("dir", "auto") and made["ul"] == ("dir", "auto")
    assert made["em"] == () and made["li"] == ()
    assert recorded.named("set_attribute") == []
    assert '<p dir="auto">Some <em>text</em> here.</p>' in inner_html(box)


def test_a_growing_paragraphs_text_is_one_append_data_a_frame() -> None:
    box, view, recorded = _view()
    view.feed("Plain words ")
    recorded.log.clear()
    for piece in ("grow ", "one ", "frame ", "at a time"):
        view.feed(piece)
    # A trailing blank waits for the next word (it may end the paragraph's text).
    assert [args for name, _node, args in recorded.log] == [
        (" grow",), (" one",), (" frame",), (" at a time",)]
    assert {name for name, _node, _args in recorded.log} == {"append_data"}
    assert inner_html(box) == "<p>Plain words grow one frame at a time</p>\n"


def test_an_unsafe_link_is_made_safe_on_the_element_it_is_made_with() -> None:
    box, view, recorded = _view()
    # The parser refuses the URL itself; the view's own check is the second line:
    # a tree node handed to it directly with one is built with "#".
    mirror = view._build(("a", (("href", "javascript:alert(1)"),), ("x",)))
    assert recorded.named("element")[-1][1:] == ("a", ("href", "#"))
    assert isinstance(mirror.el, FakeElement) and mirror.el.attrs["href"] == "#"


def test_the_view_shows_what_a_full_render_shows_through_either_calls() -> None:
    text = ("# Title\n\nA [link](https://example.org) and `code`.\n\n| a | b |\n|---|:-:|\n"
            "| 1 | 2 |\n\n```js\nconst a = 1; // x\n```\n\n> quote\n\n1. one\n2. two\n")
    for calls in ("doc", "recorded"):
        doc = FakeDocument()
        box = doc.createElement("div")
        view = MarkdownView(doc, box, MarkdownStream().parser,
                            Recorded(doc).calls if calls == "recorded" else None)
        for ch in text:
            view.feed(ch)
        view.close()
        assert inner_html(box).replace('<button type="button" class="sp-copy" '
                                       'aria-label="Copy code">Copy</button>', "") == \
            render_html(text), calls
