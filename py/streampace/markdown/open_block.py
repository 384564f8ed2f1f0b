"""Incremental state for a long open block: work per delta independent of its length.

The general path of `MarkdownStream` re-renders the whole open tail on every
delta, and re-parses its block structure on every new line: fine for a short
block, quadratic for a long one. Two kinds of top-level block get state of
their own while they stay open:

- `OpenParagraph`: the paragraph's inline content is split into a *settled*
  prefix, rendered once, and a *live* rest re-rendered per delta. A prefix is
  settled at a split point (after a space or a line break, before a non-space)
  where nothing is left open in it — no emphasis, bracket, code span or link
  destination waiting for a closer (`completion.complete_inline` finds nothing to
  close) — so later text cannot change how it renders. Attempts are geometric
  in the live length (amortised O(1) per character), each trying the last split
  point and, if that is inside something its line opened, the line's start;
  past `_WINDOW` characters
  the prefix is settled anyway, so hostile text (an unclosed backtick at the
  start) costs at most the window per delta.
- `OpenTable`: each complete row is rendered once, against the header and
  delimiter row, and kept; a delta re-renders the partial row only.

Whether a new line continues the block is decided from a window of a few lines
parsed alone (CommonMark decides paragraph continuation from the new line;
a table row from the header and the row). Whenever the window says anything
else — a blank line, a new block, a setext underline, a table delimiter — the
stream leaves this state and its general path decides, once, on the whole block.
The final render of the block is always a full parse of its source (once per
block: amortised O(1) per character); these states only change what is shown
while it streams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markdown_it.common.utils import mdTrim
from markdown_it.rules_block.table import escapedSplit

from streampace.markdown.completion import complete_inline
from streampace.markdown.fence import closing_run, opening_run
from streampace.markdown.item_fence import FenceScan, FenceTail
from streampace.markdown.item_leaf import ItemLeaf
from streampace.markdown.item_nested import NestedTail, nested_start, opens_list
from streampace.markdown.joins import (
    _ITEM,
    _PLAIN,
    _grow_last,
    _loose,
    _looseness,
    _plain_append_state,
    ends_with_blank_line,
    may_take_plain,
)
from streampace.markdown.line_marks import after_list_marker
from streampace.markdown.literal_end import MOST_READ_BACK as _MOST_READ_BACK
from streampace.markdown.literal_end import ends_literal, may_end_literal
from streampace.markdown.parser import Parser
from streampace.markdown.tail import (
    _apply,
    _is_table_line,
    _marker_only,
    display_source,
    spaces_before,
)
from streampace.markdown.tree import Node, append_nodes

__all__ = ["OpenList", "OpenParagraph", "OpenQuote", "OpenTable", "final_from_open",
           "is_math_fence"]

_WINDOW = 1024       # live characters before a prefix is settled regardless
_NESTED_STATES = 3   # levels of nested lists with a list state of their own
_FIRST_TRY = 64      # live characters before the first attempt to settle
_KEY = 16            # a line's block role is decided by its first characters


def is_math_fence(line: str) -> bool:
    """A line that opens or closes a display formula (md_rules.math_block): it
    can turn the lines before it into a block once its partner arrives, which a
    window of two lines cannot see, so the general path handles it."""
    return line.strip() in ("$$", "\\[", "\\]")


def _split_point(text: str) -> int:
    """The last index p > 0 with text[p-1] a space or line break and text[p]
    not blank (a split there keeps flanking and line-start rules), or 0."""
    p = len(text) - 1
    while p > 0:
        if text[p - 1] in " \n" and text[p] not in " \t\n":
            return p
        p -= 1
    return 0


class _Window:
    """Cached block-role checks of a line against the line before it."""

    def __init__(self, parser: Parser, refs: dict[str, Any]) -> None:
        self.parser = parser
        self.refs = refs
        self.checks = 0  # window parses (for tests)
        self._memo: tuple[str, str, bool, bool] | None = None

    def continues_paragraph(self, prev: str, line: str, inner: bool = False) -> bool:
        """Whether `line` continues the paragraph whose last line is `prev`
        (its first line, or, `inner`, a later one; `prev` empty: whether
        `line` starts a paragraph)."""
        if line[:1].isalpha() and (not prev or prev[:1].isalpha()):
            # A line starting with a letter after a paragraph's first line, or
            # after one that also starts with a letter: one paragraph of both
            # lines (a table, a setext heading or a definition starts otherwise),
            # what the window's parse says, without its cost.
            return True
        key = line if len(line) <= _KEY else line[:_KEY]
        if self._memo is not None and self._memo[:3] == (prev, key, inner):
            return self._memo[3]
        self.checks += 1
        # One paragraph of both lines (of `line`, before the paragraph's first).
        # A `prev` that alone parses as a link definition, being a paragraph's
        # line here, leaves the window nothing to say: a paragraph of `line`
        # alone does not tell what follows it.
        # A later line of the paragraph comes after a first line of a plain
        # word: alone, a line such as "2. x" or "    x" that continues a
        # paragraph would start a block of its own, and the window would
        # judge the next line after that block instead (a plain word starts
        # no table header: a table needs a pipe there).
        src, lines = (prev + "\n" + line, 2) if prev else (line, 1)
        if prev and inner:
            src, lines = "x\n" + src, 3
        blocks = self.parser.block_starts(src, self.refs)
        ok = len(blocks) == 1 and blocks[0] == (0, lines, "paragraph_open")
        if len(line) > _KEY:  # longer lines: the decision is final
            self._memo = (prev, key, inner, ok)
        return ok

    def known(self, prev: str, line: str) -> None:
        """A block parse already found `line` after `prev` to be part of the
        paragraph: remembered as if this window had parsed it (exact for a
        short line; for a longer one, final as `continues_paragraph` holds)."""
        self._memo = (prev, line if len(line) <= _KEY else line[:_KEY], False, True)


class OpenParagraph:
    """A top-level paragraph while it streams (see the module docstring)."""

    def __init__(self, parser: Parser, refs: dict[str, Any], lines: list[str],
                 ctx: tuple[str, int] = ("", 0)) -> None:
        self.parser = parser
        self.refs = refs
        self.ctx = ctx
        self.window = _Window(parser, refs)
        self.settled: list[Node] = []   # inline nodes of the settled prefix
        self.live = ""                  # content after the settled prefix
        self.last_line = ""             # the last complete line, raw
        self.lines = 0                  # complete lines absorbed
        self.absorbed = 0               # characters of the partial line absorbed
        self.started = False            # whether any of the partial line is absorbed
        self.tried = 0                  # live length at the last attempt to settle
        self.settles = 0
        self.exact = True               # every settled prefix was closed
        self.heads: list[str] = []      # the settled prefix's source, in pieces
        # The last parsed display, when plain words may grow its last text node
        # (joins._plain_append_state): (its text, its kids, settles then).
        self._plain: tuple[str, tuple[Node, ...], int] | None = None
        self.plain_appends = 0
        for line in lines:
            self._add(line, complete=True)

    # -- input -------------------------------------------------------------
    def _add(self, text: str, complete: bool) -> None:
        """Absorb what is new of the current line (`text`: that line so far)."""
        if not self.started:
            # Like markdown-it's paragraph content: the first line without its
            # leading blanks, later lines as they are (a code span keeps them).
            content = text if self.lines else text.lstrip(" \t")
            if content:
                self.live += ("\n" if self.lines else "") + content
                self.absorbed = len(text)
                self.started = True
        else:
            self.live += text[self.absorbed:]
            self.absorbed = len(text)
        if complete:
            self.lines += 1
            self.absorbed = 0
            self.started = False
            self.last_line = text
        self._settle()

    def feed_lines(self, lines: list[str]) -> bool:
        """New complete lines; False if one of them does not continue the paragraph."""
        for line in lines:
            if _is_table_line(line) or is_math_fence(line) or not (
                    self.window.continues_paragraph(self.last_line, line, self.lines > 1)):
                return False
            self._add(line, complete=True)
        return True

    def _settle(self) -> None:
        live = self.live
        if len(live) < max(_FIRST_TRY, 2 * self.tried):
            return
        self.tried = len(live)
        p = _split_point(live)
        if p == 0:
            if len(live) < _WINDOW:
                return
            p = len(live) - _FIRST_TRY  # no blank anywhere (hostile): split anyway
        head = live[:p]
        nodes, closed = self.parser.inline_split(head, self.refs, self.ctx)
        line = live.rfind("\n", 0, p - 1) + 1
        if not closed and line > 0 and live[line:line + 1] not in (" ", "\t", "\n", ""):
            # The last split point lies in something the last line opened (a
            # link's text, say): the split at that line's start often has
            # nothing open, and settles now instead of at twice the length.
            at_line, line_closed = self.parser.inline_split(live[:line], self.refs, self.ctx)
            if line_closed:
                head, nodes, closed, p = live[:line], at_line, True, line
        if not closed and len(live) < _WINDOW:
            return  # something in it is still open: a later closer may change it
        append_nodes(self.settled, nodes)
        # Only closed prefixes are exact (see Parser.inline_split): then the
        # final render may reuse them instead of parsing the paragraph again.
        self.exact = self.exact and closed
        self.heads.append(head)
        self.live = live[p:]
        self.tried = 0
        self.settles += 1

    def final_node(self, content: str) -> Node | None:
        """The paragraph's final node for its content (its lines joined, then
        stripped, as markdown-it builds it), from the settled prefix plus one parse of
        the rest — exactly a full parse's result when every settled prefix was
        closed and the content starts with them; else None (parse it whole)."""
        heads = "".join(self.heads)
        if not self.exact or not content.startswith(heads):
            return None
        kids = list(self.settled)
        rest = content[len(heads):]
        if rest:
            append_nodes(kids, self.parser.inline(rest, self.refs, self.ctx))
        return ("p", (), tuple(kids))

    # -- display -------------------------------------------------------------
    def partial_role(self, partial: str) -> str:
        """'hold' (only block markers so far), 'para' (continues the paragraph),
        'table' (a table line: the general path shows it) or 'block' (starts a
        new block: shown after the paragraph)."""
        if not partial.strip() or _marker_only(partial):
            return "hold"
        if _is_table_line(partial):
            return "table"
        if self.window.continues_paragraph(self.last_line, partial, self.lines > 1):
            return "para"
        return "block"

    def _plain_grown(self, text: str) -> tuple[Node, ...] | None:
        """The kids for `text` without a parse, when it is the last parsed display's
        text plus plain words (letters, digits, spaces, `,.;?`: they open and close
        nothing) and nothing settled since; else None."""
        plain = self._plain
        if plain is None or plain[2] != self.settles or not text.startswith(plain[0]):
            return None
        piece = text[len(plain[0]):]
        if not piece:
            return plain[1]
        if not _PLAIN.fullmatch(piece) or may_take_plain(text, piece):
            return None  # markup, or a URL or reference that may take these words in
        kids = plain[1][:-1] + (_grow_last(plain[1][-1], piece),)
        self._plain = (text, kids, self.settles)
        self.plain_appends += 1
        return kids

    def display(self, partial: str) -> tuple[Node, ...] | None:
        """The nodes to show, or None when the general path must decide."""
        role = self.partial_role(partial)
        if role == "table":
            return None
        extra = ""
        if role == "para":
            if len(partial) > _KEY and len(partial) > self.absorbed:
                # Its role is decided: absorb it, so a long single-line
                # paragraph settles as it grows.
                self._add(partial, complete=False)
            if self.started:
                extra = partial[self.absorbed:]
            else:
                extra = partial if self.lines else partial.lstrip(" \t")
                if extra and self.lines:
                    extra = "\n" + extra
        text = (self.live + extra).rstrip(" \t")
        if role == "para" and (grown := self._plain_grown(text)) is not None:
            return (("p", (), grown),)
        kids = list(self.settled)
        shown = text
        if text:
            # A partial line that starts a new block ends the paragraph: its
            # text is all there is, nothing left open in it gets closed.
            dels, suffix = complete_inline(text) if role != "block" else ([], "")
            shown = _apply(text, dels, suffix) if dels or suffix else text
            # A paragraph's content ends without blanks (its block parse strips them).
            append_nodes(kids, self.parser.inline(shown.rstrip(" \t\n"), self.refs, self.ctx))
        # A paragraph ends without blanks, even when the live rest shows nothing.
        while kids and isinstance(kids[-1], str) and kids[-1] != kids[-1].rstrip(" \t\n"):
            kids[-1] = kids[-1].rstrip(" \t\n")
            if not kids[-1]:
                kids.pop()
        shown_kids = tuple(kids)
        if not shown_kids and role != "block":
            # Nothing of it shows yet (a lone backtick that may open a fence):
            # a parse of what the display holds back makes no paragraph.
            self._plain = None
            return ()
        para: Node = ("p", (), shown_kids)
        self._plain = None
        if role == "para" and text and _plain_append_state(text, shown, (para,)) is not None:
            self._plain = (text, shown_kids, self.settles)
        if role == "block":
            shown = display_source(partial)
            more = self.parser.render(shown, self.refs, self.ctx)[0] if shown.strip() else []
            # Nothing before the partial line (its first characters read as
            # a paragraph, "10", until the rest made it a block): no paragraph.
            return (para, *more) if shown_kids else tuple(more)
        return (para,)


# Past this many columns a row goes through a parse of the table, which
# bounds the empty cells it fills in (markdown-it's MAX_AUTOCOMPLETED_CELLS).
_MOST_QUICK_COLUMNS = 1000


class OpenTable:
    """A top-level table while it streams: rows rendered once each."""

    def __init__(self, parser: Parser, refs: dict[str, Any], header: str, delim: str,
                 rows: list[str], ctx: tuple[str, int] = ("", 0)) -> None:
        self.parser = parser
        self.refs = refs
        self.ctx = ctx
        self.head_src = header + "\n" + delim + "\n"
        self.checks = 0
        self.attrs: tuple = ()
        self.thead: Node | None = None
        self.rows: list[Node] = []
        self.row_lines = 0
        if not self._feed_at_once(rows):
            self._render_rows("")
            if not self._feed_each(rows):
                raise ValueError("not a table row")

    def _render_rows(self, row: str) -> list[Node] | None:
        alone = self._row_alone(row)
        if alone is not None:
            return [alone]
        nodes = self.parser.render(self.head_src + row, self.refs, self.ctx)[0]
        if len(nodes) != 1 or isinstance(nodes[0], str) or nodes[0][0] != "table":
            return None
        table = nodes[0]
        self.attrs = table[1]
        body: list[Node] = []
        for part in table[2]:
            if part[0] == "thead":
                self.thead = part
            elif part[0] == "tbody":
                body = list(part[2])
        return body

    def _row_alone(self, row: str) -> Node | None:
        """One line starting with a pipe under the header, without a parse of
        the table: markdown-it's cells of it (its own split and trim), one per
        header column, each the inline parse of its content, aligned as its
        column. A line that starts with a pipe ends no table and starts no
        block, so it is always the next row. None: a parse decides (no header
        yet, several lines, footnote references, whose ids count the table's)."""
        if (self.thead is None or "\n" in row or not _is_table_line(row)
                or "[^" in row or "[^" in self.head_src):
            return None
        heads = self.thead[2][0][2]
        if len(heads) > _MOST_QUICK_COLUMNS:
            return None
        cells = escapedSplit(mdTrim(row))
        if cells and cells[0] == "":
            cells.pop(0)
        if cells and cells[-1] == "":
            cells.pop()
        return ("tr", (), tuple(
            ("td", head[1], tuple(self.parser.inline(
                mdTrim(cells[i]) if i < len(cells) else "", self.refs, self.ctx)))
            for i, head in enumerate(heads)))

    def _feed_at_once(self, lines: list[str]) -> bool:
        """Several rows in one parse, when it makes one table with a body row per
        line: what a parse of each row alone makes, since markdown-it splits
        and parses each row's cells by itself (a line that ends the table, or
        the table's bound on cells, gives fewer rows: then row by row). Not
        with footnote references: their ids count the references of a parse."""
        if len(lines) < 2 or any("[^" in line for line in lines):
            return False
        self.checks += 1
        rows = self._render_rows("\n".join(lines))
        if rows is None or len(rows) != len(lines):
            return False
        self.rows.extend(rows)
        self.row_lines += len(lines)
        return True

    def feed_lines(self, lines: list[str]) -> bool:
        # The rows that start with a pipe at once; from the first line that does
        # not (often the blank line or block that ends the table) row by row.
        rows = 0
        while rows < len(lines) and _is_table_line(lines[rows]):
            rows += 1
        if self._feed_at_once(lines[:rows]):
            lines = lines[rows:]
        return self._feed_each(lines)

    def _feed_each(self, lines: list[str]) -> bool:
        for line in lines:
            self.checks += 1
            # One parse says both that the line is a row of this table (the
            # table, alone, with one body row: a line that ends the table adds
            # none, or a block after it) and what the row shows.
            rows = self._render_rows(line)
            if rows is None or len(rows) != 1:
                return False
            self.rows.extend(rows)
            self.row_lines += 1
        return True

    @property
    def lines(self) -> int:
        """Source lines of the complete table: header, delimiter row, rows."""
        return 2 + self.row_lines

    def node(self, rows: list[Node] | None = None) -> Node:
        kids: list[Node] = [self.thead] if self.thead is not None else []
        body = self.rows if rows is None else rows
        if body:
            kids.append(("tbody", (), tuple(body)))
        return ("table", self.attrs, tuple(kids))

    def display(self, partial: str) -> tuple[Node, ...] | None:
        if partial and not _is_table_line(partial):
            if partial.strip() and not _marker_only(partial):
                return None  # not a row (or a new block): the general path decides
            partial = ""
        rows = list(self.rows)
        if partial:
            parts = display_source(self.head_src + partial).split("\n", 2)
            if len(parts) < 3:
                # Nothing of the table left to show: its header reads as a
                # definition being written (`[^n]: a | b`), held back whole.
                return None
            shown = parts[2]
            more = self._render_rows(shown) if shown.strip() else []
            if more is None:
                return None
            rows.extend(more)
        return (self.node(rows),)


# Blocks that a blank line ends, whatever follows at the item's content column
# (a fenced code block, a formula or a nested list may go on after one).
_ENDED_BY_BLANK = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "hr",
                             "table"})

