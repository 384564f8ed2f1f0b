"""RFC 6902 JSON Patch with RFC 6901 JSON Pointers, applied atomically and within bounds.

Our own small implementation because the page must stay lean: every extra
Pyodide package costs boot time, and STATE_DELTA only needs this much.

``apply_patch(doc, patch)`` never mutates ``doc``.  It copies only the
containers on the paths it changes (copy-on-write, each copied at most once
per patch) and shares every untouched subtree with ``doc``; on any error the
partial result is thrown away, so the caller's document is exactly as before
and a :class:`JsonPatchError` names the failing operation.  Callers must treat
both documents as immutable afterwards (shared subtrees).

A patch comes from outside (an upstream's STATE_DELTA, a server's batch in the
page), so its cost is bounded *while* it applies (:class:`StateLimits`): the
number of operations, the resulting document's estimated size, value count and
depth, and the work done (values visited, copied or compared, container
entries copied).  Sizes are kept incrementally: each operation measures only
the values it adds, removes or copies (``json_value``), never the whole
document, and every walk uses an explicit stack, so no input depth makes it
recurse.  Twenty-two ``copy`` operations that each copy the whole document
stop at the size bound after a few doublings, having done bounded work.
Over a bound, :class:`JsonPatchLimitError` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .json_value import JsonValueError, Measure, copy_value, measure, scalar_size

__all__ = [
    "DEFAULT_STATE_LIMITS",
    "JsonPatchError",
    "JsonPatchLimitError",
    "JsonPointerError",
    "StateLimits",
    "apply_patch",
    "apply_patch_bounded",
    "json_equal",
    "measure_document",
    "parse_pointer",
    "resolve_pointer",
]


@dataclass(frozen=True)
class StateLimits:
    """Bounds of a document that patches change (the AG-UI shared state) and of
    one patch applied to it.  The defaults are the server's and the page's."""

    max_size: int = 1 << 20  # estimated characters of the document's compact JSON
    max_nodes: int = 50_000  # values in the document (containers included)
    max_depth: int = 32  # nesting of the document (a pointer's tokens + its value's depth)
    max_ops: int = 1_000  # operations in one patch
    # Values visited, copied or compared and container entries copied by one patch:
    # twice a full document (a replace measures the old value and the new), and
    # about 50 ms of the server's time at worst (bench/attack.py).
    max_work: int = 100_000

    def __post_init__(self) -> None:
        for name in ("max_size", "max_nodes", "max_depth", "max_ops", "max_work"):
            if getattr(self, name) < 1:
                raise ValueError(f"StateLimits.{name} must be >= 1")


DEFAULT_STATE_LIMITS = StateLimits()


class JsonPatchError(ValueError):
    """The patch is malformed or cannot be applied to this document."""


class JsonPointerError(JsonPatchError):
    """A JSON Pointer is malformed or does not resolve."""


class JsonPatchLimitError(JsonPatchError):
    """Applying the patch would pass a bound of :class:`StateLimits`.

    ``limit``: ``ops``, ``size``, ``nodes``, ``depth`` or ``work``.
    """

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


def _short(text: str, limit: int = 60) -> str:
    """``text`` for an error message (pointers may be megabytes long)."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


def _brief(value: Any) -> str:
    """A value for an error message: never its whole (possibly huge or deep) repr."""
    if isinstance(value, dict):
        return f"an object of {len(value)} members"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    if isinstance(value, str):
        return _short(value, 40)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of about {(value.bit_length() * 77 >> 8) + 1} digits"
    return repr(value)


def parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 pointer into unescaped reference tokens ("" = root)."""
    if not isinstance(pointer, str):
        raise JsonPointerError(f"pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise JsonPointerError(f"pointer {_short(pointer)} must be empty or start with '/'")
    tokens = pointer[1:].split("/")
    for i, token in enumerate(tokens):
        if "~" in token:
            # Only ~0 and ~1 are escapes; decode ~1 before ~0 so "~01" -> "~1".
            rest = token.replace("~0", "").replace("~1", "")
            if "~" in rest:
                raise JsonPointerError(
                    f"pointer {_short(pointer)}: invalid escape in {_short(token)}")
            tokens[i] = token.replace("~1", "/").replace("~0", "~")
    return tokens


def _array_index(token: str, length: int, pointer: str, *, for_insert: bool) -> int:
    if token == "-":
        if for_insert:
            return length
        raise JsonPointerError(f"{_short(pointer)}: '-' (end of array) only valid for add")
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise JsonPointerError(f"{_short(pointer)}: {_short(token)} is not an array index")
    if len(token) > 18:  # beyond any list; int() of a huge digit string is itself costly
        raise JsonPointerError(f"{_short(pointer)}: index out of range (length {length})")
    index = int(token)
    limit = length if for_insert else length - 1
    if index > limit:
        raise JsonPointerError(
            f"{_short(pointer)}: index {index} out of range (length {length})")
    return index


def _resolve(document: Any, tokens: list[str], pointer: str) -> Any:
    value = document
    for token in tokens:
        if isinstance(value, dict):
            if token not in value:
                raise JsonPointerError(f"{_short(pointer)}: member {_short(token)} not found")
            value = value[token]
        elif isinstance(value, list):
            value = value[_array_index(token, len(value), pointer, for_insert=False)]
        else:
            raise JsonPointerError(
                f"{_short(pointer)}: cannot index into {type(value).__name__}")
    return value


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value ``pointer`` refers to in ``document``; JsonPointerError if none."""
    return _resolve(document, parse_pointer(pointer), pointer)


def json_equal(a: Any, b: Any) -> bool:
    """Equality by JSON's rules (RFC 6902 §4.6).

    Unlike Python's ==, a boolean is never equal to a number (True != 1);
    numbers compare by value (1 == 1.0); objects ignore member order.
    Iterative: no depth of either value makes it recurse.
    """
    return _json_equal(a, b, None)


def _json_equal(a: Any, b: Any, patcher: _Patcher | None) -> bool:
    pairs = [(a, b)]
    pop, extend = pairs.pop, pairs.extend
    while pairs:
        x, y = pop()
        if x is y:  # shared subtrees (copy-on-write) are equal without a look
            continue
        kind = type(x)
        if kind is type(y) and (kind is str or kind is int or kind is float):
            if x != y:
                return False
            continue
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            if patcher is not None:
                patcher.charge(len(x) + 1)
            extend(zip(x.values(), map(y.__getitem__, x), strict=True))
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            if patcher is not None:
                patcher.charge(len(x) + 1)
            extend(zip(x, y, strict=True))
        elif isinstance(y, (dict, list)) or not _scalar_equal(x, y):
            return False
    return True


