"""DOM renderer: `LiveState` changes -> one DOM commit per delivered batch.

Only the nodes a batch changed are touched. Text deltas go to the item's Text
node with `appendData`, so a frame costs O(delta), not O(message), and a
selection in already shown text survives. Stream text is only ever inserted as
text (createTextNode / appendData / textContent), never parsed as HTML.
Assistant messages are Markdown by default (`text_format`; built by
`markdown_dom.MarkdownView` from sanitised element trees, O(delta + open block)
per frame); reasoning is plain text unless `reasoning_format="markdown"`; tool
arguments stay preformatted. Messages, reasoning, tool calls and run status are
separate elements with `sp-*` classes; text bodies and Markdown blocks get
`dir="auto"` (Arabic and Hebrew read right to left). The only styles set are
what the view needs to work, via CSSOM: pre-wrap for plain text, wrapping of
long words and self-scrolling code blocks (the view never widens its
container), the sticky "Jump to latest" bar of `scroll.ScrollFollower`. The
look is `js_shim/streampace.css`.

A batch is applied whole: the live state takes every event, then the commit
writes the DOM. If the commit raises, the view is rebuilt from the state (the
failing item as plain text from then on), one `streampace:error` is emitted and
the batch counts as shown — it is never handed back for a retry, which would
repeat its DOM changes. Message-end and run-end events go out after the commit.
"""

from __future__ import annotations

import json
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any

import js
from pyodide.ffi import create_proxy

from streampace.browser.client import SESSION_LOST
from streampace.browser.labels import labels_for
from streampace.browser.scroll import ScrollFollower
from streampace.conversation import items
from streampace.conversation.live_state import Changes, LiveState

__all__ = ["FORMATS", "DomRenderer", "status_text"]

_TEXT_NODE_LIMIT = 4096  # characters per Text node before a new one is started
# Characters per block before the next line starts a new block element.  Blink
# re-collects the inline text of the whole block on every mutation (measured
# in Chromium 156 per frame: 0.1 ms at 200, 0.6 ms at 20 000 CJK characters in
# one block; 0.06 ms when split in blocks of 1 000), so a long message would
# cost O(message) per frame.  Splitting only after a newline keeps the
# rendering and the selected/copied text identical under pre-wrap.
_BLOCK_LIMIT = 1024
FORMATS = ("markdown", "text")
_RUN_ENDS = ("RUN_FINISHED", "RUN_ERROR")
# The run's outcome -> the label shown on the status line.
_STATUS = {"running": "generating", "finished": "done", "stopped": "stopped"}


def status_text(run: items.RunInfo, labels: dict[str, str]) -> str:
    """The run's status line in the view's words ("Generating…", "Done", "Error: …")."""
    outcome = run.outcome
    if outcome == "error":
        text = f"{labels['error']}: {run.error or 'run failed'}"
        return text + f" ({run.error_code})" if run.error_code else text
    label = _STATUS.get(outcome)
    return labels[label] if label is not None else ""


class _Node:
    """DOM handles of one timeline item shown as plain text (cached: lookups cost ~10 us each).

    `box` holds the item's text as a run of Text nodes; `text` is the last one.
    Blink's appendData copies the node's whole string (measured: 0.7 ms at 50k
    characters, 6 ms at 200k) and is slow on any non-ASCII node, so a delta is
    appended in place only to an ASCII node (below `_TEXT_NODE_LIMIT`) and otherwise becomes a new
    sibling Text node: a frame stays O(delta). Adjacent Text nodes render,
    select and copy as one text.
    Past `_BLOCK_LIMIT` characters the text after a newline continues in a new
    `div` inside `box` (`block`), which keeps Blink's per-mutation inline
    re-layout O(block) too.
    """

    __slots__ = ("el", "box", "block", "text", "size", "block_size", "ascii", "name",
                 "result")

    def __init__(self, el: Any, box: Any, text: Any, size: int, name: Any = None,
                 result: Any = None) -> None:
        self.el = el
        self.box = box
        self.block = box  # element the current Text node is in (box, then line blocks)
        self.text = text
        self.size = size
        self.block_size = size
        self.ascii = False  # whether `text` holds ASCII only (unknown at first: no)
        self.name = name
        self.result = result

    def append(self, doc: Any, piece: str) -> None:
        if self.block_size + len(piece) > _BLOCK_LIMIT:
            cut = piece.rfind("\n") + 1
            if cut:
                # Lines up to the newline stay in this block; the rest opens
                # a new one (see _BLOCK_LIMIT).
                self._append_text(doc, piece[:cut])
                self.block = doc.createElement("div")
                self.block.setAttribute("dir", "auto")
                self.box.append(self.block)
                rest = piece[cut:]
                self.text = doc.createTextNode(rest)
                self.block.append(self.text)
                self.size = self.block_size = len(rest)
                self.ascii = rest.isascii()
                return
        self._append_text(doc, piece)

    def _append_text(self, doc: Any, piece: str) -> None:
        # appendData is cheap only on ASCII nodes: on a node holding
        # non-ASCII text Blink spends ~0.7 ms at 100 and 1.7 ms at 900
        # characters per call (CJK/emoji, Chromium 156), while a new Text
        # node costs ~0.1 ms whatever came before.
        if self.ascii and piece.isascii() and self.size + len(piece) <= _TEXT_NODE_LIMIT:
            self.text.appendData(piece)
            self.size += len(piece)
        else:
            self.text = doc.createTextNode(piece)
            self.block.append(self.text)
            self.size = len(piece)
            self.ascii = piece.isascii()
        self.block_size += len(piece)


