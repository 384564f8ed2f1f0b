// The lean PyProxy check's test page part (tests/browser/test_lean_check.py):
// run in the page's own realm, with the page's own module of js_shim/lean_check.js
// (a WebDriver script may import a separate copy, and makes its objects in a
// realm of its own). Sets `window.__leanCheck`.
import { leanProxyCheck, replacedCheck } from "../../../js_shim/lean_check.js";

// Each value's three answers: the installed test (`instanceof`), Pyodide's own
// (replaced), and Pyodide's `isPyProxy` (what its C side asks).
async function compare(pythonList) {
  const py = await window.streampace.runtime();
  const original = replacedCheck();
  const marked = performance.getEntriesByName("streampace:lean-proxy-check").length;
  if (original === null) return { installed: false, marked };
  const PyProxy = py.ffi.PyProxy;
  const list = py.runPython(pythonList);
  const proxies = list.toJs({ depth: 1 });
  const destroyed = py.runPython("lambda: 0");
  destroyed.destroy();
  const values = [...proxies, list, py.globals, destroyed, {}, [], () => 0, function f() {},
                  Object.create(null), new Proxy({}, {}), new Proxy(() => 0, {}), new Map(),
                  0, 2.5, "", "s", true, null, undefined, Symbol("x"), 10n,
                  document.body, Promise.resolve(1)];
  const rows = values.map((v, i) => [i, v instanceof PyProxy, original.call(PyProxy, v),
                                     py._api.isPyProxy(v)]);
  const sized = py.ffi.PyProxyWithLength;
  const lengths = [proxies[6] instanceof sized, proxies[0] instanceof sized];
  for (const p of proxies) p.destroy();
  list.destroy();
  return { installed: PyProxy[Symbol.hasInstance] !== original, marked,
           proxies: proxies.length, rows, lengths };
}

// A Pyodide whose PyProxy test says yes to everything: the lean test, which says
// no to a plain object, does not match it and must not replace it.
function declines() {
  const own = function () { return true; };
  class Fake {}
  Object.defineProperty(Fake, Symbol.hasInstance, { value: own, configurable: true,
                                                    writable: true });
  const callable = Object.setPrototypeOf(function () {}, Object.create(Function.prototype));
  callable.destroy = () => {};
  const builtins = { len: callable, destroy() {} };
  const fake = { ffi: { PyProxy: Fake }, globals: { get: () => builtins } };
  const installed = leanProxyCheck(fake);
  return { installed, kept: Fake[Symbol.hasInstance] === own };
}

window.__leanCheck = { compare, declines };
