"""A session's event log: sequence numbers and a bounded replay window.

Every event entering a session gets the next sequence number.  The log keeps
the most recent events within an event-count and a byte budget so a viewer
that reconnects can be replayed exactly what it missed; anything older is
only recoverable as a snapshot.

Sans-IO: the server and the page's simulated session use the same log.  The
server passes ``on_large_events`` (its malloc_trim scheduler, server/memory.py);
the page has nothing to hand back and passes nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from .compact_json import dumps_compact
from .limits import LOG_BYTES, LOG_EVENTS

__all__ = ["SessionLog", "event_size", "LARGE_EVENT_BYTES"]

LARGE_EVENT_BYTES = 4096  # events at least this big are reported to ``on_large_events``


def event_size(event: dict[str, Any]) -> int:
    """Bytes of the event's compact JSON, the unit of the log's byte budget."""
    text = dumps_compact(event)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class SessionLog:
    def __init__(self, max_events: int = LOG_EVENTS, max_bytes: int = LOG_BYTES,
                 on_large_events: Callable[[int], None] | None = None) -> None:
        if max_events < 1 or max_bytes < 1:
            raise ValueError("log limits must be >= 1")
        self.on_large_events = on_large_events  # gets the bytes of large events logged
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._entries: deque[tuple[int, dict[str, Any], int]] = deque()
        self._bytes = 0
        self.appended_bytes = 0  # every byte ever appended (the engine's byte measure)
        self.head = 0  # sequence number of the newest event (0: none yet)

    @property
    def first_seq(self) -> int:
        """Sequence number of the oldest event still held (head + 1 if empty)."""
        return self._entries[0][0] if self._entries else self.head + 1

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def append(self, events: Iterable[dict[str, Any]]) -> int:
        """Log events in order; returns the sequence number of the last one."""
        large = 0
        before = self._bytes
        for event in events:
            self.head += 1
            size = event_size(event)
            self._entries.append((self.head, event, size))
            self._bytes += size
            if size >= LARGE_EVENT_BYTES:
                large += size
        self.appended_bytes += self._bytes - before
        if large and self.on_large_events is not None:
            self.on_large_events(large)
        # Always keep the newest event, even when it alone exceeds the byte budget,
        # so `head` stays replayable for viewers that are merely a little behind.
        while len(self._entries) > 1 and (
            len(self._entries) > self.max_events or self._bytes > self.max_bytes
        ):
            _, _, size = self._entries.popleft()
            self._bytes -= size
        return self.head

    def covers(self, after: int) -> bool:
        """True if every event with seq > after is still in the log."""
        return self.first_seq - 1 <= after <= self.head

    def read(self, after: int, max_events: int, max_bytes: int) -> list[dict[str, Any]]:
        """Up to ``max_events`` / about ``max_bytes`` of events with seq > after, in order.

        At least one event is returned when there is one, however large.
        """
        if not self.covers(after):
            raise ValueError(f"log does not cover seq {after + 1}..{self.head}")
        skip = after - (self.first_seq - 1)
        out: list[dict[str, Any]] = []
        total = 0
        for _, event, size in islice(self._entries, skip, None):
            if out and (len(out) >= max_events or total + size > max_bytes):
                break
            out.append(event)
            total += size
        return out
