// Bridge between the page and the Python side: grapheme lengths, the session
// socket (opened before Python exists, buffering what arrives), DOM events.
// No pacing here: everything that decides what becomes visible is Python.

const graphemes =
  typeof Intl !== "undefined" && Intl.Segmenter
    ? new Intl.Segmenter(undefined, { granularity: "grapheme" })
    : null;

// Code-point lengths of the grapheme clusters of `text`, in one call, so Python
// never crosses the FFI once per grapheme.  Returns null when Intl.Segmenter is
// unavailable (Python then segments with its own FallbackSegmenter).
export function graphemeLengths(text) {
  if (graphemes === null) return null;
  const out = [];
  for (const { segment } of graphemes.segment(text)) {
    let n = 0;
    for (let i = 0; i < segment.length; i++) {
      const c = segment.charCodeAt(i);
      // A high surrogate followed by its low surrogate is one code point.
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < segment.length) {
        const d = segment.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
      n++;
    }
    out.push(n);
  }
  return Uint32Array.from(out);
}

export function hasSegmenter() {
  return graphemes !== null;
}

// Fire a bubbling CustomEvent from `el`; `detailJson` is a JSON string so the
// detail is a plain JS object, not a Python proxy that would need destroying.
export function emit(el, name, detailJson) {
  const detail = detailJson ? JSON.parse(detailJson) : null;
  el.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
}

// ---- element building for the Markdown view (streampace.browser.dom_calls) --
// Python picks the tags and sanitises every attribute (markdown_dom.py); these
// make each build one crossing. Through the FFI, `el.setAttribute(n, v)` is an
// attribute lookup that brings a new function proxy into Python (Pyodide probes
// the function's type for it) and then the call; a code line's tokens or a
// table row's cells are a dozen of them in one frame.

// A new `tag` element of `doc` with attributes `name, value, name, value, ...`.
export function element(doc, tag, ...attributes) {
  const el = doc.createElement(tag);
  for (let i = 0; i + 1 < attributes.length; i += 2) {
    el.setAttribute(attributes[i], attributes[i + 1]);
  }
  return el;
}

export function appendTo(parent, ...children) {
  parent.append(...children);
}

export function setAttribute(el, name, value) {
  el.setAttribute(name, value);
}

// The frame's text write (a Text node's), the same lookup saved.
export function appendData(node, text) {
  node.appendData(text);
}

// ---- the scroll follower's geometry (streampace.browser.scroll) -------------
// Reads and one scroll, a call each, for Python's follower, which decides what
// to do with them (pinned, unpinned, the button). Each replaces five to ten
// attribute reads through the FFI: the follower's ResizeObserver callback cost
// ~1.1 ms at 4x CPU, mostly those crossings. `scroller` is an element, or
// null/undefined for the page.

const SCROLLING = ["auto", "scroll", "overlay"];

// The ancestors of `view` that may scroll (overflow-y auto, scroll, overlay),
// nearest first, below the body.
export function scrollCandidates(view) {
  const out = [];
  const root = document.documentElement;
  for (let el = view.parentElement; el && el !== document.body && el !== root;
       el = el.parentElement) {
    if (SCROLLING.includes(getComputedStyle(el).overflowY)) out.push(el);
  }
  return out;
}

// The index of the first of `candidates` that scrolls now (content taller than
// itself), or -1: the page scrolls the view.
export function scrollingIndex(candidates) {
  for (let i = 0; i < candidates.length; i++) {
    const el = candidates[i];
    if (el.isConnected && el.scrollHeight > el.clientHeight + 1) return i;
  }
  return -1;
}

// How far the bottom of `view` lies below the bottom of what shows it (px).
export function bottomGap(view, scroller) {
  const bottom = view.getBoundingClientRect().bottom;
  if (!scroller) return bottom - document.documentElement.clientHeight;
  const rect = scroller.getBoundingClientRect();
  return bottom - (rect.top + scroller.clientTop + scroller.clientHeight);
}

export function scrollPosition(scroller) {
  return scroller ? scroller.scrollTop : window.scrollY;
}

// Whether the page asks `scroller` (or the page) to scroll smoothly.
export function scrollsSmoothly(scroller) {
  return getComputedStyle(scroller || document.documentElement).scrollBehavior === "smooth";
}

// Where scrollToBottom last left each target (an element, or the document for the
// page) whose scroll event has not come yet.
const landed = new WeakMap();

