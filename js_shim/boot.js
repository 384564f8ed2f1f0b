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
// buffering first, and than Content-Encoding from the server). A server that
// labelled the .gz with Content-Encoding has had the browser decode it already.
async function fetchSnapshot(url, signal) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`${url.pathname}: HTTP ${response.status}`);
  const encoding = response.headers.get("content-encoding") || "";
  const body = /gzip/i.test(encoding)
    ? response.body
    : response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(body).arrayBuffer());
}

// Why the snapshot cannot be used, or null when it can.
async function snapshotProblem(manifest, version, archive) {
  if (manifest === null) return "no snapshot manifest (run scripts/setup)";
  if (manifest.file !== SNAPSHOT_FILE) return `unexpected snapshot file ${manifest.file}`;
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
    ? fetchSnapshot(new URL(`snapshot/${SNAPSHOT_FILE}`, vendor), abort.signal)
    : Promise.resolve(null);
  snapshotP.catch(() => {}); // a failed fetch is reported below, not as unhandled

  onProgress("Loading the Python runtime…");
  const [{ loadPyodide, version }, archive, manifest] = await Promise.all([moduleP, archiveP, manifestP]);
  mark("runtime-module");
  let fallback = useSnapshot ? await snapshotProblem(manifest, version, archive) : "disabled by the page";
  let pyodide = null;
  if (fallback === null) {
    onProgress("Restoring the prepared Python…");
    try {
      const heap = snapshotP.then((bytes) => {
        mark("snapshot-fetched");
        return bytes;
      });
      pyodide = await loadPyodide({ indexURL, _loadSnapshot: heap });
      mark("python-ready");
      onProgress("Starting streampace…");
      pyodide.unpackArchive(archive, "zip", { extractDir: PACKAGE_DIR });
      const runtime = pyodide.pyimport("streampace.browser.runtime");
      try {
        if (runtime.snapshot_key() !== manifest.key) throw new Error("snapshot key differs from its manifest");
        runtime.after_restore();
      } finally {
        runtime.destroy();
      }
    } catch (err) {
      fallback = `snapshot failed to restore (${err && err.message ? err.message.split("\n")[0] : err})`;
      pyodide = null;
    }
  } else {
    abort.abort();
  }
  if (pyodide === null) {
    if (useSnapshot) console.warn(`streampace: booting Python without the memory snapshot: ${fallback}`);
    onProgress("Starting Python (no snapshot: slower first start)…");
    pyodide = await loadPyodide({ indexURL });
    mark("python-ready");
    onProgress("Starting streampace…");
    pyodide.unpackArchive(archive, "zip", { extractDir: PACKAGE_DIR });
    const sys = pyodide.pyimport("sys");
    sys.path.insert(0, PACKAGE_DIR);
    sys.destroy();
  }
  return { pyodide, snapshot: fallback === null, fallback };
}
