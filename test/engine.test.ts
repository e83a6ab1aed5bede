// Every parquet reader (our own `js` with native or pure-JS zstd, parquet-wasm, DuckDB's native
// reader) gives byte-identical output on every parquet fixture (real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 (c) Nebius), also rewritten by DuckDB in
// other encodings and codecs (the js engine's fallback: parquet-codecs.test.ts). Runs the BUILT CLI.
import { describe, it, expect, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const dir = mkdtempSync(join(tmpdir(), 'dm-engine-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `js-fzstd`: the js engine with zstd-napi disabled (the pure-JS decompressor). */
const ENGINES = ['js', 'js-fzstd', 'wasm', 'duckdb'];

async function mineWith(engine: string, input: string, file: string, extra: string[] = []): Promise<Buffer> {
  const env = { ...process.env, ...(engine === 'js-fzstd' ? { DIVERGENCE_MINE_ZSTD: 'js' } : {}) };
  const args = [BIN, 'mine', '--parquet', input, '--out', file, '--engine', engine.replace('-fzstd', ''), '--quiet', '--workers', '2', '--stats', `${file}.stats.json`, '--force', ...extra];
  await run(process.execPath, args, { timeout: 60_000, env });
  // The counters of the stats file (its input section names the file).
  const stats = JSON.parse(readFileSync(`${file}.stats.json`, 'utf8')) as { counters: unknown };
  return Buffer.concat([readFileSync(file), Buffer.from(JSON.stringify(stats.counters))]);
}

/** The wasm engine's output on forks.parquet, which the rewritten files must match: one run, made by the first test that needs it. */
let forksByWasm: Promise<Buffer> | null = null;
const wantForks = () => (forksByWasm ??= mineWith('wasm', join(ROOT, 'fixtures', 'forks.parquet'), join(dir, 'rewritten-want.jsonl')));

describe('every --engine agrees', () => {
  it.each(['forks', 'sampling', 'labels', 'labels-float'])('%s.parquet', async (name) => {
    const out: Record<string, Buffer> = {};
    for (const engine of ENGINES) out[engine] = await mineWith(engine, join(ROOT, 'fixtures', `${name}.parquet`), join(dir, `${name}.${engine}.jsonl`));
    expect(out.wasm!.length).toBeGreaterThan(0);
    for (const engine of ENGINES) expect(out[engine]!.equals(out.wasm!), engine).toBe(true);
  }, 120_000);

  // DuckDB rewrites the fixture with features our reader decodes itself (v2 pages with delta and
  // byte-stream-split values, uncompressed pages) or leaves to parquet-wasm (snappy).
  it.each([
    ['v2 pages, delta strings', 'COMPRESSION zstd, PARQUET_VERSION v2'],
    ['snappy', 'COMPRESSION snappy'],
    ['uncompressed', 'COMPRESSION uncompressed'],
  ])('forks.parquet rewritten with %s', async (name, opts) => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const conn = await (await DuckDBInstance.create(':memory:')).connect();
    const input = join(dir, `forks-${name.replace(/\W+/g, '-')}.parquet`);
    await conn.run(`COPY (SELECT * FROM read_parquet('${join(ROOT, 'fixtures', 'forks.parquet')}')) TO '${input}' (FORMAT parquet, ${opts})`);
    const want = await wantForks();
    const got = await mineWith('js', input, join(dir, `rewritten-${name.replace(/\W+/g, '-')}.jsonl`));
    expect(got.equals(want)).toBe(true);
  }, 120_000);

  it('--shape trl carries the same tools through either engine', async () => {
    const out: Record<string, Buffer> = {};
    for (const engine of ENGINES) out[engine] = await mineWith(engine, join(ROOT, 'fixtures', 'forks.parquet'), join(dir, `trl.${engine}.jsonl`), ['--shape', 'trl']);
    for (const engine of ENGINES) expect(out[engine]!.equals(out.wasm!), engine).toBe(true);
  }, 120_000);
});
