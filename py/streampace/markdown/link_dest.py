"""Where an inline link's `(destination "title")` stands, read as markdown-it reads it.

The open tail's completion (completion.py) closes an unfinished link with the
`)` it is waiting for. That is right only while what follows `](` can still be
an inline link's destination and title: after `[a](/x y` (a blank, then no
title) or `[a](/x "t" z`, markdown-it reads no link, and the `)` appended
would show as text that never arrived. This machine reads the characters
after `](` as markdown-it's link rule does (its destination and title
helpers) and says when the link is closed, when it can no longer be one
(the text is literal, scanned as plain text from that character on), and,
at the text's end, what closes it.

States are `Dest`; the table `_MOVES` holds every transition, by state and
character class; `scan` jumps over the characters that leave a state where it
is (`_STOPS`), so a destination costs a search, not a call per character.
A bare destination may nest parentheses: its depth is
counted beside the state (a `)` inside them only unnests, a blank inside
them ends the link), as markdown-it counts its level.
"""

from __future__ import annotations

import re
from enum import Enum

__all__ = ["Dest", "closing_suffix", "scan"]

MAX_NESTING = 32  # markdown-it's limit on a bare destination's parentheses


class Dest(Enum):
    BEFORE = "before"            # after `(`: blanks so far
    BARE = "bare"                # a destination without `<`
    POINTY = "pointy"            # a destination in `<` `>`
    AFTER = "after"              # right after the destination: no blank yet
    SPACED = "spaced"            # after the destination and a blank: a title may start
    TITLE_DOUBLE = "title-double"  # in a title "..."
    TITLE_SINGLE = "title-single"  # in a title '...'
    TITLE_PAREN = "title-paren"    # in a title (...)
    AFTER_TITLE = "after-title"  # after the title: blanks and `)` only
    CLOSED = "closed"            # the link's `)`: an inline link
    INVALID = "invalid"          # no inline link: literal text from here


_CLASS = {" ": "blank", "\t": "blank", "\n": "newline", "\\": "escape", "(": "(", ")": ")",
          "<": "<", ">": ">", '"': '"', "'": "'"}

_D = Dest
# Per state: the next state for a character class; "*" for every other class.
_MOVES: dict[Dest, dict[str, Dest]] = {
    _D.BEFORE: {"blank": _D.BEFORE, "newline": _D.BEFORE, "<": _D.POINTY, ")": _D.CLOSED,
                "control": _D.INVALID, "*": _D.BARE},
    # (Nested: `)` unnests and stays BARE, a blank is INVALID; see _step.)
    _D.BARE: {"blank": _D.SPACED, "newline": _D.SPACED, ")": _D.CLOSED,
              "control": _D.INVALID, "*": _D.BARE},
    _D.POINTY: {">": _D.AFTER, "<": _D.INVALID, "newline": _D.INVALID, "*": _D.POINTY},
    _D.AFTER: {"blank": _D.SPACED, "newline": _D.SPACED, ")": _D.CLOSED, "*": _D.INVALID},
    _D.SPACED: {"blank": _D.SPACED, "newline": _D.SPACED, ")": _D.CLOSED,
                '"': _D.TITLE_DOUBLE, "'": _D.TITLE_SINGLE, "(": _D.TITLE_PAREN,
                "*": _D.INVALID},
    _D.TITLE_DOUBLE: {'"': _D.AFTER_TITLE, "*": _D.TITLE_DOUBLE},
    _D.TITLE_SINGLE: {"'": _D.AFTER_TITLE, "*": _D.TITLE_SINGLE},
    _D.TITLE_PAREN: {")": _D.AFTER_TITLE, "(": _D.INVALID, "*": _D.TITLE_PAREN},
    _D.AFTER_TITLE: {"blank": _D.AFTER_TITLE, "newline": _D.AFTER_TITLE, ")": _D.CLOSED,
                     "*": _D.INVALID},
}

# What closes the link at the text's end, by state (BARE: one `)` per open
# parenthesis, closing_suffix).
_SUFFIX = {_D.BEFORE: ")", _D.POINTY: ">)", _D.AFTER: ")", _D.SPACED: ")",
           _D.TITLE_DOUBLE: '")', _D.TITLE_SINGLE: "')", _D.TITLE_PAREN: "))",
           _D.AFTER_TITLE: ")"}

# A backslash escapes the next character where markdown-it's helpers unescape.
_ESCAPING = frozenset((_D.BEFORE, _D.BARE, _D.POINTY, _D.TITLE_DOUBLE, _D.TITLE_SINGLE,
                       _D.TITLE_PAREN))


# Per state, the characters that may move it (one character class each: a
# search cannot backtrack); a run of others leaves it where it is.
_STOPS = {state: re.compile(pattern) for state, pattern in (
    (_D.BEFORE, r"[^ \t\n]"), (_D.BARE, r"[ \t\n\\()\x00-\x1f\x7f]"),
    (_D.POINTY, r"[\\<>\n]"), (_D.AFTER, r"[\s\S]"), (_D.SPACED, r"[^ \t\n]"),
    (_D.TITLE_DOUBLE, r'[\\"]'), (_D.TITLE_SINGLE, r"[\\']"), (_D.TITLE_PAREN, r"[\\()]"),
    (_D.AFTER_TITLE, r"[^ \t\n]"))}


def _class(c: str) -> str:
    cls = _CLASS.get(c)
    if cls is not None:
        return cls
    return "control" if c < " " or c == "\x7f" else "other"


def scan(state: Dest, depth: int, text: str, i: int) -> tuple[Dest, int, int]:
    """Read `text` from `i` on: the state, the bare destination's depth (1:
    only the link's own parenthesis open) and where the reading stopped --
    at the link's end (CLOSED: after its `)`; INVALID: at the character that
    ends it, to be read again as plain text) or at the text's end (past it
    when a backslash comes last)."""
    n = len(text)
    while i < n and state is not _D.CLOSED and state is not _D.INVALID:
        m = _STOPS[state].search(text, i)
        if m is None:
            return state, depth, n
        state, depth, i = _step(state, depth, text, m.start())
    return state, depth, i


def _step(state: Dest, depth: int, text: str, i: int) -> tuple[Dest, int, int]:
    """`scan`'s move on the character at `i`."""
    c = text[i]
    cls = _class(c)
    if cls == "escape" and state in _ESCAPING:
        # A backslash before a space ends a bare destination where it stands.
        if state in (_D.BEFORE, _D.BARE) and text[i + 1:i + 2] == " ":
            return _D.INVALID, depth, i
        return (_D.BARE if state is _D.BEFORE else state), depth, i + 2
    if state is _D.BARE or (state is _D.BEFORE and cls == "("):
        if cls == "(":
            depth += 1
            return (_D.BARE if depth <= MAX_NESTING else _D.INVALID), depth, i + 1
        if depth > 1 and cls == ")":
            return _D.BARE, depth - 1, i + 1
        if depth > 1 and cls in ("blank", "newline"):
            return _D.INVALID, depth, i
    moves = _MOVES[state]
    nxt = moves.get(cls) or moves["*"]
    # An invalid character is read again as plain text.
    return nxt, depth, (i if nxt is _D.INVALID else i + 1)


def closing_suffix(state: Dest, depth: int) -> str:
    """What closes a link whose text ends in `state`."""
    if state is _D.BARE:
        return ")" * depth
    return _SUFFIX.get(state, "")
