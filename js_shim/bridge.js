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

export function prefersReducedMotion() {
  return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

// Full-jitter exponential backoff: a uniform delay in [base/2, cap'] where cap'
// doubles per failed attempt, so many clients reconnecting at once spread out.
export function backoffDelay(attempt, baseMs = 250, capMs = 10000) {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

// One WebSocket session stream.  Opens at once and keeps every item (open,
// message, close) in order until a sink is attached; then hands them over in
// that order and directly from then on.  Reconnects with backoff and resumes
// after the highest `through` received in the session epoch the server named
// (protocol v2), so nothing is lost or duplicated, also across a restart.
// `probeUrl`: first ask that URL (HEAD) whether a streampace server is there,
// and only then open the socket; without one, report a close that was never
// open, so a page on plain static files logs no failed WebSocket handshake.
export class SessionSocket {
  constructor(url, { autoReconnect = true, retryBeforeOpen = true, baseMs = 250, capMs = 10000,
                     probeUrl = null } = {}) {
    this.url = url;
    this.autoReconnect = autoReconnect;
    // false: a first connection that fails is final (the demo's server probe).
    this.retryBeforeOpen = retryBeforeOpen;
    this.baseMs = baseMs;
    this.capMs = capMs;
    this.lastThrough = 0;
    this.epoch = null;
    this.attempt = 0;
    this.ws = null;
    this.timer = null;
    this.closedByUser = false;
    this.everOpened = false;
    this.backlog = [];
    this.sink = null;
    this.opens = 0;
    this.pendingSends = [];
    if (probeUrl) this.probeThenConnect(probeUrl);
    else this.connect();
  }

  async probeThenConnect(probeUrl) {
    let server = false;
    try {
      const res = await fetch(probeUrl, { method: "HEAD", cache: "no-store" });
      server = res.headers.has("x-streampace-protocol");
    } catch (_) { /* no answer: no server either */ }
    if (this.closedByUser) return;
    if (server) this.connect();
    else this.push("close", JSON.stringify({ code: 1006, reason: "no streampace server", wasOpen: false }));
  }

  connect() {
    this.closedByUser = false;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.push("error", String(err));
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.everOpened = true;
      this.opens++;
      const resume = { type: "resume", after: this.lastThrough };
      if (this.epoch !== null) resume.epoch = this.epoch;
      ws.send(JSON.stringify(resume));
      for (const data of this.pendingSends.splice(0)) ws.send(data);
      this.push("open", String(this.opens));
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || typeof ev.data !== "string") return;
      // `through` is read here only to resume after a reconnect that happens
      // while Python is still booting; Python parses the batch itself.
      const m = /^\s*\{\s*"through"\s*:\s*(\d+)/.exec(ev.data);
      if (m) this.lastThrough = Math.max(this.lastThrough, Number(m[1]));
      else if (ev.data.startsWith('{"type":"attached"')) {
        try {
          const epoch = JSON.parse(ev.data).epoch;
          // Another epoch numbers its events from 1 again: our position is void.
          if (this.epoch !== null && epoch !== this.epoch) this.lastThrough = 0;
          if (typeof epoch === "string") this.epoch = epoch;
        } catch (_) { /* Python reports malformed messages */ }
      } else if (ev.data.indexOf('"through"') >= 0) {
        try {
          const t = JSON.parse(ev.data).through;
          if (Number.isInteger(t)) this.lastThrough = Math.max(this.lastThrough, t);
        } catch (_) { /* Python reports malformed messages */ }
      }
      this.push("message", ev.data);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.push("close", JSON.stringify({ code: ev.code, reason: ev.reason, wasOpen: this.everOpened }));
      const retry = this.autoReconnect && (this.everOpened || this.retryBeforeOpen);
      if (!this.closedByUser && retry && ev.code !== 4400 && ev.code !== 4403) {
        this.scheduleReconnect();
      }
    };
    // onerror carries no detail and is always followed by onclose, which
    // reports the code; nothing to add here.
  }

  scheduleReconnect() {
    if (this.timer !== null || this.closedByUser) return;
    const delay = backoffDelay(this.attempt++, this.baseMs, this.capMs);
    this.push("reconnecting", JSON.stringify({ attempt: this.attempt, delayMs: Math.round(delay) }));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closedByUser) this.connect();
    }, delay);
  }

  push(kind, data) {
    if (this.sink !== null) this.sink(kind, data);
    else this.backlog.push([kind, data]);
  }

  // Attach the consumer: everything received so far is delivered first, in order.
  attach(sink) {
    const items = this.backlog.splice(0);
    this.sink = sink;
    for (const [kind, data] of items) sink(kind, data);
  }

  detach() {
    this.sink = null;
  }

  send(data) {
    if (this.ws !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
    else this.pendingSends.push(data);
  }

  // Drop the connection as a network failure would (demo "forced reconnect").
  drop() {
    if (this.ws !== null) this.ws.close(4000, "forced reconnect");
  }

  close() {
    this.closedByUser = true;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.ws !== null) {
      const ws = this.ws;
      this.ws = null;
      ws.close(1000, "client closed");
      this.push("close", JSON.stringify({ code: 1000, reason: "client closed", wasOpen: this.everOpened }));
    }
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }
}

export function openSession(url, options) {
  return new SessionSocket(url, options);
}
