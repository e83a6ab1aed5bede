#!/usr/bin/env node
// A k-times larger twin for the memory-scaling check (issue 13: 4x rows -> <= 1.25x peak RSS), made
// in minutes instead of regenerating: the rows of F written k times, copy j with `~j` appended to
// instance_id and trajectory_id (so every copy is a set of new instances), by DuckDB
// (@duckdb/node-api) with zstd and 4,096-row groups, the layout bench/gen.mjs writes.
//
//   node bench/replicate.mjs bench/data/twin-67k.parquet --times 4 --out bench/data/twin-268k.parquet
//
// The output's counters are not the input's times k (sampling hashes the new ids), so it has no
// sidecar; the benchmark uses it for peak RSS and wall only. Written under a .tmp name, then renamed.
import { renameSync, rmSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sqlString } from './sql.mjs';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { times: { type: 'string', default: '4' }, out: { type: 'string' }, 'row-group-size': { type: 'string', default: '4096' } } });
if (positionals.length !== 1 || !values.out) {
  console.error('usage: node bench/replicate.mjs F.parquet --out G.parquet [--times 4] [--row-group-size 4096]');
  process.exit(2);
}
const src = resolve(positionals[0]);
const out = resolve(values.out);
const times = Number(values.times);
const rowGroup = Number(values['row-group-size']);
if (!Number.isInteger(times) || times < 1 || !Number.isInteger(rowGroup) || rowGroup < 1) throw new Error('--times and --row-group-size must be positive integers');
const { DuckDBInstance } = await import('@duckdb/node-api');
const db = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '8GB', preserve_insertion_order: 'true' });
const conn = await db.connect();
const copies = Array.from({ length: times }, (_, j) => `SELECT * REPLACE (instance_id || '~${j}' AS instance_id, trajectory_id || '~${j}' AS trajectory_id) FROM read_parquet(${sqlString(src)})`);
const tmp = `${out}.tmp`;
if (existsSync(tmp)) rmSync(tmp);
const t0 = performance.now();
await conn.run(`COPY (${copies.join(' UNION ALL ')}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`);
renameSync(tmp, out);
console.error(`replicate: ${out} (${times} copies of ${src}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
