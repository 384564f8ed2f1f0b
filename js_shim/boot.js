// Boot the page's Pyodide with streampace importable, as fast as it goes.
//
// Every boot path runs this: the embed tag (js_shim/streampace.js), the demo
// page and any PyScript page through PyScript's `interpreter` (js_shim/pyscript.js).
// Where the runtime, our package and the snapshot are comes from
// vendor/runtime-config.mjs, which scripts/setup_runtime writes from
// pyscript.toml, so these paths and the snapshot maker cannot drift.
//
// The fast path restores the memory snapshot scripts/setup_runtime made
// (the WASM heap of a Python that has already started and imported our
// package), which skips Python's start-up and our imports. The snapshot is
// used only when its manifest matches this Pyodide and this package archive;
// when it is missing, stale or fails to restore, Python boots the ordinary way
// and the console says why, once. Either way the archive is written, as it is,
// to `config.packagePath`, which is first on sys.path: Python imports our
// modules from the zip (zipimport; the snapshot's importer already holds its
// table of contents, checked to be this archive's). Unpacking it instead cost
// 60-65 ms per boot (measured). js_shim/bridge.js
// is registered as the JS module `_streampace_bridge` for Python pages
// (streampace.browser.page).
//
// Phases are left as `performance` marks named "streampace:<phase>" (see
// bench/boot.py and docs/browser.md).

import config from "../vendor/runtime-config.mjs";
import * as bridge from "./bridge.js";
import { forgetKept, keepWasm, keepWhenIdle, keptResponse, serveKeptWasm } from "./kept.js";
import { leanProxyCheck } from "./lean_check.js";

export { config };

export function mark(name) {
  try {
    performance.mark(`streampace:${name}`);
  } catch (_) { /* very old browsers: no marks, nothing else lost */ }
}

// What the page's Content-Security-Policy refused (the browser says it in a
// `securitypolicyviolation` event; the exception a refusal causes rarely does),
// for a boot failure's message. Listened to from the first import of this module.
const violations = [];
// Pyodide only logs a WebAssembly module the policy refused and then waits for
// ever: the refusal ends the boot instead (raced with every loadPyodide).
let refuseWasm = null;
const wasmRefused = new Promise((_, reject) => { refuseWasm = reject; });
wasmRefused.catch(() => {});
document.addEventListener("securitypolicyviolation", (ev) => {
  const blocked = String(ev.blockedURI || "");
  if (violations.length < 20) {
    violations.push({ directive: String(ev.effectiveDirective || ev.violatedDirective || ""),
                      blocked });
  }
  if (blocked === "wasm-eval") refuseWasm(new Error("the page's Content-Security-Policy refused WebAssembly"));
});

// A failure before the view is live, as a reader should see it: what failed and
// the fix, with a code for `streampace:error` ({where: "boot", code, message}).
export function bootProblem(err) {
  if (typeof WebAssembly === "undefined") {
    return { code: "no_webassembly", message: "This browser cannot run streampace: WebAssembly " +
             "is missing or turned off. Use a current Chromium, Firefox or Safari." };
  }
  for (const { directive, blocked } of violations) {
    if (blocked === "wasm-eval") {
      return { code: "csp_wasm", message: "This page's Content-Security-Policy does not allow " +
               "WebAssembly: add 'wasm-unsafe-eval' to its script-src." };
    }
    if (blocked === "eval") {
      return { code: "csp_eval", message: "This page's Content-Security-Policy does not allow " +
               "eval, which PyScript needs: add 'unsafe-eval' to its script-src (or use the " +
               "embed tag, which needs only 'wasm-unsafe-eval')." };
    }
    if (/^https?:/.test(blocked)) {
      let origin = blocked;
      try { origin = new URL(blocked).origin; } catch (_) { /* keep it as reported */ }
      return { code: "csp_blocked", message: `This page's Content-Security-Policy blocked ` +
               `${origin} (${directive}): allow it there, or serve streampace from this page's origin.` };
    }
  }
  const text = String(err && err.message ? err.message : err).split("\n")[0].slice(0, 200);
  if (text.includes("HTTP 4") || text.includes("HTTP 5") || text.includes("fetch") ||
      text.includes("module script")) {
    return { code: "runtime_missing", message: `streampace could not load its runtime (${text}): ` +
             "serve js_shim/ and vendor/ side by side, and run scripts/setup." };
  }
  return { code: "boot_failed", message: `streampace failed to start: ${text}` };
}

