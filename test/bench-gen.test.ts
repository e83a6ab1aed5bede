// Checks the benchmark twin generator (bench/gen.mjs): a tiny twin has the exact upstream schema
// and row-group size, the row/instance/label structure recorded in its sidecar, and the BUILT
// miner (`node bin/divergence-mine mine`) finds exactly the forks the generator planted (every
// counter and every emitted pair as the sidecar predicts from the mining contract).
// The twin's texts are perturbed from real rows of nebius/SWE-rebench-openhands-trajectories
// (CC-BY-4.0, (c) Nebius).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { UPSTREAM_COLUMNS } from './support/upstream-parquet.mjs';
import { splitParquet, concatParquet } from '../bench/parquet-concat.mjs';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GEN = join(ROOT, 'bench', 'gen.mjs');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const CLI_BUILT = existsSync(join(ROOT, 'dist', 'cli.js'));
const ROWS = 600;
const ROW_GROUP = 256;
// The full real sample gives realistic sizes; the trimmed fixture rows are enough for structure.
const SAMPLE = [process.env.DM_NEBIUS_SAMPLE, join(ROOT, 'fixtures', 'nebius-openhands-sample.json'),
  join(ROOT, 'fixtures', 'source', 'nebius-openhands-trimmed.json')]
  .find((p): p is string => !!p && existsSync(p));

type PlantedPair = [string, string, string, number | null, number | null, string, number | null];
interface Sidecar {
  options: { rows: number; row_group_size: number };
  structure: { rows: number; instances: number; eligible_instances: number; resolved: number; row_groups: number[]; attempt_modes: Record<string, number> };
  expected_counters: Record<string, number>;
  planted_pairs: PlantedPair[];
  planted_forks: [string, string, string, string, number | null, number | null][];
}

let dir = '';
let twin = '';
let sidecar: Sidecar;
let db: DuckDBInstance;
let conn: DuckDBConnection;

async function rows(sql: string): Promise<unknown[][]> {
  return (await conn.runAndReadAll(sql)).getRows();
}

