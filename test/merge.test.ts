// `mine --partition i/N` runs merged with `merge` give output byte-identical to the single
// run, and identical counters, for N = 1, 3 and 7, on every fixture and on a generated multi-instance
// corpus (bench/gen.mjs, texts perturbed from real rows of nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 (c) Nebius). Runs the BUILT CLI.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cli } from './support/cli.js';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLE = join(ROOT, 'fixtures', 'nebius-openhands-sample.json');

let dir = '';


async function mineOk(args: string[]): Promise<void> {
  const r = await cli(['mine', ...args, '--quiet', '--workers', '1']);
  expect(r.code, r.stderr).toBe(0);
}

/** Mine into N parts, merge, and compare bytes and counters with the single run. */
async function checkPartitions(input: string, name: string, ext: 'jsonl' | 'parquet', n: number): Promise<void> {
  const single = join(dir, `${name}.single.${ext}`);
  const singleStats = join(dir, `${name}.single.${ext}.stats.json`);
  if (!existsSync(single)) await mineOk([input, '--out', single, '--stats', singleStats]);
  const parts: string[] = [];
  const stats: string[] = [];
  for (let i = 0; i < n; i++) {
    const part = join(dir, `${name}.${n}.${i}.${ext}`);
    const st = `${part}.stats.json`;
    await mineOk([input, '--partition', `${i}/${n}`, '--out', part, '--stats', st]);
    parts.push(part);
    stats.push('--stats', st);
  }
  const merged = join(dir, `${name}.${n}.merged.${ext}`);
  const mergedStats = `${merged}.stats.json`;
  // Parts in reverse order: merge must not depend on the order they are given in.
  const r = await cli(['merge', ...parts.reverse(), ...stats, '--out', merged, '--stats-out', mergedStats, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  expect(readFileSync(merged).equals(readFileSync(single)), `${name} N=${n} ${ext}: merged bytes differ`).toBe(true);
  const a = JSON.parse(readFileSync(singleStats, 'utf8')).counters;
  const b = JSON.parse(readFileSync(mergedStats, 'utf8')).counters;
  expect(b).toStrictEqual(a);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dm-merge-'));
  // A corpus with many instances, so that every partition gets some.
  await run(process.execPath, [join(ROOT, 'bench', 'gen.mjs'), '--rows', '400', '--seed', '5', '--row-group-size', '128',
    '--sample', SAMPLE, '--out', join(dir, 'corpus.parquet'), '--quiet'], { timeout: 180_000 });
}, 200_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const INPUTS: [string, () => string][] = [
  ['forks', () => join(ROOT, 'fixtures', 'forks.parquet')],
  ['sampling', () => join(ROOT, 'fixtures', 'sampling.parquet')],
  ['labels', () => join(ROOT, 'fixtures', 'labels.parquet')],
  ['corpus', () => join(dir, 'corpus.parquet')],
];

describe('partition + merge equals the single run', () => {
  // Fixtures at N = 7 (most partitions then hold one instance or none); the corpus at 1, 3 and 7.
  for (const [name, input] of INPUTS) {
    for (const n of name === 'corpus' ? [1, 3, 7] : [7]) {
      it(`${name}, N=${n}, JSONL`, async () => checkPartitions(input(), name, 'jsonl', n), 200_000);
    }
  }
  it('corpus, N=3, parquet', async () => checkPartitions(join(dir, 'corpus.parquet'), 'corpus', 'parquet', 3), 200_000);
});

describe('merge finds the stats files', () => {
  it('beside each part (X.stats.json next to X.jsonl), or several after one --stats', async () => {
    const input = join(ROOT, 'fixtures', 'forks.parquet');
    const p = (s: string) => join(dir, `beside-${s}`);
    await mineOk([input, '--out', p('single.jsonl')]);
    const parts = [0, 1, 2].map((i) => p(`part-${i}.jsonl`));
    for (let i = 0; i < 3; i++) await mineOk([input, '--partition', `${i}/3`, '--out', parts[i]!, '--stats', p(`part-${i}.stats.json`)]);
    let r = await cli(['merge', ...parts, '--out', p('auto.jsonl'), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(p('auto.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
    r = await cli(['merge', ...parts, '--stats', ...[0, 1, 2].map((i) => p(`part-${i}.stats.json`)), '--out', p('one-flag.jsonl'), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(p('one-flag.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
    rmSync(p('part-2.stats.json'));
    r = await cli(['merge', ...parts, '--out', p('missing.jsonl'), '--quiet']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${p('part-2.stats.json')}: no such file`);
    expect(existsSync(p('missing.jsonl'))).toBe(false);
  }, 120_000);
});

describe('merge refuses what does not belong together', () => {
  it('a missing partition, a different seed, a foreign part', async () => {
    const input = join(ROOT, 'fixtures', 'sampling.parquet');
    const p = (s: string) => join(dir, `refuse-${s}`);
    await mineOk([input, '--partition', '0/2', '--out', p('0.jsonl'), '--stats', p('0.json')]);
    await mineOk([input, '--partition', '1/2', '--out', p('1.jsonl'), '--stats', p('1.json')]);
    await mineOk([input, '--partition', '1/2', '--seed', '9', '--out', p('1s.jsonl'), '--stats', p('1s.json')]);
    let r = await cli(['merge', p('0.jsonl'), '--stats', p('0.json'), '--out', p('m1.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('1 of 2 partitions missing: 1/2; nothing written');
    r = await cli(['merge', p('0.jsonl'), p('1s.jsonl'), '--stats', p('0.json'), '--stats', p('1s.json'), '--out', p('m2.jsonl')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/options differs/);
    r = await cli(['merge', p('0.jsonl'), p('0.jsonl'), '--stats', p('0.json'), '--stats', p('1.json'), '--out', p('m3.jsonl')]);
    expect(r.code).not.toBe(0);
    expect(existsSync(p('m1.jsonl')) || existsSync(p('m2.jsonl')) || existsSync(p('m3.jsonl'))).toBe(false);
  }, 120_000);
});
