"""Heading levels of an answer placed under the host page's outline.

An answer's headings are written for a document of their own (it starts with
"#"), but the answer sits inside a page that has its own headings. The
answer's highest level becomes `base` (one below the nearest heading before
the view: h2 under an h1), and no level is skipped: a heading is at most one
level below the heading it follows. Levels are decided as headings arrive and
never change afterwards (a later, higher heading of the source takes `base`
again), so a streamed heading keeps its element.
"""

from __future__ import annotations

__all__ = ["HeadingOutline", "base_below"]

MAX_LEVEL = 6


def base_below(level: int | None) -> int:
    """The base for an answer after a host heading of `level` (None: no heading
    before the view; the page's h1 is its title, so the answer starts at h2)."""
    if level is None:
        return 2
    return min(MAX_LEVEL, max(1, level + 1))


class HeadingOutline:
    """Maps source heading levels (1-6) of one answer to page levels."""

    def __init__(self, base: int) -> None:
        if not 1 <= base <= MAX_LEVEL:
            raise ValueError(f"heading base must be 1 to {MAX_LEVEL}, got {base}")
        self.base = base
        # The open sections: (source level, page level), outermost first.
        self._open: list[tuple[int, int]] = []

    def level(self, source: int) -> int:
        """The page level a heading of level `source` gets here, without taking
        it into the outline (a heading still being streamed)."""
        return self._place(source)[1]

    def add(self, source: int) -> int:
        """Take a heading into the outline (a final one); its page level."""
        keep, level = self._place(source)
        del self._open[keep:]
        self._open.append((source, level))
        return level

    def _place(self, source: int) -> tuple[int, int]:
        """How many open sections stay open, and the heading's page level."""
        keep = len(self._open)
        while keep and self._open[keep - 1][0] >= source:
            keep -= 1
        if keep == 0:
            return 0, self.base
        return keep, min(MAX_LEVEL, self._open[keep - 1][1] + 1)
