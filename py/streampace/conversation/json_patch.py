"""RFC 6902 JSON Patch with RFC 6901 JSON Pointers, applied atomically.

Our own small implementation because the page must stay lean: every extra
Pyodide package costs boot time, and STATE_DELTA only needs this much.

``apply_patch(doc, patch)`` never mutates ``doc``.  It copies only the
containers on the paths it changes (copy-on-write, each copied at most once
per patch) and shares every untouched subtree with ``doc``; on any error the
partial result is thrown away, so the caller's document is exactly as before
and a :class:`JsonPatchError` names the failing operation.  Callers must treat
both documents as immutable afterwards (shared subtrees).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

__all__ = [
    "JsonPatchError",
    "JsonPointerError",
    "apply_patch",
    "json_equal",
    "parse_pointer",
    "resolve_pointer",
]


class JsonPatchError(ValueError):
    """The patch is malformed or cannot be applied to this document."""


class JsonPointerError(JsonPatchError):
    """A JSON Pointer is malformed or does not resolve."""


def parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 pointer into unescaped reference tokens ("" = root)."""
    if not isinstance(pointer, str):
        raise JsonPointerError(f"pointer must be a string, got {type(pointer).__name__}")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise JsonPointerError(f"pointer {pointer!r} must be empty or start with '/'")
    tokens = pointer[1:].split("/")
    for i, token in enumerate(tokens):
        if "~" in token:
            # Only ~0 and ~1 are escapes; decode ~1 before ~0 so "~01" -> "~1".
            rest = token.replace("~0", "").replace("~1", "")
            if "~" in rest:
                raise JsonPointerError(f"pointer {pointer!r}: invalid escape in {token!r}")
            tokens[i] = token.replace("~1", "/").replace("~0", "~")
    return tokens


