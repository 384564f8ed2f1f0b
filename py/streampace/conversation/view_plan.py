"""The timeline view's plan: `LiveState` changes -> DOM operations, pure.

`ViewPlanner` decides everything the page's view shows — which elements an
item has, their classes, attributes and text, where a text delta goes — and
hands `browser/renderer.py` a list of operations to carry out.  The applier
only makes DOM calls; nothing here touches `js`, so the whole plan is tested in
CPython (tests/core/test_view_plan.py).

Stream text leaves this module only as text: an `Element`'s `text`, or the
text of an append operation, which the applier inserts with createTextNode /
appendData / textContent.  Attribute names come from `SAFE_ATTRIBUTES` alone
(an `Element` with any other name is refused when made), so no event handler,
URL or style attribute can be planned; values are set with setAttribute, as
text.

Text growth follows what Blink makes cheap (measured in Chromium 156): a
delta goes into the item's last Text node with appendData only while that node
is ASCII and under `TEXT_NODE_LIMIT` characters (appendData copies the node's
whole string, and is slow on any non-ASCII node), otherwise it becomes a new
sibling Text node; past `BLOCK_LIMIT` characters the text after a newline
continues in a new block element, since Blink re-collects a whole block's
inline text on every mutation.  Adjacent Text nodes and blocks render, select
and copy as one text under pre-wrap, so a frame costs O(delta).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from streampace.conversation import items
from streampace.conversation.live_state import Changes, LiveState

__all__ = [
    "BLOCK_LIMIT", "FORMATS", "SAFE_ATTRIBUTES", "TEXT_NODE_LIMIT",
    "AddBlock", "AddItem", "AddText", "AppendText", "ClearTimeline", "CloseMarkdown",
    "Element", "FeedMarkdown", "Op", "Part", "ReplaceBody", "SetAttribute", "SetPartText",
    "ShowPart", "ShowRun", "ViewPlanner", "dom_events", "queued_element", "status_text",
]

TEXT_NODE_LIMIT = 4096  # characters per Text node before a new one is started
# Characters per block before the next line starts a new block element (Blink:
# 0.1 ms per frame at 200, 0.6 ms at 20 000 CJK characters in one block; 0.06 ms
# when split in blocks of 1 000).  Splitting only after a newline keeps the
# rendering and the selected/copied text identical under pre-wrap.
BLOCK_LIMIT = 1024
FORMATS = ("markdown", "text")
# The run's outcome -> the label shown on the status line.
_STATUS = {"running": "generating", "finished": "done", "stopped": "stopped"}
# Every attribute name the view may set; values are text (setAttribute).
SAFE_ATTRIBUTES = frozenset({
    "aria-busy", "aria-label", "data-format", "data-id", "data-queue-id", "data-role",
    "data-state", "data-withdraw", "dir", "role", "type",
})


def status_text(run: items.RunInfo, labels: dict[str, str]) -> str:
    """The run's status line in the view's words ("Generating…", "Done", "Error: …")."""
    outcome = run.outcome
    if outcome == "error":
        text = f"{labels['error']}: {run.error or 'run failed'}"
        return text + f" ({run.error_code})" if run.error_code else text
    label = _STATUS.get(outcome)
    return labels[label] if label is not None else ""


class Part(Enum):
    """The handles of one item's elements the applier keeps."""

    ITEM = "item"      # the item's own element (data-state, data-format)
    BODY = "body"      # where its text goes: a plain text box or a Markdown body
    NAME = "name"      # a tool call's name line
    RESULT = "result"  # a tool call's result


@dataclass(frozen=True, slots=True)
class Element:
    """An element to build: our own tag and class, attributes from `SAFE_ATTRIBUTES`,
    optional text (one Text node) and children, built in that order.

    `pre`: preformatted text (pre-wrap, long words wrap), set through CSSOM — a
    strict CSP (style-src 'self') blocks a style attribute but not this — and
    always holding its Text node, which text deltas then grow.  `markdown`: a
    Markdown body; `text` is fed to its view instead (closed if `ended`).
    `part`: the item handle this element is."""

    tag: str
    cls: str
    attrs: tuple[tuple[str, str], ...] = ()
    text: str | None = None
    children: tuple[Element | str, ...] = ()
    part: Part | None = None
    pre: bool = False
    markdown: bool = False
    ended: bool = False
    hidden: bool = False
    open: bool = False

    def __post_init__(self) -> None:
        for name, _ in self.attrs:
            if name not in SAFE_ATTRIBUTES:
                raise ValueError(f"attribute {name!r} is not one the view sets")


