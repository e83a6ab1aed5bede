// Determinism: the same input and options give byte-identical JSONL and parquet output (and the same
// counters) across repeated runs, across --workers 1 and 2, and across the input as one file, as
// many row groups, split into several files (a folder), as JSONL, or split across both formats.
//
// Fixtures are built in a temp folder from real rows of nebius/SWE-rebench-openhands-trajectories
// (CC-BY-4.0, © Nebius; see test/support/robust-fixtures.mjs). This test runs the BUILT CLI (dist/,
// `npm test` builds first).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
// the contract's reference walker (imports nothing from src/): what every run must produce
import { referenceMine } from '../fixtures/reference-walker.mjs';
import { ROOT, forkedRows, mapLimit, regroupParquet, runCli, tempDir, writeJsonl, writeUpstreamParquet } from './support/robust-fixtures.mjs';

type Row = Record<string, unknown> & { trajectory: Record<string, unknown>[] };

let root = '';
let rowCount = 0;
let inputRows: Row[] = [];
/** Reference output for `mine` options given as CLI arguments (only the ones used here). */
function reference(options: string[]) {
  const arg = (name: string) => (options.includes(name) ? options[options.indexOf(name) + 1] : undefined);
  const o: Record<string, unknown> = {};
  if (arg('--seed') !== undefined) o.seed = arg('--seed');
  if (arg('--max-per-side') !== undefined) o.maxPerSide = Number(arg('--max-per-side'));
  if (arg('--max-pairs-per-instance') !== undefined) o.maxPairs = Number(arg('--max-pairs-per-instance'));
  return referenceMine(inputRows, o) as { counters: Record<string, number>; rows: Record<string, unknown>[] };
}
const jsonlOf = (b: Buffer) => b.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const PARTS = 4;

/** Input variants: the same rows in the same order. */
const INPUTS: Record<string, () => string[]> = {
  'one parquet file': () => ['--parquet', join(root, 'one.parquet')],
  'many row groups': () => ['--parquet', join(root, 'grouped.parquet')],
  'split parquet (folder)': () => ['--parquet', join(root, 'split')],
  'one JSONL file': () => ['--jsonl', join(root, 'one.jsonl')],
  'split JSONL files': () => Array.from({ length: PARTS }, (_, k) => ['--jsonl', join(root, 'split-jsonl', `part-${k}.jsonl`)]).flat(),
  'parquet + JSONL parts': () => ['--parquet', join(root, 'split', 'part-0.parquet'), '--parquet', join(root, 'split', 'part-1.parquet'), '--jsonl', join(root, 'split-jsonl', 'part-2.jsonl'), '--jsonl', join(root, 'split-jsonl', 'part-3.jsonl')],
};

interface Result {
  label: string;
  out: Buffer;
  counters: Record<string, number>;
}

let runNo = 0;
async function mine(input: string, workers: number, options: string[], format: 'jsonl' | 'parquet'): Promise<Result> {
  const dir = join(root, `run-${++runNo}`);
  mkdirSync(dir);
  const out = join(dir, `pairs.${format}`);
  const stats = join(dir, 'stats.json');
  const r = await runCli(['mine', ...INPUTS[input]!(), '--out', out, '--stats', stats, '--workers', String(workers), '-q', ...options], { timeoutMs: 120_000 });
  const label = `${input}, --workers ${workers}, ${format}`;
  if (r.code !== 0) throw new Error(`${label}: exit ${r.code}: ${r.stderr}`);
  const doc = JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number> };
  const res = { label, out: readFileSync(out), counters: doc.counters };
  rmSync(dir, { recursive: true, force: true });
  return res;
}