def _scalar_equal(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x is y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return bool(x == y)
    if isinstance(x, str) or isinstance(y, str):
        return isinstance(x, str) and isinstance(y, str) and x == y
    return x is None and y is None


def measure_document(document: Any, limits: StateLimits = DEFAULT_STATE_LIMITS) -> Measure:
    """``document``'s measure; JsonPatchLimitError if it is over ``limits`` already
    (JsonPatchError if it is not JSON)."""
    try:
        return measure(document, max_size=limits.max_size, max_nodes=limits.max_nodes,
                       max_depth=limits.max_depth)
    except JsonValueError as exc:
        raise _value_error(exc, limits, "document") from None


def _value_error(exc: JsonValueError, limits: StateLimits, what: str) -> JsonPatchError:
    if exc.reason == "too_deep":
        return JsonPatchLimitError(
            "depth", f"{what} would nest deeper than {limits.max_depth} levels")
    if exc.reason == "too_big":
        return JsonPatchLimitError(
            "size", f"{what} would be larger than {limits.max_size} characters")
    if exc.reason == "too_many_nodes":
        return JsonPatchLimitError(
            "nodes", f"{what} would hold more than {limits.max_nodes} values")
    return JsonPatchError(f"{what}: {exc}")


class _Patcher:
    """One atomic application: copy-on-write along the paths it touches, the
    document's measure kept up to date, and every step of work counted."""

    def __init__(self, document: Any, measured: Measure, limits: StateLimits) -> None:
        self.root = document
        self.size = measured.size
        self.nodes = measured.nodes
        self.limits = limits
        self.work = 0
        # ids of containers created during this patch (safe to mutate in
        # place); the list keeps them alive so an id cannot be reused.
        self._fresh_ids: set[int] = set()
        self._fresh_refs: list[Any] = []

    def charge(self, steps: int) -> None:
        self.work += steps
        if self.work > self.limits.max_work:
            raise JsonPatchLimitError(
                "work", f"patch does more than {self.limits.max_work} steps of work")

    def check_totals(self) -> None:
        if self.size > self.limits.max_size:
            raise JsonPatchLimitError(
                "size", f"document would be larger than {self.limits.max_size} characters")
        if self.nodes > self.limits.max_nodes:
            raise JsonPatchLimitError(
                "nodes", f"document would hold more than {self.limits.max_nodes} values")

    def _walk(self, value: Any, depth_room: int, what: str, copy: bool,
              size_room: int | None = None, nodes_room: int | None = None
              ) -> tuple[Any, Measure]:
        """Measure (and copy) a value within the depth left at its place, the size
        and values the document may still take (the whole bounds if not given) and
        the work left; the walk's steps are charged.  A walk stops at the first
        bound it passes, before copying the rest."""
        limits = self.limits
        size_room = limits.max_size if size_room is None else size_room
        nodes_room = limits.max_nodes if nodes_room is None else nodes_room
        work_left = limits.max_work - self.work
        try:
            if copy:
                out, m = copy_value(value, max_size=size_room,
                                    max_nodes=min(nodes_room, work_left), max_depth=depth_room)
            else:
                out, m = value, measure(value, max_size=size_room,
                                        max_nodes=min(nodes_room, work_left),
                                        max_depth=depth_room)
        except JsonValueError as exc:
            if exc.reason == "too_many_nodes" and work_left < nodes_room:
                raise JsonPatchLimitError(
                    "work", f"patch does more than {limits.max_work} steps of work") from None
            raise _value_error(exc, limits, what) from None
        self.charge(m.nodes)
        return out, m

    def _new_slot(self, tokens: list[str]) -> bool:
        """Whether an add at ``tokens`` creates a member or an item (so the document
        only grows) rather than replacing a value."""
        if not tokens:
            return False
        try:
            parent = _resolve(self.root, tokens[:-1], "")
        except JsonPointerError:
            return False  # the add fails anyway, with its own error
        return isinstance(parent, list) or (isinstance(parent, dict)
                                            and tokens[-1] not in parent)

    def incoming(self, value: Any, tokens: list[str], copy: bool = True,
                 adds: bool = False) -> tuple[Any, Measure]:
        """A value about to be placed at ``tokens`` (``adds``: by add, copy or move):
        (a copy of) it, measured.  Where it only adds to the document, the walk is
        bounded by the room left, so a copy that cannot fit stops early."""
        room = self.limits.max_depth - len(tokens)
        if scalar_size(value) is None and room < 1:
            raise JsonPatchLimitError(
                "depth", f"document would nest deeper than {self.limits.max_depth} levels")
        if adds and self._new_slot(tokens):
            return self._walk(value, room, "document", copy,
                              self.limits.max_size - self.size,
                              self.limits.max_nodes - self.nodes)
        return self._walk(value, room, "value", copy)

    def outgoing(self, value: Any) -> Measure:
        """A value leaving the document: its measure, to subtract."""
        return self._walk(value, self.limits.max_depth, "removed value", False)[1]

    def _own(self, container: Any) -> Any:
        if id(container) in self._fresh_ids:
            return container
        self.charge(len(container) + 1)
        clone = dict(container) if isinstance(container, dict) else list(container)
        self._fresh_ids.add(id(clone))
        self._fresh_refs.append(clone)
        return clone

    def _parent(self, tokens: list[str], pointer: str) -> Any:
        """Owned (mutable) container holding the last token; copies the path."""
        if not isinstance(self.root, (dict, list)):
            raise JsonPointerError(
                f"{_short(pointer)}: cannot index into {type(self.root).__name__}")
        self.root = self._own(self.root)
        node = self.root
        for depth, token in enumerate(tokens[:-1]):
            if isinstance(node, dict):
                if token not in node:
                    where = "/" + "/".join(tokens[: depth + 1])
                    raise JsonPointerError(
                        f"{_short(pointer)}: path {_short(where)} does not exist")
                key: Any = token
            elif isinstance(node, list):
                key = _array_index(token, len(node), pointer, for_insert=False)
            else:
                raise JsonPointerError(
                    f"{_short(pointer)}: cannot index into {type(node).__name__}")
            child = node[key]
            if not isinstance(child, (dict, list)):
                raise JsonPointerError(
                    f"{_short(pointer)}: cannot index into {type(child).__name__} "
                    f"at {_short(token)}"
                )
            child = self._own(child)
            node[key] = child
            node = child
        return node

    def _slot(self, tokens: list[str], pointer: str, value: Any,
              m: Measure) -> tuple[Any, str] | None:
        """The container and key a value goes to; None when it became the whole
        document (path '')."""
        if not tokens:
            self.root = value
            self.size, self.nodes = m.size, m.nodes
            return None
        return self._parent(tokens, pointer), tokens[-1]

    def add(self, tokens: list[str], pointer: str, value: Any, m: Measure) -> None:
        """Place a measured value (RFC 6902 add: a member is replaced, an item inserted)."""
        slot = self._slot(tokens, pointer, value, m)
        if slot is None:
            return
        parent, last = slot
        if isinstance(parent, dict):
            if last in parent:
                self._release(parent[last])
            else:
                self.size += len(last) + 4
            parent[last] = value
        else:
            parent.insert(_array_index(last, len(parent), pointer, for_insert=True), value)
            self.size += 1
            self.charge(len(parent) >> 4)  # list.insert moves the items after it
        self._hold(m)

    def remove(self, tokens: list[str], pointer: str) -> Any:
        if not tokens:
            raise JsonPointerError("cannot remove the whole document (path '')")
        parent = self._parent(tokens, pointer)
        last = tokens[-1]
        if isinstance(parent, dict):
            if last not in parent:
                raise JsonPointerError(f"{_short(pointer)}: member {_short(last)} not found")
            value = parent.pop(last)
            self.size -= len(last) + 4
        else:
            value = parent.pop(_array_index(last, len(parent), pointer, for_insert=False))
            self.size -= 1
            self.charge(len(parent) >> 4)
        self._release(value)
        return value

    def replace(self, tokens: list[str], pointer: str, value: Any, m: Measure) -> None:
        slot = self._slot(tokens, pointer, value, m)
        if slot is None:
            return
        parent, last = slot
        if isinstance(parent, dict):
            if last not in parent:
                raise JsonPointerError(f"{_short(pointer)}: member {_short(last)} not found")
            key: Any = last
        else:
            key = _array_index(last, len(parent), pointer, for_insert=False)
        self._release(parent[key])
        parent[key] = value
        self._hold(m)

    def _release(self, value: Any) -> None:
        """A value leaves the document: its measure leaves the totals."""
        old = self.outgoing(value)
        self.size -= old.size
        self.nodes -= old.nodes

    def _hold(self, m: Measure) -> None:
        self.size += m.size
        self.nodes += m.nodes


_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})