# -- operations (the applier's whole vocabulary) ------------------------------
@dataclass(frozen=True, slots=True)
class ClearTimeline:
    """Remove every item (their Markdown views released)."""

    ref: None = None


@dataclass(frozen=True, slots=True)
class AddItem:
    """Build `element` and append it to the timeline as item `ref`."""

    ref: items.ItemRef
    element: Element


@dataclass(frozen=True, slots=True)
class AppendText:
    """appendData `text` to the item's last Text node."""

    ref: items.ItemRef
    text: str


@dataclass(frozen=True, slots=True)
class AddText:
    """A new Text node after the item's last one, in its current block."""

    ref: items.ItemRef
    text: str


@dataclass(frozen=True, slots=True)
class AddBlock:
    """A new block (`div dir=auto`) at the end of the item's body, holding `text`."""

    ref: items.ItemRef
    text: str


@dataclass(frozen=True, slots=True)
class FeedMarkdown:
    ref: items.ItemRef
    text: str


@dataclass(frozen=True, slots=True)
class CloseMarkdown:
    ref: items.ItemRef


@dataclass(frozen=True, slots=True)
class ReplaceBody:
    """The item's body anew (Markdown views are one-way): `element` replaces it."""

    ref: items.ItemRef
    element: Element


@dataclass(frozen=True, slots=True)
class SetPartText:
    ref: items.ItemRef
    part: Part
    text: str


@dataclass(frozen=True, slots=True)
class ShowPart:
    ref: items.ItemRef
    part: Part


@dataclass(frozen=True, slots=True)
class SetAttribute:
    ref: items.ItemRef
    part: Part
    name: str
    value: str

    def __post_init__(self) -> None:
        if self.name not in SAFE_ATTRIBUTES:
            raise ValueError(f"attribute {self.name!r} is not one the view sets")


@dataclass(frozen=True, slots=True)
class ShowRun:
    """The run's status: the timeline's aria-busy, the view's data-run, the status line."""

    busy: bool
    outcome: str
    text: str
    ref: None = None


Op = (ClearTimeline | AddItem | AppendText | AddText | AddBlock | FeedMarkdown | CloseMarkdown
      | ReplaceBody | SetPartText | ShowPart | SetAttribute | ShowRun)


class _Plain:
    """What the applier shows of a plain-text body: how its last Text node and block grew."""

    __slots__ = ("size", "block_size", "ascii")
    markdown = False

    def __init__(self, size: int) -> None:
        self.size = size
        self.block_size = size
        self.ascii = False  # whether the last Text node is ASCII only (unknown at first: no)

    def grow(self, ref: items.ItemRef, piece: str, ops: list[Op]) -> None:
        if self.block_size + len(piece) > BLOCK_LIMIT:
            cut = piece.rfind("\n") + 1
            if cut:
                # Lines up to the newline stay in this block; the rest opens a new one.
                self._extend(ref, piece[:cut], ops)
                rest = piece[cut:]
                ops.append(AddBlock(ref, rest))
                self.size = self.block_size = len(rest)
                self.ascii = rest.isascii()
                return
        self._extend(ref, piece, ops)

    def _extend(self, ref: items.ItemRef, piece: str, ops: list[Op]) -> None:
        # appendData is cheap only on ASCII nodes (non-ASCII: ~0.7 ms at 100 and
        # 1.7 ms at 900 characters per call), a new Text node ~0.1 ms whatever came before.
        if self.ascii and piece.isascii() and self.size + len(piece) <= TEXT_NODE_LIMIT:
            ops.append(AppendText(ref, piece))
            self.size += len(piece)
        else:
            ops.append(AddText(ref, piece))
            self.size = len(piece)
            self.ascii = piece.isascii()
        self.block_size += len(piece)


class _Markdown:
    """A Markdown body: whether its view has closed (it then takes no more text)."""

    __slots__ = ("closed",)
    markdown = True

    def __init__(self, closed: bool) -> None:
        self.closed = closed


