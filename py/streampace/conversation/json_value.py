"""JSON values from outside, measured without recursion.

An event's values (state, patch values, message contents) come from an
upstream, an agent function or a server: they may be nested thousands of
levels deep, hold millions of nodes, contain lone surrogates (``"\\ud83d"``
decodes to one) or, from an agent function, things that are not JSON at all.
``measure`` walks a value with an explicit stack and stops as soon as a bound
is passed, so its work is at most ``max_nodes`` steps whatever it is given,
even a cyclic structure.

The size is an estimate of the value's compact JSON in characters (strings
count their length plus quotes, escapes are not counted; numbers by their
digits): good enough to bound memory and work, and computed without
serialising anything.
"""

from __future__ import annotations

import re
from math import isfinite
from typing import Any, NamedTuple

__all__ = ["JsonValueError", "Measure", "copy_value", "measure", "scalar_size"]

# A lone surrogate anywhere in a str: one character class, no backtracking.
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonValueError(ValueError):
    """A value that is not JSON within bounds.

    ``reason``: ``too_deep``, ``too_big`` (estimated size), ``too_many_nodes``,
    ``not_json`` (a type JSON has no form for, or a non-string key) or
    ``lone_surrogate``; ``path`` names where, as far as the walk knows it.
    """

    def __init__(self, reason: str, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.reason = reason
        self.path = path


class Measure(NamedTuple):
    size: int  # estimated characters of compact JSON
    nodes: int  # values, containers included (a scalar is 1)
    depth: int  # containers on the deepest path (a scalar is 0, [] is 1)


def scalar_size(value: Any) -> int | None:
    """Estimated JSON size of a scalar; None if ``value`` is a container or not JSON."""
    if isinstance(value, str):
        return len(value) + 2
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int):
        # Digits from the bit length: str() of a huge int is itself costly (and
        # refused past sys.int_max_str_digits).
        return (value.bit_length() * 77 >> 8) + 2
    if isinstance(value, float):
        return 24 if isfinite(value) else None  # NaN and the infinities are not JSON
    return None


def _surrogate_at(text: str) -> int:
    """Index of the first lone surrogate in ``text``, -1 if none."""
    if text.isascii():
        return -1
    m = _SURROGATE.search(text)
    return -1 if m is None else m.start()


def _surrogate_error(at: int, where: str) -> JsonValueError:
    return JsonValueError("lone_surrogate", f"contains a lone surrogate at index {at}", where)


# Where a container sits, built only when an error names it: (parent trail, key),
# None at the value itself.  Paths are not built per container, since keys may
# be megabytes long and a path repeats its parents' keys.
_Trail = tuple[Any, Any] | None


def _path(base: str, trail: _Trail, key: Any = None) -> str:
    keys = [] if key is None else [key]
    while trail is not None:
        trail, k = trail
        keys.append(k)
    out = [base]
    for k in reversed(keys):
        if isinstance(k, int):
            out.append(f"[{k}]")
        else:
            out.append("." + (k if len(k) <= 40 else k[:40] + "..."))
    return "".join(out)


def measure(value: Any, *, max_size: int, max_nodes: int, max_depth: int,
            path: str = "") -> Measure:
    """Size, nodes and depth of ``value``; JsonValueError past any bound.

    ``max_depth`` bounds nesting counted from ``value`` itself (1 for a
    container); ``path`` prefixes error messages (and is extended per
    container only when given).
    """
    return _walk(value, max_size, max_nodes, max_depth, path, False)[1]


def copy_value(value: Any, *, max_size: int, max_nodes: int, max_depth: int,
               path: str = "") -> tuple[Any, Measure]:
    """A deep copy of ``value`` and its measure, within the same bounds as ``measure``
    (``copy.deepcopy`` recurses once per level)."""
    return _walk(value, max_size, max_nodes, max_depth, path, True)


def _walk(value: Any, max_size: int, max_nodes: int, max_depth: int, path: str,
          copy: bool) -> tuple[Any, Measure]:
    size = scalar_size(value)
    if size is not None:
        if isinstance(value, str) and (at := _surrogate_at(value)) >= 0:
            raise _surrogate_error(at, path)
        if size > max_size:
            raise JsonValueError("too_big", f"larger than {max_size} characters", path)
        return value, Measure(size, 1, 0)
    if not isinstance(value, (dict, list)):
        raise JsonValueError("not_json", f"{type(value).__name__} is not a JSON value", path)
    if max_depth < 1:
        raise JsonValueError("too_deep", f"nested deeper than {max_depth} levels", path)
    size = 0
    nodes = 0
    deepest = 1
    root: Any = None
    # (container, its depth, its trail, the copy's parent, key in that parent)
    stack: list[tuple[Any, int, _Trail, Any, Any]] = [(value, 1, None, None, None)]
    push = stack.append
    while stack:
        node, depth, trail, parent, slot = stack.pop()
        is_dict = type(node) is dict or isinstance(node, dict)
        nodes += len(node) + 1
        size += len(node) + 2  # brackets and separators
        if nodes > max_nodes:
            raise JsonValueError("too_many_nodes", f"more than {max_nodes} values",
                                 _path(path, trail))
        twin: Any = None
        if copy:
            twin = {} if is_dict else [None] * len(node)
            if parent is None:
                root = twin
            else:
                parent[slot] = twin
        for key, child in (node.items() if is_dict else enumerate(node)):
            if is_dict:
                if type(key) is not str and not isinstance(key, str):
                    raise JsonValueError("not_json", f"object key {_brief_key(key)} is not a "
                                         "string", _path(path, trail))
                if not key.isascii() and (at := _surrogate_at(key)) >= 0:
                    raise _surrogate_error(at, _path(path, trail) + " (a key)")
                size += len(key) + 3  # quotes and colon
            kind = type(child)
            # Exact types first (all json.loads makes); subclasses take the slow path.
            if kind is str:
                size += len(child) + 2
                if not child.isascii() and (at := _surrogate_at(child)) >= 0:
                    raise _surrogate_error(at, _path(path, trail, key))
            elif kind is int:
                size += (child.bit_length() * 77 >> 8) + 2
            elif kind is float:
                if not isfinite(child):
                    raise JsonValueError("not_json", f"{child!r} is not a JSON number",
                                         _path(path, trail, key))
                size += 24
            elif kind is bool or child is None:
                size += 5 if child is False else 4
            elif kind is dict or kind is list or isinstance(child, (dict, list)):
                if depth >= max_depth:
                    raise JsonValueError("too_deep", f"nested deeper than {max_depth} levels",
                                         _path(path, trail, key))
                nodes -= 1  # counted again when popped
                if copy and is_dict:
                    twin[key] = None  # keeps the member's place; filled when popped
                push((child, depth + 1, (trail, key), twin, key))
                if depth >= deepest:
                    deepest = depth + 1
                continue
            else:
                child_size = scalar_size(child)
                if child_size is None:
                    raise JsonValueError(
                        "not_json", f"{type(child).__name__} is not a JSON value",
                        _path(path, trail, key))
                if isinstance(child, str) and (at := _surrogate_at(child)) >= 0:
                    raise _surrogate_error(at, _path(path, trail, key))
                size += child_size
            if copy:
                twin[key] = child
        if size > max_size:
            raise JsonValueError("too_big", f"larger than {max_size} characters",
                                 _path(path, trail))
    return (root if copy else value), Measure(size, nodes, deepest)


def _brief_key(key: Any) -> str:
    text = repr(key) if isinstance(key, (int, float, bool)) or key is None else type(key).__name__
    return text[:40]
