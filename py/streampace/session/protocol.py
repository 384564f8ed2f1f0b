"""The session protocol (docs/protocol.md) in one place: its constants, the
text of every message in both directions, and how an attaching viewer is served.

- Server messages (`attached`, batch, `error`) are encoded here for the server
  and the page's simulated session, and decoded here for the page's client
  (`decode_server_message`).
- Client messages (`resume`, `run`, `cancel`) are encoded here for the page
  (and tests, benchmarks); the server decodes and refuses them with
  `session/client_messages.py`, re-exported here as `decode_client_message`.
- The constants the JS bridge needs are written into `js_shim/bridge.js` from
  `JS_CONSTANTS` (`python -m streampace.session.protocol_js`; a test compares).

Every decode of outside text goes through `streampace.bounded_json.loads`.

2: the `attached` message (session epoch) and `resume.epoch`.
3: snapshots in parts (a batch's `more`), sessions the server mints
   (`/ws/sessions/new`), close codes 1008, 4401, 4404, 4429.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any, TypeGuard
from urllib.parse import urlsplit, urlunsplit

from streampace.bounded_json import DEFAULT_MAX_DEPTH, JsonLimitError
from streampace.bounded_json import loads as bounded_loads

from .client_messages import (
    CancelMessage,
    ClientError,
    ClientMessage,
    ResumeMessage,
    RunMessage,
)
from .client_messages import parse_client_message as decode_client_message
from .compact_json import dumps_compact
from .log import SessionLog

__all__ = [
    "PROTOCOL_VERSION", "PROTOCOL_HEADER", "AttachMode", "ATTACH_LIVE", "ATTACH_LOG",
    "ATTACH_SNAPSHOT", "ATTACH_MODES", "CloseCode", "FINAL_CLOSE_CODES", "NEW_SESSION",
    "minted_url", "MAX_EPOCH_CHARS",
    "MAX_SERVER_MESSAGE_BYTES", "MAX_SERVER_MESSAGE_DEPTH", "HELLO", "JS_CONSTANTS",
    "RELOAD_HELLO", "SNAPSHOT_AFTER", "shown_url",
    "Attached", "Batch", "ServerError", "ServerMessage", "ProtocolError",
    "attach_mode", "attached_message", "batch_message", "error_message",
    "decode_server_message", "resume_message", "run_message", "cancel_message",
    "decode_client_message", "ClientMessage", "ClientError", "ResumeMessage", "RunMessage",
    "CancelMessage",
]

PROTOCOL_VERSION = 3
# On every HTTP response of a streampace server: a plain request finds out
# whether one is there (the demo's probe, the client's handshake diagnosis).
PROTOCOL_HEADER = "X-Streampace-Protocol"

class AttachMode(StrEnum):
    """How delivery to a viewer starts (the `mode` of its `attached` message)."""

    LIVE = "live"  # from now on: a `run` on an unattached socket
    LOG = "log"  # replaying the log after the client's position
    SNAPSHOT = "snapshot"  # the log cannot serve that position: one snapshot batch


ATTACH_LIVE, ATTACH_LOG, ATTACH_SNAPSHOT = AttachMode.LIVE, AttachMode.LOG, AttachMode.SNAPSHOT
ATTACH_MODES = tuple(AttachMode)

MAX_EPOCH_CHARS = 64

# A client's bound on one server message.  The largest legitimate one is a
# snapshot batch: the kept history (limits.HISTORY_BYTES, 4 MiB of text, up to
# 6x as JSON escapes) plus the run in progress.  Depth: an event's own bound
# plus the batch envelope (object, events array).
MAX_SERVER_MESSAGE_BYTES = 32 * 1024 * 1024
MAX_SERVER_MESSAGE_DEPTH = DEFAULT_MAX_DEPTH + 2


class CloseCode(IntEnum):
    """WebSocket close codes with a meaning in this protocol."""

    NORMAL = 1000  # the client closed
    GOING_AWAY = 1001  # the server is shutting down
    ABNORMAL = 1006  # never sent: what a browser reports for a failed or cut connection
    TOO_BIG = 1009  # a client message over the server's limit
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    POLICY = 1008  # the socket sent no resume or run within the server's attach timeout
    TRY_AGAIN_LATER = 1013  # too many sessions, the memory budget, or the store is unreachable
    FORCED_RECONNECT = 4000  # the page's own drop() (the demo's "forced reconnect")
    BAD_REQUEST = 4400  # bad session id, or repeated refused messages
    UNAUTHORIZED = 4401  # the host application's authorize hook refused the socket
    BAD_ORIGIN = 4403  # the page's Origin is not allowed
    UNKNOWN_SESSION = 4404  # an id the server does not know (it mints ids: ask for a new one)
    SLOW_CONSUMER = 4408  # the viewer fell too far behind; it may resume
    TOO_MANY = 4429  # this address holds too many sockets or sessions


# After these, reconnecting is useless: the same request gets the same answer
# (an origin not on the allowlist, a malformed or unknown session id, a refusal
# by the application).  A connection that asked for a minted id goes back to
# asking for a new one on UNKNOWN_SESSION instead (client/connection.py).
FINAL_CLOSE_CODES = frozenset({CloseCode.BAD_REQUEST, CloseCode.BAD_ORIGIN,
                               CloseCode.UNAUTHORIZED, CloseCode.UNKNOWN_SESSION})

# The last path segment of a stream URL that asks the server for a new session
# with an id it mints (`/ws/sessions/new`); the `attached` message names the id.
NEW_SESSION = "new"


# -- server -> client -----------------------------------------------------------

@dataclass(frozen=True)
class Attached:
    session_id: str
    epoch: str
    mode: AttachMode
    after: int
    protocol: int


@dataclass(frozen=True)
class Batch:
    through: int
    events: list[Any]  # raw: the client validates each event (conversation.events)
    more: bool = False  # a snapshot part: the snapshot continues in the next batch


@dataclass(frozen=True)
class ServerError:
    code: str
    message: str


ServerMessage = Attached | Batch | ServerError


class ProtocolError(ValueError):
    """A server message the client cannot use; ``code`` is ``bad_json``,
    ``too_big``, ``too_deep`` or ``bad_message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def attach_mode(log: SessionLog, after: int | None, epoch: str | None,
                session_epoch: str) -> AttachMode:
    """How to serve a viewer that resumes after seq ``after`` of ``epoch``.

    Positions of another epoch mean nothing here, and a log that no longer
    reaches back to ``after + 1`` (or not yet up to ``after``) cannot replay
    them: those viewers get a snapshot.
    """
    if after is None:
        return ATTACH_LIVE
    if (epoch is None or epoch == session_epoch) and log.covers(after):
        return ATTACH_LOG
    return ATTACH_SNAPSHOT