class _FenceEnd:
    """Whether an item's content lines (its marker and indentation removed)
    end with a fenced code block closed on their last non-blank line, read
    with CommonMark's fence rule. Refused when a line may open a nested list
    item or a formula (a fence in it would be its own) or has a tab in its
    indentation; a quote's lines start with `>`, so none of them is read as a
    fence here (a line without it ends the quote). Read forward and kept: the
    lines of a growing item are read once each, not at every blank line."""

    __slots__ = ("read", "width", "fence", "closed", "refused")

    def __init__(self, width: int) -> None:
        self.width = width
        self.read = 0          # lines read
        self.fence: tuple[str, int] | None = None  # (character, length) while inside a fence
        self.closed = False    # the last non-blank line read closed a fence
        self.refused = False

    def closed_at(self, lines: list[str], end: int) -> bool:
        """Whether `lines[:end]` (item lines, `width` columns of indentation
        removed here) end with a closed fence; `lines` only ever grow."""
        for line in lines[self.read:end]:
            if self.refused:
                break  # for good: nothing after it is read
            self._line(line[self.width:])
        self.read = max(self.read, end)
        return not self.refused and self.fence is None and self.closed

    def _line(self, line: str) -> None:
        if not line.strip(" \t"):
            return
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if body[:1] == "\t":
            self.refused = True
        elif self.fence is None:
            self.closed = False
            if indent <= 3 and (_ITEM.match(line) or is_math_fence(line)):
                self.refused = True  # a nested item's fences are at its own column
                return
            run = opening_run(body) if indent <= 3 else None
            if run is not None:
                self.fence = (run[0], len(run))
        elif (closing_run(line, self.fence[0]) or 0) >= self.fence[1]:
            self.fence, self.closed = None, True
        else:
            self.closed = False


