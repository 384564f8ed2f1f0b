"""DeliveryBuffer's named lifecycle (DeliveryState): the table and each path to each state."""

from __future__ import annotations

import itertools

import pytest
from streampace.lifecycle import LifecycleError, Machine, unreachable
from streampace.session.delivery import (
    DELIVERY_TABLE,
    Batch,
    DeliveryBuffer,
    DeliveryClosedError,
    DeliveryConfig,
    DeliveryEvent,
    DeliveryState,
)
from streampace.testing import ManualHost

S = DeliveryState
STATES = [S.OPEN, S.PUBLISHING, S.REPUBLISH, S.BACKOFF, S.CLOSED]
EVENTS = list(DeliveryEvent)


def state_of(buf: DeliveryBuffer) -> DeliveryState:
    """Read afresh: mypy keeps `buf.state` narrowed by an earlier assert."""
    return buf.state


def step_name(name: str) -> dict:
    return {"type": "STEP_STARTED", "stepName": name}


def names(batches: list[Batch]) -> list[list[str]]:
    return [[e["stepName"] for e in b.events] for b in batches]


@pytest.mark.parametrize(("state", "event"), list(itertools.product(STATES, EVENTS)))
def test_every_pair_is_listed_or_raises(state: DeliveryState, event: DeliveryEvent) -> None:
    machine = Machine("t", DELIVERY_TABLE, state)
    if (state, event) in DELIVERY_TABLE:
        assert machine.step(event) in STATES
    else:
        with pytest.raises(LifecycleError, match=f"{event.name} in state {state.name}"):
            machine.step(event)
        assert machine.state is state


def test_closed_is_final_every_other_state_can_close_and_all_are_reachable() -> None:
    assert not [pair for pair in DELIVERY_TABLE if pair[0] is S.CLOSED]
    for state in STATES[:-1]:
        assert DELIVERY_TABLE[(state, DeliveryEvent.CLOSE)].target is S.CLOSED
    assert unreachable(DELIVERY_TABLE, S.OPEN, DeliveryState) == []
    assert all(rule.why for rule in DELIVERY_TABLE.values())


def test_an_illegal_move_on_a_buffer_raises_and_keeps_its_state() -> None:
    buf = DeliveryBuffer(lambda b: True, ManualHost())
    with pytest.raises(LifecycleError):
        buf._machine.step(DeliveryEvent.DRAINED)  # nothing is being published
    assert buf.state == S.OPEN


def test_open_publishing_open() -> None:
    host = ManualHost()
    seen: list[DeliveryState] = []

    def publish(batch: Batch) -> bool:
        seen.append(buf.state)
        return True

    buf = DeliveryBuffer(publish, host)
    assert buf.state == S.OPEN
    buf.enqueue([step_name("a")])
    assert buf.state == S.OPEN and host.pending_timeouts == 1
    host.tick(150)
    assert seen == [S.PUBLISHING] and buf.state == S.OPEN and host.pending_timeouts == 0


def test_reentrant_flush_is_republish_and_keeps_order() -> None:
    host = ManualHost()
    out: list[Batch] = []
    seen: list[DeliveryState] = []

    def publish(batch: Batch) -> bool:
        out.append(batch)
        if len(out) == 1:
            buf.enqueue([step_name("b")])
            buf.flush()  # re-entrant: no nested publish, one more pass instead
            seen.append(buf.state)
        return True

    buf = DeliveryBuffer(publish, host)
    buf.enqueue([step_name("a")])
    buf.flush()
    assert seen == [S.REPUBLISH]
    assert names(out) == [["a"], ["b"]]
    assert buf.state == S.OPEN and host.pending_timeouts == 0


def test_failure_is_backoff_until_the_retry_timer() -> None:
    host = ManualHost()
    calls: list[list[str]] = []
    results = [False]

    def publish(batch: Batch) -> bool:
        calls.append([e["stepName"] for e in batch.events])
        return results.pop(0) if results else True

    buf = DeliveryBuffer(publish, host, DeliveryConfig(max_events=2))
    buf.enqueue([step_name("a"), step_name("b")])  # threshold -> publish -> fails
    assert buf.state == S.BACKOFF and calls == [["a", "b"]]
    buf.enqueue([step_name("c"), step_name("d")])  # over the threshold, but backing off
    assert calls == [["a", "b"]]
    host.tick(149)
    assert buf.state == S.BACKOFF
    host.tick(1)  # the retry, max_wait_ms after the failure
    assert state_of(buf) == S.OPEN
    assert calls == [["a", "b"], ["a", "b"], ["c", "d"]]


def test_flush_ends_a_backoff_at_once() -> None:
    results = [False]
    out: list[Batch] = []

    def publish(batch: Batch) -> bool:
        if results:
            return results.pop(0)
        out.append(batch)
        return True

    host = ManualHost()
    buf = DeliveryBuffer(publish, host)
    buf.enqueue([step_name("a")])
    buf.flush()
    assert buf.state == S.BACKOFF
    buf.flush()
    assert state_of(buf) == S.OPEN and names(out) == [["a"]] and host.pending_timeouts == 0


def test_close_from_each_live_state() -> None:
    host = ManualHost()
    buf = DeliveryBuffer(lambda b: True, host)
    assert buf.close() == [] and buf.state == S.CLOSED and buf.closed
    assert buf.close() == []  # idempotent
    with pytest.raises(DeliveryClosedError):
        buf.enqueue([step_name("x")])
    with pytest.raises(DeliveryClosedError):
        buf.flush()

    failing = DeliveryBuffer(lambda b: False, host)
    failing.enqueue([step_name("a")])
    failing.flush()
    assert failing.state == S.BACKOFF
    assert failing.close() == [step_name("a")]  # handed back, not lost
    assert state_of(failing) == S.CLOSED and host.pending_timeouts == 0


def test_close_from_inside_publish() -> None:
    host = ManualHost()
    out: list[Batch] = []
    left: list[list[dict]] = []

    def publish(batch: Batch) -> bool:
        out.append(batch)
        left.append(buf.close())  # e.g. a viewer that finds its peer stalled
        return True

    buf = DeliveryBuffer(publish, host, DeliveryConfig(max_events=1))
    buf.enqueue([step_name("a"), step_name("b"), step_name("c")])
    assert buf.state == S.CLOSED
    assert names(out) == [["a"]] and left == [[]]
    assert host.pending_timeouts == 0  # nothing armed on a closed buffer
    host.tick(1000)
    assert len(out) == 1


def test_a_base_exception_from_publish_propagates_and_leaves_it_open() -> None:
    host = ManualHost()
    raised = [KeyboardInterrupt()]
    out: list[Batch] = []

    def publish(batch: Batch) -> bool:
        if raised:
            raise raised.pop()
        out.append(batch)
        return True

    buf = DeliveryBuffer(publish, host)
    buf.enqueue([step_name("a")])
    with pytest.raises(KeyboardInterrupt):
        buf.flush()
    assert buf.state == S.OPEN
    buf.enqueue([step_name("b")])
    buf.flush()
    assert names(out) == [["b"]]  # the batch it raised on may have gone out: not retried
