"""A DeliveryBuffer's lifecycle (streampace.session.delivery) as a typed machine.

The buffer's batching rules (windows, thresholds, the first-delta fast path)
live in delivery.py; this table says only *whether* it may publish right now:
not while a failed publish waits for its retry, never nested inside publish(),
never after close().  The window timer is separate: it may be armed in OPEN,
PUBLISHING and REPUBLISH, and is the retry in BACKOFF.  The diagram in
docs/architecture.md is ``diagram(DELIVERY_TABLE, DeliveryState.OPEN)``.
"""

from __future__ import annotations

from enum import Enum

from streampace.lifecycle import table

__all__ = ["DELIVERY_TABLE", "DeliveryEvent", "DeliveryState"]


class DeliveryState(Enum):
    """Where a DeliveryBuffer is in its lifecycle."""

    OPEN = "open"  # batching: a threshold, a fast path or the window timer publishes
    PUBLISHING = "publishing"  # inside publish(); one pass over what is buffered
    REPUBLISH = "republish"  # publish() asked for a flush: one more pass once it returns
    BACKOFF = "backoff"  # the last publish failed: only the retry timer or flush() publishes
    CLOSED = "closed"  # close() ran: every other call raises DeliveryClosedError


class DeliveryEvent(Enum):
    PUBLISH = "publish"  # a threshold or the first-delta fast path
    FLUSH = "flush"  # flush(), close() or the timer
    NEXT_PASS = "next_pass"  # the publishing loop starts the pass a re-entrant call asked for
    DRAINED = "drained"  # everything buffered went out
    FAILED = "failed"  # publish() returned False or raised an Exception
    ABORTED = "aborted"  # publish() raised a BaseException (it propagates)
    CLOSE = "close"


DELIVERY_TABLE = table(DeliveryState, DeliveryEvent, """
OPEN        PUBLISH    PUBLISHING  a threshold or a fast path publishes now
OPEN        FLUSH      PUBLISHING  an explicit flush or the window timer
BACKOFF     PUBLISH    BACKOFF     a failing sink is not hammered: wait for the retry timer or a
                                   flush
BACKOFF     FLUSH      PUBLISHING  the retry (timer) or an explicit flush
PUBLISHING  PUBLISH    REPUBLISH   publish() re-entered the buffer: one more pass, never a nested
                                   one
PUBLISHING  FLUSH      REPUBLISH   publish() asked for a flush: one more pass once it returns
REPUBLISH   PUBLISH    REPUBLISH   the extra pass is already asked for
REPUBLISH   FLUSH      REPUBLISH   the extra pass is already asked for
REPUBLISH   NEXT_PASS  PUBLISHING  the pass a re-entrant call asked for
PUBLISHING  DRAINED    OPEN        everything buffered went out
PUBLISHING  FAILED     BACKOFF     the failed batch is back in front; it goes out on the retry
REPUBLISH   FAILED     BACKOFF     the failed batch and what the re-entrant call asked for wait for
                                   the retry
PUBLISHING  ABORTED    OPEN        a BaseException propagates; the buffer stays usable, not stuck
                                   publishing
REPUBLISH   ABORTED    OPEN        a BaseException propagates; the buffer stays usable, not stuck
                                   publishing
OPEN        CLOSE      CLOSED      close() works from anywhere, even inside publish()
PUBLISHING  CLOSE      CLOSED      close() works from anywhere, even inside publish()
REPUBLISH   CLOSE      CLOSED      close() works from anywhere, even inside publish()
BACKOFF     CLOSE      CLOSED      close() works from anywhere, even inside publish()
""")