@dataclass(slots=True, eq=False)
class _MarkdownNode:
    """An assistant message body shown as Markdown (`markdown_dom.MarkdownView`)."""

    el: Any
    box: Any
    view: Any
    closed: bool
    name: None = None  # _Node has these for a tool call's name and result; a Markdown body none
    result: None = None

    def append(self, doc: Any, piece: str) -> None:
        self.view.feed(piece)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.view.close()

    def discard(self) -> None:
        """The body leaves the DOM: its view stops listening for copy clicks."""
        self.view.destroy()


# Markdown blocks that take their direction from their own text (dir="auto"), as
# GitHub marks them: the text blocks, and lists as a whole (a list item inherits its
# list's direction; an element with its own `dir` hides its text from an enclosing
# dir="auto", so list items and block quotes get none).
_DIR_AUTO = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "th", "td"})
_PAGE_VIEW: Any = None


def _page_view_class() -> Any:
    """`MarkdownView` whose elements are built for a page: blocks get `dir="auto"`
    (an Arabic or Hebrew paragraph reads right to left beside an English one) and
    code blocks and tables scroll inside themselves, their width never the
    container's minimum (`contain: inline-size`), so a long line cannot widen the page.  (Made on
    first use: the Markdown modules are imported only when a format needs them.)"""
    global _PAGE_VIEW
    if _PAGE_VIEW is None:
        from streampace.browser.markdown_dom import MarkdownView

        class PageMarkdownView(MarkdownView):
            def _build(self, node: Any) -> Any:
                mirror = super()._build(node)
                if not isinstance(node, str):
                    tag = node[0]
                    if tag in _DIR_AUTO:
                        mirror.el.setAttribute("dir", "auto")
                    elif tag == "pre":
                        _scrolls_inside(mirror.el.style)
                    if tag == "table":
                        # A block box around the table's grid scrolls it; its words
                        # stay whole (the view's overflow-wrap would split them).
                        style = mirror.el.style
                        _scrolls_inside(style)
                        style.display = "block"
                        style.overflowWrap = "normal"
                return mirror

        _PAGE_VIEW = PageMarkdownView
    return _PAGE_VIEW


def _scrolls_inside(style: Any) -> None:
    """Wide content scrolls inside the box; its width is never the container's minimum."""
    style.contain = "inline-size"
    style.overflowX = "auto"


