"""Show V8 many kinds of object at the interpreter's indirect calls before it first optimises it.

Python runs in one wasm function, the interpreter's loop. When V8 optimises
it, it also inlines the small C API functions the loop calls
(`PyObject_Size`, `PyObject_IsTrue`, `PySequence_Contains`,
`PyObject_GetIter`, `PyObject_GetAttr`, `PyObject_Hash`,
`PyObject_Vectorcall`) and, inside them, the type slot each one calls
through a function pointer, when up to four slots were seen there so far
(five or more: the call is megamorphic, never inlined). What each of those
functions saw is read once, at the loop's first optimisation, and read again
only after a deoptimisation at that very call. So every later object of a
kind the first read had not seen threw the optimised loop away: V8 compiled
its baseline code again on the main thread (4 ms at 1x CPU, 17-29 ms at 4x)
and optimised it again ~150 ms later, one call at a time. Each page load met
five or six of these, half of them during its first answer
(`python -m bench.wasm_tiering`; Chromium's `--js-flags=--trace-deopt` names
each "wrong call target", at an offset inside one of those functions).

The loop is first optimised after a few dozen bytecodes of a page's Python:
during a snapshot's restore, before any page code runs. So the snapshot is
made with `widen_at_first_call()` armed: the restore's first Python call runs
`widen()` first, which makes those calls on five or more kinds each, from C
(`map`, run out by `deque(maxlen=0)`: no bytecode per call) out of iterators
built with the snapshot. Everything it touches is made here and dropped.
"""

from __future__ import annotations

import collections
import datetime
import functools
import itertools
import operator
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["widen", "widen_at_first_call", "widened_at"]


class _Sized:
    """Slots written in Python: V8 sees the interpreter's slot_* wrappers."""

    def __len__(self) -> int:
        return 1

    def __contains__(self, item: object) -> bool:
        return item is None

    def __iter__(self) -> Iterator[int]:
        return iter((1,))

    def __bool__(self) -> bool:
        return True


class _Dynamic:
    def __getattr__(self, name: str) -> str:
        return name


class _Plain:
    def method(self, value: object) -> object:
        return value


def _generator() -> Iterator[int]:
    yield 1


_DATA = {"a": 1}
_PYTHON_SLOTS = (_Sized(),)
_SIZED: tuple[Any, ...] = (
    [1], (1,), "ab", _DATA, {1}, b"ab", range(3), frozenset({1}),
    collections.deque([1]), _DATA.keys(), bytearray(b"a"), memoryview(b"ab"))
_CONTAINERS = tuple(s for s in _SIZED if not isinstance(s, (bytes, bytearray, memoryview)))
_ITERABLES = (*_SIZED, _generator())
_TRUTHY = (*_SIZED, 1, 1.5, 1j, datetime.timedelta(seconds=1), _Plain())
_OWNERS = (_Plain(), _Plain, operator, _Dynamic(), super(_Plain, _Plain()),
           functools.partial(int), datetime.timedelta(1))
_HASHABLE = ("a", 1, 1.5, (1,), frozenset({1}), b"a", None, _Plain, _Plain(), range(1),
             datetime.timedelta(1), operator.truth)
# Callables of distinct kinds (builtins of each calling convention, types, bound
# and unbound methods, partial, itemgetter), each taking the one argument.
_CALLABLES: tuple[Callable[[Any], object], ...] = (
    len, list, tuple, repr, max, sorted, set().discard, "{}".format, dict.fromkeys,
    functools.partial(operator.eq, 1), operator.itemgetter(0), _Plain().method, str)


def _slot_calls() -> Iterator[object]:
    """Every slot call above, not yet made (the Python-coded slots last)."""
    return itertools.chain(
        map(len, _SIZED), map(operator.truth, _TRUTHY), map(iter, _ITERABLES),
        map(operator.contains, _CONTAINERS, itertools.repeat("a")),
        map(getattr, _OWNERS, itertools.repeat("__class__")), map(hash, _HASHABLE),
        map(len, _PYTHON_SLOTS), map(operator.truth, _PYTHON_SLOTS), map(iter, _PYTHON_SLOTS),
        map(operator.contains, _PYTHON_SLOTS, itertools.repeat("a")))


# Built with the snapshot: a restore's first bytecodes make the calls rather
# than build them.
_next_slot_calls = _slot_calls()


def widen() -> None:
    """The slot calls; then every kind of callable through one CALL
    instruction of the interpreter (which calls `PyObject_Vectorcall`)."""
    global _next_slot_calls
    collections.deque(_next_slot_calls, maxlen=0)
    for call in _CALLABLES:
        call((1,))
    _next_slot_calls = _slot_calls()


_widened_at: float | None = None


def _first_call(_frame: Any, event: str, _arg: Any) -> None:
    global _widened_at
    if event != "call":  # a C function's call or return (sys.setprofile's own, here)
        return
    sys.setprofile(None)
    try:
        widen()
    except Exception:  # noqa: BLE001 - a restore must go on; the loop is only slower
        return
    _widened_at = time.time()


def widened_at() -> float | None:
    """When the armed `widen()` ran (`time.time()`; None: not yet, or it
    failed). In a page: at its snapshot's restore, after the page's start."""
    return _widened_at


def widen_at_first_call() -> None:
    """Run `widen()` at the next call of a Python function, once: called last
    before the snapshot is taken (scripts/make_snapshot.mjs), so that call is
    the restore's first."""
    sys.setprofile(_first_call)
