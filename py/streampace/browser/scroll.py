"""`ScrollFollower`: keep a view's newest text in sight, as chat UIs do.

While the reader is at the bottom of the view the follower scrolls along with
the text.  Any upward scroll by the reader unpins it; coming back within
`threshold_px` of the bottom pins it again; while unpinned a "Jump to latest"
button shows.

The geometry is read in a ResizeObserver callback on the view, which the
browser runs after its own layout of the frame, before paint: the follower
scrolls in the same frame as the commit without forcing a synchronous layout
inside the frame callback (reading `getBoundingClientRect` right after the
commit cost ~0.4 ms per frame in `python -m bench --browser`, bursty trace).
The view only needs following when its size changed (or the size of what
scrolls it), which is exactly when the observer fires; the renderer calls
nothing per frame.

"Bottom" is the bottom edge of the view, in whatever scrolls it: the nearest
ancestor that actually scrolls (overflow auto/scroll with content taller than
itself), else the page.  It is looked up per frame among the ancestors that
may scroll (found once), so a container that starts scrolling later is taken.

Every follower on the page shares one ResizeObserver and one scroll and one
wheel listener on the document (capture phase, passive; `_SharedObserver`): the
browser calls into Python once per frame for all the views that changed size,
and once per scroll event, not once per view (the demo's two panes: each call
cost ~2.2 ms at 4x CPU, about half of it Pyodide's entry, `python -m
bench.frame_trace --page demo`; each pane's own scroll, every frame while it
follows, was one call per follower).

The follower owns its button's click proxy and destroys it in `close()`; the
shared proxies are destroyed when the last follower closes.
Scrolling is instant (`behavior: "instant"`), whatever the page's
`scroll-behavior`.  The view gets `overflow-anchor: none`: scroll anchoring
would move the page up when the open Markdown block shrinks, which would read
as the reader scrolling up.
"""

from __future__ import annotations

from typing import Any

from streampace.browser.ffi import create_proxy, js, to_js

__all__ = ["ScrollFollower"]

_SCROLLING = ("auto", "scroll", "overlay")


def _bridge_scroll() -> Any:
    """js_shim/bridge.js `scrollToTop`, when our boot registered the bridge (every
    page but the benchmark's harness page): Chromium's scrollTo returns a Promise,
    which Pyodide turns into a Future resolved in a task of its own after every
    scroll (`python -m bench --browser`: 18-30 ms "Promise.resolve" scripts at 4x
    CPU); the bridge drops it in JS."""
    try:
        import _streampace_bridge  # type: ignore[import-not-found]
    except ImportError:
        return None
    return getattr(_streampace_bridge, "scrollToTop", None)


class _SharedObserver:
    """One ResizeObserver, one scroll and one wheel listener for every follower
    on the page. An element observed for several followers (a scroller they
    share) is observed once, counted."""

    def __init__(self) -> None:
        self.followers: list[ScrollFollower] = []
        self._watched: list[list[Any]] = []  # [element, how many followers watch it]
        self._proxy: Any = None
        self._observer: Any = None
        self._listeners: list[tuple[str, Any]] = []  # (event type, proxy) on the document
        self._listen_options: Any = None

    def join(self, follower: ScrollFollower) -> None:
        if self._observer is None:
            self._proxy = create_proxy(self._on_resize)
            self._observer = js.ResizeObserver.new(self._proxy)
            self._listen_options = to_js({"capture": True, "passive": True},
                                         dict_converter=js.Object.fromEntries)
            for name, handler in (("scroll", self._on_scroll), ("wheel", self._on_wheel)):
                proxy = create_proxy(handler)
                js.document.addEventListener(name, proxy, self._listen_options)
                self._listeners.append((name, proxy))
        self.followers.append(follower)

    def leave(self, follower: ScrollFollower) -> None:
        if follower in self.followers:
            self.followers.remove(follower)
        if not self.followers and self._observer is not None:
            self._observer.disconnect()
            self._proxy.destroy()
            self._observer = self._proxy = None
            self._watched.clear()
            for name, proxy in self._listeners:
                js.document.removeEventListener(name, proxy, self._listen_options)
                proxy.destroy()
            self._listeners.clear()

    def observe(self, el: Any) -> None:
        for watched in self._watched:
            if watched[0] == el:
                watched[1] += 1
                return
        self._watched.append([el, 1])
        self._observer.observe(el)

    def unobserve(self, el: Any) -> None:
        for i, watched in enumerate(self._watched):
            if watched[0] == el:
                watched[1] -= 1
                if not watched[1]:
                    del self._watched[i]
                    self._observer.unobserve(el)
                return

    def _on_resize(self, entries: Any, _observer: Any = None) -> None:
        targets = [entry.target for entry in entries]
        for follower in list(self.followers):
            if any(t == follower.view or t == follower.observed for t in targets):
                follower.resized()

    def _on_scroll(self, event: Any) -> None:
        for follower in list(self.followers):
            follower.on_scroll(event)

    def _on_wheel(self, event: Any) -> None:
        for follower in list(self.followers):
            follower.on_wheel(event)


_shared = _SharedObserver()


