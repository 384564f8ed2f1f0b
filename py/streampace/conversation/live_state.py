"""Live view model of one AG-UI session, updated batch by batch.

``LiveState.apply(events)`` folds a batch (what the pacing scheduler delivers
in one frame) into the conversation (:class:`streampace.conversation.transcript.Transcript`,
the one reducer; its docstring has the rules for out-of-order input) and
returns a :class:`Changes` that tells a renderer exactly which DOM nodes to
touch: new items in timeline order, the literal strings appended to each
existing item (ready for ``Text.appendData``), ended items, updated items, tool
calls, run status, state, or a full reset after a snapshot.

Cost: O(events + delta text) per batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from streampace.conversation.items import TOOL_CALL, ItemRef, Observer
from streampace.conversation.transcript import Transcript

__all__ = ["Changes", "LiveState"]


@dataclass
class Changes:
    """What one ``apply`` changed.

    Renderer contract:
    - ``reset``: the item set was replaced (MESSAGES_SNAPSHOT): rebuild every
      item node from ``state.timeline``; the item lists below then only hold
      what happened after the last reset and can be ignored.
    - ``created``: new items, in timeline order (always appended at the end of
      the timeline).  Render each from its current state (``state.item(ref)``,
      full text included); they do not appear in ``appended``/``updated``.
    - ``appended[ref]``: for items that existed before this batch, the exact
      strings appended to their text (messages, reasoning) or arguments (tool
      calls), in order: ``node.appendData(s)`` for each.
    - ``ended``: items that ended in this batch (also if created in it) and
      are still ended at its end.
    - ``updated``: existing items with a non-text change (tool name, result,
      reopened after a snapshot).
    - ``tool_calls``: tool calls with any change, created ones included.

    Refs name items, not wire ids: when a later run reuses an id, its item is a
    new ref (``ItemRef.use``) that appears in ``created``.
    """

    created: list[ItemRef] = field(default_factory=list)
    appended: dict[ItemRef, list[str]] = field(default_factory=dict)
    ended: list[ItemRef] = field(default_factory=list)
    updated: list[ItemRef] = field(default_factory=list)
    tool_calls: list[ItemRef] = field(default_factory=list)
    run_status: bool = False
    state: bool = False
    reset: bool = False
    anomalies: int = 0

    def __bool__(self) -> bool:
        return bool(
            self.created or self.appended or self.ended or self.updated or self.tool_calls
            or self.run_status or self.state or self.reset or self.anomalies
        )


class _Recorder(Observer):
    """Builds a Changes with ordered, duplicate-free lists in O(1) per note."""

    def __init__(self) -> None:
        self.created: dict[ItemRef, None] = {}
        self.appended: dict[ItemRef, list[str]] = {}
        self.ended: dict[ItemRef, None] = {}
        self.updated: dict[ItemRef, None] = {}
        self.tool_calls: dict[ItemRef, None] = {}
        self.run_status = False
        self.state = False
        self.reset = False
        self.anomalies = 0

    def create(self, ref: ItemRef) -> None:
        self.created[ref] = None
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref] = None

    def append(self, ref: ItemRef, text: str) -> None:
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref] = None
        if ref in self.created:
            return
        bucket = self.appended.get(ref)
        if bucket is None:
            self.appended[ref] = [text]
        else:
            bucket.append(text)

    def end(self, ref: ItemRef) -> None:
        self.ended[ref] = None
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref] = None

    def update(self, ref: ItemRef) -> None:
        if ref.kind == TOOL_CALL:
            self.tool_calls[ref] = None
        if ref not in self.created:
            self.updated[ref] = None

    def reopen(self, ref: ItemRef) -> None:
        # Ended and resumed within one batch: it is not ended any more.
        self.ended.pop(ref, None)
        self.update(ref)

    def clear_items(self) -> None:
        self.created.clear()
        self.appended.clear()
        self.ended.clear()
        self.updated.clear()
        self.tool_calls.clear()

    def freeze(self) -> Changes:
        return Changes(
            created=list(self.created),
            appended=self.appended,
            ended=list(self.ended),
            updated=list(self.updated),
            tool_calls=list(self.tool_calls),
            run_status=self.run_status,
            state=self.state,
            reset=self.reset,
            anomalies=self.anomalies,
        )


class LiveState(Transcript):
    """The page's view model: a Transcript whose ``apply`` reports its Changes."""

    def __init__(self, anomaly_log_size: int = 50) -> None:
        super().__init__(anomaly_log_size=anomaly_log_size)

    def apply(self, events: Iterable[Mapping[str, Any]]) -> Changes:  # type: ignore[override]
        """Fold a batch of events in order; return what changed."""
        if isinstance(events, Mapping):
            raise TypeError("apply() takes a list of events")
        self._obs = rec = _Recorder()
        try:
            for event in events:
                self.apply_event(event)
        finally:
            self._obs = Observer()
        return rec.freeze()
