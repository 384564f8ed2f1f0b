"""session/snapshot.py: a snapshot in bounded parts, joined back to the same events."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation.items import MessageItem
from streampace.conversation.live_state import LiveState
from streampace.conversation.transcript import Transcript
from streampace.session.log import event_size
from streampace.session.snapshot import iter_parts, join_parts, snapshot_events

TEXT = st.text(alphabet=st.sampled_from(["a", "é", "中", "😀", "\n", '"', "\\", "\u0001"]),
               max_size=3000)


def _split_deltas(events: list[dict]) -> list[dict]:
    """Adjacent deltas of one item merged (cutting a delta makes several)."""
    out: list[dict] = []
    for e in events:
        prev = out[-1] if out else None
        if (prev is not None and "delta" in e and prev.get("type") == e.get("type")
                and {k: v for k, v in prev.items() if k != "delta"}
                == {k: v for k, v in e.items() if k != "delta"}):
            out[-1] = {**prev, "delta": prev["delta"] + e["delta"]}
        else:
            out.append(e)
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), TEXT), max_size=12),
       st.lists(TEXT, max_size=3), st.integers(1024, 8192))
def test_parts_are_bounded_and_join_back_to_the_same_events(
        messages: list[tuple[str, str]], deltas: list[str], max_bytes: int) -> None:
    snap: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": mid, "role": "assistant", "content": text} for mid, text in messages]},
        {"type": "STATE_SNAPSHOT", "snapshot": {"k": "v"}},
        {"type": "TEXT_MESSAGE_START", "messageId": "open", "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "open", "delta": d} for d in deltas if d),
    ]
    parts = list(iter_parts(snap, max_bytes))
    assert [last for _, last in parts] == [False] * (len(parts) - 1) + [True]
    for events, _ in parts:
        assert sum(event_size(e) for e in events) <= max_bytes * 1.1 + 200
    joined = join_parts([events for events, _ in parts])
    assert _split_deltas(joined) == _split_deltas(snap)


def test_a_50_mb_answer_travels_in_parts_and_a_page_shows_it_whole() -> None:
    conv = Transcript(1000, 4 * 1024 * 1024)
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    conv.apply_event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    rng = random.Random(1)
    answer = "".join(rng.choice("abc xyz\n") for _ in range(1 << 16)) * 800  # ~52 MB
    for i in range(0, len(answer), 1 << 20):
        conv.apply_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                          "delta": answer[i:i + (1 << 20)]})
    conv.apply_event({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    conv.apply_event({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    events = snapshot_events(conv)
    assert [e["type"] for e in events] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT",
                                          "RUN_FINISHED"]
    parts = [p for p, _ in iter_parts(events, 512 * 1024)]
    assert len(parts) > 90
    state = LiveState()
    state.apply(join_parts(parts))
    first = state.items()[0]
    assert isinstance(first, MessageItem)
    assert first.text == answer and state.status == "finished"


def test_separate_messages_with_one_id_are_never_joined() -> None:
    snap = [{"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a1", "role": "assistant", "content": "x" * 900},
        {"id": "a1", "role": "assistant", "content": "y" * 900},  # a later run's reuse
    ]}]
    parts = [p for p, _ in iter_parts(snap, 1024)]
    joined = join_parts(parts)
    assert [m["content"] for m in joined[0]["messages"]] == ["x" * 900, "y" * 900]


def test_a_finished_or_failed_run_frames_the_snapshot() -> None:
    conv = Transcript()
    assert [e["type"] for e in snapshot_events(conv)] == ["MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    assert snapshot_events(conv)[0]["type"] == "RUN_STARTED"  # running: re-opened as before
    conv.apply_event({"type": "RUN_ERROR", "message": "cut", "code": "cancelled"})
    events = snapshot_events(conv)
    assert events[0] == {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    assert events[-1] == {"type": "RUN_ERROR", "message": "cut", "code": "cancelled"}
