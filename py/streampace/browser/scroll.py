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
Scrolling is instant, whatever the page's `scroll-behavior` (a scrollTop write,
or scrollTo with `behavior: "instant"` where the page asks for smooth scrolling).

Its reads and its scroll are js_shim/bridge.js calls (the gap and the scroll one
call); only what to do with them is decided here. A resize's callback at 4x CPU on
the embed, over the long Markdown answer, cost p50 1.1 ms with each read an FFI
attribute access (and `scrollTo`, whose Promise Chromium makes and settles). The
shared observer's callback gets one string from bridge.js (`resizeWatcher`: which
watched elements changed size), not the observer's entries and the observer, which
Pyodide brought into Python as two new proxies, each type-probed, every time it fired.

Once a pinned follower has followed a resize, it hands its scrolling over to the
shared observer in bridge.js (`resizeWatcher`'s `pin`), which follows the next
resizes of elements watched only by such followers itself, as `resized` would,
without a call into Python: that call, once a frame while text streams, cost
~0.8 ms at 4x CPU in the embed over the long Markdown answer (p50 2.2 ms a
callback with its scroll, 1.2 ms after; `python -m bench.frame_trace --page embed
--trace md_32k --cpu 4 --phone`). The follower takes it back (`_hand_back`) when
it unpins, when what scrolls its view changes, and when it resets or closes; the
reader's scroll up is told from bridge.js's by where bridge.js last left the
scroller (`followedTop`).

The view gets `overflow-anchor: none`: scroll anchoring would move the page up
when the open Markdown block shrinks, which would read as the reader scrolling
up.
"""

from __future__ import annotations

from typing import Any

from streampace.browser.ffi import create_proxy, js, js_bridge, to_js

__all__ = ["ScrollFollower", "follower_ms"]


class _Watch:
    """An element the shared observer watches, and the followers it is watched for."""

    __slots__ = ("el", "followers")

    def __init__(self, el: Any) -> None:
        self.el = el
        self.followers: list[ScrollFollower] = []


class _SharedObserver:
    """One ResizeObserver, one scroll and one wheel listener for every follower
    on the page. An element observed for several followers (a scroller they
    share) is observed once."""

    def __init__(self) -> None:
        self.followers: list[ScrollFollower] = []
        self._watched: list[_Watch] = []
        self._elements: Any = None  # the watched elements, in order, as a JS array
        self._proxy: Any = None
        self._observer: Any = None
        # (event type, listener, its proxy) on the document
        self._listeners: list[tuple[str, Any, Any]] = []
        self._listen_options: Any = None
        self._clock: Any = None
        self.callback_ms = 0.0  # Python time in the shared callbacks, for the benches

    def join(self, follower: ScrollFollower) -> None:
        if self._observer is None:
            geometry = js_bridge()
            self._clock = js.performance.now
            self._elements = js.Array.new()
            self._proxy = create_proxy(self._on_resize)
            self._observer = geometry.resizeWatcher(self._proxy, self._elements)
            self._listen_options = to_js({"capture": True, "passive": True},
                                         dict_converter=js.Object.fromEntries)
            scroll_proxy = create_proxy(self._on_scroll)
            wheel_proxy = create_proxy(self._on_wheel)
            # Not the scroll events of the followers' own scrolls (bridge.js).
            for name, listener, proxy in (
                    ("scroll", geometry.scrollsBut(scroll_proxy), scroll_proxy),
                    ("wheel", wheel_proxy, wheel_proxy)):
                js.document.addEventListener(name, listener, self._listen_options)
                self._listeners.append((name, listener, proxy))
        self.followers.append(follower)

    def leave(self, follower: ScrollFollower) -> None:
        if follower in self.followers:
            self.followers.remove(follower)
        if not self.followers and self._observer is not None:
            self._observer.disconnect()
            self._proxy.destroy()
            self._observer = self._proxy = self._elements = None
            self._watched.clear()
            for name, listener, proxy in self._listeners:
                js.document.removeEventListener(name, listener, self._listen_options)
                proxy.destroy()
            self._listeners.clear()

    def observe(self, el: Any, follower: ScrollFollower) -> None:
        for watch in self._watched:
            if watch.el == el:
                watch.followers.append(follower)
                self._cover_watch(watch)
                return
        watch = _Watch(el)
        watch.followers.append(follower)
        self._watched.append(watch)
        self._elements.push(el)
        self._observer.observe(el)

    def unobserve(self, el: Any, follower: ScrollFollower) -> None:
        for i, watch in enumerate(self._watched):
            if watch.el == el:
                if follower in watch.followers:
                    watch.followers.remove(follower)
                if watch.followers:
                    self._cover_watch(watch)
                else:
                    del self._watched[i]
                    self._elements.splice(i, 1)
                    self._observer.unobserve(el)
                return

    def pin(self, follower: ScrollFollower) -> None:
        """`follower`'s resizes are followed in bridge.js now, those of each
        element only followers that handed over watch (`resizeWatcher`)."""
        self._observer.pin(follower.view, follower._candidates, follower._scroller_index,
                           follower._smooth)
        self._cover(follower)

    def unpin(self, follower: ScrollFollower) -> None:
        if self._observer is not None:
            self._observer.unpin(follower.view)
            self._cover(follower)

    def _cover(self, follower: ScrollFollower) -> None:
        """Tell bridge.js, for each element `follower` watches, whether every
        follower watching it has handed its scrolling over."""
        for watch in self._watched:
            if follower in watch.followers:
                self._cover_watch(watch)

    def _cover_watch(self, watch: _Watch) -> None:
        self._observer.cover(watch.el, all(f.handed_over for f in watch.followers))

    def followed_top(self, follower: ScrollFollower) -> float | None:
        """Where bridge.js last scrolled `follower`'s scroller, if it has since `pin`."""
        top = self._observer.followedTop(follower.view) if self._observer is not None else None
        return None if top is None else float(top)

    def _on_resize(self, flags: str) -> None:
        """The observer fired: `flags` says, per watched element in order, whether
        it changed size ("1") or not ("0"; bridge.js `resizeWatcher`)."""
        t0 = self._clock()
        try:
            due: list[ScrollFollower] = []
            for watch, flag in zip(self._watched, flags, strict=True):
                if flag == "1":
                    due.extend(watch.followers)
            for follower in list(self.followers):
                if follower in due:
                    follower.resized()
        finally:
            self.callback_ms += self._clock() - t0

    def _on_scroll(self, event: Any) -> None:
        t0 = self._clock()
        try:
            for follower in list(self.followers):
                follower.on_scroll(event)
        finally:
            self.callback_ms += self._clock() - t0

    def _on_wheel(self, event: Any) -> None:
        for follower in list(self.followers):
            follower.on_wheel(event)


_shared = _SharedObserver()


def follower_ms() -> float:
    """Python ms the page's followers have spent in their ResizeObserver and
    scroll callbacks so far: Python of the frame outside its frame callbacks."""
    return _shared.callback_ms


class ScrollFollower:
    """Follows `view` (an element) to its bottom; the button goes into `view`."""

    def __init__(self, view: Any, *, threshold_px: float = 8.0,
                 label: str = "Jump to latest") -> None:
        # js_shim/bridge.js: scrollCandidates, scrollingIndex, bottomGap, scrollPosition,
        # scrollsSmoothly, scrollToBottom, resizeWatcher, scrollsBut.
        self._geometry = js_bridge()
        self.view = view
        self.threshold_px = threshold_px
        self.pinned = True
        self._doc = js.document
        self._candidates: Any = None  # ancestors that may scroll (a JS array)
        self._scroller: Any = None  # the element that scrolls now; None: the page
        self._scroller_index: int | None = None  # its index in _candidates; None: unknown
        self._smooth = False  # the page asks it to scroll smoothly (it does not, here)
        self._last_top = 0.0
        # Its resizes are followed in bridge.js while it stays pinned (`_follow`,
        # `_hand_back`).
        self.handed_over = False
        view.style.overflowAnchor = "none"
        # A sticky bar at the end of the view: in sight at the bottom of whatever
        # scrolls it, also without the stylesheet.
        self.bar = self._doc.createElement("div")
        self.bar.className = "sp-jump"
        self.bar.style.position = "sticky"
        self.bar.style.bottom = "0"
        self.bar.hidden = True
        self._button_shown = False  # what bar.hidden says (only we write it)
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
        _shared.observe(view, self)
        self.closed = False

    # -- after each layout that changed a size -------------------------------
    def resized(self) -> None:
        """The view's size changed, after the browser laid the frame out: scroll to
        its bottom if pinned, else offer the button (geometry is clean here)."""
        if self.closed:
            return
        self._set_scroller(self._scrolling_index())
        if self.pinned:
            self._follow()
        else:
            self._show_button(self._distance() > self.threshold_px)

    def reset(self) -> None:
        """A new session in the view: follow it from the start."""
        self._hand_back()
        self.pinned = True
        self._candidates = None
        self._scroller_index = None
        self._show_button(False)

    def jump(self) -> None:
        """Scroll to the newest text and follow it again."""
        self.pinned = True
        self._set_scroller(self._scrolling_index())
        self._follow()

    def _follow(self) -> None:
        """Scroll the view's bottom into sight (pinned: the button is hidden)."""
        self._show_button(False)  # first: the bar is part of the view's height
        landed = self._geometry.scrollToBottom(self.view, self._scroller, self._smooth)
        if landed is not None:
            self._last_top = float(landed)
        if not self.handed_over:
            self.handed_over = True
            _shared.pin(self)

    def _hand_back(self) -> None:
        """Its resizes come to `resized` again (it is not pinned, or what it
        knows of its scroller changes)."""
        if self.handed_over:
            self.handed_over = False
            _shared.unpin(self)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._hand_back()
        self.button.removeEventListener("click", self._on_click_proxy)
        _shared.unobserve(self.view, self)
        if self.observed is not None:
            _shared.unobserve(self.observed, self)
        _shared.leave(self)
        self._on_click_proxy.destroy()
        self.bar.remove()

    # -- geometry ----------------------------------------------------------
    def _scrolling_index(self) -> int:
        """The index among the view's candidates of the one that scrolls it now, or
        -1: the page."""
        if self._candidates is None:
            self._candidates = self._geometry.scrollCandidates(self.view)
        return int(self._geometry.scrollingIndex(self._candidates))

    def _set_scroller(self, index: int) -> None:
        """Candidate `index` (-1: the page) scrolls the view now. A new one is
        observed too: its own resizes (a window resize, say) move the view's bottom."""
        if index == self._scroller_index:
            return  # the same one of the same candidates: nothing to compare
        self._hand_back()
        self._scroller_index = index
        scroller = self._candidates[index] if index >= 0 else None
        if scroller is not None and scroller != self.observed:
            if self.observed is not None:
                _shared.unobserve(self.observed, self)
            _shared.observe(scroller, self)
            self.observed = scroller
        self._scroller = scroller
        self._smooth = bool(self._geometry.scrollsSmoothly(scroller))

    def _top(self) -> float:
        return float(self._geometry.scrollPosition(self._scroller))

    def _distance(self) -> float:
        """How far the view's bottom lies below the bottom of what shows it (px)."""
        return float(self._geometry.bottomGap(self.view, self._scroller))

    def _show_button(self, show: bool) -> None:
        if self._button_shown != show:
            self._button_shown = show
            self.bar.hidden = not show

    # -- the reader --------------------------------------------------------
    def on_scroll(self, event: Any) -> None:
        """A scroll anywhere in the document (the shared listener's)."""
        el = self._scroller
        target = event.target
        if el is None:
            if target != self._doc:
                # An element scrolled: it may be ours, now taller than itself.
                self._set_scroller(self._scrolling_index())
                el = self._scroller
                if el is None or target != el:
                    return
        elif target != el:
            return
        top = self._top()
        if self.handed_over:
            followed = _shared.followed_top(self)  # bridge.js has scrolled it since
            if followed is not None:
                self._last_top = max(self._last_top, followed)
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
        if not self.pinned:
            self._hand_back()
        self._show_button(not self.pinned and distance > self.threshold_px)

    def on_wheel(self, event: Any) -> None:
        # Before the scroll it causes: so the next commit does not pull the view
        # back down while a smooth wheel scroll is under way.
        if event.deltaY >= 0 or not self.pinned:
            return
        el = self._scroller
        if el is None or el.contains(event.target):
            self.pinned = False
            self._hand_back()

    def _on_click(self, _event: Any) -> None:
        self.jump()