// Violations seen so far (the PyScript boot watches for an `eval` one).
export function cspViolations() {
  return violations.slice();
}

async function fetchBytes(url, signal) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function sha256Hex(bytes) {
  if (!(globalThis.crypto && crypto.subtle)) return null; // not a secure context
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

// The snapshot's heap, gunzipped while it downloads (measured faster than
// buffering first), into `heap`: a zeroed buffer of `manifest.bytes`. The file
// holds only the heap's runs that are neither zero nor the WASM module's initial
// data; `manifest.runs` says where each one goes (half the heap is zero: half
// the work), and `manifest.initialRuns` are copied from the instantiated module
// (`snapshotModule`). `streampace serve` answers a browser that accepts brotli
// with the same bytes as brotli (Content-Encoding: br, 2.4 MB less than gzip);
// a response with any Content-Encoding has been decoded by the browser already.
async function fetchSnapshot(url, signal, manifest, heap) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  const encoding = (response.headers.get("content-encoding") || "identity").trim();
  const body = !/^identity$/i.test(encoding)
    ? response.body
    : response.body.pipeThrough(new DecompressionStream("gzip"));
  return fillHeap(body, manifest, heap);
}

// The runs of `body` (decoded) written in place into `heap`.
async function fillHeap(body, manifest, heap) {
  const { runs } = manifest;
  const reader = body.getReader();
  let run = 0;
  let filled = 0; // bytes of runs[run] written so far
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (let at = 0; at < value.length;) {
      if (run >= runs.length) throw new Error("snapshot is longer than its manifest says");
      const [offset, length] = runs[run];
      const n = Math.min(length - filled, value.length - at);
      heap.set(value.subarray(at, at + n), offset + filled);
      at += n;
      filled += n;
      if (filled === length) {
        run += 1;
        filled = 0;
      }
    }
  }
  if (run !== runs.length) throw new Error("snapshot is shorter than its manifest says");
  return heap;
}

// The heap (a zeroed buffer of the manifest's size, from `heapP`) filled from
// the decoded copy a previous visit kept in Cache Storage (js_shim/kept.js: the
// HTTP cache holds it compressed, and decoding 14 MB again on every visit was
// the largest part of a warm boot), else from the server. Resolves to {heap,
// cached}. Every run is written by whichever source ends up filling it, so a
// damaged kept copy that stopped half way is overwritten whole.
async function loadSnapshot(url, signal, manifestP, heapP) {
  const keyP = manifestP.then((m) => m && m.key);
  const [hit, manifest, heap] = await Promise.all([keptResponse(url, keyP), manifestP, heapP]);
  if (manifest === null) throw new Error("no snapshot manifest");
  if (hit !== null) {
    try {
      await fillHeap(hit.body, manifest, heap);
      mark("snapshot-cached");
      return { heap, cached: true };
    } catch (_) { /* a damaged entry: download it again */ }
  }
  return { heap: await fetchSnapshot(url, signal, manifest, heap), cached: false };
}

// After a boot that restored a downloaded snapshot: keep its runs (decoded) for
// the next visit, when the page is idle.
function keepSnapshot(url, manifest, heap) {
  keepWhenIdle("snapshot", url, manifest.key, "application/octet-stream", async () => new Blob(
    manifest.runs.map(([offset, length]) => heap.subarray(offset, offset + length))));
}

