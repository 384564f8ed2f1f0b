"""The view planner (conversation/view_plan.py): LiveState changes -> DOM operations.

`Shown` below carries the operations out on plain Python objects, as
browser/renderer.py does on the DOM, so what a plan would show is checked here
in CPython; the renderer's own DOM is checked in tests/browser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streampace.conversation import items
from streampace.conversation import view_plan as plan
from streampace.conversation.live_state import LiveState
from streampace.conversation.view_plan import Element, Part, ViewPlanner

LABELS = {"user": "You", "assistant": "Assistant", "reasoning": "Reasoning",
          "toolCall": "Tool call", "error": "Error", "generating": "Generating…",
          "done": "Done", "stopped": "Stopped", "withdraw": "Withdraw",
          "waiting": "Waiting", "sending": "Sending"}
RUN_STARTED = {"type": "RUN_STARTED", "threadId": "th", "runId": "r1"}
RUN_FINISHED = {"type": "RUN_FINISHED", "threadId": "th", "runId": "r1"}


def start(mid: str, role: str = "assistant") -> dict:
    return {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role}


def content(mid: str, delta: str) -> dict:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": delta}


def end(mid: str) -> dict:
    return {"type": "TEXT_MESSAGE_END", "messageId": mid}


@dataclass
class Item:
    """One item as the applier would show it."""

    element: Element
    blocks: list[list[str]] = field(default_factory=list)  # plain text: blocks of Text nodes
    fed: str = ""       # Markdown: what its view was fed
    closed: bool = False
    markdown: bool = False
    text: dict[Part, str] = field(default_factory=dict)
    shown: set[Part] = field(default_factory=set)
    attrs: dict[str, str] = field(default_factory=dict)
    appends: int = 0    # appendData calls
    feeds: int = 0

    def body_text(self) -> str:
        return self.fed if self.markdown else "".join("".join(b) for b in self.blocks)


def _part(element: Element, part: Part) -> Element | None:
    if element.part is part:
        return element
    for child in element.children:
        if isinstance(child, Element) and (found := _part(child, part)) is not None:
            return found
    return None


class Shown:
    """Carries a plan out on Python objects (the renderer's vocabulary, op by op)."""

    def __init__(self) -> None:
        self.items: dict[items.ItemRef, Item] = {}
        self.run: plan.ShowRun | None = None

    def carry_out(self, ops: list[plan.Op]) -> None:
        for op in ops:
            getattr(self, type(op).__name__)(op)

    def _body(self, item: Item, body: Element) -> None:
        item.markdown = body.markdown
        if body.markdown:
            item.fed, item.closed, item.feeds = body.text or "", body.ended, 0
        else:
            item.blocks = [[body.text or ""]]

    def ClearTimeline(self, op: plan.ClearTimeline) -> None:  # noqa: N802
        self.items.clear()

    def AddItem(self, op: plan.AddItem) -> None:  # noqa: N802
        assert op.ref not in self.items
        item = Item(op.element, attrs=dict(op.element.attrs))
        body = _part(op.element, Part.BODY)
        assert body is not None
        self._body(item, body)
        for part in (Part.NAME, Part.RESULT):
            if (el := _part(op.element, part)) is not None:
                item.text[part] = el.text or ""
                if not el.hidden:
                    item.shown.add(part)
        self.items[op.ref] = item

    def AppendText(self, op: plan.AppendText) -> None:  # noqa: N802
        item = self.items[op.ref]
        assert not item.markdown
        grown = item.blocks[-1][-1] + op.text
        # Blink's appendData is cheap only on a short ASCII node (view_plan.py).
        assert grown.isascii() and len(grown) <= plan.TEXT_NODE_LIMIT
        item.blocks[-1][-1] = grown
        item.appends += 1

    def AddText(self, op: plan.AddText) -> None:  # noqa: N802
        self.items[op.ref].blocks[-1].append(op.text)

    def AddBlock(self, op: plan.AddBlock) -> None:  # noqa: N802
        self.items[op.ref].blocks.append([op.text])

    def FeedMarkdown(self, op: plan.FeedMarkdown) -> None:  # noqa: N802
        item = self.items[op.ref]
        assert item.markdown and not item.closed, "a closed Markdown view takes no text"
        item.fed += op.text
        item.feeds += 1

    def CloseMarkdown(self, op: plan.CloseMarkdown) -> None:  # noqa: N802
        item = self.items[op.ref]
        assert item.markdown and not item.closed, "closed twice"
        item.closed = True

    def ReplaceBody(self, op: plan.ReplaceBody) -> None:  # noqa: N802
        self._body(self.items[op.ref], op.element)

    def SetPartText(self, op: plan.SetPartText) -> None:  # noqa: N802
        self.items[op.ref].text[op.part] = op.text

    def ShowPart(self, op: plan.ShowPart) -> None:  # noqa: N802
        self.items[op.ref].shown.add(op.part)

    def SetAttribute(self, op: plan.SetAttribute) -> None:  # noqa: N802
        assert op.part is Part.ITEM
        self.items[op.ref].attrs[op.name] = op.value

    def ShowRun(self, op: plan.ShowRun) -> None:  # noqa: N802
        self.run = op


class View:
    def __init__(self, **formats: str) -> None:
        self.state = LiveState()
        self.planner = ViewPlanner(labels=LABELS, **formats)
        self.shown = Shown()
        self.last: list[plan.Op] = []

    def feed(self, *events: dict) -> list[plan.Op]:
        changes = self.state.apply(list(events))
        self.last = self.planner.plan(self.state, changes)
        self.shown.carry_out(self.last)
        return self.last

    def item(self, mid: str, kind: str = items.MESSAGE) -> Item:
        refs = [r for r in self.shown.items if r.id == mid and r.kind == kind]
        assert len(refs) == 1
        return self.shown.items[refs[0]]


def test_an_assistant_message_is_a_markdown_body_fed_deltas_then_closed_once() -> None:
    view = View()
    view.feed(RUN_STARTED, start("m"), content("m", "# Hi"))
    shown = view.item("m")
    assert shown.markdown and shown.fed == "# Hi"
    assert shown.attrs == {"data-role": "assistant", "data-format": "markdown",
                           "data-id": "m", "data-state": "streaming"}
    assert view.feed(content("m", " there")) == [plan.FeedMarkdown(shown_ref(view, "m"), " there")]
    view.feed(end("m"), RUN_FINISHED)
    assert shown.closed and shown.attrs["data-state"] == "done" and shown.fed == "# Hi there"
    assert view.shown.run == plan.ShowRun(False, "finished", "Done")


def shown_ref(view: View, mid: str) -> items.ItemRef:
    return next(r for r in view.shown.items if r.id == mid)


def test_plain_text_grows_by_append_data_only_on_a_short_ascii_node() -> None:
    view = View(text_format="text")
    view.feed(RUN_STARTED, start("m"), content("m", "ab"))
    ref = shown_ref(view, "m")
    # The first Text node's kind is unknown to the plan: the next delta starts a new one.
    assert view.feed(content("m", "cd")) == [plan.AddText(ref, "cd")]
    assert view.feed(content("m", "ef")) == [plan.AppendText(ref, "ef")]
    assert view.feed(content("m", "é")) == [plan.AddText(ref, "é")]
    assert view.feed(content("m", "g")) == [plan.AddText(ref, "g")]
    assert view.feed(content("m", "x" * plan.TEXT_NODE_LIMIT)) == [
        plan.AddText(ref, "x" * plan.TEXT_NODE_LIMIT)]
    assert view.item("m").body_text() == "abcdefégx" + "x" * (plan.TEXT_NODE_LIMIT - 1)


def test_past_the_block_limit_the_text_after_a_newline_opens_a_block() -> None:
    view = View(text_format="text")
    view.feed(RUN_STARTED, start("m"), content("m", "a" * (plan.BLOCK_LIMIT - 2)))
    ref = shown_ref(view, "m")
    assert view.feed(content("m", "no newline")) == [plan.AddText(ref, "no newline")]
    assert view.feed(content("m", "xy\nrest")) == [plan.AppendText(ref, "xy\n"),
                                                   plan.AddBlock(ref, "rest")]
    shown = view.item("m")
    assert len(shown.blocks) == 2 and shown.blocks[1] == ["rest"]
    assert shown.body_text() == view.state.messages["m"].text


def test_one_frame_of_several_slices_is_one_operation() -> None:
    view = View()
    view.feed(RUN_STARTED, start("m"), content("m", "a"))
    ops = view.feed(content("m", "b"), content("m", "c"), content("m", "d"))
    assert ops == [plan.FeedMarkdown(shown_ref(view, "m"), "bcd")]


def test_user_messages_and_reasoning_are_plain_text_with_direction_from_their_text() -> None:
    view = View()
    reasoning = [{"type": "REASONING_START", "messageId": "r"},
                 {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "assistant"},
                 {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "hmm"}]
    view.feed(RUN_STARTED, start("u", role="user"), content("u", "*hi*"), end("u"), *reasoning)
    user = view.item("u")
    assert not user.markdown and user.body_text() == "*hi*"
    body = _part(user.element, Part.BODY)
    assert body is not None and body.pre and ("dir", "auto") in body.attrs
    thought = next(i for r, i in view.shown.items.items() if r.kind == items.REASONING)
    assert thought.element.tag == "details" and thought.element.open
    assert not thought.markdown and thought.body_text() == "hmm"


def test_a_tool_call_shows_its_name_arguments_and_result() -> None:
    view = View()
    view.feed(RUN_STARTED, {"type": "TOOL_CALL_START", "toolCallId": "t", "toolCallName": "find"},
              {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '{"q":'})
    ref = next(r for r in view.shown.items if r.kind == items.TOOL_CALL)
    tool = view.shown.items[ref]
    assert tool.text[Part.NAME] == "Tool call: find" and Part.RESULT not in tool.shown
    view.feed({"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": '"x"}'},
              {"type": "TOOL_CALL_END", "toolCallId": "t"},
              {"type": "TOOL_CALL_RESULT", "messageId": "res", "toolCallId": "t",
               "content": "found"})
    assert tool.body_text() == '{"q":"x"}'
    assert tool.text[Part.RESULT] == "found" and Part.RESULT in tool.shown
    assert tool.attrs["data-state"] == "done"


def test_a_snapshot_rebuilds_every_item_and_the_run_line() -> None:
    view = View()
    view.feed(RUN_STARTED, start("m"), content("m", "old"))
    ops = view.feed({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "a", "role": "user", "content": "q"},
        {"id": "b", "role": "assistant", "content": "**answer**"}]})
    assert isinstance(ops[0], plan.ClearTimeline) and isinstance(ops[-1], plan.ShowRun)
    assert [r.id for r in view.shown.items] == ["a", "b"]
    assert view.item("b").markdown and view.item("b").fed == "**answer**"
    assert view.item("b").closed  # snapshot messages are whole
    # The plan goes on from what the rebuild showed.
    view.feed(RUN_STARTED, start("c"), content("c", "new"))
    assert view.item("c").fed == "new"


