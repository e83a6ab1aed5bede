// Hostile parquet files through the built CLI on every engine: values longer than a JavaScript
// string, declared sizes far beyond what a page's values can take, a dictionary of 150 M entries,
// definition levels above their maximum. Each is a few KB to a few hundred KB on disk, built at test
// time (test/support/hostile-parquet.mjs) from fixtures/forks.parquet (real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius). Every run must end in exit 5 with
// one line naming the file, row group, column and what is wrong, leave no output, and peak under
// 1 GiB of RSS (the kernel's figure for the whole process, workers included: test/support/max-rss.cjs).
// A file that is only oversized (a dictionary of 10 M entries, most unused) is read like the base file.
import { constants } from 'node:buffer';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM test support without types
import { BIG_STRING, DICTIONARY_ENTRIES, HOSTILE_BASE, INDICES_BOMB, writeHostileFiles } from './support/hostile-parquet.mjs';
// @ts-expect-error -- plain ESM test support without types
import { ROOT, isCleanError, runCli } from './support/robust-fixtures.mjs';

const ENGINES = ['js', 'wasm', 'duckdb'] as const;
const RSS_LIMIT_KIB = 1024 * 1024;
const PROBE = join(ROOT, 'test', 'support', 'max-rss.cjs');
const n = (v: number) => v.toLocaleString('en-US');
const tooLong = `a string value of ${n(BIG_STRING)} bytes, longer than the longest JavaScript string (${n(constants.MAX_STRING_LENGTH)} characters)`;

/** What each file must say, after `<file>: row group 0, column `. */
const EXPECTED: Record<string, string> = {
  'big-string': `trajectory_id: ${tooLong}`,
  'big-content': `trajectory.list.element.content: ${tooLong}`,
  // 14 values, one level each: 4 + 14 * 7 + 32 bytes of levels, 1 + 14 * 10 + 1024 of indices at most.
  'indices-bomb': `resolved: corrupt parquet data (a page of 14 values declares ${INDICES_BOMB} bytes, more than they can take (1299))`,
  'dictionary-150m': `instance_id: corrupt parquet data (a dictionary of ${DICTIONARY_ENTRIES} entries, more than 67108864)`,
  'levels-out-of-range': 'trajectory.list.element.content: corrupt parquet data (definition level 7 above the maximum 4)',
};

let dir = '';
let files: Record<string, string> = {};
beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-hostile-'));
  files = await writeHostileFiles(dir);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stderr: string;
  out: string;
  maxRssKiB: number;
}

async function mine(input: string, engine: string, tag: string): Promise<Run> {
  // A folder of its own: whatever the run leaves beside its output shows.
  const outDir = join(dir, `out-${tag}-${engine}`);
  const out = join(outDir, 'pairs.jsonl');
  const rss = join(dir, `rss-${tag}-${engine}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir);
  const r = await runCli(['mine', '--parquet', input, '--out', out, '--engine', engine, '--workers', '2', '--quiet'], {
    timeoutMs: 120_000,
    nodeArgs: ['--require', PROBE],
    env: { DM_MAX_RSS_FILE: rss },
  });
  return { code: r.code, stderr: r.stderr, out, maxRssKiB: existsSync(rss) ? Number(readFileSync(rss, 'utf8')) : NaN };
}

describe('hostile parquet files: exit 5, one line, no output, under 1 GiB, on every engine (built CLI)', () => {
  const cases = Object.keys(EXPECTED).flatMap((file) => ENGINES.map((engine) => ({ file, engine })));
  it.each(cases)('$file, --engine $engine', async ({ file, engine }) => {
    const path = files[file]!;
    const r = await mine(path, engine, file);
    expect(r.code).toBe(5);
    expect(isCleanError(r.stderr)).toBe(true);
    expect(r.stderr.trim().split('\n')).toEqual([`divergence-mine: error: ${path}: row group 0, column ${EXPECTED[file]}`]);
    expect(existsSync(r.out)).toBe(false);
    expect(readdirSync(join(r.out, '..'))).toEqual([]);
    expect(r.maxRssKiB).toBeGreaterThan(0);
    expect(r.maxRssKiB).toBeLessThan(RSS_LIMIT_KIB);
  }, 120_000);
});

describe('a dictionary of 10 M entries, most unused: read like the base file on every engine (built CLI)', () => {
  let base = '';
  beforeAll(async () => {
    const r = await mine(HOSTILE_BASE, 'js', 'base');
    expect(r.code).toBe(0);
    base = readFileSync(r.out, 'utf8');
    expect(base.trim().split('\n')).toHaveLength(4);
  }, 120_000);
  it.each(ENGINES)('--engine %s', async (engine) => {
    const r = await mine(files['dictionary-unused']!, engine, 'dictionary-unused');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(r.out, 'utf8')).toBe(base);
    expect(r.maxRssKiB).toBeLessThan(RSS_LIMIT_KIB);
  }, 120_000);
});

describe("a DuckDB error is one line: its first (DuckDB adds paragraphs of advice)", () => {
  it('an out-of-memory error from a real DuckDB instance', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const { asDecoderError, DecoderError } = await import('../src/errors.js');
    const conn = await (await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '8MB' })).connect();
    let raw: unknown;
    try {
      await conn.runAndReadAll("SELECT string_agg(repeat('x', 1000), '') FROM range(100000)");
    } catch (e) {
      raw = e;
    }
    expect((raw as Error).message).toContain('\n');
    const d = asDecoderError(raw);
    expect(d).toBeInstanceOf(DecoderError);
    expect((d as Error).message).toMatch(/^Out of Memory Error: failed to allocate data of size [^\n]+\)$/);
  });
});
