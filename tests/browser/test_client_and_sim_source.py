"""Host-side (CPython) tests of the pure parts of the browser adapter.

`SessionClient` (protocol-v2 consumer) and `SimulatedSession` (the in-page
simulated server's socket, driven by the core's `SessionConnection` as the page
drives it) import no `js`, so they run here on the core's virtual clock.
"""

from __future__ import annotations

import json
import random

from streampace.client.connection import ConnState, SessionConnection
from streampace.client.page_socket import SimulatedSession
from streampace.client.session_client import SessionClient, StreamError
from streampace.conversation.transcript import Transcript
from streampace.session import protocol
from streampace.session.log import SessionLog
from streampace.sim import simulate, visible_text
from streampace.testing import ManualHost


def batch(through: int, *events: dict) -> str:
    return json.dumps({"through": through, "events": list(events)})


def content(mid: str, text: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text}


def make_client() -> tuple[SessionClient, list[dict], list[StreamError]]:
    got: list[dict] = []
    errors: list[StreamError] = []
    client = SessionClient(got.extend, on_error=errors.append)
    return client, got, errors


def state_of(conn: SessionConnection) -> ConnState:
    """The connection's state read afresh: after `assert conn.state is X`, mypy keeps
    `conn.state` narrowed to X across the calls that move it on."""
    return conn.state


def connect(sim: SimulatedSession, host: ManualHost,
            ) -> tuple[SessionConnection, SessionClient, list[dict], list[StreamError]]:
    """The page's wiring (browser/controller.py) without the DOM."""
    client, got, errors = make_client()
    conn = SessionConnection(sim, host, client, url=sim.url, rng=random.Random(0))
    sim.attach(conn.handle)
    return conn, client, got, errors


def test_client_drops_replayed_batches_and_keeps_order() -> None:
    client, got, errors = make_client()
    client.receive(batch(2, content("m", "a"), content("m", "b")))
    client.receive(batch(2, content("m", "a"), content("m", "b")))  # replay
    client.receive(batch(1, content("m", "a")))  # older than applied
    client.receive(batch(3, content("m", "c")))
    assert [e["delta"] for e in got] == ["a", "b", "c"]
    assert client.stats["duplicates"] == 2 and client.last_through == 3 and errors == []


def test_client_reports_bad_input_and_keeps_the_valid_events() -> None:
    client, got, errors = make_client()
    client.receive("{not json")
    client.receive(json.dumps([1, 2]))
    client.receive(json.dumps({"events": []}))
    client.receive(None)  # a binary frame
    client.receive("[" * 200 + "]" * 200)  # deeper than any batch may be
    client.receive(json.dumps({"type": "error", "code": "run_active", "message": "busy"}))
    client.receive(batch(5, content("m", "ok"), {"type": "TEXT_MESSAGE_CONTENT"},
                         {"type": "NOPE"}, content("m", "also")))
    assert [e["delta"] for e in got] == ["ok", "also"]
    assert client.stats["bad_messages"] == 5 and client.stats["bad_events"] == 2
    assert client.stats["server_errors"] == 1 and len(errors) == 8
    assert [(e.where, e.code) for e in errors[:6]] == [
        ("stream", "bad_json"), ("stream", "bad_message"), ("stream", "bad_message"),
        ("stream", "bad_message"), ("stream", "too_deep"), ("server", "run_active")]
    assert client.last_through == 5


def test_client_resumes_after_its_position_in_its_epoch() -> None:
    client, _, _ = make_client()
    assert client.resume_message() == protocol.HELLO
    client.receive(protocol.attached_message("s", "e1", protocol.ATTACH_LOG, 0))
    client.receive(batch(4, content("m", "x")))
    assert json.loads(client.resume_message()) == {"type": "resume", "after": 4, "epoch": "e1"}


def play(conn: SessionConnection, sim: SimulatedSession, host: ManualHost, scenario: str,
         drops_at: tuple[float, ...] = ()) -> None:
    conn.send(protocol.run_message("hi", scenario))
    elapsed = 0.0
    for at in drops_at:
        host.tick(at - elapsed)
        elapsed = at
        sim.drop()
    # Bounded: every scenario except "long" ends well within 60 s of virtual time.
    for _ in range(1200):
        if not sim.run_active and not sim.pending_events():
            break
        host.tick(50)
    host.tick(15_000)  # any reconnect backoff and the last buffer flush


def test_sim_source_delivers_the_simulated_run_through_drops() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=3)
    conn, client, got, errors = connect(sim, host)
    for run, (scenario, drops) in enumerate(
            [("fast", ()), ("agentic", (400.0, 2500.0)), ("cjk_emoji", (100.0,))], start=1):
        got.clear()
        play(conn, sim, host, scenario, drops)
        run_id = got[0]["runId"]
        # The model's answer (seed + run index, as the server's demo source),
        # after the framer's echo of the prompt.
        expected = simulate(scenario, seed=3 + run - 1, thread_id="s1", run_id=run_id)
        assert visible_text(got) == {f"{run_id}-user": "hi", **visible_text(expected)}, scenario
        assert got[-1]["type"] == "RUN_FINISHED"
    assert client.stats["duplicates"] == 0 and errors == []
    assert conn.closes == 3 and conn.opens == 4 and sim.opens == 4
    assert conn.state is ConnState.ATTACHED and conn.problem is None


