"""What the state of a list item's open last block keeps of the item.

`item_fence.FenceTail` (an open fenced code block) and `item_leaf.ItemLeaf`
(an open indented code block or display formula) show the list's last item
from the item's blocks before that block, as one parse of the whole item
showed them, and the block as the state reads it. Both keep the same things
of that parse, here.
"""

from __future__ import annotations

from typing import Any

from streampace.markdown.tree import Node

__all__ = ["ItemEnd"]


class ItemEnd:
    """An item's blocks before its open last block, and the attributes around them."""

    def __init__(self, kids: tuple[Node, ...], li_attrs: Any, width: int, loose: bool,
                 list_attrs: Any) -> None:
        self.kids = kids  # the `li`'s blocks before the open one, as one parse showed them
        self.li_attrs = li_attrs
        self.width = width          # the item's content column
        self.loose = loose          # the outer list's looseness when that parse was made
        self.list_attrs = list_attrs  # the outer list's, as that parse showed them

    @property
    def gone(self) -> bool:
        """Whether the state may not show the item any more (for good)."""
        return False

    def li_with(self, last: Node) -> Node:
        """The item's `li` ending in `last`, the open block as the state shows it."""
        return ("li", self.li_attrs, (*self.kids, last))
