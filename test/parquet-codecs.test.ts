// Every parquet codec our own reader (--engine js) decodes, on fixtures/sampling.parquet (real rows
// of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 (c) Nebius) rewritten with each codec by
// parquet-wasm (parquet-rs) and by DuckDB: read value for value like parquet-wasm reads them, with
// the native and the pure-JS decoder of each codec, and never through the parquet-wasm fallback.
// Corrupt pages of each codec fail cleanly through the built CLI (exit 5, file, row group, column).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as pw from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { editFirstPage } from './support/page-surgery.js';
import { wasmValues } from './support/wasm-values.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const SRC = join(ROOT, 'fixtures', 'sampling.parquet');
const dir = mkdtempSync(join(tmpdir(), 'dm-codecs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type CodecName = 'UNCOMPRESSED' | 'SNAPPY' | 'GZIP' | 'BROTLI' | 'LZ4' | 'ZSTD' | 'LZ4_RAW';
/** Codec, its number in the footer, DuckDB's name for it (DuckDB writes no Hadoop LZ4). */
const CODECS: { codec: CodecName; id: number; duck: string | null }[] = [
  { codec: 'UNCOMPRESSED', id: 0, duck: 'uncompressed' },
  { codec: 'SNAPPY', id: 1, duck: 'snappy' },
  { codec: 'GZIP', id: 2, duck: 'gzip' },
  { codec: 'BROTLI', id: 4, duck: 'brotli' },
  { codec: 'LZ4', id: 5, duck: null },
  { codec: 'ZSTD', id: 6, duck: 'zstd' },
  { codec: 'LZ4_RAW', id: 7, duck: 'lz4' },
];
/** The pure-JS (or streamed) path of every codec that has another one. */
const JS_ENV = { DIVERGENCE_MINE_ZSTD: 'js', DIVERGENCE_MINE_LZ4: 'js', DIVERGENCE_MINE_SNAPPY: 'js', DIVERGENCE_MINE_GZIP: 'stream', DIVERGENCE_MINE_BROTLI: 'stream' };
const DECODERS: Record<'native' | 'js', Record<CodecName, string>> = {
  native: { UNCOMPRESSED: 'none', SNAPPY: 'snappy', GZIP: 'node:zlib', BROTLI: 'node:zlib', LZ4: 'lz4-napi', ZSTD: 'zstd-napi', LZ4_RAW: 'lz4-napi' },
  js: { UNCOMPRESSED: 'none', SNAPPY: 'snappyjs', GZIP: 'fflate', BROTLI: 'brotli-wasm', LZ4: 'lz4js', ZSTD: 'fzstd', LZ4_RAW: 'lz4js' },
};
const IMPLS = ['native', 'js'] as const;

function envFor(impl: 'native' | 'js'): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(JS_ENV)) delete env[k];
  return impl === 'js' ? { ...env, ...JS_ENV } : env;
}

/** Our reader, loaded afresh with the environment of `impl` (the decoders are chosen once per load). */
async function loadReader(impl: 'native' | 'js') {
  const saved = { ...process.env };
  Object.assign(process.env, envFor(impl));
  for (const k of Object.keys(JS_ENV)) if (impl === 'native') delete process.env[k];
  vi.resetModules();
  const reader = await import('../src/parquet/reader.js');
  const inflate = await import('../src/parquet/inflate.js');
  // Decoders are picked on first use: pick them now, under this environment.
  const decoders = Object.fromEntries(CODECS.map((c) => [c.codec, inflate.decoderOf(c.id)]));
  for (const k of Object.keys(JS_ENV)) delete process.env[k];
  Object.assign(process.env, saved);
  return { reader, decoders };
}

function writeWasm(codec: CodecName, path: string, plainPages = false): void {
  let props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression[codec]);
  // Plain v1 pages without statistics: the page surgery rewrites exactly such headers.
  if (plainPages) props = props.setDictionaryEnabled(false).setStatisticsEnabled(pw.EnabledStatistics.None);
  writeFileSync(path, pw.writeParquet(pw.readParquet(readFileSync(SRC)), props.build()));
}

async function writeDuck(select: string, path: string, opts: string): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  await conn.run(`COPY (${select.replace('$SRC', `read_parquet('${SRC}')`)}) TO '${path}' (FORMAT parquet, ${opts})`);
}

