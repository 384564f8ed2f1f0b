"""Parts of an open list or table parsed apart, and plain text appended without a parse.

`MarkdownStream` shows an open list as its earlier items (parsed once) joined
with its last item (parsed per change), and a table likewise by rows; `_join`
refuses whenever the join could differ from one parse (the list turning loose).
`_plain_append_state` says when plain words can grow the last text node with
no parse at all.
"""

from __future__ import annotations

import re
from typing import Any

from streampace.markdown.tail import _marker_only
from streampace.markdown.tree import BLOCK_TAGS, Node

# Letters, digits, spaces and punctuation that opens and closes nothing in
# CommonMark or GFM (apostrophes and quotes, ASCII or typographic, `:` and `!`
# are as inert as `,`: a link title, a definition or an image needs `[`, `]`
# or `(` around them, and a bare URL is looked for apart).
_PLAIN = re.compile(r"(?:[^\W_]|[ ,.;?'’‘“”:!])+")
_CLOSERS = frozenset("*_~`")
_NO_PLAIN_APPEND = frozenset({"a", "pre", "table"})


def may_take_plain(text: str, piece: str) -> bool:
    """Whether plain characters `piece`, which end `text`, may still change
    how it parses, so that they are not merely appended: a bare URL may take
    them in (`://` or `www.` among the last characters), or their `;` may end
    a character reference that an `&` began (`&m` then `p;`: `&mp;` is ∓)."""
    recent = text[-(len(piece) + 80):].lower()
    return "://" in recent or "www." in recent or (";" in piece and "&" in recent)


def _plain_append_state(tail: str, shown: str, nodes: tuple) -> str | None:
    """The held trailing blanks if plain text may be appended to `nodes`, else None.

    Holds when the display is the raw tail with at most closers added (no
    held-back construct), the source ends in plain text on a line with text,
    and the document ends in a text node outside links, code blocks and tables.
    """
    raw = tail.rstrip(" ")
    if not nodes or not shown.startswith(raw) or not set(shown[len(raw):]) <= _CLOSERS:
        return None
    if not raw or not _PLAIN.fullmatch(raw[-1]):
        return None  # the source ends in markup: new text may land outside it
    last_line = raw.rsplit("\n", 1)[-1]
    if not last_line.strip() or _marker_only(last_line) or "\t" in last_line:
        return None
    node = nodes[-1]
    while not isinstance(node, str):
        if node[0] in _NO_PLAIN_APPEND or not node[2]:
            return None
        node = node[2][-1]
    if not node or node[-1] in _CLOSERS:
        return None  # a closer we added did not close: it shows, text goes after it
    return tail[len(raw):]


def _grow_last(node: Node, text: str) -> Node:
    if isinstance(node, str):
        return node + text
    tag, attrs, kids = node
    return (tag, attrs, kids[:-1] + (_grow_last(kids[-1], text),))


_ITEM = re.compile(r"^( {0,3})([-+*]|\d{1,9}([.)]))(?:[ \t]|$)")
_ROW = re.compile(r"^ {0,3}\|")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")  # an ATX heading: always one line


