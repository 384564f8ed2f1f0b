"""In-page simulated session: the session engine driven by FrameHost timers.

For the static-files use (no streampace server) this stands in for the server:
the same sans-IO ``SessionEngine`` the server drives with asyncio
(``streampace.session.engine``) — the same log, transcript, run lifecycle,
framing, resume decision, client-message rules and message text — driven here
by the page's clock.  The simulated model is a timed source
(``SimulatedModel``, the server's ``demo`` source) that ``PageRunner``
(``client/page_runner.py``) runs as the server's run task runs any source —
``begin_run``, ``source_group``, ``end_run`` — waiting on FrameHost timeouts
where the server waits on asyncio.  A viewer is caught up and fed by the same
``ViewerFeed`` as the server's (session/viewer_feed.py: the snapshot, then the
log, then live events through its ``DeliveryBuffer``, bursts every <= 150 ms,
first delta at once), into the same ``{"through": n, "events": [...]}`` text;
in the page the text is handed on at once, so the snapshot goes as one batch
and the log in one read.

The socket half (reconnects, resume after the last ``through``) is
``client/page_socket.py``; it talks to this class through ``connect``,
``disconnect``, ``receive`` and ``close``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from streampace.client.page_runner import PageRunner
from streampace.clock import TimerHost
from streampace.conversation.transcript import Transcript
from streampace.session import client_messages as cm
from streampace.session import limits
from streampace.session.delivery import Batch, DeliveryBuffer
from streampace.session.engine import SessionEngine, refusal
from streampace.session.log import SessionLog
from streampace.session.outputs import (
    Attach,
    Deliver,
    Emit,
    Output,
    Refusal,
    Reply,
    RunEnded,
    StartRun,
    StopRun,
)
from streampace.session.shared_feed import SharedFeed
from streampace.session.source import TimedSource, new_run_id, source_scenarios
from streampace.session.viewer_feed import ViewerFeed

__all__ = ["PageSession"]

_WHOLE = sys.maxsize  # read everything a viewer missed in one go


class _Viewer:
    """One connection of the page session: a sink for message text, fed by its
    ``ViewerFeed``.  The sink takes every text at once: it always has room."""

    def __init__(self, sink: Callable[[str], None], host: TimerHost) -> None:
        self.sink = sink
        self.feed = ViewerFeed(self, host, part_bytes=None, pull_events=_WHOLE,
                               pull_bytes=_WHOLE)

    @property
    def buffer(self) -> DeliveryBuffer | None:
        return self.feed.buffer

    def send(self, text: str, batch: Batch | None) -> None:
        self.sink(text)

    def has_room(self) -> bool:
        return True

    def fell_behind(self, cursor: int) -> None:
        # It reads the whole log in the step that attaches it and takes every
        # append at once, so its cursor is always the log's head.
        raise RuntimeError(f"page session: a viewer at {cursor} fell behind its own log")

    def catch_up(self) -> None:
        while self.feed.pull():
            pass

    def close(self) -> None:
        self.feed.stop()  # what its buffer still held is in the log: replayed on resume


class PageSession:
    """One session on FrameHost timers (the page has one socket at a time)."""

    def __init__(self, host: TimerHost, session_id: str, source: TimedSource,
                 run_ids: random.Random | None = None) -> None:
        self.host = host
        self.id = session_id
        self.source = source
        ids = run_ids  # seeded: reproducible run ids (and so message ids)
        self.engine: SessionEngine[_Viewer] = SessionEngine(
            session_id,
            epoch=f"{random.getrandbits(64):016x}",
            log=SessionLog(limits.LOG_EVENTS, limits.LOG_BYTES),
            transcript=Transcript(limits.HISTORY_MESSAGES, limits.HISTORY_BYTES),
            clock=host.now,
            run_ids=lambda: new_run_id(ids),
            scenarios=source_scenarios(source),
            trusted=getattr(source, "trusted", False),
        )
        self._runner = PageRunner(host, self.engine, source, self._apply)
        self.viewer: _Viewer | None = None

    @property
    def running(self) -> bool:
        return self.engine.run_held

    @property
    def log(self) -> SessionLog:
        return self.engine.log

    @log.setter
    def log(self, log: SessionLog) -> None:  # tests bound it small
        self.engine.log = log

    @property
    def conversation(self) -> Transcript:
        return self.engine.transcript

    @property
    def feed(self) -> SharedFeed | None:
        """No shared feed: the page has one viewer at a time."""
        return None

    # -- the socket's side ------------------------------------------------------

    def connect(self, sink: Callable[[str], None]) -> _Viewer:
        """A socket opened (the page has one at a time)."""
        if self.viewer is not None:
            self.disconnect(self.viewer)
        self.viewer = _Viewer(sink, self.host)
        return self.viewer

    def disconnect(self, viewer: _Viewer) -> None:
        viewer.close()
        self._apply(self.engine.leave(viewer))
        if self.viewer is viewer:
            self.viewer = None

    def receive(self, viewer: _Viewer, text: str) -> None:
        """A client message, answered as the server answers it."""
        try:
            msg = cm.parse_client_message(text, limits.MAX_PROMPT_CHARS)
        except cm.ClientError as exc:
            self._apply([refusal(viewer, exc)])
            return
        self._apply(self.engine.receive(viewer, msg))

    def close(self) -> None:
        """The page goes away: stop the clock (nobody is left to see an ending)."""
        self._runner.close()
        if self.viewer is not None:
            self.disconnect(self.viewer)

    # -- the engine's outputs ----------------------------------------------------

    def _apply(self, outputs: list[Output[_Viewer]]) -> None:
        engine = self.engine
        for out in outputs:
            if isinstance(out, Deliver):
                if self.viewer is not None:
                    self.viewer.feed.on_append(out.events, out.first, out.through)
            elif isinstance(out, Emit):
                self._apply(engine.append(out.events))  # the page's log is its own
            elif isinstance(out, Attach):
                self._attach(out)
            elif isinstance(out, Reply | Refusal):
                out.viewer.sink(out.text)
            elif isinstance(out, StartRun):
                self._runner.start(out.run_id)  # no store: nobody else runs it
            elif isinstance(out, StopRun):
                self._runner.stop(out.run_id)
            elif isinstance(out, RunEnded):
                self._apply(engine.settle_run(out.run_id))
            else:  # PublishCancel, LogReplaced: only a shared store's
                raise RuntimeError(f"page session: unexpected {out!r}")

    def _attach(self, out: Attach) -> None:
        viewer: Any = out.viewer
        viewer.feed.attach(self, out)
        viewer.catch_up()