def attached_message(session_id: str, epoch: str, mode: AttachMode, after: int) -> str:
    """The first message on every attached socket."""
    return dumps_compact({"type": "attached", "protocol": PROTOCOL_VERSION,
                          "sessionId": session_id, "epoch": epoch, "mode": mode,
                          "after": after})


def batch_message(through: int, events: list[dict[str, Any]], more: bool = False) -> str:
    """A batch; ``more``: a part of a snapshot that continues in the next batch (same
    ``through``; session/snapshot.py)."""
    if more:
        return dumps_compact({"through": through, "events": events, "more": True})
    return dumps_compact({"through": through, "events": events})


def error_message(code: str, message: str) -> str:
    """The reply to a refused client message (session/client_messages.py)."""
    return dumps_compact({"type": "error", "code": code, "message": message})


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def decode_server_message(text: str) -> ServerMessage:
    """One server message, checked field by field; ProtocolError otherwise.

    Batches have no `type` and errors no `through`, so `"type" in msg` tells
    them apart (docs/protocol.md).
    """
    try:
        msg = bounded_loads(text, max_bytes=MAX_SERVER_MESSAGE_BYTES,
                            max_depth=MAX_SERVER_MESSAGE_DEPTH)
    except JsonLimitError as exc:
        raise ProtocolError(exc.reason, str(exc)) from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_message", "not a JSON object")
    kind = msg.get("type")
    if kind is None:
        through, events = msg.get("through"), msg.get("events")
        if not _is_count(through) or not isinstance(events, list):
            raise ProtocolError("bad_message",
                                "a batch needs an integer 'through' >= 0 and an 'events' array")
        return Batch(through, events, msg.get("more") is True)
    if kind == "attached":
        epoch, mode, after = msg.get("epoch"), msg.get("mode"), msg.get("after")
        if not (isinstance(epoch, str) and 0 < len(epoch) <= MAX_EPOCH_CHARS):
            raise ProtocolError("bad_message", "'attached' without a valid epoch")
        if mode not in ATTACH_MODES or not _is_count(after):
            raise ProtocolError("bad_message", "'attached' with a bad mode or after")
        session_id = msg.get("sessionId")
        version = msg.get("protocol")
        return Attached(session_id if isinstance(session_id, str) else "", epoch,
                        AttachMode(mode), after,
                        version if _is_count(version) else 0)
    if kind == "error":
        code, message = msg.get("code"), msg.get("message")
        if not isinstance(code, str) or not isinstance(message, str):
            raise ProtocolError("bad_message", "'error' needs a string code and message")
        return ServerError(code[:64], message[:1000])
    shown = kind[:40] if isinstance(kind, str) else type(kind).__name__
    raise ProtocolError("bad_message", f"unknown server message type {shown!r}")