def _ends_by_blank(blocks: tuple[Node, ...], fences: _FenceEnd, lines: list[str],
                   end: int) -> bool:
    """Whether an item's `blocks` end with one that the blank line after their
    lines `lines[:end]` ended: nothing at the item's content column continues it."""
    if not blocks or isinstance(blocks[-1], str):
        return False
    return blocks[-1][0] in _ENDED_BY_BLANK or (
        blocks[-1][0] == "pre" and fences.closed_at(lines, end))


# A partial line's first character that may still make it a list item (or an
# item's indented line), or a definition: the list is not known to be over.
_MAY_START_ITEM = frozenset(" \t-+*[0123456789") | {""}

# The children of the dummy item's `li` in a tight list (bare text; a loose
# list shows it as a paragraph).
_TIGHT_DUMMY = ("x",)


def _opens_quote(line: str, start: int) -> bool:
    """Whether `line`'s text, after its blanks from `start` and any list
    markers, starts with a quote marker."""
    at = start
    while True:
        after = after_list_marker(line, at)
        if after == at:
            return line[at:at + 1] == ">"
        at = after


class OpenList:
    """A top-level list (its first marker at column 0 to 3) while it streams.

    Complete items are rendered once and kept as the list's `head`; a delta
    re-renders only the last item (with the partial line), and a new line is
    checked against the last item alone — a line at column 0 with the same
    marker always starts the next item, so earlier items cannot matter.
    Looseness is the whole list's: items are rendered tight until the list
    turns loose (an item with blank-separated children, or a blank line before
    the next item), then loose — the head once more, and each later item in a
    loose context (followed by a blank line and a dummy item, dropped).

    A list whose first marker is indented (1 to 3 spaces) is handled as the
    same list at column 0: each line loses up to that many leading spaces.
    Every content column (at least two past the first marker) moves by the
    same amount, and a line with fewer spaces is below all of them either
    way. An item less indented than the first would bring a content column
    that moves by less, and tabs would not move at all: such a list goes to
    the general path.
    """

    def __init__(self, parser: Parser, refs: dict[str, Any], lines: list[str],
                 ctx: tuple[str, int] = ("", 0),
                 shown: tuple[tuple[str, Node | None], ...] = (),
                 long_item: int = 512, depth: int = 0) -> None:
        self.parser = parser
        self.depth = depth  # lists this one is nested in, each with a state of its own
        self.refs = refs
        self.ctx = ctx
        self.long_item = long_item  # characters before the last item may stream as a paragraph
        first = _ITEM.match(lines[0])
        if first is None:
            raise ValueError("not a list")
        self.indent = len(first.group(1))
        dedented = self._dedent_all(lines)
        if dedented is None:
            raise ValueError("an indented list's line would move otherwise than the list")
        # The content column of the list's last item (dedented), while known.
        lines, self._width = dedented
        self.marker, self.delim = first.group(2), first.group(3)
        self.tag = "ol" if self.delim else "ul"
        self.checks = 0
        self.head_lines: list[str] = []     # complete items' source lines
        self.head: Node | None = None       # their list node
        self.loose = False
        self.item: list[str] = []           # the last item's complete lines
        # Whether a blank line stands among them after the first (only then
        # can the item make the list loose with no paragraph to show it).
        self._item_blank = False
        # The last parsed display, when plain words may grow its last text node
        # (joins._plain_append_state): (the partial line then, the nodes shown,
        # the trailing blanks not shown yet).
        self._plain: tuple[str, tuple[Node, ...], str] | None = None
        self.plain_appends = 0
        # The last item's `li` and the list's attributes as a parse of the
        # display showed them, followed by a next item in a tight list: what
        # `_probe` would say when that next item's line completes, and the
        # item shown before the next one while that one streams.
        self._shown_item: tuple[Any, Node] | None = None
        # The last item's `li` as the last parse of the display showed it, a
        # new block after it (the item ended there), in a tight list: its
        # final `li` while its lines stay these.
        self._ended_item: Node | None = None
        # The last item's blocks before its last blank line, shown loose:
        # (lines they span, the li's attributes, the blocks, the list's
        # attributes, whether a blank line stood between two of its blocks,
        # whether they end with a block that the blank line after them ended).
        self._settled: tuple[int, Any, tuple[Node, ...], Any, bool, bool] | None = None
        # The last item's lines read for a split (`_split_item`), each once: how
        # many, whether all of them may be split, and the index of the last
        # blank one (0: none after the first).
        self._split_read = (1, True, 0)
        self._fences_read: _FenceEnd | None = None  # its fence reading for a split
        # The last item while it is one paragraph (`_ItemParagraph`), and
        # whether it stopped being one (until the next item).
        self._para: _ItemParagraph | None = None
        self._para_ended = False
        # The last item while it ends in a nested list (`NestedTail`), and
        # the item's line count when one was last looked for.
        self._nested: NestedTail | None = None
        self._nested_tried = 0
        # The last item while it ends in an open fence (`FenceTail`), or in an
        # open indented code block or display formula (`ItemLeaf`), the
        # item's line count when one was last looked for, and where the
        # item's fences open and close (None: not read yet).
        self._open_end: FenceTail | ItemLeaf | None = None
        self._end_tried = 0
        self._fence_scan: FenceScan | None = None
        last = max(k for k, line in enumerate(lines) if self._starts_item(line))
        if last:
            self.head_lines = lines[:last]
            src = "\n".join(self.head_lines) + "\n"
            kept = self._shown_head(src, shown)
            if kept is not None:
                self.head = kept
            else:
                # The complete items in one parse, which also says whether the
                # list is loose so far.
                attrs, items, self.loose = self._probe(src)
                self.head = (self.tag, attrs, tuple(items))
        self.item = lines[last:]
        self._item_blank = any(not line.strip(" \t") for line in self.item[1:])

    def _shown_head(self, src: str,
                    shown: tuple[tuple[str, Node | None], ...]) -> Node | None:
        """The list node of the complete items `src` (dedented) among what the
        stream's general path showed (`shown`: each a source and its node), when
        one is exactly their source, a tight list ending without a blank line (a
        next item keeps it tight); None: they are parsed."""
        if ends_with_blank_line(src):
            return None
        for text, node in shown:
            if self.indent:
                seen = self._dedent_all(text.split("\n"))
                text = "\n".join(seen[0]) if seen is not None else ""
            if (text == src and node is not None and node[0] == self.tag
                    and _looseness(node) is False):
                return node
        return None

    def _dedent(self, line: str, width: int | None) -> str | None:
        """`line` seen from the list's first marker: up to `indent` leading
        spaces dropped. None where its place could change with them, in an
        indented list: a tab; an item less indented than the first (a sibling
        whose content column would move by less than the lines after it); a
        line indented 4 or more but not to the last item's content column
        `width` (seen dedented; None: unknown), for which CommonMark's 4-space
        rule holds at its own column, not at the list's; a quote's line (its
        lazy lines keep their leading spaces, which a code span running into
        them shows: dropped, it would show fewer)."""
        if not self.indent:
            return line
        spaces = len(line) - len(line.lstrip(" "))
        if "\t" in line or (spaces < self.indent and _ITEM.match(line)) or (
                spaces >= 4 and (width is None or spaces < width + self.indent)) or (
                ">" in line and _opens_quote(line, spaces)):
            return None
        return line[min(self.indent, spaces):]

    def _dedent_all(self, lines: list[str]) -> tuple[list[str], int | None] | None:
        """`lines` dedented in order, each against the item it follows, and
        the content column after them (tracked for an indented list only)."""
        if not self.indent:
            return lines, None
        out: list[str] = []
        width: int | None = None
        for line in lines:
            seen = self._dedent(line, width)
            if seen is None:
                return None
            width = _width_after(seen, width)
            out.append(seen)
        return out, width

    def _starts_item(self, line: str) -> bool:
        m = _ITEM.match(line)
        return m is not None and not m.group(1) and (
            m.group(3) == self.delim if self.delim else m.group(2) == self.marker)

    def _dummy(self) -> str:
        return ("1" + self.delim if self.delim else self.marker) + " " + _TIGHT_DUMMY[0] + "\n"

    def _with_dummy(self, src: str, alone: bool = False) -> Node | None:
        """The list node `src` starts with, which holds a dummy item (`_dummy`)
        and at least one of ours; None if `src` does not parse so (or, `alone`,
        if anything follows that list)."""
        nodes = self.parser.render(src, self.refs, self.ctx)[0]
        if (not nodes or isinstance(nodes[0], str) or nodes[0][0] != self.tag
                or len(nodes[0][2]) < 2 or (alone and len(nodes) != 1)):
            return None
        return nodes[0]

    def _items(self, src: str, loose: bool) -> list[Node] | None:
        """The `li` nodes of `src` (one list) rendered after a dummy item, in a
        loose list if asked (a blank line after the dummy; after them instead,
        it would be content of a code block still open at their end); None if
        asked tight and they make the list loose (the dummy's text tells)."""
        lst = self._with_dummy(self._dummy() + ("\n" if loose else "") + src)
        if lst is None or (not loose and lst[2][0][2] != _TIGHT_DUMMY):
            return None
        return list(lst[2][1:])

    def _probe(self, src: str) -> tuple[Any, list[Node], bool]:
        """The items `src` rendered with a dummy next item after them: the
        list's attributes, their `li` nodes, and whether the list is loose
        there. The dummy's text tells, as a paragraph or not, so the parser
        decides (blank lines after an empty item, say, do not make a list
        loose), whatever the items hold."""
        lst = self._with_dummy(src + self._dummy(), alone=True)
        if lst is None:
            raise ValueError("items are not one list")
        return lst[1], list(lst[2][:-1]), lst[2][-1][2] != _TIGHT_DUMMY

    def _push_item(self) -> None:
        """The last item is complete (the next one starts): move it to the head."""
        src = "\n".join(self.item) + "\n"
        if self._shown_item is None:
            # What a display would have kept had the next item's line streamed
            # in (`_display`); lines that come whole (the demo's "as delivered"
            # pane) reach here without one.
            self._shown_item = self._nested_item(src) or self._line_item(src)
        if self._shown_item is not None:
            (attrs, item), loose = self._shown_item, False
            items = [item]
        else:
            attrs, items, loose = self._probe(src)
        if loose and not self.loose:
            self._turn_loose()
        elif self.loose and not loose:  # tight alone, loose as part of this list
            shown = self._items(src, True)
            if shown is None:
                raise ValueError("item did not render as one list")
            items = shown
        if self.head is None:
            self.head = (self.tag, attrs, tuple(items))
        else:
            self.head = (self.tag, self.head[1], (*self.head[2], *items))
        self.head_lines.extend(self.item)
        self.item = []

    def _turn_loose(self) -> None:
        self.loose = True
        if self.head_lines:
            src = "\n".join(self.head_lines) + "\n"
            items = self._items(src, True)
            if items is None or self.head is None:
                raise ValueError("head did not render as one list")
            self.head = (self.tag, self.head[1], tuple(items))

    def _next_item(self, line: str) -> bool:
        """Whether `line` is an item of this list after any item, whatever that
        item holds: its marker at column 0 (no item content or lazy line starts
        there), text after it, and nothing a parse of the list would see
        otherwise (a possible thematic break, definitions)."""
        m = _ITEM.match(line)
        if m is None or not self._starts_item(line) or not line[m.end():].strip(" \t"):
            return False
        bare = line.replace(" ", "").replace("\t", "")
        return not (len(bare) >= 3 and not bare.strip("-*_")) and "]:" not in line and (
            "[^" not in line)

    def _in_item(self, line: str) -> bool:
        """Whether `line` is the last item's, whatever that item holds: a blank
        line (no blank line ends a list), or one indented to the item's
        content column (CommonMark's rule for an item's continuation lines),
        the item's first line having text (an item that starts blank ends at a
        blank line). Tabs count in columns: not decided here."""
        if not line.strip(" \t"):
            return bool(self.item)
        width = self._content_width()
        indent = len(line) - len(line.lstrip(" "))
        return width is not None and indent >= width and line[indent] != "\t"

    def _content_width(self) -> int | None:
        """The last item's content column (`_content_width`)."""
        return _content_width(self.item[0] if self.item else "")

    def _literal(self, tail: str, partial: str) -> bool:
        """Whether the display shows the last item's end (`tail` holding its
        lines since the last blank one) as it is (`literal_end`), read with
        the lines of the items before it too, as the whole list's display
        reads it: what holds a line may depend on them."""
        last = partial.rstrip(" \t")
        if not last.strip(" "):
            last = next((line for line in reversed(self.item) if line.strip(" ")), "")
        if not may_end_literal(tail, last):
            return False  # (most deltas: neither code nor a formula, no lines copied)
        lines = [*self.head_lines[-_MOST_READ_BACK:], *self.item, partial.rstrip(" \t")]
        return ends_literal(tail, lines)

    def _children_after(self, marker: str, lines: list[str], partial: str = "",
                        literal: bool | None = None) -> tuple[Node, ...] | None:
        """The blocks `lines` (and the partial line) make in an item that had
        a paragraph and a blank line before them: parsed after a dummy item
        with the same marker width and that paragraph, which is dropped.
        `literal`: whether the display shows their end as it is, as read in
        the whole item (`literal_end`; the dummy hides what holds them)."""
        shown = display_source(marker + "x\n\n" + "\n".join(lines) + "\n" + partial, literal)
        nodes = self.parser.render(shown, self.refs, self.ctx)[0]
        if (len(nodes) != 1 or isinstance(nodes[0], str) or nodes[0][0] != self.tag
                or len(nodes[0][2]) != 1):
            return None
        kids = nodes[0][2][0][2]
        if kids == _TIGHT_DUMMY:
            return ()  # nothing shown after the blank line (held back): no block
        if kids[:1] != (("p", (), ("x",)),):
            return None
        return tuple(kids[1:])

    def _fence_end(self, width: int, end: int) -> _FenceEnd:
        """The last item's fence reading (`_FenceEnd`), anew if it read past
        `end` or at another width."""
        fences = self._fences_read
        if fences is None or fences.width != width or fences.read > end:
            fences = self._fences_read = _FenceEnd(width)
        return fences

    def _split_item(self, partial: str) -> tuple[Any, Node] | None:
        """The list's attributes and the last item's `li`, shown loose, from its
        blocks before its last blank line (kept, extended by the paragraphs
        that complete) and a parse of the lines after it only; None when that
        could differ from one parse of the item: every line of the item is
        blank or indented to its content column (no lazy line), and the
        blocks before the split end with one that a blank line ends
        (`_ends_by_blank`), so nothing after the split continues them."""
        width = self._content_width()
        if width is None or "]:" in partial or "[^" in partial:
            return None
        read, fits, blank = self._split_read
        for k in range(read, len(self.item)):
            line = self.item[k]
            if not line.strip(" \t"):
                blank = k
            elif fits:
                fits = _fits_split(line, width)
        self._split_read = (len(self.item), fits, blank)
        k = blank + 1
        if k <= 1 or not fits or not _fits_split(partial, width):
            return None
        marker = self.item[0][:width]
        lines = self.item
        settled = self._settled
        if settled is None or settled[0] > k or (settled[0] < k and not settled[5]):
            items = self._items("\n".join(lines[:k]) + "\n", True)
            if items is None or len(items) != 1:
                return None
            attrs = self.head[1] if self.head is not None else self.parser.render(
                lines[0], self.refs, self.ctx)[0][0][1]
            blocks = tuple(items[0][2])
            settled = (k, items[0][1], blocks, attrs, False,
                       _ends_by_blank(blocks, self._fence_end(width, k), lines, k))
        elif settled[0] < k:
            more = self._children_after(marker, lines[settled[0]:k])
            if more is None:
                return None
            blocks = settled[2] + more
            # Blocks after the blank line before them: the item is loose.
            settled = (k, settled[1], blocks, settled[3], settled[4] or bool(more),
                       _ends_by_blank(blocks, self._fence_end(width, k), lines, k))
        # Kept (also when refused) so that a refused split costs no parse again.
        self._settled = settled
        if not settled[5]:
            return None
        rest: tuple[Node, ...] | None = ()
        if partial.strip(" \t") or any(line.strip(" \t") for line in lines[k:]):
            after = "\n".join(lines[k:]) + "\n" + partial  # (all the lines since the blank one)
            rest = self._children_after(marker, lines[k:], partial, self._literal(after, partial))
        if rest is None:
            return None
        if not rest:
            # Nothing shown after the blank line yet: the item is loose only
            # if a blank line already stood between two of its blocks.
            if not (self.loose or settled[4]):
                return None
            return settled[3], ("li", settled[1], settled[2])
        # A block after the blank line: the item is loose.
        self._settled = (*settled[:4], True, settled[5])
        return settled[3], ("li", settled[1], settled[2] + rest)

    def feed_lines(self, lines: list[str]) -> bool:
        self._plain = None
        for raw in lines:
            if "]:" in raw or "[^" in raw:
                # A definition may be starting: the general path collects it for
                # the whole message (a list parses it for its own items only).
                return False
            line = self._dedent(raw, self._width)
            if line is None:
                return False
            if self.indent:
                self._width = _width_after(line, self._width)
            if (self.item and not self.item[-1].strip(" \t") and line[:1] not in ("", " ", "\t")
                    and not self._starts_item(line)):
                # Text at column 0 after a blank line, not an item of this list:
                # nothing in an item (no lazy line after a blank) takes it in.
                return False
            if not (self._next_item(line) or self._in_item(line)):
                self.checks += 1
                window = "\n".join([*self.item, line]) + "\n"
                blocks = self.parser.block_starts(window, self.refs)
                kind = "ordered_list_open" if self.delim else "bullet_list_open"
                if len(blocks) != 1 or blocks[0][0] != 0 or blocks[0][2] != kind:
                    return False
            try:
                if self._starts_item(line):
                    self._push_item()
                    self._settled = None
                    self._split_read, self._fences_read = (1, True, 0), None
                    self._para, self._para_ended = None, False
                    self._nested, self._nested_tried = None, 0
                    self._open_end, self._end_tried, self._fence_scan = None, 0, None
                    self._item_blank = False
            except ValueError:
                return False
            if self._para is not None and not self._para.feed_line(line):
                self._para, self._para_ended = None, True
            if self.item and not line.strip(" \t"):
                self._item_blank = True
            self.item.append(line)
            if self._nested is not None and not self._nested.feed_line(line):
                self._nested = None  # (looked for again from the next line on)
            if self._open_end is not None and not self._open_end.feed_line(line):
                self._open_end = None
            if self._fence_scan is not None:
                self._fence_scan.feed(line)
            self._shown_item = self._ended_item = None
        return True

    def _plain_grown(self, partial: str) -> tuple[Node, ...] | None:
        """The nodes for `partial` without a parse, when it is the partial line of
        the last parsed display plus plain words (letters, digits, spaces,
        `,.;?`: they open and close nothing, as on the general path's
        `_append_plain`); else None."""
        plain = self._plain
        if plain is None or not partial.startswith(plain[0]):
            return None
        old, nodes, held = plain
        piece = partial[len(old):]
        if not piece:
            return nodes
        if not _PLAIN.fullmatch(piece) or may_take_plain(partial, piece):
            return None  # markup, or a URL or reference that may take these words in
        text = held + piece
        visible = text.rstrip(" ")
        if visible:
            nodes = nodes[:-1] + (_grow_last(nodes[-1], visible),)
        self._plain = (partial, nodes, text[len(visible):])
        self.plain_appends += 1
        return nodes

    def display(self, partial: str) -> tuple[Node, ...] | None:
        seen = self._dedent(partial, self._width)
        return None if seen is None else self._display(seen)

    def _display(self, partial: str) -> tuple[Node, ...] | None:
        grown = self._plain_grown(partial)
        if grown is not None:
            return grown
        self._plain = None
        if "]:" in partial or "[^" in partial:
            return None  # a definition being written: the general path collects it
        para = self._item_paragraph()
        if para is not None:
            li = para.display(partial)
            if li is not None:
                self._shown_item = self._ended_item = None
                lis = (li,) if self.head is None else (*self.head[2], li)
                return ((self.tag, para.list_attrs, lis),)
        nested = self._nested_display(partial)
        if nested is not None:
            return nested
        fenced = self._open_end_display(partial)
        if fenced is not None:
            return fenced
        if self.loose or self.head is None:
            split = self._split_item(partial)
            if split is not None:
                attrs, li = split
                self._shown_item = self._ended_item = None
                lis = (li,) if self.head is None else (*self.head[2], li)
                if self._open_end is None and len(self.item) >= self._end_tried:
                    self._find_open_end(partial, (self.tag, attrs, lis))
                return ((self.tag, attrs, lis),)
        item_src = "\n".join(self.item) + "\n"
        src = item_src + partial
        shown = display_source(src, self._literal(src, partial))
        # What the display shows of the partial line, when it keeps the item's lines.
        part = shown[len(item_src):] if shown.startswith(item_src) else None
        if self._shown_item is None and partial.strip() and self._starts_item(partial):
            self._shown_item = self._nested_item(item_src) or self._line_item(item_src)
        after = self._after_shown_item(part, partial)
        if after is not None:
            return self._shown_as(partial, src, shown, after)
        nodes = self.parser.render(shown, self.refs, self.ctx)[0] if shown.strip() else []
        if not nodes or isinstance(nodes[0], str) or nodes[0][0] != self.tag:
            return None
        self._shown_item = self._ended_item = None
        if (not self.loose and len(nodes) > 1 and len(nodes[0][2]) == 1
                and _looseness(nodes[0]) is False and part is not None):
            self._ended_item = nodes[0][2][0]
        if (self.item and len(nodes) == 1 and len(nodes[0][2]) == 2
                and _looseness(nodes[0]) is False and part is not None
                and part.strip() and self._starts_item(partial)):
            # The last item's lines as they are, then the partial line shown as
            # the next item (at column 0 it can be nothing else in this list):
            # so those lines are one `li`, in a tight list, as `_probe` renders it.
            self._shown_item = (nodes[0][1], nodes[0][2][0])
        if (self.head is not None and not self.loose and self._item_blank
                and _looseness(nodes[0]) is None and self._items(shown, False) is None):
            # Blocks split by a blank line that none shows as loose (headings,
            # code, nested lists): the dummy before them tells the list turns.
            return None  # turning loose: the general path shows it, once
        # With no earlier items the parse is the whole list's, loose or not.
        if self.head is not None and _loose(nodes[0]) != self.loose:
            if self.loose:
                items = self._items(shown, True)
                if items is None:
                    return None
                nodes = [(self.tag, nodes[0][1], tuple(items)), *nodes[1:]]
            else:
                return None  # turning loose: the general path shows it, once
        out = tuple(nodes) if self.head is None else (
            (self.tag, self.head[1], (*self.head[2], *nodes[0][2])), *nodes[1:])
        if len(out) == 1 and self._nested is None and len(self.item) >= self._nested_tried:
            self._find_nested(partial, shown, out[0])
        if len(out) == 1 and self._open_end is None and len(self.item) >= self._end_tried:
            self._find_open_end(partial, out[0])
        return self._shown_as(partial, src, shown, out)

    def _fences(self) -> FenceScan:
        """Where the last item's fences open and close: its lines read once,
        the first time, then each new line as it completes (`feed_lines`)."""
        scan = self._fence_scan
        if scan is None:
            scan = self._fence_scan = FenceScan(self._content_width(), self.item[0])
            for line in self.item[1:]:
                scan.feed(line)
        return scan

    def _find_open_end(self, partial: str, shown_list: Node) -> None:
        """Whether the last item, shown in `shown_list` from one parse, now ends
        in an open fence, indented code block or display formula that later
        deltas may append to (`FenceTail`, `ItemLeaf`): looked at once per
        complete line at most."""
        if isinstance(shown_list, str) or not self.item:
            return
        scan = self._fences()
        self._end_tried = len(self.item) + 1
        li = shown_list[2][-1]
        start = scan.fence_start(self.item)
        if start is not None:
            self._open_end = FenceTail.find(self.item, start, scan.width, li, self.loose,
                                            shown_list[1], partial)
        elif scan.shown_run is None and self._content_width() is not None:
            src = "\n".join(self.item) + "\n" + partial
            self._open_end = ItemLeaf.find(self.item, scan.width, li, self.loose,
                                           shown_list[1], partial) if self._literal(
                src, partial) else None

    def _open_end_display(self, partial: str) -> tuple[Node, ...] | None:
        """The list with its last item shown from its open end's state
        (`FenceTail`, `ItemLeaf`), or None when the list's own path shows it."""
        end = self._open_end
        if end is None or end.loose != self.loose:
            return None
        li = end.li(partial)
        if li is None:
            if end.gone:
                self._open_end = None
            return None
        self._shown_item = self._ended_item = None
        attrs = self.head[1] if self.head is not None else end.list_attrs
        return (self._with_last(attrs, li),)

    def _find_nested(self, partial: str, shown: str, shown_list: Node) -> None:
        """Whether the last item, shown in `shown_list` from one parse of
        `shown`, now ends in a nested list that later deltas may parse alone
        (`NestedTail`): looked at once per complete line at most, from the
        delta on which a line (the partial one, say) opens that list."""
        width = self._content_width()
        if width is None:
            return
        lines = [*self.item, partial]
        start = nested_start(lines, width)
        if start is None:
            return
        self._nested_tried = len(self.item) + 1
        prefix = "".join(line + "\n" for line in lines[:start])
        self._nested = NestedTail.find(self.parser, self.refs, self.ctx, prefix, width,
                                       self.item, shown, shown_list[2][-1], self.loose,
                                       shown_list[1], self._nested_list_state())

    def _nested_list_state(self) -> Callable[[Parser, list[str]], OpenList] | None:
        """What makes a nested list's own state, one level deeper, with the
        nested list's parser (None past `_NESTED_STATES` levels: deeper lists
        are parsed whole)."""
        if self.depth >= _NESTED_STATES:
            return None
        return lambda parser, lines: OpenList(parser, self.refs, lines, self.ctx,
                                              long_item=self.long_item, depth=self.depth + 1)

    def _nested_item(self, item_src: str) -> tuple[Any, Node] | None:
        """What `_shown_item` keeps, from the last item's nested state rather
        than a parse of the whole item, once a line starting the next item
        follows it in a tight list: the list's attributes and the item's `li`,
        its nested list parsed alone from the item's lines as they are (no
        display rewrite: nothing of the item is open any more)."""
        if self.loose or not self.item or not self.item[-1].strip(" \t"):
            return None  # (after a blank line the next item makes the list loose)
        shown = self._nested_li(item_src, None)
        if shown is None or _looseness((self.tag, (), (shown[1],))) is not False:
            return None
        return shown

    def _line_item(self, item_src: str) -> tuple[Any, Node] | None:
        """What `_shown_item` keeps for a last item of one line in a tight list,
        once a line starting the next item follows it: the list's attributes
        and the item's `li`, from that line rendered alone (one line: no block
        parse, parser.py `_line_block`). The next item's marker at column 0 ends
        the item whatever it holds, and markdown-it parses an item's lines as a
        document of their own, so the line alone gives the same `li`. Parsed
        with the next item's first letters instead, the first delta of each new
        item was md_32k's costliest Markdown step (~0.2 ms in CPython, 61 of its
        400 markdown-it parses)."""
        if self.loose or len(self.item) != 1:
            return None
        return self._one_item(item_src)

    def _nested_display(self, partial: str) -> tuple[Node, ...] | None:
        """The list with its last item shown from its nested list's lines
        alone (`NestedTail`), or None when they may not be parsed alone."""
        if self._nested is None:
            return None
        src = "\n".join(self.item) + "\n" + partial
        shown = display_source(src, self._literal(src, partial))
        got = self._nested_li(shown, partial)
        if got is None:
            return None
        self._shown_item = self._ended_item = None
        return self._shown_as(partial, src, shown, (self._with_last(*got),))

    def _nested_li(self, shown: str, partial: str | None) -> tuple[Any, Node] | None:
        """The list's attributes and the last item's `li` from its nested state
        (`NestedTail.li`, for the item shown as `shown`), when there is one
        made in this list's looseness."""
        nested = self._nested
        if nested is None or nested.loose != self.loose:
            return None
        li = nested.li(self.refs, self.ctx, shown, partial)
        if li is None:
            return None
        return (self.head[1] if self.head is not None else nested.list_attrs), li

    def _with_last(self, attrs: Any, li: Node) -> Node:
        """The list node: its complete items, then `li` (`attrs` are the list's)."""
        return (self.tag, attrs, (li,) if self.head is None else (*self.head[2], li))

    def _shown_as(self, partial: str, src: str, shown: str, out: tuple[Node, ...]
                  ) -> tuple[Node, ...]:
        """`out`, the display of `partial` (`src` shown as `shown`), kept for
        plain words to grow without a parse when they may (`_plain_grown`)."""
        held = _plain_append_state(src, shown, out)
        if held is not None:
            self._plain = (partial, out, held)
        return out

    def _after_shown_item(self, part: str | None, partial: str) -> tuple[Node, ...] | None:
        """The list with the partial line shown as the next item, parsed alone,
        after the last item's `li` as an earlier parse with such a next item
        showed it (`_shown_item`, kept while the item's lines stay these); None
        when that could differ from one parse of both.

        In a tight list a next item's marker at column 0 ends the last item
        whatever it holds, and the next item's blocks are its own lines': so the
        partial line alone, one tight item, is that item. Parsed with the item
        before it, a list's delta on the long Markdown answer cost 0.38 ms
        (median, CPython) against a paragraph's 0.08 ms."""
        kept = self._shown_item
        if (kept is None or self.loose or part is None or not part.strip()
                or not self._starts_item(partial)):
            return None
        alone = self._one_item(part)
        if alone is None:
            return None
        self._ended_item = None
        # With no earlier items, the list's attributes are the ones that parse gave.
        attrs, before = (kept[0], ()) if self.head is None else (self.head[1], self.head[2])
        return ((self.tag, attrs, (*before, kept[1], alone[1])),)

    def _one_item(self, src: str) -> tuple[Any, Node] | None:
        """The list's attributes and its `li` when `src` renders as one list of
        this list's kind holding one item, not loose; else None."""
        nodes = self.parser.render(src, self.refs, self.ctx)[0]
        if (len(nodes) != 1 or isinstance(nodes[0], str) or nodes[0][0] != self.tag
                or len(nodes[0][2]) != 1 or _looseness(nodes[0]) is True):
            return None
        return nodes[0][1], nodes[0][2][0]

    def ending_line(self, lines: list[str]) -> int | None:
        """The index of the first of `lines`, to come after the list's last
        line in order, before which the list is over (`ended_at` once the
        lines before it are the list's), or None."""
        return next((k for k, line in enumerate(lines) if line[:1] not in _MAY_START_ITEM and (
            not lines[k - 1].strip(" \t") if k else self.ended_at(line))), None)

    def ended_at(self, line: str) -> bool:
        """Whether the list is over before `line` (complete or partial), the
        line after its last one, whatever `line` becomes: that last line is
        blank, and `line` stands at column 0 with a character no item marker
        starts with, nor `[` (no lazy line follows a blank line, so nothing but
        a new item, or a definition that would be the list's too, could still
        be the list's). The stream then makes the list final at once, and a
        long line after it streams as its own block, not through the list's
        display."""
        return (bool(self.item) and not self.item[-1].strip(" \t")
                and line[:1] not in _MAY_START_ITEM)

    def _item_paragraph(self) -> _ItemParagraph | None:
        """The last item's paragraph state, taken once the item is long enough
        to be worth it (`long_item`) and is one paragraph."""
        if self._para is not None or self._para_ended or len(self.item) < 2 or (
                sum(map(len, self.item)) < self.long_item):
            return self._para
        self._para = _ItemParagraph.of(self, self.item)
        self._para_ended = self._para is None
        return self._para

    def line_count(self) -> int:
        return len(self.head_lines) + len(self.item)

    def final_node(self) -> Node | None:
        """The list's node from its items, when it ends with its last item."""
        if self.item:
            nested = self._nested_final()
            if nested is not None:
                return nested
            src = "\n".join(self.item) + "\n"
            items = ([self._ended_item] if self._ended_item is not None and self.head is not None
                     else self._items(src, self.loose))
            if items is None:
                return None
            if self.head is None:
                nodes = self.parser.render(src, self.refs, self.ctx)[0]
                return nodes[0] if len(nodes) == 1 else None
            return (self.tag, self.head[1], (*self.head[2], *items))
        return self.head

    def _nested_final(self) -> Node | None:
        """The list's final node with its last item from that item's nested
        state (`NestedTail`), its lines as they are: blank lines after them
        end the list and belong to no item."""
        got = self._nested_li("\n".join(self.item) + "\n", None)
        return None if got is None else self._with_last(*got)


