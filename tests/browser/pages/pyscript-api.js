// The DOM events the view fires, next to what Python hears (they must agree).
const rec = (window.__dom = []);
for (const name of ["streampace:message-end", "streampace:run-end", "streampace:error"]) {
  document.addEventListener(name, (ev) => rec.push([name, ev.detail]));
}
