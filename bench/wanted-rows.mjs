#!/usr/bin/env node
// The reading part of a mining run on its own: what our reader (dist/parquet/reader.js) costs to
// give the miner what it needs, and nothing of the mining (no normalising, hashing, spill, walk or
// output). Two passes, as the miner makes them:
//   1. the index pass: trajectory_id, instance_id, resolved and repo of every row, on the main
//      thread, then the contract's selection (dist/contract/select.js Indexer: eligibility and the
//      per-side sampling with the default seed and --max-per-side);
//   2. the decode pass: the `trajectory` values of the selected rows only, on `--threads` worker
//      threads splitting the row groups by selected rows, with every tool call's `arguments` string
//      JSON.parse'd (the miner parses each one).
// Compared with the miner's wall and DuckDB's scan, it says how much of a run is reading and how
// much is the rest of the pipeline.
//
//   node bench/wanted-rows.mjs F [--threads 2] [--pairs OUT.jsonl]
//
// Prints one JSON line: {index_seconds, decode_seconds, rows, extracted, row_groups, messages,
// arguments_parsed, threads}. Times are walls from the first read to the last (process start-up,
// module loading and worker start are not in them). With `--pairs`, a mining output of F: its rows
// are parsed (not timed), then written back as JSON lines in UTF-8 into memory, timed on one thread
// (serialise_seconds; serialise_wall is that over --threads): the least writing the output costs.
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);

async function decode(file, tasks) {
  const { readRows } = await dist('parquet/reader.js');
  let messages = 0;
  let parsed = 0;
  for (const [rg, rows] of tasks) {
    for (const [trajectory] of readRows(file, rg, ['trajectory'], rows)) {
      for (const m of trajectory ?? []) {
        messages++;
        for (const tc of m?.tool_calls ?? []) {
          const a = tc?.function?.arguments;
          if (typeof a === 'string') {
            try {
              JSON.parse(a);
              parsed++;
            } catch {
              // a malformed argument string costs its parse all the same
            }
          }
        }
      }
    }
  }
  return { messages, parsed };
}

if (!isMainThread) {
  parentPort.once('message', async () => parentPort.postMessage(await decode(workerData.file, workerData.tasks)));
} else {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { threads: { type: 'string', default: '2' }, pairs: { type: 'string' } } });
  if (positionals.length !== 1) {
    process.stderr.write('usage: node bench/wanted-rows.mjs FILE.parquet [--threads 2] [--pairs OUT.jsonl]\n');
    process.exit(2);
  }
  const file = resolve(positionals[0]);
  const threads = Number(values.threads);
  const { fileMeta, readRows } = await dist('parquet/reader.js');
  const { Indexer } = await dist('contract/select.js');
  const { DEFAULT_OPTIONS: defaultOptions } = await dist('contract/options.js');
  const meta = fileMeta(file);
  const t0 = performance.now();
  const indexer = new Indexer({ seed: defaultOptions.seed, maxPerSide: defaultOptions.maxPerSide, skipBadRows: true });
  for (let rg = 0; rg < meta.rowGroupRows.length; rg++) {
    let row = 0;
    for (const [trajectoryId, instanceId, resolved, repo] of readRows(file, rg, ['trajectory_id', 'instance_id', 'resolved', 'repo'], null)) {
      indexer.add({ trajectoryId, instanceId, resolved, repo, loc: [rg, row++] }, () => file);
    }
  }
  const selection = indexer.finish();
  const indexSeconds = (performance.now() - t0) / 1000;
  const byGroup = new Map();
  for (const inst of selection.instances) {
    for (const s of [...inst.resolved, ...inst.failed]) {
      const [rg, row] = s.loc;
      if (!byGroup.has(rg)) byGroup.set(rg, []);
      byGroup.get(rg).push(row);
    }
  }
  // Row groups, most selected rows first, each to the thread with the fewest rows so far.
  const shares = Array.from({ length: threads }, () => ({ rows: 0, tasks: [] }));
  for (const [rg, rows] of [...byGroup].sort((a, b) => b[1].length - a[1].length)) {
    const s = shares.reduce((a, b) => (b.rows < a.rows ? b : a));
    s.tasks.push([rg, rows.sort((a, b) => a - b)]);
    s.rows += rows.length;
  }
  const decoders = shares.map((s) => new Worker(fileURLToPath(import.meta.url), { workerData: { file, tasks: s.tasks } }));
  await Promise.all(decoders.map((w) => new Promise((res) => w.once('online', res))));
  const t1 = performance.now();
  const outs = await Promise.all(decoders.map((w) => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); w.postMessage('go'); })));
  const decodeSeconds = (performance.now() - t1) / 1000;
  await Promise.all(decoders.map((w) => w.terminate()));
  let serialise = {};
  if (values.pairs) {
    const rows = readFileSync(values.pairs, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    const buf = Buffer.allocUnsafe(1 << 24);
    let bytes = 0;
    const t2 = performance.now();
    for (const row of rows) {
      const json = JSON.stringify(row);
      const b = json.length * 3 <= buf.length ? buf : Buffer.allocUnsafe(json.length * 3);
      bytes += b.write(json, 0, 'utf8') + 1;
    }
    const seconds = (performance.now() - t2) / 1000;
    serialise = { pairs: rows.length, pairs_bytes: bytes, serialise_seconds: Number(seconds.toFixed(3)), serialise_wall: Number((seconds / threads).toFixed(3)) };
  }
  process.stdout.write(`${JSON.stringify({
    index_seconds: Number(indexSeconds.toFixed(3)),
    decode_seconds: Number(decodeSeconds.toFixed(3)),
    rows: meta.numRows,
    extracted: selection.counters.trajectories_extracted,
    row_groups: byGroup.size,
    messages: outs.reduce((a, o) => a + o.messages, 0),
    arguments_parsed: outs.reduce((a, o) => a + o.parsed, 0),
    threads,
    ...serialise,
  })}\n`);
}