class ViewPlanner:
    """Plans the DOM operations that show a `LiveState`'s changes, item by item.

    It keeps what the applier shows of each item (the format of its body and
    how its text grew), so it must see every plan carried out; after a failed
    commit `rebuild` starts both afresh."""

    def __init__(self, *, labels: dict[str, str], text_format: str = "markdown",
                 reasoning_format: str = "text") -> None:
        if text_format not in FORMATS or reasoning_format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        self.labels = labels
        self.text_format = text_format
        self.reasoning_format = reasoning_format
        self._shown: dict[items.ItemRef, _Plain | _Markdown] = {}
        self._plain: set[items.ItemRef] = set()  # items whose Markdown failed: shown as text

    def forget(self) -> None:
        """A new conversation: nothing shown, every item may be Markdown again."""
        self._shown.clear()
        self._plain.clear()

    def mark_plain(self, ref: items.ItemRef) -> None:
        """Item `ref`'s Markdown failed: plain text from now on."""
        self._plain.add(ref)

    # -- plans ---------------------------------------------------------------
    def plan(self, state: LiveState, ch: Changes) -> list[Op]:
        """The operations that show `ch` (one batch's changes of `state`)."""
        ops: list[Op] = []
        if ch.reset:
            self._rebuild(state, ops)
        else:
            for ref in ch.created:
                self._add(state, ref, ops)
            for ref, parts in ch.appended.items():
                self._append(state, ref, parts[0] if len(parts) == 1 else "".join(parts), ops)
            for ref in ch.updated:
                self._refresh(state, ref, ops)
        for ref in ch.tool_calls:
            if ref not in ch.created:
                self._refresh(state, ref, ops)
        for ref in ch.ended:
            shown = self._shown.get(ref)
            if shown is not None:
                if isinstance(shown, _Markdown) and not shown.closed:
                    shown.closed = True
                    ops.append(CloseMarkdown(ref))
                ops.append(_state_of(ref, state.item(ref).ended))
        if ch.run_status:
            ops.append(run_view(state.run, self.labels))
        return ops

    def rebuild(self, state: LiveState) -> list[Op]:
        """Every item anew from `state` (after a snapshot, or a failed commit)."""
        ops: list[Op] = []
        self._rebuild(state, ops)
        return ops

    def _rebuild(self, state: LiveState, ops: list[Op]) -> None:
        self._shown.clear()
        ops.append(ClearTimeline())
        for ref in state.timeline:
            self._add(state, ref, ops)
        ops.append(run_view(state.run, self.labels))

    def _append(self, state: LiveState, ref: items.ItemRef, piece: str, ops: list[Op]) -> None:
        shown = self._shown.get(ref)
        if shown is None:
            self._add(state, ref, ops)
        elif isinstance(shown, _Plain):
            shown.grow(ref, piece, ops)
        elif shown.closed:
            # Text after the item's end (an anomaly the reducer keeps): a closed
            # Markdown view takes no more, so show it anew.
            self._rebody(state, ref, ops)
        else:
            ops.append(FeedMarkdown(ref, piece))

    def _refresh(self, state: LiveState, ref: items.ItemRef, ops: list[Op]) -> None:
        shown = self._shown.get(ref)
        if shown is None:
            self._add(state, ref, ops)
            return
        item: items.Item = state.item(ref)
        if isinstance(item, items.ToolCallItem):
            ops.append(SetPartText(ref, Part.NAME, self._tool_name(item)))
            if item.result is not None:
                ops.append(SetPartText(ref, Part.RESULT, _result_text(item.result)))
                ops.append(ShowPart(ref, Part.RESULT))
        elif isinstance(shown, _Markdown) and shown.closed and not item.ended:
            # Reopened (a resumed snapshot item): a view that takes text.
            self._rebody(state, ref, ops)
        ops.append(_state_of(ref, item.ended))

    def _rebody(self, state: LiveState, ref: items.ItemRef, ops: list[Op]) -> None:
        item = state.item(ref)
        if ref not in self._shown or not isinstance(item, items.MessageItem):
            return
        body = self._body(item)
        ops.append(ReplaceBody(ref, body))
        if body.markdown:
            ops.append(SetAttribute(ref, Part.ITEM, "data-format", "markdown"))

    # -- elements --------------------------------------------------------------
    def _add(self, state: LiveState, ref: items.ItemRef, ops: list[Op]) -> None:
        """The item's element, as `state` has it now (`_body` notes how it is shown)."""
        item = state.item(ref)
        labels = self.labels
        done = ("data-id", ref.id), ("data-state", "done" if item.ended else "streaming")
        if isinstance(item, items.ToolCallItem):
            result = item.result
            element = Element("div", "sp-item sp-tool", done, part=Part.ITEM, children=(
                Element("div", "sp-tool-name", text=self._tool_name(item), part=Part.NAME),
                Element("pre", "sp-tool-args", text=item.args, pre=True, part=Part.BODY),
                Element("pre", "sp-tool-result", pre=True, part=Part.RESULT, hidden=result is None,
                        text="" if result is None else _result_text(result))))
            self._shown[ref] = _Plain(len(item.args))
        else:
            body = self._body(item)
            fmt = (("data-format", "markdown"),) if body.markdown else ()
            if ref.kind == items.REASONING:
                element = Element("details", "sp-item sp-reasoning", fmt + done, open=True,
                                  part=Part.ITEM, children=(
                                      Element("summary", "sp-reasoning-label",
                                              text=labels["reasoning"]), body))
            else:
                role = labels[item.role] if item.role in ("user", "assistant") else item.role
                element = Element("div", "sp-item sp-message",
                                  (("data-role", item.role), *fmt, *done), part=Part.ITEM,
                                  children=(Element("div", "sp-role", text=role), body))
        ops.append(AddItem(ref, element))

    def _body(self, item: items.MessageItem) -> Element:
        """A body for a message's or a reasoning's text, in its format."""
        if item.ref.kind == items.REASONING:
            fmt = self.reasoning_format
        else:
            fmt = self.text_format if item.role == "assistant" else "text"
        if fmt == "markdown" and item.ref not in self._plain:
            self._shown[item.ref] = _Markdown(item.ended)
            return body_element("markdown", item.text, item.ended)
        self._shown[item.ref] = _Plain(len(item.text))
        return body_element("text", item.text, item.ended)

    def _tool_name(self, item: items.ToolCallItem) -> str:
        return f"{self.labels['toolCall']}: {item.name or '…'}"


