"""An open leaf block read from the stream's tail one line at a time.

The top-level leaf states (`indented.OpenIndentedCode`, `open_math.OpenMathSource`)
read each complete line of the tail once and the partial line after them as it
stands; the list item's state (`item_leaf.ItemLeaf`) feeds them line by line.
What differs between them is how a line is read, not how the tail is walked.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable

__all__ = ["LeafLines"]


class LeafLines(ABC):
    """Walks the tail's lines not read yet into `read_line` / `read_partial`."""

    def __init__(self, line_start: int) -> None:
        self.line_start = line_start  # tail offset of the first line not read as complete
        self.left = False  # a line the block does not take: not ours any more

    def step(self, tail: str) -> bool:
        """Read the lines of `tail` not read yet; True if what shows changed.
        Sets `left` (and reads no further) at a line that is not the block's."""
        before = self.shown_mark()
        pos = self.line_start
        while not self.left:
            nl = tail.find("\n", pos)
            if nl < 0:
                self.read_partial(tail[pos:])
                break
            self.read_line(tail[pos:nl])
            pos = self.line_start = nl + 1
        return self.shown_mark() != before

    @abstractmethod
    def read_line(self, line: str) -> None:
        """The block's next complete line (`left` if it is not the block's)."""

    @abstractmethod
    def read_partial(self, line: str) -> None:
        """The partial line after the complete ones, as it stands now."""

    @abstractmethod
    def shown_mark(self) -> Hashable:
        """Something that changes whenever what the block shows does (cheap)."""
