// The headless store's JS side (streampace.createStore) and the <streampace-view>
// element. No pacing here: Python (streampace.browser.store) decides what the
// snapshot holds and when it changes, at most once per animation frame, and
// hands over only what changed; this keeps frozen copies and tells listeners.

const EMPTY = deepFreeze({
  messages: [],
  run: { status: "idle", error: null, code: null },
  connection: { state: "none", problem: null },
  queued: [],
});

// Object.freeze all the way down, without recursion (our own JSON, but its
// depth is the stream's: tool results).
function deepFreeze(root) {
  const stack = [root];
  while (stack.length) {
    const value = stack.pop();
    if (value === null || typeof value !== "object" || Object.isFrozen(value)) continue;
    Object.freeze(value);
    for (const key of Object.keys(value)) stack.push(value[key]);
  }
  return root;
}

// The next snapshot from the previous one and a patch (paced_store.StoreModel.take_patch):
// unchanged messages, run, connection and queue keep their objects.
function nextSnapshot(prev, patch) {
  let messages = prev.messages;
  if (patch.messages !== undefined) {
    const next = messages.slice(0, patch.length);
    for (const [index, record] of patch.messages) {
      if (record.id !== undefined) {
        next[index] = deepFreeze(record); // a whole message
        continue;
      }
      // Only grown: the new text appended (a rope in the engine, not a copy).
      const grown = { ...prev.messages[index], done: record.done };
      if (record.more !== undefined) grown.text += record.more;
      if (record.reasoningMore !== undefined) grown.reasoning = (grown.reasoning ?? "") + record.reasoningMore;
      next[index] = Object.freeze(grown);
    }
    messages = Object.freeze(next);
  }
  return Object.freeze({
    messages,
    run: patch.run !== undefined ? deepFreeze(patch.run) : prev.run,
    connection: patch.connection !== undefined ? deepFreeze(patch.connection) : prev.connection,
    queued: patch.queued !== undefined ? deepFreeze(patch.queued) : prev.queued,
  });
}

// useSyncExternalStore's contract: subscribe(listener) -> unsubscribe,
// getSnapshot() -> the same object until a frame changed it. Both are bound
// (pass them as they are). Also an EventTarget: "streampace:error" and
// "streampace:ready" are fired on it.
export class Store extends EventTarget {
  #snapshot = EMPTY;
  #listeners = new Set();
  #instance = null;

  constructor(instance) {
    super();
    this.#instance = instance;
    this.destroyed = false;
    this.subscribe = (listener) => {
      if (typeof listener !== "function") throw new TypeError("streampace: subscribe(listener)");
      if (this.destroyed) return () => {};
      this.#listeners.add(listener);
      return () => { this.#listeners.delete(listener); };
    };
    this.getSnapshot = () => this.#snapshot;
  }

  // A client message, as streampace.send.
  send(message) { return this.#instance.send(message); }

  // Reveal everything queued now (shown at the next frame).
  flush() { this.#instance.flush(); }

  // Counters, as streampace.stats().
  stats() { return this.#instance.stats(); }

  // Close the socket, stop every timer and frame, free the Python side; no
  // listener is called again.
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.#listeners.clear();
    this.#instance.destroy();
  }

  // Python (streampace.browser.store.SnapshotSink): what a frame changed.
  _commit(patchJson) {
    if (this.destroyed) return;
    this.#snapshot = nextSnapshot(this.#snapshot, JSON.parse(patchJson));
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (err) {
        // One host's listener must not stop the others or the frame loop.
        if (typeof reportError === "function") reportError(err);
        else console.error(err);
      }
    }
  }
}

// <streampace-view stream="/ws/sessions/new" format="text" pace="off"
//   max-lag="120" scroll="off" snapshot="off" announce="off" heading-base="3">: the tag's view in light DOM
// (the host's CSS reaches it). Removing it destroys the view; setting
// `stream` shows that session.
export function defineViewElement(mount) {
  if (typeof customElements === "undefined" || customElements.get("streampace-view")) return;

  class StreampaceView extends HTMLElement {
    static observedAttributes = ["stream"];

    constructor() {
      super();
      this.instance = null;
    }

    get ready() { return this.instance ? this.instance.ready : Promise.reject(new Error("not connected")); }

    connectedCallback() {
      if (this.instance !== null) return;
      const attr = (name) => this.getAttribute(name);
      this.instance = mount({
        target: this,
        stream: attr("stream") || null,
        pace: attr("pace") !== "off",
        snapshot: attr("snapshot") !== "off",
        maxLag: attr("max-lag") || "auto",
        format: attr("format") || "markdown",
        scroll: attr("scroll") !== "off",
        announce: attr("announce") !== "off",
        headingBase: attr("heading-base") || "auto",
      });
      this.instance.ready.catch(() => {}); // reported as streampace:error on the element
    }

    disconnectedCallback() {
      // A move (removed and inserted again in one task) keeps the view.
      queueMicrotask(() => {
        if (!this.isConnected && this.instance !== null) {
          this.instance.destroy();
          this.instance = null;
        }
      });
    }

    attributeChangedCallback(name, old, value) {
      if (name !== "stream" || this.instance === null || old === value) return;
      if (value) this.instance.switchSession(value);
      else this.instance.disconnect();
    }

    send(message) { return this.instance.send(message); }
    flush() { this.instance?.flush(); }
    stats() { return this.instance?.stats(); }
  }

  customElements.define("streampace-view", StreampaceView);
}
