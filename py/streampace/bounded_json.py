"""JSON from outside, parsed within bounds of size, depth and value count.

``json.loads`` recurses once per nesting level: 2 KB of ``[[[[…`` raises
RecursionError in CPython, and in Pyodide a deep enough input can exhaust the
WASM stack before Python's limit is reached.  So every parser of outside JSON
(client messages, upstream events, socket batches, state) goes through
``loads``, which refuses a text over ``max_bytes``, nested deeper than
``max_depth`` or (if asked) holding more than ``max_values`` values *before*
``json.loads`` sees it.

The checks run at C speed where they can, since they see every byte of every
outside message (a hostile upstream event of 1 MiB of ``[],`` would otherwise
cost the server's loop a Python step per bracket):

1. strings are cut out: where they are few, found with ``str.find`` (escapes,
   when a string has any, by one possessive pattern that cannot backtrack);
   where they are dense, by one ``re.subn`` with a possessive pattern;
2. what is left — structure, numbers, literals — is reduced to its brackets by
   one ``bytes.translate``; values are counted there with ``bytes.count``;
3. the deepest nesting is the highest prefix sum of the brackets: a few rounds
   of removing innermost pairs (``bytes.replace``) take most real JSON to
   nothing; what is left is summed per block of 256, in detail only where a
   block could reach a new height.

Every step is linear in the text, whatever the text holds.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["JsonLimitError", "loads", "depth", "DEFAULT_MAX_DEPTH"]

# Deep enough for any real AG-UI event or agent state, far below the nesting
# that costs json.loads (or the page's stack) anything.
DEFAULT_MAX_DEPTH = 64

# The body of a string with escapes, from after its opening quote to its
# closing quote (or the end of the text): possessive, so no input makes it
# backtrack; it always matches, so a search never restarts inside a string.
_STRING_BODY = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
# A whole string, for texts dense with them; it also always matches (to the end
# of the text when the string is not closed), so a search never restarts inside
# one.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_DENSE = 32  # a quote every 32 characters or more often: strings are cut by the pattern
_OPEN, _CLOSE = 0x01, 0xFF  # +1 / -1 as signed bytes
_STEPS = bytes(_OPEN if b in b"[{" else _CLOSE if b in b"]}" else 0 for b in range(256))
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_PAIR = bytes((_OPEN, _CLOSE))
_BLOCK = 256
_ROUNDS = 8


class JsonLimitError(ValueError):
    """The text is not JSON within bounds; ``reason`` is ``too_big``, ``too_deep``
    or ``bad_json``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _skeleton(text: str, max_strings: int | None) -> str:
    """``text`` with each string replaced by ``0`` (what a parser sees outside them).

    Raises JsonLimitError ``too_big`` past ``max_strings`` strings, and (when
    strings are few) ``bad_json`` for an unterminated one; when they are many,
    an unterminated string runs to the end and the parser reports it.
    """
    if text.count('"') * _DENSE > len(text):
        # Many short strings: one C pass does the per-string work.
        skeleton, count = _STRING.subn("0", text)
        if max_strings is not None and count > max_strings:
            raise JsonLimitError("too_big", f"JSON text with more than {max_strings} values")
        return skeleton
    # Few strings, maybe long ones: jump from quote to quote with str.find.
    find = text.find
    parts: list[str] = []
    at = 0
    count = 0
    while True:
        quote = find('"', at)
        if quote < 0:
            parts.append(text[at:])
            return "".join(parts)
        parts.append(text[at:quote])
        parts.append("0")
        count += 1
        if max_strings is not None and count > max_strings:
            raise JsonLimitError("too_big", f"JSON text with more than {max_strings} values")
        end = find('"', quote + 1)
        if end < 0 or find("\\", quote + 1, end) >= 0:
            # Escapes (or no closing quote): the pattern hops over each \x pair.
            m = _STRING_BODY.match(text, quote + 1)
            end = m.end() if m is not None else quote + 1
            if end >= len(text) or text[end] != '"':
                raise JsonLimitError("bad_json", "invalid JSON (unterminated string)")
        at = end + 1


