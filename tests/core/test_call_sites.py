"""The restore's first Python call widens the interpreter's call sites for V8
(browser/call_sites.py): armed once, run once, never in the way of that call."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from streampace.browser import call_sites


def _python_function() -> int:
    return 1


@pytest.fixture
def unarmed_after() -> Iterator[None]:
    try:
        yield
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize("objects", [
    call_sites._SIZED, call_sites._TRUTHY, call_sites._ITERABLES, call_sites._CONTAINERS,
    call_sites._OWNERS, call_sites._HASHABLE, call_sites._CALLABLES])
def test_each_call_meets_more_kinds_than_v8_inlines(objects: tuple[object, ...]) -> None:
    # V8 inlines a call that saw at most four targets; a fifth makes it megamorphic.
    assert len({type(obj) for obj in objects}) >= 5


def test_each_widen_makes_the_slot_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    lengths: list[int] = []

    def counted_len(_self: object) -> int:
        lengths.append(1)
        return 1

    monkeypatch.setattr(call_sites._Sized, "__len__", counted_len)
    call_sites.widen()
    call_sites.widen()  # its calls are built again for a next time
    assert lengths == [1, 1]


def test_armed_it_runs_once_at_the_next_python_call(
        monkeypatch: pytest.MonkeyPatch, unarmed_after: None) -> None:
    runs: list[int] = []
    monkeypatch.setattr(call_sites, "widen", lambda: runs.append(1))
    monkeypatch.setattr(call_sites, "_widened_at", None)
    # A stand-in clock: the test checks that the run is recorded, not when.
    monkeypatch.setattr(call_sites, "time", SimpleNamespace(time=lambda: 1234.5))
    call_sites.widen_at_first_call()  # last before the calls (a fixture's would be one)
    sorted([2, 1])  # a C function: not yet
    assert runs == []
    assert _python_function() == 1
    assert runs == [1] and call_sites.widened_at() == 1234.5
    assert sys.getprofile() is None  # the hook removed itself
    _python_function()
    assert runs == [1]


def test_a_failing_widen_does_not_stop_the_call_it_came_before(
        monkeypatch: pytest.MonkeyPatch, unarmed_after: None) -> None:
    def failing() -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(call_sites, "widen", failing)
    monkeypatch.setattr(call_sites, "_widened_at", None)
    call_sites.widen_at_first_call()
    assert _python_function() == 1
    assert sys.getprofile() is None
    assert call_sites.widened_at() is None
