// Make the Pyodide memory snapshot the pages restore instead of booting Python
// (called by scripts/setup_runtime; Node >= 18).
//
//   node scripts/make_snapshot.mjs <site root> <key> <pyscript stdlib module> <brotli quality>
//
// Where everything is comes from vendor/runtime-config.mjs (written by
// setup_runtime from pyscript.toml), the module the pages' boot reads too.
// Boots the vendored Pyodide with the private `_makeSnapshot` option, puts our
// package archive where the pages put it (imported from the zip, zipimport), imports our browser modules
// (streampace.browser.runtime.prepare_snapshot) and writes the whole WASM heap,
// compressed without its all-zero pages (about half of it) and without the pages
// that still hold what the WASM module's data segments put there (3.4 MB: the
// instantiated module has them already, and the wasm file carries them): the
// file holds the other runs back to back, and `runs` ([offset, length] pairs,
// printed for the manifest) says where each goes; js_shim/boot.js writes them
// into a zeroed buffer of `bytes` bytes while they download and copies the
// `initial` runs from the freshly instantiated module's memory. Writes
// <snapshot dir>/<snapshot file> (gzip) and the same bytes as brotli beside it
// (`<file without .gz>.br`, which `streampace serve` sends with
// Content-Encoding: br); prints one JSON line with sizes, runs and timings for
// setup_runtime.
// Pyodide checks its build id when restoring, so a snapshot made here is
// refused (and the page boots normally) by any other Pyodide build.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";

// The memory a freshly instantiated `wasm` module starts with: its active data
// segments (flags 0, offset `i32.const`), as far as the highest one reaches.
// Anything else in the data section (passive or multi-memory segments, an
// offset that is not a constant) returns null: then no page counts as initial.
function initialMemory(wasm) {
  let at = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = wasm[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return value;
    }
  };
  while (at < wasm.length) {
    const id = wasm[at++];
    const size = leb();
    const end = at + size;
    if (id !== 11) {
      at = end;
      continue;
    }
    const segments = [];
    let top = 0;
    for (let n = leb(); n > 0; n--) {
      if (leb() !== 0 || wasm[at++] !== 0x41) return null; // active, memory 0, i32.const
      const offset = leb();
      if (offset >= 2 ** 31 || wasm[at++] !== 0x0b) return null; // a non-negative constant, end
      const length = leb();
      segments.push([offset, wasm.subarray(at, at + length)]);
      top = Math.max(top, offset + length);
      at += length;
    }
    const memory = new Uint8Array(top);
    for (const [offset, bytes] of segments) memory.set(bytes, offset);
    return memory;
  }
  return new Uint8Array(0);
}

// The snapshot's pages in three kinds: all zero (left out), the same as the
// module's initial memory at that address (`initial`, left out: the page
// copies them from the instantiated module) and the rest (`runs`, in the file).
// `memoryAt`: where the heap starts in the snapshot (after Pyodide's header).
function pageRuns(bytes, page, initial, memoryAt) {
  const runs = [];
  const initialRuns = [];
  const add = (list, at, end) => {
    const last = list[list.length - 1];
    if (last && last[0] + last[1] === at) last[1] += end - at;
    else list.push([at, end - at]);
  };
  for (let at = 0; at < bytes.length; at += page) {
    const end = Math.min(at + page, bytes.length);
    let zero = true;
    for (let i = at; i < end; i++) {
      if (bytes[i] !== 0) {
        zero = false;
        break;
      }
    }
    if (zero) continue;
    let same = at >= memoryAt && end - memoryAt <= initial.length;
    for (let i = at; same && i < end; i++) same = bytes[i] === initial[i - memoryAt];
    add(same ? initialRuns : runs, at, end);
  }
  return { runs, initialRuns };
}

// Zero what the heap holds but no one uses, so the snapshot carries no garbage
// (measured: a quarter of the heap Pyodide starts with is free malloc chunks,
// the stale bytes of freed objects, which gzip cannot squeeze). Pyodide's
// Python is built without pymalloc, so every free byte is a free chunk of
// Emscripten's dlmalloc: the walk goes chunk by chunk from __heap_base to the
// sbrk end (wasm32 layout: prev_foot, head = size | PINUSE 1 | CINUSE 2), and
// first checks the whole chain (each PINUSE bit agrees with the chunk before,
// each free chunk but the top one has its size repeated in the next one's
// prev_foot, the last
// chunk ends at the sbrk end): if anything disagrees nothing is touched and
// the snapshot is made as it is. A free chunk keeps its first 32 bytes (its
// header and the free lists' links; tree chunks use them all); the last chunk
// (dlmalloc's top footer) is kept whole. The stack below the stack pointer is
// dead too: no WASM frame is live while JavaScript makes the snapshot.
// Returns the bytes zeroed, or a reason it did nothing.
function zeroFreeMemory(module) {
  const u32 = module.HEAPU32;
  const heapBase = module.___heap_base.value ?? module.___heap_base;
  const end = u32[module._emscripten_get_sbrk_ptr() >> 2];
  const chunks = [];
  let prevInUse = 1;
  for (let p = heapBase; p < end;) {
    const head = u32[(p + 4) >> 2];
    const size = head & ~7;
    if ((head & 1) !== prevInUse) return `malloc chain disagrees at ${p} (PINUSE)`;
    if (size < 16 || p + size > end) return `malloc chain disagrees at ${p} (size ${size})`;
    const inUse = (head & 2) >> 1;
    chunks.push([p, size, inUse]);
    prevInUse = inUse;
    p += size;
    if (p === end) break;
    if (p > end) return "malloc chain runs past the heap's end";
  }
  const last = chunks[chunks.length - 1];
  if (!last || last[0] + last[1] !== end) return "malloc chain does not end at the heap's end";
  // The top chunk (next to last) keeps no size in the footer after it.
  for (const [p, size, inUse] of chunks.slice(0, -2)) {
    if (!inUse && u32[(p + size) >> 2] !== size) return `malloc chain disagrees at ${p} (prev_foot)`;
  }
  let zeroed = 0;
  for (const [p, size, inUse] of chunks.slice(0, -1)) {
    if (inUse || size <= 32) continue;
    module.HEAPU8.fill(0, p + 32, p + size);
    zeroed += size - 32;
  }
  const stackLow = module._emscripten_stack_get_end();
  const stackPointer = module._emscripten_stack_get_current();
  if (stackLow < stackPointer) {
    module.HEAPU8.fill(0, stackLow, stackPointer);
    zeroed += stackPointer - stackLow;
  }
  return zeroed;
}

