"""Issue 12 item 4: a session's conversation (snapshots, upstream history) is
bounded in messages and bytes, never deep-copied per run, and a huge upstream
delta is cut into bounded events."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from streampace.conversation.transcript import Transcript
from streampace.session.framing import MAX_EVENT_DELTA, RunFramer

from .conftest import Serve, Upstream, assert_conformant, sse_headers, watch_run, write_raw
from .test_upstreams import chat_chunk


def _run(conv: Transcript, n: int, prompt: str, answer: str) -> None:
    framer = RunFramer("t", f"run-{n}", prompt, validate=False)
    events = framer.feed_group([
        {"type": "TEXT_MESSAGE_START", "messageId": f"a{n}", "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": f"a{n}", "delta": answer[i:i + 3]}
          for i in range(0, len(answer), 3)),
        {"type": "TEXT_MESSAGE_END", "messageId": f"a{n}"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": f"run-{n}"},
    ])
    for event in events:
        conv.apply_event(event)


def test_history_and_snapshots_stay_within_their_bounds() -> None:
    conv = Transcript(max_messages=50, max_bytes=256 * 1024)
    for n in range(300):  # the issue: many runs with 32 KB prompts in one session
        _run(conv, n, "p" * 32_768, f"answer {n} " + "w " * 200)
    messages = conv.as_messages()
    size = sum(len(m["content"]) for m in messages)
    assert len(messages) <= 50
    assert size <= 256 * 1024
    assert conv.trimmed >= 600 - 50
    # The newest run is whole; what was dropped is the oldest.
    assert messages[-1]["content"].startswith("answer 299 ")
    assert messages[-2]["content"] == "p" * 32_768
    snap = json.dumps(conv.snapshot_events())
    assert len(snap) <= 256 * 1024 + 50 * 200


def test_the_latest_run_is_kept_whole_past_the_bounds() -> None:
    """Issue 18 item 6: a 10 MB answer used to be trimmed away when its run ended, so
    a viewer resuming from a snapshot lost it.  The bounds hold for the history
    before the latest run."""
    conv = Transcript(max_messages=2, max_bytes=1_000)
    _run(conv, 0, "old question", "old answer")
    _run(conv, 1, "q", "z" * 50_000)
    assert [m["content"] for m in conv.as_messages()] == ["q", "z" * 50_000]
    _run(conv, 2, "next", "short")
    assert [m["content"] for m in conv.as_messages()] == ["next", "short"]


def test_the_run_in_progress_is_never_trimmed() -> None:
    conv = Transcript(max_messages=2, max_bytes=1_000)
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    conv.apply_event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    for _ in range(500):
        conv.apply_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "xy"})
    snap = conv.snapshot_events()
    reopened = [e for e in snap if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert reopened == [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "xy" * 500}]
    conv.apply_event({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    assert conv.as_messages()[-1]["content"] == "xy" * 500


def test_history_is_not_copied_per_run() -> None:
    conv = Transcript()
    for n in range(3):
        _run(conv, n, "hello", "an answer")
    first, second = conv.history(), conv.history()
    assert first == second and len(first) == 6
    # Views share the text: each history builds small dicts, never copies of the text.
    assert all(a["content"] is b["content"] for a, b in zip(first, second, strict=True))


def test_streamed_text_is_joined_once_per_message() -> None:
    # O(text): deltas are kept as parts; content is built by one join at the END.
    conv = Transcript()
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    conv.apply_event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    for _ in range(10_000):
        conv.apply_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"})
    parts = conv.messages["m"].body._parts
    assert len(parts) == 10_000  # nothing concatenated per delta
    conv.apply_event({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    assert conv.as_messages()[-1]["content"] == "a" * 10_000
    assert len(conv.messages["m"].body._parts) == 1  # joined once, when read


def test_a_huge_upstream_delta_is_cut_into_bounded_events(serve: Serve, upstream: Upstream) -> None:
    big = "".join(chr(0x41 + i % 26) for i in range(1_000_000)) + "🙂" * 1000

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, chat_chunk({"content": big}))
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("huge"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    contents = [e["delta"] for e in got.events if e["type"] == "TEXT_MESSAGE_CONTENT"
                and not e["messageId"].endswith("-user")]
    assert "".join(contents) == big
    session = server.hub.sessions["huge"]
    logged = [len(e.get("delta", "")) for e in session.log.read(0, 10_000, 1 << 30)]
    assert max(logged) <= MAX_EVENT_DELTA
    assert max(len(json.dumps(b)) for b in got.batches) < 200_000


def test_trimming_never_leaves_a_tool_result_without_its_call() -> None:
    """Found by the 10-minute soak: history trimmed between an assistant message's
    tool call and its result restored the result as a nameless tool call."""
    from streampace.conversation.live_state import LiveState

    conv = Transcript(max_messages=3)
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    conv.apply_event({"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"})
    conv.apply_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "let me look"})
    conv.apply_event({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "search",
                "parentMessageId": "a"})
    conv.apply_event({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"})
    conv.apply_event({"type": "TOOL_CALL_END", "toolCallId": "c"})
    conv.apply_event({"type": "TEXT_MESSAGE_END", "messageId": "a"})
    conv.apply_event({"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": "c",
                "content": "found"})
    # The next run: the latest run is kept whole, so trimming reaches the one before.
    conv.apply_event({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    conv.apply_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r2"})
    for mid in ("b", "c2"):
        conv.apply_event({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"})
        conv.apply_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": mid})
        conv.apply_event({"type": "TEXT_MESSAGE_END", "messageId": mid})
    conv.apply_event({"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"})
    assert [m["id"] for m in conv.as_messages()] == ["b", "c2"]  # "res" went with "a"
    state = LiveState()
    state.apply(conv.snapshot_events())
    assert [i.kind for i in state.items()] == ["message", "message"]
