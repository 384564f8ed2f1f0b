// The host page's recorder: every streampace event, in order.
window.__rec = { events: [] };
for (const name of ["ready", "message-end", "run-end", "error", "queue"]) {
  document.addEventListener(`streampace:${name}`, (e) => {
    window.__rec.events.push({ name, detail: e.detail });
  });
}