def _deepest(steps: bytes, limit: int) -> int:
    """The highest prefix sum of ``steps`` (+1 / -1 bytes): exact up to ``limit``,
    past it some value above ``limit``.  Exact for balanced brackets (valid
    JSON); for others never lower than the truth, so never too lenient."""
    # Each round removes every innermost pair ("[]" once strings are gone), which
    # lowers the highest point by exactly one for balanced brackets (at most one
    # otherwise).  Wide, shallow JSON — the usual kind — vanishes in a few rounds
    # of C; what remains is summed per block.
    rounds = 0
    while rounds < _ROUNDS and steps:
        reduced = steps.replace(_PAIR, b"")
        if len(reduced) == len(steps):
            break
        steps, rounds = reduced, rounds + 1
    if not steps:
        return rounds
    return rounds + _deepest_blocks(steps, limit - rounds)


def _deepest_blocks(steps: bytes, limit: int) -> int:
    level = deepest = 0
    view = memoryview(steps).cast("b")
    for start in range(0, len(steps), _BLOCK):
        block = steps[start:start + _BLOCK]
        opens = block.count(_OPEN)
        if level + opens > deepest:  # this block might go higher: sum it in detail
            peak = level + max(accumulate(view[start:start + _BLOCK]))
            if peak > deepest:
                deepest = peak
                if deepest > limit:
                    return deepest
        level += opens - (len(block) - opens)
    return deepest


def depth(text: str, limit: int) -> int:
    """The deepest nesting of arrays and objects in ``text``, exact up to
    ``limit`` (past it, some value above ``limit``).  Raises
    JsonLimitError("bad_json") on an unterminated string; other syntax errors
    are left to the parser (which stops at the first one, never deeper than
    the nesting counted up to there)."""
    return _deepest(_structure(_skeleton(text, None)).translate(_STEPS, _NOT_BRACKETS), limit)


def _structure(skeleton: str) -> bytes:
    # Outside strings valid JSON is ASCII; anything else is a syntax error the
    # parser will report, and dropping it here cannot hide a bracket.
    return skeleton.encode("ascii", "ignore").translate(None, b" \t\r\n")


def loads(text: str | bytes, *, max_bytes: int, max_depth: int = DEFAULT_MAX_DEPTH,
          max_values: int | None = None) -> Any:
    """``json.loads`` for outside input: JsonLimitError instead of a huge or deep parse.

    ``max_values``: refuse a text holding more values than this (strings, keys,
    numbers, literals, arrays and objects; an upper bound, counted before
    parsing), so the parse's time and memory are bounded too.  ``bytes`` must
    be UTF-8 (invalid UTF-8 is ``bad_json``: it is never replaced).
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_bytes:
            raise JsonLimitError("too_big", f"JSON text over {max_bytes} bytes")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonLimitError("bad_json", f"invalid UTF-8 at byte {exc.start}") from None
    elif len(text) > max_bytes or (
        len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes
    ):
        raise JsonLimitError("too_big", f"JSON text over {max_bytes} bytes")
    # Counted over the raw text, brackets and commas inside strings included, these
    # are upper bounds: most texts (a delta, a small event) are within the limits
    # by them alone and skip the exact count.
    opens = text.count("[") + text.count("{")
    over_depth = opens > max_depth
    over_values = max_values is not None and text.count(",") + opens + 1 > max_values
    if over_depth or over_values:
        # A key per value at most: past twice the bound, stop cutting strings out.
        structure = _structure(_skeleton(text, None if max_values is None else 2 * max_values))
        if max_values is not None:
            # Valid JSON holds commas + non-empty containers + 1 values (keys are
            # not values); for other text the parser fails anyway.
            values = (structure.count(b",") + structure.count(b"[") + structure.count(b"{") + 1
                      - structure.count(b"[]") - structure.count(b"{}"))
            if values > max_values:
                raise JsonLimitError("too_big", f"JSON text with more than {max_values} values")
        # Within the depth bound by the raw count alone when only the values were in
        # doubt: the depth is never more than the opening brackets.
        if over_depth and (_deepest(structure.translate(_STEPS, _NOT_BRACKETS), max_depth)
                           > max_depth):
            raise JsonLimitError("too_deep", f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable within the depth bound; kept as a refusal
        raise JsonLimitError("too_deep", "JSON nested too deeply") from None
    except ValueError as exc:
        raise JsonLimitError("bad_json", f"invalid JSON ({exc})") from None
