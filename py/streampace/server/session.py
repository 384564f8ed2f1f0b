"""Sessions: the log, the conversation, the viewers and the run in progress."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from streampace.conversation.transcript import Transcript
from streampace.session.framing import RunFramer, UpstreamError
from streampace.session.log import SessionLog
from streampace.session.protocol import ATTACH_LIVE, ATTACH_LOG, attach_mode
from streampace.session.run_lifecycle import Outcome, RunLifecycle, RunState
from streampace.session.source import check_source_end, new_run_id

from .config import ServerConfig
from .fanout import SharedFeed
from .memory import note_large_events
from .sources import RunRequest, Source
from .store import MemoryStore, SessionStore
from .store_errors import StoreError
from .viewer import CLOSE_GOING_AWAY, Viewer

__all__ = ["Session", "Hub"]

log = logging.getLogger("streampace.server")


class Session:
    def __init__(self, session_id: str, source: Source, config: ServerConfig) -> None:
        self.id = session_id
        self.source = source
        self.log = SessionLog(config.log_events, config.log_bytes, note_large_events)
        # Names this sequence-number space: a session forgotten (restart, eviction)
        # and created again starts at 1 under a new epoch (docs/protocol.md).
        self.epoch = uuid.uuid4().hex[:16]
        self.conversation = Transcript(config.history_messages, config.history_bytes)
        self.viewers: set[Viewer] = set()
        self.run_task: asyncio.Task[None] | None = None
        self.lifecycle = RunLifecycle()
        self.delivery_config = config.delivery
        self._feed: SharedFeed | None = None
        self.run_count = 0
        self._framer: RunFramer | None = None
        self.last_active = time.monotonic()

    @property
    def idle(self) -> bool:
        """Nobody watching and nothing running: the session may be evicted."""
        return not self.viewers and not self.lifecycle.active

    # -- log and fan-out ----------------------------------------------------

    def append(self, events: list[dict[str, Any]]) -> None:
        """Log events, update the conversation and hand them to every viewer."""
        if not events:
            return
        first = self.log.head + 1
        through = self.log.append(events)
        for event in events:
            self.conversation.apply_event(event)
        feed = self.feed
        for viewer in list(self.viewers):
            if getattr(viewer, "feed", None) is None:  # members get them from the feed
                viewer.on_append(events, first, through)
        feed.enqueue(events, through)

    def attach(self, viewer: Viewer, after: int | None, epoch: str | None = None) -> str:
        """Attach after seq ``after`` (None: from now). Returns "log", "live" or "snapshot".

        ``epoch`` is the one the client's ``after`` belongs to; another epoch's
        positions mean nothing here, so that client gets a snapshot.  Runs
        synchronously and only sets the viewer's position, so no event can slip
        in between the replay and live delivery.
        """
        head = self.log.head
        mode = attach_mode(self.log, after, epoch, self.epoch)
        if mode == ATTACH_LIVE:
            viewer.attach(self, head, mode=mode)
        elif mode == ATTACH_LOG:
            viewer.attach(self, after, mode=mode)  # its sender replays the log from there
        else:
            viewer.attach(self, head, snapshot=self.conversation.snapshot_events(), mode=mode)
        self.viewers.add(viewer)
        return mode

    @property
    def feed(self) -> SharedFeed:
        """The delivery buffer shared by this session's live viewers (made in the loop)."""
        if self._feed is None:
            self._feed = SharedFeed(self.delivery_config, self.log.head)
        return self._feed

    def detach(self, viewer: Viewer) -> None:
        leave = getattr(viewer, "leave_feed", None)
        if leave is not None:
            leave()
        self.viewers.discard(viewer)
        self.last_active = time.monotonic()

    # -- runs ---------------------------------------------------------------
    #
    # The run's lifecycle is the state machine in streampace.session.run_lifecycle; this
    # class only drives it.  The one rule that matters: the run's task is cancelled
    # only once it is RUNNING (inside its try block), so its ending always executes;
    # a stop that lands while it is still STARTING is recorded and the task, when it
    # first runs, goes straight to writing the terminal event.

    @property
    def running(self) -> bool:
        """A run holds this session (a new one is refused with run_active)."""
        return self.lifecycle.active

    @property
    def run_state(self) -> str:
        return self.lifecycle.state

    def start_run(
        self,
        prompt: str,
        scenario: str | None,
        on_refused: Callable[[str, str], None] | None = None,
    ) -> None:
        """Start a run; ``on_refused(code, message)`` if the store gives it no lease."""
        if self.lifecycle.active:
            raise RuntimeError("a run is already in progress")
        run_id = new_run_id()
        self.lifecycle.start(run_id)
        # The simulated model is our own code (tested against the validator); every
        # other source's events are checked one by one.
        trusted = getattr(self.source, "trusted", False)
        self._framer = RunFramer(self.id, run_id, prompt, validate=not trusted,
                                 state=self.conversation.shared_state)
        self.run_task = asyncio.create_task(
            self._run(self._framer, run_id, prompt, scenario, on_refused)
        )

    def stop_run(self, code: str, message: str) -> asyncio.Task[None] | None:
        """Stop the run (RUN_ERROR ``code``); returns its task to wait for, if any."""
        task = self.run_task
        if task is None:
            return None
        was = self.lifecycle.state
        if self.lifecycle.stop(code, message) and was == RunState.RUNNING:
            task.cancel()
        return task

    def _request(self, run_id: str, prompt: str, scenario: str | None) -> RunRequest:
        request = RunRequest(
            thread_id=self.id,
            run_id=run_id,
            prompt=prompt,
            scenario=scenario,
            run_index=self.run_count,
            history=self.conversation.history(),
            state=self.conversation.state,
        )
        self.run_count += 1
        return request

    async def _run(self, framer: RunFramer, run_id: str, prompt: str, scenario: str | None,
                   on_refused: Callable[[str, str], None] | None) -> None:
        outcome = Outcome()
        try:
            try:
                refusal = None if await self._acquire_run(run_id) else (
                    "run_active", "a run is already in progress in this session")
            except StoreError as exc:
                log.warning("session %s: no run: %s", self.id, exc)
                refusal = ("store_unavailable", "the session store is unavailable; retry")
            if refusal is not None:
                # Another process runs this session (or none can): nothing was written,
                # so there is nothing to end.
                self.lifecycle.refuse()
                self.run_task = None
                self._framer = None
                if on_refused is not None:
                    on_refused(*refusal)
                return
            if self.lifecycle.begin():
                await self._stream(framer, self._request(run_id, prompt, scenario))
        except asyncio.CancelledError:
            outcome = Outcome("cancelled", "run cancelled")  # a recorded stop wins
        except UpstreamError as exc:
            log.warning("session %s: run %s failed: %s: %s", self.id, run_id, exc.code,
                        exc.message)
            outcome = Outcome(exc.code, exc.message)
        except StoreError as exc:
            log.warning("session %s: run %s lost its store: %s", self.id, run_id, exc)
            outcome = Outcome("store_unavailable", "the session store is unavailable")
        except Exception:
            log.exception("session %s: run %s crashed", self.id, run_id)
            outcome = Outcome("internal_error", "the server failed while running")
        final = self.lifecycle.end(outcome)
        try:
            if final.code is not None:
                log.info("session %s: run %s ended (%s)", self.id, run_id, final.code)
                await self._emit(framer.finish(final.code, final.message))
        except Exception as exc:  # the store refused the terminal event
            log.warning("session %s: run %s: terminal event not written: %r", self.id,
                        run_id, exc)
        finally:
            with contextlib.suppress(Exception):
                await self._release_run()
            self.lifecycle.settle()
            self.run_task = None
            self._framer = None

    async def _stream(self, framer: RunFramer, request: RunRequest) -> None:
        async with contextlib.aclosing(self.source.stream(request)) as groups:
            async for group in groups:
                await self._emit(framer.feed_group(group))
                if framer.done:
                    break
        check_source_end(framer)  # raises unless the run ended properly

    # -- store hooks: the in-memory store; server/redis_store.py overrides them ----

    async def ready(self) -> None:
        """Load what the store holds for this session (before the first attach)."""

    async def _acquire_run(self, run_id: str) -> bool:
        """Take the right to run this session (one process at a time)."""
        return True

    async def _release_run(self) -> None:
        pass

    async def _emit(self, events: list[dict[str, Any]]) -> None:
        """Write a run's events to the session's log (and so to every viewer)."""
        self.append(events)

    def request_cancel(self, code: str, message: str) -> None:
        """A viewer's cancel: stops the run wherever it executes (here, in memory)."""
        self.stop_run(code, message)

    async def close(self) -> None:
        """Release what the session holds in its store (shutdown, eviction)."""


