"""The prebuilt compact encoder writes exactly what json.dumps writes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from streampace.session.compact_json import dumps_compact, dumps_compact_ascii

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_same_text_as_json_dumps(value):
    assert dumps_compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dumps_compact_ascii(value) == json.dumps(value, separators=(",", ":"))
