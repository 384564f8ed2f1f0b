"""json_value.measure / copy_value: bounded, iterative walks of outside JSON values."""

from __future__ import annotations

import json
import re
from typing import Any, TypedDict

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from streampace.conversation.json_value import JsonValueError, copy_value, measure


class Bounds(TypedDict):
    max_size: int
    max_nodes: int
    max_depth: int


BIG: Bounds = {"max_size": 1 << 30, "max_nodes": 1 << 30, "max_depth": 1 << 30}

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(alphabet=st.characters(codec="utf-8"), max_size=4), inner,
                      max_size=4),
    max_leaves=20,
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _nodes(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(map(_nodes, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(_nodes, value))
    return 1


@settings(max_examples=300, deadline=None)
@given(_JSON)
@example("\x1f\x1f\x07")  # control characters: six characters each in JSON
def test_measure_matches_a_recursive_reference_and_estimates_the_json_size(value: Any) -> None:
    m = measure(value, **BIG)
    assert m.depth == _depth(value)
    assert m.nodes == _nodes(value)
    compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    # An estimate: escapes are not counted (a control character is one character, not
    # the six of "\u001f"), numbers by their magnitude.
    unescaped = re.sub(r"\\(u[0-9a-f]{4}|.)", "e", compact)
    assert m.size >= len(unescaped) // 3
    copied, cm = copy_value(value, **BIG)
    assert copied == value and cm == m
    assert json.dumps(copied) == json.dumps(value)  # member order kept


def test_copy_shares_no_container() -> None:
    value = {"a": [1, {"b": []}], "c": {}}
    copied, _ = copy_value(value, **BIG)
    copied["a"][1]["b"].append(1)
    copied["c"]["x"] = 1
    assert value == {"a": [1, {"b": []}], "c": {}}


def test_depth_is_refused_without_recursion() -> None:
    value: Any = []
    for _ in range(200_000):
        value = [value]
    with pytest.raises(JsonValueError) as info:
        measure(value, max_size=1 << 30, max_nodes=1 << 30, max_depth=48)
    assert info.value.reason == "too_deep"
    assert measure(value, **BIG).depth == 200_001


def test_nodes_and_size_stop_the_walk_even_for_a_cycle() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(JsonValueError) as info:
        measure(loop, max_size=1 << 30, max_nodes=1000, max_depth=1 << 30)
    assert info.value.reason == "too_many_nodes"
    with pytest.raises(JsonValueError) as info:
        measure(["x" * 100] * 20, max_size=1000, max_nodes=1000, max_depth=5)
    assert info.value.reason == "too_big"
    # A container's children are counted before they are walked.
    with pytest.raises(JsonValueError) as info:
        measure([0] * 1_000_000, max_size=1 << 30, max_nodes=1000, max_depth=5)
    assert info.value.reason == "too_many_nodes"


@pytest.mark.parametrize(("value", "reason", "where"), [
    ({"a": {"b": ["ok", "\ud83d"]}}, "lone_surrogate", "E.a.b[1]"),
    ({"a": {"\udc00": 1}}, "lone_surrogate", "E.a (a key)"),
    ({"a": (1, 2)}, "not_json", "E.a"),
    ({"a": {1: 2}}, "not_json", "E.a"),
    ({"a": {"b": object()}}, "not_json", "E.a.b"),
])
def test_errors_name_the_place(value: Any, reason: str, where: str) -> None:
    with pytest.raises(JsonValueError) as info:
        measure(value, max_size=1 << 20, max_nodes=1000, max_depth=10, path="E")
    assert info.value.reason == reason
    assert info.value.path == where


def test_paths_in_errors_stay_short_for_long_keys() -> None:
    key = "k" * 1_000_000
    value = {key: {key: {key: "\ud800"}}}
    with pytest.raises(JsonValueError) as info:
        measure(value, max_size=1 << 30, max_nodes=1000, max_depth=10, path="E")
    assert len(str(info.value)) < 300
