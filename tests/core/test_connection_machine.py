"""The client connection's machine (client/connection.py) on a virtual clock,
with a scripted transport: what it sends, when it reconnects, what it reports."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from streampace.client.connection import (
    MAX_QUEUED_SENDS,
    TABLE,
    ConnState,
    SessionConnection,
)
from streampace.client.connection_problems import Problem
from streampace.client.session_client import SessionClient
from streampace.lifecycle import diagram, unreachable
from streampace.session import protocol
from streampace.testing import ManualHost

ROOT = Path(__file__).resolve().parents[2]
EVENT = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}


class Transport:
    """Records what the connection asks for; the test plays the socket."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def open(self) -> None:
        self.calls.append(("open",))

    def send(self, text: str) -> None:
        self.calls.append(("send", text))

    def close(self, code: int, reason: str) -> None:
        self.calls.append(("close", code))

    def probe(self) -> None:
        self.calls.append(("probe",))

    def retarget(self, url: str) -> None:
        self.calls.append(("retarget", url))

    def take(self) -> list[tuple[Any, ...]]:
        calls, self.calls = self.calls, []
        return calls


class Rig:
    def __init__(self, url: str = "ws://h/ws/sessions/s", **options: Any) -> None:
        self.host = ManualHost()
        self.transport = Transport()
        self.events: list[dict] = []
        self.client = SessionClient(self.events.extend)
        self.problems: list[tuple[Problem, float | None]] = []
        self.moves: list[tuple[str, str]] = []
        self.conn = SessionConnection(
            self.transport, self.host, self.client, url=url,
            rng=random.Random(3),
            on_problem=lambda p, retry: self.problems.append((p, retry)),
            on_change=lambda old, new, _p: self.moves.append((old.value, new.value)),
            **options)

    def attach(self, epoch: str = "e1", after: int = 0) -> None:
        self.conn.handle("open", "")
        attached = protocol.attached_message("s", epoch, protocol.ATTACH_LOG, after)
        self.conn.handle("message", attached)

    def batch(self, through: int) -> None:
        self.conn.handle("message", protocol.batch_message(through, [EVENT]))

    def close(self, code: int, reason: str = "") -> None:
        self.conn.handle("close", json.dumps({"code": code, "reason": reason}))

    def probed(self, **found: Any) -> None:
        self.conn.handle("probe", json.dumps(found))

    def state(self) -> ConnState:
        """Read afresh: mypy keeps `conn.state` narrowed by an earlier assert."""
        return self.conn.state

    def codes(self) -> list[str]:
        return [p.code for p, _ in self.problems]


def test_every_state_is_reachable_and_the_docs_show_the_table() -> None:
    assert unreachable(TABLE, ConnState.CONNECTING, ConnState) == []
    docs = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- connection diagram -->\n```mermaid\n(.*?)```", docs, re.S)
    assert shown is not None, "docs/protocol.md lacks the connection diagram"
    assert shown.group(1) == diagram(TABLE, ConnState.CONNECTING)


def test_open_sends_the_resume_then_what_was_queued() -> None:
    rig = Rig()
    assert rig.conn.send(protocol.run_message("hi"))  # before the open: held
    assert rig.transport.take() == []
    rig.conn.handle("open", "")
    assert rig.transport.take() == [("send", protocol.HELLO),
                                    ("send", protocol.run_message("hi"))]
    assert rig.conn.state is ConnState.OPEN
    rig.conn.handle("message", protocol.attached_message("s", "e1", protocol.ATTACH_LOG, 0))
    assert rig.state() is ConnState.ATTACHED
    assert rig.conn.send(protocol.cancel_message())
    assert rig.transport.take() == [("send", protocol.cancel_message())]


def test_a_greeted_open_sends_no_second_resume() -> None:
    """The socket opened before Python attached and sent HELLO itself."""
    rig = Rig()
    rig.conn.handle("unsent", protocol.run_message("queued in JS"))
    rig.conn.handle("open", "greeted")
    assert rig.transport.take() == [("send", protocol.run_message("queued in JS"))]


