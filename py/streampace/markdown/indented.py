"""A top-level indented code block while it streams: shown as its code, never re-parsed.

CommonMark: an indented code block starts, where no paragraph is open, with a
line indented four or more columns; it takes every following line that is
blank or indented four columns or more, and its content is those lines with
four columns removed, blank lines at its end left out. Nothing inside it is
markup, so no parse is needed to show it: `OpenIndentedCode` reads each new
line once and appends it to the code.

What it shows is what a parse of the text so far gives, but for the partial
last line's trailing spaces (not shown, as for every open block's partial line,
`tail.display_source`). A parse puts a line break after the last line, so a
growing partial line grows the code just before its end: the view inserts
there (markdown_dom `_grow`), and blank lines show once a code line follows
them. A line with a tab is left to the general path (a tab's width depends on
the column it stands at), as is the line that ends the block.
"""

from __future__ import annotations

from streampace.markdown.leaf_lines import LeafLines
from streampace.markdown.tree import Node

__all__ = ["OpenIndentedCode", "code_node", "shown_code"]

_COLUMNS = 4  # the indentation that makes a line code
_INDENT = " " * _COLUMNS


class OpenIndentedCode(LeafLines):
    """The block from the start of the tail; `step` reads what is new (a tab,
    or a line the block does not take, leaves it)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.done = ""          # the complete lines' code, blank lines at its end left out
        self.partial = ""       # the partial line as shown (after those blank lines)
        self.blanks = ""        # blank lines since the last code line, as code (not shown yet)

    @classmethod
    def read(cls, tail: str) -> OpenIndentedCode | None:
        """The block `tail` is, read up to its end; None when `tail` is not one
        open indented code block (its first line is not indented four columns
        with text after them, a line has a tab or ends the block). `tail` starts
        at a block, as the stream's tail does."""
        nl = tail.find("\n")
        if tail[:_COLUMNS] != _INDENT or not tail[:nl if nl >= 0 else len(tail)].strip(" "):
            return None
        block = cls()
        block.step(tail)
        return None if block.left else block

    def shown_mark(self) -> tuple[int, str]:
        return len(self.done), self.partial

    def read_line(self, line: str) -> None:
        text = line.rstrip(" ")
        if "\t" in line or (text and text[:_COLUMNS] != _INDENT):
            self.left = True
        elif not text:
            self.blanks += line[_COLUMNS:] + "\n"
        else:
            self.done += self.blanks + line[_COLUMNS:] + "\n"
            self.blanks = self.partial = ""

    def read_partial(self, line: str) -> None:
        text = line.rstrip(" ")
        if "\t" in line or (text and text[:_COLUMNS] != _INDENT):
            self.left = True  # text before column 4: the block has ended
        else:
            self.partial = self.blanks + text[_COLUMNS:] if text else ""

    def shown(self) -> str:
        return self.done + self.partial + "\n" if self.partial else self.done

    def node(self) -> Node:
        return code_node(self.shown())


def code_node(code: str) -> Node:
    return ("pre", (), (("code", (), (code,) if code else ()),))


def shown_code(tail: str) -> str | None:
    """The code an open tail that is one indented code block shows (see the
    module's doc), or None (`OpenIndentedCode.read`)."""
    block = OpenIndentedCode.read(tail)
    return None if block is None else block.shown()
