"""Real upstream sources against fake upstream HTTP servers on loopback."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest
import websockets
from streampace.session.delivery import compact

from .conftest import (
    FakeUpstream,
    Received,
    Serve,
    Upstream,
    UpstreamScript,
    assert_conformant,
    recv_until,
    run_started_sse,
    runs_ended,
    send,
    split_runs,
    sse_event,
    sse_headers,
    sse_reply,
    watch_run,
    write_raw,
)

# -- AG-UI upstream ----------------------------------------------------------


def agui_events(body: dict) -> list[dict]:
    tid, rid = body["threadId"], body["runId"]
    return [
        {"type": "RUN_STARTED", "threadId": tid, "runId": rid},
        {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "Grüße "},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "👩🏽‍💻 and 漢字"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "search",
         "parentMessageId": "a1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q": "tea"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "ok"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"step": 1}},
        {"type": "RUN_FINISHED", "threadId": tid, "runId": rid},
    ]


def _model_part(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    user = {e["messageId"] for e in events
            if e["type"] == "TEXT_MESSAGE_START" and e.get("role") == "user"}
    return [e for e in events if e.get("messageId") not in user]


def test_agui_upstream_is_forwarded_as_is(serve: Serve, upstream: Upstream) -> None:
    sent: list[list[dict]] = []

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        events = agui_events(body)
        sent.append(events)
        for e in events:
            raw = sse_event(e)
            if "👩🏽" in raw.decode():
                # Split inside the 4-byte emoji, across two network writes.
                cut = raw.index("👩".encode()) + 2
                write_raw(h, raw[:cut], pause_s=0.05)
                write_raw(h, raw[cut:])
            else:
                write_raw(h, raw)

    up = upstream(script)
    server = serve(f"agui:{up.url}/agent")
    # The page always sends a scenario; sources other than demo ignore it.
    got = asyncio.run(watch_run(server.ws_url("ag"), prompt="make tea", scenario="agentic"))
    assert_conformant(got.events, prompt="make tea")
    # As sent, but the run's events carry the session's own id (the upstream was given
    # a thread id derived from it).
    expected = [{**e, "threadId": "ag"} if "threadId" in e else e for e in sent[0]]
    assert compact(_model_part(got.events)) == compact(expected)
    req = up.requests[0]
    assert req["path"] == "/agent"
    assert req["headers"]["Accept"] == "text/event-stream"
    body = req["body"]
    # A thread id derived from the session's id, not the id (a capability) itself.
    assert body["threadId"] == server.server.hub.config.upstream_thread_id("ag") != "ag"
    assert body["runId"] == got.events[0]["runId"]
    assert body["messages"][-1] == {"id": f"{body['runId']}-user", "role": "user",
                                    "content": "make tea"}


def test_agui_second_run_sends_the_history(serve: Serve, upstream: Upstream) -> None:
    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        for e in agui_events(body):
            write_raw(h, sse_event(e))

    up = upstream(script)
    server = serve(f"agui:{up.url}")

    async def two_runs() -> Received:
        async with websockets.connect(server.ws_url("hist")) as ws:
            await send(ws, type="resume", after=0)
            await send(ws, type="run", prompt="one")
            got = await recv_until(ws, Received(), runs_ended(1))
            await send(ws, type="run", prompt="two")
            return await recv_until(ws, got, runs_ended(2))

    got = asyncio.run(two_runs())
    assert_conformant(split_runs(got.events)[1], prompt="two")
    second = up.requests[1]["body"]["messages"]
    contents = [(m["role"], m.get("content")) for m in second]
    assert ("user", "one") in contents
    assert ("assistant", "Grüße 👩🏽‍💻 and 漢字") in contents
    assert contents[-1] == ("user", "two")
    assert second[-2]["role"] == "tool"


def _stall(h: BaseHTTPRequestHandler, up_release: threading.Event, first: bytes) -> None:
    sse_headers(h)
    write_raw(h, first)
    up_release.wait(10)


def _http_500(h: BaseHTTPRequestHandler, body: Any) -> None:
    h.send_response(500)
    h.send_header("Content-Length", "5")
    h.end_headers()
    h.wfile.write(b"boom!")


AGUI_FAILURES: dict[str, tuple[UpstreamScript, str, str]] = {
    "http_500": (_http_500, "upstream_http_error", "HTTP 500"),
    "not_sse": (sse_reply(b"<html>", content_type="text/html"), "upstream_protocol_error", "SSE"),
    "bad_json": (sse_reply(b"data: {nope\n\n"), "upstream_protocol_error", "invalid"),
    "unknown_event": (sse_reply(run_started_sse, sse_event({"type": "NOPE"})),
                      "upstream_protocol_error", "unknown event type"),
    "bad_nesting": (sse_reply(run_started_sse,
                              sse_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "z",
                                         "delta": "orphan"})),
                    "upstream_protocol_error", "not open"),
    "ends_early": (sse_reply(run_started_sse,
                             sse_event({"type": "TEXT_MESSAGE_START", "messageId": "m",
                                        "role": "assistant"}),
                             sse_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m",
                                        "delta": "half"})),
                   "upstream_ended_early", "ended"),
}


@pytest.mark.parametrize("case", sorted(AGUI_FAILURES))
def test_agui_failures_become_run_error(serve: Serve, upstream: Upstream, case: str) -> None:
    script, code, text = AGUI_FAILURES[case]
    up = upstream(script)
    server = serve(f"agui:{up.url}", stall_timeout_s=2.0)
    for attempt in range(2):  # the server and the session survive and run again
        got = asyncio.run(watch_run(server.ws_url(f"fail{attempt}"), prompt=f"try {attempt}"))
        run = got.events
        assert_conformant(run, prompt=f"try {attempt}")
        assert run[-1]["type"] == "RUN_ERROR"
        assert run[-1]["code"] == code
        assert text.lower() in run[-1]["message"].lower()


def test_agui_stall_becomes_run_error_timeout(serve: Serve, upstream: Upstream) -> None:
    holder: dict[str, FakeUpstream] = {}

    def script(h: BaseHTTPRequestHandler, b: Any) -> None:
        _stall(h, holder["up"].release, sse_event(
            {"type": "RUN_STARTED", "threadId": b["threadId"], "runId": b["runId"]}))

    up = upstream(script)
    holder["up"] = up
    server = serve(f"agui:{up.url}", stall_timeout_s=0.5)
    got = asyncio.run(watch_run(server.ws_url("stall"), prompt="wait"))
    assert_conformant(got.events, prompt="wait")
    assert got.events[-1]["code"] == "upstream_timeout"
    assert "stalled" in got.events[-1]["message"]


def test_refused_upstream_becomes_run_error(serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for kind in ("agui", "openai"):
        server = serve(f"{kind}:http://127.0.0.1:{port}/x", model="m")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="streampace.server"):
            got = asyncio.run(watch_run(server.ws_url("refused"), prompt="anyone?"))
        assert_conformant(got.events, prompt="anyone?")
        assert got.events[-1]["type"] == "RUN_ERROR"
        assert got.events[-1]["code"] == "upstream_unreachable"
        # Issue 18 item 11: the URL is the operator's, logged on the server, never
        # shown to the viewers (who all get this RUN_ERROR).
        assert str(port) not in json.dumps(got.events)
        assert "cannot connect to the upstream" in got.events[-1]["message"]
        assert any(f"127.0.0.1:{port}" in r.getMessage() for r in caplog.records)
        # The HTTP side of the server is still up.
        assert httpx.get(server.url + "nothing").status_code == 404


def test_logs_name_a_session_by_its_thread_id_never_its_key(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    # The id is the key to the conversation (docs/security.md): a log line that
    # holds it hands the conversation to whoever reads the logs.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = serve(f"agui:http://127.0.0.1:{port}/x", model="m")
    key = "a-secret-session-key-0123456789"
    with caplog.at_level(logging.DEBUG, logger="streampace.server"):
        got = asyncio.run(watch_run(server.ws_url(key), prompt="anyone?"))
    assert got.events[-1]["code"] == "upstream_unreachable"
    lines = [r.getMessage() for r in caplog.records]
    thread_id = server.hub.config.upstream_thread_id(key)
    assert any(thread_id in line for line in lines), lines  # the run's failure is logged
    assert not [line for line in lines if key in line]


# -- OpenAI-compatible upstream ----------------------------------------------


def chat_chunk(delta: dict, finish: str | None = None) -> bytes:
    return sse_event({"id": "c", "object": "chat.completion.chunk",
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def test_openai_stream_is_translated(
        serve: Serve, upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-test")

    def script(h: BaseHTTPRequestHandler, body: Any) -> None:
        sse_headers(h)
        write_raw(h, chat_chunk({"role": "assistant", "content": ""}))
        write_raw(h, chat_chunk({"reasoning_content": "Think "}))
        write_raw(h, chat_chunk({"reasoning_content": "hard."}))
        raw = chat_chunk({"content": "Olá 🙂 "})
        cut = raw.index("🙂".encode()) + 1  # split inside the emoji's UTF-8 bytes
        write_raw(h, raw[:cut], pause_s=0.05)
        write_raw(h, raw[cut:])
        write_raw(h, chat_chunk({"content": "日本"}))
        write_raw(h, chat_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                 "function": {"name": "lookup",
                                                              "arguments": '{"a":'}}]}))
        write_raw(h, chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}))
        write_raw(h, chat_chunk({}, finish="tool_calls"))
        write_raw(h, b": keep-alive comment\n\n")
        write_raw(h, b"data: [DONE]\n\n")

    up = upstream(script)
    server = serve(f"openai:{up.url}/v1", model="test-model", api_key_env="TEST_KEY")
    got = asyncio.run(watch_run(server.ws_url("oa"), prompt="go"))
    assert_conformant(got.events, prompt="go")
    types = [e["type"] for e in compact(_model_part(got.events))]
    assert types == [
        "RUN_STARTED",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    events = compact(_model_part(got.events))
    assert events[3]["delta"] == "Think hard."
    assert events[7]["delta"] == "Olá 🙂 日本"
    assert events[9]["toolCallName"] == "lookup" and events[9]["toolCallId"] == "call_1"
    assert events[10]["delta"] == '{"a":1}'
    req = up.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "test-model" and req["body"]["stream"] is True
    assert req["body"]["messages"][-1] == {"role": "user", "content": "go"}
    assert req["headers"]["Authorization"] == "Bearer sk-test"


def _openai_error_status(h: BaseHTTPRequestHandler, b: Any) -> None:
    payload = json.dumps({"error": {"message": "Incorrect API key provided"}}).encode()
    h.send_response(401)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(payload)))
    h.end_headers()
    h.wfile.write(payload)


OPENAI_FAILURES: dict[str, tuple[UpstreamScript, str, str]] = {
    "status_401": (_openai_error_status, "upstream_http_error", "Incorrect API key"),
    "error_chunk": (sse_reply(chat_chunk({"content": "a"}),
                              sse_event({"error": {"message": "overloaded"}})),
                    "upstream_http_error", "overloaded"),
    "no_done": (sse_reply(chat_chunk({"content": "cut"})),
                "upstream_ended_early", "before finishing"),
    "garbage": (sse_reply(b"data: {{{\n\n"), "upstream_protocol_error", "non-JSON"),
}


@pytest.mark.parametrize("case", sorted(OPENAI_FAILURES))
def test_openai_failures_become_run_error(serve: Serve, upstream: Upstream, case: str) -> None:
    script, code, text = OPENAI_FAILURES[case]
    up = upstream(script)
    server = serve(f"openai:{up.url}", model="m")
    got = asyncio.run(watch_run(server.ws_url("of"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert got.events[-1]["type"] == "RUN_ERROR"
    assert got.events[-1]["code"] == code
    assert text.lower() in got.events[-1]["message"].lower()


def test_openai_stall_mid_message_closes_it_before_run_error(
        serve: Serve, upstream: Upstream) -> None:
    holder: dict[str, FakeUpstream] = {}

    def script(h: BaseHTTPRequestHandler, b: Any) -> None:
        _stall(h, holder["up"].release, chat_chunk({"content": "partial answer"}))

    up = upstream(script)
    holder["up"] = up
    server = serve(f"openai:{up.url}", model="m", stall_timeout_s=0.5)
    got = asyncio.run(watch_run(server.ws_url("os"), prompt="x"))
    assert_conformant(got.events, prompt="x")
    assert [e["type"] for e in got.events[-2:]] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert got.events[-1]["code"] == "upstream_timeout"