def test_a_lost_connection_resumes_after_the_position_in_its_epoch() -> None:
    rig = Rig()
    rig.attach("e7")
    rig.batch(5)
    rig.batch(9)
    rig.transport.take()
    rig.close(1006)
    assert rig.conn.state is ConnState.WAITING
    assert rig.codes() == ["connection_lost"]
    retry = rig.problems[0][1]
    assert retry is not None and 125 <= retry <= 250  # attempt 0: [base/2, base]
    rig.host.tick(retry - 1)
    assert rig.transport.take() == []
    rig.host.tick(1)
    assert rig.transport.take() == [("open",)] and rig.state() is ConnState.CONNECTING
    rig.conn.handle("open", "")
    sent = rig.transport.take()
    assert [json.loads(c[1]) for c in sent] == [{"type": "resume", "after": 9, "epoch": "e7"}]
    assert rig.moves == [("connecting", "open"), ("open", "attached"), ("attached", "waiting"),
                         ("waiting", "connecting"), ("connecting", "open")]


def test_backoff_grows_until_the_server_serves_again() -> None:
    """1013 right after each open (store unavailable): the open alone does not
    reset the backoff, the next attach does; the problem is reported once."""
    rig = Rig()
    delays = []
    for _ in range(6):
        rig.conn.handle("open", "")
        rig.close(1013, "session store unavailable")
        delays.append(rig.conn.retry_in_ms())
        rig.host.tick(rig.conn.retry_in_ms() or 0)
    for attempt, delay in enumerate(delays):
        ceiling = min(10_000, 250 * 2 ** attempt)
        assert delay is not None and ceiling / 2 <= delay <= ceiling
    assert rig.codes() == ["try_again_later"] and rig.conn.attempt == 6
    st = rig.conn.stats()
    assert st["lastClose"] == {"code": 1013, "reason": "session store unavailable"}
    assert st["problem"]["code"] == "try_again_later" and st["state"] == "connecting"
    rig.attach()
    assert rig.conn.attempt == 0 and rig.conn.problem is None
    assert rig.conn.status_text() == ""
    rig.close(1013)
    assert rig.codes() == ["try_again_later", "try_again_later"]  # a new streak
    assert (rig.conn.retry_in_ms() or 0) <= 250


@pytest.mark.parametrize(("code", "name"), [(4403, "origin_refused"), (4400, "bad_request")])
def test_refusals_that_would_repeat_are_final_and_reported(code: int, name: str) -> None:
    rig = Rig()
    rig.conn.handle("open", "")
    rig.close(code, "origin not allowed")
    assert rig.conn.state is ConnState.CLOSED
    (problem, retry), = rig.problems
    assert problem.code == name and problem.final and retry is None
    assert problem.detail() == {"code": name, "message": problem.message, "closeCode": code,
                                "reason": "origin not allowed"}
    assert rig.transport.take()[-1] == ("close", 1000)
    rig.host.run_all()
    assert rig.transport.take() == []  # never retried
    assert rig.conn.status_text().endswith("Not reconnecting.")
    assert not rig.conn.send(protocol.cancel_message())


def test_a_failed_handshake_is_explained_by_a_probe_once_per_streak() -> None:
    rig = Rig()
    rig.close(1006)  # never opened: a browser says nothing more
    assert rig.conn.state is ConnState.DIAGNOSING and rig.transport.take() == [("probe",)]
    assert rig.problems == []
    rig.probed(reachable=False, status=None, protocol=False)
    assert rig.state() is ConnState.WAITING and rig.codes() == ["no_server"]
    # The server and path, never the session id (protocol.shown_url).
    assert "ws://h/ws/sessions/…" in rig.problems[0][0].message
    assert "sessions/s " not in rig.problems[0][0].message
    rig.host.tick(rig.conn.retry_in_ms() or 0)
    rig.transport.take()
    rig.close(1006)  # the same streak: the verdict stands, no second probe
    assert rig.state() is ConnState.WAITING and rig.transport.take() == []
    assert rig.conn.attempt == 2 and rig.codes() == ["no_server"]
    assert "Reconnecting in" in rig.conn.status_text()


@pytest.mark.parametrize(("found", "name", "status"), [
    ({"reachable": True, "status": 404, "protocol": False}, "not_found", 404),
    ({"reachable": True, "status": 404, "protocol": True}, "handshake_failed", 404),
    ({"reachable": True, "status": None, "protocol": False}, "handshake_failed", None),
    ({"reachable": True, "status": 502, "protocol": False}, "handshake_failed", 502),
    ({"reachable": "yes", "status": "404"}, "no_server", None),  # malformed: unreachable
])
def test_probe_verdicts(found: dict, name: str, status: int | None) -> None:
    rig = Rig()
    rig.close(1006)
    rig.probed(**found)
    (problem, retry), = rig.problems
    assert problem.code == name and problem.http_status == status and retry is not None


