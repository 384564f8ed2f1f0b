"""Security headers on every HTTP response."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from streampace.session.protocol import PROTOCOL_VERSION

__all__ = ["SecurityHeaders", "content_security_policy"]

_HOST_RE = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


def content_security_policy(host: str | None, *, pyscript: bool = False) -> str:
    """Only our own origin, plus what Pyodide and PyScript need to boot.

    - 'wasm-unsafe-eval': compiling the Pyodide WebAssembly module.
    - 'unsafe-eval' only with `pyscript=True`, for the documents of PyScript
      pages (static.py decides which): @pyscript/core 0.7 builds its hook
      helpers with `Function(...)` on every boot. The embed tag and every other
      response go without it. No blob: sources either: the pages boot and
      stream without them (tests/browser).
    """
    connect = ["'self'"]
    if host and _HOST_RE.match(host):
        connect += [f"ws://{host}", f"wss://{host}"]
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval'" + (" 'unsafe-eval'" if pyscript else ""),
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
        csp = (b"content-security-policy", content_security_policy(host).encode())
        extra = [
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
                headers = list(message.get("headers", []))
                # An endpoint that set its own policy (static.py, for PyScript
                # pages) keeps it: a second header could only narrow it.
                if not any(k.lower() == csp[0] for k, _ in headers):
                    headers.append(csp)
                message["headers"] = [*headers, *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
