"""The item model of a conversation: what the transcript reducer builds.

A timeline item is a message, a reasoning message or a tool call.  Events
address items by their wire id, but an id names an item only within one run:
agents reuse ids across runs (``messageId: "a1"`` every run), so an item is
named by :class:`ItemRef` — its kind, its wire id and ``use``, how many items
of that kind and id came before it in the same transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from streampace.conversation.run_status import RunStatus

__all__ = [
    "MESSAGE",
    "REASONING",
    "TOOL_CALL",
    "Item",
    "ItemRef",
    "MessageItem",
    "Observer",
    "ReasoningItem",
    "RunInfo",
    "RunStatus",
    "TextBuffer",
    "ToolCallItem",
    "content_text",
    "utf8_len",
]

MESSAGE: Literal["message"] = "message"
REASONING: Literal["reasoning"] = "reasoning"
TOOL_CALL: Literal["tool_call"] = "tool_call"

Source = Literal["stream", "snapshot", "chunk"]


class ItemRef(NamedTuple):
    """One timeline item: its kind, wire id, and which use of that id it is (0 first)."""

    kind: str
    id: str
    use: int = 0


class TextBuffer:
    """Append-only text: O(1) append, joined lazily once per read."""

    __slots__ = ("_parts",)

    def __init__(self, initial: str = "") -> None:
        self._parts: list[str] = [initial] if initial else []

    def append(self, piece: str) -> None:
        self._parts.append(piece)

    def get(self) -> str:
        parts = self._parts
        if len(parts) > 1:
            self._parts = parts = ["".join(parts)]
        return parts[0] if parts else ""


@dataclass(eq=False)
class _Item:
    id: str
    ended: bool = False
    # "snapshot": restored from MESSAGES_SNAPSHOT; "chunk": a chunk stream ended by
    # another event.  Both may be resumed without an anomaly (within their run).
    source: Source = "stream"
    seq: int = 0  # creation order, shared with tool results (for as_messages())
    use: int = 0  # see ItemRef
    run: int = 0  # the transcript's run count when the item was made (see Transcript)
    ended_by_event: bool = field(default=False, repr=False)
    _ref: ItemRef | None = field(default=None, repr=False)  # made once (a ref per delta adds up)

    @property
    def kind(self) -> str:
        raise NotImplementedError

    @property
    def ref(self) -> ItemRef:
        ref = self._ref
        if ref is None:
            ref = self._ref = ItemRef(self.kind, self.id, self.use)
        return ref


@dataclass(eq=False)
class MessageItem(_Item):
    role: str = "assistant"
    name: str | None = None
    raw: dict[str, Any] | None = None  # the snapshot message, for non-text content
    body: TextBuffer = field(default_factory=TextBuffer, repr=False)

    @property
    def kind(self) -> str:
        return MESSAGE

    @property
    def text(self) -> str:
        return self.body.get()


@dataclass(eq=False)
class ReasoningItem(MessageItem):
    role: str = "reasoning"

    @property
    def kind(self) -> str:
        return REASONING


@dataclass(eq=False)
class ToolCallItem(_Item):
    name: str | None = None
    parent_message_id: str | None = None
    result: Any = None  # TOOL_CALL_RESULT content (str or list); None until known
    result_message_id: str | None = None
    result_seq: int = 0
    body: TextBuffer = field(default_factory=TextBuffer, repr=False)

    @property
    def kind(self) -> str:
        return TOOL_CALL

    @property
    def args(self) -> str:
        """Accumulated argument text (usually JSON, possibly still incomplete)."""
        return self.body.get()


Item = MessageItem | ToolCallItem  # ReasoningItem is a MessageItem


@dataclass
class RunInfo:
    status: RunStatus = RunStatus.IDLE  # moved only by RUN_STATUS_TABLE (the transcript)
    error: str | None = None
    error_code: str | None = None
    thread_id: str | None = None
    run_id: str | None = None

    @property
    def outcome(self) -> str:
        """How the run ended for a reader: "finished", "stopped" (cancelled), "error".

        While running or before any run: the status ("running", "idle").
        """
        if self.status is RunStatus.ERROR and self.error_code == "cancelled":
            return "stopped"
        return self.status.value


class Observer:
    """Told about every change; the base ignores them (LiveState records them)."""

    run_status = False
    state = False
    reset = False
    anomalies = 0

    def create(self, ref: ItemRef) -> None: ...

    def append(self, ref: ItemRef, text: str) -> None: ...

    def end(self, ref: ItemRef) -> None: ...

    def update(self, ref: ItemRef) -> None: ...

    def reopen(self, ref: ItemRef) -> None:
        """An ended item goes on (a resumed snapshot or chunk item)."""
        self.update(ref)

    def clear_items(self) -> None: ...


def content_text(content: Any) -> str:
    """Visible text of an AG-UI message content (str, or a list of input parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