// Scroll `scroller` (or the page) down so that the bottom of `view` is at its
// bottom, at once, whatever the page's scroll-behavior, if it lies more than half
// a pixel below; return where it landed, or undefined if it did not scroll (None
// in Python; null would be Pyodide's JsNull). Setting scrollTop costs about half
// of scrollTo's call (Chromium's scrollTo makes and settles a Promise; at 4x CPU
// 0.33 against 0.57 ms a scroll), but it would animate where the page asks for
// smooth scrolling (`smooth`): there scrollTo with behavior "instant", its
// Promise dropped here, not turned into a Future whose resolution would run
// Python again in a task of its own.
export function scrollToBottom(view, scroller, smooth) {
  const gap = bottomGap(view, scroller);
  if (!(gap > 0.5)) return undefined;
  const top = scrollPosition(scroller) + gap;
  if (smooth) (scroller || window).scrollTo({ top, behavior: "instant" });
  else (scroller || document.scrollingElement || document.documentElement).scrollTop = top;
  const at = scrollPosition(scroller);
  landed.set(scroller || document, at);
  return at;
}

// `handler` for scroll events, except the one each of scrollToBottom's scrolls
// causes: the next scroll event of its target, finding it still where
// scrollToBottom left it. While text streams in, that is one event a frame, which
// the follower would only acknowledge (it scrolled there itself), at the cost
// of a call into Python. Any other scroll (the reader's, a clamp, another
// script's) reaches `handler`.
export function scrollsBut(handler) {
  return (event) => {
    const target = event.target === document ? document : event.target;
    if (landed.has(target)) {
      const at = landed.get(target);
      landed.delete(target);
      if (scrollPosition(target === document ? null : target) === at) return;
    }
    handler(event);
  };
}

// One character per element of `watched`: "1" if one of the ResizeObserver
// `entries` is about it, else "0" (Python compares no element through the FFI).
function resizedFlags(entries, watched) {
  let flags = "";
  for (const el of watched) {
    flags += entries.some((entry) => entry.target === el) ? "1" : "0";
  }
  return flags;
}

// The followers' one ResizeObserver: `handler` (Python's) gets the flags of
// `watched` (a live array, kept in step by Python) and nothing else. Handed the
// entries and the observer, it took two JS objects into Python each time the
// observer fired, about once a frame while text streams, each a new proxy that
// Pyodide type-probes, and called back out for the flags.
//
// A pinned follower hands its scrolling over (`pin`: its view, the view's scroll
// candidates, the index of the one that scrolls it, smooth or not), and while
// every follower of each element that changed size has (Python says which
// elements: `cover`), the resize is followed here as Python's follower would:
// each pinned view whose view or scroller changed size is scrolled to its
// bottom. That call into Python, once a frame while text streams, cost ~0.8 ms
// at 4x CPU, most of it Pyodide's entry (python -m bench.frame_trace). Python
// still decides: any other resize (of an element a follower not pinned
// watches, of a view another ancestor scrolls now) calls `handler` as before,
// and Python takes a pin back (`unpin`) when the reader moves away.
// `followedTop(view)`: where the last scroll here left the view's scroller
// (undefined: none since `pin`), which Python reads to tell the reader's
// scroll up from these.
export function resizeWatcher(handler, watched) {
  const pins = new Map();
  const covered = new Set();
  const observer = new ResizeObserver((entries) => {
    if (entries.every((e) => covered.has(e.target)) && followPinned(entries, pins)) return;
    handler(resizedFlags(entries, watched));
  });
  return {
    observe: (el) => observer.observe(el),
    unobserve: (el) => { covered.delete(el); observer.unobserve(el); },
    disconnect: () => { covered.clear(); pins.clear(); observer.disconnect(); },
    cover: (el, yes) => { if (yes) covered.add(el); else covered.delete(el); },
    pin: (view, candidates, index, smooth) => {
      pins.set(view, { candidates, index, scroller: index >= 0 ? candidates[index] : null,
                       smooth, top: undefined });
    },
    unpin: (view) => { pins.delete(view); },
    followedTop: (view) => pins.get(view)?.top,
  };
}

// Scroll each pinned view that `entries` touch to its bottom; false (nothing
// scrolled) when one of them is scrolled by another of its candidates now.
function followPinned(entries, pins) {
  const due = [];
  for (const [view, pin] of pins) {
    if (!entries.some((e) => e.target === view || e.target === pin.scroller)) continue;
    if (scrollingIndex(pin.candidates) !== pin.index) return false;
    due.push([view, pin]);
  }
  for (const [view, pin] of due) {
    const at = scrollToBottom(view, pin.scroller, pin.smooth);
    if (at !== undefined) pin.top = at;
  }
  return true;
}

