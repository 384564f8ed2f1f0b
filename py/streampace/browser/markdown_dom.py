"""DOM for streamed Markdown: applies `MarkdownStream` operations to an element.

Our own element builders only: `createElement`, `createTextNode`, `append`,
`appendData`, `setAttribute` with the closed set of tags and attributes the
parser emits (`streampace.markdown.parser`). Nothing is ever parsed as HTML.

Every DOM node has a Python mirror holding the tree node it shows, so an update
is a walk over the tree with one `==` per unchanged subtree: only what differs
is touched (text grows by `appendData`, a changed attribute is set in place, a
different element is replaced). Final blocks keep their elements: the open
tail's element becomes the final block's element, patched (usually not at
all). `created` counts DOM nodes built, for the benchmark.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from streampace.browser.dom_calls import DomCalls, doc_calls
from streampace.browser.ffi import IN_BROWSER, create_proxy, js
from streampace.markdown import stream as md
from streampace.markdown.parser import Parser, default_parser
from streampace.markdown.safety import is_safe_link
from streampace.markdown.tree import MATHML_TAGS
from streampace.pacing.graphemes import utf16_units

__all__ = ["MarkdownView", "PageMarkdownView", "RebuildView", "release_copy_handler",
           "clipboard_text"]

# Built at import, so a memory snapshot of the imported page modules holds it
# ready (scripts/make_snapshot.mjs): no parser set-up at boot.
default_parser()

_TEXT_NODE_LIMIT = 4096  # as in conversation/view_plan.py: Blink's appendData copies the whole node
_URL_ATTRS = ("href", "src")
_MATHML_NS = "http://www.w3.org/1998/Math/MathML"
_view_ids = itertools.count(1)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Blocks a section may end with: no margin of a child adjoins their bottom edge
# (a list's or a quote's last paragraph's does; a math block's own margin is
# wider than a paragraph's), so the stylesheet's one edge rule (the last block's
# bottom margin is 0, see `MarkdownView`) leaves the flow's spacing as it was.
_SECTION_ENDS = frozenset({"p", "pre", "table", "hr", *_HEADINGS})

# One click handler for every view's copy buttons (event delegation on each
# view's container): a single proxy per page, owned here, whatever the number
# of messages; `release_copy_handler()` destroys it.
_copy_proxy: Any = None


# What a copy button leaves out (issue 33 item 8): characters that show nothing in the
# block but act where the text is pasted — C0 controls but tab and newline (ESC ends
# a terminal's bracketed paste, so what follows runs as typed commands; backspace
# hides what precedes it), DEL, C1 controls, and the bidirectional embeddings,
# overrides and isolates that reorder how code reads ("Trojan Source").  Joiners
# and variation selectors stay: emoji and scripts need them.
_INVISIBLE_ACTIVE = dict.fromkeys(
    [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0),
     *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def clipboard_text(text: str) -> str:
    """The text a copy button puts on the clipboard: what the block shows, without
    the controls that show nothing there but act where it is pasted."""
    return text.translate(_INVISIBLE_ACTIVE)


def _on_copy_click(event: Any) -> None:
    target = event.target
    button = target.closest("button.sp-copy") if hasattr(target, "closest") else None
    if not button:
        return
    code = button.parentElement.querySelector("code") if button.parentElement else None
    if not code:
        return
    # The code element's text (highlight spans hold only text), less what shows
    # nothing but acts where it is pasted.
    clipboard = getattr(js.navigator, "clipboard", None)
    if clipboard is not None:
        clipboard.writeText(clipboard_text(code.textContent))
    button.setAttribute("data-copied", "")


def _copy_handler() -> Any:
    global _copy_proxy
    if _copy_proxy is None:
        if not IN_BROWSER:  # CPython tests: no browser events
            return None
        _copy_proxy = create_proxy(_on_copy_click)
    return _copy_proxy


def release_copy_handler() -> None:
    """Destroy the shared click proxy (views attached to it stop copying)."""
    global _copy_proxy
    if _copy_proxy is not None:
        _copy_proxy.destroy()
        _copy_proxy = None


def _safe_value(name: str, value: str) -> str:
    # Defence in depth: the parser already refused unsafe URLs.
    return "#" if name in _URL_ATTRS and not is_safe_link(value) else value


class _Text:
    """A text node (a run of Text nodes once it grows: see `_grow`)."""

    __slots__ = ("node", "el", "last", "size", "ascii", "extra")

    def __init__(self, node: str, el: Any) -> None:
        self.node = node
        self.el = el
        self.last = el
        self.size = len(node)
        self.ascii = node.isascii()  # whether `last` holds ASCII only
        self.extra: list[Any] = []

    def remove(self) -> None:
        for node in self.extra:
            node.remove()
        self.el.remove()


class _Elem:
    __slots__ = ("node", "el", "kids")

    def __init__(self, node: tuple, el: Any, kids: list) -> None:
        self.node = node
        self.el = el
        self.kids = kids

    def remove(self) -> None:
        self.el.remove()


class _Code(_Elem):
    """A code block's `code` element whose children go into line boxes (see
    `MarkdownView.code_lines`): `box`, where the next ones go (the last box, or the
    element itself), holds `lines` line breaks."""

    __slots__ = ("box", "lines")

    def __init__(self, node: tuple, el: Any, box: Any) -> None:
        super().__init__(node, el, [])
        self.box = box
        self.lines = 0


class _CodeText(_Text):
    """A text child of a `_Code`: growing, it may go on in a new line box. `kept`:
    its text in boxes before that one (it ends with a line break); `open_from`:
    its first node there (0: `el`, i: `extra[i - 1]`)."""

    __slots__ = ("code", "kept", "open_from")

    def __init__(self, node: str, el: Any, code: _Code) -> None:
        super().__init__(node, el)
        self.code = code
        self.kept = ""
        self.open_from = 0


class MarkdownView:
    """One message body rendered from Markdown deltas into `container`.

    With `section_blocks` > 0 the message's blocks go into sections of that many
    final blocks: `div.sp-section > div.sp-section-blocks > blocks`, in order, the
    footnotes after them. A section is opened only when the open one is full, no
    open block is shown and its last block is one of `_SECTION_ENDS`, so no element
    ever moves; the open blocks are always in the last section. Why: see
    `PageMarkdownView`.

    With `frames` (a FrameHost: `request_frame`) a finished section other than the
    first is sealed (class `sp-section sp-sealed`; the stylesheet makes it
    `content-visibility: auto`) two frames after it was finished, so the browser
    has laid it out since its last change and remembers its real size
    (`contain-intrinsic-size: auto`): skipped while far from the view, it keeps
    that size, and nothing moves when it comes back. Sealed in the frame it was
    finished in, Chromium skips it at the size it had the frame before. A final
    block changed later (`UpdateBlock`) unseals its section until it is laid out
    again. The first section is never sealed: a skipped section is its own
    formatting context, and a top margin inside the answer's first block (a
    quote's paragraph) would stop collapsing with the page's.

    With `code_lines` > 0 a code block's text goes into line boxes,
    `code > span.sp-code-lines`, a new one once the last holds `code_lines` line
    breaks; a box always ends just after a line break, so with the stylesheet's
    `display: block` the lines show as they would in one box. Why: see
    `PageMarkdownView`.
    """

    section_blocks = 0  # 0: every block a child of the container
    code_lines = 0  # 0: a code block's text directly in its code element

    def __init__(self, doc: Any, container: Any, parser: Parser,
                 calls: DomCalls | None = None) -> None:
        self.doc = doc
        # Elements are made, given their attributes and appended through `calls`
        # (dom_calls.py: in the page, one crossing each); text nodes are made
        # through `createTextNode`, bound once (a lookup is a new method proxy).
        self._calls = calls if calls is not None else doc_calls(doc)
        self._text_node = doc.createTextNode
        self.container = container
        # Footnote ids are prefixed per view: no clash with the page or another message.
        self.stream = md.MarkdownStream(parser=parser, id_prefix=f"spmd{next(_view_ids)}-")
        self.notes: Any = None  # the footnotes section's mirror (always last)
        self.final: list[Any] = []
        self.tail: list[Any] = []
        self._listening: Any = None  # the click proxy attached to `container`
        self.created = 0   # DOM nodes created (elements and text nodes)
        self.replaced = 0  # shown nodes replaced by a different element (rebuilt)
        self.text_ops = 0  # appendData / data writes
        # Page levels for the message's headings (reading.outline.HeadingOutline,
        # set by the renderer); None: the source levels.
        self.outline: Any = None
        self._section: Any = None  # the open section's block holder (section_blocks > 0)
        self._section_box: Any = None  # and the section itself
        self._section_final = 0    # final blocks in it
        self.frames: Any = None    # FrameHost for sealing finished sections (None: never)
        self._boxes: list[Any] = []       # every section, in order
        self._block_box: list[int] = []   # the section of each final block (index in _boxes)
        self._sealed: set[int] = set()    # sections sealed
        self._fresh: list[int] = []       # finished since the last frame callback
        self._aged: list[int] = []        # finished before it: sealed at the next one
        self._frame_asked: Any = None     # the pending request_frame handle

    # -- public ------------------------------------------------------------
    def feed(self, delta: str) -> None:
        self.apply(self.stream.feed(delta))

    def close(self) -> None:
        self.apply(self.stream.close())

    def apply(self, ops: list[md.Op]) -> None:
        for op in ops:
            if isinstance(op, md.AppendCode):
                self._append_code(op.text, op.node)
            elif isinstance(op, md.SetTail):
                self._set_tail(op.nodes)
            elif isinstance(op, md.FinalBlock):
                if self.tail:
                    mirror = self._patch(self.tail.pop(0), op.node)
                else:
                    mirror = self._build(op.node)
                    self._append_flow(mirror.el)
                self.final.append(mirror)
                self._section_final += 1
                if self.section_blocks:
                    self._block_box.append(len(self._boxes) - 1)
                if self.outline is not None and op.node[0] in _HEADINGS:
                    self.outline.add(_HEADINGS[op.node[0]])
            elif isinstance(op, md.SetFootnotes):
                self._set_notes(op.node)
            elif isinstance(op, md.UpdateBlock):
                self.final[op.index] = self._patch(self.final[op.index], op.node)
                if self.section_blocks:
                    self._unseal(self._block_box[op.index])

    def block_elements(self) -> list[Any]:
        return [m.el for m in self.final]

    def destroy(self) -> None:
        """Detach the copy-button handler from the container."""
        if self._listening is not None:
            self.container.removeEventListener("click", self._listening)
            self._listening = None
        if self._frame_asked is not None:
            self.frames.cancel_frame(self._frame_asked)
            self._frame_asked = None

    # -- ops ---------------------------------------------------------------
    def _set_tail(self, nodes: tuple) -> None:
        tail = self.tail
        for i, node in enumerate(nodes):
            if i < len(tail):
                tail[i] = self._patch(tail[i], node)
            else:
                mirror = self._build(node)
                self._append_flow(mirror.el)
                tail.append(mirror)
        for extra in tail[len(nodes):]:
            extra.remove()
        del tail[len(nodes):]
        if not tail and self._section is not None and not self._section_final:
            # It held only open blocks, now gone (a line became a definition):
            # no empty section is left behind.
            self._section_box.remove()
            self._boxes.pop()
            self._section = self._section_box = None

    def _append_flow(self, el: Any) -> None:
        """Append a block element to the message's flow (before the footnotes)."""
        if self.section_blocks:
            self._calls.append(self._open_section(), el)
        else:
            self._append_to_container(el)

    def _append_to_container(self, el: Any) -> None:
        if self.notes is not None:
            self.container.insertBefore(el, self.notes.el)
        else:
            self._calls.append(self.container, el)

    def _open_section(self) -> Any:
        """The section the next block goes into: the open one, or a new one once
        the open one holds `section_blocks` final blocks and no open block."""
        if self._section is None or (
                self._section_final >= self.section_blocks and not self.tail
                and self.final[-1].node[0] in _SECTION_ENDS):
            if self._section is not None:
                self._finished(len(self._boxes) - 1)
            section = self._calls.element("div", "class", "sp-section")
            blocks = self._calls.element("div", "class", "sp-section-blocks")
            self._style_section(blocks)
            self._calls.append(section, blocks)
            self._append_to_container(section)
            self._section, self._section_box = blocks, section
            self._boxes.append(section)
            self._section_final = 0
            self.created += 2
        return self._section

    # -- sealing finished sections (see the class's doc) -------------------
    def _finished(self, index: int) -> None:
        """Section `index` holds its last block: sealed two frame callbacks on."""
        if index == 0 or self.frames is None:
            return
        self._fresh.append(index)
        self._ask_frame()

    def _unseal(self, index: int) -> None:
        """A block of section `index` changed: shown whole again, sealed anew later."""
        if index in self._sealed:
            self._sealed.discard(index)
            self._calls.set_attribute(self._boxes[index], "class", "sp-section")
        elif index not in self._fresh and index not in self._aged:
            return  # open, or the first section: never sealed
        if index in self._aged:
            self._aged.remove(index)
        if index not in self._fresh:
            self._fresh.append(index)
        self._ask_frame()

    def _ask_frame(self) -> None:
        if self._frame_asked is None:
            self._frame_asked = self.frames.request_frame(self._on_frame)

    def _on_frame(self) -> None:
        """Seal what was finished before the previous callback: a frame's rendering
        (its layout, the size the browser remembers) has run since."""
        self._frame_asked = None
        for index in self._aged:
            self._calls.set_attribute(self._boxes[index], "class", "sp-section sp-sealed")
            self._sealed.add(index)
        self._aged, self._fresh = self._fresh, []
        if self._aged:
            self._ask_frame()

    def _style_section(self, blocks: Any) -> None:
        """Styles the page's view gives a section's block holder (none here)."""

    def _set_notes(self, node: Any) -> None:
        if node is None:
            if self.notes is not None:
                self.notes.remove()
                self.notes = None
        elif self.notes is None:
            self.notes = self._build(node)
            self.container.append(self.notes.el)
        else:
            self.notes = self._patch(self.notes, node)

    def _append_code(self, text: str, new_node: Any) -> None:
        pre = self.tail[-1]
        code = pre.kids[0]
        if code.kids:
            self._grow(code.kids[0], code.kids[0].node + text)
        elif isinstance(code, _Code):
            self._append_kids(code, [self._build_kid(code, text)])
        else:
            mirror = self._build(text)
            self._calls.append(code.el, mirror.el)
            code.kids.append(mirror)
        code.node = new_node[2][0]
        pre.node = new_node

    # -- tree -> DOM -------------------------------------------------------
    def _build(self, node: Any) -> Any:
        self.created += 1
        if isinstance(node, str):
            return _Text(node, self._text_node(node))
        tag, attrs, children = node
        pairs = self._attribute_pairs(tag, attrs)
        if tag in MATHML_TAGS:
            el = self.doc.createElementNS(_MATHML_NS, tag)
            for i in range(0, len(pairs), 2):
                self._calls.set_attribute(el, pairs[i], pairs[i + 1])
        elif tag in _HEADINGS and self.outline is not None:
            # The tree keeps the source level (patching compares trees); the
            # element has the page's (a final heading is never rebuilt).
            el = self._calls.element(f"h{self.outline.level(_HEADINGS[tag])}", *pairs)
        else:
            el = self._calls.element(tag, *pairs)
        if tag == "pre":
            self._copy_button(el)
            if self.code_lines:
                kids = [self._build_code(child) for child in children]
                self._calls.append(el, *[k.el for k in kids])
                return _Elem(node, el, kids)
        kids = [self._build(child) for child in children]
        if kids:
            self._calls.append(el, *[k.el for k in kids])
        return _Elem(node, el, kids)

    # -- a code block's line boxes (see `code_lines`) -----------------------
    def _build_code(self, node: Any) -> Any:
        """A code block's child: its `code` element, with line boxes."""
        if isinstance(node, str) or node[0] != "code":
            return self._build(node)
        tag, attrs, children = node
        el = self._calls.element(tag, *self._attribute_pairs(tag, attrs))
        box = self._new_box()
        self._calls.append(el, box)
        code = _Code(node, el, box)
        self.created += 1
        self._append_kids(code, [self._build_kid(code, child) for child in children])
        return code

    def _new_box(self) -> Any:
        self.created += 1
        return self._calls.element("span", "class", "sp-code-lines")

    def _build_kid(self, code: _Code, node: Any) -> Any:
        if isinstance(node, str):
            self.created += 1
            return _CodeText(node, self._text_node(node), code)
        return self._build(node)

    def _append_kids(self, code: _Code, kids: list[Any]) -> None:
        """`kids` after the code's children, in its last box; a text child that
        fills the box goes on in a new one (from where `_box_edge` says)."""
        shown: list[Any] = []
        for kid in kids:
            shown.append(kid.el)
            cut = self._box_edge(code, kid.node) if isinstance(kid, _CodeText) else 0
            if cut:
                self._calls.append(code.box, *shown)
                shown = []
                kid.el.data = kid.node[:cut]
                self._go_on_in_new_box(kid, kid.node[:cut], kid.node[cut:])
        if shown:
            self._calls.append(code.box, *shown)
        code.kids.extend(kids)

    def _box_edge(self, code: _Code, text: str) -> int:
        """Counts the line breaks of `text`, appended to the code's last box, into
        it, and says where in `text` a new box starts once the box is full: just
        after its last line break that something follows (a parse ends an open
        block's unfinished line with one, which a complete line does not end
        there); 0: not in this text."""
        if "\n" not in text:
            return 0
        code.lines += text.count("\n")
        if code.lines < self.code_lines:
            return 0
        return text.rfind("\n", 0, len(text) - 1) + 1

    def _go_on_in_new_box(self, text: _CodeText, kept: str, rest: str) -> None:
        """`text`, its code's last child, shown as `kept` so far, goes on with
        `rest` in a new last box (an empty Text node there when it is "")."""
        code = text.code
        node = self._text_node(rest)
        code.box = self._new_box()
        code.lines = 0
        self._calls.append(code.box, node)
        self._calls.append(code.el, code.box)
        text.extra.append(node)
        text.kept = kept
        text.open_from = len(text.extra)
        text.last = node
        text.size = len(rest)
        text.ascii = rest.isascii()
        self.created += 1

    def _rewrite_boxed(self, text: _CodeText, new: str) -> bool:
        """`text`, in more than one box, is now `new`, not grown: only its part in
        the last box is rewritten when what the earlier ones show stays (a
        highlighted line's text after the line break before it, re-tokenized).
        False: it is not in more than one box any more."""
        if not new.startswith(text.kept):
            self._unbox(text.code)
            return False
        nodes = [text.el, *text.extra]
        first = nodes[text.open_from]
        for node in nodes[text.open_from + 1:]:
            node.remove()
        del text.extra[text.open_from:]
        rest = new[len(text.kept):]
        first.data = rest
        text.last = first
        text.size = len(rest)
        text.ascii = rest.isascii()
        return True

    def _unbox(self, code: _Code) -> None:
        """Every child of `code` directly in it again, and the next ones too until
        a line break fills a new box: what an earlier box shows changed (never
        seen from the parser; this keeps the lines right whatever comes)."""
        nodes: list[Any] = []
        for kid in code.kids:
            nodes.append(kid.el)
            if isinstance(kid, _Text):
                nodes += kid.extra
            if type(kid) is _CodeText:
                kid.kept, kid.open_from = "", 0
        code.box = code.el
        code.lines = 0
        code.el.replaceChildren(*nodes)

    def _attribute_pairs(self, tag: str, attrs: tuple) -> list[str]:
        """A `tag` element's attributes as name, value, ...: the tree's, then the page's."""
        pairs: list[str] = []
        for name, value in attrs:
            pairs += (name, _safe_value(name, value))
        pairs += self._page_attributes(tag)
        return pairs

    def _page_attributes(self, tag: str) -> tuple[str, ...]:
        """Attributes (name, value, ...) a page's view adds to a `tag` element (none here)."""
        return ()

    def _copy_button(self, pre: Any) -> None:
        """A copy button for a code block: view chrome, not part of the tree
        (it sits before the code element; the tree's patching never sees it)."""
        button = self._calls.element("button", "type", "button", "class", "sp-copy",
                                     "aria-label", "Copy code")
        self._calls.append(button, self._text_node("Copy"))
        self._calls.append(pre, button)
        self.created += 2
        if self._listening is None:
            handler = _copy_handler()
            if handler is not None:
                self.container.addEventListener("click", handler)
                self._listening = handler

    def _set_attr(self, el: Any, name: str, value: str) -> None:
        self._calls.set_attribute(el, name, _safe_value(name, value))

    def _patch(self, mirror: Any, new: Any) -> Any:
        old = mirror.node
        if old is new or old == new:
            return mirror
        if isinstance(new, str):
            if isinstance(mirror, _Text):
                self._grow(mirror, new)
                return mirror
        elif isinstance(mirror, _Elem) and old[0] == new[0]:
            if old[1] != new[1]:
                self._patch_attrs(mirror.el, old[1], new[1])
            self._patch_kids(mirror, new[2])
            mirror.node = new
            return mirror
        fresh = self._build(new)
        self.replaced += 1
        if type(mirror) is _CodeText and mirror.kept:
            self._unbox(mirror.code)
        if isinstance(mirror, _Text):
            for node in mirror.extra:
                node.remove()
        mirror.el.replaceWith(fresh.el)
        return fresh

    def _patch_attrs(self, el: Any, old: tuple, new: tuple) -> None:
        before = dict(old)
        for name, value in new:
            if before.pop(name, None) != value:
                self._set_attr(el, name, value)
        for name in before:
            el.removeAttribute(name)

    def _patch_kids(self, mirror: _Elem, children: tuple) -> None:
        kids = mirror.kids
        keep = min(len(kids), len(children))
        start = 0
        old = mirror.node[2]
        if keep > 8 and old[:keep - 1] == children[:keep - 1]:
            # Children shown so far are usually the same objects (a growing
            # list, table or code block): one C-level comparison, identity
            # first, skips them instead of a Python loop over all of them.
            start = keep - 1
        for i in range(start, keep):
            kids[i] = self._patch(kids[i], children[i])
        if isinstance(mirror, _Code) and any(
                type(kid) is _CodeText and kid.kept for kid in kids[keep:]):
            self._unbox(mirror)  # a box's last line break goes: its lines join the next
        for extra in kids[keep:]:
            extra.remove()
        del kids[keep:]
        if len(children) > keep:
            # One append for the frame's new children (a code line's token spans,
            # say): one call through the FFI, one mutation record for the page's
            # observers (PyScript's watches the whole document).
            if isinstance(mirror, _Code):
                self._append_kids(mirror, [self._build_kid(mirror, c) for c in children[keep:]])
                return
            fresh = [self._build(child) for child in children[keep:]]
            self._calls.append(mirror.el, *[f.el for f in fresh])
            kids.extend(fresh)

    def _grow(self, mirror: _Text, new: str) -> None:
        old = mirror.node
        self.text_ops += 1
        if new.startswith(old):
            piece = new[len(old):]
            if type(mirror) is _CodeText and mirror.code.kids[-1] is mirror \
                    and (cut := self._box_edge(mirror.code, piece)):
                self._append_piece(mirror, piece[:cut])
                self._go_on_in_new_box(mirror, old + piece[:cut], piece[cut:])
            else:
                self._append_piece(mirror, piece)
        elif (mirror.size and len(new) > len(old) and new.endswith(old[-1])
              and new.startswith(old[:-1])):
            # Grown just before its last character: an open indented code
            # block's partial line, before the line break a parse puts after
            # it. Inserted there (in the last Text node, which holds that
            # character) under the rules of an append.
            piece = new[len(old) - 1:-1]
            if mirror.ascii and piece.isascii() and mirror.size + len(piece) <= _TEXT_NODE_LIMIT:
                mirror.last.insertData(mirror.size - 1, piece)
                mirror.size += len(piece)
            else:
                # Its last character moves to a new node after the piece (DOM
                # offsets count UTF-16 units: an astral character is two).
                end = utf16_units(old[len(old) - mirror.size:])
                kept = utf16_units(old[-1])
                mirror.last.deleteData(end - kept, kept)
                self._grow_into_new_node(mirror, piece + old[-1])
        elif not (type(mirror) is _CodeText and mirror.kept and self._rewrite_boxed(mirror, new)):
            for node in mirror.extra:
                node.remove()
            mirror.extra.clear()
            mirror.el.data = new
            mirror.last = mirror.el
            mirror.size = len(new)
            mirror.ascii = new.isascii()
        mirror.node = new


    def _append_piece(self, mirror: _Text, piece: str) -> None:
        # appendData is cheap only on a short ASCII node (renderer.py measured
        # Blink: ~0.7-1.7 ms per call on a node holding non-ASCII text, a copy
        # of the whole string on a long one); otherwise a new sibling Text node.
        if mirror.ascii and piece.isascii() and (
                mirror.size + len(piece) <= _TEXT_NODE_LIMIT or mirror.size == 0):
            self._calls.append_data(mirror.last, piece)
            mirror.size += len(piece)
        else:
            self._grow_into_new_node(mirror, piece)

    def _grow_into_new_node(self, mirror: _Text, text: str) -> None:
        """`text` in a new Text node after the mirror's last one, which it grows from."""
        node = self._text_node(text)
        self.created += 1
        mirror.last.after(node)
        mirror.extra.append(node)
        mirror.last = node
        mirror.size = len(text)
        mirror.ascii = text.isascii()


