// Test page glue: records what the page looks like every animation frame
// (independently of streampace's own counters), then mounts the embed on the
// session named in ?sid= (no socket when ?sid= is absent).
const params = new URLSearchParams(location.search);
const seg = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const rec = { frames: [], events: [], globalsBefore: Object.getOwnPropertyNames(window) };
window.__rec = rec;

function visibleText() {
  const nodes = document.querySelectorAll("#answer .sp-message[data-role=assistant] .sp-text");
  let text = "";
  for (const n of nodes) text += n.textContent;
  return text;
}
rec.visibleText = visibleText;
rec.graphemes = (t) => [...seg.segment(t)].length;

// Every frame: [time, UTF-16 length of the visible answer, hidden?]. The time is
// performance.now() when this callback runs (the pacer measures elapsed time the
// same way), not the rAF timestamp, which can lag behind a busy main thread.
// While hidden there are no frames; a timer samples instead (throttled ~1/s).
function onFrame() {
  rec.frames.push([performance.now(), visibleText().length, document.hidden ? 1 : 0]);
  requestAnimationFrame(onFrame);
}
requestAnimationFrame(onFrame);
setInterval(() => {
  if (document.hidden) rec.frames.push([performance.now(), visibleText().length, 1]);
}, 200);
document.addEventListener("visibilitychange", () => {
  rec.frames.push([performance.now(), visibleText().length, document.hidden ? 1 : 0, "visibility"]);
});
// Boundaries (UTF-16 offsets) of the grapheme clusters of `text`.
rec.boundaries = (text) => {
  const out = [0];
  for (const { index, segment } of seg.segment(text)) out.push(index + segment.length);
  return out;
};

rec.longtasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) rec.longtasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (_) { /* not supported */ }

for (const name of ["streampace:ready", "streampace:message-end", "streampace:run-end", "streampace:error"]) {
  document.addEventListener(name, (ev) => rec.events.push({ name, detail: ev.detail, t: performance.now() }));
}

await import("/js_shim/streampace.js");
const sid = params.get("sid");
// Plain text unless ?format=markdown: the pacing tests compare the visible text
// with the source text character for character.
const format = params.get("format") || "text";
// ?stream=URL: any stream URL instead of the scripted session ?sid=;
// ?snapshot=off: the ordinary (slower) boot.
const stream = params.get("stream") || (sid ? `/ws/sessions/${sid}` : null);
// ?announce=off: no live region; ?heading=off|auto|1-6: data-heading-base.
const inst = window.streampace.mount({
  target: "#answer", stream, format, snapshot: params.get("snapshot") !== "off",
  announce: params.get("announce") !== "off", headingBase: params.get("heading") || "auto",
});
// How many socket messages were waiting, buffered, when Python attached: the
// ones that arrived during the boot.
if (inst.socket !== null) {
  const socket = inst.socket;
  const attach = socket.attach.bind(socket);
  socket.attach = (sink) => {
    rec.bufferedAtAttach = socket.backlog.filter(([kind]) => kind === "message").length;
    attach(sink);
  };
}
inst.ready.then(() => { rec.ready = true; rec.bootMs = inst.bootMs; });