// The stdlib module is named by setup_runtime, which also hashes it into the key.
const [siteRoot, key, pyscriptStdlib, quality] = process.argv.slice(2);
const brotliQuality = Number(quality);
if (!siteRoot || !key || !pyscriptStdlib || !(brotliQuality >= 0 && brotliQuality <= 11)) {
  console.error("usage: make_snapshot.mjs <site root> <key> <pyscript stdlib module> "
                + "<brotli quality 0-11>");
  process.exit(2);
}
const root = path.resolve(siteRoot);
const { default: config } = await import(
  pathToFileURL(path.join(root, "vendor", "runtime-config.mjs")).href);
const outFile = path.join(root, config.snapshot, config.snapshotFile);

const t0 = performance.now();
const pyodideDir = path.join(root, config.pyodide) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
// What a browser boot would have: without it Emscripten takes Node's argv[1],
// and this machine's path would end up in sys.executable and os.environ["_"].
const pyodide = await loadPyodide({
  indexURL: pyodideDir, _makeSnapshot: true, _sysExecutable: "./this.program",
});
const tBoot = performance.now();

// Where the pages write it (js_shim/boot.js): the snapshot's sys.path and its
// zipimporter (which holds the archive's table of contents) point here.
const archive = new Uint8Array(fs.readFileSync(path.join(root, config.package)));
pyodide.FS.writeFile(config.packagePath, archive);
const sys = pyodide.pyimport("sys");
sys.path.insert(0, config.packagePath);
sys.destroy();
const runtime = pyodide.pyimport("streampace.browser.runtime");
const report = JSON.parse(runtime.prepare_snapshot(key));
// PyScript's own Python package, as the pinned @pyscript/core writes it before
// a page's first script: compiled here, so PyScript pages import it without
// compiling (runtime.install_pyscript_bytecode, called by js_shim/pyscript.js).
const { default: pyscriptTree } = await import(pathToFileURL(path.resolve(pyscriptStdlib)).href);
const pyscriptFiles = {};
const flatten = (tree, prefix) => {
  for (const [name, value] of Object.entries(tree)) {
    if (typeof value === "string") pyscriptFiles[prefix + name] = value;
    else flatten(value, `${prefix}${name}/`);
  }
};
flatten(pyscriptTree, "");
report.pyscriptModules = runtime.compile_pyscript(JSON.stringify(pyscriptFiles));
// Last: what the snapshot holds goes to the collector's permanent generation,
// and the restore's first Python call will widen the interpreter's call sites
// for V8 (browser/call_sites.py) before V8 first optimises the loop.
report.frozen = runtime.freeze_heap();
runtime.destroy();
const callSites = pyodide.pyimport("streampace.browser.call_sites");
callSites.widen_at_first_call();
callSites.destroy();
const tImport = performance.now();

const zeroed = zeroFreeMemory(pyodide._module);
const heap = pyodide.makeMemorySnapshot();
// Pyodide's header (magic, its own length, ...) comes first, then the heap.
const memoryAt = new Uint32Array(heap.buffer, heap.byteOffset, 4)[1];
const initial = initialMemory(fs.readFileSync(path.join(pyodideDir, "pyodide.asm.wasm")))
  ?? new Uint8Array(0);
const { runs, initialRuns } = pageRuns(heap, 4096, initial, memoryAt);
const packed = Buffer.concat(runs.map(([at, n]) => heap.subarray(at, at + n)));
const tPacked = performance.now();
const gz = zlib.gzipSync(packed, { level: 9 });
const tGzip = performance.now();
const br = zlib.brotliCompressSync(packed, { params: {
  [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality,
  [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
  [zlib.constants.BROTLI_PARAM_SIZE_HINT]: packed.length,
} });
const tBrotli = performance.now();
const brFile = outFile.replace(/\.gz$/, "") + ".br";
for (const [file, bytes] of [[outFile, gz], [brFile, br]]) {
  fs.writeFileSync(`${file}.tmp`, bytes);
  fs.renameSync(`${file}.tmp`, file);
}
const tDone = performance.now();

console.log(JSON.stringify({
  bytes: heap.length,
  packedBytes: packed.length,
  initialBytes: initialRuns.reduce((sum, [, n]) => sum + n, 0),
  gzipBytes: gz.length,
  brotliBytes: br.length,
  freeZeroed: zeroed,
  memoryAt,
  runs,
  initialRuns,
  pyodideVersion: pyodide.version,
  imported: report.imported,
  skipped: report.skipped,
  warmedMs: report.warmed_ms,
  pyscriptModules: report.pyscriptModules,
  frozen: report.frozen,
  ms: {
    boot: Math.round(tBoot - t0),
    import: Math.round(tImport - tBoot),
    snapshot: Math.round(tPacked - tImport),
    gzip: Math.round(tGzip - tPacked),
    brotli: Math.round(tBrotli - tGzip),
  },
}));
