// How many decode workers a run starts: --workers as given; without it one per core, and one for an
// input under 16 MiB in all (engine/mine-pairs.ts poolSize), where a second worker costs more to start
// than it saves. The CLI case counts the worker threads the run's timeline names.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { poolSize } from '../src/engine/mine-pairs.js';
import { SMALL_INPUT_BYTES, regularFileSize } from '../src/io/input-size.js';
import type { InputFile } from '../src/io/inputs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MiB = 2 ** 20;
const files = (...sizes: number[]) => sizes.map((bytes, i) => ({ path: `f${i}.parquet`, kind: 'parquet', bytes }) as InputFile);

describe('regularFileSize (what the supervisor sizes inputs by)', () => {
  it('a file has its size; a folder, a glob, a Hub name or nothing has none', () => {
    const fixture = join(ROOT, 'fixtures', 'sampling.parquet');
    expect(regularFileSize(fixture)).toBe(statSync(fixture).size);
    expect(regularFileSize(join(ROOT, 'fixtures'))).toBeNull();
    expect(regularFileSize(join(ROOT, 'fixtures', '*.parquet'))).toBeNull();
    expect(regularFileSize('nebius/SWE-rebench-openhands-trajectories')).toBeNull();
    expect(SMALL_INPUT_BYTES).toBe(16 * 2 ** 20);
  });
});

describe('poolSize', () => {
  it.each([
    ['--workers given, small input', { inputs: files(1000), workers: 2 }, 2],
    ['--workers given, large input', { inputs: files(64 * MiB), workers: 3 }, 3],
    ['--workers 1', { inputs: files(64 * MiB), workers: 1, fitWorkers: true }, 1],
    ['default, small input', { inputs: files(1000), workers: 2, fitWorkers: true }, 1],
    ['default, just under 16 MiB', { inputs: files(16 * MiB - 1), workers: 2, fitWorkers: true }, 1],
    ['default, 16 MiB', { inputs: files(16 * MiB), workers: 2, fitWorkers: true }, 2],
    ['default, small files adding up to 16 MiB', { inputs: files(8 * MiB, 4 * MiB, 4 * MiB), workers: 4, fitWorkers: true }, 4],
    ['default, no input', { inputs: files(), workers: 2, fitWorkers: true }, 1],
    ['a bound below one', { inputs: files(64 * MiB), workers: 0 }, 1],
  ])('%s', (_name, req, size) => {
    expect(poolSize(req)).toBe(size);
  });
});

const BIN = join(ROOT, 'bin', 'divergence-mine');
const dir = mkdtempSync(join(tmpdir(), 'dm-pool-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The worker threads a run's timeline names, and its output. */
function run(extra: string[], out: string): { workers: number; output: Buffer } {
  // fixtures/sampling.parquet: 142 KB, three row groups (three index tasks queued at once).
  const r = spawnSync(process.execPath, [BIN, 'mine', join(ROOT, 'fixtures', 'sampling.parquet'), '--out', join(dir, out), '-q', ...extra], {
    env: { ...process.env, DIVERGENCE_MINE_TIMELINE: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const threads = new Set(r.stderr.split('\n').map((l) => l.split(' ')[2]).filter((t) => t?.startsWith('worker')));
  return { workers: threads.size, output: readFileSync(join(dir, out)) };
}

describe('the CLI on a small input', () => {
  it('starts one worker without --workers, two with --workers 2, and writes the same rows', () => {
    const fitted = run([], 'default.jsonl');
    const two = run(['--workers', '2'], 'two.jsonl');
    expect(fitted.workers).toBe(1);
    expect(two.workers).toBe(2);
    expect(fitted.output.length).toBeGreaterThan(0);
    expect(fitted.output).toStrictEqual(two.output);
  }, 60_000);
});
