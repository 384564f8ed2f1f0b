"""The page's outbox (browser/outbox.py): a question asked during an answer waits."""

from __future__ import annotations

import json

from streampace.browser.outbox import MAX_WAITING, Outbox


class Wire:
    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.open = True
        self.changes = 0

    def send(self, text: str) -> bool:
        if not self.open:
            return False
        self.sent.append(json.loads(text))
        return True

    def changed(self) -> None:
        self.changes += 1


def make() -> tuple[Outbox, Wire]:
    wire = Wire()
    return Outbox(wire.send, on_change=wire.changed), wire


def run(prompt: str) -> dict:
    return {"type": "run", "prompt": prompt}


def test_idle_run_is_sent_at_once() -> None:
    box, wire = make()
    result = box.submit(run("one"))
    assert result["status"] == "accepted" and result["id"]
    assert [m["prompt"] for m in wire.sent] == ["one"]
    assert box.busy and box.items() == []


def test_question_during_a_run_waits_then_goes_when_the_run_ends() -> None:
    box, wire = make()
    box.submit(run("one"))
    box.run_started()
    second = box.submit(run("two"))
    assert second["status"] == "queued" and second["position"] == 1
    assert [m["prompt"] for m in wire.sent] == ["one"]
    assert box.items() == [{"id": second["id"], "prompt": "two", "state": "waiting"}]
    box.run_ended()
    assert [m["prompt"] for m in wire.sent] == ["one", "two"]
    assert box.items() == [{"id": second["id"], "prompt": "two", "state": "sent"}]
    # The view shows "one"'s start, then "two"'s: only then does the waiting line go.
    box.run_shown()
    assert len(box.items()) == 1
    box.run_shown()
    assert box.items() == []


def test_sent_but_not_started_counts_as_busy() -> None:
    box, wire = make()
    box.submit(run("one"))  # RUN_STARTED not seen yet
    assert box.submit(run("two"))["status"] == "queued"
    assert len(wire.sent) == 1


def test_queue_keeps_order_and_sends_one_per_run_end() -> None:
    box, wire = make()
    box.submit(run("a"))
    box.run_started()
    for p in ("b", "c", "d"):
        box.submit(run(p))
    for expected in ("b", "c", "d"):
        box.run_ended()
        assert wire.sent[-1]["prompt"] == expected
        box.run_ended()  # a second end before the start changes nothing: still awaiting
        assert wire.sent[-1]["prompt"] == expected
        box.run_started()
    box.run_ended()
    assert [m["prompt"] for m in wire.sent] == ["a", "b", "c", "d"]


def test_withdraw_only_while_waiting() -> None:
    box, wire = make()
    box.submit(run("a"))
    box.run_started()
    b = box.submit(run("b"))
    c = box.submit(run("c"))
    assert box.withdraw(b["id"]) is True
    assert box.withdraw(b["id"]) is False
    box.run_ended()
    assert wire.sent[-1]["prompt"] == "c"
    assert box.withdraw(c["id"]) is False  # already sent
    assert box.counts["withdrawn"] == 1


def test_cancel_is_never_queued() -> None:
    box, wire = make()
    box.submit(run("a"))
    box.run_started()
    box.submit(run("b"))
    assert box.submit({"type": "cancel"})["status"] == "accepted"
    assert wire.sent[-1] == {"type": "cancel"}
    box.run_ended()  # the cancelled run's RUN_ERROR: the waiting question goes now
    assert wire.sent[-1]["prompt"] == "b"


def test_bad_messages_are_refused_with_the_servers_codes() -> None:
    box, wire = make()
    assert box.submit({"type": "run", "prompt": "  "})["code"] == "bad_field"
    assert box.submit({"type": "dance"})["code"] == "unknown_type"
    assert box.submit([1, 2])["code"] == "bad_message"
    assert box.submit({"type": "run", "prompt": object()})["code"] == "bad_message"
    assert box.submit("{not json")["code"] == "bad_json"
    assert wire.sent == [] and box.counts["refused"] == 5


def test_closed_connection_refuses() -> None:
    box, wire = make()
    wire.open = False
    result = box.submit(run("a"))
    assert result == {"status": "refused", "id": result["id"], "code": "not_sent",
                      "message": "the connection is closed"}
    assert not box.busy


def test_queue_is_bounded() -> None:
    box, _ = make()
    box.submit(run("a"))
    results = [box.submit(run(str(i)))["status"] for i in range(MAX_WAITING + 2)]
    assert results.count("queued") == MAX_WAITING
    assert results[-2:] == ["refused", "refused"]


def test_run_active_refusal_puts_the_question_back_first() -> None:
    box, wire = make()
    box.submit(run("mine"))  # another viewer's run started first
    box.submit(run("next"))
    box.server_refused("run_active")
    assert [q["prompt"] for q in box.items()] == ["mine", "next"]
    assert all(q["state"] == "waiting" for q in box.items())
    box.run_started()  # the other viewer's run
    box.run_ended()
    assert wire.sent[-1]["prompt"] == "mine"


def test_other_refusal_drops_the_run_and_sends_the_next() -> None:
    box, wire = make()
    box.submit(run("a"))
    box.submit(run("b"))
    box.server_refused("store_unavailable")
    assert wire.sent[-1]["prompt"] == "b"
    box.server_refused("no_run")  # a cancel's refusal says nothing about the run
    assert box.awaiting is not None


def test_clear_forgets_everything() -> None:
    box, wire = make()
    box.submit(run("a"))
    box.submit(run("b"))
    box.clear()
    assert box.items() == [] and not box.busy
    assert box.submit(run("c"))["status"] == "accepted"
