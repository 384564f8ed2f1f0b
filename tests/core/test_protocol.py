"""The one protocol module: every message of docs/protocol.md encoded and decoded
there, and the constants the JS bridge carries generated from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streampace.session import protocol, protocol_js
from streampace.session.limits import MAX_PROMPT_CHARS
from streampace.session.protocol import (
    ATTACH_LOG,
    Attached,
    Batch,
    CancelMessage,
    ClientError,
    CloseCode,
    ProtocolError,
    ResumeMessage,
    RunMessage,
    ServerError,
    decode_client_message,
    decode_server_message,
)

ROOT = Path(__file__).resolve().parents[2]
EVENT = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "héllo \U0001F375"}


def decoded_batch(text: str) -> Batch:
    message = decode_server_message(text)
    assert isinstance(message, Batch), message
    return message


def test_server_messages_round_trip() -> None:
    text = protocol.attached_message("demo-1", "3f0c9a1e5b7d2c48", protocol.ATTACH_LOG, 17)
    assert decode_server_message(text) == Attached("demo-1", "3f0c9a1e5b7d2c48", ATTACH_LOG, 17,
                                                   protocol.PROTOCOL_VERSION)
    assert decode_server_message(protocol.batch_message(42, [EVENT])) == Batch(42, [EVENT])
    assert decode_server_message(protocol.error_message("run_active", "busy")) == ServerError(
        "run_active", "busy")
    # The documented examples decode to what the docs say.
    assert decoded_batch(
        '{"through": 42, "events": [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1",'
        ' "delta": "Hello"}]}').through == 42


def test_client_messages_round_trip() -> None:
    def decode(text: str) -> object:
        return decode_client_message(text, MAX_PROMPT_CHARS)

    assert decode(protocol.resume_message(0)) == ResumeMessage(0, None)
    assert decode(protocol.resume_message(42, "e1")) == ResumeMessage(42, "e1")
    assert decode(protocol.run_message("Tell me about tea", "cjk_emoji")) == RunMessage(
        "Tell me about tea", "cjk_emoji")
    assert decode(protocol.run_message("hi")) == RunMessage("hi", None)
    assert decode(protocol.cancel_message()) == CancelMessage()
    with pytest.raises(ClientError) as err:
        decode('{"type": "resume", "after": -1}')
    assert err.value.code == "bad_field"


def test_hello_is_a_fresh_viewers_resume() -> None:
    assert protocol.resume_message(0) == protocol.HELLO
    assert decode_client_message(protocol.HELLO, 10) == ResumeMessage(0, None)


@pytest.mark.parametrize(("text", "code"), [
    ("{not json", "bad_json"),
    ("[1, 2]", "bad_message"),
    ('"text"', "bad_message"),
    ('{"events": []}', "bad_message"),
    ('{"through": true, "events": []}', "bad_message"),
    ('{"through": -1, "events": []}', "bad_message"),
    ('{"through": "3", "events": []}', "bad_message"),
    ('{"through": 3, "events": {}}', "bad_message"),
    ('{"type": "attached", "epoch": "", "mode": "log", "after": 0}', "bad_message"),
    ('{"type": "attached", "epoch": "' + "e" * 65 + '", "mode": "log", "after": 0}',
     "bad_message"),
    ('{"type": "attached", "epoch": "e", "mode": "replay", "after": 0}', "bad_message"),
    ('{"type": "attached", "epoch": "e", "mode": "log", "after": 1.5}', "bad_message"),
    ('{"type": "error", "code": 3, "message": "x"}', "bad_message"),
    ('{"type": "hello"}', "bad_message"),
    ('{"type": ["x"]}', "bad_message"),
    ('{"through": 1, "events": ' + "[" * 100 + "]" * 100 + "}", "too_deep"),
])
def test_bad_server_messages_are_refused_with_a_code(text: str, code: str) -> None:
    with pytest.raises(ProtocolError) as err:
        decode_server_message(text)
    assert err.value.code == code


def test_a_server_message_over_the_bound_is_refused_before_parsing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "MAX_SERVER_MESSAGE_BYTES", 100)
    small = protocol.batch_message(1, [EVENT])
    assert decoded_batch(small).through == 1
    with pytest.raises(ProtocolError) as err:
        decode_server_message(protocol.batch_message(1, [EVENT] * 10))
    assert err.value.code == "too_big"


def test_error_fields_are_bounded() -> None:
    msg = decode_server_message(protocol.error_message("c" * 500, "m" * 5000))
    assert isinstance(msg, ServerError) and len(msg.code) == 64 and len(msg.message) == 1000


def test_bridge_carries_the_generated_constants() -> None:
    bridge = (ROOT / "js_shim" / "bridge.js").read_text(encoding="utf-8")
    assert protocol_js.replace_block(bridge) == bridge, (
        "js_shim/bridge.js differs from streampace.session.protocol: run "
        "`python -m streampace.session.protocol_js js_shim/bridge.js`")
    assert json.dumps(protocol.HELLO) in bridge


def test_the_js_shim_reads_no_protocol_message() -> None:
    """No sniffing of messages in JS and no reconnect timing: none of these words
    in code outside the generated block (comments may explain)."""
    for name in ("bridge.js", "streampace.js", "boot.js", "kept.js", "lean_check.js"):
        source = (ROOT / "js_shim" / name).read_text(encoding="utf-8")
        start = source.find(protocol_js.BEGIN)
        if start >= 0:
            end = source.index(protocol_js.END) + len(protocol_js.END)
            source = source[:start] + source[end:]
        code = "\n".join(line.split("//")[0] for line in source.splitlines())
        for word in ("through", "attached", "epoch", "resume", "backoff", "Math.random",
                     "setTimeout", "JSON.parse(ev"):
            assert word not in code, f"{name} has {word!r} outside comments"


def test_the_server_names_close_codes_only_through_the_enum() -> None:
    """One list of close codes (CloseCode): no server module keeps its own int for one."""
    import importlib
    import pkgutil

    import streampace.server as server

    for info in pkgutil.iter_modules(server.__path__):
        module = importlib.import_module(f"streampace.server.{info.name}")
        own = [name for name, value in vars(module).items()
               if name.startswith("CLOSE_") and isinstance(value, int)]
        assert own == [], f"server/{info.name}.py: {own}"
    assert {CloseCode.BAD_REQUEST, CloseCode.BAD_ORIGIN, CloseCode.UNAUTHORIZED,
            CloseCode.UNKNOWN_SESSION} == protocol.FINAL_CLOSE_CODES


def test_shown_url_names_the_server_never_the_session_id() -> None:
    shown = protocol.shown_url
    assert shown("ws://h:8000/ws/sessions/Jw1uN2Xq8kq1rT0yPZc3aA") == "ws://h:8000/ws/sessions/…"
    assert shown("wss://h/app/ws/sessions/new") == "wss://h/app/ws/sessions/new"
    assert shown("ws://h/ws/sessions/abc?token=secret") == "ws://h/ws/sessions/…"
    reload = protocol.decode_client_message(protocol.RELOAD_HELLO, 100)
    assert reload == protocol.ResumeMessage(protocol.SNAPSHOT_AFTER)
