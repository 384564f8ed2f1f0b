"""Whether an open tail ends in text where nothing is markup: an indented code
block or an open display formula.

`tail.display_source` closes inline markup at the end of the open block and
holds back what may still turn into markup (`[`, a lone `*`, a partial line of
block markers). Inside code or a formula's source none of it is markup: a
partial line `print("**", x[` would show as `print("**", x**` and `f(x) = [a`
as `f(x) = a`. So when the tail's last lines are such a block the display shows
them as they are, as a parse of the text so far does and as the stream's leaf
states (`indented.OpenIndentedCode`, `open_math.OpenMathSource`, the list
item's `item_leaf.ItemLeaf`) show them.

Read from the text, by the parser's block rules for these lines:

- Indented code: the lines since the last blank line are all indented four
  columns or more past the content column of the list item that holds them
  (0 outside lists). A blank line before them means no paragraph is open, so
  they cannot be a paragraph's continuation.
- A display formula: a line of only `$$` or `\\[`, less than four columns past
  its container's content column, opens one (it may interrupt a paragraph),
  and no line since closes it; a blank line, or a line left of the container's
  column, ends it.

The holding item is found by reading back from the block: the nearest list
item whose content column the block's line reaches, with no line between them
left of that column. Lazy continuation lines, quotes and tabs are not read:
where they occur the answer is "not literal", and the display completes inline
markup as before.
"""

from __future__ import annotations

from collections.abc import Iterable

from streampace.markdown.line_marks import (
    after_list_marker,
    after_quotes,
    content_column,
    is_list_item,
    spaces_before,
)

__all__ = ["ends_literal", "holder_column"]

_CODE_COLUMNS = 4
_CLOSING = {"$$": "$$", "\\[": "\\]"}


def ends_literal(tail: str, lines: list[str]) -> bool:
    """Whether the last non-blank of `lines` (the split `tail`, its last line
    without trailing blanks) belongs to an indented code block or an open
    display formula (module docstring)."""
    end = len(lines) - 1
    while end >= 0 and not lines[end].strip(" "):
        end -= 1
    if end < 0:
        return False
    code = spaces_before(lines[end]) >= _CODE_COLUMNS
    if not code and "$$" not in tail and "\\[" not in tail:
        return False  # (most displays: no lines read)
    start = end
    while start > 0 and lines[start - 1].strip(" "):
        start -= 1
    return (code and _is_code(lines, start, end)) or _ends_in_formula(lines, start, end)


_MOST_READ_BACK = 200  # lines read back for the holding item; past them: cannot tell


def holder_column(before: Iterable[str], indent: int) -> int | None:
    """The content column of the list item holding a line indented `indent`
    columns (0: none), read back over the lines `before` it, nearest first;
    None where that reading cannot tell (a quote, a tab, too far back, a line
    that may be a lazy one)."""
    floor = indent
    # Lines left of `floor` end the items right of them, unless they are lazy
    # (a paragraph's continuation): which matters only where such an item
    # stands above them, before a blank line or an item holding them.
    lower: int | None = None
    for read, line in enumerate(before):
        if read >= _MOST_READ_BACK or "\t" in line or after_quotes(line):
            return None
        spaces = spaces_before(line)
        column = content_column(line)
        if lower is not None:
            if column is not None and column > lower:
                return None  # (they may be lazy lines of a paragraph in that item)
            if line.strip(" ") and column is None:
                lower = min(lower, spaces)  # read on to a blank line or an item
                continue
            if lower == 0 and column is None:
                return 0
            floor, lower = lower, None  # a blank line or an item holding them above
        if not line.strip(" "):
            continue
        if column is not None and column <= indent and column <= floor:
            return column
        if column is None and spaces < floor:
            lower = spaces
        else:
            floor = min(floor, spaces)
    return 0


def _holder_column(lines: list[str], k: int) -> int | None:
    return holder_column(reversed(lines[:k]), spaces_before(lines[k]))


def _is_code(lines: list[str], start: int, end: int) -> bool:
    """Lines `start..end`, a blank line before them, are an indented code block's."""
    if start == 0:
        return False  # no blank line before them in this text
    run = lines[start:end + 1]
    if any("\t" in line or after_quotes(line) for line in run):
        return False
    column = _holder_column(lines, start)
    return column is not None and min(map(spaces_before, run)) >= column + _CODE_COLUMNS


def _ends_in_formula(lines: list[str], start: int, end: int) -> bool:
    """A display formula opened in lines `start..end` (no blank line among
    them) is still open after them."""
    closing: str | None = None
    column = 0  # the open formula's container's content column
    for k in range(start, end + 1):
        line = lines[k]
        if "\t" in line or after_quotes(line):
            return False
        if closing is not None:
            if spaces_before(line) >= column:
                if line.strip(" ") == closing:
                    closing = None
                continue
            closing = None  # left of its container: the formula ended there
        opened = _opening(lines, k)
        if opened is not None:
            closing, column = opened
    return closing is not None


def _opening(lines: list[str], k: int) -> tuple[str, int] | None:
    """(closing line, container column) when line `k` opens a display formula."""
    line = lines[k]
    column = content_column(line) if is_list_item(line) else None
    if column is not None:
        text = line[after_list_marker(line, spaces_before(line)):]
        if column == len(line) or spaces_before(line[column:]) > 0:
            return None  # (content starting four columns in: code)
    else:
        text = line
    mark = text.strip(" ")
    if mark not in _CLOSING:
        return None
    if column is None:
        column = _holder_column(lines, k)
        if column is None or spaces_before(line) - column >= _CODE_COLUMNS:
            return None
    return _CLOSING[mark], column