class ScrollFollower:
    """Follows `view` (an element) to its bottom; the button goes into `view`."""

    def __init__(self, view: Any, *, threshold_px: float = 8.0,
                 label: str = "Jump to latest") -> None:
        self.view = view
        self.threshold_px = threshold_px
        self.pinned = True
        self._doc = js.document
        self._win = js.window
        self._perf = js.performance
        self._candidates: list[Any] | None = None  # ancestors that may scroll
        self._scroller: Any = None  # the element that scrolls now; None: the page
        self._last_top = 0.0
        view.style.overflowAnchor = "none"
        self._scroll_to = _bridge_scroll()
        self._options = to_js({"top": 0, "behavior": "instant"},
                              dict_converter=js.Object.fromEntries)
        # A sticky bar at the end of the view: in sight at the bottom of whatever
        # scrolls it, also without the stylesheet.
        self.bar = self._doc.createElement("div")
        self.bar.className = "sp-jump"
        self.bar.style.position = "sticky"
        self.bar.style.bottom = "0"
        self.bar.hidden = True
        self.button = self._doc.createElement("button")
        self.button.type = "button"
        self.button.className = "sp-jump-button"
        self.button.textContent = label
        self.bar.append(self.button)
        view.append(self.bar)
        self._on_click_proxy = create_proxy(self._on_click)
        self.button.addEventListener("click", self._on_click_proxy)
        self.observed: Any = None  # the scrolling ancestor observed too
        _shared.join(self)
        _shared.observe(view)
        self.closed = False
        self.resize_ms = 0.0  # Python time in the observer's callbacks (bench)

    # -- after each layout that changed a size -------------------------------
    def resized(self) -> None:
        """The view's size changed, after the browser laid the frame out: scroll to
        its bottom if pinned, else offer the button (geometry is clean here)."""
        if self.closed:
            return
        t0 = self._perf.now()
        scroller = self._find_scroller()
        if scroller is not None and scroller != self.observed:
            # Its own resizes (a window resize, say) move the view's bottom too.
            if self.observed is not None:
                _shared.unobserve(self.observed)
            _shared.observe(scroller)
            self.observed = scroller
        self._scroller = scroller
        if self.pinned:
            self._follow()
        else:
            self._show_button(self._distance() > self.threshold_px)
        self.resize_ms += self._perf.now() - t0

    def reset(self) -> None:
        """A new session in the view: follow it from the start."""
        self.pinned = True
        self._candidates = None
        self._show_button(False)

    def jump(self) -> None:
        """Scroll to the newest text and follow it again."""
        self.pinned = True
        self._scroller = self._find_scroller()
        self._follow()

    def _follow(self) -> None:
        """Scroll the view's bottom into sight (pinned: the button is hidden)."""
        self._show_button(False)  # first: the bar is part of the view's height
        distance = self._distance()
        if distance > 0.5:
            self._scroll_by(distance)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.button.removeEventListener("click", self._on_click_proxy)
        _shared.unobserve(self.view)
        if self.observed is not None:
            _shared.unobserve(self.observed)
        _shared.leave(self)
        self._on_click_proxy.destroy()
        self.bar.remove()

    # -- geometry ----------------------------------------------------------
    def _find_scroller(self) -> Any:
        if self._candidates is None:
            self._candidates = []
            el = self.view.parentElement
            body = self._doc.body
            while el is not None and el != body and el != self._doc.documentElement:
                if str(self._win.getComputedStyle(el).overflowY) in _SCROLLING:
                    self._candidates.append(el)
                el = el.parentElement
        for el in self._candidates:
            if el.isConnected and el.scrollHeight > el.clientHeight + 1:
                return el
        return None

    def _top(self) -> float:
        el = self._scroller
        return float(el.scrollTop if el is not None else self._win.scrollY)

    def _distance(self) -> float:
        """How far the view's bottom lies below the bottom of what shows it (px)."""
        bottom = float(self.view.getBoundingClientRect().bottom)
        el = self._scroller
        if el is None:
            return bottom - float(self._doc.documentElement.clientHeight)
        rect = el.getBoundingClientRect()
        return bottom - (float(rect.top) + float(el.clientTop) + float(el.clientHeight))

    def _scroll_by(self, distance: float) -> None:
        el = self._scroller
        top = self._top() + distance
        if self._scroll_to is not None:
            self._scroll_to(self._win if el is None else el, top)
            self._last_top = self._top()
            return
        self._options.top = top
        if el is None:
            self._win.scrollTo(self._options)
        else:
            el.scrollTo(self._options)
        self._last_top = self._top()

    def _show_button(self, show: bool) -> None:
        if bool(self.bar.hidden) == show:
            self.bar.hidden = not show

    # -- the reader --------------------------------------------------------
    def on_scroll(self, event: Any) -> None:
        """A scroll anywhere in the document (the shared listener's)."""
        el = self._scroller
        target = event.target
        if el is None:
            if target != self._doc:
                # An element scrolled: it may be ours, now taller than itself.
                self._scroller = el = self._find_scroller()
                if el is None or target != el:
                    return
        elif target != el:
            return
        top = self._top()
        if self.pinned and top >= self._last_top - 0.5:
            # Following, and not moved up: it stays pinned, the button hidden (our
            # own scroll's event, every frame while text streams in). No layout reads.
            self._last_top = top
            return
        distance = self._distance()
        if distance <= 1.0:
            self.pinned = True  # at the very bottom (also where a clamp leaves it)
        elif top < self._last_top - 0.5:
            self.pinned = False  # the reader moved up
        elif distance <= self.threshold_px:
            self.pinned = True  # came back down to the bottom
        self._last_top = top
        self._show_button(not self.pinned and distance > self.threshold_px)

    def on_wheel(self, event: Any) -> None:
        # Before the scroll it causes: so the next commit does not pull the view
        # back down while a smooth wheel scroll is under way.
        if event.deltaY >= 0 or not self.pinned:
            return
        el = self._scroller
        if el is None or el.contains(event.target):
            self.pinned = False

    def _on_click(self, _event: Any) -> None:
        self.jump()
