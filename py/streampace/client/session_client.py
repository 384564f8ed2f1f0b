"""Session-stream consumer (protocol v3, docs/protocol.md); pure Python.

Server messages arrive as text (from `client.connection.SessionConnection`,
or straight from a test's socket), are decoded by `session.protocol` (the one
decoder), duplicates are dropped and the events go to the pacing scheduler.
Bad input is reported and loses nothing that was valid.

Duplicates are decided by sequence number only: a batch's `through` is the seq
of its own last event and one socket's batches never overlap, so a batch is
new exactly when its `through` is above the highest one applied.  Sequence
numbers belong to a session *epoch* (the server's `attached` message names
it): after a server restart the numbers start again at 1 under a new epoch, so
the client forgets its position, ends a run the old server never finished with
RUN_ERROR `server_restarted`, and applies the snapshot that follows.  The
position is what the connection resumes from (`resume_message`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streampace.conversation.events import EventError, validate_event
from streampace.session import protocol
from streampace.session.protocol import (
    Attached,
    Batch,
    ProtocolError,
    ServerError,
    ServerMessage,
)
from streampace.session.snapshot import join_parts

__all__ = ["SESSION_LOST", "SessionClient", "StreamError"]

# The CUSTOM event's name that marks where the server lost the session.
SESSION_LOST = "streampace.session_lost"


@dataclass(frozen=True)
class StreamError:
    """A problem with what the stream carried: ``where`` is "server" (an
    `error` message: the server refused something the page sent) or "stream"
    (a message or event the client could not use)."""

    where: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.code}: {self.message}"


class SessionClient:
    """Feeds one session's batches into a scheduler (or straight to a view).

    `deliver(events)` receives each new batch's valid events; `on_error(err)`
    hears every problem with the stream (a `StreamError`).
    """

    def __init__(
        self,
        deliver: Callable[[list[dict]], None],
        *,
        on_error: Callable[[StreamError], None] | None = None,
        reloaded: bool = False,
    ) -> None:
        self._deliver = deliver
        # Showing a session this tab had before a reload: with nothing applied
        # yet, ask for a snapshot rather than the whole log (protocol.RELOAD_HELLO).
        self._reloaded = reloaded
        self._on_error = on_error
        self.last_through = 0
        self.epoch: str | None = None  # the session epoch last_through belongs to
        self.run_open = False  # a RUN_STARTED delivered without its terminal event
        # A snapshot the server announced: its parts so far and the epoch it is of.
        # The position and epoch change only once it is whole, so a connection cut
        # in the middle of one resumes from where it was and gets it again.
        self._snapshot: tuple[list[list[Any]], str] | None = None
        self.stats: dict[str, int] = {
            "batches": 0, "events": 0, "duplicates": 0, "bad_messages": 0,
            "bad_events": 0, "server_errors": 0, "epochs": 0, "runs_lost": 0,
        }

    def resume_message(self) -> str:
        """The `resume` that continues after what this client has applied."""
        if self._reloaded and self.epoch is None and self.last_through == 0:
            return protocol.RELOAD_HELLO
        return protocol.resume_message(self.last_through, self.epoch)

    def receive(self, text: Any) -> ServerMessage | None:
        """One server message; never raises on bad input (None: not usable)."""
        if not isinstance(text, str):
            self.stats["bad_messages"] += 1
            self._error("stream", "bad_message", "not a text frame")
            return None
        try:
            msg = protocol.decode_server_message(text)
        except ProtocolError as exc:
            self.stats["bad_messages"] += 1
            self._error("stream", exc.code, exc.message)
            return None
        if isinstance(msg, Attached):
            self._attached(msg)
        elif isinstance(msg, ServerError):
            self.stats["server_errors"] += 1
            self._error("server", msg.code, msg.message)
        else:
            self._batch(msg)
        return msg

    def _error(self, where: str, code: str, message: str) -> None:
        if self._on_error is not None:
            self._on_error(StreamError(where, code, message))

    def _batch(self, batch: Batch) -> None:
        through = batch.through
        raw = batch.events
        if self._snapshot is not None:
            # The snapshot describes the log at `through`, which may be at or below
            # what we had (a restarted server's log is short): it replaces the view.
            parts, epoch = self._snapshot
            parts.append(raw)
            if batch.more:
                return  # the rest of it follows, under the same `through`
            self._snapshot = None
            raw = join_parts(parts) if len(parts) > 1 else raw
            self.epoch = epoch
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
                self._error("stream", "bad_event", f"batch through {through}, event [{i}]: {exc}")
        self.last_through = through
        self.stats["batches"] += 1
        self.stats["events"] += len(events)
        if events:
            self._track_run(events)
            self._deliver(events)

    def _attached(self, msg: Attached) -> None:
        self._snapshot = None  # one that was cut off is sent again, whole
        if self.epoch is not None and msg.epoch != self.epoch:
            # A new sequence space: our position means nothing there.
            self.stats["epochs"] += 1
            if msg.mode != protocol.ATTACH_SNAPSHOT:
                self.last_through = 0
            lost: list[dict] = []
            if self.run_open:
                self.stats["runs_lost"] += 1
                self.run_open = False
                lost.append({
                    "type": "RUN_ERROR", "code": "server_restarted",
                    "message": "the server restarted and this run was lost",
                })
            # What the page showed of the old session stays shown (the view
            # keeps it above what the new one brings; renderer.SESSION_LOST).
            lost.append({"type": "CUSTOM", "name": SESSION_LOST,
                         "value": {"runCut": bool(lost)}})
            self._deliver(lost)
        if msg.mode == protocol.ATTACH_SNAPSHOT:
            self._snapshot = ([], msg.epoch)
        else:
            self.epoch = msg.epoch

    def _track_run(self, events: list[dict]) -> None:
        for event in events:
            etype = event.get("type")
            if etype == "RUN_STARTED":
                self.run_open = True
            elif etype in ("RUN_FINISHED", "RUN_ERROR"):
                self.run_open = False
