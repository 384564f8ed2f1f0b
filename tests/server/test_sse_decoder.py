"""The upstream SSE decoder: strict UTF-8, bounded lines and events, any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.server.sources.sse import SseDecoder, SseError, SseEvent


def _decode(chunks: list[bytes], max_event_bytes: int = 1 << 20) -> list[SseEvent]:
    d = SseDecoder(max_event_bytes)
    out: list[SseEvent] = []
    for c in chunks:
        out += d.feed(c)
    return out + d.close()


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=20)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from(["", "message", "ping"]),
                                 st.lists(_TEXT, min_size=1, max_size=3)), max_size=6),
       newline=st.sampled_from([b"\n", b"\r", b"\r\n"]), cuts=st.lists(st.integers(0, 400)),
       bom=st.booleans())
def test_any_chunking_and_line_ending_gives_the_same_events(
        events: list[tuple[str, list[str]]], newline: bytes, cuts: list[int], bom: bool) -> None:
    raw = b"\xef\xbb\xbf" if bom else b""
    expected = []
    for name, lines in events:
        raw += b": keep-alive" + newline
        if name:
            raw += b"event: " + name.encode() + newline
        for line in lines:
            raw += b"data: " + line.encode() + newline
        raw += newline
        expected.append(SseEvent(name or "message", "\n".join(lines)))
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert _decode(chunks) == expected


def test_invalid_utf8_is_an_error_after_the_events_before_it() -> None:
    d = SseDecoder(1 << 20)
    good = d.feed(b'data: {"a": "\xc3\xa9"}\n\n')
    assert good == [SseEvent("message", '{"a": "é"}')]
    with pytest.raises(SseError) as info:
        d.feed(b'data: {"a": "\xff"}\n\n')
    assert info.value.reason == "bad_utf8"
    assert "byte 32" in str(info.value)  # 19 bytes of the first event + 13 of this line
    # A sequence cut between two chunks is not an error; an overlong one is.
    d = SseDecoder(1 << 20)
    assert d.feed(b"data: \xf0\x9f") == []
    assert d.feed(b"\x99\x82\n\n") == [SseEvent("message", "🙂")]
    with pytest.raises(SseError):
        SseDecoder(1 << 20).feed(b"data: \xc0\xaf\n\n")  # overlong "/"
    with pytest.raises(SseError):
        SseDecoder(1 << 20).feed(b"data: \xed\xa0\x80\n\n")  # an encoded surrogate


def test_events_before_a_fault_in_the_same_chunk_are_returned_first() -> None:
    d = SseDecoder(1 << 20)
    assert d.feed(b"data: a\n\ndata: \xff\n\n") == [SseEvent("message", "a")]
    with pytest.raises(SseError):
        d.feed(b"data: b\n\n")
    with pytest.raises(SseError):
        d.close()


def test_lines_and_events_are_bounded() -> None:
    d = SseDecoder(1000)
    for _ in range(3):
        d.feed(b"x" * 300)  # no line break yet: held, up to the bound
    with pytest.raises(SseError) as info:
        d.feed(b"x" * 300)
    assert info.value.reason == "too_big"
    d = SseDecoder(1000)
    with pytest.raises(SseError) as info:
        for _ in range(20):
            d.feed(b"data: " + b"y" * 90 + b"\n")  # many short lines, one event
    assert info.value.reason == "too_big"


def test_many_lines_in_one_chunk_are_linear() -> None:
    n = 50_000
    chunk = b"data: x\n\n" * n
    assert len(SseDecoder(1 << 20).feed(chunk)) == n


def test_a_last_line_without_its_break_still_counts_but_an_unfinished_event_does_not() -> None:
    assert _decode([b"data: a\n\ndata: b"]) == [SseEvent("message", "a")]
    assert _decode([b"data: a\n\ndata: b\n\n"])[-1] == SseEvent("message", "b")
