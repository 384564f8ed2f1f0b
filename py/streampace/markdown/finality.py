"""When an open top-level block of a stream's tail is decided (stream.py).

A block is final once a later block starts for good (`starts_for_good`);
these rules decide the other cases: a block that cannot grow, and a link
reference definition that is not final although a block seems to start after
it.
"""

from __future__ import annotations

from streampace.markdown.fence import closing_run

__all__ = ["cannot_grow", "ends_before_text", "starts_for_good", "title_may_follow"]


def starts_for_good(tail: str, block: tuple[int, int, str], complete: int) -> bool:
    """Whether `block` (start line, end line, kind) of `tail`, whose first
    `complete` lines are complete, is there whatever the partial line becomes:
    it starts on a complete line, and a table that may have interrupted a
    paragraph has its delimiter row complete too. With that row partial (`-|`
    under `b|`) the next character may make it no delimiter row (`-||`: two
    cells under one), and the header line is the paragraph's again. After a
    blank line the header line starts a block either way.

    A block of another kind may owe its start to such a table too: a list
    item's paragraph ends at a line with a "|" when the partial line may be
    a delimiter row (`* a` then `|)` then `    --`: a table in the item,
    which is none at the top level, where `|)` starts a paragraph); `--[`
    makes `|)` the item's lazy line again."""
    start, _end, kind = block
    if start >= complete:
        return False
    if start + 1 < complete or start == 0:
        return True
    lines = tail.split("\n", start + 1)
    if lines[start - 1].strip(" \t") == "":
        return True
    if kind == "table_open":
        return False
    return not ("|" in lines[start] and _may_be_delimiter_row(tail[tail.rfind("\n") + 1:]))


def _may_be_delimiter_row(partial: str) -> bool:
    """Whether a partial line may still become a table's delimiter row: so far
    only the characters such a row has."""
    return not partial.strip(" \t|:-")


def cannot_grow(tail: str, block: tuple[int, int, str], complete: int) -> bool:
    """Whether `block` (start line, end line, kind) of `tail`, whose first
    `complete` lines are complete, is final although no later block started:
    nothing after it can continue it."""
    start, end, kind = block
    if end > complete:
        return False
    if kind == "hr":
        return True
    if kind == "heading_open":
        # An ATX heading's line with a "|" is a table's header if the next
        # line is its delimiter row (markdown-it tries tables first): while
        # that line is partial and may still be one, the heading may not stay.
        return not (end == start + 1 == complete and "|" in tail.split("\n", end)[start]
                    and _may_be_delimiter_row(tail[tail.rfind("\n") + 1:]))
    if kind == "math_block":  # closed by its own closing line, or by a blank line
        lines = tail.split("\n", end + 1)
        last = lines[end - 1].strip() if end - 1 < len(lines) else ""
        # `\[` closes with `\]` only: a `$$` line in it is the formula's text.
        closing = "$$" if lines[start].strip() == "$$" else "\\]"
        return (end > start + 1 and last == closing) or (
            end < complete and end < len(lines) and not lines[end].strip())
    if kind in ("paragraph_open", "blockquote_open", "table_open"):
        # A blank line ends these for good (a list or indented code may
        # continue past one; these cannot).
        lines = tail.split("\n", end + 1)
        return any(i < complete and i < len(lines) and not lines[i].strip()
                   for i in (end - 1, end) if i > start)
    if kind == "fence":
        lines = tail.split("\n", end)[start:end]
        if len(lines) < 2:
            return False
        opening = lines[0].lstrip(" ")
        run = opening[: len(opening) - len(opening.lstrip(opening[0]))]
        return (closing_run(lines[-1], run[0]) or 0) >= len(run)
    return False


def title_may_follow(tail: str, gap_start: int, open_start: int) -> bool:
    """Whether the lines between a final block and the open block at
    `open_start` may hold a link reference definition whose title the open
    block's first line starts (`[a]: /u` then `'ti…`, the closing quote still
    to come). Such a definition is not final: it stays in the tail until the
    title closes or the block it seemed to start ends."""
    if open_start <= gap_start:
        return False
    lines = tail.split("\n", open_start + 1)
    return (bool(lines[open_start - 1].strip())
            and lines[open_start].lstrip(" \t")[:1] in ("'", '"', "("))


def ends_before_text(tail: str, start: int) -> bool:
    """Whether the blocks before line `start` of `tail`, its last (partial) line,
    are final: that line follows a blank line and starts with a letter in its
    first column. Whatever it grows into, it is a new top-level block (a
    paragraph, a heading's text, a table's header) that no earlier block can take
    in: after a blank line only indented lines or list items continue a list, a
    block quote needs its marker, and a blank line ends every other block.
    Without this, a list followed by a paragraph stays open until the
    paragraph's first line is complete, re-rendered with it on every frame."""
    if start < 1:
        return False
    lines = tail.rsplit("\n", 2)
    return (len(lines) == 3 and not lines[1].strip(" \t")
            and lines[2][:1].isalpha() and tail.count("\n") == start)
