"""The rendered form of Markdown: a small immutable element tree.

A node is either a `str` (text) or an `Element` tuple `(tag, attrs, children)`
with `attrs` a tuple of `(name, value)` pairs and `children` a tuple of nodes.
Tuples compare by value in C, so a renderer can skip an unchanged subtree with
one `==`. Both `to_html` and the browser's DOM builder consume this tree; the
tags and attributes in it are a closed set chosen by `parser.py`, already
sanitised, so neither consumer has to judge stream content.
"""

from __future__ import annotations

from typing import Union

__all__ = ["BLOCK_TAGS", "MATHML_TAGS", "VOID_TAGS", "Attrs", "Element", "Node", "append_nodes",
           "element", "text_of", "to_html"]

Node = Union[str, "Element"]
Element = tuple  # (tag: str, attrs: tuple[tuple[str, str], ...], children: tuple[Node, ...])
Attrs = tuple[tuple[str, str], ...]

VOID_TAGS = frozenset({"hr", "br", "img", "input"})
# MathML Core elements (math.py builds them; the DOM creates them in the MathML namespace).
MATHML_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "msup", "msub", "msubsup", "mfrac",
    "msqrt", "mroot", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle",
    "mpadded", "mphantom", "semantics", "annotation", "merror",
})
# Elements after whose closing tag the HTML form puts a newline (markdown-it's layout).
BLOCK_TAGS = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "ul", "ol", "li", "pre", "hr",
    "table", "thead", "tbody", "tr", "th", "td", "div", "section",
})
# Containers whose opening tag is followed by a newline.
_OPEN_NL = frozenset({"blockquote", "ul", "ol", "table", "thead", "tbody", "tr"})


def element(tag: str, attrs: tuple = (), children: tuple = ()) -> Element:
    return (tag, attrs, children)


def text_of(node: Node) -> str:
    """The text content of `node` (what a reader sees, without markup): read
    with a stack, not by recursion, whatever the nesting."""
    out: list[str] = []
    stack: list[Node] = [node]
    while stack:
        top = stack.pop()
        if isinstance(top, str):
            out.append(top)
        else:
            stack.extend(reversed(top[2]))
    return "".join(out)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attr(text: str) -> str:
    return _escape(text).replace('"', "&quot;")


def _write(node: Node, out: list[str]) -> None:
    if isinstance(node, str):
        out.append(_escape(node))
        return
    tag, attrs, children = node
    out.append("<" + tag)
    for name, value in attrs:
        out.append(f' {name}="{_escape_attr(value)}"')
    if tag in VOID_TAGS:
        out.append(" />\n" if tag in BLOCK_TAGS or tag == "br" else " />")
        return
    out.append(">")
    if tag in _OPEN_NL or (tag == "li" and children and not isinstance(children[0], str)
                           and children[0][0] in BLOCK_TAGS):
        out.append("\n")
    for child in children:
        _write(child, out)
    out.append(f"</{tag}>")
    if tag in BLOCK_TAGS:
        out.append("\n")


def to_html(nodes: list[Node] | tuple[Node, ...]) -> str:
    """Serialise top-level block nodes as HTML (text and attribute values escaped)."""
    out: list[str] = []
    for node in nodes:
        _write(node, out)
    return "".join(out)


def append_nodes(kids: list[Node], more: list[Node] | tuple[Node, ...]) -> None:
    """Append `more` to `kids`, joining adjacent text as one parse would."""
    for i, node in enumerate(more):
        if i == 0 and isinstance(node, str) and kids and isinstance(kids[-1], str):
            kids[-1] = kids[-1] + node
        else:
            kids.append(node)
