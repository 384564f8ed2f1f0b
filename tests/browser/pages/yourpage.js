// Host page glue for tests/browser/test_your_page.py: a layout (?layout=page |
// container | grid), the stylesheet or not (?css=1), and the tag mounted either
// with the API (default) or as a real <script data-*> tag (?tag=1; ?scroll=off).
const params = new URLSearchParams(location.search);
document.body.classList.add(params.get("layout") || "page");
const rec = { events: [] };
window.__rec = rec;
for (const name of ["streampace:ready", "streampace:message-end", "streampace:run-end",
                    "streampace:error"]) {
  document.addEventListener(name, (ev) => rec.events.push({ name, detail: ev.detail }));
}
if (params.get("css") === "1") {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/js_shim/streampace.css";
  await new Promise((resolve) => { link.onload = resolve; document.head.append(link); });
}
const stream = `/ws/sessions/${params.get("sid")}`;
if (params.get("tag") === "1") {
  const tag = document.createElement("script");
  tag.type = "module";
  tag.src = "/js_shim/streampace.js";
  tag.dataset.stream = stream;
  tag.dataset.target = "#answer";
  if (params.get("scroll")) tag.dataset.scroll = params.get("scroll");
  document.body.append(tag);
} else {
  await import("/js_shim/streampace.js");
  window.streampace.mount({ target: "#answer", stream });
}
