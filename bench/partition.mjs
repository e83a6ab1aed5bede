#!/usr/bin/env node
// How `mine` scales across machines with `--partition i/N` + `merge`, measured on one machine.
//
//   node bench/partition.mjs F [--n 1,2,4] [--workers 2] [--runs 1]
//
// For each N, every partition i/N is mined in turn (each run is what one of N machines would do,
// alone on this machine, under bench/timed.mjs), then `merge` combines the parts. Per N it prints the slowest partition's
// wall (the cluster's wall if the N machines start together), the sum of their CPU, their peak RSS,
// the merge's wall, and checks that the merged output is byte-identical to the N = 1 output. One
// JSON line per N on stdout; progress on stderr. Needs /usr/bin/time (Debian: apt-get install -y time).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { timed } from './timed.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'divergence-mine');
/** A run whose process tree passes this is killed and the benchmark fails (as bench/run.mjs's --rss-guard). */
const RSS_GUARD = 14 * 1024 ** 3;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { n: { type: 'string', default: '1,2,4' }, workers: { type: 'string', default: '2' }, runs: { type: 'string', default: '1' } },
});
if (positionals.length !== 1) {
  console.error('usage: node bench/partition.mjs FILE.parquet [--n 1,2,4] [--workers 2] [--runs 1]');
  process.exit(2);
}
const file = resolve(positionals[0]);
const ns = values.n.split(',').map(Number);
const runs = Number(values.runs);
const tmp = mkdtempSync(join(tmpdir(), 'dm-partition-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let reference = null;
try {
  for (const n of ns) {
    const samples = [];
    for (let r = 0; r < runs; r++) {
      const parts = [];
      for (let i = 0; i < n; i++) {
        const out = join(tmp, `n${n}-part-${i}.jsonl`);
        const argv = ['node', BIN, 'mine', '--parquet', file, '--workers', values.workers, '--out', out, '--stats', `${out}.stats.json`, '--quiet', '--force'];
        if (n > 1) argv.push('--partition', `${i}/${n}`);
        const t = await timed(argv, ROOT, RSS_GUARD);
        console.error(`partition ${i}/${n}: wall ${t.wall} s, cpu ${t.cpu.toFixed(1)} s, rss ${(t.rss / 2 ** 20).toFixed(0)} MiB`);
        parts.push({ out, ...t });
      }
      const merged = join(tmp, `n${n}-merged.jsonl`);
      let merge = { wall: 0, cpu: 0, rss: 0 };
      if (n > 1) {
        const stats = parts.map((p) => `${p.out}.stats.json`);
        merge = await timed(['node', BIN, 'merge', ...parts.map((p) => p.out), '--stats', ...stats, '--out', merged, '--stats-out', `${merged}.stats.json`, '--quiet', '--force'], ROOT, RSS_GUARD);
        console.error(`merge of ${n}: wall ${merge.wall} s`);
      }
      const bytes = readFileSync(n > 1 ? merged : parts[0].out);
      reference ??= bytes;
      samples.push({
        slowest: Math.max(...parts.map((p) => p.wall)),
        sumWall: parts.reduce((a, p) => a + p.wall, 0),
        cpu: parts.reduce((a, p) => a + p.cpu, 0),
        rss: Math.max(...parts.map((p) => p.rss)),
        merge: merge.wall,
        identical: bytes.equals(reference),
      });
    }
    const pick = (k) => median(samples.map((s) => s[k]));
    process.stdout.write(`${JSON.stringify({ n, workers: Number(values.workers), runs, slowestPartitionWall: pick('slowest'), sumOfPartitionWalls: +pick('sumWall').toFixed(2), cpu: +pick('cpu').toFixed(1), peakRssMiB: Math.round(pick('rss') / 2 ** 20), mergeWall: pick('merge'), clusterWall: +(pick('slowest') + pick('merge')).toFixed(2), identicalToN1: samples.every((s) => s.identical) })}\n`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
