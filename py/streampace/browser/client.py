"""Session-stream consumer (protocol v1, docs/protocol.md); pure Python.

Items come from a transport (the JS `SessionSocket` or the in-page simulated
source) as `(kind, data)` pairs, in order: "open", "message" (a JSON text),
"close", "error", "reconnecting". Batches are validated, duplicates (a `through`
already applied, e.g. replayed after a reconnect) are dropped, and the events go
to the pacing scheduler. Bad input is reported and loses nothing that was valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streampace.events import EventError, validate_event

__all__ = ["SessionClient"]


class SessionClient:
    """Feeds one session's batches into a scheduler (or straight to a view).

    `deliver(events)` receives each new batch's valid events; `on_status(state,
    detail)` hears "open" / "closed" / "reconnecting" / "error"; `on_error(msg)`
    hears every problem with the stream. On a close while shown, `on_close` runs
    (the caller flushes the scheduler there).
    """

    def __init__(
        self,
        deliver: Callable[[list[dict]], None],
        *,
        on_close: Callable[[], None] | None = None,
        on_status: Callable[[str, dict], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self._deliver = deliver
        self._on_close = on_close
        self._on_status = on_status
        self._on_error = on_error
        self.last_through = 0
        self.state = "connecting"
        self.stats: dict[str, int] = {
            "batches": 0, "events": 0, "duplicates": 0, "bad_messages": 0,
            "bad_events": 0, "server_errors": 0, "opens": 0, "closes": 0,
        }

    def handle(self, kind: str, data: Any = None) -> None:
        """Entry point for the transport; never raises on bad stream input."""
        if kind == "message":
            self._message(data)
        elif kind == "open":
            self.stats["opens"] += 1
            self._status("open", {"opens": self.stats["opens"]})
        elif kind == "close":
            self.stats["closes"] += 1
            detail = _json_or(data, {})
            self._status("closed", detail)
            if self._on_close is not None:
                self._on_close()
        elif kind == "reconnecting":
            self._status("reconnecting", _json_or(data, {}))
        elif kind == "error":
            self._error(f"transport: {data}")
        else:
            self._error(f"transport: unknown item kind {kind!r}")

    def _status(self, state: str, detail: dict) -> None:
        self.state = state
        if self._on_status is not None:
            self._on_status(state, detail)

    def _error(self, message: str) -> None:
        if self._on_error is not None:
            self._on_error(message)

    def _message(self, data: Any) -> None:
        if not isinstance(data, str):
            self.stats["bad_messages"] += 1
            self._error("message: not a text frame")
            return
        try:
            msg = json.loads(data)
        except json.JSONDecodeError as exc:
            self.stats["bad_messages"] += 1
            self._error(f"message: invalid JSON ({exc.msg} at position {exc.pos})")
            return
        if not isinstance(msg, dict):
            self.stats["bad_messages"] += 1
            self._error("message: not a JSON object")
            return
        if "type" in msg:
            self.stats["server_errors"] += 1
            self._error(f"server: {msg.get('code')}: {msg.get('message')}")
            return
        through, raw = msg.get("through"), msg.get("events")
        if isinstance(through, bool) or not isinstance(through, int) or not isinstance(raw, list):
            self.stats["bad_messages"] += 1
            self._error("message: a batch needs an integer 'through' and an 'events' array")
            return
        if through <= self.last_through:
            # Already applied (a replay overlapping what we had): drop, never show twice.
            self.stats["duplicates"] += 1
            return
        events = []
        for i, item in enumerate(raw):
            try:
                events.append(validate_event(item))
            except EventError as exc:
                self.stats["bad_events"] += 1
                self._error(f"batch through {through}, event [{i}]: {exc}")
        self.last_through = through
        self.stats["batches"] += 1
        self.stats["events"] += len(events)
        if events:
            self._deliver(events)


def _json_or(data: Any, default: Any) -> Any:
    if not isinstance(data, str):
        return default
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return default