def _array_index(token: str, length: int, pointer: str, *, for_insert: bool) -> int:
    if token == "-":
        if for_insert:
            return length
        raise JsonPointerError(f"{pointer!r}: '-' (end of array) only valid for add")
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise JsonPointerError(f"{pointer!r}: {token!r} is not an array index")
    index = int(token)
    limit = length if for_insert else length - 1
    if index > limit:
        raise JsonPointerError(f"{pointer!r}: index {index} out of range (length {length})")
    return index


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value ``pointer`` refers to in ``document``; JsonPointerError if none."""
    value = document
    for token in parse_pointer(pointer):
        if isinstance(value, dict):
            if token not in value:
                raise JsonPointerError(f"{pointer!r}: member {token!r} not found")
            value = value[token]
        elif isinstance(value, list):
            value = value[_array_index(token, len(value), pointer, for_insert=False)]
        else:
            raise JsonPointerError(f"{pointer!r}: cannot index into {type(value).__name__}")
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality by JSON's rules (RFC 6902 §4.6).

    Unlike Python's ==, a boolean is never equal to a number (True != 1);
    numbers compare by value (1 == 1.0); objects ignore member order.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


class _Patcher:
    """One atomic application: copy-on-write along the paths it touches."""

    def __init__(self, document: Any) -> None:
        self.root = document
        # ids of containers created during this patch (safe to mutate in
        # place); the list keeps them alive so an id cannot be reused.
        self._fresh_ids: set[int] = set()
        self._fresh_refs: list[Any] = []

    def _own(self, container: Any) -> Any:
        if id(container) in self._fresh_ids:
            return container
        clone = dict(container) if isinstance(container, dict) else list(container)
        self._fresh_ids.add(id(clone))
        self._fresh_refs.append(clone)
        return clone

    def _parent(self, tokens: list[str], pointer: str) -> Any:
        """Owned (mutable) container holding the last token; copies the path."""
        if not isinstance(self.root, (dict, list)):
            raise JsonPointerError(f"{pointer!r}: cannot index into {type(self.root).__name__}")
        self.root = self._own(self.root)
        node = self.root
        for depth, token in enumerate(tokens[:-1]):
            if isinstance(node, dict):
                if token not in node:
                    where = "/" + "/".join(tokens[: depth + 1])
                    raise JsonPointerError(f"{pointer!r}: path {where!r} does not exist")
                key: Any = token
            elif isinstance(node, list):
                key = _array_index(token, len(node), pointer, for_insert=False)
            else:
                raise JsonPointerError(f"{pointer!r}: cannot index into {type(node).__name__}")
            child = node[key]
            if not isinstance(child, (dict, list)):
                raise JsonPointerError(
                    f"{pointer!r}: cannot index into {type(child).__name__} at {token!r}"
                )
            child = self._own(child)
            node[key] = child
            node = child
        return node

    def _target(self, pointer: str, value: Any) -> tuple[Any, str] | None:
        """The parent container and last token of ``pointer``; None after setting the
        whole document (path ``""``), which add and replace both mean that way."""
        tokens = parse_pointer(pointer)
        if not tokens:
            self.root = value
            return None
        return self._parent(tokens, pointer), tokens[-1]

    def add(self, pointer: str, value: Any) -> None:
        target = self._target(pointer, value)
        if target is None:
            return
        parent, last = target
        if isinstance(parent, dict):
            parent[last] = value
        else:
            parent.insert(_array_index(last, len(parent), pointer, for_insert=True), value)

    def remove(self, pointer: str) -> Any:
        tokens = parse_pointer(pointer)
        if not tokens:
            raise JsonPointerError("cannot remove the whole document (path '')")
        parent = self._parent(tokens, pointer)
        last = tokens[-1]
        if isinstance(parent, dict):
            if last not in parent:
                raise JsonPointerError(f"{pointer!r}: member {last!r} not found")
            return parent.pop(last)
        return parent.pop(_array_index(last, len(parent), pointer, for_insert=False))

    def replace(self, pointer: str, value: Any) -> None:
        target = self._target(pointer, value)
        if target is None:
            return
        parent, last = target
        if isinstance(parent, dict):
            if last not in parent:
                raise JsonPointerError(f"{pointer!r}: member {last!r} not found")
            parent[last] = value
        else:
            parent[_array_index(last, len(parent), pointer, for_insert=False)] = value


_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})


def _member(op: dict[str, Any], name: str, index: int) -> Any:
    if name not in op:
        raise JsonPatchError(f"operation [{index}] ({op.get('op')}): missing {name!r}")
    return op[name]


def _pointer_member(op: dict[str, Any], name: str, index: int) -> str:
    value = _member(op, name, index)
    if not isinstance(value, str):
        raise JsonPatchError(
            f"operation [{index}] ({op.get('op')}): {name!r} must be a string pointer"
        )
    return value


def apply_patch(document: Any, patch: Sequence[Any]) -> Any:
    """Apply ``patch`` (a list of operation objects); return the new document.

    All or nothing: on any error ``document`` is untouched (it is never
    mutated) and JsonPatchError says which operation failed and why.
    """
    if not isinstance(patch, list):
        raise JsonPatchError(f"patch must be an array of operations, got {type(patch).__name__}")
    patcher = _Patcher(document)
    for index, op in enumerate(patch):
        if not isinstance(op, dict):
            raise JsonPatchError(f"operation [{index}] must be an object, got {type(op).__name__}")
        name = op.get("op")
        if name is None:
            raise JsonPatchError(f"operation [{index}]: missing 'op'")
        if not isinstance(name, str) or name not in _OPS:
            raise JsonPatchError(f"operation [{index}]: unknown op {name!r}")
        path = _pointer_member(op, "path", index)
        try:
            if name == "add":
                patcher.add(path, copy.deepcopy(_member(op, "value", index)))
            elif name == "remove":
                patcher.remove(path)
            elif name == "replace":
                patcher.replace(path, copy.deepcopy(_member(op, "value", index)))
            elif name == "move":
                source = _pointer_member(op, "from", index)
                if source == path:
                    resolve_pointer(patcher.root, source)  # must exist; otherwise a no-op
                    continue
                if path.startswith(source + "/"):
                    raise JsonPatchError(
                        f"operation [{index}] (move): cannot move {source!r} into its own "
                        f"child {path!r}"
                    )
                patcher.add(path, patcher.remove(source))
            elif name == "copy":
                source = _pointer_member(op, "from", index)
                # Deep copy: the value may be a container created by this patch,
                # which later operations are allowed to mutate in place.
                patcher.add(path, copy.deepcopy(resolve_pointer(patcher.root, source)))
            elif name == "test":
                expected = _member(op, "value", index)
                actual = resolve_pointer(patcher.root, path)
                if not json_equal(actual, expected):
                    raise JsonPatchError(
                        f"operation [{index}] (test): value at {path!r} is {actual!r}, "
                        f"expected {expected!r}"
                    )
        except JsonPointerError as exc:
            raise JsonPointerError(f"operation [{index}] ({name}): {exc}") from None
    return patcher.root
