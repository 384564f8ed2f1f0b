"""A session on the server: the asyncio driver of one ``SessionEngine``.

The rules — the log, the transcript, run framing and lifecycle, attach and
resume, what a client message does — are the sans-IO engine's
(``streampace.session.engine``).  This class carries out its outputs with
asyncio: a run's body is a task that streams the source and emits what the
engine frames through the session's store backend (``store.py``: memory or
Redis — composed, not subclassed); logged events fan out to the viewers
(``viewer.py``), each caught up and fed by its ``ViewerFeed``
(session/viewer_feed.py): live ones through one shared feed
(session/shared_feed.py), the others through their own buffers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from dataclasses import replace
from typing import Any

from streampace.conversation.run_status import RunStatus
from streampace.conversation.transcript import Transcript
from streampace.session import outputs as output
from streampace.session.client_messages import ClientMessage
from streampace.session.engine import SessionEngine
from streampace.session.eviction import head_start_ms
from streampace.session.framing import UpstreamError
from streampace.session.log import SessionLog
from streampace.session.protocol import CloseCode
from streampace.session.run_lifecycle import STOPPED, Outcome, RunState
from streampace.session.shared_feed import SharedFeed
from streampace.session.source import RunRequest, new_run_id, source_scenarios

from .config import ServerConfig
from .loop_host import LoopHost
from .memory import note_large_events
from .sources import Source
from .store import MemoryStore, SessionStore
from .store_errors import StoreError
from .viewer import Viewer

__all__ = ["Session"]

log = logging.getLogger("streampace.server")

DRAIN_BEFORE_CLOSE_S = 2.0  # a viewer told to resume gets this long to take the notice


def monotonic_ms() -> float:
    """The clock of sessions' engines; the hub compares their activity with it."""
    return time.monotonic() * 1000.0