def _member(op: dict[str, Any], name: str, index: int) -> Any:
    if name not in op:
        raise JsonPatchError(f"operation [{index}] ({_op_name(op)}): missing {name!r}")
    return op[name]


def _op_name(op: dict[str, Any]) -> str:
    name = op.get("op")
    return name if isinstance(name, str) and name in _OPS else "?"


def _pointer_member(op: dict[str, Any], name: str, index: int, limits: StateLimits
                    ) -> tuple[str, list[str]]:
    value = _member(op, name, index)
    if not isinstance(value, str):
        raise JsonPatchError(
            f"operation [{index}] ({_op_name(op)}): {name!r} must be a string pointer"
        )
    # Counted before splitting: a pointer deeper than any document can be is
    # refused without building its token list.
    if value.count("/") > limits.max_depth:
        raise JsonPatchLimitError(
            "depth", f"operation [{index}] ({_op_name(op)}): {name!r} is deeper than "
            f"{limits.max_depth} levels")
    try:
        return value, parse_pointer(value)
    except JsonPointerError as exc:
        raise JsonPointerError(f"operation [{index}] ({_op_name(op)}): {exc}") from None


def apply_patch(document: Any, patch: Sequence[Any],
                limits: StateLimits = DEFAULT_STATE_LIMITS) -> Any:
    """Apply ``patch`` (a list of operation objects); return the new document.

    All or nothing: on any error ``document`` is untouched (it is never
    mutated) and JsonPatchError says which operation failed and why
    (JsonPatchLimitError: which bound it would pass).  ``document`` is measured
    first; a caller that keeps the measure uses :func:`apply_patch_bounded`.
    """
    return apply_patch_bounded(document, patch, measure_document(document, limits), limits)[0]


