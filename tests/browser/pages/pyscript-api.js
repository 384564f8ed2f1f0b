// The DOM events the view fires, next to what Python hears (they must agree).
const rec = (window.__dom = []);
for (const name of ["streampace:message-end", "streampace:run-end", "streampace:error"]) {
  document.addEventListener(name, (ev) => rec.push([name, ev.detail]));
}

// How this page's Python booted, for the tests: read here, in the page's own
// module graph (a WebDriver script's import() may get a module instance of its own).
import { runtimeInfo } from "../../../js_shim/pyscript.js";
window.__runtimeInfo = runtimeInfo;

// An observer of the page's own, made while PyScript's core loads (this module
// runs right after js_shim/pyscript.js, which holds the global meanwhile): it
// must still hear what is added inside the view. The tests read both.
window.__observerAtLoad = MutationObserver.name;
window.__addedInView = 0;
new MutationObserver((records) => {
  for (const r of records) {
    if (r.target.nodeType === Node.ELEMENT_NODE && r.target.closest(".sp-view")) {
      window.__addedInView += r.addedNodes.length;
    }
  }
}).observe(document, { childList: true, subtree: true });