class _ItemParagraph:
    """A list's last item while it is one paragraph (a long answer's item that
    runs on over many continuation lines): the paragraph streams in an
    `OpenParagraph` of the item's content, so a delta costs what it does in a
    top-level paragraph, not a parse of the whole item.

    Taken only when one parse of the item says it is exactly that paragraph,
    each continuation line indented to the item's content column; it stops
    (the list's own path takes over) at a line that is not such a continuation
    of the paragraph: a blank or lazy line, a tab, a new block in the item.
    A partial line that may not continue it is shown by the list's own path.
    """

    def __init__(self, para: OpenParagraph, width: int, li_attrs: Any, list_attrs: Any,
                 loose: bool) -> None:
        self.para = para
        self.width = width
        self.li_attrs = li_attrs
        self.list_attrs = list_attrs
        self.loose = loose

    @classmethod
    def of(cls, lst: OpenList, item: list[str]) -> _ItemParagraph | None:
        width = _content_width(item[0])
        if width is None or any(not cls._continues(line, width) or opens_list(line, width)
                                or cls._opens_block(line, width) for line in item[1:]):
            return None  # (a nested list, a formula: not one paragraph, without a parse)
        first = item[0][width:]
        if "\t" in item[0] or first.lstrip(" ")[:1] == "[":
            return None  # a task item's box, a definition: the list's path shows them
        contents = [first, *(line[width:] for line in item[1:])]
        src = "\n".join(item) + "\n"
        nodes = lst.parser.render(src, lst.refs, lst.ctx)[0]
        if len(nodes) != 1 or isinstance(nodes[0], str) or len(nodes[0][2]) != 1:
            return None
        li = nodes[0][2][0]
        para = OpenParagraph(lst.parser, lst.refs, contents[:1], lst.ctx)
        if not para.feed_lines(contents[1:]):
            return None  # a line the display shows as more than the paragraph
        # The item alone parses tight: its li holds the paragraph's kids as they are.
        shown = para.display("")
        if shown is None or len(shown) != 1 or ("li", li[1], shown[0][2]) != li:
            return None  # not exactly one paragraph of these lines
        return cls(para, width, li[1], lst.head[1] if lst.head is not None else nodes[0][1],
                   lst.loose)

    @staticmethod
    def _opens_block(line: str, width: int) -> bool:
        """A fence or formula line where it would interrupt the paragraph."""
        return spaces_before(line) < width + 4 and (
            is_math_fence(line) or line.lstrip(" ")[:3] in ("```", "~~~"))

    @staticmethod
    def _continues(line: str, width: int) -> bool:
        indent = len(line) - len(line.lstrip(" "))
        return bool(line.strip(" \t")) and indent >= width and "\t" not in line

    def feed_line(self, line: str) -> bool:
        """A complete line of the item; False once the item is not (only) this
        paragraph."""
        return self._continues(line, self.width) and self.para.feed_lines([line[self.width:]])

    def display(self, partial: str) -> Node | None:
        """The item's `li` with the partial line, or None when the partial line
        may be something else than more of the paragraph."""
        if not partial.strip(" "):
            content = ""
        elif self._continues(partial, self.width):
            content = partial[self.width:]
        else:
            return None
        role = self.para.partial_role(content) if content else "hold"
        if role != "para" and (content or role != "hold"):
            return None  # block markers so far, or a new block: the list's path shows it
        if content.lstrip(" ")[:1] in ("[", "<"):
            # A task box, a definition or an HTML block may be starting: the
            # list's path holds such a line back.
            return None
        nodes = self.para.display(content)
        if nodes is None or len(nodes) != 1:
            return None
        kids = (nodes[0],) if self.loose else nodes[0][2]
        return ("li", self.li_attrs, kids)


