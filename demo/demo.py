"""The demo page (index.html): one stream shown "as delivered" and "paced".

Demo-only, so it lives next to the page; scripts/setup_runtime puts it into
vendor/streampace.zip as the top-level module `streampace_demo`, which the
memory snapshot imports like the package's page modules. The page's
`<script type="py">` (PyScript, index.html) imports it and calls `main`.

The page's JS glue (demo/demo.js) opens the session socket before Python boots.
If it connects, the streampace server is the source; if the first connection
fails (plain static files, e.g. `python3 -m http.server`), the in-page
`SimulatedSession` takes over. Both views get the same batches: "as delivered"
paints each batch when it arrives, "paced" goes through the scheduler. Both
render Markdown incrementally (the frame's cost is what changed, not the whole
answer), so the two panes differ only in when text appears. "As delivered" shows
each batch from the next animation frames, not in the socket's callback, a line
at a time while the frame has time (browser/frame_slices.py): on a slow device a
long answer's batch would otherwise be one long task of its own, or the tail of
the paced view's frame.
"""

from __future__ import annotations

import json
import random
import traceback
from typing import Any

from streampace.browser.controller import StreamView, percentile
from streampace.browser.embed import pacing_config
from streampace.browser.ffi import create_proxy, js
from streampace.browser.frame_slices import FrameSlices
from streampace.browser.host import BrowserHost
from streampace.browser.renderer import DomRenderer
from streampace.client.fallback import SourceChoice, SourceState
from streampace.client.page_socket import SimulatedSession
from streampace.conversation.items import RunStatus

__all__ = ["Demo", "main", "SCENARIO_CHOICES"]

# Picker value -> (server/sim scenario, drop the connection mid-run?)
SCENARIO_CHOICES: dict[str, tuple[str, bool]] = {
    "fast": ("fast", False),
    "slow": ("slow", False),
    "bursty": ("bursty", False),
    "cjk_emoji": ("cjk_emoji", False),
    "agentic": ("agentic", False),
    "long": ("long", False),
    "reconnect": ("cjk_emoji", True),
    "demo": ("demo", False),
}
_DROP_AFTER_MS = (1500.0, 4500.0)  # forced reconnect: drop twice during the run


