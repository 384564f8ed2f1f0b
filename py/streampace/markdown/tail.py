"""What the open (last, unfinished) block shows while it streams.

The source of an open block ends mid-construct most of the time. Rendered as
is, `**bol` shows its asterisks and then flips to bold when `**` arrives; a
table header shows as a row of pipes until its delimiter row arrives. Here the
open block's source is rewritten, for display only, into the form it will most
likely take, so every construct changes its appearance at most once:

| open construct at the end                 | shown as                                 |
|-------------------------------------------|------------------------------------------|
| `**bol`, `*it`, `_it`, `~~del` (text after the opener) | closed: **bol**, *it*, ~~del~~ |
| an opener with nothing after it (`foo **`) | held back until its text arrives        |
| `` `code `` (text after the backticks)    | closed code span                         |
| a backtick run with nothing after it      | held back                                |
| `[text` (no `]` yet), `![alt`             | the bracket is held back, text shown plain |
| `[text]` as the last characters           | both brackets held back (a link may follow) |
| `[text](url` / `[text](`                  | closed with `)`: a link (its URL is not shown) |
| `<https://exa` (autolink so far)          | closed with `>`                          |
| `<tag` / `&amp` (tag or entity so far) / trailing `\\` | held back                   |
| a partial line of only block markers (`-`, `1.`, `##`, `>`, `` ``` ``, `|--`) | held back |
| `| a | b` header without a delimiter row | a table header (the delimiter row is implied) |
| `[label]: /url "title"` (a reference definition) | held back (it never shows)     |

Trailing spaces of a partial line are not shown (they are invisible anyway and
would stop a closer from closing). When the block becomes final it is rendered
from its real source; the display form is never used for a final block.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["display_source"]

# Line-start scanners. Written as loops, not regexes: a pattern such as
# `(?:[ ]{0,3}>[ ]?)*[ \t]*` backtracks exponentially on `> > > > … x`
# (each space can belong to either quantifier), and this text is untrusted.
_MARKER_LEAD = frozenset(" \t>")
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


def _after_quotes(line: str, i: int = 0) -> int:
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


def _skip_blanks(line: str, i: int) -> int:
    n = len(line)
    while i < n and line[i] in " \t":
        i += 1
    return i


def _list_marker_end(line: str, i: int) -> int:
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


def _after_list_marker(line: str, i: int) -> int:
    """Index after `marker[ \t]+` at `i`, or `i` if there is none."""
    m = _list_marker_end(line, i)
    if m < 0 or m >= len(line) or line[m] not in " \t":
        return i
    return _skip_blanks(line, m)


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
    """(index after the run, run) of a fence opening or closing on `line`."""
    i = _after_list_marker(line, _skip_blanks(line, _after_quotes(line)))
    n = len(line)
    if i < n and line[i] in "`~":
        j = i
        while j < n and line[j] == line[i]:
            j += 1
        if j - i >= 3:
            return j, line[i:j]
    return None


def _is_atx(line: str) -> bool:
    i = _after_quotes(line)
    n = len(line)
    j = i
    while j < n and j - i < 3 and line[j] == " ":
        j += 1
    k = j
    while k < n and k - j < 7 and line[k] == "#":
        k += 1
    return 1 <= k - j <= 6 and (k == n or line[k] in " \t")


def _is_list_item(line: str) -> bool:
    i = _skip_blanks(line, _after_quotes(line))
    m = _list_marker_end(line, i)
    if m < 0 or m >= len(line) or line[m] not in " \t":
        return False
    j = _skip_blanks(line, m)
    return j < len(line)


def _is_table_line(line: str) -> bool:
    i = 0
    while i < len(line) and i < 3 and line[i] == " ":
        i += 1
    return i < len(line) and line[i] == "|"


_REF_DEF = re.compile(r"^[ ]{0,3}\[(?:[^\]\\]|\\.)+\]:")  # alternatives disjoint: linear
_ENTITY_SO_FAR = re.compile(r"&#?[A-Za-z0-9]{0,31}$")
_TAG_SO_FAR = re.compile(r"</?(?:[A-Za-z][A-Za-z0-9+.\-]{0,31})?$")
_AUTOLINK_SO_FAR = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*$")


def _is_space(c: str) -> bool:
    return c == "" or c.isspace()


def _is_punct(c: str) -> bool:
    return c != "" and unicodedata.category(c)[0] in "PS"


def _in_fence(lines: list[str]) -> bool:
    fence: str | None = None
    for line in lines:
        found = _fence_run(line)
        if found is None:
            continue
        end, run = found
        if fence is None:
            fence = run
        elif run[0] == fence[0] and len(run) >= len(fence) and not line[end:].strip():
            fence = None
    return fence is not None


def _cells(row: str) -> int:
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return len(re.split(r"(?<!\\)\|", body))


_SEARCH = 64  # openers looked at per closer (see _complete_inline)


def _math_end(text: str, i: int) -> int | None:
    """For a math opener at `i` (md_rules' syntax): the index after its closer
    on the same line, -1 if it has none yet, None if `i` opens no formula
    (`$` before a blank or a digit: "$5" is a price until proven otherwise)."""
    n = len(text)
    line_end = text.find("\n", i)
    line_end = n if line_end < 0 else line_end
    if text.startswith("$$", i):
        close = text.find("$$", i + 2, line_end)
        return -1 if close < 0 else close + 2
    if text[i] == "$":
        if i + 1 >= n or text[i + 1] in " \t\n" or text[i + 1].isdigit():
            return None
        pos = i + 2
        while True:
            pos = text.find("$", pos, line_end)
            if pos < 0:
                return -1
            if text[pos - 1] not in " \t\\" and not (pos + 1 < n and text[pos + 1].isdigit()):
                return pos + 1
            pos += 1
    closer = "\\)" if text[i + 1] == "(" else "\\]"
    close = text.find(closer, i + 2, line_end)
    return -1 if close < 0 else close + 2


def _complete_inline(text: str) -> tuple[list[tuple[int, int]], str]:
    """Deletions (start, end) and a suffix that close what `text` leaves open."""
    n = len(text)
    deletions: list[tuple[int, int]] = []
    # ["emph", pos, char, count left, run length, can also close] | ["bracket", pos, width]
    stack: list[list] = []
    code: tuple[int, int] | None = None  # (pos, run length)
    dest: list | None = None  # [paren depth, open quote or ""]
    last_closed: tuple[int, int, int] | None = None  # bracket pos, width, ']' pos
    i = 0
    while i < n:
        c = text[i]
        if code is not None:
            if c == "`":
                j = i
                while j < n and text[j] == "`":
                    j += 1
                if j - i == code[1]:
                    code = None
                i = j
            else:
                i += 1
            continue
        if dest is not None:
            if c == "\\":
                i += 2
                continue
            if dest[1]:
                if c == dest[1] or (dest[1] == ")" and c == ")"):
                    dest[1] = ""
            elif c in "\"'":
                dest[1] = c
            elif c == "(" and i > 0 and text[i - 1] == " ":
                dest[1] = ")"
            elif c == "(":
                dest[0] += 1
            elif c == ")":
                dest[0] -= 1
                if dest[0] == 0:
                    dest = None
            i += 1
            continue
        if c == "$" or (c == "\\" and i + 1 < n and text[i + 1] in "(["):
            end = _math_end(text, i)
            if end is not None:
                if end >= 0:
                    i = end  # a complete formula: nothing inside it is completed
                    continue
                # An unfinished formula shows as its source until it closes (to
                # the end of its line: inline math does not span lines). A
                # zero-width deletion marks the text as still open.
                nl = text.find("\n", i)
                if nl < 0:
                    deletions.append((n, n))
                    break
                i = nl
                continue
        if c == "\\":
            if i == n - 1:
                deletions.append((i, n))
            i += 2
            continue
        if c == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            code = (i, j - i)
            i = j
            continue
        if c == "!" and i + 1 < n and text[i + 1] == "[":
            stack.append(["bracket", i, 2])
            i += 2
            continue
        if c == "[":
            stack.append(["bracket", i, 1])
        elif c == "]":
            for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _SEARCH), -1):
                if stack[k][0] == "bracket":
                    entry = stack[k]
                    del stack[k:]  # emphasis opened inside the brackets stays literal
                    if i + 1 < n and text[i + 1] == "(":
                        dest = [1, ""]
                        i += 2
                        last_closed = None
                    else:
                        last_closed = (entry[1], entry[2], i)
                        i += 1
                    break
            else:
                i += 1
            continue
        elif c in "*_~":
            j = i
            while j < n and text[j] == c:
                j += 1
            run = j - i
            prev = text[i - 1] if i > 0 else ""
            nxt = text[j] if j < n else ""
            if c == "~" and run < 2:
                if j == n:
                    deletions.append((i, j))  # may become `~~`
                i = j
                continue
            p_space, p_punct = _is_space(prev), _is_punct(prev)
            n_space, n_punct = _is_space(nxt), _is_punct(nxt)
            left = not n_space and (not n_punct or p_space or p_punct)
            right = not p_space and (not p_punct or n_space or n_punct)
            if c == "_":
                can_open = left and (not right or _is_punct(prev))
                can_close = right and (not left or _is_punct(nxt))
            else:
                can_open, can_close = left, right
            if j == n:
                # Nothing after the run yet: it cannot open; it may close.
                can_open = False
            matched = False
            both = can_open and can_close
            if can_close:
                # Only the innermost openers are searched: a closer cannot cost
                # more than a constant, whatever number of openers precede it.
                for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _SEARCH), -1):
                    entry = stack[k]
                    if entry[0] == "emph" and entry[2] == c:
                        # CommonMark's rule of 3 (runs that can both open and close).
                        o = entry[4]
                        if (both or entry[5]) and (o + run) % 3 == 0 and (o % 3 or run % 3):
                            continue
                        del stack[k + 1:]
                        entry[3] -= run
                        if entry[3] <= 0:
                            stack.pop()
                        matched = True
                        break
            if not matched:
                if can_open:
                    stack.append(["emph", i, c, run, run, both])
                elif j == n:
                    deletions.append((i, j))  # an opener still waiting for its text
            i = j
            continue
        i += 1

    suffix = ""
    if code is not None:
        if code[0] + code[1] >= n:
            deletions.append((code[0], n))
        else:
            suffix += "`" * code[1]
    elif dest is not None:
        suffix += (dest[1] if dest[1] else "") + ")" * dest[0]
    else:
        tail = text[-40:]
        m = _AUTOLINK_SO_FAR.search(tail)
        if m:
            suffix += ">"
        else:
            m = _ENTITY_SO_FAR.search(tail) or _TAG_SO_FAR.search(tail)
            if m:
                deletions.append((n - len(tail) + m.start(), n))
        if last_closed is not None and last_closed[2] == n - 1:
            deletions.append((last_closed[0], last_closed[0] + last_closed[1]))
            deletions.append((n - 1, n))
    for entry in reversed(stack):
        if entry[0] == "bracket":
            deletions.append((entry[1], entry[1] + entry[2]))
        else:
            suffix += entry[2] * (entry[3] if entry[2] != "~" else 2)
    return deletions, suffix


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
    return text.rstrip(" \t") + suffix if suffix else text


def display_source(tail: str) -> str:
    """The open tail's source rewritten into its most likely final form."""
    if not tail:
        return tail
    lines = tail.split("\n")
    if _in_fence(lines):
        # Inside a fence only a possible closing-fence prefix is held back.
        if lines[-1] and _marker_only(lines[-1]):
            lines[-1] = ""
        return "\n".join(lines)
    last = lines[-1]
    after_row = len(lines) > 1 and _is_table_line(lines[-2])
    if last and _marker_only(last) and not (_is_table_line(last) and after_row):
        lines[-1] = ""
    elif last:
        lines[-1] = last.rstrip(" \t")
    partial_delim = bool(lines[-1]) and after_row and _marker_only(lines[-1])
    # The last content line and its paragraph.
    end = len(lines) - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    if end < 0:
        return "\n".join(lines)
    # The last leaf block's lines: a paragraph runs back to a blank line, but
    # an ATX heading is one line and a list item starts at its marker.
    start = end
    while True:
        if _is_atx(lines[start]):
            if start < end:
                start += 1
            break
        if _is_list_item(lines[start]) or start == 0 or not lines[start - 1].strip():
            break
        start -= 1
    # Fence lines (a fence closed inside this run of lines) are not inline text.
    for k in range(end, start - 1, -1):
        if _fence_run(lines[k]) is not None:
            start = k + 1
            break
    if start > end:
        return "\n".join(lines)
    if _REF_DEF.match(lines[start]):
        # A link reference definition being written: it will not show at all.
        return "\n".join(lines[:start])
    para = lines[start:end + 1]
    suffix_lines: list[str] = []
    # A table header whose delimiter row has not arrived: imply one.
    run = 0
    while run < len(para) and _is_table_line(para[-1 - run]):
        run += 1
    table_row = run > 0
    if run == 1 and para[-1].count("|") >= 2 - (0 if para[-1].rstrip().endswith("|") else 1):
        header = para[-1]
        if not header.rstrip().endswith("|"):
            header = header.rstrip() + " |"
        para[-1] = header
        suffix_lines.append("|" + "---|" * _cells(header))
    elif run == 2 and partial_delim and end == len(lines) - 1:
        # A delimiter row still arriving (`|---|--`): show the header as a table.
        header = para[-2]
        para[-1] = "|" + "---|" * _cells(header)
    # Inline completion over the paragraph (a table row: its last cell).
    if table_row:
        row = para[-1]
        cut = max(row.rfind("|", 0, len(row) - 1) if row.endswith("|") else row.rfind("|"), 0)
        head, region = row[:cut + 1], row[cut + 1:]
        if not (suffix_lines and row.endswith("|")):
            dels, suffix = _complete_inline(region)
            para[-1] = head + _apply(region, dels, suffix)
    else:
        masked = [(_prefix_end(line), line) for line in para]
        view = "\n".join(" " * cut + line[cut:] for cut, line in masked)
        dels, suffix = _complete_inline(view)
        if dels or suffix:
            # Deletions never touch the blanked prefixes (they hold only spaces).
            joined = "\n".join(para)
            para = _apply(joined, dels, suffix).split("\n")
    lines[start:end + 1] = para + suffix_lines
    if lines[-1] and _marker_only(lines[-1]) and not _is_table_line(lines[-1]):
        # What held back left only a marker (`- [` -> `- `): hold the line too,
        # or it would read as a setext underline or an empty item.
        lines[-1] = ""
    return "\n".join(lines)
