"""A WebSocket viewer's delivery mode (server/viewer.py) as a typed machine.

Which mode a viewer is in decides where its events come from: the session's
shared feed (``SHARED``), the session's appends straight into its own buffer
(``LIVE``), or its sender pulling bounded chunks from the log (``CATCHING_UP``);
``CLOSING`` and ``CLOSED`` send nothing more.  The viewer decides *when* to move
(its cursor against the log's head, its queue against its limit); this table is
the only list of moves it may make, and its state alone gates what it does:
membership of the shared feed is exactly the ``SHARED`` state.  The diagram in
docs/architecture.md is ``diagram(VIEWER_TABLE, ViewerState.DETACHED)``.
"""

from __future__ import annotations

from enum import Enum

from streampace.lifecycle import Rule

__all__ = ["VIEWER_TABLE", "ViewerEvent", "ViewerState"]


class ViewerState(Enum):
    DETACHED = "detached"  # no session yet: the socket has sent neither resume nor run
    LIVE = "live"  # at the log's head: appends go straight into its own buffer
    CATCHING_UP = "catching_up"  # behind the head or its queue full: its sender pulls the log
    SHARED = "shared"  # a member of the session's feed: one batch encoded for all members
    CLOSING = "closing"  # a close was asked for: its closer drops what is queued and closes
    CLOSED = "closed"  # its sender stopped (the peer is gone, or the socket is done)


class ViewerEvent(Enum):
    ATTACH_LIVE = "attach_live"  # attached from now, or after a snapshot
    ATTACH_BEHIND = "attach_behind"  # resumed from a seq the log still holds
    AT_HEAD = "at_head"  # its cursor is the log's head, its queue has room
    BEHIND = "behind"  # behind the head, or its queue over the limit
    JOIN = "join"  # joins the session's shared feed
    LEAVE = "leave"  # leaves the shared feed (queue over the limit, log reloaded, detach)
    CLOSE = "close"  # a close is asked for (slow consumer, abuse, shutdown, a drain's end)
    LOST = "lost"  # a send failed: the peer went away
    STOP = "stop"  # the sender is stopped for good


_V, _E = ViewerState, ViewerEvent
_OWN = (_V.LIVE, _V.CATCHING_UP)  # the modes that deliver through the viewer's own buffer
_OPEN = (_V.DETACHED, _V.LIVE, _V.CATCHING_UP, _V.SHARED)

VIEWER_TABLE: dict[tuple[ViewerState, ViewerEvent], Rule[ViewerState]] = {
    (_V.DETACHED, _E.ATTACH_LIVE): Rule(_V.LIVE, "attached from now or after a snapshot"),
    (_V.DETACHED, _E.ATTACH_BEHIND): Rule(
        _V.CATCHING_UP, "resumed from a seq the log holds: its sender replays from there"),
    **{(state, event): Rule(state, "a resume on a socket already closing: nothing goes out")
       for state in (_V.CLOSING, _V.CLOSED)
       for event in (_E.ATTACH_LIVE, _E.ATTACH_BEHIND)},
    **{(state, _E.AT_HEAD): Rule(
        _V.LIVE, "an append right after its cursor with room in its queue, or a pull "
                 "that found the log exhausted") for state in _OWN},
    **{(state, _E.BEHIND): Rule(
        _V.CATCHING_UP, "behind the head or its queue over the limit: it stops taking live "
                        "events (a stalled socket costs one bounded queue)") for state in _OWN},
    **{(state, _E.JOIN): Rule(
        _V.SHARED, "at the head with nothing of its own pending and room in its queue: "
                   "joining can neither skip nor repeat an event") for state in _OWN},
    (_V.SHARED, _E.LEAVE): Rule(
        _V.CATCHING_UP, "its queue went over the limit on a shared batch, or the log it "
                        "followed was reloaded: it pulls from the log on its own buffer"),
    **{(state, _E.LEAVE): Rule(state, "not a member of the feed: nothing to leave")
       for state in (_V.DETACHED, _V.LIVE, _V.CATCHING_UP, _V.CLOSING, _V.CLOSED)},
    **{(state, _E.CLOSE): Rule(_V.CLOSING, "a close request: unsent data is dropped (the "
                                           "client can resume)") for state in _OPEN},
    (_V.CLOSING, _E.CLOSE): Rule(_V.CLOSING, "one closer: a second request changes nothing"),
    (_V.CLOSED, _E.CLOSE): Rule(
        _V.CLOSING, "its sender failed earlier: the socket itself still gets closed"),
    **{(state, _E.LOST): Rule(_V.CLOSED, "a send failed: nothing more goes out")
       for state in _OPEN},
    (_V.CLOSING, _E.LOST): Rule(_V.CLOSING, "a send failed while its closer runs"),
    (_V.CLOSED, _E.LOST): Rule(_V.CLOSED, "already stopped"),
    **{(state, _E.STOP): Rule(_V.CLOSED, "the sender is stopped for good")
       for state in (*_OPEN, _V.CLOSING, _V.CLOSED)},
}