// Pyodide's module factory, wrapped for the snapshot: Pyodide instantiates the
// WASM module as soon as it has the snapshot's buffer (`heap()`, the zeroed
// buffer of the manifest's size it awaited), so the module compiles while the
// buffer fills (`filled`, from Cache Storage or the server): one after the
// other, the two were the largest part of a warm boot (bench.boot). Pyodide
// restores the buffer only once this factory resolves, which waits for `filled`.
// The pages of the snapshot that still hold what the module's data segments put
// there (left out of the snapshot file: the wasm file carries them) are copied
// from the module's memory as soon as it is instantiated, before its start-up
// code changes them. A copy that cannot be made, or a fill that fails, rejects
// the factory, so loadPyodide rejects and Python boots the ordinary way (an
// exception in the instantiate callback would be swallowed by Pyodide, which
// would then wait for ever).
function snapshotModule(indexURL, heap, manifestP, filled) {
  // Imported now, as Pyodide would import it itself without this factory.
  const moduleP = import(new URL("pyodide.asm.mjs", indexURL).href);
  moduleP.catch(() => {});
  return async (settings) => {
    const [{ default: createModule }, manifest] = await Promise.all([moduleP, manifestP]);
    const instantiate = settings.instantiateWasm;
    let copyProblem = "the WASM module was not instantiated";
    settings.instantiateWasm = (imports, done) => {
      mark("wasm-instantiate");
      return instantiate(imports, (instance, module) => {
        mark("wasm-instantiated");
        copyProblem = copyInitialPages(heap(), instance, manifest);
        done(instance, module);
      });
    };
    const module = await createModule(settings);
    await filled;
    const problem = copyProblem ?? misplacedHeap(heap(), manifest);
    if (problem !== null) throw new Error(problem);
    return module;
  };
}

// The `initialRuns` of the snapshot buffer `bytes`, from the instantiated
// module's memory (see snapshotModule); never throws: says why it could not.
function copyInitialPages(bytes, instance, manifest) {
  try {
    const memory = new Uint8Array(instance.exports.memory.buffer);
    const at = manifest.memoryAt;
    for (const [offset, length] of manifest.initialRuns) {
      if (offset < at || offset - at + length > memory.length) {
        return "the snapshot's initial pages lie outside the module's memory";
      }
    }
    for (const [offset, length] of manifest.initialRuns) {
      bytes.set(memory.subarray(offset - at, offset - at + length), offset);
    }
    return null;
  } catch (err) {
    return `the snapshot's initial pages were not copied (${err.message})`;
  }
}

// Why the filled snapshot buffer does not fit the manifest, or null.
function misplacedHeap(bytes, manifest) {
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
  return header[1] === manifest.memoryAt ? null : "the snapshot's heap is not where its manifest says";
}

// Why the snapshot cannot be used, or null when it can.
async function snapshotProblem(manifest, version, archive) {
  if (manifest === null) return "no snapshot manifest (run scripts/setup)";
  if (manifest.format !== config.snapshotFormat || manifest.file !== config.snapshotFile) {
    return `snapshot manifest of another format (${manifest.format}, ${manifest.file})`;
  }
  if (manifest.pyodideVersion !== version) {
    return `snapshot made for Pyodide ${manifest.pyodideVersion}, this is ${version}`;
  }
  const digest = await sha256Hex(archive);
  if (digest !== null && digest !== manifest.zipSha256) {
    return `snapshot is older than ${config.package} (run scripts/setup)`;
  }
  if (typeof DecompressionStream === "undefined") return "no DecompressionStream in this browser";
  return null;
}

// Start every download that depends on nothing else, at once: `pyodide.mjs`,
// our package archive, the snapshot's manifest and the snapshot itself.
// `base` is the site root (the directory of pyscript.toml); `useSnapshot:
// false` skips the snapshot.
function startRuntime({ base, useSnapshot }) {
  mark("boot-start");
  const at = (rel) => new URL(rel, base);
  const indexURL = at(config.pyodide).href;
  const abort = new AbortController();
  const moduleP = import(new URL("pyodide.mjs", indexURL).href);
  const archiveP = fetchBytes(at(config.package));
  const manifestP = useSnapshot
    ? fetch(new URL("manifest.json", at(config.snapshot))).then((r) => (r.ok ? r.json() : null)).catch(() => null)
    : Promise.resolve(null);
  const snapshotURL = new URL(config.snapshotFile, at(config.snapshot));
  // The buffer the snapshot is restored from, allocated once its size is known:
  // handed to Pyodide before it is filled (see snapshotModule).
  const heapP = manifestP.then((m) => (m === null ? null : new Uint8Array(m.bytes)));
  const snapshotP = useSnapshot
    ? loadSnapshot(snapshotURL, abort.signal, manifestP, heapP)
    : Promise.resolve(null);
  // Failures are reported where they are awaited, not as unhandled rejections.
  for (const p of [moduleP, archiveP, snapshotP]) p.catch(() => {});
  return { indexURL, useSnapshot, abort, moduleP, archiveP, manifestP, heapP, snapshotP,
           snapshotURL };
}