export function prefersReducedMotion() {
  return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

// ---- the session socket ------------------------------------------------------
// It only moves bytes. Python (streampace.client.connection) decides when to
// reconnect, from which position, and what a close means; this executes
// open / send / close / probe and reports what happened, in order, as items
// (kind, data): "open" ("greeted" or ""), "message" (text), "close"
// ({code, reason} JSON), "probe" ({reachable, status, protocol} JSON), and on
// attach "unsent" (a send queued before it that never went out).
// The only protocol it knows is the block below, generated from Python.

// <protocol> generated by `python -m streampace.session.protocol_js` - do not edit
export const PROTOCOL = Object.freeze({
  "forcedReconnect": {
    "code": 4000,
    "reason": "forced reconnect"
  },
  "header": "x-streampace-protocol",
  "hello": "{\"type\":\"resume\",\"after\":0}",
  "normalClose": {
    "code": 1000,
    "reason": "client closed"
  },
  "reloadHello": "{\"type\":\"resume\",\"after\":9007199254740991}",
  "version": 3
});
// </protocol>

// A stream URL as the WebSocket wants it: relative to the page, http(s) as ws(s).
function wsURL(stream) {
  const url = new URL(stream, location.href);
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  return url.href;
}

// The stream's URL as a plain HTTP(S) URL (for a probe).
function httpURL(wsUrl) {
  const url = new URL(wsUrl, location.href);
  if (url.protocol === "ws:") url.protocol = "http:";
  else if (url.protocol === "wss:") url.protocol = "https:";
  return url.href;
}

// A HEAD request: does anything answer there, with which status, and is it a
// streampace server? Cross-origin answers are opaque (status null): only
// "something answers" can be known. Never rejects.
async function head(url) {
  const sameOrigin = new URL(url).origin === location.origin;
  try {
    const res = await fetch(url, {
      method: "HEAD", cache: "no-store", credentials: "omit",
      mode: sameOrigin ? "same-origin" : "no-cors",
      signal: typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(5000) : undefined,
    });
    return {
      reachable: true,
      status: res.type === "opaque" ? null : res.status,
      protocol: res.headers.has(PROTOCOL.header),
    };
  } catch (_) {
    return { reachable: false, status: null, protocol: false };
  }
}

// One WebSocket session stream. It opens at once (before Python exists, so the
// handshake overlaps the boot). Until a sink is attached it keeps every item
// and, on its open, sends PROTOCOL.hello (a fresh viewer's resume) and what was
// queued itself; it never reconnects on its own. `probeUrl`: first ask that
// URL (HEAD) whether a streampace server is there and only then open the
// socket, so a page on plain static files logs no failed WebSocket handshake;
// without one it reports the probe and opens nothing.
// `retryBeforeOpen` / `autoReconnect` are options for Python's connection.
export class SessionSocket {
  constructor(url, { probeUrl = null, retryBeforeOpen = true, autoReconnect = true,
                     remember = null, rememberKey = null } = {}) {
    this.url = url;
    this.askedUrl = url; // as the page gave it (`.../new` asks for a minted session)
    this.store = remember;
    this.key = remember !== null && rememberKey !== null ? `streampace:session:${rememberKey}` : null;
    // Opened at the session this tab had before a reload: the first resume asks
    // for a snapshot (shown at once, nothing replayed twice).
    this.reloaded = false;
    const kept = this.recall();
    if (kept !== null) {
      this.url = kept;
      this.reloaded = true;
    }
    this.retryBeforeOpen = retryBeforeOpen;
    this.autoReconnect = autoReconnect;
    this.ws = null;
    this.closed = false;
    this.opens = 0;
    this.backlog = [];
    this.sink = null;
    this.unsent = []; // sends before attach, not sent yet
    if (probeUrl) this.probeFirst(probeUrl);
    else this.open();
  }

  async probeFirst(probeUrl) {
    const found = await head(new URL(probeUrl, location.href).href);
    if (this.closed) return;
    if (found.protocol) this.open();
    else this.push("probe", JSON.stringify(found));
  }

  // Open a WebSocket to this.url (Python calls it again to reconnect).
  open() {
    if (this.closed) return;
    const old = this.unhook();
    if (old !== null) old.close();
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      // A malformed URL or a blocked port: a handshake that failed at once.
      this.push("close", JSON.stringify({ code: 1006, reason: String(err).slice(0, 120) }));
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      this.opens++;
      const greeted = this.sink === null;
      if (greeted) {
        ws.send(this.reloaded ? PROTOCOL.reloadHello : PROTOCOL.hello);
        for (const data of this.unsent.splice(0)) ws.send(data);
      }
      this.push("open", greeted ? "greeted" : "");
    };
    ws.onmessage = (ev) => {
      this.push("message", typeof ev.data === "string" ? ev.data : null);
    };
    ws.onclose = (ev) => {
      this.ws = null;
      this.push("close", JSON.stringify({ code: ev.code, reason: ev.reason }));
    };
    // onerror carries no detail and is always followed by onclose.
  }

  // Python: open the next socket at this URL (a session the server minted for us).
  // The tab remembers a minted session (and forgets it when the server asks
  // for a new one): the stream URL with the id goes only to this storage.
  retarget(url) {
    this.url = url;
    if (url === this.askedUrl) this.keep(null);
    else this.keep(url);
  }

  // The session URL kept for this stream, if it is one the asked URL could have
  // been minted as (same origin and directory: a tampered value goes nowhere else).
  recall() {
    if (this.key === null) return null;
    let kept = null;
    try {
      kept = this.store.getItem(this.key);
    } catch (_) {
      return null; // storage blocked (sandboxed frame, privacy settings): a new session
    }
    if (typeof kept !== "string" || kept.length > 2048) return null;
    try {
      const asked = new URL(this.askedUrl);
      const url = new URL(kept);
      const dir = (u) => u.pathname.slice(0, u.pathname.lastIndexOf("/") + 1);
      if (url.origin !== asked.origin || dir(url) !== dir(asked) || url.search !== asked.search) return null;
    } catch (_) {
      return null;
    }
    return kept;
  }

  keep(url) {
    if (this.key === null) return;
    try {
      if (url === null) this.store.removeItem(this.key);
      else this.store.setItem(this.key, url);
    } catch (_) { /* storage full or blocked: the session lasts as long as the page */ }
  }

  // Forget the current WebSocket's callbacks (it reports nothing more).
  unhook() {
    const ws = this.ws;
    if (ws === null) return null;
    ws.onopen = ws.onmessage = ws.onclose = null;
    this.ws = null;
    return ws;
  }

  send(data) {
    if (this.ws !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
    else if (this.sink === null) this.unsent.push(data);
    // Attached and not open: Python sends only while open; a close report is on its way.
  }

  // Python: why did the handshake fail? Reports a "probe" item.
  probe() {
    head(httpURL(this.url)).then((found) => {
      if (!this.closed) this.push("probe", JSON.stringify(found));
    });
  }

  push(kind, data) {
    if (this.sink !== null) this.sink(kind, data);
    else this.backlog.push([kind, data]);
  }

  // Attach the consumer: everything so far is delivered first, in order.
  attach(sink) {
    this.sink = sink;
    for (const [kind, data] of this.backlog.splice(0)) {
      if (this.sink !== sink) return; // closed or detached meanwhile
      sink(kind, data);
    }
    for (const data of this.unsent.splice(0)) {
      if (this.sink !== sink) return;
      sink("unsent", data);
    }
  }

  detach() {
    this.sink = null;
  }

  // Drop the connection as a network failure would (the demo's "forced reconnect").
  drop() {
    if (this.ws !== null) this.ws.close(PROTOCOL.forcedReconnect.code, PROTOCOL.forcedReconnect.reason);
  }

  // For good: reports nothing more.
  close(code = PROTOCOL.normalClose.code, reason = PROTOCOL.normalClose.reason) {
    this.closed = true;
    this.sink = null;
    const ws = this.unhook();
    if (ws !== null) ws.close(code, reason);
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }
}

export function openSession(url, options) {
  return new SessionSocket(wsURL(url), options);
}

// Where a tab keeps the session the server minted for it, so a reload resumes
// it: "tab" (sessionStorage, the default: a new tab is a new conversation),
// "local" (localStorage: every tab of this origin), "none", or the host's own
// store (anything with getItem / setItem / removeItem).
export function sessionStore(policy = "tab") {
  if (policy === "none" || policy === false || policy === null) return null;
  if (typeof policy === "object") return policy;
  try {
    return policy === "local" ? window.localStorage : window.sessionStorage;
  } catch (_) {
    return null; // storage blocked: nothing is kept
  }
}

// The key a stream's session is kept under: its URL and the view's mount order.
export function sessionKey(url, slot) {
  return `${wsURL(url)}#${slot}`;
}
