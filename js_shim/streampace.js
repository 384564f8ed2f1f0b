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
import { bootRuntime, mark } from "./boot.js";

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
class Instance {
  constructor({ target, stream = null, base = BASE, pace = true, snapshot = true, maxLag = "auto",
                format = "markdown", scroll = true, scriptEl = null }) {
    this.target = resolveTarget(target, scriptEl);
    this.base = base;
    this.controller = null;
    this.socket = null;
    this.startedAt = performance.now();
    this.bootMs = null;
    // Open the socket before anything else so no message waits for the boot.
    if (stream) this.socket = bridge.openSession(stream);
    this.progress = document.createElement("p");
    this.progress.setAttribute("role", "status");
    this.progress.className = "streampace-boot";
    this.progress.textContent = "Loading streampace…";
    this.target.append(this.progress);
    this.ready = this.boot(pace, snapshot, maxLag, format, scroll).catch((err) => {
      this.progress.textContent = `streampace failed to start: ${err && err.message ? err.message : err}`;
      bridge.emit(this.target, EVENTS.error, JSON.stringify({ where: "boot", code: "boot_failed", message: String(err) }));
      throw err;
    });
  }

  async boot(pace, snapshot, maxLag, format, scroll) {
    const pyodide = await loadRuntime(this.base, (text) => {
      this.progress.textContent = text;
    }, snapshot);
    const embed = pyodide.pyimport("streampace.browser.embed");
    // `undefined`, not null: a JS null reaches Python as JsNull, not None.
    this.controller = embed.start(bridge, this.target, this.socket ?? undefined, pace, maxLag, format,
                                  scroll);
    embed.destroy();
    mark("package-ready");
    this.progress.remove();
    this.bootMs = performance.now() - this.startedAt;
    mark("ready");
    bridge.emit(this.target, EVENTS.ready, JSON.stringify({
      bootMs: Math.round(this.bootMs), snapshot: runtimeInfo.snapshot,
    }));
    return this;
  }

  // Connect to a session stream (a ws:// URL or a path on this origin).
  // Before boot the new socket simply replaces the one Python will attach.
  connect(stream) {
    if (this.controller === null && this.socket !== null) this.socket.close();
    const socket = bridge.openSession(stream);
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
    const socket = bridge.openSession(stream);
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

  destroy() {
    if (this.controller !== null) {
      this.controller.close();
      this.controller.destroy();
      this.controller = null;
    } else if (this.socket !== null) {
      this.socket.close();
    }
    this.socket = null;
  }
}

function findOwnScript() {
  for (const el of document.querySelectorAll("script[type=module][src]")) {
    if (new URL(el.getAttribute("src"), location.href).href === import.meta.url) return el;
  }
  return null;
}

const instances = [];

function mount(options) {
  const inst = new Instance(options);
  instances.push(inst);
  return inst;
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
    scriptEl: own,
  });
}
