"""In-page simulated session: the server's half of a session and a socket, in the page.

For the static-files use (no streampace server) this stands in for both the
server and the WebSocket, built from the same core pieces the server uses
(`streampace.session`): the simulated model is a timed source
(`SimulatedModel`, the server's `demo` source), its groups go through the same
`RunFramer` (so the run opens with the same prompt echo) into the same
`SessionLog` and the same `Transcript` (its snapshots and history), within the
server's default bounds; client messages are parsed and refused by the same
rules, with the same error replies; a viewer attaches with the same `attached`
message and resume decision (log replay, or a snapshot when the log no longer
holds its position), and a core `DeliveryBuffer` batches what it gets (bursts
every <= 150 ms, first delta at once) into the same
`{"through": n, "events": [...]}` text.  The one difference is the clock:
groups are released on FrameHost timers instead of asyncio sleeps.

`SimulatedSession` has the `SessionSocket` surface (`attach`, `send`, `drop`,
`close`) and behaves like js_shim/bridge.js's socket: on every (re)connect it
sends `resume` after the last `through` it received; `drop()` behaves like a
lost connection, and after a backoff with jitter it reconnects.  Pure Python.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from typing import Any

from streampace.conversation.transcript import Transcript
from streampace.session import client_messages as cm
from streampace.session import limits
from streampace.session.delivery import Batch, DeliveryBuffer
from streampace.session.framing import RunFramer, UpstreamError
from streampace.session.log import SessionLog
from streampace.session.protocol import (
    ATTACH_LOG,
    ATTACH_SNAPSHOT,
    attach_mode,
    attached_message,
    batch_message,
    error_message,
)
from streampace.session.run_lifecycle import Outcome, RunLifecycle
from streampace.session.source import (
    RunRequest,
    TimedGroup,
    TimedSource,
    check_source_end,
    new_run_id,
)

__all__ = ["PageSession"]

Sink = Callable[[str, Any], None]

_WHOLE = sys.maxsize  # read everything a viewer missed in one go
_THROUGH = re.compile(r'\{"through":(\d+)')


class _Viewer:
    """One connection of the page session: a sink for message text and, once
    attached, its delivery buffer."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink
        self.buffer: DeliveryBuffer | None = None
        self.last_through = 0

    @property
    def attached(self) -> bool:
        return self.buffer is not None

    def publish(self, batch: Batch) -> bool:
        through = batch.through if batch.through is not None else self.last_through
        self.last_through = through
        self.sink(batch_message(through, batch.events))
        return True

    def close(self) -> None:
        if self.buffer is not None and not self.buffer.closed:
            # What it still held is in the log and is replayed on resume.
            self.buffer.close()