class Hub:
    """All sessions of one server."""

    def __init__(self, source: Source, config: ServerConfig,
                 store: SessionStore | None = None) -> None:
        self.source = source
        self.config = config
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.sessions: dict[str, Session] = {}
        self.viewers: set[Viewer] = set()
        self.allowed_origins: set[str] = set(config.allow_origins) | config.own_origins()
        self.shutting_down = False
        self._closing: set[asyncio.Future[None]] = set()

    def set_port(self, port: int) -> None:
        """The actual port once bound (it may have been 0)."""
        self.allowed_origins = set(self.config.allow_origins) | self.config.own_origins(port)

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None:
            return True
        return "*" in self.allowed_origins or origin.rstrip("/") in self.allowed_origins

    def session(self, session_id: str) -> Session | None:
        """The session (created on first use); None when the server holds too many."""
        s = self.sessions.get(session_id)
        if s is None:
            if len(self.sessions) >= self.config.max_sessions and not self._evict_idle():
                return None
            s = self.sessions[session_id] = self.store.new_session(
                session_id, self.source, self.config)
        return s

    def _evict_idle(self) -> bool:
        """Forget the longest-idle session nobody watches; False if every one is in use."""
        idle = [s for s in self.sessions.values() if s.idle]
        if not idle:
            return False
        oldest = min(idle, key=lambda s: s.last_active)
        del self.sessions[oldest.id]
        self._closing.add(t := asyncio.ensure_future(oldest.close()))
        t.add_done_callback(self._closing.discard)
        log.info("forgot idle session %s (session limit %d)", oldest.id, self.config.max_sessions)
        return True

    async def shutdown(self) -> None:
        """End runs (RUN_ERROR server_shutdown), flush every viewer, close with 1001."""
        self.shutting_down = True
        tasks = [
            t
            for s in self.sessions.values()
            if (t := s.stop_run("server_shutdown", "the server is shutting down")) is not None
        ]
        if tasks:
            await asyncio.wait(tasks, timeout=self.config.shutdown_drain_s)
        viewers = list(self.viewers)
        if viewers:
            await asyncio.gather(
                *(
                    v.drain_and_close(CLOSE_GOING_AWAY, "server shutting down",
                                      self.config.shutdown_drain_s)
                    for v in viewers
                ),
                return_exceptions=True,
            )
        for s in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await s.close()
        await self.store.close()
