"""Session-stream consumer (protocol v2, docs/protocol.md); pure Python.

Items come from a transport (the JS `SessionSocket` or the in-page simulated
source) as `(kind, data)` pairs, in order: "open", "message" (a JSON text),
"close", "error", "reconnecting". Batches are validated, duplicates are dropped
and the events go to the pacing scheduler. Bad input is reported and loses
nothing that was valid.

Duplicates are decided by sequence number only: a batch's `through` is the seq
of its own last event and one socket's batches never overlap, so a batch is
new exactly when its `through` is above the highest one applied.  Sequence
numbers belong to a session *epoch* (the server's `attached` message names
it): after a server restart the numbers start again at 1 under a new epoch, so
the client forgets its position, ends a run the old server never finished with
RUN_ERROR `server_restarted`, and applies the snapshot that follows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streampace.conversation.events import EventError, validate_event

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
        self.epoch: str | None = None  # the session epoch last_through belongs to
        self.run_open = False  # a RUN_STARTED delivered without its terminal event
        self._snapshot_next = False  # the server said the next batch is a snapshot
        self.state = "connecting"
        self.stats: dict[str, int] = {
            "batches": 0, "events": 0, "duplicates": 0, "bad_messages": 0,
            "bad_events": 0, "server_errors": 0, "opens": 0, "closes": 0,
            "epochs": 0, "runs_lost": 0,
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
        if msg.get("type") == "attached":
            self._attached(msg)
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
        if self._snapshot_next:
            # The snapshot describes the log at `through`, which may be at or below
            # what we had (a restarted server's log is short): it replaces the view.
            self._snapshot_next = False
        elif through <= self.last_through:
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
            self._track_run(events)
            self._deliver(events)

    def _attached(self, msg: dict) -> None:
        epoch = msg.get("epoch")
        if not isinstance(epoch, str) or not epoch:
            self.stats["bad_messages"] += 1
            self._error("message: 'attached' without an epoch")
            return
        if self.epoch is not None and epoch != self.epoch:
            # A new sequence space: our position means nothing there.
            self.stats["epochs"] += 1
            self.last_through = 0
            if self.run_open:
                self.stats["runs_lost"] += 1
                self.run_open = False
                self._deliver([{
                    "type": "RUN_ERROR", "code": "server_restarted",
                    "message": "the server restarted and this run was lost",
                }])
        self.epoch = epoch
        self._snapshot_next = msg.get("mode") == "snapshot"

    def _track_run(self, events: list[dict]) -> None:
        for event in events:
            etype = event.get("type")
            if etype == "RUN_STARTED":
                self.run_open = True
            elif etype in ("RUN_FINISHED", "RUN_ERROR"):
                self.run_open = False


def _json_or(data: Any, default: Any) -> Any:
    if not isinstance(data, str):
        return default
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return default
