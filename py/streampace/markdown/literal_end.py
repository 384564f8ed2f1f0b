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
  they cannot be a paragraph's continuation; so does a quote's line with
  nothing after its marks (`>`), which such a line ends (the code is then in
  what holds the quote), unless a formula or fence may be open above it.
  Code inside a quote (`>     x`) is read apart, in `quoted_code`. Under an
  item's first line, a line left of its content column that starts a block
  ending a paragraph (a quote, an ATX heading, a fence, a formula's opening,
  a rule) ends the item there, and four columns past what holds it is code
  (`  2. b`, then `    >c`: markdown-it reads it so).
- A display formula: a line of only `$$` or `\\[`, less than four columns past
  its container's content column, opens one (it may interrupt a paragraph),
  and no line since closes it; a blank line, or a line left of the container's
  column, ends it.

The holding item is found by reading back from the block (`holder_column`):
the nearest list item whose content column the block's line reaches (of
several markers on one line, `- - c`, the innermost it reaches, or an outer
one where lines left of the inner one ended that), with no
line between them left of that column, and itself an item (its marker less
than four columns past what holds it, read on back; not a numbered or empty
item right under text, which cannot interrupt a paragraph). A text line left
of that column right under another line may be a lazy continuation: it
decides nothing only if no item right of it stands above it, or if such lines
surely continue the paragraph that starts on an item's line right above them
(text after its marker and on each line that no block can start): that item
still holds what follows. With a formula or fence mark above, that item's
line may be their content, no item: the reading is done both ways, once, and
decides where both name one holder. Where the reading
cannot tell (such a line, a quote, a tab in a line's indentation, a fence
line among a formula's candidates, more than 200 lines back) the answer is
"not literal", and the display completes inline markup as before: never
wrong where it acts (a property test checks each "literal" against the
parser). The list's paths display an item alone or after a dummy item; the
streaming property tests check that they read it as the whole text does.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import NamedTuple

from streampace.markdown.fence import opening_run
from streampace.markdown.line_marks import (
    MOST_READ_BACK,
    after_list_marker,
    after_quotes,
    content_column,
    ends_like_marker,
    has_delimiter_row,
    is_atx,
    is_blank_in_quote,
    is_delimiter_line,
    is_list_item,
    is_marker_alone,
    is_rule,
    item_column,
    list_marker_end,
    quote_marks,
    spaces_before,
)
from streampace.markdown.quoted_code import ends_in_quoted_code, may_end_in_quoted_code

__all__ = ["MOST_READ_BACK", "ends_literal", "goes_on_paragraph", "holder_column", "is_code_run",
           "is_paragraph_text", "may_end_literal"]

_CODE_COLUMNS = 4
_CLOSING = {"$$": "$$", "\\[": "\\]"}
_FENCES = ("```", "~~~")
_OPEN_MARKS = (*_CLOSING, *_FENCES)  # lines that may open a formula or a fence


def ends_literal(tail: str, lines: list[str]) -> bool:
    """Whether the last non-blank of `lines` (an open text's lines, its last
    line without trailing blanks) belongs to an indented code block or an open
    display formula (module docstring). `tail` holds at least their lines
    since the last blank line (it is only searched for formula marks)."""
    end = len(lines) - 1
    while end >= 0 and not lines[end].strip(" "):
        end -= 1
    if end < 0 or not may_end_literal(tail, lines[end]):
        return False  # (most displays: no lines read)
    code = spaces_before(lines[end]) >= _CODE_COLUMNS
    start = end
    while start > 0 and lines[start - 1].strip(" "):
        start -= 1
    if code:
        start = _after_no_paragraph(lines, start, end)
    return ((code and (_is_code(lines, start, end) or _block_left_of_item(lines, start, end)))
            or _ends_in_formula(lines, start, end) or ends_in_quoted_code(lines, start, end))


def _block_left_of_item(lines: list[str], start: int, end: int) -> bool:
    """Whether lines `start..end` (no blank line among them) end in code
    that begins with a line four columns or more past what holds it, right
    under a list item's line whose content column is past it, that starts a
    block ending a paragraph (`_ends_paragraph`): markdown-it's block ends the
    item's paragraph there (read at the item's column), the line is not the
    item's, and where it falls it is indented code (`  2. b`, then `    >c`
    or `    # h`); lazy lines of the item's paragraph may come between
    (`  2. b`, `é`, `    # h`). Read where the item's line starts the run (a
    blank line, an empty quote's line or nothing above it: no paragraph it may
    continue) and starts an item (its marker less than four columns past what
    holds it)."""
    if start == end:
        return False
    above = lines[start]
    first = start + 1
    while first < end and (goes_on_paragraph(lines[first]) or _pipes_as_text(lines, first)):
        first += 1
    line = lines[first]
    indent = spaces_before(line)
    opens_list = content_column(line) is not None
    if (indent < _CODE_COLUMNS or "\t" in above or "\t" in line or after_quotes(above)
            or not (opens_list or _ends_paragraph(line[indent:]))):
        return False  # (most runs)
    column = content_column(above)
    if column is None or column <= indent:
        return False
    marker = spaces_before(above)
    outer = holder_column(reversed(lines[:start]), marker)
    if outer is None or marker - outer >= _CODE_COLUMNS:
        return False  # (perhaps no item: code, or it cannot be told)
    if opens_list and indent - _list_indent(above, outer) >= _CODE_COLUMNS:
        return False  # (four columns past its list's holder: the paragraph's lazy line)
    holder = holder_column(reversed(lines[:start + 1]), indent)
    return (holder is not None and indent - holder >= _CODE_COLUMNS
            and is_code_run(lines[first:end + 1], holder))


def _pipes_as_text(lines: list[str], k: int) -> bool:
    """Whether line `k` of a run of lines under an item's paragraph (the
    lines above it in the run going on that paragraph) starts with a pipe
    and is that paragraph's lazy text: neither it nor the line under it is a
    delimiter row, so it heads no table (`10.  a`, `|`, then `    # *e`)."""
    line = lines[k]
    return (line.lstrip(" ")[:1] == "|" and "\t" not in line
            and not is_delimiter_line(line) and not is_delimiter_line(lines[k + 1]))


def _list_indent(line: str, outer: int) -> int:
    """The content column of what holds the innermost item that item line
    `line` starts, `outer` holding its first (markdown-it's `listIndent`).
    A list marker left of that item's content column ends its paragraph, of
    any number, empty or not, unless four columns or more past this one
    (`   * 2. a`, then `    2) [](`: code where it falls; `  2. b`, then
    `    - c`: a lazy line)."""
    holder, column = outer, content_column(line)
    while column is not None:
        inner = content_column(line[column:])
        if inner is None or line[column:column + _CODE_COLUMNS] == " " * _CODE_COLUMNS:
            break
        holder, column = column, column + inner
    return holder


def goes_on_paragraph(line: str) -> bool:
    """`_continues` for a line that may be lazy (left of what holds the
    paragraph), where a tab is not read."""
    return "\t" not in line and _continues(line)


def _ends_paragraph(text: str) -> bool:
    """Whether `text`, a line from its first character, starts a quote, an ATX
    heading, a fence, a display formula or a rule of `*` or `_`: blocks that
    end an open paragraph (not a list item, a table or a setext underline,
    which markdown-it reads otherwise there)."""
    c = text[:1]
    if c == ">" or is_atx(text) or opening_run(text) is not None or text.rstrip(" ") in _CLOSING:
        return True
    return is_rule(text, "*_")


def _after_no_paragraph(lines: list[str], start: int, end: int) -> int:
    """Where lines `start..end` (no blank line among them) go on after their
    last line that leaves no paragraph open: an empty quote line (`>`, `> >`:
    a line under it without quote marks is no lazy line, the quote ends there,
    as at a blank line; `>`, `    x` is code), an empty list item, in a quote
    or not, that starts the run or comes under such a line or another empty
    item (`>*`, `    x`; `*`, `*`, `      x`: the code is the second item's),
    an ATX heading, on an item's line too (`# h`, `    x`: a heading is one
    line; `+ #`, `      *l`: the item's code); else `start`. Not
    where a formula or fence may be open above it: the line would be their
    content."""
    for k in range(end - 1, start - 1, -1):
        line = lines[k]
        if (">" in line or "#" in line) and content_column(line) is not None:
            # (`- >`: the quote in the item; `+ #`: the item's heading)
            line = line[item_column(line) or 0:]
        if (is_atx(line)
                or (">" in line and (is_blank_in_quote(line)
                                     or _leaves_nested_quote(line, lines[k + 1])))
                or (_is_empty_item(line) and (k == start or is_blank_in_quote(lines[k - 1])
                                              or _is_empty_item(lines[k - 1])))):
            if _has_open_mark(lines[start:k]):
                return start
            return k + 1
    return start


def _leaves_nested_quote(above: str, line: str) -> bool:
    """Whether `line`, with no quote marks and four columns in or more, right
    under `above`, a line quoted two deep or more, ends those quotes: there
    markdown-it reads a block that may end a paragraph (an item's marker,
    numbered any way, even alone; a heading, a fence, a formula, a rule) as
    ending the inner quote's paragraph, so the line is no lazy one, and
    where it falls it is code (`>> a`, `    1. *x`). One quote deep it is
    the paragraph's lazy text, as plain text is under any quote."""
    if (quote_marks(above)[0] < 2 or spaces_before(line) < _CODE_COLUMNS or "\t" in line
            or after_quotes(line)):
        return False
    text = line.lstrip(" ")
    marker = list_marker_end(text, 0)
    return (marker > 0 and text[marker:marker + 1] in ("", " ")) or _ends_paragraph(text) or (
        is_rule(text, "-"))


def _is_empty_item(line: str) -> bool:
    """A line holding a list item's marker and nothing else, after any quote
    marks (`*`, `>*`, `> 2.`): an empty item, which opens no paragraph. Less
    than four columns in (further in, what holds it would have to be read)."""
    if not ends_like_marker(line):
        return False  # (most lines, read for every line of an indented run)
    text = line[after_quotes(line):]
    return spaces_before(text) < _CODE_COLUMNS and is_marker_alone(text, content_column(text))


def may_end_literal(tail: str, last_line: str) -> bool:
    """The cheap half of `ends_literal`, from the last non-blank line alone: False
    when it is not indented as code and `tail` holds no formula mark -- then no
    line before it can make the end literal, and a caller need not gather them."""
    return (spaces_before(last_line) >= _CODE_COLUMNS or _may_hold_formula(tail)
            or (">" in last_line and may_end_in_quoted_code(last_line)))


def _may_hold_formula(tail: str) -> bool:
    # One character first: `in` finds it by memchr, while a two-character
    # needle costs a scan of about 1 µs per KB when it is absent (CPython 3.11).
    return ("$" in tail and "$$" in tail) or ("\\" in tail and "\\[" in tail)


def holder_column(before: Iterable[str], indent: int, *, under_no_row: bool = False
                  ) -> int | None:
    """The content column of the list item holding a line indented `indent`
    columns (0: none), read back over the lines `before` it, nearest first;
    None where that reading cannot tell (a quote, a tab, too far back, a line
    that may be a lazy one). An item's line holds only where it is one: its
    marker less than four columns past the content column of what holds it
    (else it continues a paragraph or is code), read on back the same way.
    `under_no_row`: the line read for is surely no table's delimiter row (a
    line of pipes right above it is then no table's header)."""
    lines = list(islice(before, MOST_READ_BACK + 1))
    column = _holder_reading(lines, indent, {}, under_no_row)
    if not isinstance(column, _Fork):
        return column
    # An item's line that may be a formula's or a fence's content (a mark
    # above it): read it both ways, once; where both give one holder, that is
    # it (`- a`, `  $$`, `      - b`, `  c`, blank: the item holds what follows
    # whether `- b` is an item whose lazy line `c` is, or the formula's).
    as_item = _holder_reading(lines, indent, {column.line: True}, under_no_row)
    as_text = _holder_reading(lines, indent, {column.line: False}, under_no_row)
    return as_item if as_item == as_text and not isinstance(as_item, _Fork) else None


class _Fork(NamedTuple):
    """A reading that turns on whether line `line` is an item's line."""

    line: int


def _holder_reading(lines: list[str], indent: int, forced: dict[int, bool],
                    under_no_row: bool = False) -> int | _Fork | None:
    """`holder_column` over `lines`, the lines of `forced` read as an item's
    (True) or as text (False); a `_Fork` where another line decides it."""
    found = _nearest_holder(lines, 0, indent, forced, under_no_row)
    if found is None or isinstance(found, _Fork):
        return found
    column, marker, pos = found
    while marker is not None:
        outer = _nearest_holder(lines, pos, marker, forced)
        if outer is None or isinstance(outer, _Fork):
            return outer
        if marker - outer[0] >= _CODE_COLUMNS:
            if pos < len(lines) and lines[pos].strip(" "):
                return None  # (under text: that paragraph's, or code; not read)
            # Under a blank line, or the text's first: code, which holds
            # nothing (`    * 😀`, blank, `      _|`: that code's line).
            column = outer[0]
        marker, pos = outer[1], outer[2]
    return column


def _nearest_holder(lines: list[str], pos: int, indent: int, forced: dict[int, bool],
                    under_no_row: bool = False) -> tuple[int, int | None, int] | _Fork | None:
    """(content column, its marker's column, index of the line above it) of
    the nearest item line in `lines[pos:]` that would hold a line indented
    `indent` columns below them; (0, None, …) where none does; None where the
    reading cannot tell; a `_Fork` where it turns on whether an item's line,
    not in `forced`, is one or a formula's or fence's content."""
    floor = indent
    # Text lines left of `floor` end the items right of them, unless they are
    # lazy (a paragraph's continuation), as they may be right under a line
    # that is not blank: then it matters only whether an item right of them
    # stands above them before one that holds them (blank lines close none).
    lower: int | None = None
    lazy: bool | None = None  # (None: the line above the lowest not read yet)
    plain = False  # every line since the lowest's run began continues a paragraph
    for k in range(pos, len(lines)):
        line = lines[k]
        spaces = spaces_before(line)
        if k >= MOST_READ_BACK or line[spaces:spaces + 1] == "\t" or after_quotes(line):
            return None  # (a tab in its indentation, a quote: not read)
        column = item_column(line, indent) if forced.get(k, True) else None
        text = bool(line.strip(" "))
        if lower is not None and lazy is None:
            lazy = text
            if not lazy:
                if lower == 0:
                    return 0, None, k  # (they end every item)
                floor, lower = lower, None
        if lower is not None:
            if column is not None and column > lower:
                if _ended_at(line, column, lines, k, pos):
                    floor, lower = lower, None  # (an empty item they end: it holds none of them)
                    continue
                if not (plain and (is_paragraph_text(line[column:])
                                   or _text_starts_under(line, column, lines, k, pos))):
                    return None  # (they may be lazy lines of a paragraph in this item)
                if k not in forced and _has_open_mark(lines[k + 1:]):
                    return _Fork(k)  # (a formula or fence above: the line may be its)
                # They are: the item's paragraph, lazy lines and all, right
                # under its marker's line (`1. a`, `b [`, then `    # h`).
                lower = None
            elif column is None:
                lower = min(lower, spaces) if text else lower
                plain = plain and _continues_at(lines, k, pos, under_no_row)
                continue
            else:
                floor, lower = lower, None  # an item holding them, lazy or not
        if not text:
            continue
        if column is not None and column > floor:
            # Of several markers (`- - c`) the innermost the line reaches may
            # have ended under lines left of it, and an outer one still hold.
            column = item_column(line, floor) or column
        if (column is not None and column <= indent and column <= floor
                and not _ended_empty(line, column, lines, k)):
            if k + 1 >= len(lines) or not _continues_text(line, lines[k + 1]):
                return column, spaces, k + 1
            if not _surely_paragraph_line(lines, k + 1, spaces):
                return None  # (perhaps no item: the paragraph above's next line)
            column = None  # (no item: that paragraph's next line, read as text)
        if column is not None or spaces >= floor:
            floor = min(floor, spaces)
        elif _interrupts(line):
            if spaces == 0:
                return 0, None, k  # (a block of its own, never lazy: it ends every item)
            floor = spaces
        else:
            lower, lazy, plain = spaces, None, _continues_at(lines, k, pos, under_no_row)
    return 0, None, len(lines)


def _continues(line: str) -> bool:
    """Whether text line `line`, under a paragraph's line, surely continues
    it: no block starts there (read from its first character; no list item)."""
    return content_column(line) is None and is_paragraph_text(line.lstrip(" "))


def _continues_at(lines: list[str], k: int, pos: int, under_no_row: bool = False) -> bool:
    """`_continues` for line `k` of `lines` (nearest first: line `k - 1`
    stands under it; `pos` the first read), where a line starting with a pipe
    continues a paragraph too when it is surely no table's (`+ [`, `|`).
    Such a line heads a table with a delimiter row under it, and is a
    table's row under one; the line under the first one read is not known,
    unless `under_no_row` (the line read for, under `lines[0]`, is none)."""
    line = lines[k]
    if line.lstrip(" ")[:1] != "|":
        return _continues(line)
    if k == 0 and under_no_row:
        return not has_delimiter_row(islice(lines, k, None))
    return not (k <= pos or is_delimiter_line(lines[k - 1])
                or has_delimiter_row(islice(lines, k, None)))


def is_paragraph_text(text: str) -> bool:
    """Whether `text`, a complete line's content, is a paragraph's text for
    sure: no heading, quote, fence, formula, table, HTML, rule or underline
    starts it."""
    c = text[:1]
    if c in "`~":
        return not text.startswith(c * 3)  # (fewer than three open no fence)
    if not c or c in " \t#>$|<\\":
        return False
    if c == "_" and text.count("_") < 3:
        return True  # (a rule takes three; `_` marks no item nor underline)
    bare = text.rstrip(" ")
    if c in "*+" and len(bare) >= 2 and not bare.strip(c) and (c == "+" or len(bare) < 3):
        return True  # (`**`, `++`: no rule, no item's marker, no underline)
    return c not in "-*_=+" or bool(text.replace(" ", "").strip(c))


def _ended_empty(line: str, column: int, lines: list[str], k: int) -> bool:
    """Whether item line `lines[k]` is a marker alone with a blank line under
    it: an item starts with at most one blank line, so that one is empty and
    holds nothing below (`-`, blank, `    *b`: code)."""
    return k > 0 and is_marker_alone(line, column) and not lines[k - 1].strip(" ")


def _ended_at(line: str, column: int, lines: list[str], k: int, pos: int) -> bool:
    """Whether item line `k`, a marker alone (content column `column`), ends
    at the line under it: text left of its content column, which no open
    paragraph takes as a lazy line (`-`, then `[x]:u` at the edge)."""
    if k <= pos or not is_marker_alone(line, column):
        return False
    under = lines[k - 1]
    return bool(under.strip(" ")) and spaces_before(under) < column


def _text_starts_under(line: str, column: int, lines: list[str], k: int, pos: int) -> bool:
    """Whether item line `k`, a marker alone (content column `column`), has
    its paragraph start on the line under it, in the item (`2.`, then
    `   ~~*`): the plain lines under that are its lazy lines."""
    return k > pos and is_marker_alone(line, column) and spaces_before(lines[k - 1]) >= column


def _continues_text(item: str, above: str) -> bool:
    """Whether the item line `item` may be a paragraph's continuation: right
    under a line that is not blank (text, or an item whose paragraph it may
    continue: not read further), and an item that cannot interrupt a
    paragraph (numbered other than 1, or with no text)."""
    if not above.strip(" "):
        return False
    mark = item.lstrip(" ").split(" ", 1)
    return len(mark) < 2 or not mark[1].strip(" ") or mark[0][:-1] not in ("", "1")


def _surely_paragraph_line(lines: list[str], k: int, indent: int) -> bool:
    """Whether line `k` (the lines after it in `lines` stand above it) is
    surely a paragraph's line: text that starts no block (`_continues`), or an
    item's marker line whose text is, its content column at or left of
    `indent` (a marker that far in under it stands in that paragraph's
    container, where it cannot interrupt it: `+ 😀`, then `  2) ` + backtick);
    less than four columns in, with no pipe (a table's row) and no formula or
    fence mark above it (their content). Not a line that may be a link
    reference definition (`[x]:u`): no paragraph is open under one (`[x]:u`,
    `0. *`: a list, whose item holds the lines under it)."""
    line = lines[k]
    column = content_column(line)
    if column is not None and column > indent:
        return False
    return (spaces_before(line) < _CODE_COLUMNS and "|" not in line
            and not (line.lstrip(" ")[:1] == "[" and "]:" in line)
            and _continues(line if column is None else line[column:])
            and not _has_open_mark(lines[k:]))


def _has_open_mark(lines: list[str]) -> bool:
    """Whether one of `lines` holds a mark that may open a formula or a fence
    (`$$`, `\\[`, three backticks or tildes): lines under it may be their content."""
    return any(mark in line for line in lines for mark in _OPEN_MARKS)


def _interrupts(line: str) -> bool:
    """A formula or fence line: it interrupts a paragraph, so it is never lazy."""
    mark = line.strip(" ")
    return mark in _CLOSING or mark[:3] in _FENCES


def _holder_column(lines: list[str], k: int) -> int | None:
    return holder_column(reversed(lines[:k]), spaces_before(lines[k]))


def _is_code(lines: list[str], start: int, end: int) -> bool:
    """Lines `start..end`, a blank line or a line that leaves no paragraph
    open before them (`_after_no_paragraph`), are an indented code block's."""
    if start == 0:
        return False  # no blank line before them in this text
    above = lines[start - 1]
    if not above.strip(" "):
        column = _holder_column(lines, start)
    elif "\t" in above or lines[start].lstrip(" ")[:1] == ">":
        return False  # (markdown-it's quote takes a `>` at any indent as its next line)
    else:
        # The quote ended: the code is in what holds the quote (at the line's
        # start, the top level: no item's content starts there; on an item's
        # line, `- >`, that item). Under an empty item, in that item.
        column = item_column(above) if ">" in above else content_column(above)
        if column is None:
            column = _holder_column(lines, start - 1) if above[0] == " " else 0
    return is_code_run(lines[start:end + 1], column)


def is_code_run(run: list[str], column: int | None) -> bool:
    """Whether lines `run`, under a line after which no paragraph is open,
    are an indented code block's in what holds them at content column
    `column` (None: cannot tell): four columns past it, no tab, no quote."""
    return (column is not None and not any("\t" in line or after_quotes(line) for line in run)
            and min(map(spaces_before, run)) >= column + _CODE_COLUMNS)


def _ends_in_formula(lines: list[str], start: int, end: int) -> bool:
    """A display formula opened in lines `start..end` (no blank line among
    them) is still open after them."""
    closing: str | None = None
    column = 0  # the open formula's container's content column
    for k in range(start, end + 1):
        line = lines[k]
        if "\t" in line or after_quotes(line):
            return False
        if line.lstrip(" ")[:3] in _FENCES:
            # A fence's lines may hold "$$", and the formula's may be a fence's
            # opened above the blank line before them: not read.
            return False
        if closing is not None:
            if spaces_before(line) >= column:
                if line.strip(" ") == closing:
                    closing = None
                continue
            closing = None  # left of its container: the formula ended there
        try:
            opened = _opening(lines, k)
        except _CannotTell:
            return False
        if opened is not None:
            closing, column = opened
    return closing is not None


class _CannotTell(Exception):
    """Whether a line opens a formula depends on what this reading leaves alone."""


def _opening(lines: list[str], k: int) -> tuple[str, int] | None:
    """(closing line, container column) when line `k` opens a display formula,
    None when it does not; `_CannotTell` where its container is not known."""
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
    if column is not None:
        if k and _continues_text(line, lines[k - 1]):
            raise _CannotTell
    else:
        column = _holder_column(lines, k)
        if column is None:
            raise _CannotTell
        if spaces_before(line) - column >= _CODE_COLUMNS:
            return None
    return _CLOSING[mark], column