def apply_patch_bounded(document: Any, patch: Sequence[Any], measured: Measure,
                        limits: StateLimits = DEFAULT_STATE_LIMITS) -> tuple[Any, Measure]:
    """``apply_patch`` for a document whose measure the caller keeps: returns the
    new document and its measure, doing work in proportion to what the patch
    touches rather than to the document."""
    if not isinstance(patch, list):
        raise JsonPatchError(f"patch must be an array of operations, got {type(patch).__name__}")
    if len(patch) > limits.max_ops:
        raise JsonPatchLimitError(
            "ops", f"patch of {len(patch)} operations (at most {limits.max_ops})")
    patcher = _Patcher(document, measured, limits)
    for index, op in enumerate(patch):
        if not isinstance(op, dict):
            raise JsonPatchError(f"operation [{index}] must be an object, got {type(op).__name__}")
        name = op.get("op")
        if name is None:
            raise JsonPatchError(f"operation [{index}]: missing 'op'")
        if not isinstance(name, str) or name not in _OPS:
            raise JsonPatchError(f"operation [{index}]: unknown op {_brief(name)}")
        path, tokens = _pointer_member(op, "path", index, limits)
        try:
            _apply_op(patcher, op, name, index, path, tokens, limits)
            patcher.check_totals()
        except JsonPatchLimitError as exc:
            raise JsonPatchLimitError(exc.limit, f"operation [{index}] ({name}): {exc}") from None
        except JsonPointerError as exc:
            raise JsonPointerError(f"operation [{index}] ({name}): {exc}") from None
    return patcher.root, Measure(patcher.size, patcher.nodes, 0)


def _apply_op(patcher: _Patcher, op: dict[str, Any], name: str, index: int, path: str,
              tokens: list[str], limits: StateLimits) -> None:
    if name == "add":
        value, m = patcher.incoming(_member(op, "value", index), tokens, adds=True)
        patcher.add(tokens, path, value, m)
    elif name == "remove":
        patcher.remove(tokens, path)
    elif name == "replace":
        value, m = patcher.incoming(_member(op, "value", index), tokens)
        patcher.replace(tokens, path, value, m)
    elif name == "move":
        source, source_tokens = _pointer_member(op, "from", index, limits)
        if source == path:
            _resolve(patcher.root, source_tokens, source)  # must exist; otherwise a no-op
            return
        if path.startswith(source + "/"):
            raise JsonPatchError(
                f"operation [{index}] (move): cannot move {_short(source)} into its own "
                f"child {_short(path)}"
            )
        value = patcher.remove(source_tokens, source)
        # Moved, not copied: the value keeps its identity (shared or owned as before).
        value, m = patcher.incoming(value, tokens, copy=False, adds=True)
        patcher.add(tokens, path, value, m)
    elif name == "copy":
        source, source_tokens = _pointer_member(op, "from", index, limits)
        # A deep copy: the value may be a container created by this patch, which
        # later operations are allowed to mutate in place.
        value, m = patcher.incoming(_resolve(patcher.root, source_tokens, source), tokens,
                                    adds=True)
        patcher.add(tokens, path, value, m)
    elif name == "test":
        expected = _member(op, "value", index)
        actual = _resolve(patcher.root, tokens, path)
        if not _json_equal(actual, expected, patcher):
            raise JsonPatchError(
                f"operation [{index}] (test): value at {_short(path)} is {_brief(actual)}, "
                f"expected {_brief(expected)}"
            )
