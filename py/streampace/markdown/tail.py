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

_MARKER_ONLY = re.compile(r"^[ \t>]*[-+*=_#~`|:.)0-9 \t]*$")
# Block prefixes (quote markers, a list marker, an ATX heading mark) blanked out
# before the inline scan so their characters are not read as inline syntax.
_PREFIX = re.compile(r"^(?:[ ]{0,3}>[ ]?)*[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?(?:#{1,6}[ \t]+)?")
_FENCE = re.compile(r"^(?:[ ]{0,3}>[ ]?)*[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})")
_TABLE_LINE = re.compile(r"^[ ]{0,3}\|")
_REF_DEF = re.compile(r"^[ ]{0,3}\[(?:[^\]\\]|\\.)+\]:")
_ATX = re.compile(r"^(?:[ ]{0,3}>[ ]?)*[ ]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"^(?:[ ]{0,3}>[ ]?)*[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+\S")
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
        m = _FENCE.match(line)
        if m is None:
            continue
        run = m.group(1)
        if fence is None:
            fence = run
        elif run[0] == fence[0] and len(run) >= len(fence) and not line[m.end():].strip():
            fence = None
    return fence is not None


def _cells(row: str) -> int:
    body = row.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return len(re.split(r"(?<!\\)\|", body))


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
            for k in range(len(stack) - 1, -1, -1):
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
                for k in range(len(stack) - 1, -1, -1):
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
        if lines[-1] and _MARKER_ONLY.match(lines[-1]):
            lines[-1] = ""
        return "\n".join(lines)
    last = lines[-1]
    after_row = len(lines) > 1 and _TABLE_LINE.match(lines[-2]) is not None
    if last and _MARKER_ONLY.match(last) and not (_TABLE_LINE.match(last) and after_row):
        lines[-1] = ""
    elif last:
        lines[-1] = last.rstrip(" \t")
    partial_delim = bool(lines[-1]) and after_row and _MARKER_ONLY.match(lines[-1]) is not None
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
        if _ATX.match(lines[start]):
            if start < end:
                start += 1
            break
        if _LIST_ITEM.match(lines[start]) or start == 0 or not lines[start - 1].strip():
            break
        start -= 1
    # Fence lines (a fence closed inside this run of lines) are not inline text.
    for k in range(end, start - 1, -1):
        if _FENCE.match(lines[k]):
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
    while run < len(para) and _TABLE_LINE.match(para[-1 - run]):
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
        masked = [(_PREFIX.match(line).end(), line) for line in para]
        view = "\n".join(" " * cut + line[cut:] for cut, line in masked)
        dels, suffix = _complete_inline(view)
        if dels or suffix:
            # Deletions never touch the blanked prefixes (they hold only spaces).
            joined = "\n".join(para)
            para = _apply(joined, dels, suffix).split("\n")
    lines[start:end + 1] = para + suffix_lines
    if lines[-1] and _MARKER_ONLY.match(lines[-1]) and not _TABLE_LINE.match(lines[-1]):
        # What held back left only a marker (`- [` -> `- `): hold the line too,
        # or it would read as a setext underline or an empty item.
        lines[-1] = ""
    return "\n".join(lines)
