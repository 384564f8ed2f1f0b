"""What the open (last, unfinished) block shows while it streams.

The source of an open block ends mid-construct most of the time. Rendered as
is, `**bol` shows its asterisks and then flips to bold when `**` arrives; a
table header shows as a row of pipes until its delimiter row arrives. Here the
open block's source is rewritten, for display only, into the form it will most
likely take, so every construct changes its appearance at most once:

| open construct at the end                 | shown as                                 |
|-------------------------------------------|------------------------------------------|
| `**bol`, `*it`, `_it`, `~~del` (text after the opener) | closed: **bol**, *it*, ~~del~~ |
| an opener with nothing but held text after it (`a **`, `a **[`) | held back |
| `` `code `` (text after the backticks)    | closed code span                         |
| a backtick run with nothing after it      | held back                                |
| `[text` (no `]` yet), `![alt`             | the bracket is held back, text shown plain |
| `[text]` as the last characters           | both brackets held back (a link may follow) |
| `[text](url` / `[text](`                  | closed with `)`: a link (its URL is not shown) |
| `<https://exa` (autolink so far)          | closed with `>`                          |
| `<tag` / `&amp` (tag or entity so far) / trailing `\\` | held back                   |
| a partial line of only block markers (`-`, `1.`, `##`, `>`, `` ``` ``, `|--`) | held back |
| `| a | b` header without a delimiter row | a table header (the delimiter row is implied) |
| the same on a list item's or a quote's lazy line | as is: no table starts there |
| a row under a delimiter row (`| a |`, `--`, `| b`) | a body row: no row implied |
| `[label]: /url "title"` (a reference definition) | held back (it never shows)     |

Trailing spaces of a partial line are not shown (they are invisible anyway and
would stop a closer from closing). When the block becomes final it is rendered
from its real source; the display form is never used for a final block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from streampace.markdown.completion import complete_inline
from streampace.markdown.line_marks import (
    TABLE_LOOKBACK,
    content_column,
    ends_like_marker,
    has_delimiter_row,
    is_delimiter_line,
    is_marker_alone,
    is_rule,
    item_column,
    list_marker_end,
    quote_marks,
    spaces_before,
)
from streampace.markdown.line_marks import after_list_marker as _after_list_marker
from streampace.markdown.line_marks import after_quotes as _after_quotes
from streampace.markdown.line_marks import is_atx as _is_atx
from streampace.markdown.line_marks import is_blank_in_open_quote as _blank_in_open_quote
from streampace.markdown.line_marks import is_list_item as _is_list_item
from streampace.markdown.line_marks import skip_blanks as _skip_blanks
from streampace.markdown.literal_end import (
    MOST_READ_BACK,
    ends_literal,
    goes_on_paragraph,
    holder_column,
    is_code_run,
    is_paragraph_text,
)

__all__ = ["display_source", "fence_after", "shown_in_fence", "spaces_before"]

# Line-start scanners. Written as loops, not regexes: a pattern such as
# `(?:[ ]{0,3}>[ ]?)*[ \t]*` backtracks exponentially on `> > > > … x`
# (each space can belong to either quantifier), and this text is untrusted.
_MARKER_LEAD = frozenset(" \t>")
_CODE_INDENT = 4  # columns past a container's content column that make a line code
_CODE_PREFIX = " " * _CODE_INDENT  # a line starting so may be code: read further
_HOLDER_READINGS = 8  # lines one display reads back for what holds them (`_Readings`)
_MARKER_CHARS = frozenset("-+*=_#~`|:.)0123456789 \t")


def _marker_only(line: str) -> bool:
    """Only block markers (quote marks, then list / heading / fence / rule /
    table-delimiter characters): a line that has no text yet."""
    i, n = 0, len(line)
    while i < n and line[i] in _MARKER_LEAD:
        i += 1
    while i < n and line[i] in _MARKER_CHARS:
        i += 1
    return i == n


def _escape_exposed(line: str, shown: str, p: int) -> str:
    """`shown` (`line`, its text starting at `p`, less what is held back there)
    with a backslash before a block marker that the held text uncovered:
    `- [1. Intro` shows `- 1\\. Intro` (the link's text, not a nested list),
    `[# a` a paragraph, not a heading. Escaped, the marker shows as itself."""
    if _exposed_marker(line[p:]) >= 0:
        return shown  # (the line's own marker: none uncovered)
    k = _exposed_marker(shown[p:])
    return shown if k < 0 else shown[:p + k] + "\\" + shown[p + k:]


def _exposed_marker(text: str) -> int:
    """Where in `text`, a line's text after its prefix, a block marker stands
    that a backslash there makes plain text; -1 if none starts it: a bullet,
    a rule or setext underline, an ATX mark, a quote mark, a `~~~` fence, an
    ordered item's `.` or `)`. (No HTML block starts: raw HTML is off.)"""
    c = text[:1]
    if not c:
        return -1
    marker = list_marker_end(text, 0)
    if marker > 0 and text[marker:marker + 1] in ("", " ", "\t"):
        return marker - 1  # (a bullet; an ordered item's `.` or `)`)
    if c in "-*_=":
        return 0 if not text.replace(" ", "").replace("\t", "").strip(c) else -1
    if c == "#":
        run = len(text) - len(text.lstrip("#"))
        return 0 if run <= 6 and text[run:run + 1] in ("", " ", "\t") else -1
    if c == ">":
        return 0
    if c == "~":  # (a backtick run there gets its code span's closer on its line: no fence)
        return 0 if text.startswith("~~~") else -1
    return -1


def _continues_paragraph(lines: list[str], k: int) -> bool:
    """Whether item line `k` (`is_list_item`: it has text) continues the
    paragraph on line `k - 1` instead of starting an item: an ordered item
    not numbered 1 cannot interrupt a paragraph where it stands in that
    paragraph's container (`*` and a backtick, then `  2)` and one: a
    paragraph, one code span). Left of that container it ends it, and starts
    a list. Where the container cannot be told (quotes, tabs), False. A
    marker four columns or more past what holds it starts no item at all
    (`_too_deep_for_item`): True."""
    line, above = lines[k], lines[k - 1]
    if line.startswith(_CODE_PREFIX) and _too_deep_for_item(lines, k):
        return True
    if "\t" in line or "\t" in above or ">" in line or ">" in above:
        return False  # (a container not read; the marker then stands past the spaces)
    i = len(line) - len(line.lstrip(" "))
    marker = list_marker_end(line, i)
    if marker - i == 1 or int(line[i:marker - 1]) == 1:
        return False  # (a bullet, or an item numbered 1, interrupts)
    # A marker four columns past what holds it, under paragraph text, is that
    # paragraph's text too (`[`, `    -`, then `2) _]()`: one link's text);
    # so is an empty item's marker in the paragraph's container (`[`, `0.`).
    above_is_text = k >= 2 and _has_paragraph_text(lines, k - 2) and (
        (above.startswith(_CODE_PREFIX) and _too_deep_for_item(lines, k - 1))
        or _empty_marker_as_text(lines, k - 1))
    if not (above_is_text or _has_paragraph_text(lines, k - 1)):
        return False
    # (Left of that container: a sibling's or an outer item's next item.)
    column = (_paragraph_container(lines, k - 1) if above_is_text
              else _holding_column(lines, k - 1))
    return column is not None and i >= column


def _holding_column(lines: list[str], k: int) -> int | None:
    """The content column of what holds the paragraph text on line `k`: on
    an item's line, the innermost item's (`+ * [`, then `  2) ](` ends that
    item and starts a list in the outer one); else `_paragraph_container`."""
    column = item_column(lines[k])
    return column if column is not None else _paragraph_container(lines, k)


def _empty_marker_as_text(lines: list[str], k: int) -> bool:
    """Whether line `k`, a list marker alone under a paragraph's line, is that
    paragraph's text: an empty item cannot interrupt a paragraph where it
    stands in the paragraph's container (left of it, markdown-it starts a
    list). Not `-`, which underlines the paragraph there."""
    line = lines[k]
    if line.lstrip(" ")[:1] == "-" or not is_marker_alone(line, content_column(line)):
        return False
    container = _holding_column(lines, k - 1)
    return container is not None and spaces_before(line) >= container


def _has_paragraph_text(lines: list[str], k: int) -> bool:
    """Whether line `k` may be a paragraph's: no heading, fence or table row,
    and text after its block prefix (quote marks, an item's marker)."""
    line = lines[k]
    return not (_is_atx(line) or _fence_run(line) is not None or _is_table_row(lines, k)
                or _prefix_end(line) >= len(line.rstrip(" ")))


def _is_table_row(lines: list[str], k: int) -> bool:
    """Whether line `k`, under which a line that is no delimiter row stands,
    is a table's row: it starts with a pipe and a delimiter row stands at or
    above it in its run of lines. With none, no table has started: the line
    is a paragraph's text (`|` + backtick, then `2) ` + backtick: one code
    span across both)."""
    return _is_table_line(lines[k]) and has_delimiter_row(_above(lines, k + 1))


def _is_star_rule(line: str) -> bool:
    """Whether `line`, less than four columns in, is a thematic break of `*`
    or `_` (`   ***`): it ends a paragraph above it, and the line under it
    is no lazy one (`2) ` + backtick, `   ***`, `😀`: a paragraph of its own).
    Not one of `-`, which may be a setext underline or a delimiter row."""
    text = line.lstrip(" ")
    return len(line) - len(text) < _CODE_INDENT and is_rule(text, "*_")


def _is_underline(lines: list[str], k: int) -> bool:
    """Whether complete line `k`, under a paragraph's line, is its setext
    underline (`*a`, `-`: a heading): `=` or `-` alone, in the paragraph's
    container and less than four columns past its content column (left of
    it, `=` is a lazy line's text and `-` an item). False where the container
    cannot be told."""
    line, above = lines[k], lines[k - 1]
    mark = line.strip(" ")
    if not mark or mark[0] not in "=-" or mark.strip(mark[0]) or "\t" in line or ">" in line:
        return False
    if (_prefix_end(above) >= len(above.rstrip(" "))
            or is_marker_alone(above, content_column(above))):
        return False  # (no text above: an empty item's marker, `1.`, `   --`)
    column = _paragraph_container(lines, k)
    return column is not None and column <= spaces_before(line) < column + _CODE_INDENT



def _starts_empty_item(lines: list[str], k: int) -> bool:
    """Whether complete line `k`, a list marker alone, starts an item under
    the paragraph on line `k - 1`: only left of that paragraph's container
    (in it an empty item cannot interrupt the paragraph; left of it, a
    sibling's or an outer list's item ends it: `- a`, `  - *b`, `  -`).
    Where the container cannot be told, False (as text, as before)."""
    line, above = lines[k], lines[k - 1]
    if not is_marker_alone(line, content_column(line)) or not above.strip(" "):
        return False
    if "\t" in line or "\t" in above or _after_quotes(line) or _after_quotes(above):
        return False  # (a container not read; a `>` elsewhere, `<div>`, is text)
    column = content_column(above)
    if column is None:
        column = _paragraph_container(lines, k - 1)
    return column is not None and spaces_before(line) < column


def _paragraph_container(lines: list[str], k: int) -> int | None:
    """The content column of what holds the paragraph that line `k` (text, no
    item's line) is in: what holds its first line, as the lines after that
    may be lazy ones left of it (`1. a`, `   b [`, ` c`, `2. d`: the `2.` is
    left of the item holding the paragraph, a sibling). A line of pipes with
    no delimiter row under it is no table's header: the paragraph's too (`- a`,
    `  | b |`, `  | c |`, then `-`). None: cannot tell."""
    piped = False  # such lines passed
    for j in range(k, max(0, k - MOST_READ_BACK), -1):
        above = lines[j - 1]
        if "\t" in above or ">" in above:
            return None  # (a container not read)
        column = content_column(above)
        if column is not None:
            return column  # (the paragraph starts on that item's line)
        if (_is_table_line(above) and not is_delimiter_line(above)
                and not is_delimiter_line(lines[j])):
            piped = True
            continue
        if piped and is_delimiter_line(above):
            return None  # (the lines of pipes under it may be a table's rows)
        if not is_paragraph_text(above.lstrip(" ")):
            # A blank line, a rule, a heading, a fence...: the paragraph starts
            # below it (or, a table row, say, read as before from line `j`).
            return _holder_of(lines, j, spaces_before(lines[j]))
    return _holder_of(lines, 0, spaces_before(lines[0])) if k < MOST_READ_BACK else None


def _markers_left(line: str, shown: str, below: str) -> bool:
    """Whether what is held back of `line` left `shown` only block markers
    while the line `below` it, which continues the paragraph, has no quote
    marks: its text can go up onto `shown` (`_text_going_up`)."""
    return (_marker_only(shown) and not _marker_only(line)
            and _skip_blanks(below, _after_quotes(below)) == spaces_before(below))


def _text_going_up(below: str, starts_text: bool = True) -> str:
    """The text of `below`, a line continuing a paragraph, as it reads once
    it goes up: onto the markers of the line above it, or to the paragraph's
    start when the lines above it went. A block marker it starts with is the
    paragraph's text there (`    - x` under `   + [`: four columns in, left of
    the item's content; `2)` under `[`: an item that cannot interrupt a
    paragraph), so it is escaped (`\\- x`): up there it would start a list.
    `starts_text`: whether it goes where the block's text starts (not after
    text the line above kept)."""
    text = below.lstrip(" ")
    k = _exposed_marker(text) if starts_text else -1
    return text if k < 0 else text[:k] + "\\" + text[k:]


def _prefix_end(line: str) -> int:
    """End of the block prefix (quote markers, a list marker, an ATX mark)."""
    i = _after_list_marker(line, _skip_blanks(line, _after_quotes(line)))
    j = i
    while j < len(line) and j - i < 6 and line[j] == "#":
        j += 1
    if j > i and (j == len(line) or line[j] in " \t"):
        i = _skip_blanks(line, j)
    return i


def _fence_run(line: str) -> tuple[int, str] | None:
    """(index after the run, run) of a fence opening or closing on `line`,
    also after several markers (`- - ````, `> - > ````: nested containers)."""
    n = len(line)
    k = _skip_blanks(line, _after_quotes(line))
    i = _after_list_marker(line, k)
    while k < i < n and (line[i] == ">" or "0" <= line[i] <= "9"
                         or (line[i] in "-*+" and line[i + 1:i + 2] in ("", " ", "\t"))):
        k = _skip_blanks(line, _after_quotes(line, i))
        i = _after_list_marker(line, k)
    if i < n and line[i] in "`~":
        j = i
        while j < n and line[j] == line[i]:
            j += 1
        if j - i >= 3:
            return j, line[i:j]
    return None


def _holder_of(lines: list[str], k: int, indent: int) -> int | None:
    """The content column of the list item holding line `k`, indented
    `indent` (0: none; None: cannot tell, `holder_column`)."""
    return holder_column(_above(lines, k), indent)


class _Readings:
    """How many more lines one display reads back for what holds them
    (`_in_holder`). Each reading goes back up to `MOST_READ_BACK` lines, and
    the paragraph's lines are tried one by one: a hostile run of indented
    marks (`2) a`, then `    # h`, `c` a hundred times) cost one reading a
    line. Past the budget a line is read as what holds it cannot be told,
    as at a tab: the nearest lines, tried first, keep their readings."""

    __slots__ = ("left",)

    def __init__(self, readings: int = _HOLDER_READINGS) -> None:
        self.left = readings

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _in_holder(lines: list[str], k: int, mark: str, readings: _Readings) -> str | None:
    """Line `k`, four spaces in or more with `mark` first, read from the
    content column of the list item holding it, where it stands less than
    four columns past that (a block's line there, not code); else None (or
    where the holder cannot be told, or `readings` are spent)."""
    line = lines[k]
    indent = spaces_before(line)
    if line[indent:indent + 1] != mark or not readings.take():
        return None  # (most lines: no reading back)
    # (A line starting with `mark` is no delimiter row: a line of pipes above
    # it heads no table.)
    column = holder_column(_above(lines, k), indent, under_no_row=True)
    return None if column is None or indent - column >= _CODE_INDENT else line[column:]


def _is_heading_in_item(lines: list[str], k: int, readings: _Readings) -> bool:
    """Whether line `k`, four spaces in or more, is an ATX heading in the list
    item holding it (`0. a` then `    # c`)."""
    text = _in_holder(lines, k, "#", readings)
    return text is not None and _is_atx(text)


def _is_rule_in_item(lines: list[str], k: int, readings: _Readings) -> bool:
    """Whether line `k`, four spaces in or more, is a thematic break of `*` or
    `_` in the list item holding it (`2) ~~a`, `    ***`: it ends the item's
    paragraph, and the line under it is no lazy one)."""
    mark = lines[k].lstrip(" ")[:1]
    text = _in_holder(lines, k, mark, readings) if mark in ("*", "_") else None
    return text is not None and _is_star_rule(text)


def _is_marked_heading(line: str) -> bool:
    """Whether `line` is an ATX heading after its quote marks and a list
    marker (`* # a`, `> # a`): one line, no paragraph open after it, so the
    line under it is no lazy one (`* # ` + backtick, then `s`)."""
    if "#" not in line:
        return False  # (most lines)
    q = _after_quotes(line)
    start = _skip_blanks(line, q)
    m = list_marker_end(line, start)
    if m > 0 and start - q < _CODE_INDENT and line[m:m + 1] == " ":
        return _is_atx(line[m + 1:])  # (the item's content, three spaces in at most)
    return q > 0 and _is_atx(line[q:])  # (no marks: `_is_atx` reads the line itself)


def _is_table_line(line: str) -> bool:
    i = 0
    while i < len(line) and i < 3 and line[i] == " ":
        i += 1
    return i < len(line) and line[i] == "|"


_REF_DEF = re.compile(r"^[ ]{0,3}\[(?:[^\]\\]|\\.)+\]:")  # alternatives disjoint: linear
def fence_after(fence: str | None, line: str) -> str | None:
    """The fence run open after `line`, `fence` the one open before it, as the
    display reads fence lines (`display_source`: any run of three or more
    after quote marks, a list marker and blanks)."""
    found = _fence_run(line)
    if found is None:
        return fence
    end, run = found
    if fence is None:
        return run
    if run[0] == fence[0] and len(run) >= len(fence) and not line[end:].strip():
        return None
    return fence


def shown_in_fence(line: str) -> str:
    """What the display shows of a fence's partial last line: nothing while it
    is block markers only (it may still be the closing fence)."""
    return "" if line and _marker_only(line) else line


_FENCE_RUNS = ("`" * 3, "~" * 3)


def _may_close(opening: str, line: str) -> bool:
    """Whether fence line `line` may close the fence `opening` opened: not
    with a list marker before its run (in the fence's item a new item ends
    the fence, `_item_end`; anywhere else the line is code), nor under
    another number of quote marks than the opening's (nor, `_code_under_holder`,
    one indented as code)."""
    quotes = _after_quotes(line)
    if _after_list_marker(line, _skip_blanks(line, quotes)) > _skip_blanks(line, quotes):
        return False
    return line.count(">", 0, quotes) == opening.count(">", 0, _after_quotes(opening))


def _code_under_holder(text: str, opening: int, line: str) -> bool:
    """Whether fence line `line` stands four columns or more past the content
    column of what holds the fence opened on the line at offset `opening`
    (` ``` ` then `    ``` ` at the top level): code, no closer. Where that
    column cannot be told, the opening's run stands for it (the column is at
    most there). Read only for a line so indented."""
    indent = spaces_before(line)
    if indent < _CODE_INDENT or "\t" in line:
        return False
    end = text.find("\n", opening)
    first = text[opening:] if end < 0 else text[opening:end]
    if _after_quotes(first) or "\t" in first:
        return False
    column = _fence_holder(text, opening, first)
    if column is None:
        run = _fence_run(first)
        column = run[0] - len(run[1]) if run is not None else indent
    return indent >= column + _CODE_INDENT


def _fence_holder(text: str, start: int, line: str) -> int | None:
    """The content column of the list item holding the fence opened on
    `line` (at offset `start` of `text`): the item `line` starts, or the one
    read back above it (0: none; None: cannot tell)."""
    column = content_column(line)
    if column is None:
        column = holder_column(_lines_back(text, start), spaces_before(line))
    return column


def _fence_reading(text: str) -> tuple[bool, int]:
    """Whether `text` ends inside a fence, as the display reads fence lines,
    and the offset of the line after the last fence a list item's end ended
    (0: none), before which no line is text. Only lines holding a run of
    three backticks or tildes can open or close a fence (`_fence_run`), so
    only those are read, found by `str.find`: the lines of a long open block
    without code cost no Python step each. A fence inside a list item also
    ends with the item (`_item_end`)."""
    fence: str | None = None
    opened = (0, 0)  # the open fence's opening line (start, end)
    after = 0
    pos = 0
    # The next of each run at or after pos (a run's character looked for first:
    # found by memchr, where an absent run costs a scan of about 1 µs per KB).
    found = [text.find(run) if run[0] in text else -1 for run in _FENCE_RUNS]
    while True:
        at = min((i for i in found if i >= 0), default=-1)
        if at < 0:
            ended = _item_end(text, *opened, len(text)) if fence is not None else -1
            return ended < 0 and fence is not None, max(after, ended)
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if fence is not None:
            # (This line too: where it ends the fence's item, it may open one.)
            ended = _item_end(text, *opened, end)
            if ended >= 0:
                fence, after = None, ended
        if fence is None:
            opened = (start, end)
            fence = fence_after(fence, text[start:end])
        elif (end < len(text) and _may_close(text[opened[0]:opened[1]], text[start:end])
              and not _code_under_holder(text, opened[0], text[start:end])):
            # A partial last line closes nothing yet: `> - ```` may still be
            # code, and the lines above it would be read as text.
            fence = fence_after(fence, text[start:end])
        pos = end + 1
        found = [i if i < 0 or i >= pos else text.find(run, pos)
                 for i, run in zip(found, _FENCE_RUNS, strict=True)]


def _item_end(text: str, start: int, end: int, stop: int) -> int:
    """Where the list item holding the fence opened on `text[start:end]` ends
    before `stop`: the offset of the first line between them that stands left
    of the item's content column (a fence's line is never a lazy one), or -1.
    Read only when such a line stands left of the fence's own column, as no
    line at a top-level fence does."""
    line = text[start:end]
    if "\t" in line or _after_quotes(line):
        return -1
    found = _fence_run(line)
    column = found[0] - len(found[1]) if found is not None else 0
    if not column or not re.compile(rf"\n {{0,{column - 1}}}[^ \t\n]").search(text, end, stop):
        return -1
    item = _fence_holder(text, start, line)
    if not item:
        return -1  # (not in an item, or cannot tell: read as before)
    left = re.compile(rf"\n {{0,{item - 1}}}[^ \t\n]").search(text, end, stop)
    return -1 if left is None else left.start() + 1


def _above(lines: list[str], k: int) -> Iterator[str]:
    """`lines[:k]`, nearest first, without a copy (for `holder_column`)."""
    return (lines[i] for i in range(k - 1, -1, -1))


def _lines_back(text: str, end: int) -> Iterator[str]:
    """The lines of `text` before offset `end` (a line's start), nearest first."""
    while end > 0:
        start = text.rfind("\n", 0, end - 1) + 1
        yield text[start:end - 1]
        end = start


def _whole_definition(line: str, after: str) -> bool:
    """Whether `line` is a link reference definition with its destination, no
    title on the line `after` it (which may open one: held back with it)."""
    found = _REF_DEF.match(line)
    return (found is not None and bool(line[found.end():].strip(" "))
            and not _no_definition(line, found.end())
            and after.lstrip(" ")[:1] not in ("\"", "'", "("))


def _no_definition(line: str, i: int) -> bool:
    """Whether the line whose label ends at `i` (after its `:`) is surely no
    definition: after its destination, text that can be no title, or text
    after its title (`[x]:u *y` is a paragraph). Not where a title may go on
    to the next line, nor with a backslash in it (not read)."""
    n = len(line)
    i = _skip_blanks(line, i)
    if i >= n:
        return False  # (its destination may come on the next line)
    if line[i] == "<":
        end = line.find(">", i)
        if end < 0:
            return False
        i = end + 1
    else:
        while i < n and line[i] not in " \t":
            i += 1
    k = _skip_blanks(line, i)
    if k >= n:
        return False
    if k == i or line[k] not in "\"'(":
        return True
    close = line.find(")" if line[k] == "(" else line[k], k + 1)
    if close < 0 or "\\" in line[k:]:
        return False
    return bool(line[close + 1:].strip(" \t"))


def _ends_in_row(para: list[str], run: int, implied: bool) -> bool:
    """Whether the paragraph's last line is a table's row, whose last cell is
    completed alone: the last `run` lines start with a pipe and a delimiter row
    stands among them or right above them (the header may have no pipe
    first), or one is `implied` under them; with no such run, a table's rows
    stand above it (a row needs no pipe first). Else lines with pipes are a
    paragraph's, an item's lazy lines too, and a code span or a link may run
    across them (`- ` + backtick, then `|` + backtick)."""
    if run:
        return implied or any(is_delimiter_line(para[k])
                              for k in range(max(1, len(para) - run - 1), len(para)))
    return _has_table(para)


def _has_table(para: list[str]) -> bool:
    """Whether a table starts in the lines `para`: a delimiter row under a
    line with a pipe, of as many cells (the first line's counted after its
    block prefix: a header on an item's marker line)."""
    for k in range(1, len(para)):
        line = para[k]
        if "-" in line and not line.strip(" \t|:-") and "|" in para[k - 1]:
            above = para[k - 1]
            if _cells(above[_prefix_end(above):] if k == 1 else above) == _cells(line):
                return True
    return False


def _kept_paragraph_text(para: list[str]) -> list[str]:
    """`para` with its first line kept a paragraph's: where what is held back
    made it a whole link reference definition (`[x]:u [` without its `[`),
    the parse would hide that line and read the lines under it anew (`    x`
    under a definition is code); its label's `[` escaped shows the same text."""
    first = para[0]
    if not _whole_definition(first, ""):
        return para
    at = first.index("[")
    return [first[:at] + "\\" + first[at:], *para[1:]]


def _past_code_after_definition(lines: list[str], start: int, end: int) -> int:
    """The first of lines `start..end` (right under a whole link reference
    definition) past the indented code block they start with, if any (end + 1:
    all of them are code). A definition is no paragraph, so those lines are
    no lazy lines of one (`[x]: /u`, then `    *x`: code), and the line that
    ends the code starts a block of its own (`    ` + backtick, then `e`)."""
    holder = _holder_of(lines, start - 1, spaces_before(lines[start - 1]))
    k = start
    while k <= end and is_code_run(lines[k:k + 1], holder):
        k += 1
    return k


def _underline_may_be_table(lines: list[str], k: int) -> bool:
    """Whether underline line `k`, in text with a pipe, may be a table's line
    instead, or cannot be told from one: True but where every line of the run
    above holds a paragraph's plain text after its markers (`+ *|é`, `  -`:
    no table, two cells over one; not a line starting with a pipe, a row or a
    lazy line the container reading does not take for a paragraph's: `-`,
    `  |-`, `=`; nor nested markers, `1. - c`, whose inner content column it
    does not read) and the underline is no delimiter row of as many cells as
    the line above."""
    line, above = lines[k], lines[k - 1]
    if (is_delimiter_line(line) and "|" in above
            and _cells(above[_prefix_end(above):]) == _cells(line)):
        return True
    for j in range(k - 1, max(-1, k - 1 - TABLE_LOOKBACK), -1):
        run_line = lines[j]
        if not run_line.strip(" "):
            return False
        text = run_line[_prefix_end(run_line):]
        if not goes_on_paragraph(text) or is_delimiter_line(run_line):
            return True  # (`1. - c`: a nested item, whose content column is not read)
    return k - 1 >= TABLE_LOOKBACK  # (not looked at the run's start)


def _cells(row: str) -> int:
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return len(re.split(r"(?<!\\)\|", body))


def _quote_start(lines: list[str], start: int, end: int, readings: _Readings) -> int:
    """Where the last paragraph of `lines[start:end + 1]` starts once quotes
    are read: a line quoted deeper than every line above it starts a quote,
    which ends the paragraph above (`a` then `> b`); a line back in a quote
    after its lazy line (`> a`, `lazy`, `> b`) is the same paragraph's; a
    quote's line left of the list item holding the quote above starts a quote
    of its own (`2)`, `   >a`, `>b`: the item and its quote end there).
    Read top down, the `readings` left go to the nearest indented quote lines."""
    held = [k for k in range(end, start - 1, -1)
            if lines[k].startswith(_CODE_PREFIX) and lines[k].lstrip(" ")[:1] == ">"]
    read = frozenset(held[:max(0, readings.left)])
    deepest = -1
    for k in range(start, end + 1):
        line = lines[k]
        # (most lines: no quote marks, no four blanks; no call further)
        depth = quote_marks(line)[0] if not line.startswith(_CODE_PREFIX) else (
            _held_quote_depth(lines, k, readings) if k in read else 0)
        if depth > deepest or (depth and _left_of_quote_holder(lines, start, k)):
            start, deepest = k, depth
    return start


def _left_of_quote_holder(lines: list[str], start: int, k: int) -> bool:
    """Whether quote line `k` stands left of the content column of the list
    item holding quote line `start` (False where that cannot be told)."""
    indent = spaces_before(lines[k])
    if indent >= spaces_before(lines[start]) or "\t" in lines[k]:
        return False  # (most lines: the holder is at or left of the quote's marker)
    holder = _holder_of(lines, start, spaces_before(lines[start]))
    return holder is not None and indent < holder


def _held_quote_depth(lines: list[str], k: int, readings: _Readings) -> int:
    """The quote marks line `k`, four spaces in or more, starts with, read
    from the content column of the list item holding it (`* a` then `    > b`:
    one)."""
    text = _in_holder(lines, k, ">", readings)
    return 0 if text is None else quote_marks(text)[0]


def _after_code(lines: list[str], start: int, end: int) -> int:
    """Where the last paragraph of `lines[start:end + 1]` starts once an
    indented code block at `start` is read: where no paragraph is open (the
    run starts the text or follows a blank line or a heading, which an open
    one with a `|` may be: `finality.cannot_grow`) a line four columns past its
    container's content column is code, and so is every line after it so
    indented; the first line less indented ends the block. Where the
    container cannot be told (`holder_column`), `start`."""
    if start > 0 and lines[start - 1].strip() and not _is_atx(lines[start - 1]):
        return start  # (under a line of text it may continue a paragraph; not a heading)
    return _after_code_run(lines, start, end)


def _after_code_run(lines: list[str], start: int, end: int) -> int:
    """`_after_code` for a line `start` under which no paragraph is open."""
    indent = spaces_before(lines[start])
    if indent < _CODE_INDENT:
        return start
    column = _holder_of(lines, start, indent)
    if column is None or indent < column + _CODE_INDENT:
        return start
    return _past_code(lines, start, end, column)


def _past_code(lines: list[str], start: int, end: int, column: int) -> int:
    """The first line from `start` to `end` (else `end + 1`) not indented as
    code under content column `column`."""
    while start <= end and spaces_before(lines[start]) >= column + _CODE_INDENT:
        start += 1
    return start


def _after_empty_item(lines: list[str], start: int, end: int) -> int:
    """Where the last paragraph starts when line `start` is an empty list
    item's (a marker alone, the innermost of its line's: ` 1.  *`, at the
    text's start or after a blank line, or
    under a paragraph left of that paragraph's container: a sibling's or an
    outer list's item, which ends it, `_starts_empty_item`) with lines under
    it: no paragraph is open there, so a line four columns past its
    container's column is code (`   *` then `    *d`; `2. a`, `  1.`, then
    `    - b`). Else `start`."""
    line = lines[start]
    if (start == end or "\t" in line or _after_quotes(line)
            or not is_marker_alone(line, item_column(line))
            or (start > 0 and lines[start - 1].strip() and not _starts_empty_item(lines, start))):
        return start
    code_end = _after_code_run(lines, start + 1, end)
    return start if code_end == start + 1 else code_end


def _after_item_code(lines: list[str], start: int, end: int) -> int:
    """Where the last paragraph starts when the list item starting on line
    `start` begins with indented code (its text five columns or more past the
    marker: `-     *]`): after that line and the lines indented as code under
    the item's content column. Else `start`. (Read for an item's line with
    four blanks in a row: no other can start so.)"""
    line = lines[start]
    if "\t" in line or _after_quotes(line):
        return start
    column = item_column(line)
    if column is None or spaces_before(line[column:]) < _CODE_INDENT or not line[column:].strip():
        return start
    return _past_code(lines, start + 1, end, column)


def _code_after_table(lines: list[str], start: int, end: int) -> int:
    """`end + 1` (no paragraph at the end) when the last lines of the run of
    lines up to `end` are indented four columns or more under a table's rows,
    with no list item or quote in the run nor holding it: they end the table
    and are code (a line less indented would be a row). Else `start`."""
    if spaces_before(lines[end]) < _CODE_INDENT:
        return start  # (most displays: nothing read back)
    top = start
    while top > 0 and lines[top - 1].strip():
        top -= 1
    k = end
    while k >= top and spaces_before(lines[k]) >= _CODE_INDENT:
        k -= 1
    if k < top:
        return start
    run = lines[top:k + 1]
    if (not any(map(is_delimiter_line, run))
            or any(_is_list_item(line) or _after_quotes(line) for line in run)
            or _holder_of(lines, top, spaces_before(lines[top])) != 0):
        return start  # (no table, or in a list item or a quote, or cannot tell)
    return end + 1


def _delimiter_row(header: str) -> str:
    """The delimiter row implied under a table's `header`, at its indent: in a
    list item (`1. x` then `   | a`) one at the line's start would not be the
    item's, and the table would show as text."""
    return " " * spaces_before(header) + "|" + "---|" * _cells(header)


def _lazy_line(para: list[str], k: int, lines: list[str], start: int) -> bool:
    """Whether line `k` of a paragraph's lines continues it lazily: a list
    item's paragraph (its marker on the first line, or the item read back
    over `lines` above line `start`, the paragraph's first) or a quote's,
    the line short of the item's content column or without the quote's
    marker. No table starts on such a line (its delimiter row would be
    outside the container): a row of pipes there stays text. A line left of
    an indented first line whose holder cannot be told may be lazy too: no
    row is implied that may show as text."""
    if k == 0:
        return False
    first, line = para[0], para[k]
    if _after_quotes(first) > 0:
        return _after_quotes(line) == 0
    column = item_column(first)
    if column is None and spaces_before(first) > 0:
        # (an item's later paragraph: `- x`, a blank line, `  e`)
        column = _holder_of(lines, start, spaces_before(first))
        if column is None:
            return spaces_before(line) < spaces_before(first)
    return column is not None and spaces_before(line) < column


def _too_deep_for_item(lines: list[str], k: int) -> bool:
    """Whether line `k`, which has a list marker, stands four columns or more
    past the content column of what holds it, under a line of text: it
    starts no item then, and continues that paragraph (`[` then `    - _]()`:
    the link's text). Not where the reading cannot tell (`holder_column`).
    Read for a line four spaces in or more (no other can be)."""
    indent = spaces_before(lines[k])
    column = _holder_of(lines, k, indent)
    if column is None:
        return _under_edge_quote_text(lines, k)
    return indent - column >= _CODE_INDENT


def _under_edge_quote_text(lines: list[str], k: int) -> bool:
    """Whether line `k`, four spaces in or more with no quote marks, stands
    right under a quote's paragraph line at the text's left edge (`>[` then
    `    - *]()`): a lazy line of that paragraph, whose text it is (the quote
    reads no item four columns in), as the holder reading cannot tell. At
    the edge: its `>` less than two columns in, where no item can hold it,
    or where the reading finds none that does (`  >[`, first). One quote
    deep: under `>> a` markdown-it reads such a line as code."""
    above = lines[k - 1] if k else ""
    depth, at = quote_marks(above)
    indent = spaces_before(above)
    return (depth == 1 and above[indent:indent + 1] == ">" and not _after_quotes(lines[k])
            and goes_on_paragraph(above[at:])
            and (indent < 2 or _holder_of(lines, k - 1, indent) == 0))


def _under_header(para: list[str], end: int) -> bool:
    """Whether a paragraph's line `end - 1` is a delimiter row under a line
    with a `|` (a header the table run did not count: on an item's or a
    quote's marker line, or with no pipe first). The table is whole, or
    text: no second delimiter row is implied, there or under a row after."""
    return end > 1 and "|" in para[end - 2] and is_delimiter_line(para[end - 1])


def _apply(text: str, deletions: list[tuple[int, int]], suffix: str) -> str:
    if deletions:
        deletions.sort()
        out, pos = [], 0
        for start, end in deletions:
            if start >= pos:
                out.append(text[pos:start])
                pos = end
            elif end > pos:
                pos = end
        out.append(text[pos:])
        text = "".join(out)
    # Closers go right after the last character shown (after a blank or a
    # line break left by what is held back, they would close nothing).
    return text.rstrip() + suffix if suffix else text


def _with_blanks_after_line_starts(view: str, deletions: list[tuple[int, int]]
                                   ) -> tuple[list[tuple[int, int]], list[int]]:
    """`deletions`, each that holds back a line's first text (`[` in `[    x`,
    the view's prefixes blanked) taking the blanks after it too: left as the
    line's indentation they would make it code; and the indices of those
    lines (what is left of them may start with a marker: `_escape_exposed`).
    A deletion right after one at a line's start is at its start too (`*[ >`:
    the `*` and the `[`, then the blank, go; the `>` is escaped)."""
    out = []
    lines: list[int] = []
    reach = -1  # where the last deletion at a line's start ends, its blanks taken
    for start, end in sorted(deletions):
        before = start  # (only blanks are read back: linear over many deletions)
        while before > 0 and view[before - 1] in " \t":
            before -= 1
        if end > start and (before == 0 or view[before - 1] == "\n" or before <= reach):
            while end < len(view) and view[end] in " \t":
                end += 1
            reach = end
            line = view.count("\n", 0, start)
            if not lines or lines[-1] != line:
                lines.append(line)
        out.append((start, end))
    return out, lines


def _held_lines(view: str, deletions: list[tuple[int, int]]) -> list[int]:
    """The indices of the lines of `view` in which `deletions` start."""
    out: list[int] = []
    line = pos = 0
    for start, _end in sorted(deletions):
        if start > pos:  # (each stretch counted once: linear over many deletions)
            line += view.count("\n", pos, start)
            pos = start
        if not out or out[-1] != line:
            out.append(line)
    return out


def _quote_blank(lines: list[str], k: int) -> bool:
    """Whether `lines[k]` is a quote's blank line, read under the quote's
    line above it (`_quote_line_above`)."""
    return _blank_in_open_quote(lines[k], lambda: _quote_line_above(lines, k))


def _quote_line_above(lines: list[str], k: int) -> str:
    """The line above `lines[k]`, or, over lazy lines that go on a paragraph
    opened in a quote's line, that line: markdown-it's quote goes on over lazy
    lines and still reads its marker after any indentation (`>a`, `_c`,
    `    >`: the last line is the quote's blank line, which ends the paragraph).
    '' where such a reading stops short (a line that may start a block, a
    tab, a quote's line whose text may not be a paragraph's)."""
    if k == 0:
        return ""
    above = lines[k - 1]
    if _after_quotes(above) or not above.strip(" "):
        return above
    for j in range(k - 1, max(-1, k - 1 - MOST_READ_BACK), -1):
        line = lines[j]
        at = _after_quotes(line)
        if at:
            text = line[at:]
            indent = spaces_before(text)
            return line if (indent < _CODE_INDENT and "\t" not in line
                            and is_paragraph_text(text[indent:])) else ""
        if not goes_on_paragraph(line):
            return ""  # (no lazy line: it may start a block, or end the quote)
    return ""


def display_source(tail: str, literal: bool | None = None) -> str:
    """The open tail's source rewritten into its most likely final form.
    `literal`: whether its last lines are code or a formula's source, when
    the caller read that from more text than `tail` (`literal_end`)."""
    if not tail:
        return tail
    lines = tail.split("\n")
    in_fence, after = _fence_reading(tail)
    if in_fence:
        # Inside a fence only a possible closing-fence prefix is held back.
        lines[-1] = shown_in_fence(lines[-1])
        return "\n".join(lines)
    lines[-1] = lines[-1].rstrip(" \t")
    if ends_literal(tail, lines) if literal is None else literal:
        return "\n".join(lines)  # code or a formula's source: nothing there is markup
    last = lines[-1]
    after_row = len(lines) > 1 and _is_table_line(lines[-2])
    if last and _marker_only(last) and not (_is_table_line(last) and after_row):
        lines[-1] = ""
    elif last:
        lines[-1] = last.rstrip(" \t")
    partial_delim = bool(lines[-1]) and after_row and _marker_only(lines[-1])
    # The last content line and its paragraph.
    end = len(lines) - 1
    while end >= 0 and (not lines[end].strip() or _quote_blank(lines, end)):
        end -= 1  # (a quote's blank line is one: `>*`, `>`, a line break)
    if end < 0 or end < len(lines) - 2:
        # (A complete blank line after the last text: its block has ended,
        # and shows as it will stay.)
        return "\n".join(lines)
    # The last leaf block's lines: a paragraph runs back to a blank line, but
    # an ATX heading is one line (on an item's or a quote's line too), a
    # thematic break ends it, a setext heading ends at its underline (with a
    # pipe in the text, where that can be no table's line) and a list item
    # starts at its marker.
    piped = "|" in tail
    readings = _Readings()
    start = end
    while True:
        if _is_atx(lines[start]) or _is_marked_heading(lines[start]) or (
                lines[start].startswith(_CODE_PREFIX)
                and _is_heading_in_item(lines, start, readings)):
            if start < end:
                start += 1
            break
        above = lines[start - 1] if start else ""
        if (not above.strip() or _quote_blank(lines, start - 1) or _is_star_rule(above)
                or (above.startswith(_CODE_PREFIX) and _is_rule_in_item(lines, start - 1, readings))
                or (start > 1 and _is_underline(lines, start - 1)
                    and not (piped and _underline_may_be_table(lines, start - 1)))
                or (_is_list_item(lines[start]) and not _continues_paragraph(lines, start))
                or (start < len(lines) - 1 and ends_like_marker(lines[start])
                    and _starts_empty_item(lines, start))):
            break
        start -= 1
    start = _after_code(lines, _quote_start(lines, start, end, readings), end)
    if start < end and _marker_only(lines[start]):
        start = _after_empty_item(lines, start, end)
    if start <= end and _CODE_PREFIX in lines[start] and _is_list_item(lines[start]):
        start = _after_item_code(lines, start, end)
    start = _code_after_table(lines, start, end)
    # Fence lines (a fence closed inside this run of lines) are not inline
    # text, nor a fence's lines that its list item's end closed.
    for k in range(end, start - 1, -1):
        if _fence_run(lines[k]) is not None:
            start = k + 1
            break
    if after:
        start = max(start, tail.count("\n", 0, after))
    if start > end:
        return "\n".join(lines)
    first = start
    while start < end and _whole_definition(lines[start], lines[start + 1]):
        start += 1  # (the parse hides it; the text after it is the open block)
    if start > first:
        start = _past_code_after_definition(lines, start, end)
        if start > end:
            return "\n".join(lines)
    found = _REF_DEF.match(lines[start])
    if found is not None and not _no_definition(lines[start], found.end()):
        # A link reference definition being written: it will not show at all.
        return "\n".join(lines[:start])
    underlined = end > start and end < len(lines) - 1 and _is_underline(lines, end)
    if underlined:
        end -= 1  # (the closers go on the heading's text, above its underline)
    para = lines[start:end + 1]
    suffix_lines: list[str] = []
    # A table header whose delimiter row has not arrived: imply one.
    run = 0
    while run < len(para) and _is_table_line(para[-1 - run]):
        run += 1
    # (Not above a setext underline: the line under it is there, and no
    # delimiter row; it is the heading's.)
    if (run == 1 and not underlined
            and para[-1].count("|") >= 2 - (0 if para[-1].rstrip().endswith("|") else 1)
            and para[-1].strip(" |") and not _lazy_line(para, len(para) - 1, lines, start)
            and not _under_header(para, len(para)) and not _under_header(para, len(para) - 1)
            and not (len(para) > 2 and _has_table(para[:-1]))):
        # (Under a table's rows the line is one more: `| a`, `-:`, `--`, `| b`.)
        header = para[-1]
        if not header.rstrip().endswith("|"):
            header = header.rstrip() + " |"
        para[-1] = header
        suffix_lines.append(_delimiter_row(header))
    elif (run == 2 and partial_delim and end == len(lines) - 1 and para[-2].strip(" |")
          and not _lazy_line(para, len(para) - 2, lines, start)
          and not _under_header(para, len(para) - 1) and not _has_table(para[:-1])):
        # A delimiter row still arriving (`|---|--`): show the header as a table
        # (not under a table's rows: a row there is no header, `- |x`, `  --`,
        # `  |x`, then `|`).
        para[-1] = _delimiter_row(para[-2])
    # Inline completion over the paragraph (a table row: its last cell).
    if "|" in tail and _ends_in_row(para, run, bool(suffix_lines)):
        row = para[-1]
        cut = row.rfind("|", 0, len(row) - 1) if row.endswith("|") else row.rfind("|")
        head, region = row[:cut + 1], row[cut + 1:]
        if not (suffix_lines and row.endswith("|")):
            dels, suffix = complete_inline(region)
            para[-1] = head + _apply(region, dels, suffix)
    else:
        # (A line after the first continues the paragraph: an item marker on
        # it, too deep or unable to interrupt, is text.)
        masked = [(_prefix_end(line) if k == 0 else _skip_blanks(line, _after_quotes(line)), line)
                  for k, line in enumerate(para)]
        view = "\n".join(" " * cut + line[cut:] for cut, line in masked)
        dels, suffix = complete_inline(view)
        first_held: list[int] = []
        if dels:
            dels, first_held = _with_blanks_after_line_starts(view, dels)
        if dels or suffix:
            # Deletions never touch the blanked prefixes (they hold only spaces).
            joined = "\n".join(para)
            shown = _apply(joined, dels, suffix).split("\n")
            if dels and len(shown) == len(para):
                # (A line that loses its end may be left a marker too: `-[`
                # under text showed `-`, an empty item or an underline. Not
                # the last line: left a marker alone it goes whole, below.)
                ends_held = [k for k in _held_lines(view, dels) if k < len(para) - 1]
                for k in sorted({*first_held, *ends_held}):
                    # (Not the closers appended to the last line: `>*b`, `>[`
                    # closes with a `*` there, no marker uncovered.)
                    line = shown[k]
                    cut = len(line) - (len(suffix) if k == len(para) - 1 else 0)
                    shown[k] = _escape_exposed(para[k], line[:cut], masked[k][0]) + line[cut:]
            if suffix and len(shown) > 1 and _blank_in_open_quote(
                    shown[-1][:-len(suffix)], lambda: _quote_line_above(shown, len(shown) - 1)):
                # What is held back left the last line only its quote marks
                # (`>~~a`, then `>_`): the closers go where the text they
                # close ends, on the line above (after `>` they were text).
                shown[-2] = shown[-2].rstrip(" ") + suffix
                shown[-1] = shown[-1][:-len(suffix)]
            # A line left blank by what is held back (`[` alone) would end the
            # paragraph, and its list item, above the closer: it goes whole.
            kept = [line for line in shown[:-1] if line.strip()] + shown[-1:]
            if not shown[0].strip() and kept[0].strip():
                # The paragraph's first line went: the next one starts it, at
                # the first one's indent (its own would make it code: `[`
                # then `    *x`), a block marker it starts with escaped (`[`
                # then `2)`: the paragraph's text, else an empty item).
                kept[0] = " " * spaces_before(para[0]) + _text_going_up(kept[0])
            elif len(kept) > 1 and _markers_left(para[0], kept[0], kept[1]):
                # It left the first line only its markers (`- [`, `> [`): the
                # next line's text goes up onto it, or the item (the quote)
                # would show empty and that text, a lazy line, outside it.
                markers = kept[0].rstrip(" ")
                # (Escaped only where the line's text starts the block's: after
                # `` ` `` left of `` [` `` it goes on a code span.)
                kept[:2] = [markers + " " + _text_going_up(
                    kept[1], _prefix_end(kept[0]) >= len(markers))]
            para = _kept_paragraph_text(kept)
    lines[start:end + 1] = para + suffix_lines
    if lines[-1] and _marker_only(lines[-1]) and not _is_table_line(lines[-1]):
        # What held back left only a marker (`- [` -> `- `): hold the line too,
        # or it would read as a setext underline or an empty item.
        lines[-1] = ""
    return "\n".join(lines)