def test_a_failed_markdown_item_is_plain_text_from_then_on() -> None:
    view = View()
    view.feed(RUN_STARTED, start("m"), content("m", "*a"))
    view.planner.mark_plain(shown_ref(view, "m"))
    view.shown.carry_out(view.planner.rebuild(view.state))
    assert not view.item("m").markdown and view.item("m").body_text() == "*a"
    view.feed(content("m", "b*"))
    assert view.item("m").body_text() == "*ab*"
    view.planner.forget()  # a new conversation: Markdown again
    view.shown.carry_out(view.planner.rebuild(view.state))
    assert view.item("m").markdown


def test_dom_events_tell_message_ends_then_the_run_end() -> None:
    state = LiveState()
    state.apply([RUN_STARTED, start("m"), content("m", "hi")])
    changes = state.apply([end("m"), RUN_FINISHED])
    assert plan.dom_events(state, changes) == [
        ("streampace:message-end", {"messageId": "m", "role": "assistant", "text": "hi"}),
        ("streampace:run-end", {"status": "finished", "outcome": "finished", "runId": "r1",
                                "threadId": "th", "error": None, "code": None})]


def test_an_error_run_says_why_on_the_status_line() -> None:
    state = LiveState()
    state.apply([RUN_STARTED])
    changes = state.apply([{"type": "RUN_ERROR", "message": "boom", "code": "E1"}])
    assert plan.run_view(state.run, LABELS) == plan.ShowRun(False, "error", "Error: boom (E1)")
    assert plan.dom_events(state, changes)[-1][1]["error"] == "boom"


