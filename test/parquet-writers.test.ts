// The writer matrix: the same 2,520 trajectory rows written by pyarrow, polars, DuckDB and parquet-rs
// with every common codec and page layout (fixtures/writers/, rows derived from real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius). Every file, mined by the BUILT CLI
// (`npm test` builds first), must give output byte-identical to fixtures/writers/expected/, which
// fixtures/writers/expect.mjs derived once with DuckDB's reader (`--engine duckdb`) from the reference
// file. Codecs our reader does not decode go through the parquet-wasm fallback with the same bytes.
import { describe, it, expect, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MATRIX = join(ROOT, 'fixtures', 'writers');
const FILES = join(MATRIX, 'files');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const RUN_TIMEOUT = 120_000;

// The matrix as fixtures/writers/README.md lists it: writer (`created_by` prefix), codec as DuckDB
// names it, rows per row group. A file missing from the folder, or one more, fails the test.
const MATRIX_FILES: Record<string, { writer: string; codec: string; rowGroups: number[] }> = {
  'reference-pyarrow-zstd.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'ZSTD', rowGroups: [2520] },
  'pyarrow-default.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [2520] },
  'pyarrow-data-page-v2.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [2520] },
  'pyarrow-gzip.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'GZIP', rowGroups: [2520] },
  'pyarrow-lz4-raw.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'LZ4_RAW', rowGroups: [2520] },
  'pyarrow-brotli.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'BROTLI', rowGroups: [2520] },
  'pyarrow-page-index.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [2520] },
  'pyarrow-row-groups-1024.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [1024, 1024, 472] },
  'pyarrow-row-groups-65536.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [2520] },
  'pyarrow-small-pages.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [1024, 1024, 472] },
  'pyarrow-no-dictionary.parquet': { writer: 'parquet-cpp-arrow version 25.0.1', codec: 'SNAPPY', rowGroups: [2520] },
  'polars-default.parquet': { writer: 'Polars', codec: 'ZSTD', rowGroups: [2520] },
  'duckdb-default.parquet': { writer: 'DuckDB version v1.5.6', codec: 'SNAPPY', rowGroups: [2520] },
  'duckdb-zstd-row-groups-2048.parquet': { writer: 'DuckDB version v1.5.6', codec: 'ZSTD', rowGroups: [2048, 472] },
  ...Object.fromEntries(
    ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'].flatMap((codec) =>
      ['v1', 'v2'].map((pages) => [
        `parquet-rs-${codec.toLowerCase().replaceAll('_', '-')}-${pages}.parquet`,
        { writer: 'parquet-rs version', codec, rowGroups: [2520] },
      ]),
    ),
  ),
};

// Written out by hand: 180 copies of the 14 rows of fixtures/forks.parquet, each copy (shortened texts)
// walks 15 pairs: 4 emitted, 4 no divergence, 4 environment divergence, 2 near and 1 exact duplicate,
// with 2 malformed arguments. expected/counters.json (from --engine duckdb) must agree.
const COPIES = 180;
const EXPECTED_COUNTERS = {
  trajectories_read: 14 * COPIES,
  duplicate_trajectory_ids: 0,
  unlabelled: 0,
  bad_rows: 0,
  malformed_arguments: 2 * COPIES,
  unknown_roles: 0,
  instances: 3 * COPIES,
  eligible_instances: 3 * COPIES,
  trajectories_extracted: 14 * COPIES,
  pairs_walked: 15 * COPIES,
  no_divergence: 4 * COPIES,
  environment_divergence: 4 * COPIES,
  near_duplicate: 2 * COPIES,
  exact_duplicate: 1 * COPIES,
  capped: 0,
  pairs_emitted: 4 * COPIES,
  divergence_turn_0: 0,
};

const expectedJsonl = gunzipSync(readFileSync(join(MATRIX, 'expected', 'pairs.jsonl.gz')));
const expectedCounters = JSON.parse(readFileSync(join(MATRIX, 'expected', 'counters.json'), 'utf8')) as Record<string, number>;
const found = readdirSync(FILES).sort();

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Mined {
  code: number;
  stderr: string;
  out: Buffer;
  counters: Record<string, number>;
  /** The stats' `engine_fallback` (row groups the js engine sent to parquet-wasm), absent when none. */
  fallback: unknown;
  leftovers: string[];
  dir: string;
}

function mine(file: string, extra: string[] = []): Promise<Mined> {
  const dir = mkdtempSync(join(tmpdir(), 'dm-writers-'));
  dirs.push(dir);
  const out = join(dir, 'pairs.jsonl');
  const stats = join(dir, 'stats.json');
  const args = [BIN, 'mine', '--parquet', join(FILES, file), '--out', out, '--stats', stats, '--quiet', ...extra];
  return new Promise((res) => {
    execFile(process.execPath, args, { cwd: dir, maxBuffer: 64 << 20, timeout: RUN_TIMEOUT }, (err, _stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      const leftovers = readdirSync(dir).filter((f) => f !== 'pairs.jsonl' && f !== 'stats.json');
      if (code !== 0) {
        res({ code, stderr, out: Buffer.alloc(0), counters: {}, fallback: undefined, leftovers, dir });
        return;
      }
      const doc = JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number>; engine_fallback?: unknown };
      res({ code, stderr, out: readFileSync(out), counters: doc.counters, fallback: doc.engine_fallback, leftovers, dir });
    });
  });
}

