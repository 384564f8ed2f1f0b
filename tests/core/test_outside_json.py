"""Issue 18: every parser of outside JSON is bounded in depth and size and never
raises RecursionError — client messages, upstream events, event validation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation.event_schema import (
    MAX_EVENT_DEPTH,
    EventError,
    parse_batch,
    parse_event,
    validate_event,
)
from streampace.session.client_messages import ClientError, parse_client_message
from streampace.session.framing import UpstreamError, upstream_json_object


def _nest(levels: int, leaf: Any = 0) -> Any:
    value = leaf
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def _text_nest(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("levels", [5, 600, 100_000])
def test_client_messages(levels: int) -> None:
    text = '{"type": "run", "prompt": "hi", "x": ' + _text_nest(levels) + "}"
    if levels <= 2:
        assert parse_client_message(text, 100).prompt == "hi"  # type: ignore[union-attr]
        return
    with pytest.raises(ClientError) as info:
        parse_client_message(text, 100)
    assert info.value.code == "bad_json"
    # Refused by size or by depth, whichever the parser meets first; never parsed.
    assert "deeper" in info.value.message or "bytes" in info.value.message
    with pytest.raises(ClientError) as info:
        parse_client_message('{"type": "run", "prompt": "' + "p" * 20_000 + '"}', 100)
    assert info.value.code == "bad_json" and "bytes" in info.value.message


@pytest.mark.parametrize("levels", [600, 100_000])
def test_upstream_event_text(levels: int) -> None:
    text = '{"type": "CUSTOM", "name": "n", "value": ' + _text_nest(levels) + "}"
    with pytest.raises(UpstreamError) as info:
        upstream_json_object(text, "not json", "not an object")
    assert info.value.code == "upstream_protocol_error"
    # Refused by depth, or by value count (checked first: it is the cheaper refusal).
    assert "deeper" in info.value.message or "values" in info.value.message
    with pytest.raises(EventError, match="deeper"):
        parse_event(text)
    with pytest.raises(EventError, match="deeper"):
        parse_batch("[" + text + "]")


def test_event_depth_counts_the_event_and_a_batch_allows_one_more_level() -> None:
    fits = {"type": "CUSTOM", "name": "n", "value": _nest(MAX_EVENT_DEPTH - 1)}
    assert validate_event(fits) is fits
    over = {"type": "CUSTOM", "name": "n", "value": _nest(MAX_EVENT_DEPTH)}
    with pytest.raises(EventError, match=f"deeper than {MAX_EVENT_DEPTH}"):
        validate_event(over)
    assert parse_batch(json.dumps([fits])) == [fits]


@pytest.mark.parametrize("value", [(1, 2), {1: "a"}, object(), {"a": {"b": {1.5}}}])
def test_an_agent_functions_non_json_values_are_refused(value: Any) -> None:
    with pytest.raises(EventError, match="not a JSON value|not a string"):
        validate_event({"type": "CUSTOM", "name": "n", "value": value})


def test_messages_about_huge_input_stay_short() -> None:
    huge = "T" * 5_000_000
    for event in ({"type": huge}, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": huge},
                  {"type": "STATE_DELTA", "delta": [{"op": huge, "path": "/a"}]},
                  {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": huge}):
        with pytest.raises(EventError) as info:
            validate_event(event)
        assert len(str(info.value)) < 300


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(0, 3000), kind=st.sampled_from("[{"))
def test_property_each_parser_accepts_within_its_depth_and_refuses_beyond(
        levels: int, kind: str) -> None:
    inner = ("[" * levels + "0" + "]" * levels) if kind == "[" else ('{"a":' * levels + "1"
                                                              + "}" * levels)
    text = '{"type": "CUSTOM", "name": "n", "value": ' + inner + "}"
    # parser, its refusal, the deepest value nesting it accepts
    parsers: dict[str, tuple[Callable[[str], object], type[Exception], int]] = {
        "event": (parse_event, EventError, MAX_EVENT_DEPTH - 1),
        "upstream": (lambda t: upstream_json_object(t, "x", "y"), UpstreamError,
                     MAX_EVENT_DEPTH - 1),
        "client": (lambda t: parse_client_message(
            t.replace('"CUSTOM", "name": "n"', '"cancel"'), 100), ClientError, 3),
    }
    for name, (parse, refusal, deepest) in parsers.items():
        try:
            parse(text)
            accepted = True
        except refusal:  # anything else (RecursionError...) fails the test
            accepted = False
        assert accepted == (levels <= deepest), (name, levels)
