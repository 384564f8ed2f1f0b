"""The page session's socket: `SimulatedSession` is a transport with
js_shim/bridge.js's `SessionSocket` surface (`attach`, `detach`, `open`,
`send`, `close`, `drop`, `probe`), whose server is a `PageSession` running the
simulated model.

Like the JS socket it only moves text and reports what happened, in order
(client/connection.py lists the items); it never reconnects or resumes on its
own — the `SessionConnection` attached to it does.  Unlike the JS socket it
never exists before Python does, so it has no boot to bridge: it opens once a
sink is attached (on the next turn of the clock, as `new WebSocket` would) and
reports to that sink alone.  Keeping what arrives before Python is up, and
greeting the server on an open nobody is attached to yet, is js_shim/bridge.js's
`SessionSocket`'s alone.  Pure Python.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from streampace.client.page_session import PageSession, _Viewer
from streampace.clock import Timeout
from streampace.session.protocol import JS_CONSTANTS
from streampace.sim.timed_model import SimulatedModel

__all__ = ["SimulatedSession"]

Sink = Callable[[str, Any], None]

_FORCED = JS_CONSTANTS["forcedReconnect"]


class SimulatedSession:
    """A `SessionSocket` whose server is a `PageSession` running the simulated model."""

    def __init__(self, host: Any, session_id: str = "demo", *, speed: float = 1.0,
                 seed: int | None = None) -> None:
        self.host = host
        rng = random.Random(seed)
        model_seed = seed if seed is not None else rng.randrange(1 << 30)
        self.session = PageSession(host, session_id, SimulatedModel(speed, model_seed),
                                   random.Random(model_seed))
        self.url = f"sim:{session_id}"
        self._sink: Sink | None = None
        self._viewer: _Viewer | None = None
        self.closed = False
        self.opens = 0
        # Opens once attached, like `new WebSocket(url)`: on the next turn of the clock.
        self._opening = Timeout(host, self._connect)

    # -- the transport's surface ---------------------------------------------------
    def attach(self, sink: Sink) -> None:
        """Report to ``sink`` from now on; the first attach opens the socket."""
        first = self._sink is None and self.opens == 0
        self._sink = sink
        if first and not self.closed:
            self._opening.arm(0)

    def detach(self) -> None:
        self._sink = None

    def open(self) -> None:
        if not self.closed:
            self._opening.arm(0)

    def send(self, data: str) -> None:
        # Not open: nothing goes out (the connection sends only while open, and a
        # close report is on its way), as with the JS socket once attached.
        if self._viewer is not None:
            self.session.receive(self._viewer, data)

    def drop(self) -> None:
        """Lose the connection as a network failure would."""
        if self._viewer is None or self.closed:
            return
        self._disconnect()
        self._push("close", {"code": _FORCED["code"], "reason": _FORCED["reason"]})

    def retarget(self, url: str) -> None:
        pass  # one simulated session, whatever the URL says

    def probe(self) -> None:
        # The simulated server is always there (a handshake never fails).
        self._push("probe", {"reachable": True, "status": 200, "protocol": True})

    def close(self, code: int = 1000, reason: str = "client closed") -> None:
        if self.closed:
            return
        self.closed = True
        self._sink = None
        self._opening.cancel()
        self._disconnect()
        self.session.close()

    # -- state, for tests and the demo ------------------------------------------------
    @property
    def connected(self) -> bool:
        return self._viewer is not None

    @property
    def run_active(self) -> bool:
        return self.session.running

    def pending_events(self) -> int:
        """Events the connection's delivery buffer still holds."""
        buffer = self._viewer.buffer if self._viewer is not None else None
        return buffer.pending_events() if buffer is not None else 0

    # -- the connection ------------------------------------------------------------
    def _push(self, kind: str, data: Any) -> None:
        if self._sink is not None:  # detached: nobody listens any more
            self._sink(kind, data)

    def _connect(self) -> None:
        if self.closed:
            return
        self._disconnect()
        self.opens += 1
        self._viewer = self.session.connect(self._on_message)
        self._push("open", "")  # not greeted: the connection sends its resume

    def _on_message(self, text: str) -> None:
        self._push("message", text)

    def _disconnect(self) -> None:
        if self._viewer is not None:
            viewer, self._viewer = self._viewer, None
            self.session.disconnect(viewer)
