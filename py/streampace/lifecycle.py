"""Named-state machines: each lifecycle is one transition table, stepped one way.

A lifecycle (a run, a delivery buffer, a viewer) lists its states as named
constants and every allowed move as ``(state, event) -> next state`` in one
table next to them, each with the reason it exists.  ``step`` is the only way
to move: an event the table does not list for the current state is a bug in
the caller and raises ``LifecycleError`` instead of silently mixing flags.
Model: h11's ``_state.py`` and wsproto's ``ConnectionState``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["LifecycleError", "Transitions", "step"]

Transitions = Mapping[tuple[str, str], str]


class LifecycleError(RuntimeError):
    """An event the current state does not accept (a bug in the caller)."""


def step(table: Transitions, state: str, event: str, machine: str) -> str:
    """The state after ``event`` in ``state``; raises LifecycleError if not allowed."""
    nxt = table.get((state, event))
    if nxt is None:
        raise LifecycleError(f"{machine}: {event!r} in state {state!r}")
    return nxt
