// Decoded copies of the runtime's two biggest files, kept in the page's Cache
// Storage for a returning visitor: the memory snapshot's runs and
// pyodide.asm.wasm. The HTTP cache holds both as they came over the wire
// (brotli or gzip) and decodes them again on every visit; reading the decoded
// wasm from Cache Storage takes a quarter of the time (bench.boot, and the
// phases it reports). Each entry is labelled with the snapshot manifest's key
// (a hash of the Pyodide build files and our package archive): a copy of
// another key is never used, and a new key replaces it.
//
// Best effort throughout: no Cache Storage (not a secure context), a refusal, a
// full quota or a damaged entry leaves the HTTP cache or the server as the way.

const CACHE = "streampace-snapshot";
const KEY_HEADER = "x-streampace-snapshot-key";
// The body's length when it was kept: a copy of another length is not used.
const BYTES_HEADER = "x-streampace-bytes";
const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

async function openKept() {
  try {
    return globalThis.caches ? await caches.open(CACHE) : null;
  } catch (_) {
    return null;
  }
}

// The kept response for `url` labelled with the key `keyP` resolves to, or null
// (looked up while the key is still on its way).
export async function keptResponse(url, keyP) {
  const lookup = openKept().then((cache) => cache && cache.match(url)).catch(() => null);
  const [hit, key] = await Promise.all([lookup, keyP]);
  return hit && key && hit.headers.get(KEY_HEADER) === key ? hit : null;
}

// Drop the kept copy of `url` (one that failed: the next visit fetches it).
export function forgetKept(url) {
  openKept().then((cache) => cache && cache.delete(url)).catch(() => {});
}

// Keep `blob()` (a Blob, or null for nothing) as the copy of `url` labelled
// `key`, when the page is idle, and mark it (`streampace:kept-<name>`, for
// bench.boot, which waits for it before a warm reload); never fails the page. A page that streams at
// once may never be idle for long: at most 5 s later. Without
// requestIdleCallback (Safari) nothing is kept: copying megabytes during the
// first answer would cost frames, and the shim keeps no timers.
export function keepWhenIdle(name, url, key, type, blob) {
  const store = async () => {
    const cache = await openKept();
    if (cache === null) return;
    const body = await blob();
    if (body === null) return;
    await cache.put(url, new Response(body, { headers: {
      "content-type": type, [KEY_HEADER]: key, [BYTES_HEADER]: String(body.size) } }));
    performance.mark(`streampace:kept-${name}`);
  };
  if (!globalThis.requestIdleCallback) return;
  requestIdleCallback(() => { store().catch(() => {}); }, { timeout: 5000 });
}

// The kept wasm as a Response WebAssembly.instantiateStreaming takes, or null:
// only a copy of the length it was kept with that starts as a WASM module does.
async function keptWasm(url, keyP) {
  const hit = await keptResponse(url, keyP);
  if (hit === null) return null;
  const blob = await hit.blob();
  const head = new Uint8Array(await blob.slice(0, WASM_MAGIC.length).arrayBuffer());
  if (String(blob.size) !== hit.headers.get(BYTES_HEADER)
      || WASM_MAGIC.some((byte, i) => head[i] !== byte)) {
    forgetKept(url);
    return null;
  }
  return new Response(blob, { headers: { "content-type": "application/wasm" } });
}

// Pyodide fetches pyodide.asm.wasm itself, as loadPyodide starts. For that one
// request (`wasmURL`, absolute), the page's `fetch` answers with the kept copy
// labelled with the key `keyP` resolves to, when there is one; without one, and
// for every other request, the page's own fetch answers, untouched. The hook
// removes itself at that request; `release()` removes it in any case (call it
// when loadPyodide settles). `served()`: whether the kept copy was handed over.
export function serveKeptWasm(wasmURL, keyP) {
  const pageFetch = globalThis.fetch;
  let served = false;
  const release = () => {
    if (globalThis.fetch === hook) globalThis.fetch = pageFetch;
  };
  function hook(input, init) {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== wasmURL || (init && init.integrity)) return pageFetch.call(this, input, init);
    release();
    return keptWasm(wasmURL, keyP)
      .catch(() => null)
      .then((kept) => {
        served = kept !== null;
        return kept ?? pageFetch(input, init);
      });
  }
  globalThis.fetch = hook;
  return { release, served: () => served };
}

// After a boot that compiled the wasm the HTTP cache holds: keep it decoded for
// the next visit, when the page is idle. Read with `only-if-cached`, so keeping
// it never downloads it again.
export function keepWasm(wasmURL, key) {
  keepWhenIdle("wasm", wasmURL, key, "application/wasm", async () => {
    const response = await fetch(wasmURL, { cache: "only-if-cached", mode: "same-origin" });
    return response.ok ? response.blob() : null;
  });
}
