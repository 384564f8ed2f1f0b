// Make the Pyodide memory snapshot the pages restore instead of booting Python
// (called by scripts/setup_runtime; Node >= 18).
//
//   node scripts/make_snapshot.mjs <vendor dir> <output .snap.gz> <key>
//
// Boots the vendored Pyodide with the private `_makeSnapshot` option, unpacks
// vendor/streampace.zip where the pages unpack it, imports our browser modules
// (streampace.browser.runtime.prepare_snapshot) and writes the whole WASM heap,
// gzipped. Prints one JSON line with sizes and timings for setup_runtime.
// Pyodide checks its build id when restoring, so a snapshot made here is
// refused (and the page boots normally) by any other Pyodide build.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";

// Must match PACKAGE_DIR in js_shim/boot.js: the snapshot's sys.path points here.
const PACKAGE_DIR = "/home/pyodide/streampace-pkg";

const [vendorDir, outFile, key] = process.argv.slice(2);
if (!vendorDir || !outFile || !key) {
  console.error("usage: make_snapshot.mjs <vendor dir> <output .snap.gz> <key>");
  process.exit(2);
}

const t0 = performance.now();
const pyodideDir = path.join(path.resolve(vendorDir), "pyodide") + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir, _makeSnapshot: true });
const tBoot = performance.now();

const archive = new Uint8Array(fs.readFileSync(path.join(vendorDir, "streampace.zip")));
pyodide.unpackArchive(archive, "zip", { extractDir: PACKAGE_DIR });
const sys = pyodide.pyimport("sys");
sys.path.insert(0, PACKAGE_DIR);
sys.destroy();
const runtime = pyodide.pyimport("streampace.browser.runtime");
const report = JSON.parse(runtime.prepare_snapshot(key));
runtime.destroy();
const tImport = performance.now();

const heap = pyodide.makeMemorySnapshot();
const gz = zlib.gzipSync(heap, { level: 6 });
const tmp = `${outFile}.tmp`;
fs.writeFileSync(tmp, gz);
fs.renameSync(tmp, outFile);
const tDone = performance.now();

console.log(JSON.stringify({
  bytes: heap.length,
  gzipBytes: gz.length,
  pyodideVersion: pyodide.version,
  imported: report.imported,
  skipped: report.skipped,
  ms: {
    boot: Math.round(tBoot - t0),
    import: Math.round(tImport - tBoot),
    snapshotAndGzip: Math.round(tDone - tImport),
  },
}));
