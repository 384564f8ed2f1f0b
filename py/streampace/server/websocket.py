"""The WebSocket endpoint: GET /ws/sessions/{session_id} (docs/protocol.md).

Admission comes first and touches no session (server/admission.py): the Origin,
the id (``new`` asks for a minted one), the address's open sockets, the host
application's ``authorize`` hook.  The socket then has ``attach_timeout_s`` to
send ``resume`` or ``run``; only that first attaching message opens (and, if
need be, creates) its session through the hub.  From there the socket decodes
messages and hands them to its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from starlette.websockets import WebSocket

from streampace.session.client_messages import (
    CancelMessage,
    ClientError,
    ClientMessage,
    RunMessage,
    check_cancel,
    parse_client_message,
)
from streampace.session.engine import refusal
from streampace.session.protocol import CloseCode

from .admission import (
    NEW_SESSION,
    SESSION_ID_RE,
    Refused,
    TokenBucket,
    client_key,
    mint_session_id,
)
from .hub import BUDGET_REASON, Hub
from .session import Session
from .store_errors import StoreError, StoreFull
from .viewer import Viewer
from .ws_protocol import GUARDS_EXTENSION

__all__ = ["session_socket", "SESSION_ID_RE"]

log = logging.getLogger("streampace.server")


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


async def _refuse(websocket: WebSocket, code: CloseCode, reason: str) -> None:
    # Accept first: a browser only learns a close code from an open socket.
    await websocket.accept()
    await websocket.close(code, reason)


async def _admit(hub: Hub, websocket: WebSocket, requested: str) -> tuple[str, bool]:
    """The session id this socket is for and whether it was minted; raises Refused."""
    headers = websocket.headers
    why = hub.origins.refusal(headers.get("origin"), headers.get("host"))
    if why is not None:
        log.warning("refused a WebSocket: %s", why)
        raise Refused(CloseCode.BAD_ORIGIN, "origin not allowed")
    minted = requested == NEW_SESSION
    if not minted and not SESSION_ID_RE.fullmatch(requested):
        raise Refused(CloseCode.BAD_REQUEST, "bad session id")
    if hub.shutting_down:
        raise Refused(CloseCode.GOING_AWAY, "server shutting down")
    session_id = mint_session_id() if minted else requested
    if hub.authorize is not None:
        try:
            allowed = await hub.authorize(websocket, session_id, minted)
        except Exception:
            log.exception("the authorize hook failed; refusing the socket")
            allowed = False
        if allowed is not True:
            raise Refused(CloseCode.UNAUTHORIZED, "not authorized")
    return session_id, minted


def _note_unguarded(hub: Hub, scope: Mapping[str, Any]) -> None:
    """Say once that the server below this app lacks streampace's guards: control
    frames, compression and the server's buffers are then the server's defaults
    (uvicorn's negotiate permessage-deflate and take 16 MiB messages)."""
    extensions = scope.get("extensions") or {}
    if GUARDS_EXTENSION in extensions or hub.warned_unguarded:
        return
    hub.warned_unguarded = True
    log.warning("this server runs streampace without its guards below ASGI (no control-frame "
                "budget; compression and message sizes as the server sets them): pass "
                "StreampaceApp.uvicorn_options() to uvicorn (docs/mount.md, docs/security.md)")


async def session_socket(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    config = hub.config
    _note_unguarded(hub, websocket.scope)
    client = client_key(websocket.scope, config.ipv6_prefix)
    try:
        session_id, minted = await _admit(hub, websocket,
                                          websocket.path_params.get("session_id", ""))
    except Refused as exc:
        await _refuse(websocket, exc.code, exc.reason)
        return
    if not hub.sockets.take(client):
        log.warning("refused a WebSocket from %s: %d open", client, hub.sockets[client])
        await _refuse(websocket, CloseCode.TOO_MANY, "too many connections from this address")
        return
    try:
        await websocket.accept()
        viewer = Viewer(
            websocket,
            config.delivery,
            config.outbound_limit_bytes,
            on_send=getattr(websocket.app.state, "on_send", None),
            send_timeout_s=config.send_timeout_s,
        )
        hub.add_viewer(viewer)
        session: Session | None = None
        try:
            session = await _serve(hub, websocket, viewer, session_id, minted, client)
        except Exception as exc:  # the peer vanished or sent garbage at the protocol level
            log.debug("session %s: socket ended: %r", config.log_name(session_id), exc)
        finally:
            if session is not None:
                session.detach(viewer)
            hub.viewers.discard(viewer)
            if viewer.close_code is not None:
                hub.closes[viewer.close_code] += 1
            with contextlib.suppress(Exception):
                await viewer.stop()
    finally:
        hub.sockets.release(client)


async def _serve(hub: Hub, websocket: WebSocket, viewer: Viewer, session_id: str,
                 minted: bool, client: str) -> Session | None:
    """Read the socket until it ends; the session it attached to, if any."""
    config = hub.config
    abuse = _AbuseMeter(config.abuse_errors, config.abuse_window_s)
    loop = asyncio.get_running_loop()
    rate = TokenBucket(config.messages_burst, config.messages_per_s, loop.time())
    session: Session | None = None
    deadline = loop.time() + config.attach_timeout_s
    while not viewer.closing:
        attached = session is not None and viewer in session.viewers
        try:
            async with asyncio.timeout_at(None if attached else deadline):
                message = await _receive(websocket, viewer)
        except TimeoutError:
            log.info("closing a socket that did not attach within %.0f s",
                     config.attach_timeout_s)
            viewer.close(CloseCode.POLICY, "no resume or run received in time")
            break
        if message is None or message["type"] == "websocket.disconnect":
            break  # closed by us (a stalled peer sends nothing more), or by the peer
        if not rate.take(1, loop.time()):
            log.warning("session %s: closing a socket that sends too many messages",
                        config.log_name(session_id))
            viewer.close(CloseCode.POLICY, "too many messages")
            break
        try:
            msg = _decode(message, config.max_message_bytes, config.max_prompt_chars)
            if session is None and isinstance(msg, CancelMessage) and not (
                    session_id in hub.sessions or await _exists(hub, session_id)):
                # Nothing runs in a session that does not exist: no need to make it.
                check_cancel(running=False)
        except _TooBig:
            viewer.close(CloseCode.TOO_BIG, "message too big")
            break
        except ClientError as exc:
            # Refused as the engine refuses (the page's session sends the same text).
            viewer.send_text(refusal(viewer, exc).text)
            refused = True
        else:
            if session is None:
                session = await _open(hub, viewer, session_id, minted, client)
                if session is None:
                    break
            if isinstance(msg, RunMessage) and not hub.room_to_grow():
                # Over the byte budget: no new run; what the session has stays
                # (its viewers keep it, late ones get it).
                viewer.send_error("server_busy", BUDGET_REASON)
                refused = False
            else:
                refused = session.receive(viewer, msg)
        if refused and abuse.strike():
            log.warning("session %s: closing an abusive viewer", config.log_name(session_id))
            viewer.close(CloseCode.BAD_REQUEST, "too many bad messages")
            break
    return session


async def _open(hub: Hub, viewer: Viewer, session_id: str, minted: bool,
                client: str) -> Session | None:
    """Open (or create) the session and bind the socket to it; None: closed instead."""
    name = hub.config.log_name(session_id)
    try:
        session = await hub.open(session_id, client, minted)
    except Refused as exc:
        log.warning("refused session %s for %s: %s", name, client, exc.reason)
        viewer.close(exc.code, exc.reason)
        return None
    except StoreError as exc:
        log.warning("session %s: refused: %s", name, exc)
        viewer.close(CloseCode.TRY_AGAIN_LATER, "session store unavailable")
        return None
    try:
        await session.ready()
    except StoreFull as exc:
        log.warning("session %s: refused: %s", name, exc)
        hub.forget(session)
        viewer.close(CloseCode.TRY_AGAIN_LATER, "too many sessions in use")
        return None
    except StoreError as exc:
        log.warning("session %s: refused: %s", name, exc)
        viewer.close(CloseCode.TRY_AGAIN_LATER, "session store unavailable")
        return None
    session.connect(viewer)
    return session


async def _receive(websocket: WebSocket, viewer: Viewer) -> Mapping[str, Any] | None:
    """The next message, or None once the viewer is closed: a peer that stopped
    reading may never send again, and the socket's resources go only when this
    handler returns."""
    receiving = asyncio.ensure_future(websocket.receive())
    closed = asyncio.ensure_future(viewer.closed.wait())
    try:
        await asyncio.wait((receiving, closed), return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()
        if not receiving.done():
            receiving.cancel()
    if receiving.done() and not receiving.cancelled():
        return receiving.result()
    return None


async def _exists(hub: Hub, session_id: str) -> bool:
    try:
        return await hub.store.exists(session_id)
    except StoreError:
        return True  # let opening it say what is wrong


class _TooBig(Exception):
    pass


def _decode(message: Mapping[str, Any], max_bytes: int, max_prompt: int) -> ClientMessage:
    """One frame's client message; _TooBig or ClientError."""
    text = message.get("text")
    if text is None:
        if len(message.get("bytes") or b"") > max_bytes:
            raise _TooBig
        raise ClientError("bad_json", "binary frames are not supported; send JSON text")
    if len(text) > max_bytes or len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        # uvicorn enforces this at the frame level already; this guards other servers.
        raise _TooBig
    return parse_client_message(text, max_prompt)
