"""DOM renderer: `LiveState` changes -> one DOM commit per delivered batch.

Only the nodes a batch changed are touched. Text deltas go to the item's Text
node with `appendData`, so a frame costs O(delta), not O(message), and a
selection in already shown text survives. Stream text is only ever inserted as
text (createTextNode / appendData / textContent), never parsed as HTML.
Assistant messages are Markdown by default (`text_format`; built by
`markdown_dom.MarkdownView` from sanitised element trees, O(delta + open block)
per frame); reasoning is plain text unless `reasoning_format="markdown"`; tool
arguments stay preformatted. Messages, reasoning, tool calls and run status are
separate elements with `sp-*` classes; the only styles set are the two plain
text needs to read right (pre-wrap, overflow-wrap, via CSSOM), so an embedding
page needs no stylesheet from us.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import js

from streampace.conversation.live_state import (
    MESSAGE,
    REASONING,
    TOOL_CALL,
    Changes,
    ItemRef,
    LiveState,
)

__all__ = ["DomRenderer"]

_TEXT_NODE_LIMIT = 4096  # characters per Text node before a new one is started
# Characters per block before the next line starts a new block element.  Blink
# re-collects the inline text of the whole block on every mutation (measured
# in Chromium 156 per frame: 0.1 ms at 200, 0.6 ms at 20 000 CJK characters in
# one block; 0.06 ms when split in blocks of 1 000), so a long message would
# cost O(message) per frame.  Splitting only after a newline keeps the
# rendering and the selected/copied text identical under pre-wrap.
_BLOCK_LIMIT = 1024
# "markdown-rebuild": the demo's "as delivered" baseline, which re-parses the
# whole message and rebuilds its DOM on every batch, as other renderers do.
FORMATS = ("markdown", "text", "markdown-rebuild")



class _Node:
    """DOM handles of one timeline item (cached: lookups cost ~10 us each).

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


class _MarkdownNode:
    """An assistant message body shown as Markdown (`markdown_dom.MarkdownView`)."""

    __slots__ = ("el", "box", "view", "name", "result")

    def __init__(self, el: Any, box: Any, view: Any) -> None:
        self.el = el
        self.box = box
        self.view = view
        self.name = None
        self.result = None

    def append(self, doc: Any, piece: str) -> None:
        self.view.feed(piece)

    def close(self) -> None:
        self.view.close()