class Session:
    def __init__(self, session_id: str, source: Source, config: ServerConfig,
                 store: SessionStore | None = None, run_ids: random.Random | None = None
                 ) -> None:
        self.id = session_id
        self.source = source
        self.created_by: str | None = None  # the address that made it (per-address limit)
        store = store if store is not None else MemoryStore()
        self.engine: SessionEngine[Viewer] = SessionEngine(
            session_id,
            epoch=uuid.uuid4().hex[:16],
            log=SessionLog(config.log_events, config.log_bytes, note_large_events),
            transcript=Transcript(config.history_messages, config.history_bytes),
            clock=monotonic_ms,
            run_ids=lambda: new_run_id(run_ids),  # seeded only in tests (parity with the page)
            scenarios=source_scenarios(source),
            trusted=getattr(source, "trusted", False),
            shared_log=store.shared,
        )
        self.backend = store.backend(self)
        self.delivery_config = config.delivery
        self.upstream_thread_id = config.upstream_thread_id(session_id)
        self.log_name = config.log_name(session_id)  # never the id: it is the key
        self._feed: SharedFeed | None = None
        self.run_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- the engine's state, as the store and the tests read it -----------------

    @property
    def epoch(self) -> str:
        return self.engine.epoch

    @property
    def log(self) -> SessionLog:
        return self.engine.log

    @property
    def conversation(self) -> Transcript:
        return self.engine.transcript

    @property
    def viewers(self) -> set[Any]:
        return self.engine.viewers

    @property
    def running(self) -> bool:
        """A run holds this session (a new one is refused with run_active)."""
        return self.engine.run_held

    @property
    def run_state(self) -> RunState:
        return self.engine.run_state

    @property
    def idle(self) -> bool:
        """Nobody watching and nothing running: the session may be evicted."""
        return self.engine.idle

    @property
    def last_active(self) -> float:
        return self.engine.last_active

    # -- what its store asks (store.StoredSession) --------------------------------------

    @property
    def run_here(self) -> bool:
        return bool(self.engine.runs.active)

    @property
    def run_in_log(self) -> bool:
        return self.conversation.run.status is RunStatus.RUNNING

    @property
    def in_use(self) -> bool:
        return bool(self.engine.viewers) or self.run_here

    def head_start_ms(self, quiet_ms: float) -> float:
        return head_start_ms(self.engine, quiet_ms)

    def lost_run_events(self, code: str, message: str) -> list[dict[str, Any]]:
        return self.engine.lost_run_events(code, message)

    @property
    def feed(self) -> SharedFeed:
        """The delivery buffer shared by this session's live viewers (made in the loop)."""
        if self._feed is None:
            self._feed = SharedFeed(self.delivery_config, LoopHost(), self.log.head)
        return self._feed

    # -- inputs: viewers and the store ----------------------------------------------

    def connect(self, viewer: Viewer) -> None:
        """A socket is bound to this session (before its first message)."""
        self.perform(self.engine.connect(viewer))

    def evict(self) -> None:
        """The hub forgets this idle session: sockets still bound to it are closed
        (they reconnect to the session that replaces it).  Its store is released by
        ``close``."""
        self.perform(self.engine.evict())

    def receive(self, viewer: Viewer, msg: ClientMessage) -> bool:
        """A decoded client message; True if it was refused (an error reply)."""
        return self.perform(self.engine.receive(viewer, msg))

    def attach(self, viewer: Any, after: int | None, epoch: str | None = None) -> str:
        """Attach after seq ``after`` of ``epoch`` (None: from now); the attach mode."""
        outputs = self.engine.attach(viewer, after, epoch)
        self.perform(outputs)
        attached = outputs[0]
        assert isinstance(attached, output.Attach)
        return attached.mode

    def detach(self, viewer: Any) -> None:
        leave = getattr(viewer, "leave_feed", None)
        if leave is not None:
            leave()
        self.perform(self.engine.leave(viewer))
        self.backend.viewer_left()

    def append(self, events: list[dict[str, Any]]) -> None:
        """The store logged ``events``: into the engine, out to every viewer."""
        self.perform(self.engine.append(events))

    def reload(self, epoch: str, log_: SessionLog, transcript: Transcript,
               replacing: bool) -> None:
        """The store's view of the session (a first load, or a reload after a gap)."""
        self.perform(self.engine.load(epoch, log_, transcript, replacing))

    def notify_store_down(self, message: str) -> None:
        self.perform(self.engine.store_unavailable(message))

    def notify_store_lost(self, message: str) -> None:
        """The store lost this session's data: viewers are told and closed (they
        resume into the store's session), a run here stops."""
        self.perform(self.engine.store_lost(message))

    async def ready(self) -> None:
        """Load what the store holds for this session (before the first attach)."""
        await self.backend.ready()

    async def close(self) -> None:
        """Release what the session holds in its store (shutdown, eviction)."""
        await self.backend.close()

    # -- inputs: runs ---------------------------------------------------------------

    def start_run(self, prompt: str, scenario: str | None) -> None:
        """Start a run (what a `run` message does once its checks pass)."""
        self.perform(self.engine.start_run(prompt, scenario))

    def stop_run(self, code: str, message: str, run_id: str | None = None
                 ) -> asyncio.Task[None] | None:
        """Stop the run here (RUN_ERROR ``code``); returns its task to wait for, if any."""
        self.perform(self.engine.stop(code, message, run_id))
        return self.run_task

    def shut_down(self, code: str, message: str) -> asyncio.Task[None] | None:
        """Refuse new runs, stop this one; its task to wait for, if any."""
        self.perform(self.engine.shut_down(code, message))
        return self.run_task

    # -- outputs --------------------------------------------------------------------

    def perform(self, outputs: list[output.Output[Viewer]]) -> bool:
        """Carry out the engine's outputs that need no waiting; True if one was a
        refusal of a client message."""
        refused = False
        for out in outputs:
            if isinstance(out, output.Deliver):
                feed = self.feed
                members = feed.members
                for viewer in list(self.viewers):
                    if viewer not in members:  # members get them from the shared feed
                        viewer.on_append(out.events, out.first, out.through)
                feed.enqueue(out.events, out.through)
            elif isinstance(out, output.Attach):
                out.viewer.attach(self, out)
                self.backend.viewer_attached()
                log.info("session %s: viewer attached after %d (%s)", self.log_name, out.after,
                         out.mode)
            elif isinstance(out, output.Refusal | output.Reply):
                out.viewer.send_text(out.text)
                refused = refused or isinstance(out, output.Refusal)
            elif isinstance(out, output.StartRun):
                self.run_task = asyncio.create_task(self._run(out.run_id))
            elif isinstance(out, output.StopRun):
                # Only a RUNNING run is cancelled, so its ending always executes; one
                # stopped while STARTING goes straight to its ending when it first runs.
                if self.run_task is not None:
                    self.run_task.cancel()
            elif isinstance(out, output.Disconnect):
                gone: Any = out.viewer
                if out.drain:
                    leave = getattr(gone, "leave_feed", None)
                    if leave is not None:
                        leave()  # nothing more of this log reaches it
                    self._spawn(gone.drain_and_close(CloseCode.TRY_AGAIN_LATER, out.reason,
                                                     DRAIN_BEFORE_CLOSE_S))
                else:
                    gone.close(CloseCode.TRY_AGAIN_LATER, out.reason)
            elif isinstance(out, output.PublishCancel):
                self.backend.publish_cancel(out.code, out.message)
            elif isinstance(out, output.LogReplaced):
                for viewer in list(self.engine.viewers):
                    leave = getattr(viewer, "leave_feed", None)
                    if leave is not None:
                        leave()
                self._feed = None
            else:  # Emit and RunEnded happen inside a run's task
                raise RuntimeError(f"session {self.log_name}: unexpected {out!r}")
        return refused

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- a run's body ---------------------------------------------------------------

    async def _run(self, run_id: str) -> None:
        engine = self.engine
        outcome: Outcome | None = Outcome()
        try:
            try:
                granted, index = await self.backend.acquire_run(run_id)
                refusal = None if granted else (
                    "run_active", "a run is already in progress in this session")
            except StoreError as exc:
                log.warning("session %s: no run: %s", self.log_name, exc)
                refusal = ("store_unavailable", "the session store is unavailable; retry")
            if refusal is not None:
                # Another process runs this session (or none can): nothing was written,
                # so there is nothing to end.
                self.run_task = None
                self.perform(engine.run_refused(run_id, *refusal))
                return
            request = engine.begin_run(run_id, index)
            if request is not None:
                await self._stream(run_id, request)
                outcome = None  # the source stopped: the engine judges how
        except asyncio.CancelledError:
            outcome = STOPPED  # a recorded stop wins
        except UpstreamError as exc:
            log.warning("session %s: run %s failed: %s: %s", self.log_name, run_id, exc.code,
                        exc.message)
            outcome = Outcome(exc.code, exc.message)
        except StoreError as exc:
            log.warning("session %s: run %s lost its store: %s", self.log_name, run_id, exc)
            outcome = Outcome("store_unavailable", "the session store is unavailable")
        except Exception:
            log.exception("session %s: run %s crashed", self.log_name, run_id)
            outcome = Outcome("internal_error", "the server failed while running")
        await self._end(run_id, outcome)

    async def _stream(self, run_id: str, request: RunRequest) -> None:
        engine = self.engine
        # Every source's stream is an async generator (its aclose() ends an upstream
        # request when the run is cancelled); the Source protocol only says iterator.
        # The upstream gets a thread id derived from the session's, never the key itself;
        # the framer writes the session's own id on the events it logs.
        stream: Any = self.source.stream(replace(request, thread_id=self.upstream_thread_id))
        async with contextlib.aclosing(stream) as groups:
            async for group in groups:
                for out in engine.source_group(run_id, group):
                    assert isinstance(out, output.Emit)
                    await self.backend.emit(run_id, out.events)
                if not engine.wants_source(run_id):
                    break

    async def _end(self, run_id: str, outcome: Outcome | None) -> None:
        engine = self.engine
        *emits, ended = engine.end_run(run_id, outcome)
        assert isinstance(ended, output.RunEnded)
        final = engine.run_outcome
        if final is not None and final.code is not None:
            log.info("session %s: run %s ended (%s)", self.log_name, run_id, final.code)
        try:
            for out in emits:
                assert isinstance(out, output.Emit)
                try:
                    await self.backend.emit(run_id, out.events)
                except Exception as exc:  # the store refused the terminal event
                    log.warning("session %s: run %s: terminal event not written: %r",
                                self.log_name, run_id, exc)
        finally:
            # RunEnded, even if this task is cancelled while writing: no await from
            # here until the session settles, so the next run may start at once.
            with contextlib.suppress(Exception):
                self.backend.release_run(run_id)
            self.run_task = None
            self.perform(engine.settle_run(run_id))
