// streampace embed: one module script tag on any page.
//
//   <script type="module" src="/js_shim/streampace.js"
//           data-stream="ws://127.0.0.1:8000/ws/sessions/new" data-target="#answer"></script>
//
// Boots Pyodide from the same base path as this file (../vendor/pyodide/), opens
// the WebSocket at once and buffers what arrives while Python boots, then hands it
// over in order. Defines one global, `window.streampace`; adds no CSS to the page.

import * as bridge from "./bridge.js";
// pyproject.toml's version, written there by scripts/setup_runtime.
import { version } from "../vendor/streampace-version.js";
import { bootProblem, bootRuntime, mark } from "./boot.js";
import { Store, defineViewElement } from "./store.js";

const BASE = new URL("../", import.meta.url);
const EVENTS = {
  ready: "streampace:ready",
  messageEnd: "streampace:message-end",
  runEnd: "streampace:run-end",
  error: "streampace:error",
  queue: "streampace:queue",
};

let runtimePromise = null;
let runtimeInfo = null;

// One Pyodide per page, shared by every mounted instance (js_shim/boot.js:
// memory snapshot when it matches, ordinary boot otherwise).
function loadRuntime(base, onProgress, useSnapshot) {
  if (runtimePromise === null) {
    runtimePromise = bootRuntime({ base, onProgress, useSnapshot }).then((info) => {
      runtimeInfo = info;
      return info.pyodide;
    });
  }
  return runtimePromise;
}

function resolveTarget(target, fallbackAfter) {
  if (target instanceof Element) return target;
  if (typeof target === "string" && target) {
    const el = document.querySelector(target);
    if (el === null) throw new Error(`streampace: no element matches ${target}`);
    return el;
  }
  const el = document.createElement("div");
  if (fallbackAfter && fallbackAfter.parentNode) fallbackAfter.after(el);
  else document.body.append(el);
  return el;
}

// One mounted view: a target element, a session stream, a Python controller.
// `store`: headless (createStore): no element, the snapshots go to the store.
class Instance {
  constructor({ target, stream = null, base = BASE, pace = true, snapshot = true, maxLag = "auto",
                format = "markdown", scroll = true, announce = true, headingBase = "auto",
                scriptEl = null, store = null, remember = "tab", labels = null }) {
    this.store = store;
    // Where this view keeps the session the server mints for it (bridge.sessionStore),
    // under its mount order on the page.
    this.remember = remember;
    this.slot = instances.length + stores.length;
    this.target = store !== null ? store : resolveTarget(target, scriptEl);
    this.base = base;
    this.controller = null;
    this.socket = null;
    this.destroyed = false;
    this.failed = false;
    this.startedAt = performance.now();
    this.bootMs = null;
    // Open the socket before anything else so no message waits for the boot.
    if (stream) this.socket = this.open(stream);
    this.progress = null;
    if (store === null) {
      this.progress = document.createElement("p");
      this.progress.setAttribute("role", "status");
      this.progress.className = "streampace-boot";
      this.progress.textContent = "Loading streampace…";
      this.target.append(this.progress);
    }
    // The view's words: an object, or JSON text (data-labels).
    this.labels = labels === null || typeof labels === "string" ? labels : JSON.stringify(labels);
    this.ready = this.boot(pace, snapshot, maxLag, format, scroll, announce,
                           String(headingBase)).catch((err) => {
      if (this.destroyed) throw err; // destroyed while booting: nothing to report
      // In the view's place: what failed and the fix (boot.js bootProblem).
      const problem = bootProblem(err);
      this.failed = true;
      if (this.progress !== null) {
        this.progress.textContent = problem.message;
        this.progress.classList.add("streampace-boot-failed");
      }
      bridge.emit(this.target, EVENTS.error, JSON.stringify({ where: "boot", ...problem,
                                                               error: String(err) }));
      throw err;
    });
  }

  async boot(pace, snapshot, maxLag, format, scroll, announce, headingBase) {
    const pyodide = await loadRuntime(this.base, (text) => {
      // (A download still finishing after a failure does not overwrite its message.)
      if (this.progress !== null && !this.failed) this.progress.textContent = text;
    }, snapshot);
    if (this.destroyed) throw new Error("streampace: destroyed before it started");
    // `undefined`, not null: a JS null reaches Python as JsNull, not None.
    const socket = this.socket ?? undefined;
    if (this.store !== null) {
      const store = pyodide.pyimport("streampace.browser.store");
      this.controller = store.start(bridge, this.store, socket, pace, maxLag, format);
      store.destroy();
    } else {
      const embed = pyodide.pyimport("streampace.browser.embed");
      this.controller = embed.start(bridge, this.target, socket, pace, maxLag, format, scroll,
                                    announce, headingBase, this.labels ?? undefined);
      embed.destroy();
    }
    mark("package-ready");
    if (this.progress !== null) this.progress.remove();
    this.bootMs = performance.now() - this.startedAt;
    mark("ready");
    bridge.emit(this.target, EVENTS.ready, JSON.stringify({
      bootMs: Math.round(this.bootMs), snapshot: runtimeInfo.snapshot,
    }));
    return this;
  }

  open(stream) {
    return bridge.openSession(stream, {
      remember: bridge.sessionStore(this.remember), rememberKey: bridge.sessionKey(stream, this.slot),
    });
  }

  // Connect to a session stream (a ws:// URL or a path on this origin).
  // Before boot the new socket simply replaces the one Python will attach.
  connect(stream) {
    if (this.controller === null && this.socket !== null) this.socket.close();
    const socket = this.open(stream);
    this.socket = socket;
    if (this.controller !== null) this.controller.connect(socket);
    return this;
  }