// Resolves to {pyodide, snapshot: bool, fallback: reason | null}. Call it as
// early as the page can: every download starts at once.
export async function bootRuntime({ base, onProgress = () => {}, useSnapshot = true }) {
  if (typeof WebAssembly === "undefined") throw new Error("no WebAssembly in this browser");
  const run = startRuntime({ base, useSnapshot });
  const { indexURL, abort, moduleP, archiveP, manifestP, heapP, snapshotP, snapshotURL } = run;
  const options = { indexURL };

  onProgress("Loading the Python runtime…");
  const { loadPyodide, version } = await moduleP;
  mark("runtime-module");
  let fallback = run.useSnapshot ? null : "disabled by the page";
  let pyodide = null;
  if (run.useSnapshot) {
    // Pyodide fetches and compiles its runtime (asm.mjs, wasm, stdlib) while
    // this decides whether the snapshot fits and the heap fills; a snapshot
    // that does not fit rejects here, and Python then boots the ordinary way.
    let problem = null;
    let heapBytes = null;
    let heapCached = false;
    const heap = Promise.all([manifestP, archiveP]).then(async ([manifest, archive]) => {
      problem = await snapshotProblem(manifest, version, archive);
      if (problem !== null) {
        abort.abort();
        throw new Error(problem);
      }
      onProgress("Restoring the prepared Python…");
      heapBytes = await heapP;
      return heapBytes;
    });
    const filled = snapshotP.then(({ cached }) => {
      mark("snapshot-fetched");
      heapCached = cached;
    });
    filled.catch(() => {});
    // The wasm of a previous visit, decoded, from Cache Storage (js_shim/kept.js).
    const wasmURL = new URL("pyodide.asm.wasm", indexURL).href;
    const keptWasm = serveKeptWasm(wasmURL, manifestP.then((m) => m && m.key));
    try {
      const createPyodideModule = snapshotModule(indexURL, () => heapBytes, manifestP, filled);
      try {
        pyodide = await Promise.race([
          loadPyodide({ ...options, _loadSnapshot: heap, createPyodideModule }), wasmRefused]);
      } finally {
        keptWasm.release();
      }
      mark("python-ready");
      // Said, for tests and bench.boot: this boot compiled the kept wasm, so the
      // page's requests hold no wasm download.
      if (keptWasm.served()) mark("wasm-kept");
      onProgress("Starting streampace…");
      const [manifest, archive] = await Promise.all([manifestP, archiveP]);
      pyodide.FS.writeFile(config.packagePath, archive);
      const runtime = pyodide.pyimport("streampace.browser.runtime");
      try {
        if (runtime.snapshot_key() !== manifest.key) throw new Error("snapshot key differs from its manifest");
        runtime.after_restore();
      } finally {
        runtime.destroy();
      }
      if (!heapCached) keepSnapshot(snapshotURL, manifest, heapBytes);
      if (!keptWasm.served()) keepWasm(wasmURL, manifest.key);
    } catch (err) {
      fallback = problem ?? `snapshot failed to restore (${err && err.message ? err.message.split("\n")[0] : err})`;
      pyodide = null;
      // A kept copy that failed is not tried again: the next visit downloads it.
      if (heapCached) forgetKept(snapshotURL);
      if (keptWasm.served()) forgetKept(wasmURL);
    }
  }
  if (pyodide === null) {
    if (run.useSnapshot) console.warn(`streampace: booting Python without the memory snapshot: ${fallback}`);
    onProgress("Starting Python (no snapshot: slower first start)…");
    pyodide = await Promise.race([loadPyodide(options), wasmRefused]);
    mark("python-ready");
    onProgress("Starting streampace…");
    pyodide.FS.writeFile(config.packagePath, await archiveP);
    const sys = pyodide.pyimport("sys");
    sys.path.insert(0, config.packagePath);
    sys.destroy();
  }
  if (leanProxyCheck(pyodide)) mark("lean-proxy-check");
  pyodide.registerJsModule("_streampace_bridge", bridge);
  return { pyodide, snapshot: fallback === null, fallback };
}