def _fits_split(line: str, width: int) -> bool:
    """Whether `line` of an item with content column `width` allows showing the
    item split at a blank line (`OpenList._split_item`): blank, or indented to
    the column with no tab there and no definition in it."""
    if not line.strip(" \t"):
        return True
    indent = spaces_before(line)
    return not (indent < width or line[indent] == "\t" or "]:" in line or "[^" in line)


def _content_width(first: str) -> int | None:
    """The content column of the item whose first line is `first`, when that
    line has text after its marker at column 0 and no tab before that text;
    else None."""
    m = _ITEM.match(first)
    if m is None or m.group(1) or "\t" in first[:m.end()] or not first[m.end():].strip():
        return None
    spaces = len(first) - len(first[m.end() - 1:].lstrip(" ")) - (m.end() - 1)
    return m.end() - 1 + (spaces if spaces <= 4 else 1)


def _width_after(line: str, width: int | None) -> int | None:
    """The list's last item's content column after `line` (dedented), given
    `width` before it: a new item at column 0 sets it; a marker indented less
    than the content column may be a sibling with its own, unknown here."""
    m = _ITEM.match(line)
    if m is None:
        return width
    if not m.group(1):
        return _content_width(line)
    return width if width is not None and len(m.group(1)) >= width else None


def _quote_content(line: str) -> str | None:
    """A block quote line's content (up to 3 spaces, `>`, one optional space
    removed), or None if the line is not one (or needs tab arithmetic)."""
    i = 0
    while i < 3 and i < len(line) and line[i] == " ":
        i += 1
    if i >= len(line) or line[i] != ">":
        return None
    rest = line[i + 1:]
    if "\t" in rest[:len(rest) - len(rest.lstrip(" \t"))]:
        return None  # a tab after `>` counts in columns: the general path handles it
    return rest[1:] if rest.startswith(" ") else rest


