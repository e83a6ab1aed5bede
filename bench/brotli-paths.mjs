// Brotli page decoding, both paths of src/parquet/inflate.ts on the same pages: node:zlib one-shot
// (DIVERGENCE_MINE_BROTLI=whole) against brotli-wasm streamed through 64 KiB steps (=stream).
// Every BROTLI page body of a file is decoded by each path, in turns, best of `--runs`; the decoded
// bytes are compared. Usage: npm run build && node bench/brotli-paths.mjs FILE [--runs 3]
import { readFileSync } from 'node:fs';
import { parseFile } from '../test/support/parquet-fuzz.mjs';
import { CODEC, inflater } from '../dist/parquet/inflate.js';
import { createHash } from 'node:crypto';

const file = process.argv[2];
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3);
const f = parseFile(readFileSync(file));
const get = (s, id) => s?.fields.find((x) => x.id === id)?.v;
const pages = [];
for (const g of f.groups) for (const ch of g) {
  if (ch.codec !== CODEC.BROTLI) continue;
  for (const p of ch.pages) {
    const type = Number(get(p.header, 1));
    let body = p.body;
    let size = Number(get(p.header, 2));
    if (type === 3) {
      const dh = get(p.header, 8);
      if (get(dh, 7) === false) continue;
      const ll = Number(get(dh, 5) ?? 0n) + Number(get(dh, 6) ?? 0n);
      body = body.subarray(ll);
      size -= ll;
    }
    pages.push({ body, size });
  }
}
const total = pages.reduce((s, p) => s + p.size, 0);
const largest = Math.max(...pages.map((p) => p.size));
const step = new Uint8Array(256 * 1024);
function decodeAll(mode) {
  process.env.DIVERGENCE_MINE_BROTLI = mode;
  const h = createHash('sha256');
  const t = process.hrtime.bigint();
  for (const p of pages) {
    const i = inflater(CODEC.BROTLI, p.body, p.size);
    for (let n; (n = i.read(step)) > 0; ) h.update(step.subarray(0, n));
    i.close();
  }
  return { secs: Number(process.hrtime.bigint() - t) / 1e9, digest: h.digest('hex') };
}
const best = { whole: Infinity, stream: Infinity };
const digests = {};
for (let r = 0; r < runs; r++) {
  for (const mode of ['whole', 'stream']) {
    const { secs, digest } = decodeAll(mode);
    best[mode] = Math.min(best[mode], secs);
    digests[mode] = digest;
  }
}
console.log(`${file}: ${pages.length} brotli pages, ${(total / 1e6).toFixed(1)} MB decoded, largest page ${(largest / 1e6).toFixed(1)} MB`);
for (const mode of ['whole', 'stream']) console.log(`  ${mode.padEnd(6)} best of ${runs}: ${best[mode].toFixed(2)} s, ${(total / 1e9 / best[mode]).toFixed(2)} GB/s`);
console.log(`  same bytes: ${digests.whole === digests.stream}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
