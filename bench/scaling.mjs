#!/usr/bin/env node
// How much a second thread buys on this machine, for three kinds of work, measured in the same
// rounds so that the machine's drift hits them alike:
//   - compute: a pure-JS integer loop (no memory traffic), a fixed amount of work split over 1 or 2
//     worker threads: what the two cores give to work that shares nothing;
//   - floor:   bench/floor.mjs F --threads 1 / 2 (every zstd page of `trajectory` decompressed once,
//     pages split by bytes): work as memory-heavy as the miner's largest share;
//   - mine:    the miner (`mine --parquet F`), --workers 1 / 2, wall of the whole process;
//   - independent: one `mine --workers 1` process, against two of them started at once (each with its
//     own output): two processes share nothing but the machine, so what they get together is the most
//     a second worker can give this work. Its speed-up is 2 x (one job's wall) / (two jobs' wall).
// Each round runs every kind with 1 and 2 threads, the order of the two alternating round by round;
// the report gives medians and every round's figures. What two threads give the floor is what this
// machine gives the miner's largest share of work (zstd over a window larger than the caches).
//
//   node bench/scaling.mjs F [--rounds 3] [--skip-mine] [--only compute,floor,mine,independent]
import { spawn, spawnSync } from 'node:child_process';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SELF = fileURLToPath(import.meta.url);

// About 3 s of one core here: xorshift steps, the result posted back so the loop cannot be dropped.
const COMPUTE_STEPS = 1e9;

function spin(steps) {
  let x = 0x9e3779b9 | 0;
  for (let i = 0; i < steps; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  return x;
}

if (!isMainThread) {
  parentPort.postMessage(spin(workerData.steps));
} else {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '3' }, 'skip-mine': { type: 'boolean', default: false }, only: { type: 'string' } } });
  const file = positionals[0] ? resolve(positionals[0]) : null;
  if (!file) {
    console.error('usage: node bench/scaling.mjs F [--rounds 3] [--skip-mine] [--only compute,floor,mine,independent]');
    process.exit(2);
  }
  const rounds = Number(values.rounds);
  const tmp = mkdtempSync(join(tmpdir(), 'dm-scaling-'));

  async function compute(threads) {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: threads }, () => new Promise((res, rej) => {
        const w = new Worker(SELF, { workerData: { steps: COMPUTE_STEPS / threads } });
        w.once('message', res);
        w.once('error', rej);
      })),
    );
    return { wall: (performance.now() - t0) / 1000 };
  }

  function child(args) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
    const wall = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
    return { wall, stdout: r.stdout };
  }

  function floor(threads) {
    const { stdout } = child([join(ROOT, 'bench', 'floor.mjs'), file, '--threads', String(threads)]);
    return { wall: JSON.parse(stdout.trim().split('\n').pop()).seconds };
  }

  function mine(workers) {
    const out = join(tmp, `w${workers}.jsonl`);
    return { wall: child([join(ROOT, 'bin', 'divergence-mine'), 'mine', '--parquet', file, '--out', out, '--force', '-q', '--workers', String(workers)]).wall };
  }

  /** `jobs` `mine --workers 1` processes started together; the wall until the last one ends. */
  async function independent(jobs) {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: jobs }, (_, j) => new Promise((res, rej) => {
        const args = [join(ROOT, 'bin', 'divergence-mine'), 'mine', '--parquet', file, '--out', join(tmp, `independent-${j}.jsonl`), '--force', '-q', '--workers', '1'];
        const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        c.stderr.on('data', (d) => (err += d));
        c.on('error', rej);
        c.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${args.join(' ')}: exit ${code}\n${err}`))));
      })),
    );
    return { wall: (performance.now() - t0) / 1000 };
  }

  const only = values.only ? new Set(values.only.split(',')) : null;
  const kinds = [
    ['compute', compute],
    ['floor', floor],
    ...(values['skip-mine'] ? [] : [['mine', mine], ['independent', independent]]),
  ].filter(([k]) => !only || only.has(k));
  /** Jobs done by the 2-thread run of a kind: two whole runs for `independent`, one otherwise. */
  const jobs = (k) => (k === 'independent' ? 2 : 1);
  const seen = Object.fromEntries(kinds.map(([k]) => [k, { 1: [], 2: [] }]));
  for (let r = 0; r < rounds; r++) {
    // Alternate which thread count goes first, round by round.
    const order = r % 2 === 0 ? [1, 2] : [2, 1];
    for (const [k, f] of kinds) {
      for (const t of order) {
        const { wall } = await f(t);
        seen[k][t].push(wall);
        console.error(`round ${r + 1} ${k} x${t}: ${wall.toFixed(2)} s`);
      }
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log('| work | 1 thread s (rounds) | 2 threads s (rounds) | speed-up of the medians | per-round speed-ups |');
  console.log('|---|--:|--:|--:|--:|');
  for (const [k] of kinds) {
    const a = seen[k][1];
    const b = seen[k][2];
    const per = a.map((x, i) => ((jobs(k) * x) / b[i]).toFixed(2)).join(', ');
    console.log(`| ${k} | ${median(a).toFixed(2)} (${a.map((x) => x.toFixed(2)).join(', ')}) | ${median(b).toFixed(2)} (${b.map((x) => x.toFixed(2)).join(', ')}) | ${((jobs(k) * median(a)) / median(b)).toFixed(2)} | ${per} |`);
  }
}
