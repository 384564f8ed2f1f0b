"""`MarkdownStream`: one message's Markdown, rendered incrementally.

The document is a list of *final* blocks followed by an *open tail* (the source
not yet final). Each `feed` re-renders only the tail, so a frame costs the
delta plus the open block, never the document:

- A top-level block is final once a later top-level block has started on a
  complete line (CommonMark decides block structure line by line, so nothing
  after that line can reopen it), or at once when it cannot grow: a heading or
  thematic break on a complete line, a fenced code block whose closing fence
  line is complete. A final block is rendered once from its own source with the
  link references defined before it, and never again. (References defined
  later do not reach back into final blocks; see docs/markdown.md.)
- An open top-level fenced code block is not re-parsed: new lines are appended
  as code text (`AppendCode`). Nor is an open indented code block
  (`indented.py`) or display formula (`open_math.py`): neither needs a parse
  to be shown, and each grows one text node.
- Otherwise the tail is re-rendered from `tail.display_source`, which holds
  back or closes unfinished constructs so none flips between raw and formatted.

Changes come out of `feed`/`close` as operations (`FinalBlock`, `SetTail`,
`AppendCode`) for a renderer; `to_html` serialises the current document.
"""

from __future__ import annotations

import re

from streampace.lifecycle import Machine
from streampace.markdown.fence import OpenFence, opening_run
from streampace.markdown.finality import (
    cannot_grow,
    ends_before_text,
    starts_for_good,
    title_may_follow,
)
from streampace.markdown.footnotes import Footnotes
from streampace.markdown.indented import OpenIndentedCode
from streampace.markdown.joins import (
    _PLAIN,
    _grow_last,
    _join,
    _plain_append_state,
    _split_open_block,
    ended_by_paragraph,
    ends_with_blank_line,
    items_of_one_list,
    may_take_plain,
    one_list,
)
from streampace.markdown.md_rules import FOOTNOTE_KEY
from streampace.markdown.open_block import (
    OpenList,
    OpenParagraph,
    OpenQuote,
    OpenTable,
    final_from_open,
    is_math_fence,
)
from streampace.markdown.open_math import OpenMathSource
from streampace.markdown.ops import (
    AppendCode,
    FinalBlock,
    Op,
    SetFootnotes,
    SetTail,
    UpdateBlock,
)
from streampace.markdown.parser import Parser, default_parser
from streampace.markdown.tail import display_source
from streampace.markdown.tail_states import TAIL_TABLE, TailEvent, TailState
from streampace.markdown.tree import Node, to_html

__all__ = [
    "AppendCode", "FinalBlock", "MarkdownStream", "Op", "SetFootnotes", "SetTail", "UpdateBlock",
    "render_html",
]

_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
# Blocks whose content ends without its trailing spaces (the parse strips them).
_STRIPPED = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6"})
# Blocks an open tail shows as earlier items joined to the last (_render_tail).
_SPLIT_TAGS = {"bullet_list_open": ("ul",), "ordered_list_open": ("ol",),
               "table_open": ("table",)}
# Blocks whose parse does not depend on blank lines and spaces after their last
# line: shown as the plain parse of their text, that display is their final node.
_LIST_KINDS = frozenset({"bullet_list_open", "ordered_list_open"})
# Blocks that a blank line ends, whatever follows it (`_blocks_after_line`).
_ENDS_AT_BLANK = frozenset({"paragraph_open", "heading_open", "blockquote_open"})
_SHOWN_FINAL = frozenset({"paragraph_open", "heading_open", "bullet_list_open",
                          "ordered_list_open", "table_open", "blockquote_open"})


def _blank_line_at(tail: str, index: int) -> bool:
    """Whether line `index` of `tail` is complete and blank (spaces and tabs)."""
    start = 0
    for _ in range(index):
        start = tail.find("\n", start) + 1
        if not start:
            return False
    end = tail.find("\n", start)
    return end >= 0 and not tail[start:end].strip(" \t")


def _first_blank(lines: list[str]) -> int | None:
    """Index of the first blank line (spaces and tabs only, as CommonMark says), if any."""
    return next((i for i, line in enumerate(lines) if not line.strip(" \t")), None)


def _ends_in_code(node: Node) -> bool:
    """Whether the last thing in `node` is a code or math block. Inside a list
    item such a block may still be open, and then the line breaks and blank
    lines after the last shown line are its content: a display of the same
    text without them is not its final render."""
    while not isinstance(node, str):
        tag, attrs, children = node
        if tag == "pre" or (attrs and attrs[0][0] == "class"
                            and attrs[0][1].startswith("sp-math")):
            return True
        if not children:
            return False
        node = children[-1]
    return False


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


# The tail's states, moved by TAIL_TABLE's events only (tail_states.py).
TAIL, FENCE, LEAF, OPEN, CLOSED = (TailState.TAIL, TailState.FENCE, TailState.LEAF,
                                   TailState.OPEN, TailState.CLOSED)
_E = TailEvent