class DomRenderer:
    """Renders one session view into `mount` (an element it owns the children of).

    `bridge` provides `emit(el, name, detailJson)` for the DOM CustomEvents
    `streampace:message-end` and `streampace:run-end`.
    """

    def __init__(self, mount: Any, bridge: Any, *, label: str = "Answer",
                 emit_events: bool = True, text_format: str = "markdown",
                 reasoning_format: str = "text") -> None:
        if text_format not in FORMATS or reasoning_format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        # Assistant messages (and reasoning, if asked) as Markdown; the parser
        # is imported only when some format needs it.
        self._md_parser: Any = None
        if text_format != "text" or reasoning_format != "text":
            from streampace.markdown.parser import default_parser

            self._md_parser = default_parser()
        self.text_format = text_format
        self.reasoning_format = reasoning_format
        self._doc = js.document
        self._perf = js.performance
        self._bridge = bridge
        self._emit_events = emit_events
        self.mount = mount
        self.root = self._el("div", "sp-view")
        self.status = self._el("div", "sp-status")
        self.status.setAttribute("role", "status")
        self.timeline = self._el("div", "sp-timeline")
        # Not a live region: a screen reader would read every frame's slice.
        # aria-busy marks it as in flux while a run streams.
        self.timeline.setAttribute("aria-label", label)
        self.timeline.setAttribute("aria-busy", "false")
        self.root.append(self.status, self.timeline)
        mount.append(self.root)
        self.state = LiveState()
        self._nodes: dict[ItemRef, _Node] = {}
        self.commits = 0
        self.apply_ms: deque[float] = deque(maxlen=4096)
        self.closed = False

    # -- public ------------------------------------------------------------
    def apply(self, events: list[dict]) -> None:
        """Fold `events` into the live state and commit the changes to the DOM."""
        t0 = self._perf.now()
        changes = self.state.apply(events)
        if changes:
            self._commit(changes)
            self.commits += 1
        self.apply_ms.append(self._perf.now() - t0)

    def reset(self) -> None:
        """Forget everything shown (session switch)."""
        self.state = LiveState()
        self._nodes.clear()
        self.timeline.replaceChildren()
        self.status.textContent = ""
        self.timeline.setAttribute("aria-busy", "false")

    def text_of(self, message_id: str) -> str:
        item = self.state.messages.get(message_id)
        return item.text if item is not None else ""

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.root.remove()
            self._nodes.clear()

    # -- commit ------------------------------------------------------------
    def _commit(self, ch: Changes) -> None:
        state = self.state
        if ch.reset:
            self._nodes.clear()
            self.timeline.replaceChildren()
            for ref in state.timeline:
                self._create(ref)
        else:
            for ref in ch.created:
                self._create(ref)
            for ref, parts in ch.appended.items():
                node = self._nodes.get(ref)
                if node is None:
                    self._create(ref)
                else:
                    # One FFI call for all of this item's slices in the batch.
                    node.append(self._doc, parts[0] if len(parts) == 1 else "".join(parts))
            for ref in ch.updated:
                self._refresh(ref)
        for ref in ch.tool_calls:
            if ref not in ch.created:
                self._refresh(ref)
        for ref in ch.ended:
            node = self._nodes.get(ref)
            if node is not None:
                if isinstance(node, _MarkdownNode):
                    node.close()
                node.el.setAttribute("data-state", "done")
            if ref.kind == MESSAGE and self._emit_events:
                item = state.messages.get(ref.id)
                if item is not None:
                    self._emit("streampace:message-end", {
                        "messageId": ref.id, "role": item.role, "text": item.text})
        if ch.run_status:
            self._run_status()

    def _run_status(self) -> None:
        run = self.state.run
        busy = run.status == "running"
        self.timeline.setAttribute("aria-busy", "true" if busy else "false")
        self.root.setAttribute("data-run", run.status)
        labels = {"idle": "", "running": "Generating…", "finished": "Done"}
        text = labels.get(run.status, "")
        if run.status == "error":
            text = f"Error: {run.error or 'run failed'}"
            if run.error_code:
                text += f" ({run.error_code})"
        self.status.textContent = text
        if run.status in ("finished", "error") and self._emit_events:
            self._emit("streampace:run-end", {
                "status": run.status, "runId": run.run_id, "threadId": run.thread_id,
                "error": run.error, "code": run.error_code})

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

    def _create(self, ref: ItemRef) -> None:
        item = self.state.item(ref)
        if ref.kind == TOOL_CALL:
            el = self._el("div", "sp-item sp-tool")
            name = self._el("div", "sp-tool-name")
            name.textContent = f"Tool call: {item.name or '…'}"
            args_el, args = self._text_block("pre", "sp-tool-args", item.args)
            result_el, _ = self._text_block("pre", "sp-tool-result", "")
            result_el.hidden = True
            el.append(name, args_el, result_el)
            node = _Node(el, args_el, args, len(item.args), name, result_el)
        elif ref.kind == REASONING:
            el = self._el("details", "sp-item sp-reasoning")
            el.open = True
            summary = self._el("summary", "sp-reasoning-label")
            summary.textContent = "Reasoning"
            if self.reasoning_format == "markdown":
                body, node = self._markdown_body(el, item.text, item.ended)
            else:
                body, text = self._text_block("div", "sp-text", item.text)
                node = _Node(el, body, text, len(item.text))
            el.append(summary, body)
        else:
            el = self._el("div", "sp-item sp-message")
            el.setAttribute("data-role", item.role)
            role = self._el("div", "sp-role")
            role.textContent = item.role
            if self.text_format != "text" and item.role == "assistant":
                body, node = self._markdown_body(el, item.text, item.ended,
                                                 self.text_format == "markdown-rebuild")
            else:
                body, text = self._text_block("div", "sp-text", item.text)
                node = _Node(el, body, text, len(item.text))
            el.append(role, body)
        el.setAttribute("data-id", ref.id)
        el.setAttribute("data-state", "done" if item.ended else "streaming")
        self._nodes[ref] = node
        self.timeline.append(el)
        if ref.kind == TOOL_CALL:
            self._refresh(ref)

    def _markdown_body(self, el: Any, text: str, ended: bool,
                       rebuild: bool = False) -> tuple[Any, _MarkdownNode]:
        from streampace.browser.markdown_dom import MarkdownView, RebuildView

        body = self._el("div", "sp-text sp-markdown")
        kind = RebuildView if rebuild else MarkdownView
        view = kind(self._doc, body, self._md_parser)
        if text:
            view.feed(text)
        if ended:
            view.close()
        el.setAttribute("data-format", "markdown")
        return body, _MarkdownNode(el, body, view)

    def markdown_stats(self) -> dict[str, int]:
        """DOM nodes created, replaced (rebuilt) and text writes by all Markdown bodies."""
        created = writes = replaced = 0
        for node in self._nodes.values():
            if isinstance(node, _MarkdownNode):
                created += node.view.created
                writes += node.view.text_ops
                replaced += node.view.replaced
        return {"created": created, "replaced": replaced, "textWrites": writes}

    def _refresh(self, ref: ItemRef) -> None:
        node = self._nodes.get(ref)
        if node is None:
            self._create(ref)
            return
        item = self.state.item(ref)
        if ref.kind == TOOL_CALL:
            node.name.textContent = f"Tool call: {item.name or '…'}"
            if item.result is not None:
                result = item.result
                if not isinstance(result, str):
                    result = json.dumps(result, ensure_ascii=False)
                node.result.textContent = result
                node.result.hidden = False
        node.el.setAttribute("data-state", "done" if item.ended else "streaming")
