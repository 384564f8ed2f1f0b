"""The WebSocket endpoint: GET /ws/sessions/{session_id} (docs/protocol.md)."""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections import deque

from starlette.websockets import WebSocket

from streampace.session.client_messages import ClientError, parse_client_message

from .hub import Hub
from .store_errors import StoreError
from .viewer import CLOSE_ABUSE, CLOSE_BAD_ORIGIN, CLOSE_TOO_BIG, CLOSE_TRY_AGAIN, Viewer

__all__ = ["session_socket", "SESSION_ID_RE"]

log = logging.getLogger("streampace.server")

SESSION_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class _AbuseMeter:
    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._times: deque[float] = deque()

    def strike(self) -> bool:
        """Record a refused message; True when the limit is reached."""
        now = time.monotonic()
        self._times.append(now)
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()
        return len(self._times) >= self.limit


async def session_socket(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    config = hub.config
    origin = websocket.headers.get("origin")
    session_id = websocket.path_params.get("session_id", "")
    if not hub.origin_allowed(origin):
        log.warning("refused WebSocket from origin %r", origin)
        # Accept first: a browser only learns a close code from an open socket.
        await websocket.accept()
        await websocket.close(CLOSE_BAD_ORIGIN, "origin not allowed")
        return
    if not SESSION_ID_RE.fullmatch(session_id):
        await websocket.accept()
        await websocket.close(CLOSE_ABUSE, "bad session id")
        return
    if hub.shutting_down:
        await websocket.accept()
        await websocket.close(1001, "server shutting down")
        return
    await websocket.accept()
    session = hub.session(session_id)
    if session is None:
        log.warning("refused session %s: %d sessions in use", session_id, len(hub.sessions))
        await websocket.close(CLOSE_TRY_AGAIN, "too many sessions in use")
        return
    try:
        await session.ready()
    except StoreError as exc:
        log.warning("session %s: refused: %s", session_id, exc)
        await websocket.close(CLOSE_TRY_AGAIN, "session store unavailable")
        return
    viewer = Viewer(
        websocket,
        config.delivery,
        config.outbound_limit_bytes,
        on_send=getattr(websocket.app.state, "on_send", None),
        send_timeout_s=config.send_timeout_s,
    )
    hub.viewers.add(viewer)
    session.connect(viewer)
    abuse = _AbuseMeter(config.abuse_errors, config.abuse_window_s)
    try:
        while not viewer.closing:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            try:
                if text is None:
                    if len(message.get("bytes") or b"") > config.max_message_bytes:
                        viewer.close(CLOSE_TOO_BIG, "message too big")
                        break
                    raise ClientError("bad_json", "binary frames are not supported; send JSON text")
                if len(text) > config.max_message_bytes or (
                    len(text.encode("utf-8", "surrogatepass")) > config.max_message_bytes
                ):
                    # uvicorn enforces this at the frame level already; this guards other servers.
                    viewer.close(CLOSE_TOO_BIG, "message too big")
                    break
                refused = session.receive(viewer, parse_client_message(text,
                                                                       config.max_prompt_chars))
            except ClientError as exc:
                session.refuse(viewer, exc)
                refused = True
            if refused and abuse.strike():
                log.warning("session %s: closing an abusive viewer", session_id)
                viewer.close(CLOSE_ABUSE, "too many bad messages")
                break
    except Exception as exc:  # the peer vanished or sent garbage at the protocol level
        log.debug("session %s: socket ended: %r", session_id, exc)
    finally:
        session.detach(viewer)
        hub.viewers.discard(viewer)
        with contextlib.suppress(Exception):
            await viewer.stop()

