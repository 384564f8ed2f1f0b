"""The page's outbox: what happens to a message the page sends; pure Python.

The server runs one run per session at a time (`run_active` otherwise), so a
question asked while an answer streams would be refused and lost.  The page
owns a queue instead: a `run` sent while a run is in progress (or one this
page sent has not started yet) waits here, is shown at once as the person's
message marked waiting, and goes out when the run ends (a Stop ends it too).
A waiting message can be withdrawn.

`submit` answers at once with what happened, the value `streampace.send()`'s
promise (and the Python page API's `send`) settles with:

- ``{"status": "accepted", "id"}``: handed to the connection (sent now, or
  after the next resume while reconnecting);
- ``{"status": "queued", "id", "position"}``: waiting for the run to end;
- ``{"status": "refused", "id", "code", "message"}``: not sent, and never
  will be (``code``: why, e.g. `bad_field`, `queue_full`, `not_sent`).

Cancels and other messages are never queued.  The server stays the judge: a
run it refuses with `run_active` (another viewer's run began first) goes back
to the head of the queue.  `items()` is what the view shows and the store's
snapshot reads: the waiting messages and the ones sent but not yet shown.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streampace.session.client_messages import (
    MAX_PROMPT_CHARS,
    ClientError,
    RunMessage,
    parse_client_message,
)

__all__ = ["MAX_WAITING", "Outbox", "QueuedRun", "refused"]

# Questions that may wait at once; more is a page bug or a held-down key.
MAX_WAITING = 16
ACCEPTED, QUEUED, REFUSED = "accepted", "queued", "refused"
WAITING, SENT = "waiting", "sent"


@dataclass(slots=True)
class QueuedRun:
    """One question the person asked while a run was in progress."""

    id: str
    text: str  # the `run` message as it will be sent
    prompt: str
    state: str = WAITING  # WAITING, then SENT until its run shows


def refused(code: str, message: str, message_id: str | None = None) -> dict[str, Any]:
    return {"status": REFUSED, "id": message_id, "code": code, "message": message}


class Outbox:
    """See the module docstring.  ``send(text) -> bool`` hands a message to the
    connection (False: refused there); ``on_change()`` hears every change of
    `items()`."""

    def __init__(self, send: Callable[[str], bool], *,
                 on_change: Callable[[], None] | None = None,
                 max_prompt_chars: int = MAX_PROMPT_CHARS) -> None:
        self._send = send
        self._on_change = on_change
        self._max_prompt_chars = max_prompt_chars
        self._ids = itertools.count(1)
        self._waiting: deque[QueuedRun] = deque()
        # Runs handed to the connection, oldest first, until the view shows
        # their start: a queued one (shown as waiting until then) or None.
        self._inflight: deque[QueuedRun | None] = deque()
        self.run_open = False  # the server's run in progress (RUN_STARTED seen, no end)
        self.awaiting: str | None = None  # a run this page sent, not started yet
        self.counts = {ACCEPTED: 0, QUEUED: 0, REFUSED: 0, "withdrawn": 0, "requeued": 0}

    @property
    def busy(self) -> bool:
        return self.run_open or self.awaiting is not None

    # -- the page ------------------------------------------------------------
    def submit(self, message: Any) -> dict[str, Any]:
        """Send, queue or refuse ``message`` (a dict, or its JSON text)."""
        message_id = f"m{next(self._ids)}"
        try:
            text = message if isinstance(message, str) else json.dumps(message)
        except (TypeError, ValueError) as exc:
            return self._refuse("bad_message", f"not JSON: {exc}", message_id)
        try:
            parsed = parse_client_message(text, self._max_prompt_chars)
        except ClientError as exc:
            return self._refuse(exc.code, exc.message, message_id)
        if not isinstance(parsed, RunMessage):
            if not self._send(text):
                return self._refuse("not_sent", "the connection is closed", message_id)
            self.counts[ACCEPTED] += 1
            return {"status": ACCEPTED, "id": message_id}
        if self.busy or self._waiting:
            if len(self._waiting) >= MAX_WAITING:
                return self._refuse("queue_full",
                                    f"{MAX_WAITING} questions already wait", message_id)
            self._waiting.append(QueuedRun(message_id, text, parsed.prompt))
            self.counts[QUEUED] += 1
            self._changed()
            return {"status": QUEUED, "id": message_id, "position": len(self._waiting)}
        if not self._dispatch(text, None):
            return self._refuse("not_sent", "the connection is closed", message_id)
        self.counts[ACCEPTED] += 1
        return {"status": ACCEPTED, "id": message_id}

    def withdraw(self, message_id: str) -> bool:
        """Take back a question that still waits; False once it was sent."""
        for queued in self._waiting:
            if queued.id == message_id:
                self._waiting.remove(queued)
                self.counts["withdrawn"] += 1
                self._changed()
                return True
        return False

    def clear(self) -> None:
        """Forget everything (the view shows another session)."""
        self._waiting.clear()
        self._inflight.clear()
        self.run_open = False
        self.awaiting = None
        self._changed()

    def items(self) -> list[dict[str, Any]]:
        """The questions shown below the conversation, in order."""
        shown = [q for q in self._inflight if q is not None] + list(self._waiting)
        return [{"id": q.id, "prompt": q.prompt, "state": q.state} for q in shown]

    # -- what the server did (network order) -----------------------------------
    def run_started(self) -> None:
        self.run_open = True
        self.awaiting = None

    def run_ended(self) -> None:
        self.run_open = False
        self._next()

    def server_refused(self, code: str) -> None:
        """The server refused a message; when a run of ours awaited its start,
        that was it (the server answers in order)."""
        if self.awaiting is None or code in ("no_run", "already_attached"):
            return
        text, self.awaiting = self.awaiting, None
        sent = self._inflight.pop() if self._inflight else None
        if code == "run_active":
            # Another viewer's run began first: ours waits for its end.
            self.counts["requeued"] += 1
            queued = sent if sent is not None else QueuedRun(
                f"m{next(self._ids)}", text, _prompt_of(text))
            queued.state = WAITING
            self._waiting.appendleft(queued)
            self._changed()
        else:
            if sent is not None:
                self._changed()
            self._next()

    # -- what the view showed (paced order) -------------------------------------
    def run_shown(self) -> None:
        """The view showed a run's start: the oldest run sent is on screen now."""
        if self._inflight and self._inflight.popleft() is not None:
            self._changed()

    # -- internals -----------------------------------------------------------------
    def _next(self) -> None:
        if self.busy or not self._waiting:
            return
        queued = self._waiting.popleft()
        if self._dispatch(queued.text, queued):
            queued.state = SENT
        else:
            self.counts[REFUSED] += 1  # the connection closed for good meanwhile
        self._changed()

    def _dispatch(self, text: str, queued: QueuedRun | None) -> bool:
        if not self._send(text):
            return False
        self.awaiting = text
        self._inflight.append(queued)
        return True

    def _refuse(self, code: str, message: str, message_id: str) -> dict[str, Any]:
        self.counts[REFUSED] += 1
        return refused(code, message, message_id)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def stats(self) -> dict[str, Any]:
        return {**self.counts, "waiting": len(self._waiting), "busy": self.busy}


def _prompt_of(text: str) -> str:
    parsed = parse_client_message(text, MAX_PROMPT_CHARS)
    return parsed.prompt if isinstance(parsed, RunMessage) else ""
