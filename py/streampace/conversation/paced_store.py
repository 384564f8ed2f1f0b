"""The headless store's model: paced transcript -> immutable snapshot.

What ``streampace.createStore`` hands a host framework (React's
``useSyncExternalStore``, Vue, Svelte), built from the batches the pacing
scheduler delivers, sans-IO so it runs unchanged in CPython and in the page:

    StoreSnapshot(messages=(MessageView(id, role, text, done, reasoning,
                                        tool_calls), ...),
                  run=RunView(status, error, code),
                  connection=ConnectionView(state, problem),
                  queued=(...))

``StoreModel.apply(events)`` folds a batch into its :class:`LiveState` and
notes which messages it touched and how; ``take_patch()`` is what changed
since it was last called, JSON-safe, for the page's JS side, which keeps
frozen copies: whole records for new or reshaped messages, and for a message
that only grew just its new text (``more``, ``reasoningMore``) — the pieces the
batch appended, so a frame costs O(what changed), never O(message) or
O(transcript). ``snapshot`` (the same in Python; built when read) returns the
same object until something changed, and an unchanged message keeps its
``MessageView`` object across snapshots (a host compares by identity).

Messages: one per text message of the timeline, with its role and its paced
text (the source text so far, never rendered). An assistant message carries
the reasoning that came before it in its run (``reasoning``) and its tool
calls (``tool_calls``, by ``parentMessageId``). Reasoning or tool calls with
no message to carry them yet get an assistant message of their own, with the
reasoning's (or the parent's, or the call's) id; when the answer's text
message starts, it takes that message over — same place, the answer's id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streampace.conversation.items import (
    MESSAGE,
    REASONING,
    TOOL_CALL,
    ItemRef,
    MessageItem,
    ToolCallItem,
)
from streampace.conversation.live_state import Changes, LiveState

__all__ = ["LOST_CODES", "RUN_STATUSES", "ConnectionView", "MessageView", "RunView",
           "StoreModel", "StoreSnapshot", "ToolCallView"]

# RUN_ERROR codes of a run that ended because its server side went away
# (client.py: a new epoch; redis_lease.py: a lost lease; engine.py: the store).
LOST_CODES = frozenset({"server_restarted", "run_lost", "store_unavailable"})
RUN_STATUSES = ("idle", "running", "finished", "stopped", "error", "lost")
_ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class ToolCallView:
    id: str
    name: str | None
    args: str
    result: Any
    done: bool

    def record(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "args": self.args, "result": self.result,
                "done": self.done}


@dataclass(frozen=True, slots=True)
class MessageView:
    """``key``: unique in the snapshot and stable (a framework's list key): an
    agent may reuse ``id`` every run, and a message that takes over its
    reasoning's place changes ``id`` but keeps ``key``."""

    key: str
    id: str
    role: str
    text: str
    done: bool
    reasoning: str | None = None
    tool_calls: tuple[ToolCallView, ...] | None = None

    def record(self) -> dict[str, Any]:
        """The JS shape: ``reasoning`` and ``toolCalls`` only when present."""
        out: dict[str, Any] = {"key": self.key, "id": self.id, "role": self.role,
                               "text": self.text, "done": self.done}
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.tool_calls is not None:
            out["toolCalls"] = [call.record() for call in self.tool_calls]
        return out


@dataclass(frozen=True, slots=True)
class RunView:
    status: str = "idle"  # one of RUN_STATUSES
    error: str | None = None
    code: str | None = None

    def record(self) -> dict[str, Any]:
        return {"status": self.status, "error": self.error, "code": self.code}


@dataclass(frozen=True, slots=True)
class ConnectionView:
    state: str = "none"  # "none" before connecting, then session.connection's ConnState
    problem: Mapping[str, Any] | None = None  # {code, message, ...} while not connected

    def record(self) -> dict[str, Any]:
        return {"state": self.state, "problem": None if self.problem is None
                else dict(self.problem)}


@dataclass(frozen=True, slots=True)
class StoreSnapshot:
    messages: tuple[MessageView, ...] = ()
    run: RunView = field(default_factory=RunView)
    connection: ConnectionView = field(default_factory=ConnectionView)
    queued: tuple[Any, ...] = ()

    def record(self) -> dict[str, Any]:
        return {"messages": [m.record() for m in self.messages], "run": self.run.record(),
                "connection": self.connection.record(), "queued": list(self.queued)}


class _Entry:
    """One snapshot message and the timeline items it is made of."""

    __slots__ = ("key", "id", "role", "message", "reasoning", "calls", "run")

    def __init__(self, key: str, ident: str, role: str, run: int) -> None:
        self.key = key
        self.id = ident
        self.role = role
        self.message: ItemRef | None = None
        self.reasoning: list[ItemRef] = []
        self.calls: list[ItemRef] = []
        self.run = run


def run_view(state: LiveState) -> RunView:
    run = state.run
    status = run.outcome
    if status == "error" and run.error_code in LOST_CODES:
        status = "lost"
    failed = status in ("error", "lost")
    return RunView(status, run.error if failed else None, run.error_code)


class _Pending:
    """What take_patch() has not told of one message yet: whole, or only grown."""

    __slots__ = ("whole", "more", "reasoning_more")

    def __init__(self) -> None:
        self.whole = False
        self.more: list[str] = []
        self.reasoning_more: list[str] = []


class StoreModel:
    """See the module docstring."""

    def __init__(self) -> None:
        self.state = LiveState()
        self._entries: list[_Entry] = []
        self._where: dict[ItemRef, int] = {}  # timeline item -> entry index
        self._holder: int | None = None  # entry waiting for its answer's text message
        self._run = RunView()
        self._connection = ConnectionView()
        self._queued: tuple[Any, ...] = ()
        # The Python snapshot, built when read, from the entries changed since.
        self._views: list[MessageView] = []
        self._snapshot = StoreSnapshot()
        self._stale = False
        self._stale_views: set[int] = set()
        # What take_patch() has not told yet.
        self._pending: dict[int, _Pending] = {}
        self._told_length = 0
        self._dirty_parts: set[str] = set()

    # -- input -------------------------------------------------------------
    def apply(self, events: Iterable[Mapping[str, Any]]) -> Changes:
        """Fold one paced batch; returns the LiveState's Changes."""
        changes = self.state.apply(events)
        if changes:
            self._absorb(changes)
        return changes

    def set_connection(self, state: str, problem: Mapping[str, Any] | None) -> None:
        view = ConnectionView(state, problem)
        if view != self._connection:
            self._connection = view
            self._touch("connection")

    def set_queued(self, queued: Iterable[Any]) -> None:
        items = tuple(queued)
        if items != self._queued:
            self._queued = items
            self._touch("queued")

    def reset(self) -> None:
        """Forget the conversation (a session switch); connection and queue stay."""
        self.state = LiveState()
        self._rebuild()
        self._set_run(RunView())

    # -- output ------------------------------------------------------------
    @property
    def snapshot(self) -> StoreSnapshot:
        """The current snapshot: the same object until something changed; a
        message that did not change keeps its MessageView."""
        if self._stale:
            self._stale = False
            views = self._views
            del views[len(self._entries):]
            for index in sorted(self._stale_views):
                view = self._view(self._entries[index])
                if index >= len(views):
                    views.append(view)
                elif view != views[index]:
                    views[index] = view
            self._stale_views = set()
            self._snapshot = StoreSnapshot(tuple(views), self._run, self._connection,
                                           self._queued)
        return self._snapshot

    def take_patch(self) -> dict[str, Any] | None:
        """What changed since the last call (None: nothing), JSON-safe:
        ``messages``: ``[[index, record], ...]`` and ``length`` — a record is a
        whole message, or, when a message only grew, ``{"more": its new text,
        "reasoningMore": its new reasoning, "done": ...}`` (either may be
        absent) —, ``run``, ``connection``, ``queued``: whole, if changed.
        Costs O(what changed): a growing message is never copied whole."""
        if not self._pending and not self._dirty_parts and \
                self._told_length == len(self._entries):
            return None
        patch: dict[str, Any] = {}
        if self._pending or self._told_length != len(self._entries):
            changed = []
            for index in sorted(self._pending):
                entry = self._entries[index]
                pending = self._pending[index]
                if pending.whole:
                    changed.append([index, self._view(entry).record()])
                    continue
                record: dict[str, Any] = {"done": self._done(entry)}
                if pending.more:
                    record["more"] = "".join(pending.more)
                if pending.reasoning_more:
                    record["reasoningMore"] = "".join(pending.reasoning_more)
                changed.append([index, record])
            patch["messages"] = changed
            patch["length"] = self._told_length = len(self._entries)
            self._pending = {}
        parts = self._dirty_parts
        if "run" in parts:
            patch["run"] = self._run.record()
        if "connection" in parts:
            patch["connection"] = self._connection.record()
        if "queued" in parts:
            patch["queued"] = list(self._queued)
        self._dirty_parts = set()
        return patch

    # -- building ----------------------------------------------------------
    def _absorb(self, ch: Changes) -> None:
        if ch.reset:
            self._rebuild()
        else:
            for ref in ch.created:
                self._place(ref)
            for ref, parts in ch.appended.items():
                self._grew(ref, parts)
            for refs in (ch.ended, ch.updated, ch.tool_calls):
                for ref in refs:
                    index = self._where.get(ref)
                    if index is None:
                        continue
                    if ref.kind == TOOL_CALL or refs is ch.updated:
                        self._mark(index, whole=True)
                    else:
                        self._mark(index)  # ended: told by the record's "done"
        if ch.run_status or ch.reset:
            self._set_run(run_view(self.state))

    def _grew(self, ref: ItemRef, parts: list[str]) -> None:
        index = self._where.get(ref)
        if index is None:
            return
        entry = self._entries[index]
        pending = self._mark(index)
        if pending.whole:
            return
        if ref == entry.message:
            pending.more.extend(parts)
        elif entry.reasoning and ref == entry.reasoning[-1]:
            pending.reasoning_more.extend(parts)
        else:
            pending.whole = True  # tool arguments, or an earlier reasoning item

    def _mark(self, index: int, whole: bool = False) -> _Pending:
        pending = self._pending.get(index)
        if pending is None:
            pending = self._pending[index] = _Pending()
        if whole:
            pending.whole = True
        self._stale_views.add(index)
        self._stale = True
        return pending

    def _rebuild(self) -> None:
        self._entries = []
        self._where = {}
        self._holder = None
        self._views = []
        self._pending = {}
        self._stale_views = set()
        self._told_length = -1  # the length is told even if it did not change
        for ref in self.state.timeline:
            self._place(ref)
        self._stale = True

    def _place(self, ref: ItemRef) -> None:
        item = self.state.all_items.get(ref)
        if item is None:
            return
        if ref.kind == TOOL_CALL:
            assert isinstance(item, ToolCallItem)
            index = self._call_holder(item)
            self._entries[index].calls.append(ref)
        elif ref.kind == REASONING:
            assert isinstance(item, MessageItem)
            index = self._open_holder(item)
            self._entries[index].reasoning.append(ref)
        elif ref.kind == MESSAGE:
            assert isinstance(item, MessageItem)
            index = self._message_entry(item)
        else:
            return
        self._where[ref] = index
        self._mark(index, whole=True)

    def _message_entry(self, item: MessageItem) -> int:
        holder = self._holder
        self._holder = None
        if (holder is not None and item.role == _ASSISTANT
                and self._entries[holder].run == item.run):
            entry = self._entries[holder]
            entry.id = item.id  # the answer takes its reasoning's message over
        else:
            holder = self._new_entry(item.ref, item.id, item.role)
            entry = self._entries[holder]
        entry.message = item.ref
        return holder

    def _open_holder(self, item: MessageItem) -> int:
        holder = self._holder
        if holder is not None and self._entries[holder].run == item.run:
            return holder
        self._holder = self._new_entry(item.ref, item.id, _ASSISTANT)
        return self._holder

    def _call_holder(self, item: ToolCallItem) -> int:
        parent = item.parent_message_id
        if parent is not None:
            for index in range(len(self._entries) - 1, -1, -1):
                entry = self._entries[index]
                if entry.id == parent:
                    if entry.role == _ASSISTANT and entry.run == item.run:
                        return index
                    break
        holder = self._holder
        if parent is None and holder is not None and self._entries[holder].run == item.run:
            return holder
        return self._new_entry(item.ref, parent or item.id, _ASSISTANT)

    def _new_entry(self, first: ItemRef, ident: str, role: str) -> int:
        item = self.state.all_items[first]
        key = f"{first.kind}:{first.id}:{first.use}"
        self._entries.append(_Entry(key, ident, role, item.run))
        return len(self._entries) - 1

    def _done(self, entry: _Entry) -> bool:
        items = self.state.all_items
        if entry.message is not None:
            return items[entry.message].ended
        return all(items[ref].ended for ref in (*entry.reasoning, *entry.calls))

    def _view(self, entry: _Entry) -> MessageView:
        items = self.state.all_items
        text = ""
        if entry.message is not None:
            message = items[entry.message]
            assert isinstance(message, MessageItem)
            text = message.text
        reasoning = None
        if entry.reasoning:
            parts = [items[ref] for ref in entry.reasoning]
            reasoning = "".join(p.text for p in parts if isinstance(p, MessageItem))
        calls = None
        if entry.calls:
            calls = tuple(_call_view(items[ref]) for ref in entry.calls)
        return MessageView(entry.key, entry.id, entry.role, text, self._done(entry), reasoning,
                           calls)

    def _set_run(self, view: RunView) -> None:
        if view != self._run:
            self._run = view
            self._touch("run")

    def _touch(self, part: str) -> None:
        self._dirty_parts.add(part)
        self._stale = True


def _call_view(item: Any) -> ToolCallView:
    assert isinstance(item, ToolCallItem)
    # The result is TOOL_CALL_RESULT content: validated JSON (a string or parts).
    return ToolCallView(item.id, item.name, item.args, item.result, item.ended)
