"""An open list's last item while it ends in a nested list: only that list parsed.

`OpenList` shows its last item by parsing the whole item per delta. On a long
answer the heaviest such parses are an item whose first line is a long one
(bold, a link, code) followed by a short nested list: each delta of the nested
list parsed the long line again (0.4-0.5 ms in CPython against 0.1-0.2 ms for
the nested lines alone).

`NestedTail` keeps the item's blocks before its nested list as one parse of the
whole item showed them, and per delta parses the nested list's lines alone,
dedented to the item's content column — as CommonMark parses a container's
content. Why that is the parse of the whole item, from the moment one parse
showed it so:

- Block structure is decided line by line, forward: once a line opened the
  nested list (closing the paragraph before it), later lines cannot change
  the blocks before it (a setext underline or a table's delimiter row acts
  on the line just above it only; definitions, `]:` and `[^`, never reach
  this state: `OpenList` leaves them to the general path).
- Every line from the nested list on is indented to the item's content column
  and holds no tab, so it is the item's (no lazy line of the outer item) and
  means the same dedented; none is blank, so the outer item's looseness stays
  what that parse showed.
- A line that ends the nested list inside the item (a heading at the item's
  column, another list) makes the dedented parse more than one list: refused,
  the list's own path shows it.

A long nested list would still cost a parse of all of it per delta; so the
nested list has a list state of its own (an `OpenList` over its dedented lines,
complete items rendered once), used whenever its display of the dedented lines
and partial line is what the item's display, dedented, shows (checked per delta
on the text, not assumed). Such states nest a few levels deep at most
(`OpenList`'s `depth`); deeper, the nested list is parsed whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from streampace.markdown.joins import _ITEM
from streampace.markdown.parser import Parser
from streampace.markdown.tail import display_source, spaces_before
from streampace.markdown.tree import Node

# Makes the nested list's own list state (an `OpenList`, one level deeper)
# with the nested list's parser from its complete lines, dedented; raises
# ValueError where it cannot.
ListState = Callable[[Parser, list[str]], Any]

__all__ = ["NestedTail", "nested_start", "opens_list"]

_LISTS = ("ul", "ol")
# A line of spaces only (or none) after the first. Linear: the spaces are
# matched from a line break only, and must be followed by the next.
_BLANK_LINE = re.compile(r"\n *\n")


def opens_list(line: str, width: int) -> bool:
    """Whether `line`, at the item's content column `width` (less than four
    columns past it: not indented code), has an item marker with text after it."""
    if not width <= spaces_before(line) < width + 4 or "\t" in line:
        return False
    m = _ITEM.match(line[width:])
    return m is not None and not m.group(1) and bool(line[width + m.end():].strip())


def nested_start(lines: list[str], width: int) -> int | None:
    """The index of the first of an item's `lines` (the partial line last)
    after its first that opens a nested list at its content column `width`."""
    return next((k for k in range(1, len(lines)) if opens_list(lines[k], width)), None)


def nested_source(shown: str, prefix: str, width: int) -> str | None:
    """The lines of the display `shown` after `prefix`, dedented by `width`,
    blank lines at its end left out (they belong to no item: whatever comes
    after them, a next item or the list's end, the list's own path decides);
    None unless `shown` starts with `prefix` and each of those lines is
    indented to `width`, holds no tab and is not blank. Checked and dedented
    by string methods over the whole text, not a Python step per line: this
    runs on every delta of a nested list that may be kilobytes long."""
    if not shown.startswith(prefix):
        return None
    body = shown[len(prefix):].rstrip(" \t\n")
    pad = "\n" + " " * width
    if "\t" in body or not body.startswith(pad[1:]) or body.count("\n") != body.count(pad):
        return None
    out = body[width:].replace(pad, "\n")
    nl = out.find("\n")
    if not (out if nl < 0 else out[:nl]).strip(" ") or _BLANK_LINE.search(out):
        return None  # a blank line (the last one is not: `body` ends in text)
    return out + "\n"


class NestedTail:
    """The last item's `li` while it ends in a nested list (module docstring)."""

    def __init__(self, parser: Parser, prefix: str, kids: tuple[Node, ...], li_attrs: Any,
                 tag: str, width: int, loose: bool, list_attrs: Any, lines: list[str],
                 make_list: ListState | None) -> None:
        self.parser = parser        # for the nested list's lines, two levels down (`within`)
        self.prefix = prefix        # the item's lines before the nested list, each with "\n"
        self.kids = kids            # the `li`'s blocks before it, as one parse showed them
        self.li_attrs = li_attrs
        self.tag = tag              # the nested list's
        self.width = width          # the item's content column
        self.loose = loose          # the outer list's looseness when that parse was made
        self.list_attrs = list_attrs  # the outer list's, as that parse showed them
        # The nested list's complete lines, dedented (joined, each with "\n"),
        # and its own list state over them (`make_list`: None past the depth
        # of nesting given such a state), which stops for good at a line it
        # does not take.
        self.source = "".join(line + "\n" for line in lines)
        self._make_list = make_list
        self.inner: Any = None
        self._start_inner()

    @classmethod
    def find(cls, parser: Parser, refs: dict[str, Any], ctx: tuple[str, int],
             prefix: str, width: int, item: list[str], shown: str, li: Node, loose: bool,
             list_attrs: Any, make_list: ListState | None) -> NestedTail | None:
        """The state for an item of complete lines `item` whose lines before
        its nested list are `prefix` (`nested_start`), if `li`, its display
        from one parse of `shown` (the item and the partial line), ends in a
        nested list that the dedented parse alone gives too."""
        if isinstance(li, str) or not li[2]:
            return None
        inner = parser.within(2)  # inside the list and its item
        node = _parse(inner, refs, ctx, shown, prefix, width)
        if node is None or li[2][-1] != node:
            return None
        done = prefix.count("\n")
        return cls(inner, prefix, li[2][:-1], li[1], node[0], width, loose, list_attrs,
                   [line[width:] for line in item[done:]], make_list)

    def _start_inner(self) -> None:
        if self._make_list is not None and self.source and self.inner is None:
            try:
                self.inner = self._make_list(self.parser, self.source.split("\n")[:-1])
            except ValueError:
                self._make_list = None

    def feed_line(self, line: str) -> bool:
        """A complete line of the item after the nested list's start; False
        once `li` would refuse every display from here on (a line short of
        the content column, a tab, a line after a blank one)."""
        blank = not line.strip(" ")
        if "\t" in line or not blank and (spaces_before(line) < self.width or (
                self.source == "\n" or self.source.endswith("\n\n"))):
            return False
        seen = "" if blank else line[self.width:]
        self.source += seen + "\n"
        if self.inner is not None and not self.inner.feed_lines([seen]):
            self.inner, self._make_list = None, None
        self._start_inner()
        return True

    def li(self, refs: dict[str, Any], ctx: tuple[str, int], shown: str,
           partial: str | None) -> Node | None:
        """The item's `li` for the display `shown` of its lines and `partial`
        (None: its lines as they are, no partial line, `shown` the raw
        source), or None when the nested list's lines may not be parsed
        alone (module docstring)."""
        src = nested_source(shown, self.prefix, self.width)
        if src is None or not src.strip():
            return None
        node = self._from_inner(src, partial) or _render_list(self.parser, refs, ctx, src)
        if node is None or node[0] != self.tag:
            return None
        return ("li", self.li_attrs, (*self.kids, node))

    def _from_inner(self, src: str, partial: str | None) -> Node | None:
        """The nested list's node from its own state, when that state shows
        exactly the source `src` (its display, dedented) parsed: its lines
        are the nested list's lines, and the display of them and the dedented
        partial line is `src`."""
        inner = self.inner
        if inner is None:
            return None
        own = self.source
        if partial is None:
            if own.rstrip(" \t\n") + "\n" != src:
                return None
            node = inner.final_node()
        else:
            deep = spaces_before(partial) >= self.width
            seen = partial[self.width:] if deep else partial.strip(" ")
            if display_source(own + seen).rstrip(" \t\n") + "\n" != src:
                return None
            nodes = inner.display(seen)
            node = nodes[0] if nodes is not None and len(nodes) == 1 else None
        if node is None or isinstance(node, str):
            return None
        return node


def _parse(parser: Parser, refs: dict[str, Any], ctx: tuple[str, int], shown: str,
           prefix: str, width: int) -> Node | None:
    """The one list node the nested lines of `shown` parse to, dedented."""
    src = nested_source(shown, prefix, width)
    if src is None or not src.strip():
        return None
    return _render_list(parser, refs, ctx, src)


def _render_list(parser: Parser, refs: dict[str, Any], ctx: tuple[str, int], src: str,
                 ) -> Node | None:
    """The one list node `src` parses to, or None."""
    nodes = parser.render(src, refs, ctx)[0]
    if len(nodes) != 1 or isinstance(nodes[0], str) or nodes[0][0] not in _LISTS:
        return None
    return nodes[0]
