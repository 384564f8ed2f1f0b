"""A session's own lifecycle, as a typed state machine (sans-IO).

A session is ``OPEN`` until the server shuts down (``SHUTTING_DOWN``: its run is
stopped and a new one is refused) or it is forgotten to make room (``EVICTED``:
every later input from a connection is answered by closing it). The session
engine (``streampace.session.engine``) keeps one; which inputs each state
accepts is a rule of the table (``INPUT``: a connection's input is answered;
``RUN``: a run is accepted), read with ``Machine.accepts`` — never from flags or
states compared beside it. One rule is not a state's: ``EVICT`` is guarded by
``session/eviction.py``'s ``check_forgettable`` (only while idle — no viewer
attached, no run here), which owns when a session may be forgotten. The diagram
in docs/architecture.md is ``diagram(SESSION_TABLE, SessionState.OPEN)``.
"""

from __future__ import annotations

from enum import Enum

from streampace.lifecycle import table

__all__ = ["SESSION_TABLE", "SessionEvent", "SessionState"]


class SessionState(Enum):
    OPEN = "open"
    SHUTTING_DOWN = "shutting_down"  # the server stops: no new run
    EVICTED = "evicted"  # forgotten: connections still bound to it are closed


class SessionEvent(Enum):
    INPUT = "input"  # a connection binds, attaches or sends a message
    RUN = "run"  # a run is asked for
    SHUT_DOWN = "shut_down"  # the server shuts down
    EVICT = "evict"  # the store forgets the session (guard: eviction.check_forgettable)


SESSION_TABLE = table(SessionState, SessionEvent, """
OPEN           INPUT      OPEN           a connection's input is answered
OPEN           RUN        OPEN           a run may start (if no run holds the session)
OPEN           SHUT_DOWN  SHUTTING_DOWN  the server stops: the run ends, new runs are refused
OPEN           EVICT      EVICTED        forgotten to make room: later inputs close their
                                         connection
SHUTTING_DOWN  INPUT      SHUTTING_DOWN  viewers still attach and get what is logged; no RUN rule:
                                         a run is refused (run_active, the server is shutting
                                         down)
SHUTTING_DOWN  SHUT_DOWN  SHUTTING_DOWN  a second shutdown changes nothing
SHUTTING_DOWN  EVICT      EVICTED        an idle session may still be forgotten while the
                                         server stops
EVICTED        SHUT_DOWN  EVICTED        a forgotten session has no run to stop; no INPUT rule: a
                                         connection's input closes it
""")
