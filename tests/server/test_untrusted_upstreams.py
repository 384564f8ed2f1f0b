"""Issue 12 items 5 and 6: whatever an upstream sends, every viewer's stream is a
conformant AG-UI run; failures are RUN_ERROR with an upstream_* code, no traceback."""

from __future__ import annotations

import asyncio
import json
import logging
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.session.framing import RunFramer

from .conftest import (
    Serve,
    Upstream,
    UpstreamScript,
    assert_conformant,
    sse_event,
    sse_headers,
    sse_reply,
    watch_run,
    write_jsonl,
    write_raw,
)
from .test_upstreams import chat_chunk


def _framed_run(groups: list[list[dict]], code: str = "upstream_ended_early",
                message: str = "ended") -> list[dict]:
    """What a session logs for these source groups (the session's own loop)."""
    framer = RunFramer("t", "run-1", "hi")
    out: list[dict] = []
    for group in groups:
        out.extend(framer.feed_group(group))
        if framer.done:
            break
    out.extend(framer.finish(code, message))
    return out


GHOST = [
    {"type": "RUN_STARTED", "threadId": "x", "runId": "y"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "b"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "x", "runId": "y"},
]


def test_framer_keeps_what_it_framed_before_an_invalid_event_of_the_same_group() -> None:
    events = _framed_run([GHOST])
    assert_conformant(events, prompt="hi")
    model = [e for e in events if e.get("messageId") == "m"]
    assert [e["type"] for e in model] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                                         "TEXT_MESSAGE_END"]
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "upstream_protocol_error"
    assert "ghost" in events[-1]["message"]


def test_replay_with_an_invalid_event_in_one_timestamp_group_is_conformant(
        serve: Serve, tmp_path: Path) -> None:
    # The repro: all six events share one timestamp (one group).
    path = write_jsonl(tmp_path / "ghost.jsonl", [dict(e, timestamp=1000) for e in GHOST])
    server = serve(f"replay:{path}")
    got = asyncio.run(watch_run(server.ws_url("ghost"), prompt="hi"))
    assert_conformant(got.events, prompt="hi")
    assert got.events[-1]["code"] == "upstream_protocol_error"
    assert "".join(e.get("delta", "") for e in got.events
                   if e.get("messageId") == "m") == "a"