def test_sim_source_batches_like_the_delivery_buffer() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=1)
    arrivals: list[float] = []
    sizes: list[int] = []

    def sink(kind: str, data: str) -> None:
        if kind == "message" and "through" in (msg := json.loads(data)):
            arrivals.append(host.now())
            sizes.append(len(msg["events"]))

    client, _, _ = make_client()
    conn = SessionConnection(sim, host, client)

    def both(kind: str, data: str) -> None:
        sink(kind, data)
        conn.handle(kind, data)

    sim.attach(both)
    play(conn, sim, host, "fast")
    timeline = simulate("fast", seed=1, thread_id="s1", run_id="run-1")
    assert sum(sizes) < len(timeline)  # compacted into bursts
    # Max wait, not a debounce: every event the model emits (the run starts at
    # t=0 here) is published within 150 ms, plus one 50 ms tick of the test.
    waits = [min(a for a in arrivals if a >= te.t_ms) - te.t_ms for te in timeline]
    assert max(waits) <= 150 + 50 + 1e-6


def test_sim_source_cancel_closes_what_is_open_and_errors_the_run() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=2)
    conn, _, got, errors = connect(sim, host)
    conn.send(protocol.run_message("hi", "agentic"))
    host.tick(2000)
    conn.send(protocol.run_message("again"))  # one run at a time
    conn.send(protocol.cancel_message())
    host.tick(1000)
    assert got[-1] == {"type": "RUN_ERROR", "message": "run cancelled by a viewer",
                       "code": "cancelled"}
    opened = {e.get("messageId") or e.get("toolCallId") for e in got
              if e["type"].endswith("_START") and e["type"] != "RUN_STARTED"
              and e["type"] != "STEP_STARTED"}
    closed = {e.get("messageId") or e.get("toolCallId") for e in got
              if e["type"].endswith("_END")}
    assert opened <= closed
    conn.send(protocol.cancel_message())
    conn.send(protocol.run_message("x", "nope"))
    host.tick(10)
    assert [(e.where, e.code) for e in errors] == [
        ("server", "run_active"), ("server", "no_run"), ("server", "bad_scenario")]


def test_sim_source_queues_sends_while_disconnected_and_resumes_after_its_position() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=4)
    client, got, errors = make_client()
    conn = SessionConnection(sim, host, client, base_ms=100, rng=random.Random(1))
    sim.attach(conn.handle)
    conn.send(protocol.run_message("hi", "slow"))  # before the open: after the resume
    assert conn.state is ConnState.CONNECTING
    host.tick(1500)
    assert got and got[0]["type"] == "RUN_STARTED"
    sim.drop()
    assert state_of(conn) is ConnState.WAITING
    through = client.last_through
    conn.send(protocol.cancel_message())  # while disconnected: sent after the resume
    host.tick(2000)
    assert got[-1]["type"] == "RUN_ERROR" and got[-1]["code"] == "cancelled"
    assert client.stats["duplicates"] == 0 and errors == [] and conn.closes == 1
    # The second socket resumed after the position the client had applied.
    assert sim.opens == 2 and client.last_through == sim.session.log.head > through


def test_sim_socket_opens_only_once_attached_and_reports_only_to_its_sink() -> None:
    """The simulated socket never exists before Python, so it bridges no boot: keeping
    what arrives before Python is up and greeting on that open is js_shim/bridge.js's
    alone (tested in the page: test_embed.py's boot test; the connection's side of a
    greeted open: tests/core/test_connection_machine.py)."""
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=5)
    sim.send(protocol.run_message("early", "fast"))  # no connection yet: nothing goes out
    host.tick(400)
    assert sim.opens == 0 and not sim.connected and not sim.run_active
    conn, client, got, errors = connect(sim, host)  # Python attaches: the socket opens
    host.tick(0)
    assert sim.opens == 1 and state_of(conn) is ConnState.ATTACHED  # by its own resume
    play(conn, sim, host, "fast")
    assert state_of(conn) is ConnState.ATTACHED and errors == []
    run_id = got[0]["runId"]
    expected = simulate("fast", seed=5, thread_id="s1", run_id=run_id)
    assert visible_text(got) == {f"{run_id}-user": "hi", **visible_text(expected)}
    assert got[-1]["type"] == "RUN_FINISHED" and sim.opens == 1
    seen = len(got)
    sim.detach()
    sim.drop()  # reported to nobody: the sink is gone
    host.tick(5000)
    assert len(got) == seen and conn.closes == 0 and state_of(conn) is ConnState.ATTACHED


def test_sim_source_resumes_from_a_snapshot_when_its_log_dropped_the_position() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=6)
    sim.session.log = SessionLog(max_events=20)  # the server's bound, made small
    client, got, errors = make_client()
    conn = SessionConnection(sim, host, client, base_ms=2000, rng=random.Random(2))
    sim.attach(conn.handle)
    conn.send(protocol.run_message("hi", "fast"))
    host.tick(300)
    sim.drop()
    head = sim.session.log.head
    host.tick(1000)  # still away (backoff >= 1 s): the log moves on past 20 events
    assert sim.session.log.head > head + 20 and not sim.connected
    for _ in range(1200):
        if not sim.run_active and not sim.pending_events():
            break
        host.tick(50)
    assert any(e["type"] == "MESSAGES_SNAPSHOT" for e in got) and errors == []
    assert conn.opens == 2 and conn.closes == 1
    # What the viewer ends up with is the session's conversation.
    shown = Transcript()
    shown.apply(got)
    assert shown.as_messages() == sim.session.conversation.as_messages()
    assert any(m["role"] == "assistant" and len(m.get("content") or "") > 100
               for m in shown.as_messages())
