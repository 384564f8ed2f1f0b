"""Typed state machines: Enum states and events, every move in one table.

A machine (a run, a delivery buffer, a viewer, a socket, the scheduler's drive)
declares its states and events as ``Enum`` classes and every allowed move as
``(state, event) -> Rule(target, why)`` in one table next to them.
``Machine.step`` is the only way to move: an event the table does not list for
the current state is a bug in the caller and raises ``LifecycleError`` instead
of silently mixing flags.  Rules that depend on the state (a stop that is
ignored once the outcome is decided) are table entries too — no pre-checks
beside the table.  Model: h11's ``_state.py`` and wsproto's ``ConnectionState``.

A table is written as text, one rule a line — ``STATE  EVENT  TARGET  why``, an
indented line continuing the reason — and read by ``table`` against the two
Enums at import, so a misspelt name, a rule listed twice or one without its
reason fails at once.  ``diagram`` draws a
table as Mermaid text, so the diagrams in the docs are generated from the tables
(tests compare them) instead of drawn beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

__all__ = ["LifecycleError", "Machine", "Rule", "Table", "table", "diagram", "unreachable"]

S = TypeVar("S", bound=Enum)
E = TypeVar("E", bound=Enum)


class LifecycleError(RuntimeError):
    """An event the current state does not accept (a bug in the caller)."""


@dataclass(frozen=True)
class Rule(Generic[S]):
    """One allowed move: where it goes, and why the move exists."""

    target: S
    why: str = ""


Table = Mapping[tuple[S, E], Rule[S]]


def table(states: type[S], events: type[E], text: str) -> dict[tuple[S, E], Rule[S]]:
    """The rules in ``text``, in order: one ``STATE EVENT TARGET why`` per line
    (names of ``states`` / ``events`` members), an indented line continuing the
    last reason; blank lines and ``#`` lines are skipped."""
    rules: dict[tuple[S, E], Rule[S]] = {}
    last: tuple[S, E] | None = None
    for line in text.splitlines():
        words = line.split(None, 3)
        if not words or words[0].startswith("#"):
            continue
        if line[0].isspace():
            if last is None:
                raise ValueError(f"a continuation before any rule: {line.strip()!r}")
            rules[last] = Rule(rules[last].target, f"{rules[last].why} {line.strip()}")
            continue
        if len(words) < 4:
            raise ValueError(f"a rule needs STATE EVENT TARGET and why: {line.strip()!r}")
        src, event, target, why = words
        try:
            key = (states[src], events[event])
            rule = Rule(states[target], why.strip())
        except KeyError as exc:
            raise ValueError(f"unknown name {exc} in rule {line.strip()!r}") from None
        if key in rules:
            raise ValueError(f"rule {src} {event} is listed twice")
        rules[key] = rule
        last = key
    return rules


class Machine(Generic[S, E]):
    """The state of one instance of a machine, moved only by ``step``."""

    __slots__ = ("name", "table", "state")

    def __init__(self, name: str, table: Table[S, E], initial: S) -> None:
        self.name = name
        self.table = table
        self.state = initial

    def accepts(self, event: E) -> bool:
        return (self.state, event) in self.table

    def step(self, event: E) -> S:
        rule = self.table.get((self.state, event))
        if rule is None:
            raise LifecycleError(f"{self.name}: {event.name} in state {self.state.name}")
        self.state = rule.target
        return rule.target

    def __repr__(self) -> str:
        return f"<{self.name} {self.state.name}>"


def unreachable(table: Table[S, E], initial: S, states: Iterable[S]) -> list[S]:
    """States no sequence of events reaches from ``initial`` (a table bug)."""
    seen = {initial}
    frontier = [initial]
    while frontier:
        here = frontier.pop()
        for (src, _event), rule in table.items():
            if src is here and rule.target not in seen:
                seen.add(rule.target)
                frontier.append(rule.target)
    return [s for s in states if s not in seen]


def diagram(table: Table[S, E], initial: S) -> str:
    """The table as a Mermaid ``stateDiagram-v2`` (one line per move, table order)."""
    lines = ["stateDiagram-v2", f"    [*] --> {initial.name}"]
    for (src, event), rule in table.items():
        lines.append(f"    {src.name} --> {rule.target.name}: {event.name}")
    return "\n".join(lines) + "\n"