def _split_open_block(shown: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(earlier items, last item, list tags) of an open top-level list, or
    (header + earlier rows, header + last row, ("table",)) of a table. None
    when the last part holds a footnote reference: parsed alone, it would take
    the id of a first reference where an earlier item made it already."""
    split = _split_block(shown)
    return None if split is None or "[^" in split[1] else split


def _split_block(shown: str) -> tuple[str, str, tuple[str, ...]] | None:
    lines = shown.split("\n")
    first = _ITEM.match(lines[0])
    # Only a list at column 0: a marker line there is always its next item.
    if first is not None and not first.group(1):
        indent, marker, delim = first.group(1), first.group(2), first.group(3)
        for k in range(len(lines) - 1, 0, -1):
            m = _ITEM.match(lines[k])
            if m is not None and m.group(1) == indent and (
                    m.group(3) == delim if delim else m.group(2) == marker):
                return ("\n".join(lines[:k]) + "\n", "\n".join(lines[k:]),
                        ("ol",) if delim else ("ul",))
        return None
    if len(lines) >= 4 and _ROW.match(lines[0]) and all(_ROW.match(x) for x in lines[2:]):
        return ("\n".join(lines[:-1]) + "\n", "\n".join(lines[:2] + lines[-1:]), ("table",))
    return None


def ended_by_paragraph(tail: str) -> list[tuple[int, int, str]] | None:
    """The top-level blocks of `tail` when it is a heading line, the lines of
    one paragraph each starting with a letter, or the lines of one list (as
    `items_of_one_list`), then empty lines and one partial line starting with a
    letter: that block (a list with its empty lines, as markdown-it maps it)
    and a paragraph, which ends the list (text at column 0 after a blank line
    does not continue an item). None: another shape (a block parse decides)."""
    cut = tail.rfind("\n")
    if cut < 0 or not tail[cut + 1:cut + 2].isalpha():
        return None
    head = tail[:cut + 1].rstrip("\n")
    blanks = cut + 1 - len(head)
    if blanks < 2:
        return None
    if "\n" not in head and _HEADING.match(head):
        return [(0, 1, "heading_open"), (blanks, blanks + 1, "paragraph_open")]
    lines = head.split("\n")
    if all(line[:1].isalpha() for line in lines):
        # A line that starts with a letter starts no block and, after the
        # first, cannot turn the lines above into a heading or a table.
        return [(0, len(lines), "paragraph_open"),
                (len(lines) - 1 + blanks, len(lines) + blanks, "paragraph_open")]
    if not items_of_one_list(head):
        return None
    for line in head.split("\n"):
        item = _ITEM.match(line)
        if item is None or not line[item.end():].strip():
            return None  # an empty item: blank lines after it end the list otherwise
    start = head.count("\n") + blanks
    kind = "ordered_list_open" if head[:1].isdigit() else "bullet_list_open"
    return [(0, start, kind), (start, start + 1, "paragraph_open")]


def one_list(tail: str) -> list[tuple[int, int, str]] | None:
    """The top-level blocks of `tail` when it is the lines of one list (as
    `items_of_one_list`): that list, over every line (a last empty one, a line
    break just come, is no line of it). None: another shape."""
    if not items_of_one_list(tail):
        return None
    kind = "ordered_list_open" if tail[:1].isdigit() else "bullet_list_open"
    return [(0, tail.count("\n") + (0 if tail.endswith("\n") else 1), kind)]


def items_of_one_list(tail: str) -> bool:
    """Whether every line of `tail` (its last one may be empty: a line break just
    came) is an item line of the list its first line starts at column 0: same
    bullet, or same delimiter after the number. Then its block parse is that
    list alone. Refused, to stay on the safe side: a line that may be a
    thematic break (`- - -`, `* * *`: it ends the list) and definitions
    (`]:`, `[^`), which a parse of the list collects."""
    if "]:" in tail or "[^" in tail:
        return False
    lines = tail.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    first = _ITEM.match(lines[0])
    if first is None or first.group(1):
        return False
    marker, delim = first.group(2), first.group(3)
    for line in lines:
        m = _ITEM.match(line)
        if m is None or m.group(1) or (m.group(3) != delim if delim else m.group(2) != marker):
            return False
        bare = line.replace(" ", "").replace("\t", "")
        if len(bare) >= 3 and not bare.strip("-*_"):
            return False
    return True


def _looseness(node: Node) -> bool | None:
    """How the list `node` shows its items' paragraphs: True as `p` (loose),
    False as bare text (tight), None if nothing in it tells (its items hold
    only code, math, headings, nested lists: tight and loose look the same).
    A `p` with a class (unclosed display math shown as its source) is there
    in a tight list too."""
    for li in node[2]:
        if isinstance(li, str):
            continue
        for k in li[2]:
            if isinstance(k, str) or k[0] not in BLOCK_TAGS:
                return False
            if k[0] == "p" and not k[1]:
                return True
    return None


def _ends_in_empty_item(node: Node) -> bool:
    items = node[2]
    return bool(items) and not isinstance(items[-1], str) and not items[-1][2]


def _loose(node: Node) -> bool:
    return _looseness(node) is True


def ends_with_blank_line(src: str) -> bool:
    """The source's last line holds only spaces and tabs (CommonMark's blank
    line: "- a\n  \n" ends with one as much as "- a\n\n" does)."""
    if not src.endswith("\n"):
        return False
    start = src.rfind("\n", 0, len(src) - 1) + 1
    return not src[start:-1].strip(" \t")


def _join(head: Node, rest: list[Node], blank_between: bool) -> tuple[Node, ...] | None:
    if not rest or isinstance(rest[0], str) or rest[0][0] != head[0]:
        return None
    first = rest[0]
    if head[0] == "table":
        body: list[Any] = [k for k in head[2] if k[0] == "tbody"]
        more: list[Any] = [k for k in first[2] if k[0] == "tbody"]
        rows: tuple[Node, ...] = (tuple(body[0][2]) if body else ()) + (
            tuple(more[0][2]) if more else ())
        kids = tuple(k for k in head[2] if k[0] != "tbody") + (
            (("tbody", (), rows),) if rows else ())
        return ((head[0], head[1], kids), *rest[1:])
    # Looseness is the whole list's: parse it whole unless both parts show the
    # same, or neither shows any (a part that shows none may still have made
    # the list loose, so it cannot be joined to one that shows tight).
    loose = _looseness(head)
    if loose != _looseness(first) or (blank_between and loose is False):
        return None
    if blank_between and _ends_in_empty_item(head):
        # An empty item takes at most one blank line: after two the list has
        # ended, and the next item starts a new one ("-\n\n\n- a" is two lists).
        return None
    return ((head[0], head[1], head[2] + first[2]), *rest[1:])
