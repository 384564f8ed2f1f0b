"""A DeliveryBuffer's lifecycle (streampace.session.delivery) as named states.

The buffer's batching rules (windows, thresholds, the first-delta fast path)
live in delivery.py; this table says only *whether* it may publish right now:
not while a failed publish waits for its retry, never nested inside publish(),
never after close().  The window timer is separate: it may be armed in OPEN,
PUBLISHING and REPUBLISH, and is the retry in BACKOFF.
"""

from __future__ import annotations

__all__ = ["DELIVERY_TRANSITIONS", "DeliveryState"]


class DeliveryState:
    """Where a DeliveryBuffer is in its lifecycle."""

    OPEN = "open"  # batching: a threshold, a fast path or the window timer publishes
    PUBLISHING = "publishing"  # inside publish(); one pass over what is buffered
    REPUBLISH = "republish"  # publish() asked for a flush: one more pass once it returns
    BACKOFF = "backoff"  # the last publish failed: only the retry timer or flush() publishes
    CLOSED = "closed"  # close() ran: every other call raises DeliveryClosedError


_S = DeliveryState
_LIVE = (_S.OPEN, _S.PUBLISHING, _S.REPUBLISH, _S.BACKOFF)

# (state, event) -> next state; anything else raises LifecycleError.  Events:
# "publish" (a threshold or the first-delta fast path), "flush" (flush(), close()
# or the timer), "next_pass", "drained", "failed", "aborted", "close".
DELIVERY_TRANSITIONS: dict[tuple[str, str], str] = {
    (_S.OPEN, "publish"): _S.PUBLISHING,
    (_S.OPEN, "flush"): _S.PUBLISHING,
    # A failing sink is not hammered: thresholds and fast paths wait for the
    # retry timer (max_wait_ms later) or an explicit flush().
    (_S.BACKOFF, "publish"): _S.BACKOFF,
    (_S.BACKOFF, "flush"): _S.PUBLISHING,
    # publish() re-entered the buffer (e.g. it enqueued a terminal event or
    # called flush()): publishing stays strictly ordered, so instead of a nested
    # publish the running loop makes one more pass after the current batch.
    (_S.PUBLISHING, "publish"): _S.REPUBLISH,
    (_S.PUBLISHING, "flush"): _S.REPUBLISH,
    (_S.REPUBLISH, "publish"): _S.REPUBLISH,
    (_S.REPUBLISH, "flush"): _S.REPUBLISH,
    (_S.REPUBLISH, "next_pass"): _S.PUBLISHING,
    (_S.PUBLISHING, "drained"): _S.OPEN,
    # The failed batch is back in front; it (and anything a re-entrant call
    # asked for) goes out on the retry.
    (_S.PUBLISHING, "failed"): _S.BACKOFF,
    (_S.REPUBLISH, "failed"): _S.BACKOFF,
    # publish() raised a BaseException (KeyboardInterrupt, a cancellation): it
    # propagates, and the buffer stays usable rather than stuck mid-publish.
    (_S.PUBLISHING, "aborted"): _S.OPEN,
    (_S.REPUBLISH, "aborted"): _S.OPEN,
    # close() works from anywhere, including from inside publish().
    **{(state, "close"): _S.CLOSED for state in _LIVE},
}
