"""In-page simulated session: the simulated model behind a protocol-v1 "socket".

For the static-files use (no streampace server), this stands in for both the
server and the WebSocket: `run` plays `streampace.sim.simulate(...)` on real
timers into a session log, a core `DeliveryBuffer` batches what the viewer gets
(bursts every <= 150 ms, first delta at once), and the viewer receives exactly
the `{"through": n, "events": [...]}` text messages a server would send. It has
the `SessionSocket` surface (`attach`, `send`, `drop`, `close`), so the page's
client code is the same for both. `drop()` behaves like a lost connection:
batches stop, then after a backoff with jitter the viewer reconnects and resumes
after the last `through` it received. Pure Python; timers come from a FrameHost.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from streampace.delivery import Batch, DeliveryBuffer
from streampace.sim import SCENARIOS, simulate

__all__ = ["SimulatedSession", "backoff_delay_ms"]

Sink = Callable[[str, Any], None]

_OPENERS = {
    "TEXT_MESSAGE_START": ("TEXT_MESSAGE_END", "messageId"),
    "REASONING_MESSAGE_START": ("REASONING_MESSAGE_END", "messageId"),
    "REASONING_START": ("REASONING_END", "messageId"),
    "TOOL_CALL_START": ("TOOL_CALL_END", "toolCallId"),
}
_CLOSERS = {end: start for start, (end, _key) in _OPENERS.items()}


def backoff_delay_ms(attempt: int, base_ms: float = 250, cap_ms: float = 10_000,
                     rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: uniform in [ceiling/2, ceiling]."""
    ceiling = min(cap_ms, base_ms * 2 ** attempt)
    return ceiling / 2 + (rng or random).random() * ceiling / 2


