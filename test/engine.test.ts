// Both decoders of the trajectory column (parquet-wasm, DuckDB's native reader) give byte-identical
// output on every parquet fixture (real rows of nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 (c) Nebius). Runs the BUILT CLI.
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

describe('--engine wasm and --engine duckdb agree', () => {
  it.each(['forks', 'sampling', 'labels', 'labels-float'])('%s.parquet', async (name) => {
    const out: Record<string, Buffer> = {};
    for (const engine of ['wasm', 'duckdb']) {
      const file = join(dir, `${name}.${engine}.jsonl`);
      await run(process.execPath, [BIN, 'mine', '--parquet', join(ROOT, 'fixtures', `${name}.parquet`), '--out', file, '--engine', engine, '--quiet', '--workers', '2'], { timeout: 60_000 });
      out[engine] = readFileSync(file);
    }
    expect(out.wasm!.length).toBeGreaterThan(0);
    expect(out.duckdb!.equals(out.wasm!)).toBe(true);
  }, 120_000);

  it('--shape trl carries the same tools through either engine', async () => {
    const out: Record<string, Buffer> = {};
    for (const engine of ['wasm', 'duckdb']) {
      const file = join(dir, `trl.${engine}.jsonl`);
      await run(process.execPath, [BIN, 'mine', '--parquet', join(ROOT, 'fixtures', 'forks.parquet'), '--shape', 'trl', '--out', file, '--engine', engine, '--quiet'], { timeout: 60_000 });
      out[engine] = readFileSync(file);
    }
    expect(out.duckdb!.equals(out.wasm!)).toBe(true);
  }, 120_000);
});
