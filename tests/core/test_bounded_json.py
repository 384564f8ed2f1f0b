"""bounded_json: size and depth refused before json.loads, linear scan."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streampace.bounded_json import JsonLimitError, depth, loads

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}\n é'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=30,
)


def _nesting(value: object) -> int:
    # Test oracle; hypothesis keeps these shallow, so recursion is fine here.
    if isinstance(value, list):
        return 1 + max((_nesting(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_nesting(v) for v in value.values()), default=0)
    return 0


@given(_json)
def test_depth_is_the_nesting_of_the_value(value):
    text = json.dumps(value, ensure_ascii=False)
    assert depth(text, 1000) == _nesting(value)
    assert loads(text, max_bytes=10**6, max_depth=1000) == value


def test_deep_input_is_refused_before_parsing():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(JsonLimitError) as err:
        loads(text, max_bytes=10**6, max_depth=64)
    assert err.value.reason == "too_deep"
    # exactly at the limit is fine
    assert loads("[" * 64 + "]" * 64, max_bytes=10**6, max_depth=64) is not None


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"a": "[[[[{{{{" * 1000, "b": ["\\\"[", "]"]})
    assert depth(text, 10) == 2
    assert loads(text, max_bytes=10**6, max_depth=2)["b"] == ['\\"[', "]"]


def test_size_is_bounded_in_utf8_bytes():
    with pytest.raises(JsonLimitError) as err:
        loads('"' + "é" * 600 + '"', max_bytes=1000)
    assert err.value.reason == "too_big"
    assert loads('"' + "é" * 400 + '"', max_bytes=1000) == "é" * 400


def test_bytes_must_be_utf8():
    with pytest.raises(JsonLimitError) as err:
        loads(b'{"a": "\xff"}', max_bytes=100)
    assert err.value.reason == "bad_json"
    assert loads('{"a": "ü"}'.encode(), max_bytes=100) == {"a": "ü"}


@pytest.mark.parametrize("text", ['{"a": "unterminated', '"\\', "[1, 2", "nope", ""])
def test_bad_json_is_one_error(text):
    with pytest.raises(JsonLimitError) as err:
        loads(text * 50, max_bytes=10**6)
    assert err.value.reason == "bad_json"


def test_hostile_escapes_scan_in_linear_steps():
    # Many escaped quotes and no closing quote: each character is visited a
    # bounded number of times (the scan hops escape by escape, then stops).
    text = '"' + '\\"' * 200_000
    calls = 0
    import streampace.bounded_json as bj

    real = bj._STRING_STOP

    class Counting:
        def search(self, s, pos):
            nonlocal calls
            calls += 1
            return real.search(s, pos)

    bj._STRING_STOP = Counting()  # type: ignore[assignment]
    try:
        with pytest.raises(JsonLimitError):
            depth(text, 64)
    finally:
        bj._STRING_STOP = real
    assert calls <= 200_001 + 1
