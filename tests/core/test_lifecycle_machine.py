"""The typed machine helper: table-driven moves, refusals, reachability, diagrams."""

from __future__ import annotations

from enum import Enum

import pytest
from streampace.lifecycle import LifecycleError, Machine, Rule, diagram, table, unreachable


class Door(Enum):
    SHUT = "shut"
    OPEN = "open"
    LOCKED = "locked"
    GONE = "gone"


class Act(Enum):
    OPEN = "open"
    SHUT = "shut"
    LOCK = "lock"


TABLE = {
    (Door.SHUT, Act.OPEN): Rule(Door.OPEN, "a shut door opens"),
    (Door.OPEN, Act.SHUT): Rule(Door.SHUT),
    (Door.SHUT, Act.LOCK): Rule(Door.LOCKED),
}


def test_step_follows_the_table_and_refuses_the_rest() -> None:
    door = Machine("door", TABLE, Door.SHUT)
    assert door.accepts(Act.OPEN)
    assert door.accepts(Act.LOCK)
    assert door.step(Act.OPEN) is Door.OPEN
    assert not door.accepts(Act.LOCK)
    with pytest.raises(LifecycleError, match="door: LOCK in state OPEN"):
        door.step(Act.LOCK)
    assert door.state is Door.OPEN  # a refused event moves nothing
    assert door.step(Act.SHUT) is Door.SHUT
    assert door.step(Act.LOCK) is Door.LOCKED
    assert repr(door) == "<door LOCKED>"


def test_unreachable_names_states_no_event_leads_to() -> None:
    assert unreachable(TABLE, Door.SHUT, Door) == [Door.GONE]


def test_diagram_lists_every_move_in_table_order() -> None:
    assert diagram(TABLE, Door.SHUT).splitlines() == [
        "stateDiagram-v2",
        "    [*] --> SHUT",
        "    SHUT --> OPEN: OPEN",
        "    OPEN --> SHUT: SHUT",
        "    SHUT --> LOCKED: LOCK",
    ]


def test_a_table_is_read_from_text_in_order_with_continued_reasons() -> None:
    rules = table(Door, Act, """
        # comments and blank lines are skipped

SHUT  OPEN  OPEN    a shut door opens
OPEN  SHUT  SHUT    and shuts again
        when pushed
SHUT  LOCK  LOCKED  a key
""")
    assert rules == {
        (Door.SHUT, Act.OPEN): Rule(Door.OPEN, "a shut door opens"),
        (Door.OPEN, Act.SHUT): Rule(Door.SHUT, "and shuts again when pushed"),
        (Door.SHUT, Act.LOCK): Rule(Door.LOCKED, "a key"),
    }
    assert list(rules) == list(TABLE)  # table order, as diagram() draws it


@pytest.mark.parametrize(("text", "error"), [
    ("SHUT  OPEN  OPEN", "needs STATE EVENT TARGET and why"),
    ("SHUT  KNOCK  OPEN  no such event", "unknown name 'KNOCK'"),
    ("AJAR  OPEN  OPEN  no such state", "unknown name 'AJAR'"),
    ("SHUT  OPEN  OPEN  once\nSHUT  OPEN  LOCKED  twice", "listed twice"),
    ("   a reason of nothing", "continuation before any rule"),
])
def test_a_bad_table_fails_when_it_is_read(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        table(Door, Act, text)
