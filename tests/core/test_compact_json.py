"""The prebuilt compact encoder writes exactly what json.dumps writes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from streampace.session.compact_json import dumps_compact, dumps_compact_ascii

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_same_text_as_json_dumps(value: Any) -> None:
    assert dumps_compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dumps_compact_ascii(value) == json.dumps(value, separators=(",", ":"))


def test_numbers_json_cannot_carry_are_refused() -> None:
    """No bare NaN / Infinity token ever reaches the wire (issue 33 item 6)."""
    import pytest

    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError):
            dumps_compact({"state": [bad]})
        with pytest.raises(ValueError):
            dumps_compact_ascii({"state": [bad]})