  disconnect() {
    if (this.controller !== null) this.controller.disconnect();
    else if (this.socket !== null) this.socket.close();
    this.socket = null;
    return this;
  }

  // Show another session: the old session's queue is cleared, its view emptied.
  switchSession(stream) {
    if (this.controller === null) return this.connect(stream);
    const socket = this.open(stream);
    this.socket = socket;
    this.controller.switch_session(socket);
    return this;
  }

  // A client message ({type: "run" | "cancel", ...}). Resolves with what
  // happened to it, decided by Python (streampace.browser.outbox):
  // {status: "accepted" | "queued" | "refused", id, code?, message?}. Sent
  // during boot, it is decided once Python is up.
  send(message) {
    let text;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      return Promise.resolve({ status: "refused", id: null, code: "bad_message", message: String(err) });
    }
    return this.ready.then(
      () => JSON.parse(this.controller.send_json(text)),
      (err) => ({ status: "refused", id: null, code: "boot_failed", message: String(err && err.message ? err.message : err) }),
    );
  }

  // Take back a queued question (its id from send()); resolves true if it had not gone yet.
  withdraw(id) {
    return this.ready.then(() => this.controller.withdraw(String(id)), () => false);
  }

  // The questions waiting below the conversation: [{id, prompt, state}].
  queued() {
    if (this.controller === null) return [];
    return JSON.parse(this.controller.queued_json());
  }

  flush() {
    if (this.controller !== null) this.controller.flush();
    return this;
  }

  stats() {
    if (this.controller === null) return { booting: true };
    const stats = JSON.parse(this.controller.stats_json());
    stats.bootMs = this.bootMs;
    stats.boot = { snapshot: runtimeInfo.snapshot, fallback: runtimeInfo.fallback };
    return stats;
  }

  // Remove the view (a store: stop it): the socket is closed, every timer,
  // frame and listener stopped, the Python side freed. Idempotent.
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.controller !== null) {
      this.controller.close();
      this.controller.destroy();
      this.controller = null;
    } else if (this.socket !== null) {
      this.socket.close();
    }
    this.socket = null;
    if (this.progress !== null) this.progress.remove();
    for (const list of [instances, stores]) {
      const at = list.indexOf(this);
      if (at >= 0) list.splice(at, 1);
    }
    this.ready.catch(() => {}); // destroyed while booting: not an error of the page's
  }
}

function findOwnScript() {
  for (const el of document.querySelectorAll("script[type=module][src]")) {
    if (new URL(el.getAttribute("src"), location.href).href === import.meta.url) return el;
  }
  return null;
}

const instances = [];
const stores = [];

// A view in options.target; returns its handle (ready, send, flush, destroy, ...).
export function mount(options) {
  const inst = new Instance({ ...options, store: null });
  instances.push(inst);
  return inst;
}

// A stream path for `session` (an id of the visitor's own), or `stream` as given.
function streamOf(stream, session) {
  if (stream) return stream;
  if (session) return `/ws/sessions/${encodeURIComponent(session)}`;
  return null;
}

// A headless store (docs/browser.md, "Use it from React, Vue, Svelte"):
// resolves once Python runs; nothing is added to the page.
export function createStore({ stream = null, session = null, pace = true, format = "markdown",
                              maxLag = "auto", snapshot = true, remember = "tab" } = {}) {
  let inst = null;
  const store = new Store({
    send: (message) => inst.send(message),
    flush: () => inst.flush(),
    stats: () => inst.stats(),
    destroy: () => inst.destroy(),
  });
  inst = new Instance({ store, stream: streamOf(stream, session), pace: pace !== false && pace !== "off",
                        maxLag, snapshot, format, remember });
  store.format = format;
  stores.push(inst);
  return inst.ready.then(() => store);
}

const first = () => {
  if (instances.length === 0) throw new Error("streampace: nothing mounted (add data-target or call streampace.mount)");
  return instances[0];
};

const api = {
  version,
  events: EVENTS,
  instances,
  mount,
  createStore,
  get ready() { return first().ready; },
  connect: (stream) => first().connect(stream),
  disconnect: () => first().disconnect(),
  switchSession: (stream) => first().switchSession(stream),
  send: (message) => first().send(message),
  withdraw: (id) => first().withdraw(id),
  queued: () => first().queued(),
  flush: () => first().flush(),
  stats: () => first().stats(),
  // The page's Pyodide (booted once, shared by all instances), for pages that
  // add their own Python; resolves after the first instance booted.
  runtime: () => runtimePromise,
};

if (!("streampace" in window)) {
  Object.defineProperty(window, "streampace", { value: Object.freeze(api), enumerable: false });
}

defineViewElement(mount);

const own = findOwnScript();
if (own !== null && (own.dataset.target || own.dataset.stream)) {
  mount({
    target: own.dataset.target || null,
    stream: own.dataset.stream || null,
    pace: own.dataset.pace !== "off",
    snapshot: own.dataset.snapshot !== "off",
    maxLag: own.dataset.maxLag || "auto", // data-max-lag="120" (ms) or "auto"
    format: own.dataset.format || "markdown",
    scroll: own.dataset.scroll !== "off", // data-scroll="off": no following
    announce: own.dataset.announce !== "off", // data-announce="off": no live region
    headingBase: own.dataset.headingBase || "auto", // data-heading-base="3", "auto" or "off"
    remember: own.dataset.remember || "tab", // data-remember="none" | "local"
    labels: own.dataset.labels || null, // data-labels='{"user": "Me"}'
    scriptEl: own,
  });
}