def test_a_page_that_falls_back_is_not_told_about_a_first_failure() -> None:
    """retry_before_open False (the demo): the first failure is final and only
    recorded; after a first open, losses are retried as usual."""
    rig = Rig(retry_before_open=False)
    rig.probed(reachable=True, status=200, protocol=False)  # the socket probed first
    assert rig.conn.state is ConnState.CLOSED and rig.problems == []
    assert rig.conn.stats()["problem"]["code"] == "no_server"
    other = Rig(retry_before_open=False)
    other.attach()
    other.close(1006)
    assert other.conn.state is ConnState.WAITING and other.codes() == ["connection_lost"]


def test_the_pages_own_drop_is_retried_and_not_reported() -> None:
    rig = Rig()
    rig.attach()
    rig.close(4000, "forced reconnect")
    assert rig.conn.state is ConnState.WAITING and rig.problems == []
    assert rig.conn.status_text() == ""


def test_without_reconnect_a_loss_is_final() -> None:
    rig = Rig(reconnect=False)
    rig.attach()
    rig.close(1001, "server shutting down")
    assert rig.conn.state is ConnState.CLOSED and rig.codes() == ["server_shutdown"]


def test_close_by_the_page_stops_everything() -> None:
    rig = Rig()
    rig.attach()
    rig.close(1012)
    rig.transport.take()
    rig.conn.close()
    assert rig.transport.take() == [("close", 1000)] and rig.conn.state is ConnState.CLOSED
    rig.host.run_all()
    assert rig.transport.take() == []  # the reconnect timer was cancelled
    rig.conn.close()  # twice: harmless
    assert rig.transport.take() == [] and rig.conn.status_text() == ""


def test_sends_held_while_away_are_bounded() -> None:
    rig = Rig()
    held = [rig.conn.send(protocol.run_message(f"p{i}")) for i in range(MAX_QUEUED_SENDS + 3)]
    assert held.count(False) == 3 and rig.conn.stats()["refusedSends"] == 3
    rig.conn.handle("open", "")
    assert len(rig.transport.take()) == 1 + MAX_QUEUED_SENDS


def test_reports_from_a_transport_that_answers_at_once_keep_their_order() -> None:
    """A transport may report while the connection is still handling its last
    item (the simulated socket answers inside `send`): items wait their turn."""
    rig = Rig()

    class Eager(Transport):
        def send(self, text: str) -> None:
            super().send(text)
            if json.loads(text)["type"] == "resume":
                attached = protocol.attached_message("s", "e", protocol.ATTACH_LOG, 0)
                rig.conn.handle("message", attached)
                rig.conn.handle("message", protocol.batch_message(1, [EVENT]))

    rig.conn.transport = rig.transport = Eager()
    rig.conn.send(protocol.run_message("hi"))
    rig.conn.handle("open", "")
    assert [json.loads(c[1])["type"] for c in rig.transport.take()] == ["resume", "run"]
    assert rig.conn.state is ConnState.ATTACHED and rig.events == [EVENT]


def test_bad_reports_do_not_break_the_connection() -> None:
    rig = Rig()
    rig.conn.handle("close", "{not json")  # unreadable: a 1006 that never opened
    assert rig.conn.state is ConnState.DIAGNOSING
    rig.conn.handle("probe", "[" * 50)
    assert rig.state() is ConnState.WAITING and rig.codes() == ["no_server"]
    rig.conn.handle("mystery", None)  # an unknown kind is ignored
    assert rig.state() is ConnState.WAITING