def test_openai_lone_surrogate_first_delta_gives_a_conformant_run(
        serve: Serve, upstream: Upstream) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, b'data: {"choices":[{"index":0,"delta":{"content":"\\udc00"}}]}\n\n')
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("sur"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["type"] == "RUN_ERROR"
    assert got.events[-1]["code"] == "upstream_protocol_error"


MALFORMED_TOOL_CALLS = {
    "index_list": [{"index": [0], "id": "c1", "function": {"name": "f", "arguments": "{}"}}],
    "function_string": [{"index": 0, "id": "c1", "function": "f()"}],
    "id_object": [{"index": 0, "id": {"x": 1}, "function": {"name": "f"}}],
    "name_list": [{"index": 0, "function": {"name": ["f"], "arguments": 3}}],
}


@pytest.mark.parametrize("case", sorted(MALFORMED_TOOL_CALLS))
def test_openai_malformed_tool_calls_are_an_upstream_protocol_error(
        serve: Serve, upstream: Upstream, case: str, caplog: pytest.LogCaptureFixture) -> None:
    calls = MALFORMED_TOOL_CALLS[case]

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, chat_chunk({"content": "before "}))
        write_raw(h, chat_chunk({"tool_calls": calls}))
        write_raw(h, chat_chunk({}, finish="tool_calls"))
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    with caplog.at_level(logging.WARNING, logger="streampace.server"):
        got = asyncio.run(watch_run(server.ws_url("tc"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["type"] == "RUN_ERROR"
    assert got.events[-1]["code"] == "upstream_protocol_error", got.events[-1]
    assert "tool_calls" in got.events[-1]["message"]
    assert not [r for r in caplog.records if r.exc_info], "no traceback for upstream garbage"


def test_agui_upstream_thread_and_run_ids_are_rewritten_to_the_sessions(
        serve: Serve, upstream: Upstream) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        for e in [
            {"type": "RUN_STARTED", "threadId": "their-thread", "runId": "their-run"},
            {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "ok"},
            {"type": "TEXT_MESSAGE_END", "messageId": "a"},
            {"type": "RUN_FINISHED", "threadId": "their-thread", "runId": "their-run"},
        ]:
            write_raw(h, sse_event(e))

    up = upstream(script)
    server = serve(f"agui:{up.url}")
    got = asyncio.run(watch_run(server.ws_url("ids"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    ours = up.requests[0]["body"]
    for e in got.events:
        if e["type"] in ("RUN_STARTED", "RUN_FINISHED"):
            assert (e["threadId"], e["runId"]) == ("ids", ours["runId"]), e
    assert ours["runId"].startswith("run-")


# -- property: any source output frames into a conformant run ----------------

_IDS = st.sampled_from(["m", "n", "ghost"])


@st.composite
def _source_event(draw: st.DrawFn) -> object:
    kind = draw(st.integers(0, 13))
    i = draw(_IDS)
    return [
        {"type": "RUN_STARTED", "threadId": "up", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": i, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": i, "delta": draw(st.text(max_size=3))},
        {"type": "TEXT_MESSAGE_END", "messageId": i},
        {"type": "TOOL_CALL_START", "toolCallId": i, "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": i, "delta": "{"},
        {"type": "TOOL_CALL_END", "toolCallId": i},
        {"type": "REASONING_START", "messageId": i},
        {"type": "REASONING_MESSAGE_START", "messageId": i, "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": i, "delta": "r"},
        {"type": "REASONING_MESSAGE_END", "messageId": i},
        {"type": "STEP_STARTED", "stepName": i},
        {"type": "RUN_FINISHED", "threadId": "up", "runId": "r"},
        draw(st.sampled_from([{"type": "NOPE"}, {"messageId": "m"}, "text", None,
                              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 3}])),
    ][kind]


@settings(max_examples=400, deadline=None)
@given(groups=st.lists(st.lists(_source_event(), max_size=6), max_size=6),
       ending=st.sampled_from(["ended_early", "cancelled"]))
def test_property_every_framed_run_is_conformant(groups: list, ending: str) -> None:
    out = _framed_run(groups, ending, ending)
    assert_conformant(out, prompt="hi")
    assert all(e.get("threadId", "t") == "t" and e.get("runId", "run-1") == "run-1"
               for e in out)


def test_snapshot_of_a_run_with_a_cut_off_tool_call_shows_what_live_viewers_saw() -> None:
    """Found by the 10-minute soak: a fresh viewer's snapshot had an extra empty
    message and lost the partial arguments of a tool call left open by RUN_ERROR."""
    from streampace.conversation.live_state import LiveState
    from streampace.conversation.transcript import Transcript

    framed = _framed_run([[
        {"type": "RUN_STARTED", "threadId": "x", "runId": "y"},
        {"type": "TOOL_CALL_START", "toolCallId": "cut", "toolCallName": "lookup"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "cut", "delta": '{"q": "half'},
    ]])
    assert_conformant(framed, prompt="hi")
    live, conv = LiveState(), Transcript()
    live.apply(framed)
    conv.apply(framed)
    restored = LiveState()
    restored.apply(conv.snapshot_events())

    def view(state: LiveState) -> list[tuple]:
        return [(i.kind, getattr(i, "text", None), getattr(i, "args", None))
                for i in state.items()]

    assert view(restored) == view(live)
    assert view(live)[-1] == ("tool_call", None, '{"q": "half')


# -- issue 18 item 11: upstream faults named right ---------------------------


def _assistant_text(events: list[dict]) -> str:
    user = {e["messageId"] for e in events
            if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "user"}
    return "".join(e["delta"] for e in events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] not in user)


def _agui_text_then(raw_tail: bytes) -> UpstreamScript:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        ids = {"threadId": body["threadId"], "runId": body["runId"]}
        for e in ({"type": "RUN_STARTED", **ids},
                  {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
                  {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "kept "}):
            write_raw(h, sse_event(e))
        write_raw(h, raw_tail)
        write_raw(h, sse_event({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
        write_raw(h, sse_event({"type": "RUN_FINISHED", **ids}))
    return script


@pytest.mark.parametrize("kind", ["agui", "openai"])
def test_invalid_utf8_from_an_upstream_ends_the_run_keeping_what_came_before(
        serve: Serve, upstream: Upstream, kind: str) -> None:
    if kind == "agui":
        script = _agui_text_then(
            b'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "bad \xff"}\n\n')
    else:
        def script(h: BaseHTTPRequestHandler, body: Any) -> None:
            sse_headers(h)
            write_raw(h, chat_chunk({"content": "kept "}))
            write_raw(h, b'data: {"choices":[{"index":0,"delta":{"content":"bad \xc3("}}]}\n\n')
            write_raw(h, chat_chunk({"content": "never"}, finish="stop"))
            write_raw(h, b"data: [DONE]\n\n")
    up = upstream(script)
    server = serve(f"{kind}:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("utf8"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["code"] == "upstream_protocol_error", got.events[-1]
    assert "invalid UTF-8" in got.events[-1]["message"]
    # Never replaced by U+FFFD and passed off as the answer; what came before stays.
    assert _assistant_text(got.events) == "kept "


@pytest.mark.parametrize("content", [42, ["a", "b"], {"text": "x"}, True])
def test_a_non_string_openai_content_is_a_protocol_error_not_dropped(
        serve: Serve, upstream: Upstream, content: Any) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, chat_chunk({"content": "kept "}))
        write_raw(h, chat_chunk({"content": content}))
        write_raw(h, chat_chunk({"content": "never"}, finish="stop"))
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("typed"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["code"] == "upstream_protocol_error", got.events[-1]
    assert "choices[0].delta.content must be a string" in got.events[-1]["message"]
    assert _assistant_text(got.events) == "kept "


@pytest.mark.parametrize(("delta", "field"), [
    ({"reasoning_content": 7}, "reasoning_content"),
    ({"tool_calls": {"index": 0}}, "tool_calls"),
])
def test_other_mistyped_openai_fields(
        serve: Serve, upstream: Upstream, delta: dict[str, Any], field: str) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, chat_chunk(delta))
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("typed2"), prompt="x"))
    assert got.events[-1]["code"] == "upstream_protocol_error"
    assert field in got.events[-1]["message"]


def test_an_upstream_event_over_the_size_bound_is_refused(serve: Serve, upstream: Upstream) -> None:
    # One SSE line past 1 MiB with no end: the server stops buffering at the bound.
    big = b'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "' \
        + b"y" * (3 * 1024 * 1024)
    up = upstream(_agui_text_then(big))
    server = serve(f"agui:{up.url}")
    got = asyncio.run(watch_run(server.ws_url("big"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["code"] == "upstream_protocol_error"
    assert "1048576 bytes" in got.events[-1]["message"]
    assert _assistant_text(got.events) == "kept "


def test_an_upstream_error_body_is_logged_not_shown(
        serve: Serve, upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        page = b"<html>internal-host-7.corp:8443 stack trace</html>"
        h.send_response(502)
        h.send_header("Content-Type", "text/html")
        h.send_header("Content-Length", str(len(page)))
        h.end_headers()
        h.wfile.write(page)

    up = upstream(script)
    server = serve(f"agui:{up.url}")
    with caplog.at_level(logging.WARNING, logger="streampace.server"):
        got = asyncio.run(watch_run(server.ws_url("body"), prompt="x"))
    assert got.events[-1]["code"] == "upstream_http_error"
    assert got.events[-1]["message"] == "upstream returned HTTP 502"
    assert "internal-host-7" not in json.dumps(got.events)
    assert any("internal-host-7" in r.getMessage() for r in caplog.records)


def test_no_viewer_message_from_a_source_error_carries_the_upstream_url(
        serve: Serve, upstream: Upstream) -> None:
    """Every failure an upstream can cause, one after another: the RUN_ERROR
    messages name the failure, never the upstream's address."""
    def status_500(h: BaseHTTPRequestHandler, b: Any) -> None:
        h.send_response(500)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def body_ends_short(h: BaseHTTPRequestHandler, b: Any) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Content-Length", "100")
        h.end_headers()
        h.close_connection = True
        write_raw(h, b"data: {}\n")

    failures = [
        status_500,
        sse_reply(b"<html>", content_type="text/html"),
        sse_reply(b"data: {nope\n\n"),
        sse_reply(b"data: \xfe\n\n"),
        sse_reply(sse_event({"type": "NOPE"})),
        body_ends_short,
    ]
    calls = iter(failures)
    up = upstream(lambda h, b: next(calls)(h, b))
    server = serve(f"agui:{up.url}/secret-path")
    codes = []
    for i in range(len(failures)):
        got = asyncio.run(watch_run(server.ws_url(f"f{i}"), prompt="x"))
        last = got.events[-1]
        codes.append(last["code"])
        assert str(up.port) not in last["message"] and "secret-path" not in last["message"]
    assert set(codes) <= {"upstream_http_error", "upstream_protocol_error",
                          "upstream_ended_early"}, codes


def test_runs_load_no_ca_bundle(
        serve: Serve, upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx loads the CA bundle for every client it makes (~60 ms of the event
    loop, which every other session waits for): runs share one TLS context made
    when the source is."""
    import ssl

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        ids = {"threadId": body["threadId"], "runId": body["runId"]}
        write_raw(h, sse_event({"type": "RUN_STARTED", **ids}))
        write_raw(h, sse_event({"type": "RUN_FINISHED", **ids}))

    up = upstream(script)
    server = serve(f"agui:{up.url}")
    loads = []
    real = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    for i in range(3):
        got = asyncio.run(watch_run(server.ws_url(f"tls{i}"), prompt="x"))
        assert got.events[-1]["type"] == "RUN_FINISHED"
    assert loads == []


def test_an_agent_functions_invalid_utf8_and_deep_json_text_are_protocol_errors() -> None:
    from streampace.server.agent_source import as_events
    from streampace.session.framing import UpstreamError

    for item in (b'{"type": "RUN_STARTED", "x": "\xff"}',
                 '{"type": "CUSTOM", "name": "n", "value": ' + "[" * 600 + "]" * 600 + "}",
                 "data: " + "[" * 600 + "]" * 600 + "\n\n"):
        with pytest.raises(UpstreamError) as info:
            as_events(item)
        assert info.value.code == "upstream_protocol_error"


def test_tool_call_arguments_past_the_bound_end_the_run_with_a_clear_error() -> None:
    from streampace.session.framing import MAX_TOOL_ARGS_CHARS

    part = "[" + "0," * (MAX_TOOL_ARGS_CHARS // 8 - 1)  # just under a quarter of the bound
    call = [{"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}]
    args = [{"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": part} for _ in range(5)]
    out = _framed_run([call, args])
    kept = [e for e in out if e["type"] == "TOOL_CALL_ARGS"]
    assert sum(len(e["delta"]) for e in kept) <= MAX_TOOL_ARGS_CHARS  # the 5th never logged
    assert sum(len(e["delta"]) for e in kept) == 4 * len(part)  # the first four all were
    assert out[-1]["type"] == "RUN_ERROR" and out[-1]["code"] == "upstream_protocol_error"
    assert "arguments over" in out[-1]["message"]
    # Arguments that never parsed: the call is left open for RUN_ERROR to end.
    assert not any(e["type"] == "TOOL_CALL_END" for e in out)
