"""A top-level display formula while it streams: shown as its source, never re-parsed.

A line of only `$$` (or `\\[`) opens a display formula (`md_rules.math_block`);
until its closing line (`$$`, `\\]`) arrives it is shown as its source, as
text: the opening, then its lines, each without the opening line's
indentation. That text is all a parse of the open formula gives, so
`OpenMathSource` reads each new line once and grows it, instead of a parse of
the whole formula per delta. The partial last line is shown without its
trailing spaces (as every open block's partial line, `tail.display_source`).
The closing line, a blank line (which ends the formula unclosed) and a tab are
left to the general path: it converts the closed formula once.
"""

from __future__ import annotations

from streampace.markdown.leaf_lines import LeafLines
from streampace.markdown.tail import spaces_before
from streampace.markdown.tree import Node

__all__ = ["OpenMathSource", "shown_source", "source_node"]

_CLOSING = {"$$": "$$", "\\[": "\\]"}
_MOST_INDENT = 3  # four spaces before the opening make it indented code


class OpenMathSource(LeafLines):
    """The formula opened by the tail's first line (complete); `step` reads
    what is new (its closing line, a blank line or a tab leaves it)."""

    def __init__(self, opening: str) -> None:
        super().__init__(len(opening) + 1)
        self.markup = opening.strip()
        self.closing = _CLOSING[self.markup]
        self.indent = spaces_before(opening)  # removed from each line
        self.source = self.markup + "\n"  # shown
        self.partial = ""         # what `source` ends with of the partial line
        self.lines = 0            # complete lines of the formula

    @classmethod
    def read(cls, tail: str) -> OpenMathSource | None:
        """The formula the tail's complete first line opens, read up to the
        tail's end; None when that line opens none, or a later line closes or
        ends it, or has a tab. `tail` starts at a block, as the stream's tail
        does; only its first line is copied to look (this runs on the general
        path's every display)."""
        nl = tail.find("\n")
        if nl < 0:
            return None
        first = tail[:nl]
        if "\t" in first or first.strip() not in _CLOSING or spaces_before(first) > _MOST_INDENT:
            return None
        block = cls(first)
        block.step(tail)
        return None if block.left else block

    def shown_mark(self) -> int:
        return len(self.source)  # (it only grows at its end)

    def _ends(self, line: str) -> bool:
        return "\t" in line or line.strip() == self.closing

    def read_line(self, line: str) -> None:
        """The formula's next complete line (`left` if it closes or ends it)."""
        if self._ends(line) or not line.strip(" "):
            self.left = True
            return
        self._show(("\n" if self.lines else "") + self._dedent(line))
        self.partial = ""
        self.lines += 1

    def read_partial(self, line: str) -> None:
        """The partial line after the complete ones, as it stands now: it only
        grows, so what shows of it does too."""
        if self._ends(line):
            self.left = True
            return
        text = self._dedent(line.rstrip(" "))
        self._show(("\n" if self.lines else "") + text if text else "")

    def _show(self, shown: str) -> None:
        """`shown` is what the source ends with of the line being read."""
        if shown != self.partial:
            self.source += shown[len(self.partial):]
            self.partial = shown

    def _dedent(self, line: str) -> str:
        return line[min(spaces_before(line), self.indent):]

    def node(self) -> Node:
        return source_node(self.source)


def source_node(source: str) -> Node:
    return ("p", (("class", "sp-math-source"),), (source,))


def shown_source(tail: str) -> str | None:
    """The source an open tail that is one open display formula shows, or None
    (`OpenMathSource.read`)."""
    block = OpenMathSource.read(tail)
    return None if block is None else block.source
