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

from streampace.lifecycle import Rule

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


_S, _E = DeliveryState, DeliveryEvent
_LIVE = (_S.OPEN, _S.PUBLISHING, _S.REPUBLISH, _S.BACKOFF)

DELIVERY_TABLE: dict[tuple[DeliveryState, DeliveryEvent], Rule[DeliveryState]] = {
    (_S.OPEN, _E.PUBLISH): Rule(_S.PUBLISHING, "a threshold or a fast path publishes now"),
    (_S.OPEN, _E.FLUSH): Rule(_S.PUBLISHING, "an explicit flush or the window timer"),
    (_S.BACKOFF, _E.PUBLISH): Rule(
        _S.BACKOFF, "a failing sink is not hammered: wait for the retry timer or a flush"),
    (_S.BACKOFF, _E.FLUSH): Rule(_S.PUBLISHING, "the retry (timer) or an explicit flush"),
    (_S.PUBLISHING, _E.PUBLISH): Rule(
        _S.REPUBLISH, "publish() re-entered the buffer: one more pass, never a nested one"),
    (_S.PUBLISHING, _E.FLUSH): Rule(
        _S.REPUBLISH, "publish() asked for a flush: one more pass once it returns"),
    (_S.REPUBLISH, _E.PUBLISH): Rule(_S.REPUBLISH, "the extra pass is already asked for"),
    (_S.REPUBLISH, _E.FLUSH): Rule(_S.REPUBLISH, "the extra pass is already asked for"),
    (_S.REPUBLISH, _E.NEXT_PASS): Rule(_S.PUBLISHING, "the pass a re-entrant call asked for"),
    (_S.PUBLISHING, _E.DRAINED): Rule(_S.OPEN, "everything buffered went out"),
    (_S.PUBLISHING, _E.FAILED): Rule(
        _S.BACKOFF, "the failed batch is back in front; it goes out on the retry"),
    (_S.REPUBLISH, _E.FAILED): Rule(
        _S.BACKOFF, "the failed batch and what the re-entrant call asked for wait for the retry"),
    (_S.PUBLISHING, _E.ABORTED): Rule(
        _S.OPEN, "a BaseException propagates; the buffer stays usable, not stuck publishing"),
    (_S.REPUBLISH, _E.ABORTED): Rule(
        _S.OPEN, "a BaseException propagates; the buffer stays usable, not stuck publishing"),
    **{(state, _E.CLOSE): Rule(_S.CLOSED, "close() works from anywhere, even inside publish()")
       for state in _LIVE},
}
