// PyScript, behind this one module of ours.
//
// A PyScript page loads this module instead of PyScript's core:
//
//   <script type="module" src="./js_shim/pyscript.js"></script>
//   <script type="py" config="./pyscript.toml">import streampace ...</script>
//
// and pyscript.toml names it as PyScript's interpreter (`interpreter =
// "./js_shim/pyscript.js"`). It does two things:
//
// 1. At once, before PyScript's core is even fetched, it starts our boot
//    (js_shim/boot.js: Pyodide, our package, the memory snapshot), then loads
//    the pinned @pyscript/core from vendor/pyscript/.
// 2. As the interpreter module, it gives PyScript what it imports from a
//    Pyodide module URL (polyscript 0.20: `{loadPyodide, version}`, then
//    `loadPyodide({stdout, stderr, indexURL, ...})`): that Pyodide, booted by
//    us — the snapshot when it matches, the ordinary boot otherwise — with our
//    package importable.
//
// The same module URL is imported once, so the boot started by the page's
// <script> is the one the interpreter returns. A page that loads PyScript's core
// itself still works; the boot then starts when PyScript imports this.
// Nothing else of ours imports PyScript: the embed tag boots without it.

import { bootProblem, bootRuntime, config, cspViolations, mark } from "./boot.js";

const BASE = new URL("../", import.meta.url);
// The whole boot starts now, while PyScript's core loads, reads its config
// and loads its plugins: by the time PyScript asks for the interpreter, Python
// is (nearly) ready. One boot per page.
// Progress and failure are events on `document`, for the page's own UI:
// "streampace:progress" (detail: a sentence) and "streampace:error" (detail:
// {where: "boot", message}), as the embed tag reports on its target.
// How this page's Python booted (the demo, tests and the boot benchmark read it).
export const runtimeInfo = { snapshot: null, fallback: null };
const booted = bootRuntime({
  base: BASE,
  onProgress: (text) => document.dispatchEvent(new CustomEvent("streampace:progress", { detail: text })),
}).then((info) => {
  runtimeInfo.snapshot = info.snapshot;
  runtimeInfo.fallback = info.fallback;
  return info;
});
// A failure before the page's Python runs is said on the page, in place of what
// would have shown (the element with id "streampace-boot" if the page has one, else
// the top of the body), and as a "streampace:error" {where: "boot", code, message}.
let failed = false;
function bootFailed(err) {
  if (failed) return;
  failed = true;
  const problem = bootProblem(err);
  const where = document.getElementById("streampace-boot");
  const line = document.createElement("p");
  line.className = "streampace-boot streampace-boot-failed";
  line.setAttribute("role", "alert");
  line.textContent = problem.message;
  if (where !== null) where.replaceChildren(line);
  else document.body.prepend(line);
  document.dispatchEvent(new CustomEvent("streampace:error", {
    detail: { where: "boot", ...problem, error: String(err && err.message ? err.message : err) },
  }));
}
booted.catch(bootFailed);
// PyScript's core needs eval: a policy that refuses it leaves PyScript stopped
// with only a console message, so the refusal itself is the failure.
document.addEventListener("securitypolicyviolation", (ev) => {
  if (ev.blockedURI === "eval" || ev.blockedURI === "wasm-eval") bootFailed(new Error("blocked by CSP"));
});
if (cspViolations().some((v) => v.blocked === "eval" || v.blocked === "wasm-eval")) {
  bootFailed(new Error("blocked by CSP"));
}

// polyscript keys its package cache by this and checks `packages` against
// its graph for this version: the vendored Pyodide's.
export const version = config.pyodideVersion;

// PyScript's call. Its `indexURL` (this module's directory) is ignored: the
// runtime is where pyscript.toml's [streampace] table says. Its stdout and
// stderr (batched, one line per call) are installed on the booted Pyodide;
// `packages` (polyscript passes them only from its own package cache) are
// loaded after the boot.
export async function loadPyodide({ stdout, stderr, packages } = {}) {
  mark("interpreter-requested");
  const { pyodide, snapshot } = await booted;
  if (snapshot) {
    // PyScript's Python package, compiled into the snapshot at setup: written as
    // .pyc files where Python finds them once PyScript writes the sources.
    const runtime = pyodide.pyimport("streampace.browser.runtime");
    try {
      runtime.install_pyscript_bytecode(pyodide.FS.cwd());
    } finally {
      runtime.destroy();
    }
  }
  if (stdout) pyodide.setStdout({ batched: stdout });
  if (stderr) pyodide.setStderr({ batched: stderr });
  if (packages && packages.length) await pyodide.loadPackage(packages);
  mark("interpreter-returned");
  return pyodide;
}

// PyScript's core watches the whole document (one MutationObserver: child
// lists, subtree, attributes) for <script type="py"> and py-* event attributes
// being added, and runs an XPath query and two selector queries over every
// element added. A streaming view adds elements in most frames: over the demo's
// long answer that was ~1 400 callbacks, 0.16 ms each at 1x and 0.7 ms at 4x
// CPU (a tenth of the frame callbacks' own Python), and ~5 MB of garbage. What
// a view holds is ours (our element builders, sanitised attributes: never an
// event attribute or a script), so the observers PyScript's core makes as it
// loads are handed no record from inside a view; every other observer, made
// then or later, is the browser's own. The global is ours only while the core
// loads.
const VIEW = ".sp-view";

function outsideViews(records) {
  let kept = null;
  for (let i = 0; i < records.length; i++) {
    const target = records[i].target;
    const inside = target.nodeType === Node.ELEMENT_NODE && target.closest(VIEW) !== null;
    if (inside && kept === null) kept = records.slice(0, i);
    else if (!inside && kept !== null) kept.push(records[i]);
  }
  return kept === null ? records : kept;
}

function hideViewsFrom(moduleDir) {
  const Native = globalThis.MutationObserver;
  class ViewsHidden extends Native {
    constructor(callback) {
      // Only an observer made by PyScript's own code (its module on the stack)
      // is handed the records outside views; any other gets them all.
      const pyscripts = String(new Error().stack).includes(moduleDir);
      super(pyscripts ? (records, observer) => {
        const kept = outsideViews(records);
        if (kept.length) callback(kept, observer);
      } : callback);
    }
  }
  globalThis.MutationObserver = ViewsHidden;
  return () => {
    if (globalThis.MutationObserver === ViewsHidden) globalThis.MutationObserver = Native;
  };
}

// PyScript's core, pinned in package.json and vendored by scripts/setup_runtime.
const restoreObserver = hideViewsFrom(new URL("../vendor/pyscript/", import.meta.url).href);
const core = import("../vendor/pyscript/core.js");
core.then(restoreObserver, restoreObserver);
core.catch((err) => {
  console.error("streampace: PyScript's core failed to load", err);
  bootFailed(err);
});
