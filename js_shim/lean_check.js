// `instanceof PyProxy` without garbage, installed once at boot (js_shim/boot.js).
//
// Pyodide asks "is this a PyProxy?" of every JS value that comes back into
// Python (its C side's `pyproxy_Check` calls `API.isPyProxy`, which is
// `value instanceof PyProxy`), and PyProxy's static `Symbol.hasInstance` builds
// an array of two classes and a closure to test them on every check. Over the
// long Markdown answer (`python -m bench.ffi_glue --trace md_32k`, embed) that
// was 4.2 of the page's 13.2 MB of JS allocations, about 30 checks a frame:
// garbage the page's scavenges then collect, in its frames.
//
// The two classes are PyProxy and the function Pyodide makes callable proxies
// from, whose prototype is a copy of PyProxy.prototype on top of
// Function.prototype. A value is an instance of one of them exactly when one of
// those two prototypes is on its prototype chain, which `isPrototypeOf` walks as
// `instanceof` does, allocating nothing. The second prototype is not exported:
// it is found on the chain of a callable proxy. The lean test replaces the
// original only if both answer alike on probes of every kind (proxies callable
// and not, plain objects and functions, a JS Proxy, primitives); any other
// Pyodide keeps its own.

const isPrototypeOf = Object.prototype.isPrototypeOf;

// Pyodide's own test, once replaced (tests compare the two).
let replaced = null;

export function replacedCheck() {
  return replaced;
}

// The prototype right above Function.prototype on `fn`'s chain, or null.
function functionBase(fn) {
  for (let p = Object.getPrototypeOf(fn); p !== null; p = Object.getPrototypeOf(p)) {
    if (Object.getPrototypeOf(p) === Function.prototype) return p;
  }
  return null;
}

function probes(pyodide, builtins, callable) {
  return [callable, builtins, pyodide.globals, {}, [], () => 0, function named() {},
          Object.create(null), new Proxy({}, {}), new Proxy(() => 0, {}), 0, 1.5, "",
          "text", true, null, undefined, Symbol("probe"), 10n];
}

function setCheck(cls, check) {
  Object.defineProperty(cls, Symbol.hasInstance, { value: check, configurable: true,
                                                   writable: true });
}

// Returns whether the lean test was installed.
export function leanProxyCheck(pyodide) {
  const PyProxy = pyodide.ffi && pyodide.ffi.PyProxy;
  const original = PyProxy && PyProxy[Symbol.hasInstance];
  if (typeof original !== "function") return false;
  let builtins = null;
  let callable = null;
  try {
    builtins = pyodide.globals.get("__builtins__");
    callable = builtins && builtins.len;
    const base = callable ? functionBase(callable) : null;
    if (base === null || base === PyProxy.prototype) return false;
    const own = PyProxy.prototype;
    const lean = (value) => isPrototypeOf.call(own, value) || isPrototypeOf.call(base, value);
    for (const value of probes(pyodide, builtins, callable)) {
      if (lean(value) !== original.call(PyProxy, value)) return false;
    }
    setCheck(PyProxy, lean);
    if (callable instanceof PyProxy && !({} instanceof PyProxy)) {
      replaced = original;
      return true;
    }
    setCheck(PyProxy, original);
    return false;
  } catch (_) {
    return false;
  } finally {
    if (callable && typeof callable.destroy === "function") callable.destroy();
    if (builtins && typeof builtins.destroy === "function") builtins.destroy();
  }
}
