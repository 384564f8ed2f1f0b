"""Why a client connection is not connected, as a code a page can switch on
and a sentence a reader understands (docs/protocol.md, "Connection problems").

A browser tells a page very little: a close code and reason when the server
closed an open socket, and only 1006 when the handshake failed (no server, an
HTTP 404, a refused upgrade all look the same).  So a handshake failure is
explained by a plain HTTP request to the stream's URL (the transport's
``probe``): nothing answers, 404 without a streampace server behind it, or a
server that answers but refused the WebSocket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streampace.session.protocol import FINAL_CLOSE_CODES, CloseCode, shown_url

__all__ = ["Problem", "ProbeResult", "close_problem", "probe_problem", "parse_probe"]


@dataclass(frozen=True)
class Problem:
    code: str  # machine-readable, see docs/protocol.md
    message: str  # one sentence for a reader
    close_code: int | None = None
    reason: str = ""
    http_status: int | None = None
    final: bool = False  # reconnecting cannot help: the client stops
    report: bool = True  # False: nothing to tell the page (its own drop())

    def detail(self) -> dict[str, Any]:
        """The JSON-able fields of a `streampace:error` event and of stats."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.close_code is not None:
            out["closeCode"] = self.close_code
            out["reason"] = self.reason
        if self.http_status is not None:
            out["httpStatus"] = self.http_status
        return out


@dataclass(frozen=True)
class ProbeResult:
    """What a plain HTTP request to the stream's URL found."""

    reachable: bool  # False: the request failed (nothing answers, or the page may not ask)
    status: int | None = None  # None: a cross-origin answer the page may not read
    protocol: bool = False  # the answer carried X-Streampace-Protocol


_CLOSES: dict[int, tuple[str, str]] = {
    CloseCode.NORMAL: ("closed", "The server closed the connection"),
    CloseCode.GOING_AWAY: ("server_shutdown", "The server is shutting down"),
    CloseCode.ABNORMAL: ("connection_lost", "The connection was lost"),
    CloseCode.TOO_BIG: ("message_too_big",
                        "The server closed the connection: a message from this page was too big"),
    CloseCode.INTERNAL_ERROR: ("server_error", "The server closed the connection after an error"),
    CloseCode.SERVICE_RESTART: ("server_restart", "The server is restarting"),
    CloseCode.TRY_AGAIN_LATER: ("try_again_later",
                                "The server cannot take this session now (too many sessions, "
                                "or its session store is unavailable)"),
    CloseCode.FORCED_RECONNECT: ("forced_reconnect", "The page dropped the connection"),
    CloseCode.BAD_REQUEST: ("bad_request", "The server refused this session (a bad session "
                            "id, or too many refused messages)"),
    CloseCode.BAD_ORIGIN: ("origin_refused", "The server does not allow this page's origin "
                           "(streampace serve --allow-origin)"),
    CloseCode.POLICY: ("attach_timeout", "The server closed a connection that did not "
                       "attach in time"),
    CloseCode.UNAUTHORIZED: ("unauthorized", "The application did not let this page into "
                             "the session"),
    CloseCode.UNKNOWN_SESSION: ("unknown_session", "The server does not know this session "
                                "(it only serves sessions it made: ask for /ws/sessions/new)"),
    CloseCode.TOO_MANY: ("too_many", "The server refused: too many connections or sessions "
                         "from this address"),
    CloseCode.SLOW_CONSUMER: ("slow_consumer",
                              "The server disconnected this view: it fell too far behind"),
}


def close_problem(code: int, reason: str, opened: bool) -> Problem | None:
    """The problem a close reports; None for a handshake that failed without a
    word (1006 before open), which only a probe can explain."""
    if not opened and code == CloseCode.ABNORMAL:
        return None
    name, text = _CLOSES.get(code, ("closed", "The server closed the connection"))
    reason = reason[:123]  # a close reason is at most 123 bytes on the wire
    why = f"close {code}: {reason}" if reason else f"close {code}"
    return Problem(name, f"{text} ({why}).", close_code=code, reason=reason,
                   final=code in FINAL_CLOSE_CODES,
                   report=code != CloseCode.FORCED_RECONNECT)


def parse_probe(data: Any) -> ProbeResult:
    """A transport's probe report (a dict); anything malformed counts as unreachable."""
    if not isinstance(data, dict):
        return ProbeResult(False)
    status = data.get("status")
    if not (isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599):
        status = None
    return ProbeResult(data.get("reachable") is True, status, data.get("protocol") is True)


def probe_problem(probe: ProbeResult, url: str, *, handshake_tried: bool = True) -> Problem:
    """Why a handshake to ``url`` failed, from what a plain request found there.

    ``handshake_tried`` False: the transport probed first and opened no socket
    because no streampace server answered (js_shim/bridge.js ``probeUrl``).
    The message names the server and path, never the session id (shown_url).
    """
    url = shown_url(url)
    if not handshake_tried and probe.reachable and not probe.protocol:
        return Problem("no_server", f"No streampace server answers at {url} (HTTP "
                       f"{probe.status if probe.status is not None else 'answer unreadable'}, "
                       "no X-Streampace-Protocol header).", http_status=probe.status)
    if not probe.reachable:
        return Problem("no_server", f"Nothing answers at {url} (no server running there, or "
                       "the page's Content-Security-Policy does not allow connecting to it).",
                       close_code=int(CloseCode.ABNORMAL))
    if probe.status is None:
        return Problem("handshake_failed", f"A server answers at {url} but the WebSocket "
                       "handshake failed (the browser does not say why).",
                       close_code=int(CloseCode.ABNORMAL))
    if probe.status == 404 and not probe.protocol:
        return Problem("not_found", f"There is no stream at {url} (HTTP 404).",
                       close_code=int(CloseCode.ABNORMAL), http_status=404)
    what = "a streampace server" if probe.protocol else "a server that is not streampace"
    return Problem("handshake_failed", f"{what[0].upper()}{what[1:]} answers at {url} "
                   f"(HTTP {probe.status}) but refused the WebSocket handshake.",
                   close_code=int(CloseCode.ABNORMAL), http_status=probe.status)