class RebuildView(MarkdownView):
    """The baseline other renderers implement: on every update, parse the whole
    message as it stands and rebuild its DOM (no finality, no held-back
    openers). The tests compare the incremental view with it (the demo's "as
    delivered" pane no longer uses it: see demo/demo.py).

    Like such renderers it throttles itself once a rebuild gets expensive: after
    a rebuild that took t, updates within 4 t are folded into the next one
    (so the baseline never takes more than a fifth of the main thread, which
    the paced pane shares); the message's end always shows everything.
    """

    def __init__(self, doc: Any, container: Any, parser: Parser) -> None:
        super().__init__(doc, container, parser)
        self.parser = parser
        self.text = ""
        self.rebuilds = 0
        self._next = 0.0
        self._dirty = False

    def feed(self, delta: str) -> None:
        self.text += delta
        if time.perf_counter() < self._next:
            self._dirty = True
            return
        self._rebuild()

    def close(self) -> None:
        if self._dirty:
            self._rebuild()

    def _rebuild(self) -> None:
        t0 = time.perf_counter()
        one_shot = md.MarkdownStream(parser=self.parser, id_prefix=self.stream.id_prefix)
        one_shot.feed(self.text)
        one_shot.close()
        nodes = one_shot.nodes()
        mirrors = [self._build(node) for node in nodes]
        self.container.replaceChildren(*[m.el for m in mirrors])
        self.tail = mirrors
        self.rebuilds += 1
        self._dirty = False
        self._next = t0 + 5 * (time.perf_counter() - t0)


