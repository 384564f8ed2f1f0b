"""The live region of a view: applies `reading.Announcer` to the page.

A visually hidden polite live region per view (`div.sp-announce`). After every
committed frame the renderer hands over what changed; this module turns the
items' Markdown trees into spoken text (`reading.spoken`), lets the announcer
decide what is due and appends each announcement to the region as a text node
in a paragraph of its own (additions are what a polite region reads; the
oldest paragraphs go, so the region stays small). Timers come from the view's
host: a pause or the gap between announcements ends without a frame.

The items that grew are noted in the frame and read out of it, in a timeout
`FEED_DELAY_MS` later, together with whatever grew in the frames between: the
announcer says nothing sooner than whole sentences at least 400 ms apart, so
the delay is not heard, and the frame's callback no longer pays for turning
the open block into spoken text on every frame (about a tenth of the page's
Python per frame; see docs/browser.md). A snapshot or a run's start or end is
read at once, after what was noted before it, so the order of what is said
stays the order it was shown in.

Only assistant messages are said. Reasoning is said only once the reader has
opened it (clicked its summary so that it is open), from then on. Text a view
shows from a snapshot (history, a switch) is not said again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streampace.browser.ffi import create_proxy, js
from streampace.conversation import items
from streampace.reading.announcer import Announcer
from streampace.reading.outline import base_below
from streampace.reading.spoken import spoken_block

if TYPE_CHECKING:
    from streampace.browser.renderer import DomRenderer
    from streampace.conversation.live_state import Changes

__all__ = ["LiveRegion", "heading_base"]

_KEPT = 3  # announcements left in the region (older ones are removed, unsaid)
# A block still growing that is said as a summary only once it is final.
_SUMMARISED = frozenset({"pre", "table"})
_HEADING_TAGS = ("H1", "H2", "H3", "H4", "H5", "H6")
_PRECEDING = 2   # Node.DOCUMENT_POSITION_PRECEDING
_CONTAINS = 8    # Node.DOCUMENT_POSITION_CONTAINS
_FOLLOWING = 4   # Node.DOCUMENT_POSITION_FOLLOWING
FEED_DELAY_MS = 100.0  # after a frame, the grown items are read (module doc)


def _hide(style: Any) -> None:
    """Out of sight, not out of the accessibility tree (unlike display: none)."""
    style.position = "absolute"
    style.width = "1px"
    style.height = "1px"
    style.margin = "-1px"
    style.padding = "0"
    style.overflow = "hidden"
    style.clipPath = "inset(50%)"
    style.whiteSpace = "nowrap"
    style.border = "0"


def _level_of(el: Any) -> int | None:
    tag = str(el.tagName).upper()
    if tag in _HEADING_TAGS:
        return int(tag[1])
    level = el.getAttribute("aria-level")
    try:
        return int(level) if level is not None else 2  # role=heading's default level
    except ValueError:
        return 2


def host_heading_level(mount: Any) -> int | None:
    """The level of the nearest heading before `mount` in the page, outside any
    streampace view (None: no heading before it)."""
    found: int | None = None
    headings = js.document.querySelectorAll("h1,h2,h3,h4,h5,h6,[role=heading]")
    for i in range(headings.length):
        el = headings.item(i)
        position = int(mount.compareDocumentPosition(el))
        if position & _FOLLOWING:
            break  # document order: every later one follows too
        if position & _PRECEDING and not position & _CONTAINS and not el.closest(".sp-view"):
            found = _level_of(el)
    return found


def heading_base(option: Any, mount: Any) -> int | None:
    """The answer's top heading level from the `data-heading-base` option: "auto"
    (or nothing) is one below the nearest heading before the view, "off" keeps
    the source levels (None), 1-6 is that level."""
    text = "" if option is None else str(option).strip().lower()
    if text in ("", "auto", "none", "undefined"):
        return base_below(host_heading_level(mount))
    if text == "off":
        return None
    if text.isdigit() and 1 <= int(text) <= 6:
        return int(text)
    raise ValueError(f"data-heading-base: expected 1 to 6, 'auto' or 'off', got {option!r}")


class LiveRegion:
    """One view's announcements: the region element, the announcer, its timer."""

    def __init__(self, renderer: DomRenderer, timers: Any) -> None:
        self._renderer = renderer
        self._timers = timers
        self._doc = js.document
        self.announcer = Announcer(timers.now)
        self.region = self._doc.createElement("div")
        self.region.className = "sp-announce"
        self.region.setAttribute("aria-live", "polite")
        self.region.setAttribute("aria-atomic", "false")
        self.region.setAttribute("aria-relevant", "additions")
        _hide(self.region.style)
        renderer.root.append(self.region)
        self._timer: Any = None
        self._timer_at: float | None = None
        # Items that grew since they were last read, in the order they did
        # (a dict as an ordered set), and the timeout that reads them.
        self._grown: dict[items.ItemRef, None] = {}
        self._feed_timer: Any = None
        self._finals: dict[items.ItemRef, int] = {}  # final blocks handed over per item
        self._plain_cut: dict[items.ItemRef, int] = {}  # plain text handed over as final
        self._touched: set[str] = set()  # reasoning ids whose summary the reader clicked
        self._hearing: set[items.ItemRef] = set()  # reasoning being said
        # One listener for clicks and (captured: it does not bubble) `toggle`.
        self._listener = create_proxy(self._on_event)
        renderer.root.addEventListener("click", self._listener)
        renderer.root.addEventListener("toggle", self._listener, True)

    # -- from the renderer --------------------------------------------------
    def after_commit(self, ch: Changes) -> None:
        if ch.reset:
            self._drop_grown()
            self._history()
        else:
            grown = self._grown
            for ref in (*ch.created, *ch.appended, *ch.ended):
                grown[ref] = None
        if ch.reset or ch.run_status:
            self._read_grown()
            if ch.run_status:
                self._run(self._renderer.state.run)
            self._flush()
        elif self._grown and self._feed_timer is None:
            self._feed_timer = self._timers.request_timeout(self._on_feed_timer, FEED_DELAY_MS)

    def _on_feed_timer(self) -> None:
        self._feed_timer = None
        try:
            self._read_grown()
            self._flush()
        except Exception as exc:  # noqa: BLE001 - as in the frame: the view goes on, silent
            self._renderer.reader_failed(exc)

    def _read_grown(self) -> None:
        """Feed the announcer what the items noted since the last read show now."""
        self._cancel_feed()
        grown, self._grown = self._grown, {}
        shown = self._renderer.state.all_items
        for ref in grown:
            if ref in shown:  # the state may have been replaced since (a session lost)
                self._feed(ref)

    def _drop_grown(self) -> None:
        self._grown.clear()
        self._cancel_feed()

    def _cancel_feed(self) -> None:
        if self._feed_timer is not None:
            self._timers.cancel_timeout(self._feed_timer)
            self._feed_timer = None

    def clear(self) -> None:
        """The view was emptied (session switch)."""
        self._drop_grown()
        self.announcer.clear()
        self._finals.clear()
        self._plain_cut.clear()
        self._hearing.clear()

    def close(self) -> None:
        self._cancel()
        self._drop_grown()
        if self._listener is not None:
            root = self._renderer.root
            root.removeEventListener("click", self._listener)
            root.removeEventListener("toggle", self._listener, True)
            self._listener.destroy()
            self._listener = None

    # -- items --------------------------------------------------------------
    def _history(self) -> None:
        """After a snapshot: everything shown counts as said."""
        self.clear()
        state = self._renderer.state
        for ref in state.timeline:
            if self._said_of(ref):
                self.announcer.skip(ref, self._spoken(ref)[1])
        run = state.run
        if run.status not in (items.RunStatus.RUNNING, items.RunStatus.IDLE):
            self.announcer.run_ended("", quiet=True)

    def _said_of(self, ref: items.ItemRef) -> bool:
        """Whether item `ref` is one the region says."""
        if ref.kind == items.TOOL_CALL:
            return False
        item = self._renderer.state.item(ref)
        if ref.kind == items.REASONING:
            return self._hears_reasoning(ref)
        return isinstance(item, items.MessageItem) and item.role == "assistant"

    def _hears_reasoning(self, ref: items.ItemRef) -> bool:
        return ref in self._hearing

    def _toggled(self, item_id: str, is_open: bool) -> None:
        """The reader opened or closed reasoning `item_id`: said from now on, or no more."""
        for ref in self._renderer._nodes:
            if ref.kind != items.REASONING or ref.id != item_id:
                continue
            if is_open and ref not in self._hearing:
                self._hearing.add(ref)
                # What it shows already is there to read, not to be said.
                self.announcer.skip(ref, self._spoken(ref)[1])
            elif not is_open and ref in self._hearing:
                self._hearing.discard(ref)
                self.announcer.forget(ref)

    def _feed(self, ref: items.ItemRef) -> None:
        if not self._said_of(ref):
            return
        item = self._renderer.state.item(ref)
        finals, open_text = self._spoken(ref)
        ended = bool(item.ended)
        self.announcer.update(ref, finals, open_text, ended)
        if ended:
            self._finals.pop(ref, None)
            self._plain_cut.pop(ref, None)

    def _spoken(self, ref: items.ItemRef) -> tuple[list[str], str]:
        """What item `ref` shows that is new since the last call: the spoken text
        of its blocks that became final, and of its open rest."""
        node = self._renderer._nodes.get(ref)
        view = getattr(node, "view", None)
        if view is not None:
            stream = view.stream
            done = self._finals.get(ref, 0)
            finals = [spoken_block(block) for block in stream.blocks[done:]]
            self._finals[ref] = len(stream.blocks)
            tail = list(stream.tail_nodes)
            if tail and not isinstance(tail[-1], str) and (
                    tail[-1][0] in _SUMMARISED or tail[-1][1] == (("class", "sp-math-block"),)):
                tail.pop()  # still growing: its summary is said once it is final
            return finals, "\n".join(spoken_block(n) for n in tail)
        item = self._renderer.state.item(ref)
        text = item.text if isinstance(item, items.MessageItem) else ""
        cut = self._plain_cut.get(ref, 0)
        rest = text[cut:]
        split = rest.rfind("\n\n")
        finals = []
        if split >= 0:
            finals = [_plain(p) for p in rest[:split].split("\n\n") if p.strip()]
            self._plain_cut[ref] = cut + split + 2
            rest = rest[split + 2:]
        return finals, _plain(rest)

    # -- the run ------------------------------------------------------------
    def _run(self, run: items.RunInfo) -> None:
        from streampace.browser.renderer import status_text

        if run.status is items.RunStatus.RUNNING:
            self.announcer.run_started(status_text(run, self._renderer.labels))
        elif run.status is not items.RunStatus.IDLE:
            self.announcer.run_ended(status_text(run, self._renderer.labels))

    # -- the region ---------------------------------------------------------
    def _flush(self) -> None:
        for text in self.announcer.take():
            self._say(text)
        deadline = self.announcer.deadline()
        if deadline is None:
            self._cancel()
        elif self._timer_at is None or deadline < self._timer_at:
            self._cancel()
            self._timer_at = deadline
            self._timer = self._timers.request_timeout(
                self._on_timer, max(0.0, deadline - self._timers.now()))

    def _say(self, text: str) -> None:
        para = self._doc.createElement("p")
        para.append(self._doc.createTextNode(text))
        region = self.region
        region.append(para)
        while region.childElementCount > _KEPT:
            region.firstElementChild.remove()

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = None
        self._flush()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timers.cancel_timeout(self._timer)
        self._timer = None
        self._timer_at = None

    def _on_event(self, event: Any) -> None:
        """A click on a reasoning's summary marks it as the reader's; its
        `toggle` (after the click, or programmatic) then says whether it is open."""
        target = event.target
        if not hasattr(target, "closest"):
            return
        details = target.closest("details.sp-reasoning")
        if not details:
            return
        item_id = str(details.getAttribute("data-id"))
        if event.type == "click":
            if target.closest("summary"):
                self._touched.add(item_id)
        elif item_id in self._touched:
            self._toggled(item_id, bool(details.open))
            self._flush()


def _plain(text: str) -> str:
    """Spoken text of plain text: the text itself (its lines are lines; the
    announcer folds whitespace as it says them)."""
    return text