class DomRenderer:
    """Renders one session view into `mount` (an element it owns the children of).

    `bridge` provides `emit(el, name, detailJson)` for the DOM CustomEvents
    `streampace:message-end`, `streampace:run-end` and `streampace:error`.
    With `scroll`, a `ScrollFollower` keeps the newest text in sight.
    With `announce`, a live region says the answer as it becomes readable
    (`announce.LiveRegion`, on `timers`: the view's FrameHost). With
    `heading_base`, an answer's top heading level is that level
    (`reading.outline`); None keeps the source levels.
    """

    def __init__(self, mount: Any, bridge: Any, *, label: str = "Answer",
                 emit_events: bool = True, text_format: str = "markdown",
                 reasoning_format: str = "text", scroll: bool = False,
                 labels: dict[str, str] | None = None, announce: bool = False,
                 timers: Any = None, heading_base: int | None = None) -> None:
        if text_format not in FORMATS or reasoning_format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        # Assistant messages (and reasoning, if asked) as Markdown; the parser
        # is imported only when some format needs it.
        self._md_parser: Any = None
        if text_format != "text" or reasoning_format != "text":
            from streampace.markdown.parser import default_parser

            self._md_parser = default_parser()
        self.text_format = text_format
        self.labels = labels if labels is not None else labels_for()
        self.reasoning_format = reasoning_format
        self._doc = js.document
        self._perf = js.performance
        self._bridge = bridge
        self._emit_events = emit_events
        self.mount = mount
        self.root = self._el("div", "sp-view")
        # Long words and URLs wrap rather than widen the page (inherited; the
        # stylesheet may set another value per element).  CSSOM, as below.
        self.root.style.overflowWrap = "anywhere"
        self.status = self._el("div", "sp-status")
        if not announce:
            # With the live region the run's start and end are said there, in
            # order after the text, instead of from a second region.
            self.status.setAttribute("role", "status")
        self.timeline = self._el("div", "sp-timeline")
        # Not a live region: a screen reader would read every frame's slice.
        # aria-busy marks it as in flux while a run streams.
        self.timeline.setAttribute("aria-label", label)
        self.timeline.setAttribute("aria-busy", "false")
        self.root.append(self.status, self.timeline)
        mount.append(self.root)
        self.follower = ScrollFollower(self.root) if scroll else None
        self.state = LiveState()
        self._nodes: dict[items.ItemRef, _Node | _MarkdownNode] = {}
        self._plain: set[items.ItemRef] = set()  # items whose Markdown failed: shown as text
        self._doing: items.ItemRef | None = None  # the item the commit is writing
        self.commits = 0
        self.failures = 0  # commits that raised (each reported once, then rebuilt)
        self.apply_ms: deque[float] = deque(maxlen=4096)
        self.closed = False
        self._connection_line: Any = None  # made on first use (show_connection)
        # Conversations the server lost, kept as they were shown (archive()).
        self._earlier: Any = None
        # Questions waiting for the current run to end (show_queue), and the one
        # click listener of its Withdraw buttons.
        self._queue: Any = None
        self._queue_click: Any = None
        self.on_withdraw: Any = None
        self.heading_base = heading_base
        self.reader: Any = None
        if announce:
            from streampace.browser.announce import LiveRegion

            self.reader = LiveRegion(self, timers)

    # -- public ------------------------------------------------------------
    def apply(self, events: list[dict]) -> None:
        """Fold `events` into the live state and commit the changes to the DOM, whole.
        Where the stream marks its session as lost, what is shown is kept
        (`archive`) and the events after it start a new view below."""
        start = 0
        last = len(events) - 1
        for at, event in enumerate(events):
            kind = event.get("type")
            if kind == "CUSTOM" and event.get("name") == SESSION_LOST:
                if at > start:
                    self._apply(events[start:at])
                value = event.get("value")
                self.archive(isinstance(value, dict) and bool(value.get("runCut")))
                start = at + 1
            elif kind in _RUN_ENDS and at < last:
                # A run's end and the next run in one frame (a queued question
                # goes out as the run ends): each run's end is told.
                self._apply(events[start:at + 1])
                start = at + 1
        if start <= last:
            self._apply(events[start:] if start else events)

    def _apply(self, events: list[dict]) -> None:
        t0 = self._perf.now()
        try:
            changes = self.state.apply(events)
        except Exception as exc:  # noqa: BLE001 - the reducer never should; the view goes on
            self._recover(exc, "state")
            changes = None
        if changes:
            try:
                self._commit(changes)
            except Exception as exc:  # noqa: BLE001 - any failure: rebuilt from the state
                self._recover(exc, "render")
            self.commits += 1
            self._tell_reader(changes)
            self._announce(changes)
        self.apply_ms.append(self._perf.now() - t0)

    def _tell_reader(self, changes: Changes) -> None:
        if self.reader is None:
            return
        try:
            self.reader.after_commit(changes)
        except Exception as exc:  # noqa: BLE001 - the view goes on, silent
            js.console.error("streampace: the live region failed and is off: "
                             + "".join(traceback.format_exception(exc)))
            self.reader.close()
            self.reader = None

    def reset(self) -> None:
        """Forget everything shown (session switch)."""
        self._forget_state()
        self.timeline.replaceChildren()
        if self._earlier is not None:
            self._earlier.remove()
            self._earlier = None
        self.show_queue([])
        if self.follower is not None:
            self.follower.reset()

    def _forget_state(self) -> None:
        if self.reader is not None:
            self.reader.clear()  # the items it was saying are gone (kept ones: said)
        self.state = LiveState()
        self._discard_nodes()
        self._plain.clear()
        self.status.textContent = ""
        self.timeline.setAttribute("aria-busy", "false")
        self.root.removeAttribute("data-run")

    def archive(self, run_cut: bool) -> None:
        """The server lost this session: keep everything shown, as it is, above
        the timeline (a cut run marked by one line), and start afresh below."""
        part = self._el("div", "sp-archived")
        timeline = self.timeline
        # (JS null is JsNull here, not None: ask the DOM instead.)
        while timeline.hasChildNodes():
            part.append(timeline.firstChild)
        if run_cut:
            # The item being written when the run was cut (the synthetic
            # RUN_ERROR has closed it in the state): marked, and the line below.
            cut = part.lastElementChild
            if cut:
                cut.setAttribute("data-state", "lost")
            line = self._el("p", "sp-lost")
            line.setAttribute("role", "note")
            line.textContent = self.labels["lost"]
            part.append(line)
        if part.hasChildNodes():
            if self._earlier is None:
                self._earlier = self._el("div", "sp-earlier")
                timeline.before(self._earlier)
            self._earlier.append(part)
        self._forget_state()

    def show_queue(self, queued: list[dict[str, Any]]) -> None:
        """The person's questions that wait for the current run (browser/outbox.py),
        below the conversation: a waiting one with its Withdraw button."""
        box = self._queue
        if box is None:
            if not queued:
                return
            box = self._queue = self._el("div", "sp-queue")
            self._queue_click = create_proxy(self._queue_clicked)
            box.addEventListener("click", self._queue_click)
            self.timeline.after(box)
        box.replaceChildren(*[self._queued(q) for q in queued])
        box.hidden = not queued

    def _queued(self, queued: dict[str, Any]) -> Any:
        el = self._el("div", "sp-item sp-message sp-queued")
        el.setAttribute("data-role", "user")
        el.setAttribute("data-state", queued["state"])
        el.setAttribute("data-queue-id", queued["id"])
        role = self._el("div", "sp-role")
        role.textContent = self.labels["user"]
        body, _ = self._prose("sp-text", queued["prompt"])
        note = self._el("div", "sp-queued-note")
        waiting = queued["state"] == "waiting"
        note.textContent = self.labels["waiting" if waiting else "sending"]
        if waiting:
            button = self._el("button", "sp-withdraw")
            button.type = "button"
            button.textContent = self.labels["withdraw"]
            button.setAttribute("data-withdraw", queued["id"])
            note.append(" ", button)
        el.append(role, body, note)
        return el

    def _queue_clicked(self, event: Any) -> None:
        target = event.target
        if not hasattr(target, "closest"):
            return
        button = target.closest("[data-withdraw]")
        if button and self.on_withdraw is not None:
            self.on_withdraw(str(button.getAttribute("data-withdraw")))

    def show_connection(self, state: str, text: str) -> None:
        """Why the view is not connected (session/connection.py status_text), on
        a status line of its own above the run's, hidden while ``text`` is empty;
        ``state`` goes to the view's ``data-connection`` for page styles."""
        self.root.setAttribute("data-connection", state)
        line = self._connection_line
        if line is None:
            if not text:
                return
            line = self._connection_line = self._el("div", "sp-connection")
            line.setAttribute("role", "status")
            self.root.prepend(line)
        line.textContent = text
        line.hidden = not text

    def text_of(self, message_id: str) -> str:
        """The text of the message `message_id` names now (its latest use)."""
        item = self.state.messages.get(message_id)
        return item.text if item is not None else ""

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.follower is not None:
                self.follower.close()
            if self.reader is not None:
                self.reader.close()
            self.root.remove()
            self._discard_nodes()
            if self._queue_click is not None:
                self._queue.removeEventListener("click", self._queue_click)
                self._queue_click.destroy()
                self._queue_click = None

    # -- commit ------------------------------------------------------------
    def _commit(self, ch: Changes) -> None:
        state = self.state
        if ch.reset:
            self._rebuild()
        else:
            for ref in ch.created:
                self._create(ref)
            for ref, parts in ch.appended.items():
                self._doing = ref
                node = self._nodes.get(ref)
                if node is None:
                    self._create(ref)
                elif isinstance(node, _MarkdownNode) and node.closed:
                    # Text after the item's end (an anomaly the reducer keeps):
                    # a closed Markdown view takes no more, so show it anew.
                    self._rebody(ref)
                else:
                    # One FFI call for all of this item's slices in the batch.
                    node.append(self._doc, parts[0] if len(parts) == 1 else "".join(parts))
            for ref in ch.updated:
                self._refresh(ref)
        for ref in ch.tool_calls:
            if ref not in ch.created:
                self._refresh(ref)
        for ref in ch.ended:
            self._doing = ref
            node = self._nodes.get(ref)
            if node is not None:
                if isinstance(node, _MarkdownNode):
                    node.close()
                node.el.setAttribute("data-state", "done" if state.item(ref).ended
                                     else "streaming")
        self._doing = None
        if ch.run_status:
            self._run_status()

    def _rebuild(self) -> None:
        """Every item anew from the state (after a snapshot, or a failed commit)."""
        self._discard_nodes()
        self.timeline.replaceChildren()
        for ref in self.state.timeline:
            self._create(ref)
        self._doing = None
        self._run_status()

    def _recover(self, exc: Exception, where: str) -> None:
        """One failure, reported once; the view is rebuilt from the state and goes on."""
        self.failures += 1
        failed, self._doing = self._doing, None
        if failed is not None:
            self._plain.add(failed)  # its Markdown failed: plain text from now on
        js.console.error("streampace: " + "".join(traceback.format_exception(exc)))
        self._emit("streampace:error", {"where": where, "code": f"{where}_failed",
                                        "message": f"{type(exc).__name__}: {exc}"})
        try:
            self._rebuild()
        except Exception as again:  # noqa: BLE001 - leave the view as it is, said once
            js.console.error("streampace: the view could not be rebuilt: " + repr(again))

    def _announce(self, ch: Changes) -> None:
        """The DOM events of a committed batch: message ends, then the run's end."""
        if not self._emit_events:
            return
        state = self.state
        for ref in ch.ended:
            if ref.kind == items.MESSAGE and ref in state.all_items:
                item = state.item(ref)
                if isinstance(item, items.MessageItem) and item.ended:
                    self._emit("streampace:message-end", {
                        "messageId": ref.id, "role": item.role, "text": item.text})
        run = state.run
        if ch.run_status and run.status in (items.RunStatus.FINISHED, items.RunStatus.ERROR):
            outcome = run.outcome
            self._emit("streampace:run-end", {
                "status": outcome, "outcome": outcome, "runId": run.run_id,
                "threadId": run.thread_id,
                "error": run.error if outcome == "error" else None,
                "code": run.error_code})

    def _run_status(self) -> None:
        run = self.state.run
        running = run.status is items.RunStatus.RUNNING
        self.timeline.setAttribute("aria-busy", "true" if running else "false")
        self.root.setAttribute("data-run", run.outcome)
        self.status.textContent = status_text(run, self.labels)

    def _emit(self, name: str, detail: dict) -> None:
        self._bridge.emit(self.mount, name, json.dumps(detail))

    # -- elements ----------------------------------------------------------
    def _el(self, tag: str, cls: str) -> Any:
        el = self._doc.createElement(tag)
        el.className = cls
        return el

    def _text_block(self, tag: str, cls: str, text: str) -> tuple[Any, Any]:
        el = self._el(tag, cls)
        # CSSOM, not a style attribute: a strict CSP (style-src 'self') blocks
        # the attribute but not this.
        el.style.whiteSpace = "pre-wrap"
        el.style.overflowWrap = "anywhere"
        node = self._doc.createTextNode(text)
        el.append(node)
        return el, node

    def _prose(self, cls: str, text: str) -> tuple[Any, _Node]:
        """A plain-text body (messages, reasoning): direction from its own text."""
        body, node = self._text_block("div", cls, text)
        body.setAttribute("dir", "auto")
        return body, _Node(body, body, node, len(text))

    def _create(self, ref: items.ItemRef) -> None:
        self._doing = ref
        item = self.state.item(ref)
        node: _Node | _MarkdownNode
        if isinstance(item, items.ToolCallItem):
            el = self._el("div", "sp-item sp-tool")
            name = self._el("div", "sp-tool-name")
            name.textContent = f"{self.labels['toolCall']}: {item.name or '…'}"
            args_el, args = self._text_block("pre", "sp-tool-args", item.args)
            result_el, _ = self._text_block("pre", "sp-tool-result", "")
            result_el.hidden = True
            el.append(name, args_el, result_el)
            node = _Node(el, args_el, args, len(item.args), name, result_el)
        elif ref.kind == items.REASONING:
            el = self._el("details", "sp-item sp-reasoning")
            el.open = True
            summary = self._el("summary", "sp-reasoning-label")
            summary.textContent = self.labels["reasoning"]
            body, node = self._body(el, item)
            el.append(summary, body)
        else:
            el = self._el("div", "sp-item sp-message")
            el.setAttribute("data-role", item.role)
            role = self._el("div", "sp-role")
            role.textContent = (self.labels[item.role] if item.role in ("user", "assistant")
                                else item.role)
            body, node = self._body(el, item)
            el.append(role, body)
        el.setAttribute("data-id", ref.id)
        el.setAttribute("data-state", "done" if item.ended else "streaming")
        node.el = el
        self._nodes[ref] = node
        self.timeline.append(el)
        if ref.kind == items.TOOL_CALL:
            self._refresh(ref)

    def _body(self, el: Any, item: items.MessageItem) -> tuple[Any, _Node | _MarkdownNode]:
        """A body for a message's or a reasoning's text, in its format."""
        if item.ref.kind == items.REASONING:
            fmt = self.reasoning_format
        else:
            fmt = self.text_format if item.role == "assistant" else "text"
        if fmt == "markdown" and item.ref not in self._plain:
            return self._markdown_body(el, item.text, item.ended)
        return self._prose("sp-text", item.text)

    def _markdown_view(self, body: Any) -> Any:
        """The view that renders a Markdown body (a subclass may show it otherwise)."""
        view = _page_view_class()(self._doc, body, self._md_parser)
        if self.heading_base is not None:
            from streampace.reading.outline import HeadingOutline

            view.outline = HeadingOutline(self.heading_base)
        return view

    def _markdown_body(self, el: Any, text: str, ended: bool) -> tuple[Any, _MarkdownNode]:
        body = self._el("div", "sp-text sp-markdown")
        view = self._markdown_view(body)
        if text:
            view.feed(text)
        if ended:
            view.close()
        el.setAttribute("data-format", "markdown")
        return body, _MarkdownNode(el, body, view, ended)

    def _rebody(self, ref: items.ItemRef) -> None:
        """Show an item's text anew in a fresh body (Markdown views are one-way)."""
        node = self._nodes.get(ref)
        item = self.state.item(ref)
        if node is None or not isinstance(item, items.MessageItem):
            return
        body, fresh = self._body(node.el, item)
        if isinstance(node, _MarkdownNode):
            node.discard()
        node.box.replaceWith(body)
        fresh.el = node.el
        self._nodes[ref] = fresh

    def _discard_nodes(self) -> None:
        for node in self._nodes.values():
            if isinstance(node, _MarkdownNode):
                node.discard()
        self._nodes.clear()

    def markdown_stats(self) -> dict[str, int]:
        """DOM nodes created, replaced (rebuilt) and text writes by all Markdown bodies."""
        created = writes = replaced = 0
        for node in self._nodes.values():
            if isinstance(node, _MarkdownNode):
                created += node.view.created
                writes += node.view.text_ops
                replaced += node.view.replaced
        return {"created": created, "replaced": replaced, "textWrites": writes}

    def _refresh(self, ref: items.ItemRef) -> None:
        self._doing = ref
        node = self._nodes.get(ref)
        if node is None:
            self._create(ref)
            return
        item: items.Item = self.state.item(ref)
        if isinstance(item, items.ToolCallItem):
            assert isinstance(node, _Node)
            node.name.textContent = f"{self.labels['toolCall']}: {item.name or '…'}"
            if item.result is not None:
                result = item.result
                if not isinstance(result, str):
                    result = json.dumps(result, ensure_ascii=False)
                node.result.textContent = result
                node.result.hidden = False
        elif isinstance(node, _MarkdownNode) and node.closed and not item.ended:
            self._rebody(ref)  # reopened (a resumed snapshot item): a view that takes text
        node.el.setAttribute("data-state", "done" if item.ended else "streaming")
