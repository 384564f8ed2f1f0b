"""Footnotes of one message: definitions, first references, the section node.

GFM-style: a reference `[^label]` is a superscript link to its note; the notes
are listed at the end of the message in a `section.footnotes`, in the order
their definitions appear, each with a link back to its first reference. A
reference shows its label as written (models write `[^1]`, `[^2]`…), so nothing
depends on the order references arrive in.

Ids are prefixed per message (`MarkdownStream(id_prefix=…)`; the browser view
gives each message its own) and built from the label by `parser.note_slug`
(letters, digits and `-` only), so they cannot clash with the host page or with
another message. A reference's id also carries the index of its top-level block,
which is the same whether the message is streamed or rendered at once.
"""

from __future__ import annotations

from streampace.markdown.md_rules import footnote_key
from streampace.markdown.parser import note_slug
from streampace.markdown.tree import Node

__all__ = ["Footnotes"]


class Footnotes:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.notes: dict[str, tuple[str, list[Node]]] = {}   # key -> (label, content)
        self._open: list[tuple[str, list[Node]]] = []          # definitions still streaming
        self.first_ref: dict[str, tuple[int, str]] = {}        # key -> (block, element id)
        self.node: Node | None = None
        # Whether what `section()` is made of may have changed since `node` was
        # made: most deltas touch no footnote, and building the section to compare
        # it costs per note on every delta.
        self.changed = False

    @property
    def open(self) -> list[tuple[str, list[Node]]]:
        return self._open

    @open.setter
    def open(self, notes: list[tuple[str, list[Node]]]) -> None:
        self._open = notes
        self.changed = True

    def final(self, notes: list[tuple[str, list[Node]]], used: list[tuple[str, str]],
              block: int) -> None:
        self.changed = True
        for label, content in notes:
            self.notes.setdefault(footnote_key(label), (label, content))
        for key, ref_id in used:
            seen = self.first_ref.get(key)
            if seen is None or block < seen[0]:
                self.first_ref[key] = (block, ref_id)

    def section(self) -> Node | None:
        """The section for the notes so far (None without any)."""
        items: list[Node] = []
        shown = dict(self.notes)
        for label, content in self.open:
            shown.setdefault(footnote_key(label), (label, content))
        for key, (label, content) in shown.items():
            kids = list(content)
            back = self.first_ref.get(key)
            if back is not None:
                link: Node = ("a", (("href", "#" + back[1]), ("class", "footnote-backref")),
                              ("\u21a9",))
                last = kids[-1] if kids else None
                if isinstance(last, tuple) and last[0] == "p":
                    kids[-1] = ("p", last[1], (*last[2], " ", link))
                else:
                    kids.append(link)
            items.append(("li", (("id", self.prefix + "fn-" + note_slug(label.casefold())),),
                          tuple(kids)))
        if not items:
            return None
        return ("section", (("class", "footnotes"),), (("ol", (), tuple(items)),))
