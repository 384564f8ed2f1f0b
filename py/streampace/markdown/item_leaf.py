"""An open list's last item while it ends in an indented code block or an
open display formula.

`OpenList` shows its last item by parsing the whole item per delta. An item
ending in a long indented code block or formula made each delta cost a parse
of all of it (`bench/markdown_bench.py` `list_item_indented`: 0.20 ms per
13-character delta at 0.5-1 KB, 0.88 ms at 4-6 KB; `list_item_math` 0.29 ->
1.37 ms; CPython).

`ItemLeaf` keeps the item's blocks before the leaf block as one parse of the
whole item showed them and reads each later line once into the top-level leaf
states (`indented.OpenIndentedCode`, `open_math.OpenMathSource`), each line
seen from the item's content column. Why that is the parse of the whole item,
from the moment one parse showed it so:

- Block structure is decided forward: once the leaf block opened (closing the
  blocks before it), later lines cannot change those blocks.
- Every later line the state takes is blank or indented to the item's content
  column, with no tab: it is the item's (CommonMark's container rule), and
  with that column removed it is a line of the leaf block as the top-level
  state reads it (the leaf state refuses one that would end the block).
- The display shows the block's lines as they are (`literal_end.ends_literal`,
  which the list requires of the item before it looks for the state), as the
  state does.

A line that leaves those conditions drops the state for good; the list's own
path shows the item from there.
"""

from __future__ import annotations

from typing import Any

from streampace.markdown.indented import OpenIndentedCode
from streampace.markdown.item_end import ItemEnd
from streampace.markdown.line_marks import spaces_before
from streampace.markdown.open_math import OpenMathSource
from streampace.markdown.tree import Node

__all__ = ["ItemLeaf"]

_CODE_COLUMNS = 4
_OPENINGS = ("$$", "\\[")


def _in_item(line: str, width: int) -> str | None:
    """`line` seen from the item's content column `width`, or None when it may
    not be the item's (a tab, text left of the column)."""
    if "\t" in line:
        return None
    if not line.strip(" "):
        return line[width:]
    return line[width:] if spaces_before(line) >= width else None


def _code_start(lines: list[str], width: int) -> int | None:
    """The first line of the indented code block the item's `lines` end in:
    the earliest code line after a blank line in their run of code and blank
    lines (a code line right after text would continue a paragraph)."""
    start = None
    k = len(lines) - 1
    while k > 0:
        line = lines[k]
        if line.strip(" "):
            if "\t" in line or spaces_before(line) < width + _CODE_COLUMNS:
                break
            if not lines[k - 1].strip(" "):
                start = k
        k -= 1
    return start


def _formula_start(lines: list[str], width: int) -> int | None:
    """The line of the item's `lines` that opens the display formula they end
    in, read back over the lines since the last blank one (a blank line ends
    a formula)."""
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k] if k else " " * width + lines[0][width:]
        if not line.strip(" "):
            return None
        if line.strip(" ") in _OPENINGS and 0 <= spaces_before(line) - width < _CODE_COLUMNS:
            return k
    return None


class ItemLeaf(ItemEnd):
    """The last item's `li` while it ends in an open indented code block or
    display formula (module docstring)."""

    def __init__(self, kids: tuple[Node, ...], li_attrs: Any, width: int, loose: bool,
                 list_attrs: Any, leaf: OpenIndentedCode | OpenMathSource) -> None:
        super().__init__(kids, li_attrs, width, loose, list_attrs)
        self.leaf = leaf

    @classmethod
    def find(cls, lines: list[str], width: int, li: Node, loose: bool, list_attrs: Any,
             partial: str) -> ItemLeaf | None:
        """The state for an item of complete `lines` (its content column
        `width`) if `li`, its display from one parse with the partial line
        `partial`, ends in the block this state shows."""
        if isinstance(li, str) or not li[2] or isinstance(li[2][-1], str):
            return None
        last = li[2][-1]
        if last[0] == "pre" and not last[1]:
            start = _code_start(lines, width)
            read: Any = OpenIndentedCode.read
        elif last[0] == "p" and last[1] == (("class", "sp-math-source"),):
            start = _formula_start(lines, width)
            read = OpenMathSource.read
        else:
            return None
        if start is None:
            return None
        seen: list[str] = []
        # (The item's first line seen from its content column: its marker left out.)
        first = lines[start] if start else " " * width + lines[0][width:]
        for line in [first, *lines[start + 1:], partial]:
            in_item = _in_item(line, width)
            if in_item is None:
                return None
            seen.append(in_item)
        leaf = read("\n".join(seen))
        if leaf is None or leaf.node() != last:
            return None
        return cls(li[2][:-1], li[1], width, loose, list_attrs, leaf)

    def feed_line(self, line: str) -> bool:
        """A complete line of the item after the leaf's first; False once the
        state may not show the item any more."""
        seen = _in_item(line, self.width)
        if seen is not None:
            self.leaf.read_line(seen)
        return seen is not None and not self.leaf.left

    def li(self, partial: str) -> Node | None:
        """The item's `li` with the partial line `partial`, or None when the
        state may not show it (then for good: `gone`)."""
        seen = _in_item(partial, self.width)
        if seen is None:
            self.leaf.left = True
            return None
        self.leaf.read_partial(seen)
        if self.leaf.left:
            return None
        return self.li_with(self.leaf.node())

    @property
    def gone(self) -> bool:
        return self.leaf.left
