"""The page session's socket: `SimulatedSession` has js_shim/bridge.js's
`SessionSocket` surface (`attach`, `send`, `drop`, `close`), with a
`PageSession` running the simulated model as its server.

On every (re)connect it sends `resume` after the last `through` it received;
`drop()` behaves like a lost connection, and after a backoff with jitter it
reconnects.  Pure Python.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from streampace.session.backoff import backoff_delay_ms
from streampace.sim.page_session import PageSession, _Viewer
from streampace.sim.timed_model import SimulatedModel

__all__ = ["SimulatedSession"]

Sink = Callable[[str, Any], None]

_THROUGH = re.compile(r'\{"through":(\d+)')


class SimulatedSession:
    """A `SessionSocket` whose server is a `PageSession` running the simulated model."""

    def __init__(self, host: Any, session_id: str = "demo", *, speed: float = 1.0,
                 seed: int | None = None, reconnect_base_ms: float = 250) -> None:
        self.host = host
        self._rng = random.Random(seed)
        model_seed = seed if seed is not None else self._rng.randrange(1 << 30)
        self.session = PageSession(host, session_id, SimulatedModel(speed, model_seed),
                                   random.Random(model_seed))
        self.reconnect_base_ms = reconnect_base_ms
        self._sink: Sink | None = None
        self._backlog: list[tuple[str, Any]] = []
        self._viewer: _Viewer | None = None
        self._pending_sends: list[str] = []
        self.last_through = 0
        self.epoch: str | None = None
        self._attempt = 0
        self._reconnect_timer: Any = None
        self.closed = False
        self.opens = 0
        self._open_timer = host.request_timeout(self._connect, 0)

    # -- socket surface -----------------------------------------------------
    def attach(self, sink: Sink) -> None:
        items, self._backlog = self._backlog, []
        self._sink = sink
        for kind, data in items:
            sink(kind, data)

    def detach(self) -> None:
        self._sink = None

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

    def send(self, data: str) -> None:
        if self._viewer is not None:
            self.session.receive(self._viewer, data)
        elif not self.closed:
            self._pending_sends.append(data)  # sent after the next resume, as the JS socket does

    def drop(self) -> None:
        """Lose the connection as a network failure would."""
        if self._viewer is None or self.closed:
            return
        self._disconnect()
        self._emit("close", json.dumps({"code": 4000, "reason": "forced reconnect",
                                        "wasOpen": True}))
        self._schedule_reconnect()

    def close(self) -> None:
        if self.closed:
            return
        was_open = self._viewer is not None
        self.closed = True
        self._disconnect()
        for timer in (self._open_timer, self._reconnect_timer):
            if timer is not None:
                self.host.cancel_timeout(timer)
        self._open_timer = self._reconnect_timer = None
        self.session.close()
        if was_open:
            self._emit("close", json.dumps({"code": 1000, "reason": "client closed",
                                            "wasOpen": True}))

    # -- the connection --------------------------------------------------------
    def _emit(self, kind: str, data: Any) -> None:
        if self._sink is not None:
            self._sink(kind, data)
        else:
            self._backlog.append((kind, data))

    def _connect(self) -> None:
        self._open_timer = self._reconnect_timer = None
        if self.closed:
            return
        self._attempt = 0
        self.opens += 1
        self._viewer = self.session.connect(self._on_message)
        self._emit("open", str(self.opens))
        resume: dict[str, Any] = {"type": "resume", "after": self.last_through}
        if self.epoch is not None:
            resume["epoch"] = self.epoch
        self.send(json.dumps(resume))
        sends, self._pending_sends = self._pending_sends, []
        for data in sends:
            self.send(data)

    def _on_message(self, text: str) -> None:
        # Position and epoch, as the JS socket reads them, for the next resume.
        m = _THROUGH.match(text)
        if m:
            self.last_through = max(self.last_through, int(m.group(1)))
        elif text.startswith('{"type":"attached"'):
            epoch = json.loads(text).get("epoch")
            if self.epoch is not None and epoch != self.epoch:
                self.last_through = 0
            self.epoch = epoch
        self._emit("message", text)

    def _disconnect(self) -> None:
        if self._viewer is not None:
            viewer, self._viewer = self._viewer, None
            self.session.disconnect(viewer)

    def _schedule_reconnect(self) -> None:
        delay = backoff_delay_ms(self._attempt, self.reconnect_base_ms, rng=self._rng)
        self._attempt += 1
        self._emit("reconnecting", json.dumps({"attempt": self._attempt,
                                               "delayMs": round(delay)}))
        self._reconnect_timer = self.host.request_timeout(self._connect, delay)
