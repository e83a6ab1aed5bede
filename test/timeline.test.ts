// DIVERGENCE_MINE_TIMELINE=1: the run's marks on stderr, from the supervisor's start, across the CLI
// process and its worker threads, in time order per thread; without it, nothing. Runs the BUILT CLI
// on fixtures/forks.parquet (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const dir = mkdtempSync(join(tmpdir(), 'dm-timeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mine(env: Record<string, string>, out: string) {
  const base = { ...process.env };
  delete base.DIVERGENCE_MINE_TIMELINE;
  const r = spawnSync(process.execPath, [BIN, 'mine', join(ROOT, 'fixtures', 'forks.parquet'), '--out', join(dir, out), '-q', '--workers', '2'], { env: { ...base, ...env }, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr;
}

describe('DIVERGENCE_MINE_TIMELINE', () => {
  it('prints the marks of every stage in order, and changes nothing else', () => {
    const lines = mine({ DIVERGENCE_MINE_TIMELINE: '1' }, 'on.jsonl').trim().split('\n');
    for (const l of lines) expect(l).toMatch(/^timeline \d+\.\d (pid\d+|worker\d+) \S.*$/);
    const names = lines.map((l) => l.split(' ').slice(3).join(' '));
    // Workers start on demand on a small input (how many depends on how tasks queue up): not listed here.
    const main = names.filter((n, i) => lines[i]!.split(' ')[2]!.startsWith('pid') && !n.startsWith('pool: '));
    // The CLI starts the first decode worker before it loads the mine command; the run's pool adopts it.
    expect(names).toContain('pool: worker 0 starting early');
    expect(names).toContain('pool: worker 0 adopted (started early)');
    expect(names).not.toContain('pool: worker 0 starting');
    expect(main).toStrictEqual([
      'cli: modules loaded',
      'mine: command parsed',
      'mine: options and inputs checked',
      'mine: start',
      'mine: spill folder made',
      'mine: footers read',
      'mine: layout detected',
      'mine: index pass done',
      'mine: selection done',
      'mine: decode pass done',
      'mine: every instance walked',
      'mine: walk and write done',
      'mine: workers closed',
      'mine: spill files closed',
      // Removed beside the copy of the rows (early-walk.ts), awaited here.
      "mine: workers' spill files removed",
      'mine: spill folder removed',
      'mine: output committed',
    ]);
    expect(names).toContain('worker: modules loaded');
    expect(names).toContain('worker: first index task end');
    expect(names.some((n) => /^worker: decode rg 0 rows \d+\.\.\d+ \(\d+\) end$/.test(n))).toBe(true);
    // Counted from the first process's start: the CLI's modules load after a Node start-up.
    const ms = lines.map((l) => Number(l.split(' ')[1]));
    expect(ms[0]).toBeGreaterThan(0);
    const mainMs = ms.filter((_, i) => lines[i]!.split(' ')[2]!.startsWith('pid'));
    expect([...mainMs].sort((a, b) => a - b)).toStrictEqual(mainMs);
    expect(mine({}, 'off.jsonl')).toBe('');
    expect(readFileSync(join(dir, 'on.jsonl'))).toStrictEqual(readFileSync(join(dir, 'off.jsonl')));
  }, 60_000);
});