def test_only_the_views_own_attribute_names_can_be_planned() -> None:
    for name in ("onclick", "href", "style", "src", "srcdoc"):
        with pytest.raises(ValueError, match="not one the view sets"):
            Element("div", "x", ((name, "v"),))
        with pytest.raises(ValueError, match="not one the view sets"):
            plan.SetAttribute(items.ItemRef(items.MESSAGE, "m"), Part.ITEM, name, "v")


def test_a_queued_question_is_text_with_a_withdraw_button() -> None:
    el = plan.queued_element({"id": "q1", "state": "waiting", "prompt": "<b>why</b>"}, LABELS)
    assert dict(el.attrs) == {"data-role": "user", "data-state": "waiting", "data-queue-id": "q1"}
    role, body, note = el.children
    assert isinstance(body, Element) and body.text == "<b>why</b>" and body.pre
    assert isinstance(note, Element) and note.text == "Waiting"
    space, button = note.children
    assert space == " " and isinstance(button, Element)
    assert dict(button.attrs) == {"type": "button", "data-withdraw": "q1"}
    sending = plan.queued_element({"id": "q2", "state": "sending", "prompt": "p"}, LABELS)
    note = sending.children[2]
    assert isinstance(note, Element) and note.text == "Sending" and note.children == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m", "n"]),
                          st.text(alphabet="ab\né字 ", min_size=1, max_size=300)),
                min_size=1, max_size=40),
       st.sampled_from(["markdown", "text"]))
def test_what_a_plan_shows_is_the_state_text_at_every_frame(deltas: list[tuple[str, str]],
                                                            fmt: str) -> None:
    view = View(text_format=fmt)
    view.feed(RUN_STARTED, start("m"), start("n"))
    for mid, delta in deltas:
        view.feed(content(mid, delta))
        for mid_shown in ("m", "n"):
            assert view.item(mid_shown).body_text() == view.state.messages[mid_shown].text
    view.feed(end("m"), end("n"), RUN_FINISHED)
    assert all(s.closed for s in view.shown.items.values() if s.markdown)
