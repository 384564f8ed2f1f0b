"""`MarkdownStream`'s open tail: which path shows it, every move in one table.

The general path (`TAIL`) re-renders the open tail from `tail.display_source`.
The other states show one kind of open block from what they read of its new
lines, without parsing it whole per delta, and hand it back to the general path
at a line they do not take.
"""

from __future__ import annotations

from enum import Enum, StrEnum

from streampace.lifecycle import table

__all__ = ["TAIL_TABLE", "TailEvent", "TailState"]


class TailState(StrEnum):
    TAIL = "tail"      # re-rendered from display_source on each change
    FENCE = "fence"    # a top-level fenced code block: appended to, not re-parsed (fence.py)
    LEAF = "leaf"      # a top-level indented code block or open display formula, the same
    OPEN = "open"      # a long top-level paragraph, table, list or quote: open_block.py
    CLOSED = "closed"  # close() was called: everything is final


class TailEvent(Enum):
    FENCE_OPENS = "fence_opens"
    FENCE_ENDS = "fence_ends"
    LEAF_OPENS = "leaf_opens"
    LEAF_ENDS = "leaf_ends"
    BLOCK_OPENS = "block_opens"
    BLOCK_ENDS = "block_ends"
    CLOSE = "close"


TAIL_TABLE = table(TailState, TailEvent, """
TAIL    FENCE_OPENS  FENCE   a fenced code block's opening line is complete: its lines are appended
FENCE   FENCE_ENDS   TAIL    its closing fence line, or the stream's end: the general path renders
  it once
TAIL    LEAF_OPENS   LEAF    the tail is one open indented code block or display formula
LEAF    LEAF_ENDS    TAIL    a line it does not take (its end, a tab), or the stream's end
TAIL    BLOCK_OPENS  OPEN    a long paragraph, table, list or quote: shown from its
  incremental state
OPEN    BLOCK_ENDS   TAIL    it ended, or a line its state does not take: the general path decides
TAIL    BLOCK_ENDS   TAIL    its state already ended it (final from that state): nothing more
TAIL    CLOSE        CLOSED  close(): the tail is rendered whole, once, and everything is final
""")
