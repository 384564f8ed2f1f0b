"""Views of simulated runs: the visible text, figures, network jitter, wire
stamps and snapshots — what tests and benches read off a run."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from streampace.conversation.json_patch import apply_patch
from streampace.conversation.transcript import Transcript
from streampace.sim.clusters import clusters
from streampace.sim.run_builder import TimedEvent

__all__ = ["visible_text", "summarize", "with_network_jitter", "stamped", "messages_snapshot",
           "with_snapshot"]


def _events_of(items: Iterable[TimedEvent | Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for item in items:
        yield item.event if isinstance(item, TimedEvent) else item


def _transcript(events: Iterable[TimedEvent | Mapping[str, Any]]) -> Transcript:
    transcript = Transcript()
    transcript.apply(_events_of(events))
    return transcript


def visible_text(events: Iterable[TimedEvent | Mapping[str, Any]]) -> dict[str, str]:
    """Text per message id (assistant, user and reasoning), as the transcript has it.

    Accepts TimedEvents or plain event dicts, so the same function can read
    what a source produced and what a client was handed.
    """
    return _transcript(events).texts()


def summarize(timed: Iterable[TimedEvent]) -> dict[str, Any]:
    """Figures about a run: events, duration_ms, graphemes and deltas.

    graphemes and deltas cover text and reasoning messages (user echo
    included), not tool-call arguments.

    Grapheme counts use this module's small cluster splitter, exact for the
    built-in corpus.
    """
    items = list(timed)
    deltas = 0
    graphemes = 0
    for item in items:
        ev = item.event
        if ev.get("type") in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            deltas += 1
    for text in visible_text(items).values():
        graphemes += len(clusters(text))
    return {
        "events": len(items),
        "duration_ms": items[-1].t_ms if items else 0.0,
        "graphemes": graphemes,
        "deltas": deltas,
    }


def with_network_jitter(
    timed: Iterable[TimedEvent],
    *,
    seed: int = 0,
    base_ms: float = 15.0,
    tail_alpha: float = 1.6,
    max_delay_ms: float = 900.0,
    stalls: tuple[int, int] = (1, 2),
    stall_ms: tuple[float, float] = (1000.0, 2000.0),
) -> list[TimedEvent]:
    """Delay a run as a jittery network would, keeping order.

    Each event gets a heavy-tailed (Pareto) transit delay of at least
    ``base_ms``, capped at ``max_delay_ms``; in addition, 1-2 stalls of
    1-2 s are placed mid-answer, during which nothing arrives and after
    which everything held arrives together.  Arrival times never decrease.
    Deterministic per seed.
    """
    items = list(timed)
    if not items:
        return []
    rng = random.Random(f"streampace.sim.jitter:{seed}")
    end = items[-1].t_ms
    n_stalls = rng.randint(*stalls)
    windows = sorted(
        (start, start + rng.uniform(*stall_ms))
        for start in (rng.uniform(0.2 * end, 0.8 * end) for _ in range(n_stalls))
    )
    out: list[TimedEvent] = []
    last = 0.0
    for item in items:
        delay = min(max_delay_ms, base_ms * rng.random() ** (-1.0 / tail_alpha))
        arrive = item.t_ms + delay
        for lo, hi in windows:
            if lo <= arrive < hi:
                arrive = hi
        last = max(last, arrive)
        out.append(TimedEvent(round(last, 3), item.event))
    return out


def stamped(timed: Iterable[TimedEvent], start_ms: int = 0) -> list[dict[str, Any]]:
    """Events with an AG-UI ``timestamp`` (ms) = start_ms + t_ms, as replay files carry."""
    return [{**item.event, "timestamp": start_ms + int(round(item.t_ms))} for item in timed]


def messages_snapshot(events: Iterable[TimedEvent | Mapping[str, Any]]) -> dict[str, Any]:
    """A MESSAGES_SNAPSHOT event of everything the events so far say.

    Messages still streaming appear with the text received so far (the
    transcript's ``as_messages`` view).  What a server sends when a
    reconnecting client asks for events its log no longer holds.
    """
    return {"type": "MESSAGES_SNAPSHOT", "messages": _transcript(events).as_messages()}


def with_snapshot(timed: Iterable[TimedEvent], at_ms: float) -> list[TimedEvent]:
    """The run with a reconnect-style snapshot inserted at ``at_ms``.

    Before the first event at or after ``at_ms`` (never before RUN_STARTED,
    never after RUN_FINISHED) a MESSAGES_SNAPSHOT of everything so far is
    inserted, followed by a STATE_SNAPSHOT when the run has state by then —
    what a client that resumed past the server's log receives mid-run.
    """
    items = list(timed)
    if len(items) < 2:
        raise ValueError("with_snapshot needs a run of at least two events")
    cut = next((i for i, t in enumerate(items) if t.t_ms >= at_ms), len(items) - 1)
    cut = min(max(cut, 1), len(items) - 1)
    before = items[:cut]
    t = items[cut].t_ms
    inserted = [TimedEvent(t, messages_snapshot(before))]
    state: Any = None
    has_state = False
    for item in before:
        ev = item.event
        if ev["type"] == "STATE_SNAPSHOT":
            state, has_state = ev["snapshot"], True
        elif ev["type"] == "STATE_DELTA" and has_state:
            state = apply_patch(state, ev["delta"])
    if has_state:
        # A copy: apply_patch shares unchanged parts with the run's own events.
        snapshot = json.loads(json.dumps(state))
        inserted.append(TimedEvent(t, {"type": "STATE_SNAPSHOT", "snapshot": snapshot}))
    return before + inserted + items[cut:]
