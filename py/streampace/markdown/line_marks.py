"""Where a line's block markers end: quote marks, list markers, indentation.

Written as loops, not regexes: a pattern such as `(?:[ ]{0,3}>[ ]?)*[ \t]*`
backtracks exponentially on `> > > > … x` (each space can belong to either
quantifier), and this text is untrusted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice

__all__ = ["MOST_READ_BACK", "TABLE_LOOKBACK", "after_list_marker", "after_quotes",
           "content_column", "ends_like_marker", "has_delimiter_row", "is_delimiter_line",
           "is_list_item", "is_rule",
           "item_column", "list_marker_end", "quote_marks", "skip_blanks", "spaces_before"]

MOST_READ_BACK = 200  # lines a reading goes back over for what holds a line; past them: cannot tell
TABLE_LOOKBACK = 64  # lines a reading goes back over for a table's delimiter row above a line


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


def quote_marks(line: str) -> tuple[int, int]:
    """How many quote markers `line` starts with, and where its text starts."""
    at = after_quotes(line)
    return line.count(">", 0, at), at


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


def is_blank_in_open_quote(line: str, quote_above: Callable[[], str]) -> bool:
    """A quote's blank line (`is_blank_in_quote`), also after four or more
    spaces under a quote's line (`quote_above()`, asked for only then): while
    a quote goes on, markdown-it reads its marker after any indentation
    (`>a`, `    >b` is one paragraph, `a b`)."""
    if ">" not in line:
        return False  # (most lines: no quote marks to read)
    if is_blank_in_quote(line):
        return True
    return (line[:4] == "    " and is_blank_in_quote(line.lstrip(" "))
            and after_quotes(quote_above()) > 0)


def is_atx(line: str) -> bool:
    """Whether `line` (after any quote marks) is an ATX heading's: one to six
    `#` after at most three spaces, then a blank or the line's end."""
    i = after_quotes(line)
    n = len(line)
    j = i
    while j < n and j - i < 3 and line[j] == " ":
        j += 1
    k = j
    while k < n and k - j < 7 and line[k] == "#":
        k += 1
    return 1 <= k - j <= 6 and (k == n or line[k] in " \t")


def is_list_item(line: str) -> bool:
    i = skip_blanks(line, after_quotes(line))
    m = list_marker_end(line, i)
    if m < 0 or m >= len(line) or line[m] not in " \t":
        return False
    j = skip_blanks(line, m)
    return j < len(line)


def ends_like_marker(line: str) -> bool:
    """Whether `line` ends as a list marker alone does (`-`, `*`, `+`, `1.`,
    `2)`): the cheap test before `is_marker_alone`."""
    return line.rstrip(" ")[-1:] in ("-", "*", "+", ".", ")")


def is_delimiter_line(line: str) -> bool:
    """Whether `line` may be a table's delimiter row (`|---|:-:|`): dashes,
    colons, pipes and blanks, a dash at least."""
    return "-" in line and not line.strip(" \t|:-")


def has_delimiter_row(run: Iterable[str]) -> bool:
    """Whether a table's delimiter row stands among the lines `run` (nearest
    first) before a blank line: the lines under it may be a table's rows.
    Past `TABLE_LOOKBACK` lines, True (not looked at: read as a table's)."""
    for n, line in enumerate(islice(run, TABLE_LOOKBACK + 1)):
        if n == TABLE_LOOKBACK or is_delimiter_line(line):
            return True
        if not line.strip(" "):
            return False
    return False


def is_rule(text: str, marks: str) -> bool:
    """Whether `text`, a line from its first mark, is a thematic break made of
    one of `marks`: three of it or more, with blanks between at most."""
    c = text[:1]
    return (c != "" and c in marks and text.count(c) >= 3
            and not text.replace(" ", "").replace("\t", "").strip(c))


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


def item_column(line: str, reach: int | None = None) -> int | None:
    """The content column of the innermost list item `line` starts (`- - c`:
    4) whose column is at most `reach` (None: any), or of its first item when
    none is; None when it starts none. A marker four columns or more past an
    item's content column is that item's code, no item (`-     - *c`)."""
    column = content_column(line)
    while column is not None and (reach is None or column < reach):
        inner = content_column(line[column:])
        if (inner is None or (reach is not None and column + inner > reach)
                or line[column:column + 4] == "    "):
            break
        column += inner
    return column
