"""Which sessions may be forgotten to make room, and in what order (issue 33 item 2):
one rule for the memory store (the hub) and the Redis store (its session index).

A session is never forgotten while a viewer or a socket is bound to it or a run
holds it.  Past that, a session that was used for a run is kept for the quiet
period after its last activity (a viewer that just left may come back for it).
A session never used for a run holds nothing anyone could come back for: it
counts as quiet for the whole period already, so it may go at once, and it does
not count toward its address's share.  (16 addresses × 64 sessions, each
attached once and left empty, used to lock every newcomer out for 300 s.)

Both stores rank by the time a session counts as last active: the hub by
``ranked_activity`` in the engines' clock, the Redis index by its own clock less
``head_start_ms`` (server/redis_conn.py).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from streampace.lifecycle import LifecycleError

__all__ = ["SessionActivity", "used", "ranked_activity", "head_start_ms", "evictable",
           "check_forgettable"]


class _LogHead(Protocol):
    @property
    def head(self) -> int: ...


class SessionActivity(Protocol):
    """What these rules read of a session (its engine): they decide from its activity
    alone, so this module needs nothing else of the engine."""

    @property
    def run_count(self) -> int: ...
    @property
    def log(self) -> _LogHead: ...
    @property
    def connected(self) -> Collection[object]: ...
    @property
    def idle(self) -> bool: ...
    @property
    def last_active(self) -> float: ...


def used(engine: SessionActivity) -> bool:
    """The session was used for a run (here, or before another process loaded it)."""
    return engine.run_count > 0 or engine.log.head > 0


def head_start_ms(engine: SessionActivity, quiet_ms: float) -> float:
    """How much earlier than its last activity a session counts as last active: the
    whole quiet period for one never used for a run and bound to nobody, else 0."""
    if used(engine) or engine.connected or not engine.idle:
        return 0.0
    return quiet_ms


def ranked_activity(engine: SessionActivity, quiet_ms: float) -> float:
    """When the session counts as last active, in its engine's clock."""
    return engine.last_active - head_start_ms(engine, quiet_ms)


def check_forgettable(engine: SessionActivity) -> None:
    """The guard on the session table's ``EVICT`` (``session_lifecycle.py``): a
    session in use (a viewer attached or a run here) is never forgotten, whatever
    its state, so a store that tries is a bug — it picks sessions by ``evictable``,
    which holds this and more.  Raised before the session moves."""
    if not engine.idle:
        # The message names no session: its id is its key (never in a log).
        raise LifecycleError("a session in use cannot be evicted")


def evictable(engine: SessionActivity, now: float, quiet_ms: float) -> bool:
    """May be forgotten now: bound to nobody, no run, quiet as ranked."""
    return (engine.idle and not engine.connected
            and now - ranked_activity(engine, quiet_ms) >= quiet_ms)
