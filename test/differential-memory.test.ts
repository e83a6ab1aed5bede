// mineRows (the library's in-memory entry, src/engine/mine-rows.ts) against the BUILT CLI (`npm run build`
// first) on every fixture and source corpus of the suite: the same rows, byte for byte, and the
// same counters. Both run the same contract code (select, encode, spill walk); what differs is how
// rows are read (here: JSON.parse / parquet-wasm in this process; there: the workers' readers), so
// this pins that reading never changes what is mined.
//
// Fixtures: real rows of nebius/SWE-rebench-openhands-trajectories and forks of them (CC-BY-4.0,
// © Nebius; Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius
// blog, 2025), see fixtures/README.md and fixtures/sources/README.md.
import { execFile } from 'node:child_process';
import { parseKeepingNumbers } from '../src/contract/json-numbers.js';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableFromIPC, type Data } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mineRows, type InputRow } from '../src/engine/mine-rows.js';
import type { MiningOptions } from '../src/contract/options.js';
import { makeGetter } from '../src/io/arrow-values.js';
import { detectSchema, toStandardRow } from '../src/sources/schema.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const TIMEOUT = 120_000;

const inputs = (folder: string) =>
  readdirSync(join(ROOT, folder))
    .filter((f) => f.endsWith('.jsonl') || f.endsWith('.parquet'))
    .sort()
    .map((f) => `${folder}/${f}`);
const FILES = [...inputs('fixtures'), ...inputs('fixtures/sources')];

/** Option sets and their CLI flags: the defaults, and one that moves every tunable rule. */
const OPTION_SETS: { name: string; options: Partial<MiningOptions>; flags: string[] }[] = [
  { name: 'defaults', options: {}, flags: [] },
  {
    name: 'seed 1, 2 per side, 1 pair, similarity 0.5, reasoning key command',
    options: { seed: '1', maxPerSide: 2, maxPairsPerInstance: 1, minSimilaritySkip: 0.5, reasoningKeys: ['command'] },
    flags: ['--seed', '1', '--max-per-side', '2', '--max-pairs-per-instance', '1', '--min-similarity-skip', '0.5', '--reasoning-keys', 'command'],
  },
];

function readRows(path: string): Record<string, unknown>[] {
  if (path.endsWith('.jsonl')) {
    // The messages' numbers keep their source text, as the CLI's JSONL reader keeps them (contract v3 §11).
    return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => {
      const o = JSON.parse(l) as Record<string, unknown>;
      const kept = parseKeepingNumbers(l) as Record<string, unknown>;
      for (const k of ['trajectory', 'messages']) if (k in o) o[k] = kept[k];
      return o;
    });
  }
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  const rows: Record<string, unknown>[] = [];
  for (const batch of table.batches) {
    const getters = batch.schema.fields.map((f, k) => [f.name, makeGetter(batch.data.children[k] as Data)] as const);
    for (let i = 0; i < batch.numRows; i++) rows.push(Object.fromEntries(getters.map(([name, get]) => [name, get(i)])));
  }
  return rows;
}

/** The rows as mineRows takes them, laid out as the CLI's schema detection reads the file. */
function standardRows(path: string): { rows: InputRow[]; scheme: 'contract' | 'text-actions' } {
  const raw = readRows(path);
  const columns = Object.keys(raw[0] ?? {});
  const upstream = ['trajectory_id', 'instance_id', 'resolved', 'trajectory'].every((c) => columns.includes(c)) && !columns.includes('messages');
  if (upstream) return { rows: raw, scheme: 'contract' };
  const d = detectSchema(columns, raw[0]);
  return { rows: raw.map((r) => toStandardRow(r, d.mapping, d.schema)), scheme: d.schema === 'text-actions' ? 'text-actions' : 'contract' };
}

function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(BIN, args, { cwd: ROOT }, (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }));
  });
}

let dir = '';
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-differential-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mineRows and the CLI agree on every fixture', () => {
  it('finds the fixtures', () => {
    expect(FILES).toEqual(expect.arrayContaining(['fixtures/forks.parquet', 'fixtures/forks.jsonl', 'fixtures/sources/text-actions.jsonl']));
  });
  const cases = FILES.flatMap((file) => OPTION_SETS.map((set) => ({ file, ...set })));
  it.each(cases)('$file, $name', async ({ file, options, flags }) => {
    const out = join(dir, `${file.replaceAll('/', '_')}-${flags.length}.jsonl`);
    const stats = `${out}.stats.json`;
    const run = await cli(['mine', file, '--out', out, '--stats', stats, '--force', '--quiet', ...flags]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { rows, scheme } = standardRows(join(ROOT, file));
    const mined = mineRows(rows, options, file, scheme);
    expect(mined.rows.map((r) => `${JSON.stringify(r)}\n`).join('')).toBe(readFileSync(out, 'utf8'));
    expect(mined.counters).toEqual((JSON.parse(readFileSync(stats, 'utf8')) as { counters: unknown }).counters);
  }, TIMEOUT);
});