class OpenQuote:
    """A top-level block quote while it streams: its content (markers removed)
    is a Markdown document of its own, fed to an inner stream, so everything
    above (open paragraphs, lists, tables, fences) applies inside it and a
    delta costs what it costs there. A line starting with `>` is the quote's;
    a line without it only when it surely continues the paragraph the content
    ends in (`_lazy`); any other (a blank line, another block) goes back to the
    general path. Quotes holding definitions (`]:`, `[^`) are left to the
    general path: inside a quote they would have to reach the whole message."""

    def __init__(self, make_stream: Any, lines: list[str]) -> None:
        self.inner = make_stream()
        self.lines = 0
        self.fed = ""  # the partial line's content already fed
        self.checks = 0
        contents = []
        for line in lines:  # entering: the quoted lines so far in one feed (one parse)
            content = _quote_content(line)
            if content is None:
                break
            if "]:" in line or "[^" in line:
                raise ValueError("not a plain block quote")
            contents.append(content + "\n")
        self.inner.feed("".join(contents))
        self.lines = len(contents)
        if not self.feed_lines(lines[len(contents):]):
            raise ValueError("not a plain block quote")

    def _lazy(self, line: str) -> bool:
        """Whether `line`, without `>`, continues the paragraph the quote's
        content ends in (a lazy continuation line), for the lines that surely
        do: starting with a letter, a line starts no block (a table row aside),
        so it cannot end the quote. Any other line without `>` — `2) x`, which
        ends a quote's paragraph though not a top-level one, say — is left to
        the general path."""
        return (line[:1].isalpha() and "]:" not in line and "[^" not in line
                and "\t" not in line and not _is_table_line(line)
                and self.inner.open_paragraph() is not None)

    def feed_lines(self, lines: list[str]) -> bool:
        for line in lines:
            self.checks += 1
            content = _quote_content(line)
            if content is None:
                if not self._lazy(line):
                    return False
                content = line
            elif "]:" in line or "[^" in line:
                return False
            self._feed(content + "\n")
            self.lines += 1
        return True

    def _feed(self, content: str) -> None:
        if content.startswith(self.fed):
            self.inner.feed(content[len(self.fed):])
        self.fed = ""

    def display(self, partial: str) -> tuple[Node, ...] | None:
        if partial:
            content = _quote_content(partial)
            if content is None and partial.strip() and not _marker_only(partial):
                if not self._lazy(partial):
                    return None
                content = partial  # a lazy line so far
            if content is not None:
                if "]:" in partial or "[^" in partial:
                    return None
                if content.startswith(self.fed) and len(content) > len(self.fed):
                    self.inner.feed(content[len(self.fed):])
                    self.fed = content
        return (("blockquote", (), tuple(self.inner.nodes())),)

    def line_count(self) -> int:
        return self.lines

    def final_node(self) -> Node | None:
        if self.fed:
            return None  # a partial line was fed: not these lines
        self.inner.close()
        return ("blockquote", (), tuple(self.inner.nodes()))


def final_from_open(block: OpenParagraph | OpenTable | OpenList | OpenQuote, kind: str,
                lines: list[str]) -> Node | None:
    """A block's final node from the incremental state it was shown from (no
    full parse), when that state is exact for exactly these lines."""
    count = len("\n".join(lines).rstrip("\n").split("\n"))
    if isinstance(block, OpenParagraph) and kind == "paragraph_open":
        return block.final_node("\n".join(lines).strip())
    if isinstance(block, OpenTable) and kind == "table_open" and block.lines == count:
        return block.node()
    if (isinstance(block, OpenList) and kind in ("bullet_list_open", "ordered_list_open")
            and block.line_count() in (count, len(lines))):
        return block.final_node()
    if (isinstance(block, OpenQuote) and kind == "blockquote_open"
            and block.line_count() in (count, len(lines))):
        return block.final_node()
    return None