function expectAllIdentical(results: Result[]) {
  const [first, ...rest] = results;
  for (const r of rest) {
    expect(r.counters, `${r.label} vs ${first!.label}: counters`).toEqual(first!.counters);
    expect(r.out.equals(first!.out), `${r.label} vs ${first!.label}: output bytes differ`).toBe(true);
  }
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  root = tempDir('dm-determinism-');
  // 51 instances (17 copies of the 3 sample instances) with 3 resolved and 9 failed attempts each,
  // plus one not-eligible instance per copy: sampling, walking order and the filters all matter.
  const rows = forkedRows({ copies: 17, extraResolved: 2, extraFailed: 6, messages: 20, maxContent: 300 }) as Row[];
  // A repeated trajectory id in the last part: whichever file it is in, the first row read wins.
  const dup = structuredClone(rows[1]!);
  dup.resolved = 1 - Number(dup.resolved);
  dup.trajectory[dup.trajectory.length - 1]!.content = 'a different ending';
  rows.push(dup);
  rowCount = rows.length;
  inputRows = rows;
  await writeUpstreamParquet(join(root, 'one.parquet'), rows);
  regroupParquet(join(root, 'one.parquet'), join(root, 'grouped.parquet'), 37);
  writeJsonl(join(root, 'one.jsonl'), rows);
  mkdirSync(join(root, 'split'));
  mkdirSync(join(root, 'split-jsonl'));
  const per = Math.ceil(rows.length / PARTS);
  for (let k = 0; k < PARTS; k++) {
    const part = rows.slice(k * per, (k + 1) * per);
    await writeUpstreamParquet(join(root, 'split', `part-${k}.parquet`), part);
    writeJsonl(join(root, 'split-jsonl', `part-${k}.jsonl`), part);
  }
}, 180_000);

afterAll(() => {
  if (root && !process.env.DM_KEEP_TMP) rmSync(root, { recursive: true, force: true });
});

describe('determinism', () => {
  const SEEDS: [string, string[]][] = [
    ['seed 0, defaults', []],
    ['seed 7, --max-per-side 2', ['--seed', '7', '--max-per-side', '2']],
  ];

  for (const [name, options] of SEEDS) {
    it(`${name}: JSONL identical across runs, workers and input splits`, async () => {
      const plan: [string, number][] = [
        ['one parquet file', 1],
        ['one parquet file', 1],
        ['one parquet file', 2],
        ['many row groups', 1],
        ['many row groups', 2],
        ['split parquet (folder)', 2],
        ['one JSONL file', 1],
        ['split JSONL files', 2],
        ['parquet + JSONL parts', 2],
      ];
      const results = await mapLimit(plan, 2, ([input, workers]) => mine(input, workers, options, 'jsonl'));
      expect(results[0]!.counters.trajectories_read).toBe(rowCount);
      expect(results[0]!.counters.duplicate_trajectory_ids).toBe(1);
      const ref = reference(options);
      expect(results[0]!.counters).toEqual(ref.counters);
      expect(jsonlOf(results[0]!.out)).toStrictEqual(ref.rows);
      expectAllIdentical(results);
    }, 300_000);
  }

  it('the two option sets expect different rows (so the runs above compare something)', () => {
    const [a, b] = SEEDS.map(([, options]) => reference(options).rows);
    expect(a!.length).toBeGreaterThan(20);
    expect(b!.length).toBeGreaterThan(20);
    expect(a).not.toStrictEqual(b);
  });

  it('parquet output (more than one 256-row batch) identical across runs, workers and splits', async () => {
    const options = ['--max-per-side', '5', '--max-pairs-per-instance', '12'];
    const plan: [string, number][] = [
      ['one parquet file', 1],
      ['one parquet file', 1],
      ['one parquet file', 2],
      ['split parquet (folder)', 2],
      ['one JSONL file', 2],
    ];
    const results = await mapLimit(plan, 2, ([input, workers]) => mine(input, workers, options, 'parquet'));
    const ref = reference(options);
    expect(ref.rows.length).toBeGreaterThan(256);
    expect(results[0]!.counters).toEqual(ref.counters);
    expectAllIdentical(results);

    // The parquet rows are the JSONL rows, and those are the reference rows.
    const jsonl = await mine('one parquet file', 2, options, 'jsonl');
    const lines = jsonlOf(jsonl.out);
    expect(lines).toStrictEqual(ref.rows);
    const table = tableFromIPC(readParquet(new Uint8Array(results[0]!.out)).intoIPCStream());
    expect(table.numRows).toBe(lines.length);
    const pick = (r: Record<string, unknown>) => [r.instance_id, r.chosen_trajectory_id, r.rejected_trajectory_id, r.divergence_msg_index, r.divergence_turn, r.action_similarity];
    const fromParquet = table.toArray().map((r) => {
      const o = r.toJSON() as Record<string, unknown>;
      return pick({ ...o, divergence_msg_index: Number(o.divergence_msg_index), divergence_turn: Number(o.divergence_turn) });
    });
    expect(fromParquet).toEqual(lines.map(pick));
  }, 300_000);
});
