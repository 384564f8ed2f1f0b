"""RFC 6902 JSON Patch / RFC 6901 JSON Pointer: the RFC examples, atomicity, errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation.json_patch import (
    JsonPatchError,
    JsonPointerError,
    apply_patch,
    json_equal,
    parse_pointer,
    resolve_pointer,
)

# -- RFC 6902 Appendix A (examples restated from the RFC's descriptions) -------

APPENDIX_A_OK = [
    # A.1 adding an object member
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}],
     {"baz": "qux", "foo": "bar"}),
    # A.2 adding an array element
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}],
     {"foo": ["bar", "qux", "baz"]}),
    # A.3 removing an object member
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    # A.4 removing an array element
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}],
     {"foo": ["bar", "baz"]}),
    # A.5 replacing a value
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}],
     {"baz": "boo", "foo": "bar"}),
    # A.6 moving a value
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    # A.7 moving an array element
    ({"foo": ["all", "grass", "cows", "eat"]},
     [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    # A.8 testing a value: success
    ({"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"},
      {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    # A.10 adding a nested member object
    ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    # A.11 ignoring unrecognized elements
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
     {"foo": "bar", "baz": "qux"}),
    # A.14 ~ escape ordering
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    # A.16 adding an array value
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
     {"foo": ["bar", ["abc", "def"]]}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), APPENDIX_A_OK)
def test_rfc6902_appendix_a_examples(doc: Any, patch: list, expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_patch(doc, patch) == expected
    assert doc == before  # never mutated


APPENDIX_A_ERRORS = [
    # A.9 testing a value: error
    ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], "test"),
    # A.12 adding to a nonexistent target
    ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], "does not exist"),
    # A.15 comparing strings and numbers
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": "10"}], "test"),
]


@pytest.mark.parametrize(("doc", "patch", "message"), APPENDIX_A_ERRORS)
def test_rfc6902_appendix_a_error_examples(doc: Any, patch: list, message: str) -> None:
    before = copy.deepcopy(doc)
    with pytest.raises(JsonPatchError, match=message):
        apply_patch(doc, patch)
    assert doc == before


def test_a13_duplicate_op_member_is_rejected_when_decoding() -> None:
    # A.13: {"op": "add", ..., "op": "remove"} is invalid.  Python's json keeps
    # the last key silently; a strict decoder hook is how a caller rejects it.
    text = '[{"op": "add", "path": "/baz", "value": "qux", "op": "remove"}]'

    def strict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise JsonPatchError(f"duplicate member in {keys}")
        return dict(pairs)

    with pytest.raises(JsonPatchError, match="duplicate"):
        json.loads(text, object_pairs_hook=strict)


# -- RFC 6901 pointers -----------------------------------------------------------

RFC6901_DOC = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC6901_DOC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc6901_examples(pointer: str, expected: Any) -> None:
    assert resolve_pointer(RFC6901_DOC, pointer) == expected


def test_pointer_parsing_and_errors() -> None:
    assert parse_pointer("/~01") == ["~1"]  # ~1 decoded first would give "/"... wrong
    assert parse_pointer("/a//b") == ["a", "", "b"]
    for bad in ["a", "/~2", "/x~", "/~"]:
        with pytest.raises(JsonPointerError):
            parse_pointer(bad)
    with pytest.raises(JsonPointerError, match="string"):
        parse_pointer(1)  # type: ignore[arg-type]
    for bad_index in ["/foo/01", "/foo/-", "/foo/2", "/foo/x", "/foo/-1", "/foo/１"]:
        with pytest.raises(JsonPointerError):
            resolve_pointer(RFC6901_DOC, bad_index)
    with pytest.raises(JsonPointerError, match="not found"):
        resolve_pointer(RFC6901_DOC, "/nope")
    with pytest.raises(JsonPointerError, match="cannot index"):
        resolve_pointer(RFC6901_DOC, "/foo/0/x")


# -- operations in detail ------------------------------------------------------


def test_add_replaces_existing_member_and_whole_document() -> None:
    assert apply_patch({"a": 1}, [{"op": "add", "path": "/a", "value": 2}]) == {"a": 2}
    assert apply_patch({"a": 1}, [{"op": "add", "path": "", "value": [1]}]) == [1]
    assert apply_patch([1, 2], [{"op": "add", "path": "/2", "value": 3}]) == [1, 2, 3]
    with pytest.raises(JsonPatchError, match="out of range"):
        apply_patch([1, 2], [{"op": "add", "path": "/3", "value": 3}])


def test_remove_and_replace_need_an_existing_target() -> None:
    with pytest.raises(JsonPatchError, match="not found"):
        apply_patch({}, [{"op": "remove", "path": "/a"}])
    with pytest.raises(JsonPatchError, match="not found"):
        apply_patch({}, [{"op": "replace", "path": "/a", "value": 1}])
    with pytest.raises(JsonPatchError, match="out of range"):
        apply_patch([], [{"op": "replace", "path": "/0", "value": 1}])
    with pytest.raises(JsonPatchError, match="whole document"):
        apply_patch({"a": 1}, [{"op": "remove", "path": ""}])
    assert apply_patch({"a": 1}, [{"op": "replace", "path": "", "value": None}]) is None


def test_move_rules() -> None:
    doc = {"a": {"b": 1}, "c": [1, 2]}
    with pytest.raises(JsonPatchError, match="own child"):
        apply_patch(doc, [{"op": "move", "from": "/a", "path": "/a/b/c"}])
    # "/ab" is not a child of "/a"
    assert apply_patch({"a": 1}, [{"op": "move", "from": "/a", "path": "/ab"}]) == {"ab": 1}
    assert apply_patch(doc, [{"op": "move", "from": "/a", "path": "/a"}]) == doc
    with pytest.raises(JsonPatchError, match="not found"):
        apply_patch(doc, [{"op": "move", "from": "/x", "path": "/x"}])
    assert apply_patch(doc, [{"op": "move", "from": "/c/0", "path": "/c/-"}]) == {
        "a": {"b": 1}, "c": [2, 1]}


def test_copy_is_a_value_copy() -> None:
    out = apply_patch(
        {"a": {"x": 1}},
        [
            {"op": "copy", "from": "/a", "path": "/b"},
            {"op": "add", "path": "/b/y", "value": 2},  # must not show up in /a
            {"op": "add", "path": "/a/z", "value": 3},  # must not show up in /b
        ],
    )
    assert out == {"a": {"x": 1, "z": 3}, "b": {"x": 1, "y": 2}}


def test_test_uses_json_equality() -> None:
    doc = {"t": True, "n": 1, "f": 1.0, "o": {"a": 1, "b": [1, {"c": None}]}}
    apply_patch(doc, [{"op": "test", "path": "/n", "value": 1.0}])  # 1 == 1.0 in JSON
    apply_patch(doc, [{"op": "test", "path": "/o", "value": {"b": [1, {"c": None}], "a": 1}}])
    with pytest.raises(JsonPatchError, match="test"):
        apply_patch(doc, [{"op": "test", "path": "/t", "value": 1}])  # true is not 1
    with pytest.raises(JsonPatchError, match="test"):
        apply_patch(doc, [{"op": "test", "path": "/n", "value": True}])
    with pytest.raises(JsonPatchError, match="test"):
        apply_patch(doc, [{"op": "test", "path": "/o/b", "value": [{"c": None}, 1]}])
    assert json_equal(None, None) and not json_equal(None, 0) and not json_equal([], {})


def test_malformed_patches_name_the_operation() -> None:
    cases = [
        ({"op": "add", "path": "/a"}, "missing 'value'"),
        ({"op": "add", "value": 1}, "missing 'path'"),
        ({"op": "move", "path": "/a"}, "missing 'from'"),
        ({"op": "frobnicate", "path": "/a"}, "unknown op"),
        ({"path": "/a"}, "missing 'op'"),
        ({"op": ["add"], "path": "/a"}, "unknown op"),
        ({"op": "add", "path": 5, "value": 1}, "string pointer"),
        ("add", "must be an object"),
    ]
    for op, message in cases:
        with pytest.raises(JsonPatchError, match=message) as info:
            apply_patch({"a": 0}, [{"op": "test", "path": "/a", "value": 0}, op])
        assert "[1]" in str(info.value)
    with pytest.raises(JsonPatchError, match="array"):
        apply_patch({}, {"op": "add"})  # type: ignore[arg-type]


def test_atomic_on_failure_after_earlier_changes() -> None:
    doc = {"list": [1, 2, 3], "obj": {"k": "v"}}
    before = copy.deepcopy(doc)
    with pytest.raises(JsonPatchError, match=r"\[3\]"):
        apply_patch(
            doc,
            [
                {"op": "add", "path": "/list/-", "value": 4},
                {"op": "remove", "path": "/obj/k"},
                {"op": "replace", "path": "/list/0", "value": 0},
                {"op": "remove", "path": "/missing"},
            ],
        )
    assert doc == before


def test_untouched_subtrees_are_shared_and_touched_ones_copied() -> None:
    big = {"items": list(range(1000))}
    doc = {"big": big, "small": {"n": 1}}
    out = apply_patch(doc, [{"op": "replace", "path": "/small/n", "value": 2}])
    assert out["big"] is big  # not copied: cheap for large state
    assert out["small"] is not doc["small"] and doc["small"] == {"n": 1}


def test_patch_values_are_not_aliased() -> None:
    value = {"x": [1]}
    patch = [{"op": "add", "path": "/v", "value": value}]
    out = apply_patch({}, patch)
    out["v"]["x"].append(2)
    assert value == {"x": [1]}


# -- property: same result as a naive deep-copy implementation -----------------


def _naive(doc: Any, patch: list[dict]) -> Any:
    """Reference: mutate a deep copy, token by token, with the RFC's rules."""
    doc = copy.deepcopy(doc)

    def parent(d: Any, tokens: list[str]) -> Any:
        for t in tokens[:-1]:
            d = d[t] if isinstance(d, dict) else d[int(t)]
        return d

    def get(d: Any, tokens: list[str]) -> Any:
        for t in tokens:
            d = d[t] if isinstance(d, dict) else d[int(t)]
        return d

    for op in patch:
        tokens = [] if op["path"] == "" else op["path"][1:].split("/")
        if op["op"] == "test":
            if get(doc, tokens) != op["value"]:
                raise KeyError("test")
            continue
        if op["op"] in ("remove", "move"):
            src = tokens if op["op"] == "remove" else op["from"][1:].split("/")
            p = parent(doc, src)
            value = p.pop(src[-1]) if isinstance(p, dict) else p.pop(int(src[-1]))
            if op["op"] == "remove":
                continue
        elif op["op"] == "copy":
            value = copy.deepcopy(get(doc, op["from"][1:].split("/")))
        else:
            value = copy.deepcopy(op["value"])
        p = parent(doc, tokens)
        last = tokens[-1]
        if isinstance(p, dict):
            if op["op"] == "replace" and last not in p:
                raise KeyError(last)
            p[last] = value
        elif op["op"] == "replace":
            p[int(last)] = value
        else:
            index = len(p) if last == "-" else int(last)
            if index > len(p):
                raise IndexError(index)
            p.insert(index, value)
    return doc


