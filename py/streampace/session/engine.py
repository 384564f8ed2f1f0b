"""The session engine: one session's rules, sans-IO (in the spirit of h11's Connection).

``SessionEngine`` owns the session log, the transcript, the run lifecycle and each
run's framing, the attach/resume decision and the dispatch of client messages.
Its inputs are method calls — a decoded client message from a viewer, a viewer
leaving, events the store logged, a due source group, a source's end or failure,
a stop — and each returns the outputs (``streampace.session.outputs``) its driver
must carry out, in order: what to send to which viewer, events to emit to the
store and to fan out, runs to start or stop at the source.  It never sleeps,
sends or reads a clock of its own (``clock`` is injected).

Drivers: the server (``streampace.server.session``: asyncio, WebSockets, a memory
or Redis store) and the page's simulation (``streampace.client.page_session``:
FrameHost timers, one in-page socket).  Both run a source the same way —
``begin_run``, then ``source_group`` for each group while ``wants_source``, then
``end_run`` — so they log the same events for the same messages and send the
same bytes (tests/server/test_page_session_parity.py).

Issue 18's session rules live here: a viewer becomes attached only in ``attach``;
what a session holds is ``bytes_held`` (the server's byte budget adds these up);
whether it may be forgotten is ``evictable`` (never with a viewer, a socket bound
to it, a run, or activity within the quiet period); a store that finds its data
gone calls ``load`` and ``store_unavailable``.  Sockets, addresses, pings and
Redis are the server's (``streampace.server``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Generic

from streampace.conversation import events as ev
from streampace.conversation.transcript import ToolCallItem, Transcript
from streampace.lifecycle import Machine

from . import client_messages as cm
from . import eviction
from .active_run import ActiveRun
from .framing import RunFramer, UpstreamError
from .log import SessionLog
from .outputs import (
    Attach,
    Deliver,
    Disconnect,
    Emit,
    LogReplaced,
    Output,
    PublishCancel,
    Refusal,
    Reply,
    RunEnded,
    StartRun,
    StopRun,
    Viewer,
)
from .protocol import ATTACH_LOG, ATTACH_SNAPSHOT, attach_mode, attached_message, error_message
from .run_lifecycle import (
    Outcome,
    RunHolder,
    RunLifecycle,
    RunState,
    StopEffect,
    run_holder,
)
from .session_lifecycle import SESSION_TABLE, SessionEvent, SessionState
from .snapshot import snapshot_events
from .source import RunRequest, check_source_end, new_run_id

__all__ = ["SessionEngine", "SHUTDOWN_REFUSAL", "EVICTED", "refusal"]

SHUTDOWN_REFUSAL = "the server is shutting down"
EVICTED = "the session was forgotten; reconnect"


def refusal(viewer: Viewer, error: cm.ClientError) -> Refusal[Viewer]:
    """The one way a client message is refused: by the engine, and by a driver for one
    it could not decode or that reaches no session (the same code and text from
    the server and the page)."""
    return Refusal(viewer, error.code, error_message(error.code, error.message))


class SessionEngine(Generic[Viewer]):
    """One session: see the module docstring.

    ``shared_log``: the log is a store's that other processes write too (Redis);
    events emitted by a run come back through ``append`` once the store has them,
    and the session counts as running while its log shows a run open, wherever it
    runs.  The driver streams the source (``begin_run``, ``source_group``,
    ``end_run``).
    """

    def __init__(
        self,
        session_id: str,
        *,
        epoch: str,
        log: SessionLog,
        transcript: Transcript,
        clock: Callable[[], float],
        run_ids: Callable[[], str] = new_run_id,
        scenarios: Collection[str] | None = None,
        trusted: bool = False,
        shared_log: bool = False,
    ) -> None:
        self.id = session_id
        # Names this sequence-number space: a session forgotten (restart, eviction)
        # and created again starts at 1 under a new epoch (docs/protocol.md).
        self.epoch = epoch
        self.log = log
        self.transcript = transcript
        self._clock = clock
        self._run_ids = run_ids
        self._scenarios = scenarios  # None: the source has none (the field is ignored)
        self._trusted = trusted  # our own simulated model: no per-event validation
        self.shared_log = shared_log
        self.viewers: set[Viewer] = set()  # attached
        self.connected: set[Viewer] = set()  # bound to this session, attached or not
        self.lifecycle: Machine[SessionState, SessionEvent] = Machine(
            "session", SESSION_TABLE, SessionState.OPEN)
        self.runs = RunLifecycle()
        self._run: ActiveRun[Viewer] | None = None
        self._queued: ActiveRun[Viewer] | None = None  # accepted while the last one hands over
        self.run_count = 0
        self.last_active = clock()  # creation, a viewer leaving, a run settling
        # What the transcript held when last measured (a run's end), and the log's
        # running total of appended bytes then: ``bytes_held`` adds what came since.
        self._transcript_bytes = 0
        self._appended_at_measure = log.appended_bytes

    # -- what the drivers ask --------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self.lifecycle.state

    @property
    def run_state(self) -> RunState:
        return self.runs.state

    @property
    def run_holder(self) -> RunHolder:
        """Who holds the session's run: this engine's, another process's (only the
        shared log shows it), or none (``run_lifecycle.run_holder`` is the rule)."""
        return run_holder(self.runs.state, self.transcript.run.status, self.shared_log)

    @property
    def run_held(self) -> bool:
        """A run holds the session: a new one is refused with ``run_active`` and a
        ``cancel`` has something to stop."""
        return self.run_holder is not RunHolder.NONE

    @property
    def idle(self) -> bool:
        """Nobody attached and nothing running here: the session may be evicted."""
        return not self.viewers and not self.runs.active

    @property
    def bytes_held(self) -> int:
        """About what this session keeps in memory: the log's events (compact JSON
        bytes) plus the transcript's text (UTF-8 bytes), measured at each run's end
        and grown since by every byte logged — an upper bound while a run streams."""
        since = self.log.appended_bytes - self._appended_at_measure
        return self.log.size_bytes + self._transcript_bytes + since

    def evictable(self, now: float, quiet_ms: float) -> bool:
        """The session may be forgotten (``session/eviction.py``): nobody attached or
        bound to it, no run here, and quiet for ``quiet_ms`` — a session never used
        for a run counts as quiet at once."""
        return eviction.evictable(self, now, quiet_ms)

    @property
    def run_outcome(self) -> Outcome | None:
        """The outcome decided for the run that is ending (None before that)."""
        return self.runs.outcome

    def wants_source(self, run_id: str) -> bool:
        """The driver should keep pulling run ``run_id``'s source."""
        run = self._run
        return run is not None and run.run_id == run_id and not run.framer.done

    # -- viewers -------------------------------------------------------------

    def connect(self, viewer: Viewer) -> list[Output[Viewer]]:
        """A connection is bound to this session (it attaches with its first message)."""
        if not self.lifecycle.accepts(SessionEvent.INPUT):
            return [Disconnect(viewer, EVICTED)]
        self.connected.add(viewer)
        return []

    def receive(self, viewer: Viewer, msg: cm.ClientMessage) -> list[Output[Viewer]]:
        """A decoded client message from ``viewer``: its replies and their effects."""
        if not self.lifecycle.accepts(SessionEvent.INPUT):
            return [Disconnect(viewer, EVICTED)]
        try:
            if isinstance(msg, cm.ResumeMessage):
                cm.check_resume(viewer in self.viewers)
                return self.attach(viewer, msg.after, msg.epoch)
            if isinstance(msg, cm.RunMessage):
                scenario = cm.check_run(msg, self._scenarios, self.run_held)
                if not self.lifecycle.accepts(SessionEvent.RUN):
                    raise cm.ClientError("run_active", SHUTDOWN_REFUSAL)
                out = [] if viewer in self.viewers else self.attach(viewer, None)
                return out + self.start_run(msg.prompt, scenario, requester=viewer)
            return self.cancel()
        except cm.ClientError as exc:
            return [refusal(viewer, exc)]

    def cancel(self) -> list[Output[Viewer]]:
        """A ``cancel``: the run that holds the session stops, here or at the process
        that runs it (a ``ClientError`` when none does)."""
        holder = self.run_holder
        cm.check_cancel(holder is not RunHolder.NONE)
        if holder is RunHolder.HERE:
            return self.stop(cm.CANCEL_CODE, cm.CANCEL_MESSAGE)
        return [PublishCancel(cm.CANCEL_CODE, cm.CANCEL_MESSAGE)]

    def attach(self, viewer: Viewer, after: int | None,
               epoch: str | None = None) -> list[Output[Viewer]]:
        """Attach ``viewer`` after seq ``after`` of ``epoch`` (None: from now).

        Another epoch's positions mean nothing here, and a log that no longer
        holds ``after + 1`` cannot replay from there: those viewers get a snapshot.
        Only the position is decided here, so no event can slip in between the
        replay and live delivery.
        """
        if not self.lifecycle.accepts(SessionEvent.INPUT):
            return [Disconnect(viewer, EVICTED)]
        head = self.log.head
        mode = attach_mode(self.log, after, epoch, self.epoch)
        start = after if mode == ATTACH_LOG and after is not None else head
        snapshot = snapshot_events(self.transcript) if mode == ATTACH_SNAPSHOT else None
        self.viewers.add(viewer)
        self.connected.add(viewer)
        return [Attach(viewer, attached_message(self.id, self.epoch, mode, start), mode, start,
                       snapshot)]

    def leave(self, viewer: Viewer) -> list[Output[Viewer]]:
        """``viewer``'s connection is gone."""
        self.viewers.discard(viewer)
        self.connected.discard(viewer)
        self.last_active = self._clock()
        return []

    def evict(self) -> list[Output[Viewer]]:
        """The session is forgotten (only when ``idle``: ``eviction.check_forgettable``
        guards the table's ``EVICT``): connections still bound to it are closed, and
        every later input gets the same answer."""
        eviction.check_forgettable(self)
        self.lifecycle.step(SessionEvent.EVICT)
        gone, self.connected = self.connected, set()
        return [Disconnect(viewer, EVICTED) for viewer in gone]

    def store_unavailable(self, message: str) -> list[Output[Viewer]]:
        """The store cannot be reached: every attached viewer is told (once per outage,
        the store decides)."""
        text = error_message("store_unavailable", message)
        return [Reply(viewer, text) for viewer in self.viewers]

    def store_lost(self, message: str) -> list[Output[Viewer]]:
        """The store lost the data this engine's log continues (a Redis restarted
        empty): every viewer is told, then disconnected to resume into the store's
        session under its new epoch (so no two viewers hold different texts under
        one epoch); a run here stops (its lease went with the data)."""
        out = self.store_unavailable(message)
        out += self.stop("store_unavailable", "the session store lost its data")
        gone, self.connected = self.connected, set()
        self.viewers = set()
        return out + [Disconnect(viewer, message, drain=True) for viewer in gone]

    # -- the log ---------------------------------------------------------------

    def append(self, events: list[dict[str, Any]]) -> list[Output[Viewer]]:
        """The store logged ``events``: number them, fold them, fan them out."""
        if not events:
            return []
        first = self.log.head + 1
        through = self.log.append(events)
        self.transcript.apply(events)
        return [Deliver(events, first, through)]

    def load(self, epoch: str, log: SessionLog, transcript: Transcript,
             replacing: bool) -> list[Output[Viewer]]:
        """The store's view of the session (loaded before the first attach, or
        reloaded after a gap: then viewers must not follow the old log)."""
        self.epoch, self.log, self.transcript = epoch, log, transcript
        self._measure()
        return [LogReplaced()] if replacing else []

    def lost_run_events(self, code: str, message: str) -> list[dict[str, Any]]:
        """What ends the run the log shows open (its owner is gone): its open items
        closed, then RUN_ERROR ``code``."""
        return [*self.transcript.closing_events(),
                {"type": ev.RUN_ERROR, "message": message, "code": code}]

    # -- runs --------------------------------------------------------------------

    def start_run(self, prompt: str, scenario: str | None,
                  requester: Viewer | None = None) -> list[Output[Viewer]]:
        """Accept a run (the checks of a `run` message are the caller's; a run that the
        lifecycle cannot take raises LifecycleError)."""
        run_id = self._run_ids()
        run = ActiveRun(run_id, prompt, scenario,
                        RunFramer(self.id, run_id, prompt, validate=not self._trusted), requester)
        self.runs.start(run_id)
        if self.runs.state is RunState.HANDING_OVER:
            self._queued = run  # starts when the ending run settles
            return []
        self._run = run
        return [StartRun(run_id)]

    def run_refused(self, run_id: str, code: str, message: str) -> list[Output[Viewer]]:
        """The store gave run ``run_id`` no lease: it never started and wrote nothing."""
        run = self._current(run_id)
        self.runs.refuse()
        self._run = None
        if run.requester is None:
            return []
        return [Reply(run.requester, error_message(code, message))]

    def begin_run(self, run_id: str, run_index: int | None = None) -> RunRequest | None:
        """Run ``run_id``'s body starts: what to ask the source, or None when it was
        stopped before (then the body goes straight to ``end_run``).

        ``run_index``: the run's number when the store keeps the count (Redis).
        """
        run = self._current(run_id)
        if not self.runs.begin():
            return None
        if run_index is not None:
            self.run_count = run_index
        run.framer.use_state(self.transcript.shared_state)  # state events are checked on it
        request = RunRequest(thread_id=self.id, run_id=run_id, prompt=run.prompt,
                             scenario=run.scenario, run_index=self.run_count,
                             history=self.transcript.history(), state=self.transcript.state)
        self.run_count += 1
        return request

    def source_group(self, run_id: str, group: list[Any]) -> list[Output[Viewer]]:
        """A group of source events for run ``run_id``, framed for the log."""
        run = self._current(run_id)
        events = run.framer.feed_group(group)
        return [Emit(run_id, events)] if events else []

    def end_run(self, run_id: str, outcome: Outcome | None = None) -> list[Output[Viewer]]:
        """Run ``run_id``'s body is over: ``outcome`` is what it saw (None: its source
        simply stopped yielding).  An earlier stop's outcome wins; exactly one
        terminal event follows."""
        run = self._current(run_id)
        if outcome is None:
            try:
                check_source_end(run.framer)
                outcome = Outcome()
            except UpstreamError as exc:
                outcome = Outcome(exc.code, exc.message)
        final = self.runs.end(outcome)
        out: list[Output[Viewer]] = []
        if final.code is not None:
            events = run.framer.finish(final.code, final.message)
            if events:
                out.append(Emit(run_id, events))
        out.append(RunEnded(run_id))
        return out

    def settle_run(self, run_id: str) -> list[Output[Viewer]]:
        """Run ``run_id``'s ending is written and released: the session is free, or
        the run queued behind it starts."""
        self._current(run_id)
        nxt = self.runs.settle()
        self._run, self._queued = self._queued, None
        self.last_active = self._clock()
        self._measure()
        return [] if nxt is None else [StartRun(nxt)]

    def stop(self, code: str, message: str, run_id: str | None = None) -> list[Output[Viewer]]:
        """End the run here with RUN_ERROR ``code`` (a cancel, a shutdown, a lost lease).

        ``run_id``: only that run (a stop from a run's own lease keeper).  A run
        stopped before its body began records the stop; its body ends it.
        """
        if run_id is not None and run_id != self.runs.run_id:
            return []
        if self.runs.stop(code, message) is not StopEffect.CUT_OFF:
            return []  # ignored, or recorded: the body ends the run when it first runs
        run = self._run
        assert run is not None
        return [StopRun(run.run_id)]

    def shut_down(self, code: str, message: str) -> list[Output[Viewer]]:
        """Refuse new runs and stop the one in progress."""
        self.lifecycle.step(SessionEvent.SHUT_DOWN)
        return self.stop(code, message)

    # -- internals ------------------------------------------------------------------

    def _measure(self) -> None:
        """Measure the transcript's text now (a run's end, a load): O(items), once."""
        total = 0
        for item in self.transcript.items():
            for text in _item_texts(item):
                total += len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
        self._transcript_bytes = total
        self._appended_at_measure = self.log.appended_bytes

    def _current(self, run_id: str) -> ActiveRun:
        run = self._run
        if run is None or run.run_id != run_id:
            raise RuntimeError(f"session {self.id}: {run_id} is not its current run")
        return run


def _item_texts(item: Any) -> list[str]:
    """The strings a transcript item keeps (message text, tool arguments and result)."""
    if isinstance(item, ToolCallItem):
        result = item.result
        return [item.args, result] if isinstance(result, str) else [item.args]
    return [item.text]
