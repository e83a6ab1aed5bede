// The built CLI on a twin whose instances complete one after another (bench/gen.mjs --window 1,
// 64-row groups): the early walk releases walked trajectories while later row groups are decoded,
// and with small spill segments (DIVERGENCE_MINE_SPILL_SEGMENT) the workers write released segments
// again (the timeline says so). The rows must be byte for byte those of the default segments, with
// one worker and two, and the counters those the generator planted.
// The twin's texts are perturbed from real rows of nebius/SWE-rebench-openhands-trajectories
// (CC-BY-4.0, (c) Nebius).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const REUSED = 'spill: a released segment is written again';

let dir = '';
let twin = '';
let expected: Record<string, number> = {};

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-spill-reuse-'));
  twin = join(dir, 'twin.parquet');
  await run(process.execPath, [join(ROOT, 'bench', 'gen.mjs'), '--rows', '2000', '--seed', '3', '--window', '1', '--row-group-size', '64',
    '--sample', join(ROOT, 'fixtures', 'nebius-openhands-sample.json'), '--out', twin, '--quiet'], { timeout: 180_000, maxBuffer: 1 << 24 });
  expected = (JSON.parse(readFileSync(join(dir, 'twin.planted.json'), 'utf8')) as { expected_counters: Record<string, number> }).expected_counters;
}, 200_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Mine the twin; the rows, the counters and whether a worker wrote a released segment again. */
async function mine(name: string, workers: number, segment: number | null) {
  const out = join(dir, `${name}.jsonl`);
  const stats = join(dir, `${name}.json`);
  const env = { ...process.env, DIVERGENCE_MINE_TIMELINE: '1' };
  delete env.DIVERGENCE_MINE_SPILL_SEGMENT;
  if (segment !== null) env.DIVERGENCE_MINE_SPILL_SEGMENT = String(segment);
  const { stderr } = await run(process.execPath, [BIN, 'mine', '--parquet', twin, '--out', out, '--stats', stats, '--workers', String(workers), '--quiet'], {
    env,
    timeout: 120_000,
    maxBuffer: 1 << 24,
  });
  const counters = (JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number> }).counters;
  return { rows: readFileSync(out), counters, reused: stderr.includes(REUSED) };
}

/** The default segments' run with `workers`, mined once. */
const bases = new Map<number, ReturnType<typeof mine>>();
const baseOf = (workers: number) => bases.get(workers) ?? bases.set(workers, mine(`base-${workers}`, workers, null)).get(workers)!;

describe('spill segments written again (spill-space.ts) leave the rows as they are', () => {
  it('default segments: the planted counters', async () => {
    const base = await baseOf(2);
    expect(base.counters).toEqual(expect.objectContaining(expected));
    expect(base.rows.length).toBeGreaterThan(0);
  }, 120_000);

  // Two workers read each other's spill files in their walks; one worker writes again what it walked itself.
  it.each([
    ['256 KiB segments, two workers', 2, 2 ** 18],
    ['1 MiB segments, one worker', 1, 2 ** 20],
  ])('%s: segments written again, same rows', async (_name, workers, segment) => {
    const base = await baseOf(workers);
    const small = await mine(`small-${workers}-${segment}`, workers, segment);
    expect(small.reused).toBe(true);
    expect(small.counters).toEqual(base.counters);
    expect(small.rows.equals(base.rows)).toBe(true);
  }, 120_000);
});
