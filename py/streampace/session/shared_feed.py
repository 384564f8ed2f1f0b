"""One delivery buffer for all of a session's viewers that keep up.

Every viewer used to batch every event in its own DeliveryBuffer: with 1 000 viewers
of one session that is 1 000 enqueues, compactions, timers and JSON encodings of the
same events (bench/server_load.py: the bulk of the server's time at 1 x 1000).
Viewers that are live — caught up, nothing of their own pending, connection under
its limit — instead share this feed: the session enqueues once, the feed batches
once, encodes once, and hands the same text to each member's connection.

Who is a member is decided by each viewer's own feed (session/viewer_feed.py): it
is one exactly in its ``SHARED`` state.  It leaves the moment its connection goes
over its limit (it then replays from the log on its own buffer, so the
slow-consumer rules and close codes are unchanged) and joins again once it has
caught up and this feed has nothing pending, so it can neither miss nor repeat an
event.  Sans-IO: the timers come from the injected host.
"""

from __future__ import annotations

from typing import Any, Protocol

from streampace.clock import TimerHost

from .delivery import Batch, DeliveryBuffer, DeliveryConfig
from .protocol import batch_message

__all__ = ["SharedFeed", "SharedMember"]


class SharedMember(Protocol):
    """A member as this feed sees it (a viewer's ``ViewerFeed``): it takes each batch."""

    def take_shared(self, text: str, through: int, batch: Batch) -> None: ...


class SharedFeed:
    def __init__(self, config: DeliveryConfig, host: TimerHost, through: int = 0) -> None:
        # Keyed by the member's connection, so a driver tells a member by its own
        # object (``viewer in feed.members``) without asking each viewer.
        self.members: dict[object, SharedMember] = {}
        self.last_through = through
        self.buffer = DeliveryBuffer(self._publish, host, config)

    def can_join(self) -> bool:
        """Nothing batched but unpublished: a viewer caught up to the log joins cleanly."""
        return self.buffer.pending_events() == 0

    def enqueue(self, events: list[dict[str, Any]], through: int) -> None:
        if self.members:
            self.buffer.enqueue(events, through=through)
        else:
            self.last_through = through  # nobody to deliver to: stay at the log's head

    def _publish(self, batch: Batch) -> bool:
        through = batch.through if batch.through is not None else self.last_through
        self.last_through = through
        text = batch_message(through, batch.events)
        for member in list(self.members.values()):
            member.take_shared(text, through, batch)
        return True
