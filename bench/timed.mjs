// Running a benchmark command under /usr/bin/time (wall, CPU, peak RSS), with the process tree's
// RSS sampled from /proc and a guard that kills a run growing past a limit. Shared by bench/run.mjs
// and bench/partition.mjs.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TIME = '/usr/bin/time';

/** The median of `xs`: the middle value, or the mean of the two middle ones for an even count. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
const GiB = 1024 ** 3;

/** Resident set size (bytes) of `pid` and its descendants, from /proc; 0 when gone. */
function treeRss(pid) {
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        if (kids) stack.push(...kids.split(/\s+/).map(Number));
      }
    } catch { /* exited */ }
  }
  return total;
}
function killTree(pid) {
  const stack = [pid];
  const all = [];
  while (stack.length) {
    const p = stack.pop();
    all.push(p);
    try { for (const t of readdirSync(`/proc/${p}/task`)) { const k = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim(); if (k) stack.push(...k.split(/\s+/).map(Number)); } } catch { /* gone */ }
  }
  for (const p of all.reverse()) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
}

/**
 * Run `argv` under /usr/bin/time; resolves {wall, cpu, user, sys, rss (bytes), treePeak, stdout}.
 * The process tree's RSS is also sampled from /proc every 200 ms (treePeak, a cross-check), and the
 * run is killed (and fails) when it exceeds `rssGuard` bytes, to protect a shared machine.
 */
export function timed(argv, cwd, rssGuard) {
  const dir = mkdtempSync(join(tmpdir(), 'dm-bench-time-'));
  const tf = join(dir, 'time.txt');
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(TIME, ['-f', '%e %U %S %M', '-o', tf, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '', treePeak = 0, guardHit = false;
    const timer = setInterval(() => {
      const r = treeRss(p.pid);
      treePeak = Math.max(treePeak, r);
      if (rssGuard && r > rssGuard && !guardHit) { guardHit = true; killTree(p.pid); }
    }, 200);
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; if (err.length > 1e6) err = err.slice(-1e5); });
    p.on('error', (e) => { clearInterval(timer); rej(e); });
    p.on('close', (code) => {
      clearInterval(timer);
      const wallOuter = (performance.now() - t0) / 1000;
      try {
        if (guardHit) throw new Error(`${argv.join(' ')} killed: process tree RSS above the --rss-guard of ${(rssGuard / GiB).toFixed(1)} GiB`);
        if (code !== 0) throw new Error(`${argv.join(' ')} exited with ${code}\n${err.slice(-2000)}`);
        const [e, u, s, m] = readFileSync(tf, 'utf8').trim().split('\n').pop().split(/\s+/).map(Number);
        res({ wall: e, wallOuter, user: u, sys: s, cpu: u + s, rss: m * 1024, treePeak, stdout: out });
      } catch (x) { rej(x); } finally { rmSync(dir, { recursive: true, force: true }); }
    });
  });
}
