// Split and shard files built with the pure planners, re-read with DuckDB and apache-arrow:
// group-disjoint splits, byte-balanced shards, instances never spread over shards.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { readPairsFile } from '../src/commands/check-template.js';
import { assignSplit, groupKeyOf, planShards, shardFileName, splitFileName, type SplitBy } from '../src/dataset/split.js';
import { toTrlRow, type TrlRow } from '../src/shapes/trl.js';
import { samplePairs } from './template/pairs.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 12 real-shaped rows cloned over 60 instances in 9 repositories (1-4 rows per instance). */
function rows(): TrlRow[] {
  const base = samplePairs().map(({ row, tools }) => toTrlRow(row, { tools, arguments: 'object' }));
  const out: TrlRow[] = [];
  for (let i = 0; i < 60; i++) {
    const repo = `org${i % 9}/repo${i % 9}`;
    const n = 1 + (i % 4);
    for (let k = 0; k < n; k++) {
      const b = base[(i * 5 + k) % base.length]!;
      out.push({ ...b, instance_id: `${repo.replace('/', '__')}-${i}`, repo: i % 13 === 0 ? null : repo });
    }
  }
  return out;
}

async function withDb<T>(f: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    return await f(conn);
  } finally {
    conn.closeSync?.();
    db.closeSync?.();
  }
}

async function query(c: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
}

const COLS = `columns={prompt: 'JSON', chosen: 'JSON', rejected: 'JSON', instance_id: 'VARCHAR', repo: 'VARCHAR', tools: 'VARCHAR'}`;

/** What the lead's writer does: split by group hash, shard train by bytes, one file for dev. */
function writeSplits(sub: string, by: SplitBy, shards: number) {
  const all = rows();
  const specs = [{ name: 'dev', fraction: 0.25 }];
  const lines = all.map((r) => ({ r, line: JSON.stringify(r) + '\n', split: assignSplit(groupKeyOf(r, by), specs) }));
  const train = lines.filter((x) => x.split === 'train');
  const plan = planShards(
    train.map((x) => ({ groupKey: x.r.instance_id, bytes: Buffer.byteLength(x.line) })),
    shards,
  );
  const files: string[] = [];
  const base = mkdtempSync(join(dir, `${sub}-`));
  for (let s = 0; s < plan.count; s++) {
    const f = join(base, shardFileName('train', s, plan.count, 'jsonl'));
    writeFileSync(f, train.filter((x) => plan.shardOf.get(x.r.instance_id) === s).map((x) => x.line).join(''));
    files.push(f);
  }
  const dev = join(base, splitFileName('dev', 'jsonl'));
  writeFileSync(dev, lines.filter((x) => x.split === 'dev').map((x) => x.line).join(''));
  return { base, files, dev, plan, all, lines };
}

describe('split files re-read with DuckDB', () => {
  it.each(['instance', 'repo'] as const)('--split dev=0.25 --split-by %s is group-disjoint', async (by) => {
    const { base, plan, all, lines } = writeSplits(`split-${by}`, by, 3);
    await withDb(async (c) => {
      await c.run(`CREATE TABLE train AS SELECT * FROM read_json('${base}/train-*.jsonl', format='newline_delimited', ${COLS})`);
      await c.run(`CREATE TABLE dev AS SELECT * FROM read_json('${base}/dev.jsonl', format='newline_delimited', ${COLS})`);
      const [counts] = await query(c, `SELECT (SELECT count(*) FROM train) AS train, (SELECT count(*) FROM dev) AS dev`);
      expect(Number(counts!.train) + Number(counts!.dev)).toBe(all.length);
      expect(Number(counts!.dev)).toBe(lines.filter((x) => x.split === 'dev').length);
      expect(Number(counts!.dev)).toBeGreaterThan(0);
      const leak = await query(c, `SELECT instance_id FROM train INTERSECT SELECT instance_id FROM dev`);
      expect(leak).toEqual([]);
      if (by === 'repo') {
        const repoLeak = await query(c, `SELECT repo FROM train WHERE repo IS NOT NULL INTERSECT SELECT repo FROM dev`);
        expect(repoLeak).toEqual([]);
      }
      // the trl shape survives a DuckDB round trip
      const [shape] = await query(
        c,
        `SELECT min(json_array_length(chosen)) AS c1, max(json_array_length(rejected)) AS r1,
                min(json_array_length(tools::JSON)) AS t5, bool_and(json_extract_string(chosen, '$[0].role') = 'assistant') AS a
           FROM train`,
      );
      expect(shape).toEqual({ c1: '1', r1: '1', t5: '5', a: true });
    });
    expect(plan.count).toBe(3);
  });
});

describe('shards', () => {
  it('JSONL shards: balanced by bytes, every instance in one shard (DuckDB)', async () => {
    const { files, plan } = writeSplits('shards', 'instance', 4);
    const sizes = files.map((f) => statSync(f).size);
    expect(sizes).toEqual(plan.bytes);
    await withDb(async (c) => {
      const per = await query(
        c,
        `SELECT instance_id, count(DISTINCT filename) AS files FROM read_json('${files[0]!.replace(/train-.*$/, 'train-*.jsonl')}', format='newline_delimited', ${COLS}, filename=true) GROUP BY instance_id`,
      );
      expect(per.length).toBe(plan.shardOf.size);
      for (const p of per) expect(Number(p.files)).toBe(1);
    });
    for (const f of files) expect(f).toMatch(/train-0000[0-3]-of-00004\.jsonl$/);
    const largestGroup = Math.max(...rows().reduce((m, r) => m.set(r.instance_id, (m.get(r.instance_id) ?? 0) + Buffer.byteLength(JSON.stringify(r) + '\n')), new Map<string, number>()).values());
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(largestGroup);
  });

  it('parquet shards written by DuckDB re-read with apache-arrow hold each instance once', async () => {
    const { files, plan } = writeSplits('pq', 'instance', 2);
    const parquet: string[] = [];
    await withDb(async (c) => {
      for (const f of files) {
        const out = f.replace(/\.jsonl$/, '.parquet');
        await c.run(`COPY (SELECT * FROM read_json('${f}', format='newline_delimited', ${COLS})) TO '${out}' (FORMAT parquet)`);
        parquet.push(out);
      }
    });
    const seen = new Map<string, number>();
    let n = 0;
    for (const [s, f] of parquet.entries()) {
      for await (const { value } of readPairsFile(f)) {
        const r = value as { instance_id: string; tools: string };
        n++;
        expect(seen.get(r.instance_id) ?? s).toBe(s);
        seen.set(r.instance_id, s);
        expect(JSON.parse(r.tools)).toHaveLength(5);
      }
    }
    expect(n).toBe(plan.rows.reduce((a, b) => a + b, 0));
    expect(seen.size).toBe(plan.shardOf.size);
  });
});
