"""An open list's last item while it ends in an open fenced code block.

`OpenList` shows its last item by parsing the whole item per delta; a code
block inside an item ("3. Replace the file with:" and a long file) made a
delta cost a block scan of all the code so far (`bench/markdown_bench.py`
`list_item_code`: 0.12 ms per 13-character delta at 0.5 KB of code, 0.48 ms
at 4-6 KB, CPython).

`FenceTail` keeps the item's blocks before the fence as one parse of the whole
item showed them and appends each later line to the code, as the top-level
open fence does (`fence.OpenFence`: each complete line highlighted once). Why
that is the parse of the whole item, from the moment one parse showed it so:

- Block structure is decided forward: once the fence opened (closing the
  blocks before it), later lines cannot change those blocks.
- The fence opens exactly at the item's content column, and every later line
  is blank or indented to that column, holds no tab and is nothing
  `tail._fence_run` reads as a fence line: so each line is the item's, a line
  of the code with the content column removed (CommonMark's container
  rule), and the display (`tail.display_source`) leaves it as it is.
- The display holds a partial line back while it is block markers only
  (`tail.shown_in_fence`), as `display_source` does inside a fence; a partial
  line that could leave the item or read as a fence line is left to the
  list's own path for that delta.

A line that leaves those conditions (the closing fence included) drops the
state for good; the list's own path shows the item from there.
"""

from __future__ import annotations

from typing import Any

from streampace.markdown.fence import OpenFence, closing_run, opening_run
from streampace.markdown.highlight import remember
from streampace.markdown.item_end import ItemEnd
from streampace.markdown.tail import _fence_run, fence_after, shown_in_fence, spaces_before
from streampace.markdown.tree import Node, text_of

__all__ = ["FenceScan", "FenceTail"]


def _opening(line: str, width: int) -> str | None:
    """The fence run when `line` opens a fence exactly at column `width`."""
    return opening_run(line[width:]) if spaces_before(line) == width else None


def _code_line(line: str, width: int) -> str | None:
    """`line` as a line of the code (the content column removed), or None when
    it may not be one (module docstring)."""
    if "\t" in line or _fence_run(line) is not None:
        return None
    if not line.strip(" "):
        return line[width:]
    return line[width:] if spaces_before(line) >= width else None


class FenceScan:
    """Which of an item's lines opens the fence still open after them, read
    forward line by line with CommonMark's fence rules at the item's content
    column `width` (each line read once)."""

    def __init__(self, width: int | None, first: str) -> None:
        self.width = width if width is not None else 0
        self.lines = 0          # the item's lines read
        self.start: int | None = None
        self.run = ""
        self.codes = True       # every line since `start` may be a line of its code
        self.lost = width is None  # a tab, a line short of the column: left alone
        # The fence open after the lines as the display reads them
        # (`tail.fence_after`, as `display_source` asks): the state shows the
        # item only where the display too reads its last lines as code.
        self.shown_run = fence_after(None, first)
        # The first line's content (a fence may open there), at the column.
        self.feed(" " * self.width + first[self.width:], read=False)

    def feed(self, line: str, read: bool = True) -> None:
        """The item's next complete line (`read`: by the display's reading too)."""
        if read:
            self.shown_run = fence_after(self.shown_run, line)
        k, self.lines = self.lines, self.lines + 1
        if self.lost or not line.strip(" "):
            return
        rel = spaces_before(line) - self.width
        if "\t" in line or rel < 0:
            self.lost = True
        elif self.start is None:
            run = opening_run(line.lstrip(" ")) if rel <= 3 else None
            if run is not None:
                self.start, self.run, self.codes = k, run, True
        elif rel <= 3 and (closing_run(line[self.width:], self.run[0]) or 0) >= len(self.run):
            self.start = None
        elif _code_line(line, self.width) is None:
            self.codes = False

    def fence_start(self, lines: list[str]) -> int | None:
        """The index of the line of the item's `lines` (those fed) that opens
        the fence open after them, when it opens exactly at the content column
        and every line after it may be a line of its code; else None."""
        if self.lost or self.start is None or not self.codes or self.shown_run is None:
            return None
        return self.start if _opening(lines[self.start], self.width) is not None else None


class FenceTail(ItemEnd):
    """The last item's `li` while it ends in an open fence (module docstring).
    A partial line never ends it (never `gone`): the list's own path shows
    that line."""

    def __init__(self, kids: tuple[Node, ...], li_attrs: Any, width: int, loose: bool,
                 list_attrs: Any, fence: OpenFence) -> None:
        super().__init__(kids, li_attrs, width, loose, list_attrs)
        self.fence = fence

    @classmethod
    def find(cls, lines: list[str], start: int, width: int, li: Node, loose: bool,
             list_attrs: Any, partial: str) -> FenceTail | None:
        """The state for an item of complete `lines` whose line `start` opens
        the fence (`FenceScan`), if `li`, its display from one parse with the
        partial line `partial`, ends in that fence as this state shows it."""
        run = _opening(lines[start], width)
        if run is None or isinstance(li, str) or not li[2]:
            return None
        pre = li[2][-1]
        if isinstance(pre, str) or pre[0] != "pre" or not pre[2] or isinstance(pre[2][0], str):
            return None
        code: list[str] = []
        for line in lines[start + 1:]:
            seen = _code_line(line, width)
            if seen is None:
                return None
            code.append(seen)
        fence = OpenFence(run, pre[2][0][1], 0)
        fence.resume("".join(f"{line}\n" for line in code))  # as the parse just highlighted them
        state = cls(li[2][:-1], li[1], width, loose, list_attrs, fence)
        seen = state.seen(partial)
        # The parse's code, as text, is the state's (its nodes then are too: the
        # same lines highlighted alike); compared so, the partial line is not
        # highlighted twice.
        return state if seen is not None and text_of(pre) == fence.code + seen else None

    def seen(self, partial: str) -> str | None:
        """What the code shows of the partial line `partial`, or None when that
        line is left to the list's own path."""
        if "\t" in partial or _fence_run(partial) is not None:
            return None
        shown = shown_in_fence(partial)
        if shown.strip(" ") and spaces_before(shown) < self.width:
            return None  # (the line leaves the item)
        return shown[self.width:]

    def feed_line(self, line: str) -> bool:
        """A complete line of the item after the fence's opening; False once
        the state may not show the item any more (module docstring)."""
        code = _code_line(line, self.width)
        if code is None:
            self.remember()
            return False
        self.fence.add_line(code)
        return True

    def remember(self) -> None:
        """The item's parse shows the code next (a line the state does not
        take): its highlighting resumes from this state's lines."""
        if self.fence.hl is not None:
            remember(self.fence.hl, self.fence.code)

    def li(self, partial: str) -> Node | None:
        """The item's `li` with the partial line `partial`, or None when that
        line is left to the list's own path."""
        seen = self.seen(partial)
        if seen is None:
            self.remember()
            return None
        return self.li_with(self.fence.node_with(seen))
