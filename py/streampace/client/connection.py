"""The client side of a session socket: one state machine, driven from Python,
for the page's WebSocket (js_shim/bridge.js `SessionSocket`) and the in-page
simulated one (client/page_socket.py `SimulatedSession`).

A transport only moves bytes.  It executes `open()`, `send(text)`,
`close(code, reason)` and `probe()` (a plain HTTP request to its URL, to
explain a failed handshake), and reports what happened as items
`(kind, data)`, in order, to the sink it is attached to:

- ``("open", "greeted" | "")``: the socket is open.  "greeted": it opened
  before anyone attached, so it sent `protocol.HELLO` (a fresh viewer's
  resume) and the sends queued before the open itself.  Otherwise the
  connection sends the resume.
- ``("message", text)``: a server message (None for a binary frame).
- ``("close", {"code", "reason"})``: the socket closed (or never opened).
- ``("probe", {"reachable", "status", "protocol"})``: what `probe()` found;
  also sent by a transport that probed before opening and found no server.
- ``("unsent", text)``: on attach, a send queued before it that the socket
  has not sent (it never opened): sent after the next resume.

A transport never reconnects on its own, so what it reported before Python
attached is replayed in order and Python decides every resume position: a
connection lost while the page was still booting resumes exactly.

Decisions here, nowhere else: when to reconnect (backoff.py, the one law), what
a close means (connection_problems.py), what goes out on open (the resume
after the consumer's position, then the sends queued meanwhile).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from enum import Enum
from typing import Any, Protocol

from streampace.bounded_json import JsonLimitError
from streampace.bounded_json import loads as bounded_loads
from streampace.clock import Timeout, TimerHost
from streampace.lifecycle import Machine, Rule, Table
from streampace.session.protocol import Attached, Batch, CloseCode, ServerMessage, minted_url

from .backoff import backoff_delay_ms
from .connection_problems import Problem, close_problem, parse_probe, probe_problem

__all__ = ["ConnState", "ConnEvent", "TABLE", "Transport", "Consumer", "SessionConnection",
           "MAX_QUEUED_SENDS"]

# Sends held while not connected (user actions: a run, a cancel).  More than
# this is a page bug; the extra ones are refused, not silently grown.
MAX_QUEUED_SENDS = 64
_MAX_REPORT_BYTES = 4096  # a transport's close/probe report is tiny


class ConnState(Enum):
    CONNECTING = "connecting"  # the transport is opening a socket
    DIAGNOSING = "diagnosing"  # the handshake failed; probing the URL to say why
    OPEN = "open"  # open, resume sent, nothing received yet
    ATTACHED = "attached"  # the server answered: delivery runs
    WAITING = "waiting"  # closed; reconnecting after a backoff delay
    CLOSED = "closed"  # closed by the page, or for good (retrying cannot help)


class ConnEvent(Enum):
    OPENED = "opened"
    DELIVERED = "delivered"  # an `attached` message or a batch arrived
    LOST = "lost"  # closed or failed, cause known: retry
    HANDSHAKE_FAILED = "handshake_failed"  # failed before open, cause unknown: probe
    GIVE_UP = "give_up"  # closed or failed, and retrying cannot help (or is not wanted)
    RETRY_DUE = "retry_due"
    CLOSE = "close"  # the page closes it


S, E = ConnState, ConnEvent
TABLE: Table[ConnState, ConnEvent] = {
    (S.CONNECTING, E.OPENED): Rule(S.OPEN, "send the resume, then what was queued"),
    (S.CONNECTING, E.LOST): Rule(S.WAITING, "the handshake failed for a known reason"),
    (S.CONNECTING, E.HANDSHAKE_FAILED): Rule(S.DIAGNOSING, "ask the URL why"),
    (S.CONNECTING, E.GIVE_UP): Rule(S.CLOSED, "failed, and no retry before a first open"),
    (S.CONNECTING, E.CLOSE): Rule(S.CLOSED, ""),
    (S.DIAGNOSING, E.LOST): Rule(S.WAITING, "explained: report it, retry"),
    (S.DIAGNOSING, E.GIVE_UP): Rule(S.CLOSED, "explained, and no retry before a first open"),
    (S.DIAGNOSING, E.CLOSE): Rule(S.CLOSED, ""),
    (S.OPEN, E.DELIVERED): Rule(S.ATTACHED, "the server serves us: backoff starts over"),
    (S.OPEN, E.LOST): Rule(S.WAITING, "e.g. 1013 right after the open: keep backing off"),
    (S.OPEN, E.GIVE_UP): Rule(S.CLOSED, "4403 / 4400: the same request gets the same answer"),
    (S.OPEN, E.CLOSE): Rule(S.CLOSED, ""),
    (S.ATTACHED, E.DELIVERED): Rule(S.ATTACHED, ""),
    (S.ATTACHED, E.LOST): Rule(S.WAITING, "resume after the position applied"),
    (S.ATTACHED, E.GIVE_UP): Rule(S.CLOSED, ""),
    (S.ATTACHED, E.CLOSE): Rule(S.CLOSED, ""),
    (S.WAITING, E.RETRY_DUE): Rule(S.CONNECTING, "the transport opens a new socket"),
    (S.WAITING, E.CLOSE): Rule(S.CLOSED, ""),
    (S.CLOSED, E.CLOSE): Rule(S.CLOSED, "closing twice is harmless"),
}
del S, E


class Transport(Protocol):
    """What the connection asks of a socket (and nothing more)."""

    def open(self) -> None: ...

    def send(self, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def probe(self) -> None: ...

    def retarget(self, url: str) -> None:
        """Open the next socket at ``url`` (a session the server minted for us)."""


class Consumer(Protocol):
    """The session client behind the connection (client/session_client.py `SessionClient`)."""

    def resume_message(self) -> str: ...

    def receive(self, text: Any) -> ServerMessage | None: ...


class SessionConnection:
    """One client connection: the machine above, its effects, its figures.

    ``handle`` is the transport's sink.  ``on_change(old, new, problem)`` hears
    every move; ``on_problem(problem, retry_in_ms)`` hears each new reason for
    not being connected (once per code until the next attach); ``retry_in_ms``
    is None when the connection gave up.  ``retry_before_open`` False: a
    transport that never opened is given up on at its first failure (a page
    that falls back to something else, like the demo's simulation).
    """

    def __init__(self, transport: Transport, host: TimerHost, consumer: Consumer, *,
                 url: str = "", asked_url: str | None = None,
                 retry_before_open: bool = True, reconnect: bool = True,
                 on_change: Callable[[ConnState, ConnState, Problem | None], None] | None = None,
                 on_problem: Callable[[Problem, float | None], None] | None = None,
                 base_ms: float = 250, cap_ms: float = 10_000,
                 rng: random.Random | None = None) -> None:
        self.transport = transport
        self.host = host
        self.consumer = consumer
        self.url = url
        # As the page gave it: ``.../new`` asks for a minted session (``url`` may
        # already be the one this tab was minted before a reload).
        self.asked_url = asked_url if asked_url else url
        self.retry_before_open = retry_before_open
        self.reconnect = reconnect
        self.on_change = on_change
        self.on_problem = on_problem
        self.base_ms = base_ms
        self.cap_ms = cap_ms
        self._rng = rng
        self.machine: Machine[ConnState, ConnEvent] = Machine(
            "client connection", TABLE, ConnState.CONNECTING)
        self._retry = Timeout(host, self._retry_due)
        self._retry_at: float | None = None
        self._queued: deque[str] = deque()
        self._inbox: deque[Callable[[], None]] = deque()
        self._handling = False
        self._diagnosis: Problem | None = None  # this failure streak's probe verdict
        self._reported: set[str] = set()  # problem codes told to the page this streak
        self.problem: Problem | None = None  # why it is (or last was) not connected
        self.last_close: tuple[int, str] | None = None
        self.attempt = 0  # failed attempts since the last attach
        self.opens = 0
        self.closes = 0
        self.refused_sends = 0

    @property
    def state(self) -> ConnState:
        return self.machine.state

    # -- the transport's reports ------------------------------------------------
    def handle(self, kind: str, data: Any = None) -> None:
        """The transport's sink."""
        self._run(lambda: self._dispatch(kind, data))

    def _run(self, work: Callable[[], None]) -> None:
        """Every input — a report, the retry timer, the page's close — runs here,
        one at a time: one that arrives while another is being handled (a
        transport that answers synchronously, a page closing from an event
        handler) waits its turn, in order."""
        self._inbox.append(work)
        if self._handling:
            return
        self._handling = True
        try:
            while self._inbox:
                self._inbox.popleft()()
        finally:
            self._handling = False

    def _dispatch(self, kind: str, data: Any) -> None:
        if kind == "message":
            msg = self.consumer.receive(data)
            if isinstance(msg, Attached):
                self._follow_minted(msg.session_id)
            if isinstance(msg, (Attached, Batch)):
                self._step(ConnEvent.DELIVERED)
        elif kind == "open":
            self._step(ConnEvent.OPENED, greeted=data == "greeted")
        elif kind == "close":
            self._closed(_report(data))
        elif kind == "probe":
            self._probed(_report(data))
        elif kind == "unsent" and isinstance(data, str):
            self.send(data)
        # Any other kind is a transport this module does not know: ignored.

    def _closed(self, report: dict[str, Any]) -> None:
        self.closes += 1
        code = report.get("code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else 1006
        reason = report.get("reason")
        reason = reason if isinstance(reason, str) else ""
        self.last_close = (code, reason[:123])
        opened = self.state in (ConnState.OPEN, ConnState.ATTACHED)
        problem = close_problem(code, reason, opened)
        if (problem is not None and code == CloseCode.UNKNOWN_SESSION
                and self.url != self.asked_url):
            # The session the server minted for us is gone (a restarted server, or
            # one this tab kept across a reload): ask for a new one; the resume's
            # epoch tells the client what it lost.  Nothing for the reader to act
            # on, so not reported (the drop before it was).
            self._retarget(self.asked_url)
            problem = replace(problem, final=False, report=False)
        if problem is None:
            if self._diagnosis is None:
                self._step(ConnEvent.HANDSHAKE_FAILED)
                return
            problem = self._diagnosis  # explained earlier in this streak
        self._failed(problem)

    def _probed(self, report: dict[str, Any]) -> None:
        # In CONNECTING the transport probed first (no socket was tried).
        tried = self.state is not ConnState.CONNECTING
        problem = probe_problem(parse_probe(report), self.url, handshake_tried=tried)
        if tried:
            self._diagnosis = problem
        self._failed(problem)

    def _failed(self, problem: Problem) -> None:
        if self.opens == 0 and not self.retry_before_open:
            # The page handles a first failure itself (the demo falls back to
            # its simulation): recorded, not reported.
            self._step(ConnEvent.GIVE_UP, problem=replace(problem, report=False))
        elif problem.final or not self.reconnect:
            self._step(ConnEvent.GIVE_UP, problem=problem)
        else:
            self._step(ConnEvent.LOST, problem=problem)

    # -- the page's side --------------------------------------------------------
    def send(self, text: str) -> bool:
        """Send now if connected, else after the next resume; False when refused
        (closed for good, or too many held)."""
        state = self.state
        if state in (ConnState.OPEN, ConnState.ATTACHED):
            self.transport.send(text)
            return True
        if state is ConnState.CLOSED or len(self._queued) >= MAX_QUEUED_SENDS:
            self.refused_sends += 1
            return False
        self._queued.append(text)
        return True

    def close(self) -> None:
        self._run(lambda: self._step(ConnEvent.CLOSE))

    def _follow_minted(self, session_id: str) -> None:
        """Asked for a new session: reconnect to the one the server minted."""
        target = minted_url(self.asked_url, session_id)
        if target is not None and target != self.url:
            self._retarget(target)

    def _retarget(self, url: str) -> None:
        self.url = url
        self.transport.retarget(url)

    def _retry_due(self) -> None:
        self._run(lambda: self._step(ConnEvent.RETRY_DUE))

    # -- moves and their effects ---------------------------------------------------
    def _step(self, event: ConnEvent, *, greeted: bool = False,
              problem: Problem | None = None) -> None:
        old = self.state
        new = self.machine.step(event)
        if new is old:
            return  # another batch while attached; a second close
        if problem is not None:
            self.problem = problem
        self._enter(new, event, greeted)
        if self.on_change is not None:
            self.on_change(old, new, problem)
        if problem is not None and problem.report and problem.code not in self._reported:
            self._reported.add(problem.code)
            if self.on_problem is not None:
                self.on_problem(problem, self.retry_in_ms())

    def _enter(self, state: ConnState, event: ConnEvent, greeted: bool) -> None:
        """The effects of arriving in ``state`` (each state has one set)."""
        if state is ConnState.OPEN:
            self.opens += 1
            self._diagnosis = None
            if not greeted:
                self.transport.send(self.consumer.resume_message())
            while self._queued and self.state is ConnState.OPEN:
                self.transport.send(self._queued.popleft())
        elif state is ConnState.ATTACHED:
            self.attempt = 0
            self._reported.clear()
            self.problem = None
        elif state is ConnState.WAITING:
            delay = backoff_delay_ms(self.attempt, self.base_ms, self.cap_ms, rng=self._rng)
            self.attempt += 1
            self._retry_at = self.host.now() + delay
            self._retry.arm(delay)
        elif state is ConnState.DIAGNOSING:
            self.transport.probe()
        elif state is ConnState.CONNECTING:
            self._retry_at = None
            self.transport.open()
        elif state is ConnState.CLOSED:
            self._retry.cancel()
            self._retry_at = None
            if event is ConnEvent.CLOSE:
                self._inbox.clear()  # the page is done with it: nothing more to report
                self.problem = None
            self.transport.close(int(CloseCode.NORMAL), "client closed")

    # -- figures ------------------------------------------------------------------
    def retry_in_ms(self) -> float | None:
        if self._retry_at is None:
            return None
        return max(0.0, self._retry_at - self.host.now())

    def stats(self) -> dict[str, Any]:
        """Why it is or is not connected, for `streampace.stats()`."""
        retry = self.retry_in_ms()
        return {
            "state": self.state.value,
            "url": self.url,
            "opens": self.opens,
            "closes": self.closes,
            "attempt": self.attempt,
            "lastClose": (None if self.last_close is None else
                          {"code": self.last_close[0], "reason": self.last_close[1]}),
            "problem": None if self.problem is None else {
                **self.problem.detail(), "final": self.problem.final},
            "retryInMs": None if retry is None else round(retry),
            "queuedSends": len(self._queued),
            "refusedSends": self.refused_sends,
        }

    def status_text(self) -> str:
        """One line for the view's status element; empty while all is well."""
        problem, state = self.problem, self.state
        if problem is None or not problem.report or state is ConnState.ATTACHED:
            return ""
        if state is ConnState.WAITING:
            retry = self.retry_in_ms() or 0.0
            return f"{problem.message} Reconnecting in {max(1, round(retry / 1000))} s…"
        if state is ConnState.CLOSED:
            return f"{problem.message} Not reconnecting."
        if state in (ConnState.CONNECTING, ConnState.DIAGNOSING):
            return f"{problem.message} Reconnecting (attempt {self.attempt + 1})…"
        return ""  # OPEN: the resume is on its way


def _report(data: Any) -> dict[str, Any]:
    """A transport's JSON report (a dict from Python transports)."""
    if isinstance(data, dict):
        return data
    if isinstance(data, str):
        try:
            value = bounded_loads(data, max_bytes=_MAX_REPORT_BYTES, max_depth=4)
        except JsonLimitError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}
