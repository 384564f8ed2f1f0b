// Records what a page embedding the tag without data-stream can observe.
const rec = (window.__rec = { ready: false, events: [] });
rec.visibleText = () => [...document.querySelectorAll("#answer .sp-message[data-role=assistant] .sp-text")]
  .map((n) => n.textContent).join("");
for (const name of ["streampace:ready", "streampace:error"]) {
  document.addEventListener(name, (ev) => {
    rec.events.push({ name, detail: ev.detail });
    if (name === "streampace:ready") rec.ready = true;
  });
}
