"""The session protocol (docs/protocol.md) in one place: its version, the text
of every server message, and how an attaching viewer is served.

The server's viewers and the page's simulated session both build their
messages here, so the two send the same bytes for the same session.

2: the `attached` message (session epoch) and `resume.epoch`.
"""

from __future__ import annotations

from typing import Any

from .compact_json import dumps_compact
from .log import SessionLog

__all__ = [
    "PROTOCOL_VERSION", "ATTACH_LIVE", "ATTACH_LOG", "ATTACH_SNAPSHOT",
    "attach_mode", "attached_message", "batch_message", "error_message",
]

PROTOCOL_VERSION = 2

# How delivery to a viewer starts (the `mode` of its `attached` message).
ATTACH_LIVE = "live"  # from now on: a `run` on an unattached socket
ATTACH_LOG = "log"  # replaying the log after the client's position
ATTACH_SNAPSHOT = "snapshot"  # the log cannot serve that position: one snapshot batch


def attach_mode(log: SessionLog, after: int | None, epoch: str | None,
                session_epoch: str) -> str:
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


def attached_message(session_id: str, epoch: str, mode: str, after: int) -> str:
    """The first message on every attached socket."""
    return dumps_compact({"type": "attached", "protocol": PROTOCOL_VERSION,
                          "sessionId": session_id, "epoch": epoch, "mode": mode,
                          "after": after})


def batch_message(through: int, events: list[dict[str, Any]]) -> str:
    return dumps_compact({"through": through, "events": events})


def error_message(code: str, message: str) -> str:
    """The reply to a refused client message (session/client_messages.py)."""
    return dumps_compact({"type": "error", "code": code, "message": message})