class Demo:
    def __init__(self, bridge: Any, glue: Any) -> None:
        doc = js.document
        self.doc = doc
        self.bridge = bridge
        self.glue = glue
        # Called every frame: bound once (a lookup through the proxy brings the chart
        # and then its method into Python as new proxies, each type-probed by Pyodide).
        self._chart_push = glue.chart.push
        self.host = BrowserHost(on_error=self._on_exception)
        # Both panes show Markdown through the same incremental renderer; "as
        # delivered" paints each batch when it arrives (_on_delivered). It used to
        # re-parse the whole message per batch (markdown_dom.RebuildView), which
        # on a long answer took hundreds of ms a batch on this shared main thread
        # (python -m bench --browser, demo page) and made the paced pane stutter.
        # Its finished Markdown sections are sealed on the page's frames, as the
        # paced pane's are (markdown_dom.MarkdownView): without it, every frame
        # repainted the whole visible window of a long answer in this pane
        # (python -m bench.frame_trace --page demo, md_32k, 4x CPU).
        self.delivered = DomRenderer(doc.getElementById("delivered"), bridge,
                                     label="As delivered", emit_events=False, scroll=True,
                                     timers=self.host)
        # One voice per page: the paced view's live region says the answer and
        # the run's end; the comparison pane's status line stays silent.
        self.delivered.status.removeAttribute("role")
        self._delivered_queue = FrameSlices()
        self._delivered_frame: Any = None
        self._buttons_running: bool | None = None  # what the Run/Stop buttons show
        # ?max_lag=120 sets the pacing law's knob (embed: data-max-lag).
        self.view = StreamView(bridge, doc.getElementById("paced"), host=self.host,
                               config=pacing_config(getattr(glue, "maxLag", None)),
                               label="Paced answer", on_delivered=self._on_delivered,
                               on_sample=self._on_sample, on_status=self._on_status)
        self.mode: str | None = None
        self.choice = SourceChoice()
        self.socket: Any = glue.earlySocket
        self.session_id = str(glue.sessionId)
        # ?speed=2 plays the in-page simulation twice as fast (like serve --speed).
        self.speed = float(glue.simSpeed)
        self._drops: list[Any] = []
        self._samples = 0
        self._listeners: list[tuple[Any, str, Any]] = []
        self.form = doc.getElementById("prompt-form")
        self.prompt = doc.getElementById("prompt")
        self.scenario = doc.getElementById("scenario")
        self.run_button = doc.getElementById("run")
        self.stop_button = doc.getElementById("cancel")
        self.source_label = doc.getElementById("source")
        # Each figure is one Text node whose data is rewritten: a textContent write
        # replaces the node, a mutation every observer of the page is told of
        # (PyScript's watches the whole document's children).
        self.figures = {}
        for name in ("graphemes", "backlog", "lag", "frame-ms"):
            el = doc.getElementById(f"fig-{name}")
            text = doc.createTextNode(el.textContent)
            el.replaceChildren(text)
            self.figures[name] = text
        self._figure_text: dict[str, str] = {}
        self._listen(self.form, "submit", self._on_submit)
        self._listen(self.stop_button, "click", self._on_stop)
        self._listen(self.prompt, "keydown", self._on_key)
        # Replays what the socket saw while Python booted; _on_status decides
        # the source from its first open (server) or failed connect (static).
        self.view.connect(self.socket)
        # The first answer's first frames without the page's first-use costs.
        self.view.start_warm_up()

    # -- source selection --------------------------------------------------
    def _on_status(self, state: str, detail: dict) -> None:
        if self.mode is None:
            decided = self.choice.report(state, detail)  # the rule: client/fallback.py
            if decided is SourceState.SERVER:
                self.mode = "server"
                self.source_label.textContent = "Source: streampace server (WebSocket)"
                self._set_ready()
            elif decided is SourceState.SIMULATION:
                # Deferred so the socket's own callback has returned before we close it.
                self.host.request_timeout(self._use_simulation, 0)
        elif state == "waiting":
            self.source_label.textContent = (
                f"Reconnecting (attempt {detail.get('attempt')}, "
                f"{detail.get('delayMs')} ms)…")
        elif state == "open":
            self.source_label.textContent = (
                "Source: streampace server (WebSocket)" if self.mode == "server"
                else "Source: in-page simulation (no streampace server found)")

    def _use_simulation(self) -> None:
        if self.mode is not None:
            return
        self.mode = "sim"
        self.socket = SimulatedSession(self.host, self.session_id, speed=self.speed)
        self.view.switch_session(self.socket)
        self._delivered_queue.clear()
        self.delivered.reset()
        self.source_label.textContent = "Source: in-page simulation (no streampace server found)"
        self._set_ready()

    def _set_ready(self) -> None:
        self.run_button.disabled = False
        self.doc.body.setAttribute("data-source", self.mode or "")
        self.glue.setReady(self.mode)

    # -- UI ----------------------------------------------------------------
    def _listen(self, el: Any, name: str, fn: Any) -> None:
        proxy = create_proxy(fn)
        el.addEventListener(name, proxy)
        self._listeners.append((el, name, proxy))

    def _on_key(self, event: Any) -> None:
        if event.key == "Enter" and (event.ctrlKey or event.metaKey):
            event.preventDefault()
            self.form.requestSubmit()

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        if self.mode is None:
            return
        prompt = str(self.prompt.value).strip() or "Tell me about pacing streamed text."
        scenario, drop = SCENARIO_CHOICES.get(str(self.scenario.value), ("demo", False))
        self.view.send(json.dumps({"type": "run", "prompt": prompt, "scenario": scenario}))
        for handle in self._drops:
            self.host.cancel_timeout(handle)
        self._drops = []
        if drop:
            for at in _DROP_AFTER_MS:
                delay = (at + random.uniform(0, 500)) / self.speed
                self._drops.append(self.host.request_timeout(self._drop, delay))

    def _drop(self) -> None:
        if self.socket is not None:
            self.socket.drop()

    def _on_stop(self, _event: Any) -> None:
        if self.socket is not None:
            self.view.send(json.dumps({"type": "cancel"}))

    def _on_delivered(self, events: list[dict]) -> None:
        queue = self._delivered_queue
        queue.push(events)
        if self.host.hidden:
            self._show_delivered(queue.take_all())  # no frames come: as it came
        elif self._delivered_frame is None:
            self._delivered_frame = self.host.request_frame(self._delivered_frame_due)

    def _delivered_frame_due(self) -> None:
        self._delivered_frame = None
        queue = self._delivered_queue
        if not queue.waits_for_next_frame(self.host.frame_elapsed_ms()):
            self._show_delivered_lines()
        if len(queue):
            self._delivered_frame = self.host.request_frame(self._delivered_frame_due)

    def _show_delivered_lines(self) -> None:
        """What the socket delivered, a line per commit, while the frame has time
        (one line at least)."""
        queue = self._delivered_queue
        while len(queue):
            self._show_delivered(queue.take())
            if not queue.has_time(self.host.frame_elapsed_ms()):
                return

    def _show_delivered(self, events: list[dict]) -> None:
        self.delivered.apply(events)
        self._show_run_buttons()

    def _show_run_buttons(self) -> None:
        running = self.delivered.state.run.status is RunStatus.RUNNING
        if running is self._buttons_running:
            return  # no DOM reads or writes per slice while nothing changes
        self._buttons_running = running
        stop_had_focus = self.doc.activeElement == self.stop_button
        self.run_button.disabled = running
        self.stop_button.disabled = not running
        if stop_had_focus and not running:
            # A disabled button drops the focus to the page's start: a keyboard
            # reader who pressed Stop continues from Run instead.
            self.run_button.focus()

    def _on_sample(self, sample: tuple[float, int, int, float]) -> None:
        _now, shown, backlog, lag = sample
        self._chart_push(shown, backlog, lag)
        self._samples += 1
        if self._samples % 10 == 0:
            work = self.host.frame_work_ms
            self._show_figure("graphemes", str(shown))
            self._show_figure("backlog", str(backlog))
            self._show_figure("lag", f"{lag:.0f} ms")
            if work:
                self._show_figure("frame-ms", f"{work[-1]:.2f} ms")

    def _show_figure(self, name: str, text: str) -> None:
        """A DOM write only when the figure's text changes (each write is a style
        and layout of its line in the next frame)."""
        if self._figure_text.get(name) != text:
            self._figure_text[name] = text
            self.figures[name].data = text

    def _on_exception(self, exc: BaseException) -> None:
        js.console.error("streampace demo: " + "".join(traceback.format_exception(exc)))

    def stats_json(self) -> str:
        stats = self.view.stats()
        stats["mode"] = self.mode
        stats["deliveredCommits"] = self.delivered.commits
        stats["deliveredCuts"] = self._delivered_queue.cuts
        stats["deliveredWaits"] = self._delivered_queue.waits
        applies = list(self.delivered.apply_ms)
        stats["deliveredApplyMs"] = {"n": len(applies), "sum": sum(applies),
                                     "p50": percentile(applies, 50),
                                     "p99": percentile(applies, 99)}
        return json.dumps(stats)

    def close(self) -> None:
        for el, name, proxy in self._listeners:
            el.removeEventListener(name, proxy)
            proxy.destroy()
        self._listeners.clear()
        if self._delivered_frame is not None:
            self.host.cancel_frame(self._delivered_frame)
            self._delivered_frame = None
        self.delivered.close()
        self.view.close()
        if isinstance(self.socket, SimulatedSession):
            self.socket.close()
        self.host.close()


def main(bridge: Any, glue: Any) -> Demo:
    demo = Demo(bridge, glue)
    glue.attachDemo(create_proxy(demo.stats_json))
    return demo