_KEYS = st.sampled_from(["a", "b", "c"])
_JSON = st.recursive(
    st.none() | st.integers(-3, 3) | st.text("xy", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_PATH = st.lists(st.sampled_from(["a", "b", "0", "1", "-"]), min_size=1, max_size=3).map(
    lambda ts: "/" + "/".join(ts)
)
_OP = st.one_of(
    st.builds(lambda p, v: {"op": "add", "path": p, "value": v}, _PATH, _JSON),
    st.builds(lambda p: {"op": "remove", "path": p}, _PATH),
    st.builds(lambda p, v: {"op": "replace", "path": p, "value": v}, _PATH, _JSON),
    st.builds(lambda f, p: {"op": "move", "from": f, "path": p}, _PATH, _PATH),
    st.builds(lambda f, p: {"op": "copy", "from": f, "path": p}, _PATH, _PATH),
    st.builds(lambda p, v: {"op": "test", "path": p, "value": v}, _PATH, _JSON),
)


@settings(max_examples=300, deadline=None)
@given(doc=st.dictionaries(_KEYS, _JSON, max_size=3), patch=st.lists(_OP, max_size=5))
def test_property_matches_naive_reference_and_is_atomic(doc: dict, patch: list) -> None:
    before = copy.deepcopy(doc)
    try:
        ours = apply_patch(doc, patch)
    except JsonPatchError:
        ours = JsonPatchError
    assert doc == before  # never mutated, success or failure
    try:
        expected = _naive(doc, patch)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        expected = JsonPatchError
    if expected is JsonPatchError or ours is JsonPatchError:
        # The naive version is laxer (Python indexing accepts "-1", "01", moves
        # into children, bool==int); where it fails, we must fail too.
        if expected is JsonPatchError:
            assert ours is JsonPatchError
        return
    assert ours == expected


# -- bounds (issue 18): work and results limited before and while applying -----

from streampace.conversation.json_patch import (  # noqa: E402
    JsonPatchLimitError,
    StateLimits,
    apply_patch_bounded,
    measure_document,
)


def _deep(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def test_doubling_copies_stop_at_the_size_bound_with_the_document_untouched() -> None:
    # The issue's ~1 KB event: 22 copies of the whole document double it 22 times.
    patch = [{"op": "add", "path": "/a", "value": "x" * 40}] + [
        {"op": "copy", "from": "", "path": f"/k{i}"} for i in range(22)]
    assert len(json.dumps(patch)) < 1100
    doc: dict[str, Any] = {}
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch(doc, patch)
    assert info.value.limit == "size"
    # 1 MiB / ~50 characters per leaf: refused at the 15th doubling, not the 22nd.
    assert "operation [15]" in str(info.value)
    assert doc == {}


def test_copies_within_the_size_bound_still_stop_at_the_work_bound() -> None:
    doc = {"a": list(range(20_000))}
    patch = [op for _ in range(20) for op in ({"op": "copy", "from": "/a", "path": "/b"},
                                               {"op": "remove", "path": "/b"})]
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch(doc, patch)
    assert info.value.limit == "work"
    # 100 000 steps: two copies and their removals of 20 001 values fit, the third does not.
    assert "operation [4]" in str(info.value)


def test_a_600_deep_value_is_refused_without_recursion() -> None:
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch({}, [{"op": "add", "path": "/x", "value": _deep(600)}])
    assert info.value.limit == "depth"
    # The path counts: a value that fits at the root does not fit 30 levels down.
    limits = StateLimits(max_depth=8)
    apply_patch({}, [{"op": "add", "path": "/x", "value": _deep(6)}], limits)  # 1 + 7 levels
    with pytest.raises(JsonPatchLimitError, match="deeper than 8"):
        apply_patch({"x": {}}, [{"op": "add", "path": "/x/y", "value": _deep(6)}], limits)


def test_test_and_json_equal_do_not_recurse_on_depth() -> None:
    deep = _deep(100_000)
    assert json_equal(deep, _deep(100_000))
    assert not json_equal(deep, _deep(99_999))
    with pytest.raises(JsonPatchError, match="expected an object of 1 members"):
        apply_patch({"x": _deep(3)}, [{"op": "test", "path": "/x", "value": deep}])


def test_operation_count_and_pointer_depth_are_refused_before_any_work() -> None:
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch({}, [{"op": "test", "path": "", "value": {}}] * 1001)
    assert info.value.limit == "ops"
    pointer = "/a" * 100_000
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch({}, [{"op": "remove", "path": pointer}])
    assert info.value.limit == "depth"
    assert len(str(info.value)) < 200  # the message never carries the whole pointer


def test_node_bound() -> None:
    limits = StateLimits(max_nodes=100)
    apply_patch({}, [{"op": "add", "path": "/a", "value": list(range(98))}], limits)
    with pytest.raises(JsonPatchLimitError) as info:
        apply_patch({}, [{"op": "add", "path": "/a", "value": list(range(99))}], limits)
    assert info.value.limit == "nodes"


def test_error_messages_stay_short_for_huge_values() -> None:
    big = "y" * 1_000_000
    with pytest.raises(JsonPatchError) as info:
        apply_patch({"a": big}, [{"op": "test", "path": "/a", "value": [big] * 10}])
    assert len(str(info.value)) < 200


_WIDE = st.recursive(
    # Infinity is no JSON number: documents holding it are refused (test_hostile_clients4).
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_WIDE_OP = st.one_of(
    _OP,
    st.builds(lambda p, v: {"op": "add", "path": p, "value": v}, _PATH, _WIDE),
    st.builds(lambda p, v: {"op": "replace", "path": p, "value": v}, _PATH, _WIDE),
)


@settings(max_examples=300, deadline=None)
@given(doc=st.dictionaries(_KEYS, _WIDE, max_size=3), patches=st.lists(
    st.lists(_WIDE_OP, max_size=5), max_size=4))
def test_property_the_kept_measure_is_the_documents(doc: dict, patches: list) -> None:
    """Sizes are kept incrementally; after any sequence of patches the kept
    measure equals a fresh measure of the result."""
    measured = measure_document(doc)
    for patch in patches:
        try:
            doc, measured = apply_patch_bounded(doc, patch, measured)
        except JsonPatchError:
            continue
        fresh = measure_document(doc)
        assert (measured.size, measured.nodes) == (fresh.size, fresh.nodes)
