// Mounts the embed with a base that has no vendor/ under it: the boot fails,
// and the page must say so instead of showing a spinner for ever.
const rec = (window.__rec = { events: [], failed: null });
document.addEventListener("streampace:error", (ev) => rec.events.push(ev.detail));
await import("/js_shim/streampace.js");
const inst = window.streampace.mount({ target: "#answer", base: new URL("/no-such-dir/", location.href) });
inst.ready.then(() => { rec.failed = false; }, (err) => { rec.failed = String(err); });
