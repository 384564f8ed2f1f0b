"""Security headers on every HTTP response."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from streampace.session.protocol import PROTOCOL_VERSION

__all__ = ["SecurityHeaders", "content_security_policy"]

_HOST_RE = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


def content_security_policy(host: str | None) -> str:
    """Only our own origin, plus what Pyodide and PyScript need to boot.

    - 'wasm-unsafe-eval': compiling the Pyodide WebAssembly module.
    No 'unsafe-eval': our pages boot Pyodide through js_shim/boot.js, not
    PyScript (whose core builds helpers with `Function(...)`), and no package we
    load needs the Emscripten glue to eval JavaScript.  No blob: sources either:
    the demo page and the embed boot and stream without them (tests/browser).
    """
    connect = ["'self'"]
    if host and _HOST_RE.match(host):
        connect += [f"ws://{host}", f"wss://{host}"]
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval'",
            "worker-src 'self'",
            f"connect-src {' '.join(connect)}",
            "img-src 'self' data:",
            "style-src 'self'",
            "font-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'self'",
        ]
    )


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = None
        for key, value in scope.get("headers", []):
            if key == b"host":
                host = value.decode("latin-1")
                break
        extra = [
            (b"content-security-policy", content_security_policy(host).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"cross-origin-opener-policy", b"same-origin"),
            # Lets a page find out by plain HTTP that a session server is here
            # (js_shim SessionSocket probeUrl), without a failing WebSocket handshake.
            (b"x-streampace-protocol", str(PROTOCOL_VERSION).encode()),
        ]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
