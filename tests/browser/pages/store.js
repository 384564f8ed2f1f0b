// Store test page glue: records every store's snapshots as its listener sees
// them, the frame each listener call came in, and every node added to the page.
import { createStore } from "/js_shim/streampace.js";

const rec = { stores: {}, added: [], ready: true };
window.__store = rec;

new MutationObserver((records) => {
  for (const r of records) {
    for (const node of r.addedNodes) rec.added.push(node.nodeName);
  }
}).observe(document.documentElement, { childList: true, subtree: true });

// Frame of a listener call: document.timeline.currentTime is the same for every
// callback of one animation frame.
const frameTime = () => document.timeline.currentTime;

rec.make = async (name, options) => {
  const r = { snapshots: [], frames: [], changedWithoutCall: 0, calls: 0, store: null };
  rec.stores[name] = r;
  const store = await createStore(options);
  r.store = store;
  r.unsubscribe = store.subscribe(() => {
    r.calls++;
    r.snapshots.push(store.getSnapshot());
    r.frames.push(frameTime());
  });
  // Between listener calls the snapshot must not change.
  const check = () => {
    if (r.store === null) return;
    const last = r.snapshots.length ? r.snapshots[r.snapshots.length - 1] : null;
    if (last !== null && store.getSnapshot() !== last) r.changedWithoutCall++;
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
  return true;
};

// What a test reads: texts of the last snapshot and per-snapshot answer lengths.
rec.summary = (name, messageId) => {
  const r = rec.stores[name];
  const snaps = r.snapshots;
  const last = r.store.getSnapshot();
  const lengths = snaps.map((s) => {
    const m = s.messages.find((x) => x.id === messageId);
    return m ? m.text.length : -1;
  });
  let reused = 0;
  for (let i = 1; i < snaps.length; i++) {
    if (snaps[i].messages.length && snaps[i - 1].messages.length
        && snaps[i].messages[0] === snaps[i - 1].messages[0]) reused++;
  }
  return {
    calls: r.calls,
    distinct: new Set(snaps).size,
    lengths,
    sameFrameCalls: r.frames.length - new Set(r.frames).size,
    changedWithoutCall: r.changedWithoutCall,
    stableNow: r.store.getSnapshot() === r.store.getSnapshot(),
    frozen: Object.isFrozen(last) && Object.isFrozen(last.messages)
      && last.messages.every((m) => Object.isFrozen(m)),
    reusedFirstMessage: reused,
    last: JSON.parse(JSON.stringify(last)),
  };
};
