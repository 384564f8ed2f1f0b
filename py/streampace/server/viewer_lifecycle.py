"""A WebSocket viewer's delivery mode (server/viewer.py) as named states.

    detached -> live | catching_up                 attach_live / attach_behind
    live <-> catching_up                           at_head / behind
    live | catching_up -> shared -> catching_up    join / leave
    any state -> closing                           close

Which mode a viewer is in decides where its events come from: the session's
shared feed (``shared``), the session's append straight into its own buffer
(``live``), or its sender pulling bounded chunks from the log (``catching_up``).
The viewer decides *when* to move (cursor against the log's head, its queue
against its limit); this table is the only list of moves it may make.
"""

from __future__ import annotations

__all__ = ["VIEWER_TRANSITIONS", "ViewerState"]


class ViewerState:
    DETACHED = "detached"  # no session yet: the socket has sent neither resume nor run
    LIVE = "live"  # at the log's head: appends go straight into its own buffer
    CATCHING_UP = "catching_up"  # behind the head or its queue full: its sender pulls the log
    SHARED = "shared"  # a member of the session's feed: one batch encoded for all members
    CLOSING = "closing"  # closing or closed: sends nothing more (the client can resume)


_V = ViewerState
_OWN = (_V.LIVE, _V.CATCHING_UP)  # the modes that deliver through the viewer's own buffer

# (state, event) -> next state; anything else raises LifecycleError.
VIEWER_TRANSITIONS: dict[tuple[str, str], str] = {
    # Attached from now or after a snapshot: nothing is behind it.
    (_V.DETACHED, "attach_live"): _V.LIVE,
    # Resumed from a seq the log still holds: the sender replays from there.
    (_V.DETACHED, "attach_behind"): _V.CATCHING_UP,
    # A resume that lands while the socket is already closing (a shutdown, a
    # stalled error reply): nothing more goes out, so it stays closing.
    (_V.CLOSING, "attach_live"): _V.CLOSING,
    (_V.CLOSING, "attach_behind"): _V.CLOSING,
    # An append right after its cursor with room in its queue (or a pull that
    # found the log exhausted): live events go straight into its buffer.
    **{(state, "at_head"): _V.LIVE for state in _OWN},
    # Behind the head, or its queue over the limit: it stops taking live events
    # so a stalled socket costs one bounded queue, and pulls when it drains.
    **{(state, "behind"): _V.CATCHING_UP for state in _OWN},
    # At the head with nothing of its own pending and room in its queue: joining
    # the feed can neither skip nor repeat an event (server/fanout.py).
    **{(state, "join"): _V.SHARED for state in _OWN},
    # Its queue went over the limit on a shared batch, or the log it followed was
    # reloaded: it pulls from the log on its own buffer again.
    (_V.SHARED, "leave"): _V.CATCHING_UP,
    # Any close request (slow consumer, abuse, a failed send, the end of a
    # drain); a second one changes nothing.
    **{(state, "close"): _V.CLOSING
       for state in (_V.DETACHED, _V.LIVE, _V.CATCHING_UP, _V.SHARED, _V.CLOSING)},
}
