#!/usr/bin/env node
// The decompression floor of a parquet file's `trajectory` column: every page body of every leaf
// of that column in every row group decompressed once, nothing else (no levels, no values, no
// strings), by the reader's own decoders (dist/parquet/inflate.js: zstd-napi, snappy, lz4-napi,
// node:zlib, ... the fastest each codec has here), on `--threads` worker threads that split the
// pages between them by decompressed bytes. What no reader of this file can go below on this
// machine with these libraries; the miner's wall is reported as a multiple of it.
//
//   node bench/floor.mjs F [--threads 2] [--column trajectory]
//
// Prints one JSON line: {seconds, pages, compressed, decompressed, threads}. `seconds` is the wall
// from the first page to the last (process start-up and the footer read are not in it).
import { openSync, readSync, closeSync, statSync, readdirSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { pagesOf } from './pages.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', 'parquet', p)).href);

async function decompress(pages) {
  const { inflater } = await dist('inflate.js');
  const fds = new Map();
  const window = Buffer.allocUnsafe(1 << 20);
  let body = Buffer.alloc(0);
  let out = 0;
  for (const [file, pos, compressed, size, codec, levels] of pages) {
    if (!fds.has(file)) fds.set(file, openSync(file, 'r'));
    if (body.length < compressed) body = Buffer.allocUnsafe(compressed);
    readSync(fds.get(file), body, 0, compressed, pos);
    const inf = inflater(codec, body.subarray(levels, compressed), size - levels);
    for (let n; (n = inf.read(window)) > 0; ) out += n;
    inf.close();
  }
  for (const fd of fds.values()) closeSync(fd);
  return out;
}

if (!isMainThread) {
  parentPort.once('message', async () => parentPort.postMessage(await decompress(workerData.pages)));
} else {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { threads: { type: 'string', default: '2' }, column: { type: 'string', default: 'trajectory' } } });
  const input = resolve(positionals[0]);
  const files = statSync(input).isDirectory() ? readdirSync(input).filter((f) => f.endsWith('.parquet')).sort().map((f) => join(input, f)) : [input];
  const threads = Number(values.threads);
  const pages = await pagesOf(files, values.column);
  // Largest first, each to the thread with the fewest bytes so far.
  const shares = Array.from({ length: threads }, () => ({ bytes: 0, pages: [] }));
  for (const p of [...pages].sort((a, b) => b[3] - a[3])) {
    const s = shares.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    s.pages.push(p);
    s.bytes += p[3];
  }
  for (const s of shares) s.pages.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  const workers = shares.map((s) => new Worker(fileURLToPath(import.meta.url), { workerData: { pages: s.pages } }));
  await Promise.all(workers.map((w) => new Promise((res) => w.once('online', res))));
  const t0 = performance.now();
  const outs = await Promise.all(workers.map((w) => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); w.postMessage('go'); })));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(workers.map((w) => w.terminate()));
  const decompressed = outs.reduce((a, b) => a + b, 0);
  const declared = pages.reduce((a, p) => a + p[3] - p[5], 0);
  if (decompressed !== declared) throw new Error(`decompressed ${decompressed} bytes, the pages declare ${declared}`);
  process.stdout.write(`${JSON.stringify({ seconds, pages: pages.length, compressed: pages.reduce((a, p) => a + p[2], 0), decompressed, threads })}\n`);
}
