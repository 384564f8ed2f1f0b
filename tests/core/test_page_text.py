"""browser/page.py's `on_text` feed tells each slice as the message the view shows it
in: id-less chunks resolved by the one chunk rule (stream_identity), not a rule of its own."""

from __future__ import annotations

from collections import defaultdict

from streampace.browser.page import revealed_text
from streampace.conversation.live_state import LiveState
from streampace.conversation.stream_identity import StreamTracker


def chunk(delta: str, mid: str | None = None) -> dict:
    event = {"type": "TEXT_MESSAGE_CHUNK", "delta": delta}
    if mid is not None:
        event["messageId"] = mid
    return event


EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
    chunk("Hel", "a"), chunk("lo"),                     # id-less: continues a
    {"type": "TEXT_MESSAGE_START", "messageId": "b", "role": "assistant"},  # ends a's stream
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "bee"},
    chunk("!"),                                         # after its stream ended: back to a
    {"type": "TEXT_MESSAGE_END", "messageId": "b"},
    chunk("new", "c"), chunk(" one"),
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
    chunk("lost"),                                      # nothing to continue after the run
]


def test_slices_are_told_as_the_messages_the_view_shows() -> None:
    told: dict[str, str] = defaultdict(str)
    streams = StreamTracker()
    for at in range(len(EVENTS)):  # one frame per event, as paced frames come
        for mid, delta in revealed_text(streams, EVENTS[at:at + 1]):
            told[mid] += delta
    state = LiveState()
    state.apply(EVENTS)
    shown = {mid: item.text for mid, item in state.messages.items()}
    assert dict(told) == shown
    assert shown["a"] == "Hello!" and shown["c"] == "new one"


def test_an_id_less_chunk_with_nothing_before_it_is_not_told() -> None:
    assert list(revealed_text(StreamTracker(), [chunk("orphan")])) == []
