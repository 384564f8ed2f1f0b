"""Host-side (CPython) tests of the pure parts of the browser adapter.

`SessionClient` (protocol-v1 consumer) and `SimulatedSession` (the in-page
simulated server) import no `js`, so they run here on the core's virtual clock.
"""

from __future__ import annotations

import json

from streampace.browser.client import SessionClient
from streampace.conversation.transcript import Transcript
from streampace.session.log import SessionLog
from streampace.sim.page_socket import SimulatedSession
from streampace.sim.scenarios import simulate, visible_text
from streampace.testing import ManualHost


def batch(through: int, *events: dict) -> str:
    return json.dumps({"through": through, "events": list(events)})


def content(mid: str, text: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": text}


def make_client() -> tuple[SessionClient, list[dict], list[str], list[int]]:
    got: list[dict] = []
    errors: list[str] = []
    closes: list[int] = []
    client = SessionClient(got.extend, on_error=errors.append,
                           on_close=lambda: closes.append(1))
    return client, got, errors, closes


def test_client_drops_replayed_batches_and_keeps_order() -> None:
    client, got, errors, _ = make_client()
    client.handle("open", "1")
    client.handle("message", batch(2, content("m", "a"), content("m", "b")))
    client.handle("message", batch(2, content("m", "a"), content("m", "b")))  # replay
    client.handle("message", batch(1, content("m", "a")))  # older than applied
    client.handle("message", batch(3, content("m", "c")))
    assert [e["delta"] for e in got] == ["a", "b", "c"]
    assert client.stats["duplicates"] == 2 and client.last_through == 3 and errors == []


def test_client_reports_bad_input_and_keeps_the_valid_events() -> None:
    client, got, errors, _ = make_client()
    client.handle("message", "{not json")
    client.handle("message", json.dumps([1, 2]))
    client.handle("message", json.dumps({"events": []}))
    client.handle("message", json.dumps({"type": "error", "code": "run_active",
                                         "message": "busy"}))
    client.handle("message", batch(5, content("m", "ok"), {"type": "TEXT_MESSAGE_CONTENT"},
                                   {"type": "NOPE"}, content("m", "also")))
    assert [e["delta"] for e in got] == ["ok", "also"]
    assert client.stats["bad_messages"] == 3 and client.stats["bad_events"] == 2
    assert client.stats["server_errors"] == 1 and len(errors) == 6
    assert any("run_active" in e for e in errors)
    assert client.last_through == 5


def test_client_close_triggers_the_flush_hook() -> None:
    client, _, _, closes = make_client()
    client.handle("close", json.dumps({"code": 1006, "wasOpen": True}))
    client.handle("reconnecting", json.dumps({"attempt": 1, "delayMs": 300}))
    assert closes == [1] and client.state == "reconnecting"


def play(sim: SimulatedSession, host: ManualHost, scenario: str, run: int,
         drops_at: tuple[float, ...] = ()) -> None:
    sim.send(json.dumps({"type": "run", "prompt": "hi", "scenario": scenario}))
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
    client, got, errors, closes = make_client()
    sim.attach(client.handle)
    for run, (scenario, drops) in enumerate(
            [("fast", ()), ("agentic", (400.0, 2500.0)), ("cjk_emoji", (100.0,))], start=1):
        got.clear()
        play(sim, host, scenario, run, drops)
        run_id = got[0]["runId"]
        # The model's answer (seed + run index, as the server's demo source),
        # after the framer's echo of the prompt.
        expected = simulate(scenario, seed=3 + run - 1, thread_id="s1", run_id=run_id)
        assert visible_text(got) == {f"{run_id}-user": "hi", **visible_text(expected)}, scenario
        assert got[-1]["type"] == "RUN_FINISHED"
    assert client.stats["duplicates"] == 0 and errors == []
    assert len(closes) == 3 and client.stats["opens"] == 4


def test_sim_source_batches_like_the_delivery_buffer() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=1)
    arrivals: list[float] = []
    sizes: list[int] = []

    def sink(kind: str, data: str) -> None:
        if kind == "message" and "through" in (msg := json.loads(data)):
            arrivals.append(host.now())
            sizes.append(len(msg["events"]))

    sim.attach(sink)
    play(sim, host, "fast", 1)
    timeline = simulate("fast", seed=1, thread_id="s1", run_id="run-1")
    assert sum(sizes) < len(timeline)  # compacted into bursts
    # Max wait, not a debounce: every event the model emits (the run starts at
    # t=0 here) is published within 150 ms, plus one 50 ms tick of the test.
    waits = [min(a for a in arrivals if a >= te.t_ms) - te.t_ms for te in timeline]
    assert max(waits) <= 150 + 50 + 1e-6


def test_sim_source_cancel_closes_what_is_open_and_errors_the_run() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=2)
    client, got, errors, _ = make_client()
    sim.attach(client.handle)
    sim.send(json.dumps({"type": "run", "prompt": "hi", "scenario": "agentic"}))
    host.tick(2000)
    sim.send(json.dumps({"type": "run", "prompt": "again"}))  # one run at a time
    sim.send(json.dumps({"type": "cancel"}))
    host.tick(1000)
    assert got[-1] == {"type": "RUN_ERROR", "message": "run cancelled by a viewer",
                       "code": "cancelled"}
    opened = {e.get("messageId") or e.get("toolCallId") for e in got
              if e["type"].endswith("_START") and e["type"] != "RUN_STARTED"
              and e["type"] != "STEP_STARTED"}
    closed = {e.get("messageId") or e.get("toolCallId") for e in got
              if e["type"].endswith("_END")}
    assert opened <= closed
    sim.send(json.dumps({"type": "cancel"}))
    sim.send(json.dumps({"type": "run", "prompt": "x", "scenario": "nope"}))
    host.tick(10)
    assert [e.split(":")[1].strip() for e in errors] == ["run_active", "no_run", "bad_scenario"]


def test_sim_source_queues_sends_while_disconnected_and_resumes_after_its_position() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=4, reconnect_base_ms=100)
    client, got, errors, closes = make_client()
    sim.attach(client.handle)
    sim.send(json.dumps({"type": "run", "prompt": "hi", "scenario": "slow"}))  # before open
    host.tick(1500)
    assert got and got[0]["type"] == "RUN_STARTED"
    sim.drop()
    through = sim.last_through
    sim.send(json.dumps({"type": "cancel"}))  # while disconnected: sent after the resume
    host.tick(2000)
    assert got[-1]["type"] == "RUN_ERROR" and got[-1]["code"] == "cancelled"
    assert client.stats["duplicates"] == 0 and errors == [] and len(closes) == 1
    # The second socket's attached message names the position it resumed from.
    assert sim.opens == 2 and client.last_through == sim.session.log.head > through


def test_sim_source_resumes_from_a_snapshot_when_its_log_dropped_the_position() -> None:
    host = ManualHost()
    sim = SimulatedSession(host, "s1", seed=6, reconnect_base_ms=2000)
    sim.session.log = SessionLog(max_events=20)  # the server's bound, made small
    client, got, errors, closes = make_client()
    sim.attach(client.handle)
    sim.send(json.dumps({"type": "run", "prompt": "hi", "scenario": "fast"}))
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
    assert client.stats["opens"] == 2 and len(closes) == 1
    # What the viewer ends up with is the session's conversation.
    shown = Transcript()
    shown.apply(got)
    assert shown.as_messages() == sim.session.conversation.as_messages()
    assert any(m["role"] == "assistant" and len(m.get("content") or "") > 100
               for m in shown.as_messages())
