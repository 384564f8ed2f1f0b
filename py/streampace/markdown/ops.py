"""The operations a `MarkdownStream` emits for a renderer (stream.py): each
says what changed in the document of final blocks, open tail and footnotes."""

from __future__ import annotations

from dataclasses import dataclass

from streampace.markdown.tree import Node

__all__ = ["AppendCode", "FinalBlock", "Op", "SetFootnotes", "SetTail", "UpdateBlock"]


@dataclass(frozen=True, slots=True)
class FinalBlock:
    """Append `node` as a final block; it replaces the first node of the tail
    (a renderer keeps that element and patches it: usually nothing changes)."""

    node: Node


@dataclass(frozen=True, slots=True)
class SetTail:
    """The open tail is now `nodes` (a renderer patches what differs)."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class AppendCode:
    """Append `text` to the code element of the open tail's (only) code block;
    `node` is that block afterwards."""

    text: str
    node: Node


@dataclass(frozen=True, slots=True)
class UpdateBlock:
    """Final block `index` is now `node`: only when a link reference defined
    later resolves a link in it (see `MarkdownStream._resolve_back`)."""

    index: int
    node: Node


@dataclass(frozen=True, slots=True)
class SetFootnotes:
    """The footnotes section (after the tail) is now `node` (None: none)."""

    node: Node | None


Op = FinalBlock | SetTail | AppendCode | UpdateBlock | SetFootnotes
