// The DOM events the view fires, next to what Python hears (they must agree).
const rec = (window.__dom = []);
for (const name of ["streampace:message-end", "streampace:run-end", "streampace:error"]) {
  document.addEventListener(name, (ev) => rec.push([name, ev.detail]));
}

// How this page's Python booted, for the tests: read here, in the page's own
// module graph (a WebDriver script's import() may get a module instance of its own).
import { runtimeInfo } from "../../../js_shim/pyscript.js";
window.__runtimeInfo = runtimeInfo;
