"""JSON from outside, parsed within bounds of size and depth.

``json.loads`` recurses once per nesting level: 2 KB of ``[[[[…`` raises
RecursionError in CPython, and in Pyodide a deep enough input can exhaust the
WASM stack before Python's limit is reached.  So every parser of outside JSON
(client messages, upstream events, socket batches, state) goes through
``loads``, which refuses a text over ``max_bytes`` or nested deeper than
``max_depth`` *before* ``json.loads`` sees it.

The depth scan is linear and cannot backtrack: it searches for one character
class at a time (structural characters outside strings, then the end of each
string), so its work is O(len(text)) whatever the text holds.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JsonLimitError", "loads", "depth", "DEFAULT_MAX_DEPTH"]

# Deep enough for any real AG-UI event or agent state, far below the nesting
# that costs json.loads (or the page's stack) anything.
DEFAULT_MAX_DEPTH = 64

_STRUCTURAL = re.compile(r'["\[\]{}]')
_STRING_STOP = re.compile(r'["\\]')


class JsonLimitError(ValueError):
    """The text is not JSON within bounds; ``reason`` is ``too_big``, ``too_deep``
    or ``bad_json``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def depth(text: str, limit: int) -> int:
    """The deepest nesting of arrays and objects in ``text``, counted up to
    ``limit + 1`` (the scan stops there).  Raises JsonLimitError("bad_json") on an
    unterminated string; other syntax errors are left to the parser."""
    deepest = level = 0
    at = 0
    search = _STRUCTURAL.search
    stop = _STRING_STOP.search
    while True:
        m = search(text, at)
        if m is None:
            return deepest
        ch = m.group()
        at = m.end()
        if ch == '"':
            while True:  # to the closing quote, hopping over escapes
                s = stop(text, at)
                if s is None:
                    raise JsonLimitError("bad_json", "invalid JSON (unterminated string)")
                if s.group() == "\\":
                    at = s.end() + 1
                    continue
                at = s.end()
                break
        elif ch in "[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > limit:
                    return deepest
        else:
            level -= 1


def loads(text: str | bytes, *, max_bytes: int, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """``json.loads`` for outside input: JsonLimitError instead of a huge or deep parse.

    ``bytes`` must be UTF-8 (invalid UTF-8 is ``bad_json``: it is never replaced).
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
    # A text this short cannot nest deeper than the limit: skip the scan.
    if len(text) > 2 * max_depth and depth(text, max_depth) > max_depth:
        raise JsonLimitError("too_deep", f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable within the depth bound; kept as a refusal
        raise JsonLimitError("too_deep", "JSON nested too deeply") from None
    except ValueError as exc:
        raise JsonLimitError("bad_json", f"invalid JSON ({exc})") from None
