#!/usr/bin/env node
// zstd decompression per path, on the real pages of a parquet file's `trajectory` column (one
// thread, every zstd page once per path, best of --runs): bytes decompressed per second.
//
//   node bench/zstd-paths.mjs F [--runs 3] [--column trajectory]
//
// Paths: `window` (the reader's streaming path before one-shot pages: zstd-napi's decompressStream
// into a window that starts at 16 KiB and doubles to 1 MiB, as column.ts's Window asks), `stream-1m`
// (decompressStream, 1 MiB at a time), `one-shot` (zstd-napi's ZSTD_decompressDCtx into a new buffer of
// the declared size), `one-shot-reused` (the same into one buffer kept for every page), `fzstd` (pure JS, one-shot), `node:zlib` (zstdDecompressSync, Node >= 22.15 only),
// and, with the file read included, `file-whole-body` (each body read whole into one reused buffer,
// then streamed into a 1 MiB window) and `file-steps-256k` (the body read in 256 KiB steps as the
// decoder asks, column.ts FileBody).
import { createRequire } from 'node:module';
import { openSync, readSync, closeSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { pagesOf } from './pages.mjs';
import * as zlib from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', 'parquet', p)).href);
const { values, positionals } = parseArgs({ allowPositionals: true, options: { runs: { type: 'string', default: '3' }, column: { type: 'string', default: 'trajectory' } } });
const file = resolve(positionals[0]);

// Every zstd page of the column, its body read into memory (v2 pages: the values part only).
const pages = [];
const fd = openSync(file, 'r');
for (const [, pos, compressed, size, codec, levels] of await pagesOf([file], values.column)) {
  if (codec !== 6) continue;
  const body = Buffer.allocUnsafe(compressed);
  readSync(fd, body, 0, compressed, pos);
  pages.push({ body: body.subarray(levels), size: size - levels, pos: pos + levels, compressed: compressed - levels });
}
const total = pages.reduce((a, p) => a + p.size, 0);

const binding = require('zstd-napi/binding');
const fzstd = require('fzstd');
const ctx = new binding.DCtx();
const win = Buffer.allocUnsafe(1 << 20);
const streamed = (first) => () => {
  let out = 0;
  for (const p of pages) {
    ctx.reset(binding.ResetDirective.sessionOnly);
    let pos = 0;
    let ask = first;
    for (;;) {
      const [, produced, consumed] = ctx.decompressStream(win.subarray(0, Math.min(ask, win.length)), p.body.subarray(pos));
      pos += consumed;
      out += produced;
      ask = Math.min(ask * 2, 1 << 20);
      if (produced === 0 && consumed === 0) break;
    }
  }
  return out;
};
const paths = {
  window: streamed(1 << 14),
  'stream-1m': streamed(1 << 20),
  'one-shot': () => {
    let out = 0;
    for (const p of pages) out += ctx.decompress(Buffer.allocUnsafe(p.size), p.body);
    return out;
  },
  'one-shot-reused': () => {
    let out = 0;
    let buf = Buffer.allocUnsafe(0);
    for (const p of pages) {
      if (buf.length < p.size) buf = Buffer.allocUnsafe(p.size);
      out += ctx.decompress(buf.subarray(0, p.size), p.body);
    }
    return out;
  },
  fzstd: () => {
    let out = 0;
    for (const p of pages) out += fzstd.decompress(p.body).length;
    return out;
  },
};
// The same pages read from the file, then decompressed into a 1 MiB window, the way the reader can
// read a page: its body read whole into one buffer reused for every page (the reader before
// 2026-12-04, per leaf), or read in steps of 256 KiB as the decoder asks (column.ts FileBody).
const fromFile = (step) => () => {
  let out = 0;
  let whole = Buffer.allocUnsafe(0);
  const stepBuf = Buffer.allocUnsafe(step ?? 0);
  for (const p of pages) {
    ctx.reset(binding.ResetDirective.sessionOnly);
    let src;
    let at = 0;
    let have = 0;
    let read = 0;
    if (step === null) {
      if (whole.length < p.compressed) whole = Buffer.allocUnsafe(p.compressed);
      readSync(fd, whole, 0, p.compressed, p.pos);
      src = whole;
      have = read = p.compressed;
    }
    for (;;) {
      if (step !== null && at === have && read < p.compressed) {
        have = readSync(fd, stepBuf, 0, Math.min(step, p.compressed - read), p.pos + read);
        read += have;
        at = 0;
        src = stepBuf;
      }
      const [, produced, consumed] = ctx.decompressStream(win, src.subarray(at, have));
      at += consumed;
      out += produced;
      if (produced === 0 && consumed === 0 && (at === have && read >= p.compressed)) break;
    }
  }
  return out;
};
paths['file-whole-body'] = fromFile(null);
paths['file-steps-256k'] = fromFile(1 << 18);
if (typeof zlib.zstdDecompressSync === 'function') {
  paths['node:zlib'] = () => {
    let out = 0;
    for (const p of pages) out += zlib.zstdDecompressSync(p.body, { maxOutputLength: Math.max(p.size, 1) }).length;
    return out;
  };
}
const result = { file, pages: pages.length, decompressed: total, node: process.version, paths: {} };
for (const [name, run] of Object.entries(paths)) {
  let best = Infinity;
  for (let i = 0; i < Number(values.runs); i++) {
    const t0 = performance.now();
    const n = run();
    best = Math.min(best, (performance.now() - t0) / 1000);
    if (n !== total) throw new Error(`${name}: ${n} bytes, the pages declare ${total}`);
  }
  result.paths[name] = { seconds: +best.toFixed(3), gb_per_s: +(total / best / 1e9).toFixed(2) };
}
closeSync(fd);
process.stdout.write(`${JSON.stringify(result)}\n`);
