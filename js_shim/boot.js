// Boot the page's Pyodide with streampace importable, as fast as it goes.
//
// The fast path restores the memory snapshot scripts/setup_runtime made
// (vendor/snapshot/: the WASM heap of a Python that has already started and
// imported our package), which skips Python's start-up and our imports. The
// snapshot is used only when its manifest matches this Pyodide and this
// vendor/streampace.zip; when it is missing, stale or fails to restore, Python
// boots the ordinary way and the console says why, once. Either way the
// archive is unpacked into PACKAGE_DIR so modules imported later are found.
//
// Phases are left as `performance` marks named "streampace:<phase>" (see
// bench/boot.py and docs/browser.md).

// Must match PACKAGE_DIR in scripts/make_snapshot.mjs.
const PACKAGE_DIR = "/home/pyodide/streampace-pkg";
// Must match SNAPSHOT_FILE in scripts/setup_runtime: fetched at once, in
// parallel with its manifest, and dropped if the manifest does not match.
const SNAPSHOT_FILE = "streampace.snap.gz";
const SNAPSHOT_FORMAT = 2; // SNAPSHOT_FORMAT in scripts/setup_runtime

export function mark(name) {
  try {
    performance.mark(`streampace:${name}`);
  } catch (_) { /* very old browsers: no marks, nothing else lost */ }
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
// buffering first, and than Content-Encoding from the server). The file holds
// only the heap's non-zero runs; `manifest.runs` says where each one goes in a
// zeroed buffer of `manifest.bytes` (half the heap is zero: half the work).
// A server that labelled the .gz with Content-Encoding has had the browser
// decode it already.
async function fetchSnapshot(url, signal, manifestP) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  const encoding = response.headers.get("content-encoding") || "";
  const body = /gzip/i.test(encoding)
    ? response.body
    : response.body.pipeThrough(new DecompressionStream("gzip"));
  const manifest = await manifestP;
  if (manifest === null) throw new Error("no snapshot manifest");
  const { runs, bytes } = manifest;
  const heap = new Uint8Array(bytes);
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

// Why the snapshot cannot be used, or null when it can.
async function snapshotProblem(manifest, version, archive) {
  if (manifest === null) return "no snapshot manifest (run scripts/setup)";
  if (manifest.format !== SNAPSHOT_FORMAT || manifest.file !== SNAPSHOT_FILE) {
    return `snapshot manifest of another format (${manifest.format}, ${manifest.file})`;
  }
  if (manifest.pyodideVersion !== version) {
    return `snapshot made for Pyodide ${manifest.pyodideVersion}, this is ${version}`;
  }
  const digest = await sha256Hex(archive);
  if (digest !== null && digest !== manifest.zipSha256) {
    return "snapshot is older than vendor/streampace.zip (run scripts/setup)";
  }
  if (typeof DecompressionStream === "undefined") return "no DecompressionStream in this browser";
  return null;
}

// Resolves to {pyodide, snapshot: bool, fallback: reason | null}.
// `base` is the directory holding vendor/; `useSnapshot: false` skips it.
export async function bootRuntime({ base, onProgress = () => {}, useSnapshot = true }) {
  mark("boot-start");
  const vendor = new URL("vendor/", base);
  const indexURL = new URL("pyodide/", vendor).href;
  const abort = new AbortController();
  // Everything that does not depend on anything else starts now, in parallel.
  const moduleP = import(new URL("pyodide.mjs", indexURL).href);
  const archiveP = fetchBytes(new URL("streampace.zip", vendor));
  const manifestP = useSnapshot
    ? fetch(new URL("snapshot/manifest.json", vendor)).then((r) => (r.ok ? r.json() : null)).catch(() => null)
    : Promise.resolve(null);
  const snapshotP = useSnapshot
    ? fetchSnapshot(new URL(`snapshot/${SNAPSHOT_FILE}`, vendor), abort.signal, manifestP)
    : Promise.resolve(null);
  snapshotP.catch(() => {}); // a failed fetch is reported below, not as unhandled

  onProgress("Loading the Python runtime…");
  const { loadPyodide, version } = await moduleP;
  mark("runtime-module");
  let fallback = useSnapshot ? null : "disabled by the page";
  let pyodide = null;
  if (useSnapshot) {
    // Pyodide fetches and compiles its runtime (asm.mjs, wasm, stdlib) while
    // this decides whether the snapshot fits and the heap downloads; a snapshot
    // that does not fit rejects here, and Python then boots the ordinary way.
    let problem = null;
    const heap = Promise.all([manifestP, archiveP]).then(async ([manifest, archive]) => {
      problem = await snapshotProblem(manifest, version, archive);
      if (problem !== null) {
        abort.abort();
        throw new Error(problem);
      }
      onProgress("Restoring the prepared Python…");
      const bytes = await snapshotP;
      mark("snapshot-fetched");
      return bytes;
    });
    try {
      pyodide = await loadPyodide({ indexURL, _loadSnapshot: heap });
      mark("python-ready");
      onProgress("Starting streampace…");
      const [manifest, archive] = await Promise.all([manifestP, archiveP]);
      pyodide.unpackArchive(archive, "zip", { extractDir: PACKAGE_DIR });
      const runtime = pyodide.pyimport("streampace.browser.runtime");
      try {
        if (runtime.snapshot_key() !== manifest.key) throw new Error("snapshot key differs from its manifest");
        runtime.after_restore();
      } finally {
        runtime.destroy();
      }
    } catch (err) {
      fallback = problem ?? `snapshot failed to restore (${err && err.message ? err.message.split("\n")[0] : err})`;
      pyodide = null;
    }
  }
  if (pyodide === null) {
    if (useSnapshot) console.warn(`streampace: booting Python without the memory snapshot: ${fallback}`);
    onProgress("Starting Python (no snapshot: slower first start)…");
    pyodide = await loadPyodide({ indexURL });
    mark("python-ready");
    onProgress("Starting streampace…");
    pyodide.unpackArchive(await archiveP, "zip", { extractDir: PACKAGE_DIR });
    const sys = pyodide.pyimport("sys");
    sys.path.insert(0, PACKAGE_DIR);
    sys.destroy();
  }
  return { pyodide, snapshot: fallback === null, fallback };
}
