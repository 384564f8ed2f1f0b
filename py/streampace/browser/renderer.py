"""DOM renderer: `LiveState` changes -> one DOM commit per delivered batch.

What to show is planned in `conversation/view_plan.py` (pure, tested in
CPython): which elements an item has, where a text delta goes. This module
carries the plan out — DOM calls only — and owns the element handles, the
Markdown views and the page's listeners. Only the nodes a batch changed are
touched: text deltas go to the item's Text node with `appendData` (or a new
Text node or block, as planned), so a frame costs O(delta), not O(message), and
a selection in already shown text survives. Stream text is only ever inserted
as text (createTextNode / appendData / textContent), never parsed as HTML;
attribute names are the plan's closed set.
Assistant messages are Markdown by default (`text_format`; built by
`markdown_dom.PageMarkdownView` from sanitised element trees, O(delta + open
block) per frame); reasoning is plain text unless `reasoning_format="markdown"`;
tool arguments stay preformatted. Messages, reasoning, tool calls and run status
are separate elements with `sp-*` classes; text bodies and Markdown blocks get
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
from typing import Any

from streampace.browser.dom_calls import DomCalls, bridge_calls, doc_calls
from streampace.browser.ffi import IN_BROWSER, create_proxy, js, js_bridge
from streampace.browser.labels import labels_for
from streampace.browser.scroll import ScrollFollower
from streampace.client.session_client import SESSION_LOST
from streampace.conversation import items
from streampace.conversation import view_plan as plan
from streampace.conversation.live_state import Changes, LiveState
from streampace.conversation.view_plan import FORMATS, Part, status_text

__all__ = ["FORMATS", "DomRenderer", "status_text"]

_RUN_ENDS = ("RUN_FINISHED", "RUN_ERROR")


class _Handles:
    """DOM handles of one timeline item (cached: lookups cost ~10 us each): its
    parts, the block and Text node its plain text grows in, its Markdown view."""

    __slots__ = ("parts", "block", "text", "view")

    def __init__(self) -> None:
        self.parts: dict[Part, Any] = {}
        self.block: Any = None
        self.text: Any = None
        self.view: Any = None

    def discard(self) -> None:
        """The item leaves the DOM: its Markdown view stops listening for copy clicks."""
        if self.view is not None:
            self.view.destroy()
            self.view = None


class DomRenderer:
    """Renders one session view into `mount` (an element it owns the children of).

    `bridge` provides `emit(el, name, detailJson)` for the DOM CustomEvents
    `streampace:message-end`, `streampace:run-end` and `streampace:error`.
    With `scroll`, a `ScrollFollower` keeps the newest text in sight.
    With `announce`, a live region says the answer as it becomes readable
    (`announce.LiveRegion`, on `timers`: the view's FrameHost). Markdown bodies
    seal their finished sections on `timers` (markdown_dom.MarkdownView). With
    `heading_base`, an answer's top heading level is that level
    (`reading.outline`); None keeps the source levels.
    """

    def __init__(self, mount: Any, bridge: Any, *, label: str = "Answer",
                 emit_events: bool = True, text_format: str = "markdown",
                 reasoning_format: str = "text", scroll: bool = False,
                 labels: dict[str, str] | None = None, announce: bool = False,
                 timers: Any = None, heading_base: int | None = None) -> None:
        self.labels = labels if labels is not None else labels_for()
        self.planner = plan.ViewPlanner(labels=self.labels, text_format=text_format,
                                        reasoning_format=reasoning_format)
        # Assistant messages (and reasoning, if asked) as Markdown; the parser
        # is imported only when some format needs it.
        self._md_parser: Any = None
        if text_format != "text" or reasoning_format != "text":
            from streampace.markdown.parser import default_parser

            self._md_parser = default_parser()
        self.text_format = text_format
        self.reasoning_format = reasoning_format
        self._doc = js.document
        self._clock = js.performance.now  # bound once (see host.py)
        self._bridge = bridge
        # Element building and text writes (dom_calls.py): through js_shim/bridge.js
        # in the page, plain DOM calls elsewhere (the CPython benches' stand-in).
        self._dom_calls: DomCalls = (bridge_calls(js_bridge(), self._doc) if IN_BROWSER
                                     else doc_calls(self._doc))
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
        self._nodes: dict[items.ItemRef, _Handles] = {}
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
        self._frames = timers  # Markdown views seal their finished sections on it
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
        t0 = self._clock()
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
        self.apply_ms.append(self._clock() - t0)

    def _tell_reader(self, changes: Changes) -> None:
        if self.reader is None:
            return
        try:
            self.reader.after_commit(changes)
        except Exception as exc:  # noqa: BLE001 - the view goes on, silent
            self.reader_failed(exc)

    def reader_failed(self, exc: BaseException) -> None:
        """The live region raised (in a frame or its own timeout): it is turned off."""
        js.console.error("streampace: the live region failed and is off: "
                         + "".join(traceback.format_exception(exc)))
        if self.reader is not None:
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
        self.planner.forget()
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
        return self._build(plan.queued_element(queued, self.labels), None)

    def _queue_clicked(self, event: Any) -> None:
        target = event.target
        if not hasattr(target, "closest"):
            return
        button = target.closest("[data-withdraw]")
        if button and self.on_withdraw is not None:
            self.on_withdraw(str(button.getAttribute("data-withdraw")))

    def show_connection(self, state: str, text: str) -> None:
        """Why the view is not connected (client/connection.py status_text), on
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
        self._doing = None
        self._carry_out(self.planner.plan(self.state, ch))

    def _carry_out(self, ops: list[plan.Op]) -> None:
        run = self._run
        for op in ops:
            self._doing = op.ref
            run[type(op)](self, op)
        self._doing = None

    def _rebuild(self) -> None:
        """Every item anew from the state (after a failed commit)."""
        self._doing = None
        self._carry_out(self.planner.rebuild(self.state))

    def _recover(self, exc: Exception, where: str) -> None:
        """One failure, reported once; the view is rebuilt from the state and goes on."""
        self.failures += 1
        failed, self._doing = self._doing, None
        if failed is not None:
            self.planner.mark_plain(failed)  # its Markdown failed: plain text from now on
        js.console.error("streampace: " + "".join(traceback.format_exception(exc)))
        self._emit("streampace:error", {"where": where, "code": f"{where}_failed",
                                        "message": f"{type(exc).__name__}: {exc}"})
        try:
            self._rebuild()
        except Exception as again:  # noqa: BLE001 - leave the view as it is, said once
            js.console.error("streampace: the view could not be rebuilt: " + repr(again))

    def _announce(self, ch: Changes) -> None:
        """The DOM events of a committed batch: message ends, then the run's end."""
        if self._emit_events:
            for name, detail in plan.dom_events(self.state, ch):
                self._emit(name, detail)

    def _emit(self, name: str, detail: dict) -> None:
        self._bridge.emit(self.mount, name, json.dumps(detail))

    # -- operations ----------------------------------------------------------
    def _clear_timeline(self, op: plan.ClearTimeline) -> None:
        self._discard_nodes()
        self.timeline.replaceChildren()

    def _add_item(self, op: plan.AddItem) -> None:
        handles = _Handles()
        el = self._build(op.element, handles)
        self._nodes[op.ref] = handles
        self.timeline.append(el)

    def _append_text(self, op: plan.AppendText) -> None:
        self._dom_calls.append_data(self._nodes[op.ref].text, op.text)

    def _add_text(self, op: plan.AddText) -> None:
        handles = self._nodes[op.ref]
        handles.text = self._doc.createTextNode(op.text)
        handles.block.append(handles.text)

    def _add_block(self, op: plan.AddBlock) -> None:
        handles = self._nodes[op.ref]
        block = handles.block = self._doc.createElement("div")
        block.setAttribute("dir", "auto")
        handles.parts[Part.BODY].append(block)
        handles.text = self._doc.createTextNode(op.text)
        block.append(handles.text)

    def _feed_markdown(self, op: plan.FeedMarkdown) -> None:
        self._nodes[op.ref].view.feed(op.text)

    def _close_markdown(self, op: plan.CloseMarkdown) -> None:
        self._nodes[op.ref].view.close()

    def _replace_body(self, op: plan.ReplaceBody) -> None:
        handles = self._nodes[op.ref]
        old = handles.parts[Part.BODY]
        handles.discard()
        old.replaceWith(self._build(op.element, handles))

    def _set_part_text(self, op: plan.SetPartText) -> None:
        self._nodes[op.ref].parts[op.part].textContent = op.text

    def _show_part(self, op: plan.ShowPart) -> None:
        self._nodes[op.ref].parts[op.part].hidden = False

    def _set_attribute(self, op: plan.SetAttribute) -> None:
        self._nodes[op.ref].parts[op.part].setAttribute(op.name, op.value)

    def _show_run(self, op: plan.ShowRun) -> None:
        self.timeline.setAttribute("aria-busy", "true" if op.busy else "false")
        self.root.setAttribute("data-run", op.outcome)
        self.status.textContent = op.text

    _run: dict[type, Any] = {
        plan.ClearTimeline: _clear_timeline, plan.AddItem: _add_item,
        plan.AppendText: _append_text, plan.AddText: _add_text, plan.AddBlock: _add_block,
        plan.FeedMarkdown: _feed_markdown, plan.CloseMarkdown: _close_markdown,
        plan.ReplaceBody: _replace_body, plan.SetPartText: _set_part_text,
        plan.ShowPart: _show_part, plan.SetAttribute: _set_attribute, plan.ShowRun: _show_run,
    }

    # -- elements ----------------------------------------------------------
    def lay_out_sample(self, sample: str) -> bool:
        """Lay `sample` out once as this view shows an assistant's text (its
        Markdown, or plain text), in the view's mount and removed in the same
        task (never painted, hidden from assistive technology, inert): the fonts
        an answer uses are then matched and loaded now, not in the frame that
        first shows a heading, code or an emoji (browser/warm.py). False:
        nothing done, the mount is not in the document (nothing is laid out)."""
        if not self.mount.isConnected:
            return False
        box = self._el("div", "sp-view")
        box.setAttribute("aria-hidden", "true")
        box.inert = True
        style = box.style
        style.position = "absolute"
        style.visibility = "hidden"
        style.pointerEvents = "none"
        # Built as an answer's message is (the plan's body for this view's format).
        handles = _Handles()
        box.append(self._build(plan.Element("div", "sp-item sp-message", children=(
            plan.body_element(self.text_format, sample, ended=True),)), handles))
        self.mount.append(box)
        try:
            _ = box.offsetHeight  # a forced layout: the fonts now, in this task
        finally:
            box.remove()
            handles.discard()  # its Markdown view's copy-click listener and frame request
        return True

    def _el(self, tag: str, cls: str) -> Any:
        el = self._doc.createElement(tag)
        el.className = cls
        return el

    def _build(self, spec: plan.Element, handles: _Handles | None) -> Any:
        """`spec` as DOM (our specs nest a few levels at most); its parts go to `handles`."""
        el = self._el(spec.tag, spec.cls)
        if spec.pre:
            # CSSOM, not a style attribute: a strict CSP (style-src 'self') blocks
            # the attribute but not this.
            el.style.whiteSpace = "pre-wrap"
            el.style.overflowWrap = "anywhere"
        if spec.open:
            el.open = True
        for name, value in spec.attrs:
            el.setAttribute(name, value)
        if spec.markdown:
            view = self._markdown_view(el)
            if spec.text:
                view.feed(spec.text)
            if spec.ended:
                view.close()
            if handles is not None:
                handles.view = view
        elif spec.text is not None and (spec.pre or spec.text):
            text = self._doc.createTextNode(spec.text)
            el.append(text)
            if handles is not None and spec.part is Part.BODY:
                handles.block, handles.text = el, text
        for child in spec.children:
            el.append(child if isinstance(child, str) else self._build(child, handles))
        if spec.hidden:
            el.hidden = True
        if handles is not None and spec.part is not None:
            handles.parts[spec.part] = el
        return el

    def _markdown_view(self, body: Any) -> Any:
        """The view that renders a Markdown body (a subclass may show it otherwise)."""
        from streampace.browser.markdown_dom import PageMarkdownView

        view = PageMarkdownView(self._doc, body, self._md_parser, self._dom_calls)
        view.frames = self._frames
        if self.heading_base is not None:
            from streampace.reading.outline import HeadingOutline

            view.outline = HeadingOutline(self.heading_base)
        return view

    def _discard_nodes(self) -> None:
        for handles in self._nodes.values():
            handles.discard()
        self._nodes.clear()

    def markdown_stats(self) -> dict[str, int]:
        """DOM nodes created, replaced (rebuilt) and text writes by all Markdown bodies."""
        created = writes = replaced = 0
        for handles in self._nodes.values():
            if handles.view is not None:
                created += handles.view.created
                writes += handles.view.text_ops
                replaced += handles.view.replaced
        return {"created": created, "replaced": replaced, "textWrites": writes}
