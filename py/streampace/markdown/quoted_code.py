"""Whether an open text ends in an indented code block inside a block quote.

`>     x` is code in the quote (the marker and its optional space, then four
columns) where no paragraph is open in that quote: on the quote's first
line, or right under the quote's empty line (`>`). The display then shows
the line as it is (`literal_end`), as a parse of the text so far does:
`>     *x` shows `*x`, not an emphasis closed on text that has not arrived.

The reading is as cautious as `literal_end`'s: quote lines of one depth only,
each at most three columns in, no tab. It answers "not code" where it cannot
tell: text of the quote right above the code lines (its paragraph may go on;
a line without quote marks may be a lazy one), or a list item above the
quote's empty line (the item's content column may take the indented line in
as its text).
"""

from __future__ import annotations

from streampace.markdown.line_marks import (
    MOST_READ_BACK,
    after_quotes,
    content_column,
    quote_marks,
    spaces_before,
)

__all__ = ["ends_in_quoted_code", "may_end_in_quoted_code"]

_CODE_COLUMNS = 4


def _is_code_line(line: str, depth: int, at: int) -> bool:
    """Whether quote line `line` (`depth` markers, its text from `at`) holds text
    indented as code in its quote."""
    text = line[at:]
    return (depth > 0 and "\t" not in line and spaces_before(text) >= _CODE_COLUMNS
            and bool(text.strip(" ")))


def may_end_in_quoted_code(line: str) -> bool:
    """The cheap half: whether the last non-blank line is a quote's code line."""
    if ">" not in line:
        return False
    depth, at = quote_marks(line)
    return _is_code_line(line, depth, at)


def ends_in_quoted_code(lines: list[str], start: int, end: int) -> bool:
    """Whether `lines[end]` is indented code in a quote, lines `start..end`
    having no blank line among them (`start`: after a blank line, or the text's
    first line, which a caller's text starts a block with)."""
    depth, at = quote_marks(lines[end])
    if not _is_code_line(lines[end], depth, at):
        return False
    for k in range(end - 1, start - 1, -1):
        line = lines[k]
        marks, at = quote_marks(line)
        if marks != depth or "\t" in line:
            return False
        if not line[at:].strip(" "):
            return _no_item_above(lines, k)  # the quote's empty line
        if spaces_before(line[at:]) < _CODE_COLUMNS:
            return False  # (text in the quote: its paragraph may go on)
    # (The text's first line starts a block, whatever spaces come before its
    # quote marks: ` >     x` is code in that quote.)
    return True


def _no_item_above(lines: list[str], k: int) -> bool:
    """Whether no line above the quote's empty line `lines[k]`, back to the
    blank line (or the text's first line) before the quote, starts a list item
    after its quote marks: one at any depth might still hold the lines below
    (a lazy line carries it past lines of less depth). Lines of other depths
    do not matter otherwise: the empty line ends a deeper quote, and the quote
    it is in started after a shallower one."""
    for j in range(k - 1, -1, -1):
        line = lines[j]
        if not line.strip(" "):
            return True
        if k - j > MOST_READ_BACK or "\t" in line:
            return False
        if content_column(line[after_quotes(line):].lstrip(" ")) is not None:
            return False  # (an item, or its marker alone)
    return True
