"""Footnotes: GFM-style references and notes, prefixed ids, any arrival order."""

from __future__ import annotations

from streampace.browser.markdown_dom import MarkdownView
from streampace.markdown import MarkdownStream, SetFootnotes, render_html

from .fake_dom import FakeDocument, element, inner_html

DOC = ("Water boils at 100 °C[^1] at sea level[^sea].\n\nSee also[^1].\n\n"
       "[^1]: At 1 atm.\n\n[^sea]: The *standard* pressure,\n    101.325 kPa.\n")


def test_references_link_to_notes_and_notes_link_back() -> None:
    html = render_html(DOC, id_prefix="m1-")
    assert '<sup class="footnote-ref"><a href="#m1-fn-1" id="m1-fnref-1-0">1</a></sup>' in html
    assert '<a href="#m1-fn-1" id="m1-fnref-1-1">1</a>' in html
    assert '<section class="footnotes"><ol>' in html
    assert '<li id="m1-fn-1">' in html and '<li id="m1-fn-sea">' in html
    assert 'href="#m1-fnref-1-0" class="footnote-backref"' in html
    assert "<em>standard</em>" in html and "101.325 kPa" in html
    # The notes come last, after every block of the message.
    assert html.rstrip().endswith("</section>")


def test_a_reference_without_a_note_stays_text() -> None:
    assert render_html("Claim[^9].") == "<p>Claim[^9].</p>\n"


def test_streamed_in_any_pieces_equals_one_shot_even_when_notes_come_last() -> None:
    one_shot = render_html(DOC)
    for step in (1, 3, 7, 50):
        stream = MarkdownStream()
        ops = []
        for i in range(0, len(DOC), step):
            ops += stream.feed(DOC[i:i + step])
        ops += stream.close()
        assert stream.to_html() == one_shot, step
        assert any(isinstance(op, SetFootnotes) for op in ops)


def test_ids_are_per_view_and_the_section_stays_last_in_the_dom() -> None:
    doc = FakeDocument()
    box = doc.createElement("div")
    views = [MarkdownView(doc, box, MarkdownStream().parser) for _ in range(2)]
    assert views[0].stream.id_prefix != views[1].stream.id_prefix
    view = views[0]
    for ch in DOC + "\nAfter the notes.\n":
        view.feed(ch)
    view.close()
    assert element(box.children[-1]).tag == "section"
    expected = render_html(DOC + "\nAfter the notes.\n", id_prefix=view.stream.id_prefix)
    assert inner_html(box) == expected
    notes = element(element(box.children[-1]).children[0]).children
    ids = [element(c).attrs.get("id") or "" for c in notes]
    assert all(i.startswith(view.stream.id_prefix) for i in ids)


def test_hostile_labels_make_safe_ids() -> None:
    html = render_html('x[^a"b<c>]\n\n[^a"b<c>]: n\n', id_prefix="p-")
    ids = [part.split('"')[0] for part in html.split('id="')[1:]]
    assert ids and all(c.isalnum() or c in "-_" for i in ids for c in i)