/** The first differing line, so a failure shows what differs instead of two 2.6 MB buffers. */
function firstDifference(got: Buffer, want: Buffer): string | null {
  if (got.equals(want)) return null;
  const g = got.toString('utf8').split('\n');
  const w = want.toString('utf8').split('\n');
  for (let i = 0; i < Math.max(g.length, w.length); i++) {
    if (g[i] !== w[i]) return `line ${i + 1} (of ${g.length} / ${w.length}):\n got  ${g[i]?.slice(0, 400)}\n want ${w[i]?.slice(0, 400)}`;
  }
  return 'same lines, different bytes';
}

describe('writer matrix: the files and the expected output', () => {
  it('the folder holds exactly the files of the matrix', () => {
    expect(found).toEqual(Object.keys(MATRIX_FILES).sort());
  });

  it('each file was written by the writer, codec and row groups the matrix says', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const glob = join(FILES, '*.parquet').replaceAll("'", "''");
      const meta = await conn.runAndReadAll(`SELECT file_name, created_by FROM parquet_file_metadata('${glob}')`);
      const groups = await conn.runAndReadAll(
        `SELECT file_name, row_group_id, any_value(row_group_num_rows), string_agg(DISTINCT compression)
         FROM parquet_metadata('${glob}') GROUP BY ALL ORDER BY file_name, row_group_id`,
      );
      const got: Record<string, { writer: string; codec: string; rowGroups: number[] }> = {};
      for (const [file, createdBy] of meta.getRows()) {
        const name = String(file).split('/').pop()!;
        const want = MATRIX_FILES[name];
        got[name] = { writer: want && String(createdBy).startsWith(want.writer) ? want.writer : String(createdBy), codec: '', rowGroups: [] };
      }
      for (const [file, , rows, codecs] of groups.getRows()) {
        const g = got[String(file).split('/').pop()!]!;
        g.rowGroups.push(Number(rows));
        // Every column chunk of a file has the one codec.
        g.codec = g.codec && g.codec !== String(codecs) ? `${g.codec},${String(codecs)}` : String(codecs);
      }
      expect(got).toEqual(MATRIX_FILES);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('the expected output holds the hand-counted funnel: 4 pairs for each of the 180 copies', () => {
    expect(expectedCounters).toEqual(EXPECTED_COUNTERS);
    const rows = expectedJsonl.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as { instance_id: string });
    expect(rows.length).toBe(EXPECTED_COUNTERS.pairs_emitted);
    const perCopy = new Map<string, number>();
    for (const r of rows) {
      const copy = /-c(\d{3})$/.exec(r.instance_id)?.[1];
      expect(copy, r.instance_id).toBeDefined();
      perCopy.set(copy!, (perCopy.get(copy!) ?? 0) + 1);
    }
    expect(perCopy.size).toBe(COPIES);
    expect([...perCopy.values()].every((n) => n === 4)).toBe(true);
  });
});

describe('writer matrix: every file mines to the expected bytes (default engine)', () => {
  it.each(found)('%s', async (file) => {
    const r = await mine(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(firstDifference(r.out, expectedJsonl)).toBeNull();
    expect(r.counters).toEqual(expectedCounters);
    // Every codec and layout of the matrix is read by our own reader, none through parquet-wasm.
    expect(r.fallback).toBeUndefined();
    expect(r.leftovers).toEqual([]);
  }, RUN_TIMEOUT);
});

describe('writer matrix: DuckDB engine on a few files', () => {
  // Small pages spanning rows, LZ4_RAW and brotli v2 pages, polars' PLAIN pages.
  it.each([
    'pyarrow-small-pages.parquet',
    'parquet-rs-lz4-raw-v2.parquet',
    'parquet-rs-brotli-v2.parquet',
    'polars-default.parquet',
  ])('%s', async (file) => {
    const r = await mine(file, ['--engine', 'duckdb']);
    expect(r.code, r.stderr).toBe(0);
    expect(firstDifference(r.out, expectedJsonl)).toBeNull();
    expect(r.counters).toEqual(expectedCounters);
  }, RUN_TIMEOUT);
});

describe('writer matrix: DuckDB engine on legacy LZ4', () => {
  // DuckDB 1.5 reads no codec 5 (Hadoop LZ4, as parquet-rs and parquet-mr write it): the default engine
  // does (above); with --engine duckdb it must be the documented one-line corrupt-input error.
  it('parquet-rs-lz4-v1.parquet is exit 5, one line naming the file and the codec, no output', async () => {
    const r = await mine('parquet-rs-lz4-v1.parquet', ['--engine', 'duckdb']);
    expect(r.code).toBe(5);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length, r.stderr).toBe(1);
    expect(lines[0]).toContain('parquet-rs-lz4-v1.parquet');
    expect(lines[0]).toContain('LZ4');
    expect(r.leftovers).toEqual([]);
    expect(existsSync(join(r.dir, 'pairs.jsonl'))).toBe(false);
  }, RUN_TIMEOUT);
});