describe('bench/gen.mjs twin', () => {
  beforeAll(async () => {
    if (!SAMPLE) throw new Error('fixtures/nebius-openhands-sample.json is missing');
    dir = mkdtempSync(join(tmpdir(), 'dm-bench-gen-'));
    twin = join(dir, 'twin.parquet');
    await run(process.execPath, [GEN, '--rows', String(ROWS), '--seed', '3', '--row-group-size', String(ROW_GROUP),
      '--sample', SAMPLE!, '--out', twin, '--quiet'], { timeout: 180_000, maxBuffer: 1 << 24 });
    sidecar = JSON.parse(readFileSync(join(dir, 'twin.planted.json'), 'utf8')) as Sidecar;
    db = await DuckDBInstance.create(':memory:', { threads: '1' });
    conn = await db.connect();
  }, 200_000);

  afterAll(() => {
    conn?.closeSync();
    db?.closeSync();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has the upstream column names, order and nested types', async () => {
    const def = Object.entries(UPSTREAM_COLUMNS).map(([k, v]) => `"${k}" ${v}`).join(', ');
    await conn.run(`CREATE TABLE ref (${def})`);
    const ref = await rows(`SELECT column_name, column_type FROM (DESCRIBE ref)`);
    const got = await rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${twin}'))`);
    expect(got.map((r) => r[0])).toEqual(Object.keys(UPSTREAM_COLUMNS));
    expect(got).toEqual(ref);
  });

  it('writes row groups of exactly --row-group-size rows (zstd)', async () => {
    const rg = await rows(`SELECT row_group_id, any_value(row_group_num_rows), bool_and(compression = 'ZSTD')
      FROM parquet_metadata('${twin}') GROUP BY 1 ORDER BY 1`);
    const sizes = rg.map((r) => Number(r[1]));
    expect(sizes).toEqual([ROW_GROUP, ROW_GROUP, ROWS - 2 * ROW_GROUP]);
    expect(rg.every((r) => r[2] === true)).toBe(true);
    expect(sidecar.structure.row_groups).toEqual(sizes);
  });

  it('has the planted row / instance / label structure', async () => {
    const [r] = await rows(`SELECT count(*), count(DISTINCT trajectory_id), count(DISTINCT instance_id), sum(resolved),
      max(len(trajectory)), count(*) FILTER (WHERE len(tools) = 5) FROM read_parquet('${twin}')`);
    expect(r!.map(Number)).toEqual([ROWS, ROWS, sidecar.structure.instances, sidecar.structure.resolved,
      expect.any(Number), ROWS]);
    expect(Number(r![4])).toBeLessThanOrEqual(2 + 2 * 100);
    const [e] = await rows(`SELECT count(*) FROM (SELECT instance_id FROM read_parquet('${twin}') GROUP BY 1
      HAVING bool_or(resolved = 1) AND bool_or(resolved = 0))`);
    expect(Number(e![0])).toBe(sidecar.structure.eligible_instances);
    // Scaled from the published counts (6,306 instances, 1,741 eligible, 32,161 resolved of 67,074).
    expect(sidecar.structure.instances).toBe(Math.round(6306 * ROWS / 67074));
    expect(sidecar.structure.eligible_instances).toBe(Math.round(1741 * ROWS / 67074));
    expect(sidecar.structure.resolved).toBe(Math.round(32161 * ROWS / 67074));
    // Every tool_calls[].function.arguments is a JSON string, every tool result answers a call.
    const [a] = await rows(`SELECT count(*) FILTER (WHERE json_valid(c.function.arguments)), count(*)
      FROM (SELECT unnest(m.tool_calls) AS c FROM (SELECT unnest(trajectory) AS m FROM read_parquet('${twin}')))`);
    expect(Number(a![0])).toBe(Number(a![1]));
  });

  it('splits and concatenates the twin byte for byte (bench/parquet-concat.mjs)', async () => {
    const parts = splitParquet(twin, dir, 2);
    expect(parts.length).toBe(2);
    const back = join(dir, 'rejoined.parquet');
    concatParquet(parts, back);
    const agg = (src: string) => rows(`SELECT count(*), sum(hash(trajectory_id) % 1000003), sum(len(trajectory)),
      sum(length(model_patch)), sum(resolved) FROM read_parquet(${src})`);
    const want = await agg(`'${twin}'`);
    expect(await agg(`['${parts[0]}', '${parts[1]}']`)).toEqual(want);
    expect(await agg(`'${back}'`)).toEqual(want);
    const rg = await rows(`SELECT row_group_id, any_value(row_group_num_rows) FROM parquet_metadata('${back}') GROUP BY 1 ORDER BY 1`);
    expect(rg.map((r) => Number(r[1]))).toEqual([ROW_GROUP, ROW_GROUP, ROWS - 2 * ROW_GROUP]);
    const [c] = await rows(`SELECT count(*) FROM read_parquet('${back}') WHERE instance_id = (SELECT max(instance_id) FROM read_parquet('${twin}'))`);
    const [d] = await rows(`SELECT count(*) FROM read_parquet('${twin}') WHERE instance_id || '' = (SELECT max(instance_id) FROM read_parquet('${twin}'))`);
    expect(c).toEqual(d);
  });

  it('plants every kind of fork the contract distinguishes', () => {
    const c = sidecar.expected_counters;
    for (const k of ['no_divergence', 'environment_divergence', 'near_duplicate', 'exact_duplicate', 'capped', 'pairs_emitted', 'divergence_turn_0']) {
      expect(c[k], k).toBeGreaterThan(0);
    }
    expect(c.pairs_walked).toBe(c.no_divergence! + c.environment_divergence! + c.near_duplicate! + c.exact_duplicate! + c.capped! + c.pairs_emitted!);
    expect(sidecar.planted_pairs.length).toBe(c.pairs_walked);
    for (const m of ['fork', 'near', 'env', 'clone']) expect(sidecar.structure.attempt_modes[m], m).toBeGreaterThan(0);
  });

  it('the built miner finds the planted forks', async () => {
    if (!CLI_BUILT) throw new Error('dist/cli.js is missing: run `npm run build` first (npm test does)');
    const out = join(dir, 'p.jsonl');
    const stats = join(dir, 's.json');
    await run(process.execPath, [BIN, 'mine', '--parquet', twin, '--out', out, '--stats', stats, '--quiet'],
      { timeout: 180_000, maxBuffer: 1 << 24 });
    const counters = (JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number> }).counters;
    expect(counters.instances).toBe(sidecar.structure.instances);
    expect(counters.eligible_instances).toBe(sidecar.structure.eligible_instances);
    expect(counters).toEqual(expect.objectContaining(sidecar.expected_counters));

    const planted = new Map(sidecar.planted_pairs.map((p) => [`${p[1]}|${p[2]}`, p]));
    const emitted = sidecar.planted_pairs.filter((p) => p[5] === 'emitted');
    const lines = readFileSync(out, 'utf8').split('\n').filter((l) => l.trim());
    expect(lines.length).toBe(emitted.length);
    const seen = new Set<string>();
    for (const line of lines) {
      const row = JSON.parse(line) as { instance_id: string; chosen_trajectory_id: string; rejected_trajectory_id: string;
        divergence_msg_index: number; divergence_turn: number; action_similarity: number; prompt: unknown[] };
      const key = `${row.chosen_trajectory_id}|${row.rejected_trajectory_id}`;
      const p = planted.get(key);
      expect(p, key).toBeDefined();
      expect(p![0]).toBe(row.instance_id);
      expect(p![5]).toBe('emitted');
      expect(row.divergence_msg_index).toBe(p![3]);
      expect(row.divergence_turn).toBe(p![4]);
      expect(row.prompt.length).toBe(p![3]);
      expect(row.action_similarity).toBeCloseTo(p![6]!, 6);
      seen.add(key);
    }
    expect(seen.size).toBe(emitted.length);
  }, 200_000);
});
