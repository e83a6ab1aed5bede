#!/usr/bin/env node
// A parquet twin as JSONL, for timing the miner's JSONL reader on the same rows: DuckDB writes every
// column of every row, one JSON object per line (the trajectory as a list of message objects).
//
//   node bench/jsonl-twin.mjs bench/data/twin-5k.parquet bench/data/twin-5k.jsonl
import { DuckDBInstance } from '@duckdb/node-api';
import { resolve } from 'node:path';
import { sqlString } from './sql.mjs';

const [src, dst] = process.argv.slice(2);
if (!src || !dst) {
  console.error('usage: node bench/jsonl-twin.mjs IN.parquet OUT.jsonl');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
await conn.run(`COPY (SELECT * FROM read_parquet(${sqlString(resolve(src))})) TO ${sqlString(resolve(dst))} (FORMAT json)`);
console.error(`bench/jsonl-twin: wrote ${dst}`);
