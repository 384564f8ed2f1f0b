"""Where a line's block markers end: quote marks, list markers, indentation.

Written as loops, not regexes: a pattern such as `(?:[ ]{0,3}>[ ]?)*[ \t]*`
backtracks exponentially on `> > > > … x` (each space can belong to either
quantifier), and this text is untrusted.
"""

from __future__ import annotations

__all__ = ["after_list_marker", "after_quotes", "content_column", "is_list_item",
           "list_marker_end", "skip_blanks", "spaces_before"]


def after_quotes(line: str, i: int = 0) -> int:
    """Index after any number of `{0,3 spaces}>{optional space}` quote markers."""
    n = len(line)
    while True:
        j = i
        while j < n and j - i < 3 and line[j] == " ":
            j += 1
        if j >= n or line[j] != ">":
            return i
        j += 1
        if j < n and line[j] == " ":
            j += 1
        i = j


def spaces_before(line: str) -> int:
    """How many spaces `line` starts with."""
    return len(line) - len(line.lstrip(" "))


def skip_blanks(line: str, i: int) -> int:
    n = len(line)
    while i < n and line[i] in " \t":
        i += 1
    return i


def list_marker_end(line: str, i: int) -> int:
    """Index after a list marker (`-`, `+`, `*`, `1.`, `1)`) at `i`, or -1."""
    n = len(line)
    if i < n and line[i] in "-+*":
        return i + 1
    j = i
    while j < n and j - i < 9 and line[j].isascii() and line[j].isdigit():
        j += 1
    if j > i and j < n and line[j] in ".)":
        return j + 1
    return -1


def after_list_marker(line: str, i: int) -> int:
    """Index after `marker[ \t]+` at `i`, or `i` if there is none."""
    m = list_marker_end(line, i)
    if m < 0 or m >= len(line) or line[m] not in " \t":
        return i
    return skip_blanks(line, m)


def is_blank_in_quote(line: str) -> bool:
    """Quote marks and nothing after them (`>`, `> >`): a blank line inside a
    quote, which ends its paragraph and is never a lazy line (`> *a`, `>`,
    `> b`: two paragraphs, the `*` closes nothing)."""
    i = after_quotes(line)
    return i > 0 and not line[i:].strip()


def is_list_item(line: str) -> bool:
    i = skip_blanks(line, after_quotes(line))
    m = list_marker_end(line, i)
    if m < 0 or m >= len(line) or line[m] not in " \t":
        return False
    j = skip_blanks(line, m)
    return j < len(line)


def is_marker_alone(line: str, column: int | None) -> bool:
    """Whether `line`, whose `content_column` is `column`, is a list item's
    marker with nothing after it (an empty item)."""
    return column is not None and column == len(line.rstrip(" ")) + 1


def content_column(line: str) -> int | None:
    """The content column of a list item's first line (no quote marks, no
    tabs before its text), or None when `line` starts no item. Five spaces or
    more after the marker start indented code, and an empty item's content
    starts on a later line: the column is then one past the marker."""
    start = spaces_before(line)
    marker = list_marker_end(line, start)
    if marker < 0 or line[marker:marker + 1] not in ("", " "):
        return None
    text = marker + spaces_before(line[marker:])
    return marker + 1 if text - marker > 4 or text == len(line) else text
