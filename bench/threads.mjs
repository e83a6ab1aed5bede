#!/usr/bin/env node
// Where a run's CPU goes, by thread: `mine --workers 1` against `--workers 2`, in alternating rounds.
// The CLI's child process (the supervisor's only child) is sampled every 50 ms through
// /proc/<pid>/task/*/stat (Linux only): each thread's user + system CPU as last seen. Threads are
// reported by role:
//   - main:    the child's main thread (its tid is the process id);
//   - workers: the N busiest other threads (N = --workers: the decode workers);
//   - other:   everything else: V8's platform threads (TurboFan's concurrent compiles, GC helpers
//              without --single-threaded-gc) and libuv's pool (the output's async writes).
// What this tells apart: a second worker whose run takes more CPU than one worker's, and where that
// CPU is: in the workers themselves, or in threads that a one-worker run keeps on its idle core.
// A thread's last 50 ms before it exits can be missed; the wall is the supervisor's.
//
//   node bench/threads.mjs F [--rounds 3] [--workers 1,2]
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './timed.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TICK = 1000 / 100; // ms per clock tick (USER_HZ is 100 on Linux)
const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '3' }, workers: { type: 'string', default: '1,2' } } });
const file = positionals[0] ? resolve(positionals[0]) : null;
if (!file || process.platform !== 'linux') {
  console.error('usage (Linux): node bench/threads.mjs F [--rounds 3] [--workers 1,2]');
  process.exit(2);
}
const counts = values.workers.split(',').map(Number);
const tmp = mkdtempSync(join(tmpdir(), 'dm-threads-'));

/** user + system ms of every thread of `pid` now, by tid (threads that ended are not listed). */
function threadCpu(pid) {
  const out = new Map();
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * TICK);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The supervisor's child, once it exists. */
function childOf(pid) {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return kids.length > 0 ? Number(kids[0]) : null;
  } catch {
    return null;
  }
}

async function run(workers) {
  const args = [join(ROOT, 'bin', 'divergence-mine'), 'mine', '--parquet', file, '--out', join(tmp, `w${workers}.jsonl`), '--force', '-q', '--workers', String(workers)];
  const t0 = performance.now();
  const p = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const last = new Map();
  let child = null;
  const timer = setInterval(() => {
    child ??= childOf(p.pid);
    if (child !== null) for (const [tid, ms] of threadCpu(child)) last.set(tid, ms);
  }, 50);
  const code = await new Promise((res) => p.on('exit', res));
  clearInterval(timer);
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`mine --workers ${workers}: exit ${code}`);
  const main = (last.get(child) ?? 0) / 1000;
  const rest = [...last].filter(([tid]) => tid !== child).map(([, ms]) => ms / 1000).sort((a, b) => b - a);
  const w = rest.slice(0, workers).reduce((a, b) => a + b, 0);
  const other = rest.slice(workers).reduce((a, b) => a + b, 0);
  return { wall, total: main + w + other, main, workers: w, other };
}

const results = new Map(counts.map((n) => [n, []]));
for (let r = 0; r < Number(values.rounds); r++) {
  const order = r % 2 === 0 ? counts : [...counts].reverse();
  for (const n of order) {
    const x = await run(n);
    results.get(n).push(x);
    console.log(`round ${r + 1} --workers ${n}: wall ${x.wall.toFixed(2)} s, CPU ${x.total.toFixed(2)} s (main ${x.main.toFixed(2)}, workers ${x.workers.toFixed(2)}, other ${x.other.toFixed(2)})`);
  }
}
rmSync(tmp, { recursive: true, force: true });

console.log('\n| --workers | wall s | CPU s | cores busy | main s | workers s | other threads s |');
console.log('|--:|--:|--:|--:|--:|--:|--:|');
for (const n of counts) {
  const xs = results.get(n);
  const m = (k) => median(xs.map((x) => x[k]));
  console.log(`| ${n} | ${m('wall').toFixed(2)} | ${m('total').toFixed(2)} | ${(m('total') / m('wall')).toFixed(2)} | ${m('main').toFixed(2)} | ${m('workers').toFixed(2)} | ${m('other').toFixed(2)} |`);
}
