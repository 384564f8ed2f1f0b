// Brotli-compress files for `streampace serve` (called by scripts/setup_runtime;
// Node's zlib, so no other tool is needed):
//
//   node scripts/brotli.mjs <quality 0-11> <file>...
//
// writes `<file>.br` beside each file (through a .tmp, so a reader never sees
// half of one) and prints one JSON line: {file: [bytes, brotli bytes, ms]}.

import fs from "node:fs";
import zlib from "node:zlib";

const [quality, ...files] = process.argv.slice(2);
const q = Number(quality);
if (!(Number.isInteger(q) && q >= 0 && q <= 11) || files.length === 0) {
  console.error("usage: brotli.mjs <quality 0-11> <file>...");
  process.exit(2);
}
const report = {};
for (const file of files) {
  const started = performance.now();
  const bytes = fs.readFileSync(file);
  const br = zlib.brotliCompressSync(bytes, { params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: q,
    [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
  } });
  fs.writeFileSync(`${file}.br.tmp`, br);
  fs.renameSync(`${file}.br.tmp`, `${file}.br`);
  report[file] = [bytes.length, br.length, Math.round(performance.now() - started)];
}
console.log(JSON.stringify(report));
