"""bounded_json: size and depth refused before json.loads, linear scan."""

from __future__ import annotations

import json
import re
from typing import Any

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
def test_depth_is_the_nesting_of_the_value(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert depth(text, 1000) == _nesting(value)
    assert loads(text, max_bytes=10**6, max_depth=1000) == value


def test_deep_input_is_refused_before_parsing() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(JsonLimitError) as err:
        loads(text, max_bytes=10**6, max_depth=64)
    assert err.value.reason == "too_deep"
    # exactly at the limit is fine
    assert loads("[" * 64 + "]" * 64, max_bytes=10**6, max_depth=64) is not None


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[[[[{{{{" * 1000, "b": ["\\\"[", "]"]})
    assert depth(text, 10) == 2
    assert loads(text, max_bytes=10**6, max_depth=2)["b"] == ['\\"[', "]"]


def test_size_is_bounded_in_utf8_bytes() -> None:
    with pytest.raises(JsonLimitError) as err:
        loads('"' + "é" * 600 + '"', max_bytes=1000)
    assert err.value.reason == "too_big"
    assert loads('"' + "é" * 400 + '"', max_bytes=1000) == "é" * 400


def test_bytes_must_be_utf8() -> None:
    with pytest.raises(JsonLimitError) as err:
        loads(b'{"a": "\xff"}', max_bytes=100)
    assert err.value.reason == "bad_json"
    assert loads('{"a": "ü"}'.encode(), max_bytes=100) == {"a": "ü"}


@pytest.mark.parametrize("text", ['{"a": "unterminated', '"\\', "[1, 2", "nope", ""])
def test_bad_json_is_one_error(text: str) -> None:
    with pytest.raises(JsonLimitError) as err:
        loads(text * 50, max_bytes=10**6)
    assert err.value.reason == "bad_json"


def _count_pattern_calls(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, str]:
    """Pattern matches made while checking ``text``, and the refusal reason (or "ok")."""
    import streampace.bounded_json as bj

    calls = 0

    class Counting:
        def __init__(self, real: re.Pattern[str]) -> None:
            self.real = real

        def match(self, s: str, pos: int) -> re.Match[str] | None:
            nonlocal calls
            calls += 1
            return self.real.match(s, pos)

        def subn(self, repl: str, s: str) -> tuple[str, int]:
            nonlocal calls
            calls += 1
            return self.real.subn(repl, s)

    monkeypatch.setattr(bj, "_STRING_BODY", Counting(bj._STRING_BODY))
    monkeypatch.setattr(bj, "_STRING", Counting(bj._STRING))
    try:
        loads(text, max_bytes=10**7, max_depth=64)
        return calls, "ok"
    except JsonLimitError as exc:
        return calls, exc.reason


def test_hostile_escapes_scan_in_linear_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # Many escaped quotes and no closing quote, after brackets that make the raw
    # count need the exact scan: one pass of the possessive pattern (which cannot backtrack
    # and always matches, so it never restarts inside the string).
    text = '["' + "[" * 100 + '\\"' * 200_000
    assert _count_pattern_calls(monkeypatch, text) == (1, "bad_json")
    # Few strings: at most one match per string, and only for strings with escapes.
    text = json.dumps([["p" * 100] * 100] * 10 + [['with "escapes"' + "q" * 100] * 100] * 10)
    assert _count_pattern_calls(monkeypatch, "[" * 70 + text + "]" * 70)[0] == 1000
    # Many short strings: one pass of the whole-string pattern.
    text = json.dumps([[["ab"] * 1000]] * 100)
    assert _count_pattern_calls(monkeypatch, "[" * 70 + text + "]" * 70)[0] == 1


def test_values_are_counted_before_parsing() -> None:
    assert loads("[" + ",".join(["[]"] * 99) + "]", max_bytes=10**6, max_values=100) is not None
    for text in ("[" + ",".join(["[]"] * 100) + "]",  # 101 values
                 json.dumps({str(i): i for i in range(200)}),
                 json.dumps(["s"] * 1000)):
        with pytest.raises(JsonLimitError) as err:
            loads(text, max_bytes=10**6, max_values=100)
        assert err.value.reason == "too_big"


@given(_json)
def test_the_value_count_is_exact_for_valid_json(value: Any) -> None:
    def count(v: object) -> int:
        if isinstance(v, list):
            return 1 + sum(map(count, v))
        if isinstance(v, dict):
            return 1 + sum(map(count, v.values()))
        return 1

    text = json.dumps(value, ensure_ascii=False)
    n = count(value)
    assert loads(text, max_bytes=10**6, max_values=n) == value
    if len(text) > n - 1:  # shorter texts skip the count: they cannot hold n values
        with pytest.raises(JsonLimitError) as err:
            loads(text, max_bytes=10**6, max_values=n - 1)
        assert err.value.reason == "too_big"


@pytest.mark.parametrize("shape", ["wide", "deep_blocks", "pairs_high", "unclosed"])
def test_depth_of_large_shapes(shape: str) -> None:
    if shape == "wide":
        text, expected = "[" + ",".join(["[[]]"] * 100_000) + "]", 3
    elif shape == "deep_blocks":  # 60 levels, over and over
        text, expected = "[" + ",".join(["[" * 59 + "]" * 59] * 5_000) + "]", 60
    elif shape == "pairs_high":  # many innermost pairs at the limit's edge
        text, expected = "[" * 63 + ",".join(["[]"] * 100_000) + "]" * 63, 64
    else:
        text, expected = "[" * 10_000, None  # some value past the limit
    assert depth(text, 64) == expected if expected is not None else depth(text, 64) > 64