def test_inputs_that_arrive_during_a_move_wait_for_it() -> None:
    """A socket that fails inside `open()` (a bad URL throws at once in JS), and a
    page that closes from its error handler: each input runs after the one in hand."""
    rig = Rig()

    class FailsAtOnce(Transport):
        def open(self) -> None:
            super().open()
            rig.close(1006)

    rig.conn.transport = rig.transport = FailsAtOnce()
    rig.attach()
    rig.close(1006)
    rig.transport.take()
    rig.host.tick(rig.conn.retry_in_ms() or 0)
    assert rig.moves[-3:] == [("attached", "waiting"), ("waiting", "connecting"),
                              ("connecting", "diagnosing")]
    assert rig.transport.take() == [("open",), ("probe",)]

    closing = Rig()
    closing.conn.on_problem = lambda _p, _r: closing.conn.close()
    closing.attach()
    closing.close(1001)
    assert closing.conn.state is ConnState.CLOSED
    assert closing.moves[-2:] == [("attached", "waiting"), ("waiting", "closed")]
    closing.host.run_all()
    assert closing.transport.take()[-1] == ("close", 1000)


def test_a_new_session_url_follows_the_id_the_server_minted() -> None:
    """`.../new` asks for a session with a server-minted id: reconnects go to that
    session, and when the server no longer knows it (4404: a restarted server) the
    connection asks for a new one again, resuming with the old epoch so the client
    learns what it lost."""
    rig = Rig(url="ws://h/app/ws/sessions/new?token=t")
    rig.conn.handle("open", "")
    minted = "Q2xpZW50LWNob3NlbiBpZHM"
    rig.conn.handle("message", protocol.attached_message(minted, "e1", protocol.ATTACH_LIVE, 0))
    assert rig.transport.take()[-1] == ("retarget", f"ws://h/app/ws/sessions/{minted}?token=t")
    rig.batch(4)
    rig.close(1006)  # a drop: back to the same session
    rig.host.tick(10_000)
    assert rig.conn.url.endswith(f"/{minted}?token=t") and rig.conn.state is ConnState.CONNECTING
    rig.conn.handle("open", "")
    rig.close(int(protocol.CloseCode.UNKNOWN_SESSION), "unknown session")
    assert rig.state() is ConnState.WAITING  # not final: the id was minted for us
    assert ("retarget", "ws://h/app/ws/sessions/new?token=t") in rig.transport.take()
    rig.host.tick(10_000)
    rig.conn.handle("open", "")
    resume = json.loads(rig.transport.take()[-1][1])
    assert resume == {"type": "resume", "after": 4, "epoch": "e1"}


def test_an_unknown_session_the_page_named_itself_is_final() -> None:
    rig = Rig()  # url .../ws/sessions/s: the page's own id
    rig.conn.handle("open", "")
    rig.close(int(protocol.CloseCode.UNKNOWN_SESSION), "unknown session")
    assert rig.conn.state is ConnState.CLOSED and rig.codes() == ["unknown_session"]
    assert protocol.minted_url("ws://h/ws/sessions/s", "abc") is None
    assert protocol.minted_url("ws://h/ws/sessions/new", "a/b") is None


def test_a_session_kept_across_a_reload_asks_for_a_snapshot_and_falls_back_to_new() -> None:
    """The tab reopened the session it was minted (js_shim/bridge.js `recall`)."""
    rig = Rig("ws://h/ws/sessions/Jw1uN2Xq8kq1rT0yPZc3aA", asked_url="ws://h/ws/sessions/new")
    rig.client = SessionClient(rig.events.extend, reloaded=True)
    rig.conn.consumer = rig.client
    rig.conn.handle("open", "")
    # Nothing applied yet: a snapshot, not the log from 0 (a running answer is not re-paced).
    assert rig.transport.take() == [("send", protocol.RELOAD_HELLO)]
    # The server forgot it (a restart): forgotten here too, and a new one asked for.
    rig.close(int(protocol.CloseCode.UNKNOWN_SESSION), "unknown session")
    assert rig.conn.state is ConnState.WAITING
    assert ("retarget", "ws://h/ws/sessions/new") in rig.transport.take()
    assert rig.codes() == []  # expected, and nothing for the reader to do
    # Once something was applied, a resume continues from there as always.
    rig.host.tick(rig.conn.retry_in_ms() or 0)
    rig.transport.take()
    rig.attach("e2")
    rig.batch(3)
    rig.close(1006)
    rig.host.tick(rig.conn.retry_in_ms() or 0)
    rig.conn.handle("open", "")
    assert json.loads(rig.transport.take()[-1][1]) == {"type": "resume", "after": 3, "epoch": "e2"}
