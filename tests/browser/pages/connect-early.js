// Runs right after the tag's module (module scripts run in document order), so
// long before Python is ready: connect() during the boot when ?sid= is given.
const sid = new URLSearchParams(location.search).get("sid");
if (sid) {
  window.__rec.connectedBeforeReady = !window.__rec.ready;
  window.streampace.connect(`/ws/sessions/${sid}`);
}