def body_element(fmt: str, text: str, ended: bool) -> Element:
    """A message's or a reasoning's body in format `fmt`: a Markdown view fed
    `text` (closed if `ended`), or plain text."""
    if fmt == "markdown":
        return Element("div", "sp-text sp-markdown", text=text, markdown=True, ended=ended,
                       part=Part.BODY)
    return prose("sp-text", text, Part.BODY)


def prose(cls: str, text: str, part: Part | None = None) -> Element:
    """A plain-text body (messages, reasoning): direction from its own text."""
    return Element("div", cls, (("dir", "auto"),), text=text, pre=True, part=part)


def _state_of(ref: items.ItemRef, ended: bool) -> SetAttribute:
    return SetAttribute(ref, Part.ITEM, "data-state", "done" if ended else "streaming")


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def run_view(run: items.RunInfo, labels: dict[str, str]) -> ShowRun:
    return ShowRun(run.status is items.RunStatus.RUNNING, run.outcome,
                   status_text(run, labels))


def dom_events(state: LiveState, ch: Changes) -> list[tuple[str, dict[str, Any]]]:
    """The DOM events of a committed batch: message ends, then the run's end."""
    events: list[tuple[str, dict[str, Any]]] = []
    for ref in ch.ended:
        if ref.kind == items.MESSAGE and ref in state.all_items:
            item = state.item(ref)
            if isinstance(item, items.MessageItem) and item.ended:
                events.append(("streampace:message-end", {
                    "messageId": ref.id, "role": item.role, "text": item.text}))
    run = state.run
    if ch.run_status and run.status in (items.RunStatus.FINISHED, items.RunStatus.ERROR):
        outcome = run.outcome
        events.append(("streampace:run-end", {
            "status": outcome, "outcome": outcome, "runId": run.run_id,
            "threadId": run.thread_id, "error": run.error if outcome == "error" else None,
            "code": run.error_code}))
    return events


def queued_element(queued: dict[str, Any], labels: dict[str, str]) -> Element:
    """A question waiting for the current run (browser/outbox.py), with its Withdraw button."""
    waiting = queued["state"] == "waiting"
    note: tuple[Element | str, ...] = ()
    if waiting:
        note = (" ", Element("button", "sp-withdraw", (
            ("type", "button"), ("data-withdraw", queued["id"])), text=labels["withdraw"]))
    return Element("div", "sp-item sp-message sp-queued", (
        ("data-role", "user"), ("data-state", queued["state"]),
        ("data-queue-id", queued["id"])), children=(
        Element("div", "sp-role", text=labels["user"]),
        prose("sp-text", queued["prompt"]),
        Element("div", "sp-queued-note", text=labels["waiting" if waiting else "sending"],
                children=note)))