interface Mined {
  output: Buffer;
  stats: { counters: unknown; engine_fallback?: { row_groups: number; reasons: Record<string, number> } };
  stderr: string;
}
async function mine(input: string, engine: string, env: NodeJS.ProcessEnv, extra: string[] = ['--quiet']): Promise<Mined> {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.jsonl`);
  const args = [BIN, 'mine', '--parquet', input, '--out', out, '--engine', engine, '--workers', '2', '--stats', `${out}.stats.json`, ...extra];
  const { stderr } = await run(process.execPath, args, { timeout: 60_000, env });
  return { output: readFileSync(out), stats: JSON.parse(readFileSync(`${out}.stats.json`, 'utf8')) as Mined['stats'], stderr };
}

const wasmFile = (codec: CodecName) => join(dir, `wasm-${codec}.parquet`);
const duckFile = (codec: CodecName) => join(dir, `duck-${codec}.parquet`);
const WRITTEN: { writer: 'parquet-wasm' | 'duckdb'; codec: CodecName; id: number; path: string }[] = [
  ...CODECS.map((c) => ({ writer: 'parquet-wasm' as const, codec: c.codec, id: c.id, path: wasmFile(c.codec) })),
  ...CODECS.filter((c) => c.duck).map((c) => ({ writer: 'duckdb' as const, codec: c.codec, id: c.id, path: duckFile(c.codec) })),
];

let columns: string[] = [];
let want: Mined;
beforeAll(async () => {
  for (const c of CODECS) {
    writeWasm(c.codec, wasmFile(c.codec));
    if (c.duck) await writeDuck('SELECT * FROM $SRC', duckFile(c.codec), `COMPRESSION ${c.duck}`);
  }
  // The columns the miner reads: our reader must decode each of them.
  const { reader } = await loadReader('native');
  columns = reader.fileMeta(SRC).fields.map((f) => f.name).filter((n) => ['trajectory_id', 'instance_id', 'repo', 'resolved', 'trajectory', 'tools'].includes(n));
  want = await mine(SRC, 'wasm', envFor('native'));
}, 120_000);

describe('our reader decodes every codec like parquet-wasm', () => {
  it('the fixture has the columns the miner reads', () => expect(columns).toEqual(expect.arrayContaining(['trajectory_id', 'instance_id', 'resolved', 'trajectory'])));

  const cases = WRITTEN.flatMap((w) => IMPLS.map((impl) => ({ ...w, impl })));
  it.each(cases)('$writer $codec, $impl decoder', async ({ path, id, codec, impl }) => {
    const { reader, decoders } = await loadReader(impl);
    expect(decoders[codec]).toBe(DECODERS[impl][codec]);
    const meta = reader.footer(path);
    // The writer really used this codec, for every column chunk.
    expect(new Set(meta.rowGroups.flatMap((g) => g.chunks.map((ch) => ch.codec)))).toEqual(new Set([id]));
    const expected = await wasmValues(path, columns);
    const got = new Map<string, unknown[]>(columns.map((c) => [c, []]));
    // readRows raises Unsupported instead of falling back: a value here is our own reader's.
    for (let g = 0; g < meta.rowGroups.length; g++) {
      for (const [c, vs] of reader.readRowGroup(path, g, columns, null)) got.get(c)!.push(...vs);
    }
    for (const c of columns) expect(got.get(c), c).toEqual(expected.get(c));
    expect(got.get('trajectory')!.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('the built CLI mines every codec without the parquet-wasm fallback', () => {
  const cases = [
    // The pure-JS decoders through the CLI where they differ from the native ones.
    ...CODECS.flatMap((c) =>
      IMPLS.filter((impl) => impl === 'native' || DECODERS.js[c.codec] !== DECODERS.native[c.codec]).map((impl) => ({ writer: 'parquet-wasm', codec: c.codec, impl, path: wasmFile(c.codec) })),
    ),
    ...CODECS.filter((c) => c.duck).map((c) => ({ writer: 'duckdb', codec: c.codec, impl: 'native' as const, path: duckFile(c.codec) })),
  ];
  it.each(cases)('$writer $codec, $impl decoder', async ({ path, impl }) => {
    const got = await mine(path, 'js', envFor(impl));
    expect(got.output.length).toBeGreaterThan(0);
    expect(got.output.equals(want.output)).toBe(true);
    expect(got.stats.counters).toEqual(want.stats.counters);
    expect(got.stats.engine_fallback).toBeUndefined();
  }, 60_000);
});

describe('--stats and stderr report row groups read through the parquet-wasm fallback', () => {
  // Unsigned labels are one thing our reader leaves to parquet-wasm.
  const path = join(dir, 'unsigned-resolved.parquet');
  beforeAll(() => writeDuck('SELECT * REPLACE (resolved::UTINYINT AS resolved) FROM $SRC', path, 'COMPRESSION zstd, ROW_GROUP_SIZE 4'), 60_000);

  it('counts each row group once, with its reason; same output as --engine wasm', async () => {
    const { reader } = await loadReader('native');
    const groups = reader.footer(path).rowGroups.length;
    expect(groups).toBeGreaterThan(1);
    const got = await mine(path, 'js', envFor('native'), []);
    const ref = await mine(path, 'wasm', envFor('native'));
    expect(got.output.equals(ref.output)).toBe(true);
    expect(got.stats.engine_fallback?.row_groups).toBe(groups);
    const reasons = Object.entries(got.stats.engine_fallback!.reasons);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]![0]).toMatch(/^column resolved: /);
    expect(reasons[0]![1]).toBe(groups);
    expect(got.stderr).toContain(`--engine js read ${groups} row groups through parquet-wasm (column resolved: `);
    expect(ref.stats.engine_fallback).toBeUndefined();
  }, 60_000);

  it('--quiet leaves the line out, the stats file keeps it', async () => {
    const got = await mine(path, 'js', envFor('native'));
    expect(got.stderr).not.toContain('parquet-wasm');
    expect(got.stats.engine_fallback?.row_groups).toBeGreaterThan(1);
  }, 60_000);
});

describe('corrupt pages of every codec: exit 5 naming file, row group and column', () => {
  type Case = { name: string; edit: (size: number, body: Uint8Array) => { uncompressed: number; body: Uint8Array }; why: RegExp };
  const KINDS: Case[] = [
    { name: 'truncated body', edit: (size, body) => ({ uncompressed: size, body: body.subarray(0, Math.floor(body.length / 2)) }), why: /./ },
    { name: 'output longer than declared', edit: (size, body) => ({ uncompressed: size - 7, body }), why: /more than its declared|not its declared|declares|corrupt block/ },
    { name: 'output shorter than declared', edit: (size, body) => ({ uncompressed: size + 7, body }), why: /decompresses to \d+ bytes, not its declared|declares|corrupt block/ },
    // Room for the longer varint: the body loses a few bytes (refused before it is decoded).
    { name: 'absurd declared size', edit: (_size, body) => ({ uncompressed: 1_500_000_000, body: body.subarray(0, body.length - 8) }), why: /can expand to|not its declared|declares|truncated|end/ },
  ];
  // Every codec and kind through the reader itself (the UserError the CLI prints as its one line); through
  // the built CLI every kind for a whole-page codec (snappy) and a streamed one (zstd): the exit code, the
  // one-line message and the absent output come from the CLI's error path, the same for every codec.
  const cases = CODECS.flatMap((c) => KINDS.map((k) => ({ codec: c.codec, kind: k.name, edit: k.edit, why: k.why })));
  const badFile = (codec: CodecName, kind: string, edit: Case['edit']): string => {
    const clean = join(dir, `plain-${codec}.parquet`);
    if (!existsSync(clean)) writeWasm(codec, clean, true);
    const bad = join(dir, `bad-${codec}-${kind.replace(/\W+/g, '-')}.parquet`);
    editFirstPage(clean, bad, 'trajectory_id', edit);
    return bad;
  };
  it.each(cases)('reader: $codec: $kind', async ({ codec, kind, edit, why }) => {
    const bad = badFile(codec, kind, edit);
    const { reader } = await loadReader('native');
    let err: unknown;
    try {
      reader.readRowGroup(bad, 0, ['trajectory_id'], null);
    } catch (e) {
      err = e;
    }
    // A fresh module instance (loadReader resets modules): compare by name, not by class.
    const u = err as { name?: string; exitCode?: number; message: string };
    expect(u.name).toBe('UserError');
    expect(u.exitCode).toBe(5);
    expect(u.message).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: row group 0, column trajectory_id: corrupt parquet data \\(`));
    expect(u.message).toMatch(why);
    expect(u.message).not.toContain('\n');
  }, 60_000);
  it.each(cases.filter((c) => c.codec === 'SNAPPY' || c.codec === 'ZSTD'))('CLI: $codec: $kind', async ({ codec, kind, edit, why }) => {
    const bad = badFile(codec, kind, edit);
    const out = join(dir, `bad-${codec}.jsonl`);
    let err: { code?: number; stderr?: string } = {};
    try {
      await run(process.execPath, [BIN, 'mine', '--parquet', bad, '--out', out, '--engine', 'js', '--workers', '1', '--quiet', '--force'], { timeout: 60_000 });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe(5);
    const lines = err.stderr!.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^divergence-mine: error: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: row group 0, column trajectory_id: corrupt parquet data \\(`));
    expect(lines[0]).toMatch(why);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
