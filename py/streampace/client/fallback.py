"""The fall-back-to-simulation rule, once: which source a page shows.

A page that may run on plain static files (the demo, `mount(...,
simulate="fallback")`) opens its session socket and lets the first reports
decide: an open means a streampace server answered, and it stays the source
(later failures are the connection's to retry); a close before any open means
nothing answered, and the in-page simulated model (`page_socket`) takes over.
Both pages read the decision from `SourceChoice`; neither restates the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from streampace.lifecycle import Machine, table

__all__ = ["SourceChoice", "SourceState", "SourceEvent", "SOURCE_TABLE"]


class SourceState(Enum):
    UNDECIDED = "undecided"  # the socket has reported neither an open nor a failed connect
    SERVER = "server"  # a streampace server answered
    SIMULATION = "simulation"  # nothing answered: the in-page simulated model


class SourceEvent(Enum):
    OPENED = "opened"  # the connection reported an open
    NEVER_OPENED = "never_opened"  # ... or a close with no open before it


SOURCE_TABLE = table(SourceState, SourceEvent, """
UNDECIDED   OPENED        SERVER      a streampace server answered: it is the source
UNDECIDED   NEVER_OPENED  SIMULATION  nothing answered (static files): simulate in the page
SERVER      OPENED        SERVER      a reconnect: still the server
SERVER      NEVER_OPENED  SERVER      a reconnect that failed: the connection retries it
SIMULATION  OPENED        SIMULATION  the simulated socket opened
SIMULATION  NEVER_OPENED  SIMULATION  decided already: a late report changes nothing
""")


class SourceChoice:
    """One page's choice of source, from its connection's status reports."""

    __slots__ = ("_machine",)

    def __init__(self) -> None:
        self._machine: Machine[SourceState, SourceEvent] = Machine(
            "page source", SOURCE_TABLE, SourceState.UNDECIDED)

    @property
    def state(self) -> SourceState:
        return self._machine.state

    def report(self, state: str, detail: Mapping[str, Any]) -> SourceState | None:
        """Take a connection status (`StreamView`'s on_status); the source it
        decided, when this report is the one that decides, else None."""
        if state == "open":
            event = SourceEvent.OPENED
        elif state == "closed" and not detail.get("wasOpen"):
            event = SourceEvent.NEVER_OPENED
        else:
            return None
        before = self._machine.state
        after = self._machine.step(event)
        return after if before is SourceState.UNDECIDED else None
