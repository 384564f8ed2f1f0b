"""A late viewer's snapshot: what it holds, and how it travels in bounded parts.

A viewer that resumes where the log cannot serve it (another epoch, a position
the log no longer holds) gets the conversation as events (``snapshot_events``):
the transcript's own snapshot — ``MESSAGES_SNAPSHOT``, ``STATE_SNAPSHOT``, what
is still streaming re-opened inside a re-opened run — and, when the latest run
has ended, that run's frame around it: ``RUN_STARTED`` first and its terminal
event last, so a viewer cut in the middle of a run learns how it ended (issue 18
item 6: it used to get neither the answer nor the end).

A snapshot can be large (the latest run is kept whole), so it is sent in parts
of at most about ``max_bytes`` each (``iter_parts``), made one at a time as the
socket takes them: batches with the snapshot's ``through`` and ``"more": true``
on every part but the last (docs/protocol.md).  Cutting keeps every event valid
AG-UI: a ``MESSAGES_SNAPSHOT`` is cut between messages, a message's text between
two parts (the next part's first message continues the previous part's last one
under the same id), a content/args/chunk delta into several deltas.
``join_parts`` undoes the message cuts on the client.  Sans-IO.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from streampace.conversation import events as ev
from streampace.conversation.run_status import RunStatus
from streampace.conversation.transcript import Transcript

from .log import event_size

__all__ = ["snapshot_events", "iter_parts", "join_parts"]

_DELTA_TYPES = frozenset({*ev.CONTENT_TYPES.values(), *ev.CHUNK_TYPES.values()})


def snapshot_events(transcript: Transcript) -> list[dict[str, Any]]:
    """The events that bring a viewer with no history to the transcript's position."""
    events = transcript.snapshot_events()
    run = transcript.run
    if run.status not in (RunStatus.FINISHED, RunStatus.ERROR) or not run.run_id:
        return events
    started: dict[str, Any] = {"type": ev.RUN_STARTED, "threadId": run.thread_id or "",
                               "runId": run.run_id}
    if run.status is RunStatus.FINISHED:
        end: dict[str, Any] = {"type": ev.RUN_FINISHED, "threadId": run.thread_id or "",
                               "runId": run.run_id}
    else:
        end = {"type": ev.RUN_ERROR, "message": run.error or "unknown error"}
        if run.error_code:
            end["code"] = run.error_code
    return [started, *events, end]


def iter_parts(events: list[dict[str, Any]], max_bytes: int
               ) -> Iterator[tuple[list[dict[str, Any]], bool]]:
    """``events`` in parts of about ``max_bytes`` (compact JSON) each, made lazily;
    each with whether it is the last.  A piece that cannot be cut (an event with
    no text to cut) goes alone, whatever its size."""
    pending: list[dict[str, Any]] | None = None
    for part in _parts(events, max(max_bytes, 1024)):
        if pending is not None:
            yield pending, False
        pending = part
    if pending is not None:
        yield pending, True


def join_parts(parts: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The events of a snapshot's parts, with the messages cut at part boundaries
    joined again (the client's half of ``iter_parts``)."""
    out: list[dict[str, Any]] = []
    for part in parts:
        for i, event in enumerate(part):
            prev = out[-1] if out else None
            if (i == 0 and prev is not None and prev.get("type") == ev.MESSAGES_SNAPSHOT
                    and event.get("type") == ev.MESSAGES_SNAPSHOT):
                _continue(prev, event)
            else:
                out.append(event)
    return out


def _continue(prev: dict[str, Any], event: dict[str, Any]) -> None:
    """Append ``event``'s messages to ``prev``'s (a copy of it is made once)."""
    messages = event.get("messages")
    kept = prev.get("messages")
    if not isinstance(messages, list) or not isinstance(kept, list):
        return
    kept = prev["messages"] = list(kept)
    first = messages[0] if messages else None
    last = kept[-1] if kept else None
    if (isinstance(first, dict) and isinstance(last, dict) and first.get("id") == last.get("id")
            and isinstance(first.get("content"), str) and isinstance(last.get("content"), str)):
        kept[-1] = {**last, "content": last["content"] + first["content"]}
        messages = messages[1:]
    kept.extend(messages)


# -- cutting -----------------------------------------------------------------


def _parts(events: list[dict[str, Any]], max_bytes: int) -> Iterator[list[dict[str, Any]]]:
    part: list[dict[str, Any]] = []
    size = 0
    for event in events:
        for piece, n in _pieces(event, max_bytes):
            if part and size + n > max_bytes:
                yield part
                part, size = [], 0
            part.append(piece)
            size += n
    if part:
        yield part


def _pieces(event: dict[str, Any], max_bytes: int) -> Iterator[tuple[dict[str, Any], int]]:
    """``event`` as one or more events of about ``max_bytes`` each, with their sizes."""
    etype = event.get("type")
    if etype == ev.MESSAGES_SNAPSHOT and isinstance(event.get("messages"), list):
        yield from _message_pieces(event, max_bytes)
        return
    size = event_size(event)
    delta = event.get("delta")
    if size <= max_bytes or etype not in _DELTA_TYPES or not isinstance(delta, str):
        yield event, size
        return
    for text in _cut(delta, max_bytes - event_size({**event, "delta": ""})):
        piece = {**event, "delta": text}
        yield piece, event_size(piece)


def _message_pieces(event: dict[str, Any], max_bytes: int
                    ) -> Iterator[tuple[dict[str, Any], int]]:
    """A MESSAGES_SNAPSHOT as several, cut between messages and inside long texts.
    Two messages with the same id never meet at a cut unless the second continues
    the first (that is how ``join_parts`` tells a continuation)."""
    base = {k: v for k, v in event.items() if k != "messages"}
    overhead = event_size({**base, "messages": []})
    batch: list[Any] = []
    size = overhead
    last_origin: Any = None
    for message in event["messages"]:
        for piece, n in _message_cuts(message, max_bytes - overhead):
            same_id = bool(batch) and _id(piece) is not None and _id(piece) == _id(batch[-1])
            ambiguous = same_id and last_origin is not message
            if batch and size + n + 1 > max_bytes and not ambiguous:
                yield {**base, "messages": batch}, size
                batch, size = [], overhead
            batch.append(piece)
            size += n + 1
            last_origin = message
    yield {**base, "messages": batch}, size


def _id(message: Any) -> Any:
    return message.get("id") if isinstance(message, dict) else None


def _message_cuts(message: Any, max_bytes: int) -> Iterator[tuple[Any, int]]:
    if not isinstance(message, dict):
        yield message, len(str(message))
        return
    size = event_size(message)
    content = message.get("content")
    if size <= max_bytes or not isinstance(content, str) or not content:
        yield message, size
        return
    for text in _cut(content, max_bytes - event_size({**message, "content": ""})):
        piece = {**message, "content": text}
        yield piece, event_size(piece)


def _cut(text: str, budget: int) -> Iterator[str]:
    """``text`` in pieces of about ``budget`` UTF-8 bytes or less; never between the
    halves of a surrogate pair."""
    step = max(budget, 256)
    i = 0
    while i < len(text):
        j = min(i + step, len(text))
        if j - i > 256 and len(text[i:j].encode("utf-8", "surrogatepass")) > budget:
            j = i + max(256, (j - i) // 4)  # wider than ASCII (up to 4 bytes a character)
        if j < len(text) and "\ud800" <= text[j - 1] <= "\udbff":
            j -= 1
        yield text[i:j]
        i = j
