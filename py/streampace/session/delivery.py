"""Server-side delivery buffer: batch AG-UI events for the wire, sans-IO.

Sending one WebSocket message per model delta costs a frame, a JSON encode and
a client-side state update each.  The buffer groups events for at most
``max_wait_ms`` (measured from the first event into an empty buffer: a maximum
wait, never a debounce), publishes early when the buffered delta text reaches
``max_delta_units`` UTF-16 code units or the buffer holds ``max_events`` events
after compaction, and bypasses the wait entirely for the two moments a user
notices: the first visible delta of every message, and the end of a run.
Right after such a first delta the next ``ramp_batches`` windows are shorter
(``ramp_wait_ms``), so a message's opening words do not wait a whole window.

Compaction is lossless: empty text/reasoning deltas are dropped and adjacent
deltas of the same stream (same type and id) are concatenated.  Publishing is
strictly ordered; a failed publish goes back in front of whatever arrived
meanwhile and is retried, so nothing is lost or sent twice.

Timers come only from the injected host (a ``streampace.clock.TimerHost``), so
the same code runs under asyncio, a browser or a test's ManualHost.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streampace.clock import Timeout, TimerHost
from streampace.conversation import events as ev
from streampace.lifecycle import Machine
from streampace.pacing.graphemes import utf16_units
from streampace.session.delivery_lifecycle import DELIVERY_TABLE, DeliveryEvent, DeliveryState

__all__ = [
    "Batch",
    "DELIVERY_TABLE",
    "DeliveryBuffer",
    "DeliveryClosedError",
    "DeliveryConfig",
    "DeliveryEvent",
    "DeliveryState",
    "MERGEABLE_TYPES",
    "compact",
    "utf16_units",
]

# Types whose adjacent events of one stream merge into one (their deltas joined).
MERGEABLE_TYPES: frozenset[str] = frozenset(
    {*ev.CONTENT_TYPES.values(), *ev.CHUNK_TYPES.values()}
)
_TEXT_CARRIERS = MERGEABLE_TYPES  # the types whose first non-empty delta is a fast path

# Content events that carry nothing when their delta is empty.  Chunks are not
# here: an empty chunk may still open a message (it carries messageId/role).
_DROP_WHEN_EMPTY = frozenset({ev.TEXT_MESSAGE_CONTENT, ev.REASONING_MESSAGE_CONTENT})


@dataclass(frozen=True)
class DeliveryConfig:
    max_wait_ms: float = 150
    max_delta_units: int = 4096
    max_events: int = 64
    # Start-of-message ramp: after a first delta went out alone (fast path),
    # the next `ramp_batches` timer windows last `ramp_wait_ms`, not max_wait_ms.
    # Why: the page holds back each delivery's last grapheme cluster until the
    # next delivery (it might still grow), so a 150 ms gap right after a
    # message's first token shows as a freeze; measured on `python -m bench
    # --quick`: worst freeze 152 -> 83 ms, mean lag 1.42x -> 1.22x the oracle.
    # 0 batches turns the ramp off.
    ramp_wait_ms: float = 40
    ramp_batches: int = 2

    def __post_init__(self) -> None:
        if not self.max_wait_ms >= 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {self.max_wait_ms!r}")
        if self.max_delta_units < 1:
            raise ValueError(f"max_delta_units must be >= 1, got {self.max_delta_units!r}")
        if self.max_events < 1:
            raise ValueError(f"max_events must be >= 1, got {self.max_events!r}")
        if not 0 <= self.ramp_wait_ms <= self.max_wait_ms:
            raise ValueError(
                f"ramp_wait_ms must be within 0..max_wait_ms, got {self.ramp_wait_ms!r}"
            )
        if self.ramp_batches < 0:
            raise ValueError(f"ramp_batches must be >= 0, got {self.ramp_batches!r}")


@dataclass(frozen=True)
class Batch:
    """One publish: compacted events in order.

    ``through`` is the sequence number of the batch's own last event (None if
    ``enqueue`` was never given one).  ``enqueue(events, through=n)`` numbers
    its events n-len+1 .. n, so a batch that an early flush cuts out of the
    middle of one call claims exactly the events it carries, never fewer (a
    client dropping ``through <= last`` would lose them) and never more.
    """

    events: list[dict[str, Any]]
    through: int | None = field(default=None)


class DeliveryClosedError(RuntimeError):
    """The buffer was used after close()."""


def _merge_key(event: Mapping[str, Any], step: ev.Step) -> tuple[str, ev.Stream] | None:
    """Events with equal keys that are adjacent merge: same type, same stream as
    the tracker resolves it (an id-less chunk continues its stream's item)."""
    etype = event.get("type")
    if etype not in MERGEABLE_TYPES or step.stream is None:
        return None
    delta = event.get("delta")
    if delta is not None and not isinstance(delta, str):
        return None
    return (etype, step.stream)


def _delta_units(event: Mapping[str, Any]) -> int:
    delta = event.get("delta")
    return utf16_units(delta) if isinstance(delta, str) else 0


class _Entry:
    """One buffered (possibly merged) event.

    Merged deltas are kept as a list of parts and joined once at publish time,
    so a long run of tiny deltas costs O(total text), not O(n^2).
    """

    __slots__ = ("event", "key", "parts", "units", "through")

    def __init__(self, event: dict[str, Any], key: tuple[str, ev.Stream] | None,
                 units: int) -> None:
        self.event = event
        self.key = key
        self.parts: list[str] | None = None
        self.units = units
        self.through: int | None = None

    def absorb(self, other: _Entry) -> None:
        if self.parts is None:
            first = self.event.get("delta")
            self.parts = [first] if isinstance(first, str) and first else []
        if other.parts is not None:
            self.parts.extend(other.parts)
        else:
            delta = other.event.get("delta")
            if isinstance(delta, str) and delta:
                self.parts.append(delta)
        self.units += other.units
        if other.through is not None and (self.through is None or other.through > self.through):
            self.through = other.through

    def build(self) -> dict[str, Any]:
        if self.parts is None:
            return self.event
        merged = dict(self.event)  # keeps the first event's role/name and other fields
        if self.parts or "delta" in merged:
            merged["delta"] = "".join(self.parts)
        return merged


def _max_through(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a >= b else b


def compact(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The buffer's compaction applied to a plain list (no timing, no limits)."""
    out: list[_Entry] = []
    tracker = ev.StreamTracker()
    for event in events:
        etype = event.get("type")
        step = tracker.step(event)
        if etype in _DROP_WHEN_EMPTY and event.get("delta") == "":
            continue
        key = _merge_key(event, step)
        entry = _Entry(dict(event), key, 0)
        if key is not None and out and out[-1].key == key:
            out[-1].absorb(entry)
        else:
            out.append(entry)
    return [e.build() for e in out]


class DeliveryBuffer:
    """Batch events for publishing; see the module docstring for the rules.

    ``publish(batch)`` returns False or raises to signal failure; anything
    else (including None) is success.  After a failure the batch is retried
    ``max_wait_ms`` later (or on the next explicit ``flush()``); fast paths and
    size thresholds do not hammer a failing sink in between.  When it may
    publish is its lifecycle, ``state``: the named states and the one
    transition table in :mod:`streampace.session.delivery_lifecycle`.
    """

    def __init__(
        self,
        publish: Callable[[Batch], bool | None],
        host: TimerHost,
        config: DeliveryConfig | None = None,
    ) -> None:
        self._publish = publish
        self.config = config or DeliveryConfig()
        self._pending: deque[_Entry] = deque()
        self._units = 0
        self._carry_through: int | None = None  # from dropped events with nothing buffered
        self._timer = Timeout(host, self._on_timer)
        self._machine: Machine[DeliveryState, DeliveryEvent] = Machine(
            "delivery buffer", DELIVERY_TABLE, DeliveryState.OPEN)
        # First-delta fast path: streams whose next non-empty delta goes out at once.
        self._tracker = ev.StreamTracker()
        self._run_armed = False
        self._armed: set[ev.Stream] = set()
        self._armed_reasoning_any = False
        self._ramp_left = 0
        self.last_error: BaseException | None = None
        self._stats = {
            "enqueued": 0,
            "dropped": 0,
            "merged": 0,
            "batches": 0,
            "published_events": 0,
            "failures": 0,
            "timer_flushes": 0,
            "fast_flushes": 0,
            "threshold_flushes": 0,
        }

    # -- public API ---------------------------------------------------------

    def enqueue(self, events: Iterable[Mapping[str, Any]], through: int | None = None) -> None:
        """Buffer ``events`` (in order).

        ``through`` is the sequence number of the last event; the events are
        consecutive, so event i of n has seq ``through - (n - 1 - i)``.  With an
        empty list it marks seqs up to ``through`` as covered.
        """
        self._check_open()
        if through is not None and (isinstance(through, bool) or not isinstance(through, int)):
            raise TypeError(f"through must be an int or None, got {type(through).__name__}")
        batch = list(events)
        for i, event in enumerate(batch):
            if not isinstance(event, Mapping):
                raise TypeError(f"event [{i}] must be a dict, got {type(event).__name__}")
            if not isinstance(event.get("type"), str):
                raise ValueError(f"event [{i}]: 'type' missing or not a string")
        fast = False
        first = None if through is None else through - len(batch) + 1
        for i, event in enumerate(batch):
            fast = self._add(event, None if first is None else first + i) or fast
            if self._over_threshold() and self._flush(DeliveryEvent.PUBLISH):
                self._stats["threshold_flushes"] += 1
                if self._machine.state is DeliveryState.CLOSED:
                    return  # publish() closed the buffer: the rest has nowhere to go
        if not batch and through is not None:
            self._attach_through(through)
        if fast and self._pending and self._flush(DeliveryEvent.PUBLISH):
            self._stats["fast_flushes"] += 1
        self._ensure_timer()

    def flush(self) -> None:
        """Publish everything buffered now (also retries after a failure)."""
        self._check_open()
        self._flush(DeliveryEvent.FLUSH)
        self._ensure_timer()

    def close(self) -> list[dict[str, Any]]:
        """Flush, cancel timers and refuse further use.

        Returns the events that could not be published (empty on success), so
        a caller can hand them to another sink instead of losing them.
        """
        if self._machine.state is DeliveryState.CLOSED:
            return []
        self._flush(DeliveryEvent.FLUSH)
        if not self.closed:  # publish() may have closed it already
            self._machine.step(DeliveryEvent.CLOSE)
        self._timer.cancel()
        left = [entry.build() for entry in self._pending]
        self._pending.clear()
        self._units = 0
        return left

    @property
    def closed(self) -> bool:
        return self._machine.state is DeliveryState.CLOSED

    @property
    def state(self) -> DeliveryState:
        """The lifecycle state (DELIVERY_TABLE)."""
        return self._machine.state

    def pending_events(self) -> int:
        """Events buffered (after compaction), including a failed batch."""
        return len(self._pending)

    def pending_units(self) -> int:
        """UTF-16 code units of delta text buffered."""
        return self._units

    def stats(self) -> dict[str, int]:
        return dict(self._stats, pending_events=len(self._pending), pending_units=self._units)

    # -- internals ----------------------------------------------------------

    def _check_open(self) -> None:
        if self._machine.state is DeliveryState.CLOSED:
            raise DeliveryClosedError("DeliveryBuffer is closed; create a new one")

    def _over_threshold(self) -> bool:
        cfg = self.config
        return len(self._pending) >= cfg.max_events or self._units >= cfg.max_delta_units

    def _attach_through(self, through: int) -> None:
        if self._pending:
            tail = self._pending[-1]
            tail.through = _max_through(tail.through, through)
        else:
            self._carry_through = _max_through(self._carry_through, through)

    def _add(self, event: Mapping[str, Any], through: int | None) -> bool:
        """Buffer one event; True if it triggers a fast-path publish."""
        self._stats["enqueued"] += 1
        etype = event["type"]
        step = self._tracker.step(event)
        fast = self._track_fast_path(event, etype, step)
        if fast and etype not in ev.RUN_TERMINAL_TYPES:
            self._ramp_left = self.config.ramp_batches
        if etype in _DROP_WHEN_EMPTY and event.get("delta") == "":
            self._stats["dropped"] += 1
            if through is not None:
                self._attach_through(through)
            return fast
        key = _merge_key(event, step)
        # The caller's dict is kept as is: merging never mutates it (merged
        # deltas live in entry.parts and are joined into a new dict at publish).
        entry = _Entry(event, key, _delta_units(event))  # type: ignore[arg-type]
        entry.through = _max_through(self._carry_through, through)
        self._carry_through = None
        self._units += entry.units
        pending = self._pending
        if key is not None and pending and pending[-1].key == key:
            pending[-1].absorb(entry)
            self._stats["merged"] += 1
        else:
            pending.append(entry)
        return fast

    def _track_fast_path(self, event: Mapping[str, Any], etype: str, step: ev.Step) -> bool:
        if etype in ev.RUN_TERMINAL_TYPES:
            self._run_armed = False
            self._armed.clear()  # bounded memory over a long session
            self._armed_reasoning_any = False
            return True
        if etype == ev.RUN_STARTED:
            self._run_armed = True
            return False
        stream = step.stream
        if stream is None:
            return False
        if step.phase == ev.CLOSE:
            self._armed.discard(stream)
            return False
        if step.phase == ev.OPEN:
            if stream.kind == ev.REASONING_PHASE:
                # Its id names the reasoning phase, not necessarily the message that
                # follows, so arm "the next reasoning delta" instead of one id.
                self._armed_reasoning_any = True
            else:
                self._armed.add(stream)  # a START, or a chunk stream's first chunk
        delta = event.get("delta")
        if etype not in _TEXT_CARRIERS or not (isinstance(delta, str) and delta):
            return False
        fast = False
        if self._run_armed:
            self._run_armed = False
            fast = True
        if stream in self._armed:
            self._armed.discard(stream)
            fast = True
        if stream.kind == ev.REASONING and self._armed_reasoning_any:
            self._armed_reasoning_any = False
            fast = True
        return fast

    def _flush(self, event: DeliveryEvent) -> bool:
        """Publish what is buffered on ``event`` (PUBLISH or FLUSH).

        False if the state held the request back (backoff); True if it was
        taken, by this call's loop or, re-entrantly, by the loop running.
        """
        machine = self._machine
        state = machine.step(event)
        if state is not DeliveryState.PUBLISHING:
            return state is DeliveryState.REPUBLISH
        try:
            while True:
                while self._pending:
                    ok = self._publish_one()
                    if machine.state is DeliveryState.CLOSED:
                        return True  # publish() closed the buffer
                    if not ok:
                        machine.step(DeliveryEvent.FAILED)
                        self._arm_timer()  # the retry
                        return True
                if machine.state is not DeliveryState.REPUBLISH:
                    break
                machine.step(DeliveryEvent.NEXT_PASS)
            machine.step(DeliveryEvent.DRAINED)
            self._timer.cancel()
        except BaseException:
            if machine.state in (DeliveryState.PUBLISHING, DeliveryState.REPUBLISH):
                machine.step(DeliveryEvent.ABORTED)
            raise
        return True

    def _publish_one(self) -> bool:
        pending = self._pending
        count = min(len(pending), self.config.max_events)
        entries = [pending.popleft() for _ in range(count)]
        units = sum(e.units for e in entries)
        self._units -= units
        through: int | None = None
        for entry in entries:
            through = _max_through(through, entry.through)
        batch = Batch([entry.build() for entry in entries], through)
        try:
            ok = self._publish(batch) is not False
        except Exception as exc:  # a failing sink must not lose the batch
            self.last_error = exc
            ok = False
        if ok:
            self._stats["batches"] += 1
            self._stats["published_events"] += len(batch.events)
            return True
        self._stats["failures"] += 1
        # Put the batch back in front of what arrived meanwhile, re-compacting
        # the seam so a retry publishes exactly what one success would have.
        if pending and entries[-1].key is not None and pending[0].key == entries[-1].key:
            entries[-1].absorb(pending.popleft())
            self._stats["merged"] += 1
        pending.extendleft(reversed(entries))
        self._units += units
        return False

    def _ensure_timer(self) -> None:
        if (self._pending and not self._timer.armed
                and self._machine.state is not DeliveryState.CLOSED):
            self._arm_timer()

    def _arm_timer(self) -> None:
        cfg = self.config
        ramp = self._ramp_left and self._machine.state is not DeliveryState.BACKOFF
        self._timer.arm(cfg.ramp_wait_ms if ramp else cfg.max_wait_ms)

    def _on_timer(self) -> None:
        if self._machine.state is DeliveryState.CLOSED:
            return
        if self._pending:
            self._stats["timer_flushes"] += 1
            if self._ramp_left:
                self._ramp_left -= 1
        self._flush(DeliveryEvent.FLUSH)
        self._ensure_timer()
