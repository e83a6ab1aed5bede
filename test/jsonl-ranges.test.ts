// A large plain JSONL input is read in byte ranges by every worker (src/engine/jsonl-ranges.ts): the
// plan of ranges, the range of a line, and the BUILT CLI on the JSONL fixtures (real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius; see fixtures/README.md) cut into
// eight ranges at arbitrary bytes (DIVERGENCE_MINE_JSONL_RANGE=1, two workers), against the same
// run reading each file whole with one worker: the same bytes out, the same counters, and the same
// error, naming the same line, when a line is bad.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonlRanges, minRangeBytes, rangeOfLine, type NumberedRange } from '../src/engine/jsonl-ranges.js';
import { cli, ROOT } from './support/cli.js';

const MiB = 2 ** 20;
const dir = mkdtempSync(join(tmpdir(), 'dm-jsonl-ranges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jsonlRanges', () => {
  it.each([
    ['gzipped: whole', 1000 * MiB, true, 2, 16 * MiB, null],
    ['one worker: whole', 1000 * MiB, false, 1, 16 * MiB, null],
    ['no larger than the smallest range: whole', 16 * MiB, false, 2, 16 * MiB, null],
    ['just over: two ranges, the second short', 16 * MiB + 1, false, 2, 16 * MiB, [[0, 16 * MiB], [16 * MiB, 16 * MiB + 1]]],
    ['large: four per worker', 800, false, 2, 1, [[0, 100], [100, 200], [200, 300], [300, 400], [400, 500], [500, 600], [600, 700], [700, 800]]],
    ['sizes rounded up, the last range short', 10, false, 2, 1, [[0, 2], [2, 4], [4, 6], [6, 8], [8, 10]]],
    ['the smallest range wins over four per worker', 100, false, 2, 40, [[0, 40], [40, 80], [80, 100]]],
  ])('%s', (_name, bytes, gz, workers, min, want) => {
    const got = jsonlRanges(bytes, gz, workers, min);
    expect(got === null ? null : got.map((r) => [r.start, r.end])).toStrictEqual(want);
  });

  it('tiles the file: each range starts where the last ended, from 0 to the end', () => {
    for (const bytes of [2, 3, 17, 1000, 12_345_677]) {
      const r = jsonlRanges(bytes, false, 3, 1)!;
      expect(r[0]!.start).toBe(0);
      expect(r[r.length - 1]!.end).toBe(bytes);
      r.slice(1).forEach((x, k) => expect(x.start).toBe(r[k]!.end));
    }
  });

  it('DIVERGENCE_MINE_JSONL_RANGE: a whole number of bytes, else 16 MiB', () => {
    expect([minRangeBytes('1'), minRangeBytes('4096'), minRangeBytes(undefined), minRangeBytes('0'), minRangeBytes('-5'), minRangeBytes('1.5'), minRangeBytes('x')]).toStrictEqual([1, 4096, 16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB, 16 * MiB]);
  });
});

describe('rangeOfLine', () => {
  // Lines 1-3 in the first range, none start in the second, 4-5 in the third.
  const ranges: NumberedRange[] = [
    { linesBefore: 0, lineCount: 3 },
    { linesBefore: 3, lineCount: 0 },
    { linesBefore: 3, lineCount: 2 },
  ];
  it.each([[1, 0], [3, 0], [4, 2], [5, 2]])('line %i is in range %i', (line, want) => {
    expect(rangeOfLine(ranges, line)).toBe(want);
  });
});

describe('the CLI reads a JSONL input in ranges as it reads it whole', () => {
  const RANGED = { DIVERGENCE_MINE_JSONL_RANGE: '1' };

  async function both(name: string, input: string, extra: string[] = []) {
    const out = (k: string) => join(dir, `${name}-${k}.jsonl`);
    const whole = await cli(['mine', '--jsonl', input, '--out', out('whole'), '--stats', `${out('whole')}.stats.json`, '--workers', '1', '-q', ...extra]);
    const ranged = await cli(['mine', '--jsonl', input, '--out', out('ranged'), '--stats', `${out('ranged')}.stats.json`, '--workers', '2', '-q', ...extra], RANGED);
    return { whole, ranged, out };
  }

  const counters = (path: string) => JSON.parse(readFileSync(path, 'utf8')).counters;

  it.each([
    ['forks', 'forks.jsonl', []],
    ['sampling', 'sampling.jsonl', ['--seed', '7', '--max-per-side', '2']],
    ['edges', 'edges.jsonl', []],
    ['labels', 'labels.jsonl', []],
    ['swe-gym', join('sources', 'swe-gym.jsonl'), []],
  ])('%s: the same pairs, byte for byte, and the same counters', async (name, file, extra) => {
    const { whole, ranged, out } = await both(name, join(ROOT, 'fixtures', file), extra);
    expect(whole.code, whole.stderr).toBe(0);
    expect(ranged.code, ranged.stderr).toBe(0);
    expect(readFileSync(out('ranged'))).toStrictEqual(readFileSync(out('whole')));
    expect(readFileSync(out('ranged'), 'utf8').length).toBeGreaterThan(0);
    expect(counters(`${out('ranged')}.stats.json`)).toStrictEqual(counters(`${out('whole')}.stats.json`));
  });

  it('the exit-status filter reads the column in the same ranges', async () => {
    const lines = readFileSync(join(ROOT, 'fixtures', 'forks.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const input = join(dir, 'exit-status.jsonl');
    writeFileSync(input, lines.map((l, k) => JSON.stringify({ ...JSON.parse(l), exit_status: k % 3 === 0 ? 'submitted' : 'exit_context' })).join('\n') + '\n');
    const { whole, ranged, out } = await both('exit-status', input, ['--rejected-exit-status', 'submit']);
    expect(whole.code, whole.stderr).toBe(0);
    expect(ranged.code, ranged.stderr).toBe(0);
    expect(readFileSync(out('ranged'))).toStrictEqual(readFileSync(out('whole')));
    expect(JSON.parse(readFileSync(`${out('ranged')}.stats.json`, 'utf8')).exit_status).toStrictEqual(JSON.parse(readFileSync(`${out('whole')}.stats.json`, 'utf8')).exit_status);
  });

  it.each([
    ['an invalid line near the end', (l: string) => l.slice(0, -1), /:(\d+): invalid JSON/],
    ['a line without a required column', (l: string) => JSON.stringify({ ...JSON.parse(l), instance_id: undefined }), /:(\d+): missing required column instance_id/],
    ['a line whose instance is null', (l: string) => JSON.stringify({ ...JSON.parse(l), instance_id: null }), /:(\d+): instance_id is null/],
  ])('%s: the same one-line error, naming the same line', async (name, damage, pattern) => {
    const lines = readFileSync(join(ROOT, 'fixtures', 'sampling.jsonl'), 'utf8').split('\n');
    const at = lines.length - 4;
    lines[at] = damage(lines[at]!);
    const input = join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    writeFileSync(input, lines.join('\n'));
    const { whole, ranged } = await both(name.replace(/\W+/g, '-'), input);
    expect(whole.code).not.toBe(0);
    expect(ranged.code).toBe(whole.code);
    expect(ranged.stderr).toBe(whole.stderr);
    expect(whole.stderr.trim().split('\n')).toHaveLength(1);
    expect(Number(pattern.exec(whole.stderr)?.[1])).toBe(at + 1);
  });
});
