"""Untrusted Markdown: raw HTML stays text, only safe URLs become links."""

from __future__ import annotations

import ast
from html.parser import HTMLParser
from pathlib import Path

import pytest
import streampace
from streampace.markdown import render_html
from streampace.markdown.safety import LINK_REL, is_safe_link, is_same_origin
from streampace.markdown.tree import MATHML_TAGS

from .xss_corpus import PAYLOADS

ALLOWED_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "code",
    "hr", "br", "em", "strong", "del", "a", "img", "table", "thead", "tbody", "tr", "th",
    "td", "input", "span", "div", "section", "sup",
} | MATHML_TAGS
ALLOWED_ATTRS = {"href", "title", "rel", "class", "src", "alt", "start", "align", "type",
                 "disabled", "checked", "id", "display", "mathvariant", "stretchy",
                 "movablelimits", "linethickness", "width", "columnalign", "encoding"}


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Collect:
    c = _Collect()
    c.feed(html)
    c.close()
    return c


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
@pytest.mark.parametrize("allow_images", [False, True])
def test_payload_renders_only_safe_elements(payload: str, allow_images: bool) -> None:
    html = render_html(payload, allow_images=allow_images)
    parsed = _parse(html)
    for tag, attrs in parsed.tags:
        assert tag in ALLOWED_TAGS, (tag, html)
        assert set(attrs) <= ALLOWED_ATTRS, (attrs, html)
        for name in ("href", "src"):
            if name in attrs:
                assert is_safe_link(attrs[name]), (attrs, html)
        if tag == "a" and not attrs.get("href", "").startswith("#"):
            assert attrs.get("rel") == LINK_REL  # in-page footnote links need none
        if "id" in attrs:  # footnote ids: a fixed alphabet, whatever the label
            assert attrs["id"] and all(c.isascii() and (c.isalnum() or c in "-_")
                                       for c in attrs["id"]), attrs
        if tag == "input":
            assert attrs.get("type") == "checkbox" and "disabled" in attrs
        if tag == "img" and not allow_images:
            assert is_same_origin(attrs["src"])
    # Whatever the payload tried, its call is still there to read, as text
    # (a fence's info string past its first word is not shown, by CommonMark).
    if "__xss" in payload and "&#" not in payload and "%" not in payload and (
            not payload.startswith("```")):
        seen = "".join(parsed.text) + " ".join(
            str(v) for _, a in parsed.tags for v in a.values())
        assert "__xss" in seen, html


def test_raw_html_is_literal_text() -> None:
    assert render_html("<b>hi</b> <script>x()</script>") == (
        "<p>&lt;b&gt;hi&lt;/b&gt; &lt;script&gt;x()&lt;/script&gt;</p>\n")


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JAVASCRIPT:alert(1)", " javascript:alert(1)", "java\tscript:x",
    "java\nscript:x", "\x01javascript:x", "%6Aavascript:x", "%256Aavascript:x", "data:text/html,x",
    "vbscript:x", "file:///etc/passwd", "jav&#x09;ascript:x".replace("&#x09;", "\t"),
])
def test_unsafe_urls_are_refused(url: str) -> None:
    assert not is_safe_link(url)


@pytest.mark.parametrize("url", [
    "https://example.com", "http://x.y/a?b#c", "mailto:a@b.c", "/rel/path", "rel", "#frag",
    "?q=1", "./a:b",
])
def test_safe_urls_are_kept(url: str) -> None:
    assert is_safe_link(url)


def test_unsafe_link_becomes_plain_text() -> None:
    html = render_html("[click](javascript:alert(1))")
    assert "<a" not in html and "click" in html


def test_links_get_rel_and_images_from_other_origins_become_links() -> None:
    html = render_html("[a](https://x.y) ![cat](https://img.example/cat.png) ![dog](/dog.png)")
    assert f'<a href="https://x.y" rel="{LINK_REL}">a</a>' in html
    assert ('<a href="https://img.example/cat.png" rel="noopener noreferrer nofollow"'
            ' class="sp-image-link">cat</a>') in html
    assert '<img src="/dog.png" alt="dog" />' in html
    assert "<img" not in render_html("![x](//evil.example/x.png)")
    assert "<img" not in render_html("![x](/\\evil.example/x.png)")
    allowed = render_html("![cat](https://img.example/cat.png)", allow_images=True)
    assert '<img src="https://img.example/cat.png" alt="cat" />' in allowed


def test_markdown_core_imports_no_io() -> None:
    forbidden = {"js", "pyodide", "asyncio", "socket"}
    for path in sorted((Path(streampace.__file__).parent / "markdown").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
        assert not found & forbidden, path.name