class MarkdownStream:
    """Feed one message's Markdown deltas; read block operations and HTML."""

    # A list gets incremental state (open_block.py) from this many characters on:
    # below it the general path costs no more per delta (and entering costs a
    # parse of what is there); above it the general path's whole-list parses on
    # each line (and per delta for a loose list) grow with the list. A block
    # quote (re-rendered whole on the general path) from LONG_QUOTE on.
    # A list's last item that is one paragraph streams as one (open_block.py,
    # `_ItemParagraph`) from LONG_ITEM characters on: below, its parse per delta
    # is cheaper than the one parse of the item that taking the state costs.
    # Measured: bench/markdown_bench.py.
    LONG_BLOCK = 128
    LONG_QUOTE = 256
    LONG_ITEM = 512

    def __init__(self, *, allow_images: bool = False, autolink: bool = True,
                 parser: Parser | None = None, id_prefix: str = "") -> None:
        if parser is None:
            parser = (default_parser() if not allow_images and autolink
                      else Parser(allow_images=allow_images, autolink=autolink))
        self.parser = parser
        self.blocks: list[Node] = []       # final blocks
        self.tail_nodes: tuple[Node, ...] = ()
        self._machine: Machine[TailState, TailEvent] = Machine("markdown tail", TAIL_TABLE, TAIL)
        self._tail = ""                    # source not yet final (normalised newlines)
        self._refs: dict = {}              # link references from final blocks
        self._cr = False                   # a delta ended with '\r' (maybe half of '\r\n')
        # FENCE state: the open fence (fence.py); a fence's node when it closed.
        self._fence: OpenFence | None = None
        self._closed_fence: Node | None = None
        self._fence_lines = 0  # the lines of a fence that just closed (0: none)
        # LEAF state: the open indented code block or display formula.
        self._leaf: OpenIndentedCode | OpenMathSource | None = None
        # A table left by the OPEN state: (node of its complete rows, lines, refs).
        # The incremental state the OPEN state left, with the references it saw:
        # its block's final node comes from it if nothing changed (_left_final).
        self._left: tuple[OpenParagraph | OpenTable | OpenList | OpenQuote, dict] | None = None
        # OPEN state: the block's incremental state, tail offset of its partial line.
        self._open: OpenParagraph | OpenTable | OpenList | OpenQuote | None = None
        self._open_pos = 0
        self._open_tried = 0               # tail length at the last look without a new line
        self.renders = 0                   # tail parses (for benchmarks)
        self.plain_appends = 0             # deltas shown without a parse
        # Trailing blanks not yet shown while plain appends are valid; None: not valid.
        self._held: str | None = None
        # An open list's / table's earlier items: their source and their node.
        self._prefix_src = ""
        self._prefix_node: Node | None = None
        self._rest_nodes: list[Node] = []   # the last item / row as last shown
        self._shown: str | None = None     # display source of tail_nodes, if reusable
        self._exact: str | None = None     # the tail, when tail_nodes are its plain parse
        self._grown = ""                   # its source, as it extends the prefix
        # Final blocks that could hold a reference link: (index, source, folded).
        self._bracketed: list[tuple[int, str, str]] = []
        self.id_prefix = id_prefix
        self.footnotes = Footnotes(id_prefix)

    # -- public ------------------------------------------------------------
    def feed(self, delta: str) -> list[Op]:
        if self.state == CLOSED:
            raise ValueError("feed() after close()")
        if not delta:
            return []
        return self._feed_normalised(self._normalise(delta))

    def _feed_normalised(self, delta: str) -> list[Op]:
        if self._held is not None and "\n" in delta:
            head = delta[:delta.index("\n")]
            if head and _PLAIN.fullmatch(head):
                # Plain words end the line: shown first by a plain append (no
                # parse), so a block the line break ends is final as shown
                # (_finalise) instead of parsed again whole on that frame.
                return self._feed_normalised(head) + self._feed_normalised(delta[len(head):])
        self._tail += delta
        return self._notes_op(self._step(closing=False, delta=delta))

    def close(self) -> list[Op]:
        if self.state == CLOSED:
            return []
        if self._cr:
            self._tail += "\n"
            self._cr = False
        ops = self._step(closing=True)
        self.footnotes.open = []
        self._machine.step(_E.CLOSE)
        return self._notes_op(ops)

    def _notes_op(self, ops: list[Op]) -> list[Op]:
        if not self.footnotes.changed:
            return ops
        self.footnotes.changed = False
        node = self.footnotes.section()
        if node != self.footnotes.node:
            self.footnotes.node = node
            ops.append(SetFootnotes(node))
        return ops

    @property
    def state(self) -> TailState:
        return self._machine.state

    @property
    def closed(self) -> bool:
        return self.state == CLOSED

    def nodes(self) -> list[Node]:
        notes = self.footnotes.node
        return self.blocks + list(self.tail_nodes) + ([notes] if notes is not None else [])

    def _ctx(self) -> tuple[str, int]:
        return self.id_prefix, len(self.blocks)

    def to_html(self) -> str:
        return to_html(self.nodes())

    # -- internals ---------------------------------------------------------
    def _normalise(self, delta: str) -> str:
        if self._cr:
            delta = "\r" + delta
            self._cr = False
        if delta.endswith("\r"):
            delta = delta[:-1]
            self._cr = True
        if "\r" in delta:
            delta = delta.replace("\r\n", "\n").replace("\r", "\n")
        if "\0" in delta:
            delta = delta.replace("\0", "\ufffd")
        return delta

    def _step(self, closing: bool, delta: str | None = None) -> list[Op]:
        ops: list[Op] = []
        if self.state in (FENCE, LEAF):
            done = (self._fence_step(ops, closing) if self.state == FENCE
                    else self._leaf_step(ops, closing))
            if not done:
                return ops
            delta = None
        left_table = 0  # the lines of a table this step left the open state with
        if self.state == OPEN:
            if not closing and self._open_step(ops):
                return ops
            self._machine.step(_E.BLOCK_ENDS)  # the general path decides, once, on the block
            if self._open is not None:
                self._left = (self._open, self._refs)
                if isinstance(self._open, OpenTable):
                    left_table = self._open.lines
            self._open = None
        tail = self._tail
        if tail[:1] in ("\n", " ", "\t") and self.state == TAIL:
            # Blank lines before the first open block carry nothing (the block
            # before them is final): drop them, so the tail starts at a block.
            lead = 0
            while True:
                nl = tail.find("\n", lead)
                if nl < 0 or tail[lead:nl].strip():
                    break
                lead = nl + 1
            if lead:
                tail = self._tail = tail[lead:]
        # Block structure and finality depend on complete lines only: without a
        # new line break there is nothing to decide, just the tail to show.
        if not closing and delta is not None and "\n" not in delta and not (
                # Text starting a line after a blank line: the blocks before it
                # may be final now (ends_before_text); the general path decides.
                len(tail) > len(delta) and tail[-len(delta) - 1] == "\n"
                and ends_before_text(tail, tail.count("\n"))):
            if self._held is not None and self._append_plain(delta, ops):
                return ops
            # A long tail without a new line (a long first line): look at its
            # block structure at geometric lengths only (amortised O(1)).
            if self.state == TAIL and len(tail) >= max(128, 2 * self._open_tried):
                self._open_tried = len(tail)
                blocks = self.parser.block_starts(tail, self._refs)
                # A list is entered when a line completes: its earlier items are
                # then the ones the general path shows parsed (OpenList reuses them).
                if (len(blocks) == 1 and blocks[0][2] not in _LIST_KINDS
                        and self._enter_open(tail, blocks[0], 0, ops)):
                    return ops
            self._show_tail(tail, ops)
            return ops
        if not closing and len(tail) < self.LONG_BLOCK and items_of_one_list(tail):
            # The block parse would find one list, open: nothing final, no
            # fence, and too short for the open-list state. Shown without it.
            self._show_tail(tail, ops)
            return ops
        complete = tail.count("\n") if not closing else tail.count("\n") + 1
        # A heading, paragraph or list that a paragraph just ended (the usual
        # end of a short list), or one list alone: the blocks are known without
        # a block parse of them all (not past the nesting cap: markers are text).
        shape = (not closing and self.parser.marks_are_blocks()
                 and (ended_by_paragraph(tail) or one_list(tail)))
        fence_lines, self._fence_lines = self._fence_lines, 0
        blocks = shape or (self._blocks_after(tail, fence_lines, "fence") if fence_lines
                           else self._blocks_after_table(tail, left_table)
                           or self._blocks_after_line(tail)
                           or (self.parser.block_starts(tail, self._refs) if tail.strip()
                               else []))
        # How many leading blocks are final.
        final = 0
        if closing:
            final = len(blocks)
        else:
            for k in range(len(blocks) - 1, 0, -1):
                if starts_for_good(tail, blocks[k], complete):
                    final = k
                    break
            if final < len(blocks) - 1 and ends_before_text(tail, blocks[-1][0]):
                final = len(blocks) - 1
            if final < len(blocks) and cannot_grow(tail, blocks[final], complete):
                final += 1
        if final:
            # The tail keeps everything from the first open block (or, when all
            # blocks are final, from the end of the last one: a partial line).
            cut_line = blocks[final][0] if final < len(blocks) else blocks[final - 1][1]
            if final < len(blocks) and title_may_follow(tail, blocks[final - 1][1], cut_line):
                cut_line = blocks[final - 1][1]
            self._finalise(tail, blocks[:final], cut_line, ops)
            tail = self._tail
        if closing:
            if tail.strip():  # reference definitions after the last block
                known = set(self._refs)
                self._collect_refs(tail)
                self._resolve_back([k for k in self._refs if k not in known], ops)
            self._tail = ""
            if self.tail_nodes:
                self.tail_nodes = ()
                ops.append(SetTail(()))
            return ops
        if self._enter_fence(tail, ops):
            self._held = None
            return ops
        if len(blocks) == final + 1 and (self._enter_leaf(tail, blocks[final], ops)
                                         or self._enter_open(tail, blocks[final], final, ops)):
            return ops
        self._show_tail(tail, ops)
        return ops

    # -- long open paragraph / table (open_block.py) -------------------------
    def _enter_open(self, tail: str, block: tuple[int, int, str], final: int,
                    ops: list[Op]) -> bool:
        start, end, kind = block
        if kind not in ("paragraph_open", "table_open", "bullet_list_open",
                        "ordered_list_open", "blockquote_open") or (final == 0 and start != 0):
            return False
        lines = tail.split("\n")
        complete, partial = lines[:-1], lines[-1]
        if end < len(complete) or not (complete or kind == "paragraph_open"):
            return False
        first = (complete or [partial])[0].lstrip(" ")
        try:
            if kind == "paragraph_open":
                # A paragraph that may still turn out to be a link reference
                # definition (its label can span lines, up to 999 characters)
                # stays on the general path until that is ruled out.
                maybe_def = first.startswith("[") and (len(tail) < 1002 or "]:" in tail[:1002])
                if maybe_def or first.startswith("|") or any(
                        line.lstrip(" ").startswith("|") or is_math_fence(line)
                        for line in complete):
                    return False
                self._open = OpenParagraph(self.parser, self._refs, complete, self._ctx())
                if not complete and end - start == 1:
                    # The block parse that called us found the partial line a
                    # top-level paragraph of its own: what the open paragraph
                    # would parse again to ask whether that line is its first.
                    self._open.window.known("", partial)
            elif kind == "blockquote_open":
                if len(tail) < self.LONG_QUOTE or not complete:
                    return False
                self._open = OpenQuote(self._inner_stream, complete)
            elif kind != "table_open":
                if len(tail) < self.LONG_BLOCK or "]:" in tail or "[^" in tail:
                    return False  # short, or definitions in it: the general path
                self._open = OpenList(self.parser, self._refs, complete, self._ctx(),
                                      self._shown_items(), self.LONG_ITEM)
            else:
                if len(complete) < 2:
                    return False
                self._open = OpenTable(self.parser, self._refs, complete[0], complete[1],
                                       complete[2:], self._ctx())
        except ValueError:
            return False
        self._open_pos = len(tail) - len(partial)
        self._machine.step(_E.BLOCK_OPENS)
        if self._open_step(ops):
            return True
        self._machine.step(_E.BLOCK_ENDS)
        self._open = None
        return False

    def _shown_items(self) -> tuple[tuple[str, Node | None], ...]:
        """What the general path showed of an open list, each as its source and
        node, for OpenList to keep the complete items from instead of parsing
        them again (it takes one only if it is exactly their source): the prefix
        parsed apart from the last item, and the whole display when it was the
        plain parse of exactly the tail then (as when the items come as whole
        lines, as the demo's "as delivered" pane feeds them)."""
        prefix = ((self._prefix_src, self._prefix_node),) if self._prefix_src else ()
        return prefix + self._exact_sources()

    def _exact_sources(self) -> tuple[tuple[str, Node], ...]:
        """The last display's one node with each source it is exactly the parse
        of: the tail it was the plain parse of, and that tail with a line break
        after it (the display grew by plain appends and the line is complete
        now), unless the node ends in code, whose text the line break joins."""
        exact, nodes = self._exact, self.tail_nodes
        if exact is None or len(nodes) != 1:
            return ()
        if _ends_in_code(nodes[0]):
            return ((exact, nodes[0]),)
        return ((exact, nodes[0]), (exact + "\n", nodes[0]))

    def open_paragraph(self) -> OpenParagraph | None:
        """The paragraph this stream's text ends in, while it streams in its
        incremental state (OpenQuote asks it whether a line is lazy)."""
        if self.state == OPEN and isinstance(self._open, OpenParagraph):
            return self._open
        return None

    def _inner_stream(self) -> MarkdownStream:
        """A stream for a block quote's content (OpenQuote): the same parser,
        one level down (its nesting cap counts the quote), the references
        known so far, and this message's ids."""
        inner = MarkdownStream(parser=self.parser.within(1), id_prefix=self.id_prefix)
        inner._refs = self._refs
        return inner

    def _open_step(self, ops: list[Op]) -> bool:
        """Show the open block from its incremental state; False when the
        general path must decide (the block ends, or something else starts)."""
        block = self._open
        assert block is not None
        tail = self._tail
        nl = tail.rfind("\n")
        if nl >= self._open_pos:
            lines = tail[self._open_pos:nl].split("\n")
            if isinstance(block, OpenList) and self._list_ends_within(block, lines, ops):
                return False
            blank = _first_blank(lines) if isinstance(block, OpenParagraph) else None
            if not block.feed_lines(lines if blank is None else lines[:blank]):
                return False
            if blank is not None:
                self._end_paragraph(ops)
                return False  # the general path goes on from the block after it
            self._open_pos = nl + 1
        partial = tail[self._open_pos:]
        if isinstance(block, OpenList) and block.ended_at(partial):
            self._end_list(block, ops)
            return False  # the general path goes on from the block after it
        nodes = block.display(partial)
        if nodes is None:
            return False
        self.renders += 1
        self._held = None
        self._shown = self._exact = None
        if nodes != self.tail_nodes:
            self.tail_nodes = nodes
            ops.append(SetTail(nodes))
        return True

    def _list_ends_within(self, block: OpenList, lines: list[str], ops: list[Op]) -> bool:
        """Whether one of the complete `lines` ends the open list (`ended_at`,
        fed up to it): the list is then final from its state, as before a
        partial line, and not from a block parse of the whole list on the
        general path (a delta holding the list's last line, a blank line and
        a short line after it, say)."""
        end = block.ending_line(lines)
        if end is None:
            return False
        if block.feed_lines(lines[:end]):  # (else the general path decides)
            self._end_list(block, ops)
        return True

    def _end_list(self, block: OpenList, ops: list[Op]) -> None:
        """The open list is over (`OpenList.ended_at`): final now, from its
        incremental state, rather than once the line after it completes. A
        long first line after a list otherwise streamed through the list's
        display, parsed whole per delta; now it streams as its own block."""
        kind = "ordered_list_open" if block.delim else "bullet_list_open"
        self._finalise_open(block, block.line_count(), kind, ops)

    def _end_paragraph(self, ops: list[Op]) -> None:
        """The open paragraph is followed by a blank line: final (nothing after a
        blank line continues a paragraph, as `cannot_grow` says), from its
        incremental state and the lines it absorbed, without the general path's
        block parse of the whole paragraph on the frame it ends."""
        block = self._open
        assert isinstance(block, OpenParagraph)
        end = block.lines  # the tail starts with the paragraph's lines
        if _first_blank(self._tail.split("\n", end + 1)[end:end + 1]) != 0:
            self._leave_open(block)
            return  # not where the paragraph was thought to end: the general path decides
        self._finalise_open(block, end, "paragraph_open", ops)

    def _leave_open(self, block: OpenParagraph | OpenTable | OpenList | OpenQuote) -> None:
        """Back to the general path; `block` is kept for `_finalise`
        (`final_from_open`) to take its final node from."""
        self._left = (block, self._refs)
        self._open = None
        self._machine.step(_E.BLOCK_ENDS)

    def _finalise_open(self, block: OpenParagraph | OpenList, end: int, kind: str,
                       ops: list[Op]) -> None:
        """`block`, the tail's first `end` lines, final now from its state."""
        self._leave_open(block)
        self._finalise(self._tail, [(0, end, kind)], end, ops)

    def _show_tail(self, tail: str, ops: list[Op]) -> None:
        leaf = _leaf_display(tail)
        if leaf is not None:
            self._show_leaf(leaf, ops)
            return
        shown = display_source(tail)
        nodes = self._render_tail(shown) if shown.strip() else ()
        self.renders += 1
        if nodes != self.tail_nodes:
            self.tail_nodes = nodes
            ops.append(SetTail(nodes))
        # (A footnote definition being written shows in the notes, not at the
        # end of the tail nodes: text appended there is not plain-appendable.)
        self._held = (None if self.footnotes.open
                      else _plain_append_state(tail, shown, nodes))
        # Kept for _finalise: a block shown from its unchanged source needs no parse.
        self._shown = shown if "]:" not in shown else None
        # The tail itself, when the display is its plain parse (nothing held back
        # or closed): a paragraph or heading that then ends is final as shown.
        # Trailing spaces held back count as nothing for a lone paragraph or
        # heading, nor where plain words may follow (`_held`: the text ends in
        # a paragraph's plain text, outside code): a paragraph's parse drops
        # them at its end.
        self._exact = tail if self._shown is not None and (shown == tail or (
            (self._held is not None or (len(nodes) == 1 and not isinstance(nodes[0], str)
                                        and nodes[0][0] in _STRIPPED))
            and shown == tail.rstrip(" "))) else None

    def _show_leaf(self, node: Node, ops: list[Op]) -> None:
        """An open indented code block or display formula: shown as its code or
        source, without a parse; its final node comes from a parse (nothing
        here is reused)."""
        if (node,) != self.tail_nodes:
            self.tail_nodes = (node,)
            ops.append(SetTail(self.tail_nodes))
        self._held = self._shown = self._exact = None

    def _render_tail(self, shown: str) -> tuple[Node, ...]:
        """The open tail's nodes. An open list or table is parsed as its earlier
        items / rows (cached: parsed once per new item) plus its last item /
        row parsed alone, and the two are joined, so a frame costs the last
        item, not the whole list. Whenever joining could differ from one parse
        (a list turning loose), the whole block is parsed."""
        split = _split_open_block(shown)
        if split is not None and "]:" not in split[0]:
            # (A definition in the earlier items: the last one, parsed alone,
            # would not know it. Parsed whole, as the open-list state does.)
            prefix, rest, kind = split
            if self._prefix_src != prefix:
                head = self._joined_prefix(prefix, kind)
                if head is None:
                    nodes = self.parser.render(prefix, self._refs, self._ctx())[0]
                    head = nodes[0] if len(nodes) == 1 else None
                self._prefix_src, self._prefix_node = prefix, head
            head = self._prefix_node
            if head is not None and head[0] in kind:
                rest_nodes = self.parser.render(rest, self._refs, self._ctx())[0]
                joined = _join(head, rest_nodes, blank_between=ends_with_blank_line(prefix))
                if joined is not None:
                    self._rest_nodes = rest_nodes
                    # What this item / row adds to the prefix once the next one starts.
                    self._grown = rest if kind != ("table",) else rest.split("\n", 2)[2]
                    return joined
        nodes, _refs, self.footnotes.open, _used = self.parser.render_all(
            shown, self._refs, self._ctx())
        return tuple(nodes)

    def _joined_prefix(self, prefix: str, kind: tuple[str, ...]) -> Node | None:
        """The node of an open list's earlier items (a table's header and
        earlier rows) `prefix`, from what was shown when it extends the
        previous prefix: the item last parsed alone joined to it, or the
        display itself when the item grew by plain appends, or the items
        added since parsed alone and joined; None: parse it whole.
        (_join refuses a join that one parse could give otherwise.)"""
        old, old_head = self._prefix_src, self._prefix_node
        if old_head is not None and prefix == old + self._grown:
            # The previous last item is complete now: join what was shown.
            joined = _join(old_head, self._rest_nodes, blank_between=ends_with_blank_line(old))
            if joined is not None and len(joined) == 1:
                return joined[0]
        for source, node in self._exact_sources():
            if source == prefix:
                # The display was the plain parse of exactly these items.
                return node
        if (old_head is not None and old and prefix.startswith(old)
                and "[^" not in prefix[len(old):]):
            # The last item grew by more than plain words since it was parsed
            # (or several lines came at once): parse what was added, not all
            # (not a footnote reference: alone, it would take a first one's id).
            added = prefix[len(old):]
            if kind == ("table",):  # rows are parsed under their header
                added = "\n".join(prefix.split("\n", 2)[:2]) + "\n" + added
            more = self.parser.render(added, self._refs, self._ctx())[0]
            joined = _join(old_head, more, blank_between=ends_with_blank_line(old))
            if joined is not None and len(joined) == 1:
                return joined[0]
        return None

    def _append_plain(self, delta: str, ops: list[Op]) -> bool:
        """Plain words appended to plain text: grow the last text node, no parse.

        Valid while `_held` is set (see `_plain_append_state`) and the delta has
        only letters, digits, spaces and `,.;?`: such characters open and
        close nothing, so the parse of the longer source is the old one with
        the text appended. A possible bare URL or character reference goes the
        full way (`may_take_plain`).
        """
        if self._held is None or not _PLAIN.fullmatch(delta):
            return False
        text = self._held + delta
        visible = text.rstrip(" ")
        if visible:
            if may_take_plain(self._tail, delta):
                return False
            self.tail_nodes = self.tail_nodes[:-1] + (_grow_last(self.tail_nodes[-1], visible),)
            ops.append(SetTail(self.tail_nodes))
        self._held = text[len(visible):]
        self._shown = None
        if self._exact is not None:
            self._exact = self._tail  # plain text appended: still the tail's plain parse
        self.plain_appends += 1
        return True

    def _finalise(self, tail: str, blocks: list[tuple[int, int, str]], cut_line: int,
                  ops: list[Op]) -> None:
        lines = tail.split("\n")
        known = set(self._refs)
        starts = [b[0] for b in blocks] + [cut_line]
        if starts[0] > 0:  # reference definitions before the first block
            self._collect_refs("\n".join(lines[: starts[0]]))
        shown_prev, self._shown = self._shown, None
        exact_prev, self._exact = self._exact, None
        closed_fence, self._closed_fence = self._closed_fence, None
        left, self._left = self._left, None
        # Several blocks ending at once, after a display that was the plain parse
        # of the previous tail: a block with the same lines and place in that
        # parse keeps its node (one block-level parse instead of full renders).
        old_nodes, old_map, old_lines = self.tail_nodes, None, None
        if (exact_prev is not None and len(blocks) > 1 and "]:" not in exact_prev
                and "[^" not in exact_prev):
            old_map = self.parser.block_starts(exact_prev, self._refs)
            old_lines = exact_prev.split("\n")
            if len(old_map) != len(old_nodes):
                old_map = None
        for index, (start, end, kind) in enumerate(blocks):
            src = "\n".join(lines[start:end]) + "\n"
            if index == 0 and start == 0 and kind == "fence" and closed_fence is not None:
                # The fast path showed this fence from its own lines, highlighted
                # line by line: that node is final (no line is tokenized again).
                nodes = [closed_fence]
            elif (index == 0 and start == 0 and left is not None and left[1] is self._refs
                  and "[^" not in src
                  and (done := final_from_open(left[0], kind, lines[start:end])) is not None):
                # Rendered piecewise while open, exactly as one parse would.
                nodes = [done]
            elif (old_map is not None and old_lines is not None and index < len(old_map)
                  and old_map[index] == (start, end, kind) and kind != "footnote_def"
                  and old_lines[start:end] == lines[start:end]
                  # Its last line was partial there: code in it lacked its newline.
                  and (end < len(old_lines) or not _ends_in_code(old_nodes[index]))):
                nodes = [old_nodes[index]]
            elif (index == 0 and start == 0 and kind in _SHOWN_FINAL
                  and exact_prev is not None and len(self.tail_nodes) == 1
                  and "[^" not in src and exact_prev.rstrip() == src.rstrip()
                  and not _ends_in_code(self.tail_nodes[0])):
                # Shown as the plain parse of this very text (its line break and
                # the next block came in one delta; a list or table whose last
                # line grew by plain appends): that render is final.
                nodes = [self.tail_nodes[0]]
            elif index == 0 and start == 0 and shown_prev is not None and self.tail_nodes and (
                    shown_prev == src or (kind in _ENDS_AT_BLANK and (
                        shown_prev.startswith(src + "\n")
                        or (src.endswith("\n\n") and shown_prev.startswith(src))))
            ) and "[^" not in src:
                # The last display showed this block from this very source, alone or,
                # for a block that a blank line ends, followed by one (so nothing
                # after it changed it), with no reference definitions anywhere: that
                # render is final. Not a list: what the display showed after the
                # blank line is not what came (an opener held back at a line's
                # start: "[2. Install" shown as "2. Install"), and there an item
                # would have continued the list.
                nodes = [self.tail_nodes[0]]
            elif (index == 0 and start == 0 and kind in _SPLIT_TAGS and "]:" not in src
                  and "[^" not in src and (joined := self._joined_prefix(
                      src, _SPLIT_TAGS[kind])) is not None and joined[0] in _SPLIT_TAGS[kind]):
                # A list or table shown as its earlier items and its last one:
                # the items added since are parsed, not the whole block (no
                # definitions in it: a parse would collect them).
                nodes = [joined]
            else:
                nodes, self._refs, notes, used = self.parser.render_all(
                    src, self._refs, self._ctx())
                self.footnotes.final(notes, used, len(self.blocks))
            nxt = starts[index + 1]
            if end < nxt:
                self._collect_refs("\n".join(lines[end:nxt]))
            if len(nodes) == 1 and "[" in src and "]" in src:
                self._bracketed.append((len(self.blocks), src, _fold(src)))
            for node in nodes:
                self.blocks.append(node)
                ops.append(FinalBlock(node))
                if self.tail_nodes:
                    self.tail_nodes = self.tail_nodes[1:]
        # Blank lines between top-level blocks carry nothing: drop them, so
        # the tail starts at its block (the fenced-code path looks there).
        while cut_line < len(lines) - 1 and not lines[cut_line].strip():
            cut_line += 1
        self._tail = "\n".join(lines[cut_line:])
        self._open_tried = 0
        # A list cached as the tail's first block is not the tail's any more
        # (and its block index, hence its footnote ids, changed).
        self._prefix_src, self._prefix_node = "", None
        if len(self._refs) != len(known):
            self._resolve_back([k for k in self._refs if k not in known], ops)

    def _resolve_back(self, labels: list[str], ops: list[Op]) -> None:
        """Re-render final blocks that mention a label defined after them.

        CommonMark lets a reference definition come after its use. This is the
        one case where a final block changes: only blocks whose source contains
        the new label, only when a definition arrives (rare in model output).
        """
        folded = [("^" + label[len(FOOTNOTE_KEY):]) if label.startswith(FOOTNOTE_KEY)
                  else _fold(label) for label in labels]
        for index, src, fsrc in self._bracketed:
            if any(label in fsrc for label in folded):
                nodes, _refs, _notes, used = self.parser.render_all(
                    src, self._refs, (self.id_prefix, index))
                self.footnotes.final([], used, index)
                if len(nodes) == 1 and nodes[0] != self.blocks[index]:
                    self.blocks[index] = nodes[0]
                    ops.append(UpdateBlock(index, nodes[0]))

    def _collect_refs(self, src: str) -> None:
        if src.strip():
            self._refs = self.parser.render(src, self._refs)[1]

    # -- fenced code fast path ---------------------------------------------
    def _enter_fence(self, tail: str, ops: list[Op]) -> bool:
        first, nl, _rest = tail.partition("\n")
        if not nl:
            return False
        run = opening_run(first)
        if run is None:
            return False
        nodes = self.parser.render(first, self._refs, self._ctx())[0]
        if len(nodes) != 1 or isinstance(nodes[0], str) or nodes[0][0] != "pre":
            return False
        self._machine.step(_E.FENCE_OPENS)
        self._fence = OpenFence(run, nodes[0][2][0][1], len(first) + 1)
        self.tail_nodes = (self._fence.node(),)
        self._shown = self._exact = None
        ops.append(SetTail(self.tail_nodes))
        self._fence_step(ops, closing=False)
        return True

    def _blocks_after_table(self, tail: str, lines: int) -> list[tuple[int, int, str]] | None:
        """`block_starts` of a tail that starts with the `lines` lines of a table
        the open state just left (its header, delimiter row and rows, each
        taken as markdown-it takes it) when a blank line follows them: a blank
        line ends a table whatever comes next, so only what follows is parsed
        (md_32k: a table's rows, the blank line and the next block's first
        letters took a parse of up to ten lines, 25 times). None otherwise."""
        if not lines or not _blank_line_at(tail, lines):
            return None
        return self._blocks_after(tail, lines, "table_open")

    def _blocks_after_line(self, tail: str) -> list[tuple[int, int, str]] | None:
        """`block_starts` of a tail whose first line is a paragraph, heading or
        block quote by its start alone (`Parser.line_kind`) and whose second is
        blank: such a block ends at the blank line whatever follows (none of
        them runs across one), so only what follows is parsed (md_32k: a
        quote's line, a blank line and the next heading's first letters took a
        block parse of all three, 22 times). None: the tail is not so."""
        if not _blank_line_at(tail, 1):
            return None
        kind = self.parser.line_kind(tail[:tail.index("\n")])
        if kind not in _ENDS_AT_BLANK:
            return None
        return self._blocks_after(tail, 1, kind)

    def _blocks_after(self, tail: str, lines: int, kind: str) -> list[tuple[int, int, str]]:
        """`block_starts` of a tail whose first `lines` lines are one block of
        `kind` that ends there whatever follows (a fence that closed, a line
        that blank lines end): that block, then the blocks of what follows
        parsed alone. The block parse starts afresh after such a block, so its
        lines need not be parsed again (md_32k: a closed fence's code and the
        blank line after it took a parse of up to twelve lines once the next
        block began)."""
        cut = 0
        for _ in range(lines):
            cut = tail.index("\n", cut) + 1
        skipped = lines
        while True:  # blank lines start no block: the next line alone is often all
            nl = tail.find("\n", cut)
            if nl < 0 or tail[cut:nl].strip(" \t"):
                break
            cut, skipped = nl + 1, skipped + 1
        rest = tail[cut:]
        # Only spaces, tabs and breaks are blank to the block parse (not U+00A0).
        after = self.parser.block_starts(rest, self._refs) if rest.strip(" \t\n") else []
        return [(0, lines, kind), *((s + skipped, e + skipped, k) for s, e, k in after)]

    def _fence_step(self, ops: list[Op], closing: bool) -> bool:
        """Append new code text; True when the fence closed (or the stream did)."""
        fence = self._fence
        assert fence is not None
        if closing:
            self._machine.step(_E.FENCE_ENDS)  # the closing render parses the whole block
            self._fence = None
            return True
        text = fence.step(self._tail)
        if text:
            self.tail_nodes = (fence.node(),)
            # Plain code grows its one text node; highlighted code is patched.
            ops.append(AppendCode(text, self.tail_nodes[0]) if fence.hl is None
                       else SetTail(self.tail_nodes))
        if fence.closed:
            self._machine.step(_E.FENCE_ENDS)
            self._fence = None
            # Shown from the block's own lines: its final node (see _finalise).
            self._closed_fence = self.tail_nodes[0]
            self._fence_lines = self._tail.count("\n", 0, fence.line_start) + 1
            return True
        return False


    # -- indented code and display formula fast path ---------------------
    def _enter_leaf(self, tail: str, block: tuple[int, int, str], ops: list[Op]) -> bool:
        """The tail is one open indented code block or display formula: from now
        on its lines are read once each instead of the whole block parsed per line."""
        leaf: OpenIndentedCode | OpenMathSource | None = (
            OpenIndentedCode.read(tail) if block[2] == "code_block"
            else OpenMathSource.read(tail) if block[2] == "math_block" else None)
        if leaf is None:
            return False
        self._machine.step(_E.LEAF_OPENS)
        self._leaf = leaf
        self._show_leaf(leaf.node(), ops)
        return True

    def _leaf_step(self, ops: list[Op], closing: bool) -> bool:
        """Show the new lines; True when the block is left to the general path:
        a line it does not take arrived, or the stream closed."""
        leaf = self._leaf
        assert leaf is not None
        changed = not closing and leaf.step(self._tail)
        if closing or leaf.left:
            self._machine.step(_E.LEAF_ENDS)  # the general path reads the tail whole, once
            self._leaf = None
            return True
        if changed:
            # One text node that grows at its end or just before its last line
            # break: the view appends or inserts there (markdown_dom `_grow`).
            self.tail_nodes = (leaf.node(),)
            ops.append(SetTail(self.tail_nodes))
        return False


def _leaf_display(tail: str) -> Node | None:
    """The node an open tail that is one indented code block or open display
    formula shows, or None."""
    leaf = OpenIndentedCode.read(tail) or OpenMathSource.read(tail)
    return None if leaf is None else leaf.node()


def render_html(text: str, *, allow_images: bool = False, autolink: bool = True,
                id_prefix: str = "") -> str:
    """One-shot render: identical to feeding `text` whole and closing."""
    stream = MarkdownStream(allow_images=allow_images, autolink=autolink, id_prefix=id_prefix)
    stream.feed(text)
    stream.close()
    return stream.to_html()
