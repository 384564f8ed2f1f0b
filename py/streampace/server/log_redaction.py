"""Keep session ids out of the ASGI server's own log lines.

A session id is the key to its conversation (server/config.py names sessions in
our logs by a derived thread id instead).  Uvicorn logs every WebSocket handshake
with its path — ``"WebSocket /ws/sessions/<id>" [accepted]`` — so the id would
reach any log its INFO lines are kept in.  A filter on uvicorn's logger rewrites
those paths before any handler sees them; it is installed by ``create_app``, so
a mounted app gets it in the host's own server too.  uvicorn's own logging
setup (dictConfig) replaces handlers, not filters, so it survives that.
"""

from __future__ import annotations

import logging

__all__ = ["SessionPathFilter", "hide_session_ids", "redact_session_path", "SESSION_PATH"]

SESSION_PATH = "/ws/sessions/"
HIDDEN = "\N{HORIZONTAL ELLIPSIS}"
# The loggers the ASGI server writes handshakes to (uvicorn's websocket protocols
# log on "uvicorn.error"; "uvicorn.access" has the HTTP lines, off in `serve`).
SERVER_LOGGERS = ("uvicorn.error", "uvicorn.access")


def redact_session_path(text: str) -> str:
    """``text`` with what follows each ``/ws/sessions/`` (up to a space or a quote)
    replaced, except the literal ``new`` a page asks for a fresh session with."""
    out: list[str] = []
    rest = text
    while True:
        head, sep, tail = rest.partition(SESSION_PATH)
        out.append(head)
        if not sep:
            return "".join(out)
        end = len(tail)
        for stop in (" ", '"', "'"):
            at = tail.find(stop)
            if 0 <= at < end:
                end = at
        segment = tail[:end]
        out.append(sep + (segment if segment == "new" else HIDDEN))
        rest = tail[end:]


class SessionPathFilter(logging.Filter):
    """Rewrites session ids out of a record's message and string arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and SESSION_PATH in record.msg:
            record.msg = redact_session_path(record.msg)
        args = record.args
        if isinstance(args, tuple) and any(
                isinstance(a, str) and SESSION_PATH in a for a in args):
            record.args = tuple(redact_session_path(a) if isinstance(a, str) else a
                                for a in args)
        return True


def hide_session_ids() -> None:
    """Install the filter on the ASGI server's loggers (once each)."""
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SessionPathFilter) for f in logger.filters):
            logger.addFilter(SessionPathFilter())