class PageSession:
    """What the server does for one session, on FrameHost timers.

    Drives the run through the core's `RunLifecycle` like server/session.py:
    a source's groups are framed and logged when due; a cancel (or the source
    failing, or stopping early) ends the run with the framer's closing events
    and exactly one terminal event.
    """

    def __init__(self, host: Any, session_id: str, source: TimedSource,
                 run_ids: random.Random | None = None) -> None:
        self.host = host
        self.id = session_id
        self.source = source
        self._run_ids = run_ids  # seeded: reproducible run ids (and so message ids)
        self.log = SessionLog(limits.LOG_EVENTS, limits.LOG_BYTES)
        self.conversation = Transcript(limits.HISTORY_MESSAGES, limits.HISTORY_BYTES)
        self.epoch = f"{random.getrandbits(64):016x}"
        self.lifecycle = RunLifecycle()
        self.run_count = 0
        self._framer: RunFramer | None = None
        self._groups: Any = None  # iterator of the run's TimedGroups
        self._next: TimedGroup | None = None
        self._run_start = 0.0
        self._timer: Any = None
        self.viewer: _Viewer | None = None

    @property
    def running(self) -> bool:
        return self.lifecycle.active

    # -- viewers ------------------------------------------------------------

    def connect(self, sink: Callable[[str], None]) -> _Viewer:
        """A socket opened (the page has one at a time)."""
        if self.viewer is not None:
            self.disconnect(self.viewer)
        self.viewer = _Viewer(sink)
        return self.viewer

    def disconnect(self, viewer: _Viewer) -> None:
        viewer.close()
        if self.viewer is viewer:
            self.viewer = None

    def receive(self, viewer: _Viewer, text: str) -> None:
        """A client message, answered as server/websocket.py answers it."""
        try:
            msg = cm.parse_client_message(text, limits.MAX_PROMPT_CHARS)
            if isinstance(msg, cm.ResumeMessage):
                cm.check_resume(viewer.attached)
                self._attach(viewer, msg.after, msg.epoch)
            elif isinstance(msg, cm.RunMessage):
                scenarios = self.source.scenarios() if self.source.supports_scenarios else None  # type: ignore[attr-defined]
                scenario = cm.check_run(msg, scenarios, self.running)
                if not viewer.attached:
                    self._attach(viewer, None, None)
                self._start_run(msg.prompt, scenario)
            elif isinstance(msg, cm.CancelMessage):
                cm.check_cancel(self.running)
                self._stop(cm.CANCEL_CODE, cm.CANCEL_MESSAGE)
        except cm.ClientError as exc:
            viewer.sink(error_message(exc.code, exc.message))

    def _attach(self, viewer: _Viewer, after: int | None, epoch: str | None) -> None:
        mode = attach_mode(self.log, after, epoch, self.epoch)
        head = self.log.head
        start = after if mode == ATTACH_LOG and after is not None else head
        viewer.sink(attached_message(self.id, self.epoch, mode, start))
        viewer.last_through = start
        viewer.buffer = DeliveryBuffer(viewer.publish, self.host)
        if mode == ATTACH_SNAPSHOT:
            # The log no longer holds its position: one batch, never split or delayed.
            viewer.publish(Batch(self.conversation.snapshot_events(), head))
        elif start < head:
            # What it missed goes out through the fresh buffer, batched like live events.
            viewer.buffer.enqueue(self.log.read(start, _WHOLE, _WHOLE), through=head)

    def _append(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        through = self.log.append(events)
        for event in events:
            self.conversation.apply_event(event)
        viewer = self.viewer
        if viewer is not None and viewer.buffer is not None:
            viewer.buffer.enqueue(events, through=through)

    # -- the run --------------------------------------------------------------

    def _start_run(self, prompt: str, scenario: str | None) -> None:
        run_id = new_run_id(self._run_ids)
        self.lifecycle.start(run_id)
        self._framer = RunFramer(self.id, run_id, prompt,
                                 validate=not getattr(self.source, "trusted", False),
                                 state=self.conversation.shared_state)
        request = RunRequest(thread_id=self.id, run_id=run_id, prompt=prompt,
                             scenario=scenario, run_index=self.run_count,
                             history=self.conversation.history(),
                             state=self.conversation.state)
        self.run_count += 1
        self._groups = iter(self.source.timed_groups(request))
        self.lifecycle.begin()
        self._next = next(self._groups, None)
        self._run_start = self.host.now()
        # Like the server's run task: the first group is released on the next
        # turn of the clock, not inside the `run` message's handling.
        self._timer = self.host.request_timeout(self._play, 0)

    def _play(self) -> None:
        self._timer = None
        framer = self._framer
        if framer is None:
            return
        # A little slack: float rounding must not turn "due now" into a 1e-12 ms
        # re-arm that never advances the clock.
        elapsed = self.host.now() - self._run_start + 0.01
        while self._next is not None and self._next[0] <= elapsed:
            self._append(framer.feed_group(self._next[1]))
            if framer.done:
                break
            self._next = next(self._groups, None)
        if self._next is not None and not framer.done:
            self._timer = self.host.request_timeout(self._play,
                                                    max(0.0, self._next[0] - elapsed + 0.01))
            return
        outcome = Outcome()
        try:
            check_source_end(framer)
        except UpstreamError as exc:
            outcome = Outcome(exc.code, exc.message)
        self._end(outcome)

    def _stop(self, code: str, message: str) -> None:
        if self.lifecycle.stop(code, message):
            if self._timer is not None:
                self.host.cancel_timeout(self._timer)
                self._timer = None
            self._end(Outcome(code, message))

    def _end(self, outcome: Outcome) -> None:
        final = self.lifecycle.end(outcome)
        framer = self._framer
        if final.code is not None and framer is not None:
            self._append(framer.finish(final.code, final.message))
        self._framer = self._groups = self._next = None
        self.lifecycle.settle()

    def close(self) -> None:
        """The page goes away: stop the clock (nobody is left to see an ending)."""
        if self._timer is not None:
            self.host.cancel_timeout(self._timer)
            self._timer = None
        if self.viewer is not None:
            self.disconnect(self.viewer)