# Markdown blocks that take their direction from their own text (dir="auto"), as
# GitHub marks them: the text blocks, and lists as a whole (a list item inherits its
# list's direction; an element with its own `dir` hides its text from an enclosing
# dir="auto", so list items and block quotes get none).
_DIR_AUTO = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "th", "td"})
_DIR_AUTO_PAIR = ("dir", "auto")


class PageMarkdownView(MarkdownView):
    """`MarkdownView` whose elements are built for a page (the renderer's): blocks get
    `dir="auto"` (an Arabic or Hebrew paragraph reads right to left beside an English
    one) and code blocks and tables scroll inside themselves, their width never the
    container's minimum (`contain: inline-size`), so a long line cannot widen the page.

    Blocks go into sections of `section_blocks` (see `MarkdownView`) so that a
    frame's rendering cost does not grow with the answer. Chromium recomputes the
    ink overflow of everything in a paint layer whenever something in it was laid
    out, and marks every self-painting layer that is a child of a box it laid out
    for the same; without sections each frame walked the whole answer (DevTools
    trace, `python -m bench.frame_trace`: "compositing inputs" x7 over md_32k). A
    section's block holder is `position: relative` (a self-painting layer that
    lets margins collapse through it, so nothing moves), inside a plain box that
    is not re-laid out once the section is done: a frame's walks cover the open
    section and one box per finished section. With the page's stylesheet and a
    FrameHost (`frames`), finished sections are also sealed (see `MarkdownView`):
    one far from the view is neither laid out nor painted, where otherwise
    Chromium paints everything up to ~4000 px past the view each frame and lays
    out every line of the answer.

    A code block's lines go into boxes of `code_lines` (see `MarkdownView`; the
    stylesheet makes them blocks) for the same reason: a code block is one
    inline formatting context, which Blink lays out again whole, every line of
    it, whenever text is added to it (with the text's own update in the append
    itself), so a frame writing into a growing block cost in proportion to the
    lines above the cursor (plain JS, one line added a frame, 1x: 0.2-0.4 ms at 20
    lines, 1.1-1.3 ms at 100, 4.5 ms at 400, 11 ms at 1000). In boxes, the
    finished ones are laid out once and kept: 0.12-0.26 ms at any length.
    """

    section_blocks = 16
    code_lines = 16

    def _style_section(self, blocks: Any) -> None:
        blocks.style.position = "relative"

    def _page_attributes(self, tag: str) -> tuple[str, ...]:
        return _DIR_AUTO_PAIR if tag in _DIR_AUTO else ()

    def _build(self, node: Any) -> Any:
        mirror = super()._build(node)
        if not isinstance(node, str):
            tag = node[0]
            if tag == "pre":
                _scrolls_inside(mirror.el.style)
            if tag == "table":
                # A block box around the table's grid scrolls it; its words
                # stay whole (the view's overflow-wrap would split them).
                style = mirror.el.style
                _scrolls_inside(style)
                style.display = "block"
                style.overflowWrap = "normal"
        return mirror


def _scrolls_inside(style: Any) -> None:
    """Wide content scrolls inside the box; its width is never the container's minimum."""
    style.contain = "inline-size"
    style.overflowX = "auto"
