#!/usr/bin/env node
// `--workers 1` against `--workers 2`, for one or more builds of the miner, interleaved: every round
// runs each build with 1 and 2 workers (the order reversed every other round), so that the machine's
// drift hits them alike. Reports each build's medians (wall, and CPU: user + sys from /usr/bin/time,
// through timed.mjs) and its speed-up per round. CPU shows what a change costs or saves on a machine whose speed drifts:
// a second worker's run needs less CPU than two cores give it, or it cannot reach 2x.
//
//   node bench/ab-workers.mjs F [ROUNDS] DIR...   (DIR: a checkout with a build, e.g. /tmp/before .)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median, timed } from './timed.mjs';
const [fileArg, rounds = '3', ...dirArgs] = process.argv.slice(2);
if (!fileArg || dirArgs.length === 0) {
  console.error('usage: node bench/ab-workers.mjs F [ROUNDS] DIR...');
  process.exit(2);
}
const file = resolve(fileArg);
const dirs = dirArgs.map((d) => resolve(d));
const tmp = mkdtempSync(join(tmpdir(), 'dm-ab-workers-'));
const res = {};
const cpu = {};
try {
  for (let r = 0; r < Number(rounds); r++) {
    const combos = [];
    for (const d of dirs) for (const w of [1, 2]) combos.push([d, w]);
    if (r % 2) combos.reverse();
    for (const [d, w] of combos) {
      const t = await timed([process.execPath, `${d}/bin/divergence-mine`, 'mine', '--parquet', file, '--out', join(tmp, `abs-${w}.jsonl`), '--force', '-q', '--workers', String(w)], process.cwd());
      (res[`${d} w${w}`] ??= []).push(t.wallOuter);
      (cpu[`${d} w${w}`] ??= []).push(t.cpu);
      console.log(r, d, w, t.wallOuter.toFixed(2), 'cpu', t.cpu.toFixed(2));
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
for (const d of dirs) {
  const a = res[`${d} w1`], b = res[`${d} w2`];
  const ca = cpu[`${d} w1`], cb = cpu[`${d} w2`];
  console.log(d, 'cpu w1', median(ca).toFixed(2), 'cpu w2', median(cb).toFixed(2), 'w2 cpu / w1 cpu per round', ca.map((x, i) => (cb[i] / x).toFixed(3)).join(' '));
  console.log(d, 'w1', median(a).toFixed(2), 'w2', median(b).toFixed(2), 'ratio of medians', (median(a) / median(b)).toFixed(3), 'per round', a.map((x, i) => (x / b[i]).toFixed(3)).join(' '));
}
