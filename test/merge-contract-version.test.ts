// `merge` refuses partition stats mined under contract versions whose rows differ (v2 changed norm,
// v3 the text of numbers in the output, so parts of two versions do not add up to one run), and
// merges v3 with v4 (v4 changed only an exit code). Runs the BUILT CLI on the bundled fixture
// (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INPUT = join(ROOT, 'fixtures', 'sampling.parquet');
let dir = '';
const p = (s: string) => join(dir, s);


beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dm-merge-version-'));
  for (const i of [0, 1]) {
    const r = await cli(['mine', INPUT, '--partition', `${i}/2`, '--out', p(`${i}.jsonl`), '--stats', p(`${i}.json`), '--quiet', '--workers', '1']);
    expect(r.code, r.stderr).toBe(0);
  }
  // Partition 1 as a v1, a v2 and a v3 run would have recorded it.
  for (const v of [1, 2, 3]) {
    const old = JSON.parse(readFileSync(p('1.json'), 'utf8'));
    old.contract_version = v;
    writeFileSync(p(`1.v${v}.json`), JSON.stringify(old));
  }
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('merge and the contract version', () => {
  it('mine records contract version 4 in the stats', () => {
    expect(JSON.parse(readFileSync(p('0.json'), 'utf8')).contract_version).toBe(4);
  });

  it('merges two v4 partitions, and a v4 with a v3 one (same rows) into the same bytes', async () => {
    const r = await cli(['merge', p('0.jsonl'), p('1.jsonl'), '--stats', p('0.json'), '--stats', p('1.json'), '--out', p('ok.jsonl'), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const mixed = await cli(['merge', p('0.jsonl'), p('1.jsonl'), '--stats', p('0.json'), '--stats', p('1.v3.json'), '--out', p('ok-v3.jsonl'), '--quiet']);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(readFileSync(p('ok-v3.jsonl'))).toStrictEqual(readFileSync(p('ok.jsonl')));
  });

  it.each([
    ['v4 first, v1 second', ['0.json', '1.v1.json'], /1\.v1\.json: mined under mining contract v1, but .*0\.json under v4/],
    ['v1 first, v4 second', ['1.v1.json', '0.json'], /0\.json: mined under mining contract v4, but .*1\.v1\.json under v1/],
    ['v4 first, v2 second', ['0.json', '1.v2.json'], /1\.v2\.json: mined under mining contract v2, but .*0\.json under v4.*re-mine the v2 partitions/],
    ['v2 first, v4 second', ['1.v2.json', '0.json'], /0\.json: mined under mining contract v4, but .*1\.v2\.json under v2/],
  ])('refuses %s with one clear line, exit 2, no output', async (_name, stats, message) => {
    const out = p(`mixed-${stats[0]}.jsonl`);
    const r = await cli(['merge', p('0.jsonl'), p('1.jsonl'), '--stats', p(stats[0]!), '--stats', p(stats[1]!), '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/cannot be merged/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });
});
