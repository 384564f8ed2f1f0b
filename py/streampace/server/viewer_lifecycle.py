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

from streampace.lifecycle import table

__all__ = ["VIEWER_TABLE", "ViewerEvent", "ViewerState"]


class ViewerState(Enum):
    DETACHED = "detached"  # no session yet: the socket has sent neither resume nor run
    LIVE = "live"  # at the log's head: appends go straight into its own buffer
    CATCHING_UP = "catching_up"  # behind the head or its queue full: its sender pulls the log
    SHARED = "shared"  # a member of the session's feed: one batch encoded for all members
    CLOSING = "closing"  # a close was asked for: its closer drops what is queued and closes
    CLOSED = "closed"  # its sender stopped (the peer is gone, or the socket is done)


class ViewerEvent(Enum):
    ATTACH_LIVE = "attach_live"  # attached from now
    ATTACH_BEHIND = "attach_behind"  # resumed from a seq the log still holds, or a snapshot
    AT_HEAD = "at_head"  # its cursor is the log's head, its queue has room
    BEHIND = "behind"  # behind the head, or its queue over the limit
    JOIN = "join"  # joins the session's shared feed
    LEAVE = "leave"  # leaves the shared feed (queue over the limit, log reloaded, detach)
    CLOSE = "close"  # a close is asked for (slow consumer, abuse, shutdown, a drain's end)
    LOST = "lost"  # a send failed: the peer went away
    STOP = "stop"  # the sender is stopped for good


VIEWER_TABLE = table(ViewerState, ViewerEvent, """
DETACHED     ATTACH_LIVE    LIVE         attached from now
DETACHED     ATTACH_BEHIND  CATCHING_UP  resumed from a seq the log holds, or past it: its sender
                                         sends the snapshot's parts, then replays the log
CLOSING      ATTACH_LIVE    CLOSING      a resume on a socket already closing: nothing goes out
CLOSING      ATTACH_BEHIND  CLOSING      a resume on a socket already closing: nothing goes out
CLOSED       ATTACH_LIVE    CLOSED       a resume on a socket already closed: nothing goes out
CLOSED       ATTACH_BEHIND  CLOSED       a resume on a socket already closed: nothing goes out
LIVE         AT_HEAD        LIVE         an append right after its cursor with room in its queue
CATCHING_UP  AT_HEAD        LIVE         a pull found the log exhausted
LIVE         BEHIND         CATCHING_UP  behind the head or its queue over the limit: it stops
                                         taking live events (a stalled socket costs one queue)
CATCHING_UP  BEHIND         CATCHING_UP  still behind the head: its sender pulls the next chunk
LIVE         JOIN           SHARED       at the head, nothing of its own pending, room in its queue:
                                         joining can neither skip nor repeat an event
CATCHING_UP  JOIN           SHARED       caught up, nothing of its own pending, room in its queue:
                                         joining can neither skip nor repeat an event
SHARED       LEAVE          CATCHING_UP  its queue went over the limit on a shared batch, or the log
                                         was reloaded: it pulls from the log itself
DETACHED     LEAVE          DETACHED     not a member of the feed: nothing to leave
LIVE         LEAVE          LIVE         not a member of the feed: nothing to leave
CATCHING_UP  LEAVE          CATCHING_UP  not a member of the feed: nothing to leave
CLOSING      LEAVE          CLOSING      not a member of the feed: nothing to leave
CLOSED       LEAVE          CLOSED       not a member of the feed: nothing to leave
DETACHED     CLOSE          CLOSING      a close request (abuse, a message too big, an evicted
                                         session)
LIVE         CLOSE          CLOSING      a close request: unsent data is dropped (the client can
                                         resume)
CATCHING_UP  CLOSE          CLOSING      a close request: unsent data is dropped (the client can
                                         resume)
SHARED       CLOSE          CLOSING      a close request: it leaves the feed, unsent data is dropped
CLOSING      CLOSE          CLOSING      one closer: a second request changes nothing
CLOSED       CLOSE          CLOSING      its sender failed earlier: the socket itself still gets
                                         closed
DETACHED     LOST           CLOSED       a send (an error reply) failed: nothing more goes out
LIVE         LOST           CLOSED       a send failed: nothing more goes out
CATCHING_UP  LOST           CLOSED       a send failed: nothing more goes out
SHARED       LOST           CLOSED       a send failed: it leaves the feed, nothing more goes out
CLOSING      LOST           CLOSING      a send failed while its closer runs
CLOSED       LOST           CLOSED       already stopped
DETACHED     STOP           CLOSED       the sender is stopped for good
LIVE         STOP           CLOSED       the sender is stopped for good
CATCHING_UP  STOP           CLOSED       the sender is stopped for good
SHARED       STOP           CLOSED       the sender is stopped for good: it leaves the feed
CLOSING      STOP           CLOSED       the closer stopped the sender
CLOSED       STOP           CLOSED       already stopped
""")