class SimulatedSession:
    def __init__(self, host: Any, session_id: str = "demo", *, speed: float = 1.0,
                 seed: int | None = None, reconnect_base_ms: float = 250) -> None:
        self.host = host
        self.session_id = session_id
        self.speed = speed
        self._rng = random.Random(seed)
        self._seed = seed
        self.reconnect_base_ms = reconnect_base_ms
        self._log: list[tuple[int, dict]] = []
        self._seq = 0
        self._sink: Sink | None = None
        self._backlog: list[tuple[str, Any]] = []
        self._buffer: DeliveryBuffer | None = None
        self._last_sent = 0
        self._attempt = 0
        self._reconnect_timer: Any = None
        self._runs = 0
        self._script: list[tuple[float, dict]] = []
        self._script_pos = 0
        self._run_start = 0.0
        self._model_timer: Any = None
        self._open: list[tuple[str, str, Any]] = []  # (start type, key, id) still open
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
        return self._buffer is not None

    def send(self, data: str) -> None:
        try:
            msg = json.loads(data)
        except (TypeError, json.JSONDecodeError):
            self._reply_error("bad_json", "invalid JSON")
            return
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "run":
            self._start_run(msg)
        elif kind == "cancel":
            self._cancel()
        elif kind == "resume":
            return  # implicit: every (re)connect resumes after the last through
        else:
            self._reply_error("unknown_type", f"unknown message type {kind!r}")

    def drop(self) -> None:
        """Lose the connection as a network failure would."""
        if self._buffer is None or self.closed:
            return
        self._detach_viewer()
        self._emit("close", json.dumps({"code": 4000, "reason": "forced reconnect",
                                        "wasOpen": True}))
        self._schedule_reconnect()

    def close(self) -> None:
        if self.closed:
            return
        was_open = self._buffer is not None
        self.closed = True
        self._detach_viewer()
        for timer in (self._open_timer, self._reconnect_timer, self._model_timer):
            if timer is not None:
                self.host.cancel_timeout(timer)
        self._open_timer = self._reconnect_timer = self._model_timer = None
        if was_open:
            self._emit("close", json.dumps({"code": 1000, "reason": "client closed",
                                            "wasOpen": True}))

    @property
    def run_active(self) -> bool:
        return self._model_timer is not None

    # -- viewer side -------------------------------------------------------
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
        self._buffer = DeliveryBuffer(self._publish, self.host.request_timeout,
                                      self.host.cancel_timeout)
        self._emit("open", str(self.opens))
        # resume: what the viewer has not received yet goes out through the
        # fresh buffer, batched like live events.
        missed = [(seq, ev) for seq, ev in self._log if seq > self._last_sent]
        for seq, event in missed:
            self._buffer.enqueue([event], through=seq)

    def _detach_viewer(self) -> None:
        if self._buffer is not None:
            buffer, self._buffer = self._buffer, None
            # Its publish now fails (no viewer); what it still held is in the
            # log and is replayed on resume.
            buffer.close()

    def _schedule_reconnect(self) -> None:
        delay = backoff_delay_ms(self._attempt, self.reconnect_base_ms, rng=self._rng)
        self._attempt += 1
        self._emit("reconnecting", json.dumps({"attempt": self._attempt,
                                               "delayMs": round(delay)}))
        self._reconnect_timer = self.host.request_timeout(self._connect, delay)

    def _publish(self, batch: Batch) -> bool:
        if self._buffer is None or batch.through is None:
            return False
        self._last_sent = max(self._last_sent, batch.through)
        self._emit("message", json.dumps({"through": batch.through, "events": batch.events}))
        return True

    def _reply_error(self, code: str, message: str) -> None:
        self._emit("message", json.dumps({"type": "error", "code": code, "message": message}))

    # -- model side --------------------------------------------------------
    def _start_run(self, msg: dict) -> None:
        if self.run_active:
            self._reply_error("run_active", "a run is already in progress")
            return
        prompt = msg.get("prompt")
        scenario = msg.get("scenario", "demo")
        if not isinstance(prompt, str) or not prompt:
            self._reply_error("bad_field", "prompt: a non-empty string is required")
            return
        if scenario not in SCENARIOS:
            self._reply_error("bad_scenario", f"scenario must be one of {', '.join(SCENARIOS)}")
            return
        self._runs += 1
        seed = self._seed if self._seed is not None else self._rng.randrange(1 << 30)
        timed = simulate(scenario, seed=seed, speed=self.speed, prompt=prompt,
                         thread_id=self.session_id, run_id=f"run-{self._runs}")
        self._script = [(te.t_ms, te.event) for te in timed]
        self._script_pos = 0
        self._run_start = self.host.now()
        self._play()

    def _play(self) -> None:
        self._model_timer = None
        # A little slack: float rounding must not turn "due now" into a 1e-12 ms
        # re-arm that never advances the clock.
        horizon = self.host.now() - self._run_start + 0.01
        script = self._script
        due = []
        while self._script_pos < len(script) and script[self._script_pos][0] <= horizon:
            due.append(script[self._script_pos][1])
            self._script_pos += 1
        self._log_events(due)
        if self._script_pos < len(script):
            wait = script[self._script_pos][0] - horizon + 0.01
            self._model_timer = self.host.request_timeout(self._play, max(0.0, wait))

    def _log_events(self, events: list[dict]) -> None:
        for event in events:
            self._track_open(event)
            self._seq += 1
            self._log.append((self._seq, event))
            if self._buffer is not None:
                self._buffer.enqueue([event], through=self._seq)

    def _track_open(self, event: dict) -> None:
        etype = event["type"]
        if etype in _OPENERS:
            key = _OPENERS[etype][1]
            self._open.append((etype, key, event.get(key)))
        elif etype in _CLOSERS:
            start = _CLOSERS[etype]
            key = _OPENERS[start][1]
            for i in range(len(self._open) - 1, -1, -1):
                if self._open[i][0] == start and self._open[i][2] == event.get(key):
                    del self._open[i]
                    break

    def _cancel(self) -> None:
        if not self.run_active:
            self._reply_error("no_run", "no run is in progress")
            return
        self.host.cancel_timeout(self._model_timer)
        self._model_timer = None
        closing = [{"type": _OPENERS[start][0], key: ident}
                   for start, key, ident in reversed(self._open)]
        closing.append({"type": "RUN_ERROR", "message": "run cancelled by a viewer",
                        "code": "cancelled"})
        self._log_events(closing)