# -- client -> server -------------------------------------------------------------

def resume_message(after: int, epoch: str | None = None) -> str:
    """Attach after seq ``after`` of ``epoch`` (None: a fresh viewer, or no epoch seen)."""
    msg: dict[str, Any] = {"type": "resume", "after": after}
    if epoch is not None:
        msg["epoch"] = epoch
    return dumps_compact(msg)


def run_message(prompt: str, scenario: str | None = None) -> str:
    msg: dict[str, Any] = {"type": "run", "prompt": prompt}
    if scenario is not None:
        msg["scenario"] = scenario
    return dumps_compact(msg)


def cancel_message() -> str:
    return dumps_compact({"type": "cancel"})


def minted_url(asked: str, session_id: str) -> str | None:
    """The stream URL of a session the server minted for a socket that asked for a
    new one at ``asked`` (its path ends in ``/new``): the same URL with the id in
    place of ``new``.  None when ``asked`` named its own session, or the id is
    not one the server could have minted."""
    parts = urlsplit(asked)
    base, _, last = parts.path.rpartition("/")
    if last != NEW_SESSION or not SESSION_ID_RE.fullmatch(session_id):
        return None
    return urlunsplit(parts._replace(path=f"{base}/{session_id}"))


def shown_url(url: str) -> str:
    """``url`` as a message may show it: the server and the stream's path with
    the session id (the key to the conversation, docs/security.md) left out,
    and no query.  ``ws://host:8000/ws/sessions/Jw1u…`` -> ``ws://host:8000/ws/sessions/…``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "the stream's server"
    base, _, last = parts.path.rpartition("/")
    path = parts.path if last in ("", NEW_SESSION) else f"{base}/…"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


# A session id on the wire: what the server accepts in a URL and mints.
SESSION_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


# What a socket sends by itself on an open that happens before the page's
# Python has attached to it (js_shim/bridge.js SessionSocket): a fresh
# viewer's resume.  Position 0 is exact there: a socket receives nothing
# before its first open, and it does not reconnect before Python attaches.
HELLO = resume_message(0)
# A position past the end of any log: a `resume` after it is answered with a
# snapshot (docs/protocol.md).  A page that reloads and resumes the session it
# remembered asks this way: what it showed appears at once, a running answer
# goes on from where the server is, and nothing is replayed twice.
SNAPSHOT_AFTER = 2**53 - 1  # the largest integer JSON parsers agree on
RELOAD_HELLO = resume_message(SNAPSHOT_AFTER)

# What js_shim/bridge.js needs, written into its generated block
# (streampace.session.protocol_js); nothing else of the protocol is in JS.
JS_CONSTANTS: dict[str, Any] = {
    "version": PROTOCOL_VERSION,
    "hello": HELLO,
    "reloadHello": RELOAD_HELLO,
    "header": PROTOCOL_HEADER.lower(),
    "forcedReconnect": {"code": int(CloseCode.FORCED_RECONNECT), "reason": "forced reconnect"},
    "normalClose": {"code": int(CloseCode.NORMAL), "reason": "client closed"},
}
