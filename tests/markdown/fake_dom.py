"""A minimal DOM (the calls `markdown_dom.MarkdownView` makes) for CPython tests.

Only the methods our builders use exist, so a call to anything else (innerHTML
included) fails loudly. `outer_html` serialises like `tree.to_html` for
comparison; `creations` counts nodes made.
"""

from __future__ import annotations

import types

from streampace.markdown.tree import _OPEN_NL, BLOCK_TAGS, VOID_TAGS


class FakeNode:
    parent: FakeElement | None = None

    @property
    def textContent(self) -> str:  # noqa: N802 (DOM name)
        raise NotImplementedError  # each kind of node has its own

    def remove(self) -> None:
        if self.parent is not None:
            self.parent.children.remove(self)
            self.parent = None

    def replaceWith(self, other: FakeNode) -> None:  # noqa: N802 (DOM name)
        parent = self.parent
        assert parent is not None
        i = parent.children.index(self)
        other.remove()
        parent.children[i] = other
        other.parent = parent
        self.parent = None

    def after(self, other: FakeNode) -> None:
        parent = self.parent
        assert parent is not None
        other.remove()
        parent.children.insert(parent.children.index(self) + 1, other)
        other.parent = parent


class FakeText(FakeNode):
    rewrites = 0  # `data` set whole, over every Text node (tests read differences)

    def __init__(self, data: str) -> None:
        self._data = data

    @property
    def data(self) -> str:
        return self._data

    @data.setter
    def data(self, value: str) -> None:
        FakeText.rewrites += 1
        self._data = value

    def appendData(self, piece: str) -> None:  # noqa: N802
        self._data += piece

    # Offsets and counts in UTF-16 code units, as the DOM's.
    def insertData(self, offset: int, piece: str) -> None:  # noqa: N802
        units = self._data.encode("utf-16-le")
        assert 0 <= offset <= len(units) // 2
        self._data = (units[:2 * offset].decode("utf-16-le") + piece
                      + units[2 * offset:].decode("utf-16-le"))

    def deleteData(self, offset: int, count: int) -> None:  # noqa: N802
        units = self._data.encode("utf-16-le")
        assert offset >= 0 and offset + count <= len(units) // 2
        self._data = (units[:2 * offset].decode("utf-16-le")
                      + units[2 * (offset + count):].decode("utf-16-le"))

    @property
    def textContent(self) -> str:  # noqa: N802
        return self.data


class FakeElement(FakeNode):
    namespace = "http://www.w3.org/1999/xhtml"
    one_shot = ""  # tests may attach the expected render here

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.attrs: dict[str, str] = {}
        self.children: list[FakeNode] = []
        # CSSOM properties the page's view sets (PageMarkdownView): kept, not applied.
        self.style = types.SimpleNamespace()

    def setAttribute(self, name: str, value: str) -> None:  # noqa: N802
        self.attrs[name] = value

    def removeAttribute(self, name: str) -> None:  # noqa: N802
        self.attrs.pop(name, None)

    def append(self, *nodes: FakeNode) -> None:
        for node in nodes:
            node.remove()
            self.children.append(node)
            node.parent = self

    def insertBefore(self, node: FakeNode, ref: FakeNode) -> None:  # noqa: N802
        node.remove()
        self.children.insert(self.children.index(ref), node)
        node.parent = self

    def replaceChildren(self, *nodes: FakeNode) -> None:  # noqa: N802
        for child in list(self.children):
            child.remove()
        self.append(*nodes)

    @property
    def textContent(self) -> str:  # noqa: N802
        return "".join(c.textContent for c in self.children)


def element(node: FakeNode) -> FakeElement:
    """`node`, which a test expects to be an element."""
    assert isinstance(node, FakeElement), node
    return node


class FakeDocument:
    def __init__(self) -> None:
        self.creations = 0

    def createElement(self, tag: str) -> FakeElement:  # noqa: N802
        self.creations += 1
        return FakeElement(tag)

    def createElementNS(self, ns: str, tag: str) -> FakeElement:  # noqa: N802
        self.creations += 1
        el = FakeElement(tag)
        el.namespace = ns
        return el

    def createTextNode(self, data: str) -> FakeText:  # noqa: N802
        self.creations += 1
        return FakeText(data)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def is_chrome(node: FakeNode) -> bool:
    """View chrome that is not part of the rendered tree (the copy button)."""
    return isinstance(node, FakeElement) and node.tag == "button" and (
        node.attrs.get("class") == "sp-copy")


def is_layout_box(node: FakeNode) -> bool:
    """A section of a view's blocks or its block holder, or a code block's line box
    (markdown_dom.MarkdownView with `section_blocks`, `code_lines`): layout chrome,
    serialised as its children."""
    if not isinstance(node, FakeElement):
        return False
    if node.tag == "span":
        return node.attrs.get("class") == "sp-code-lines"
    return node.tag == "div" and (
        node.attrs.get("class") in ("sp-section", "sp-section sp-sealed", "sp-section-blocks"))


def outer_html(node: FakeNode) -> str:
    if isinstance(node, FakeText):
        return _escape(node.data)
    assert isinstance(node, FakeElement)
    if is_chrome(node):
        return ""
    if is_layout_box(node):
        return inner_html(node)
    out = ["<" + node.tag]
    for name, value in node.attrs.items():
        out.append(f' {name}="{_escape(value).replace(chr(34), "&quot;")}"')
    if node.tag in VOID_TAGS:
        out.append(" />\n" if node.tag in BLOCK_TAGS or node.tag == "br" else " />")
        return "".join(out)
    out.append(">")
    kids = [c for c in node.children if not is_chrome(c)]
    first = kids[0] if kids else None
    # Adjacent text nodes (a long text split across nodes) serialise as one.
    if node.tag in _OPEN_NL or (node.tag == "li" and isinstance(first, FakeElement)
                                and first.tag in BLOCK_TAGS):
        out.append("\n")
    out.extend(outer_html(c) for c in kids)
    out.append(f"</{node.tag}>")
    if node.tag in BLOCK_TAGS:
        out.append("\n")
    return "".join(out)


def inner_html(el: FakeElement) -> str:
    return "".join(outer_html(c) for c in el.children)
