#!/usr/bin/env node
// The "DuckDB-written 4,096-row-group zstd layout" of issue 27's targets: the first FILES x ROWS rows
// of a twin, rewritten by DuckDB into FILES files of ROWS rows each (zstd, ROW_GROUP rows per row
// group), in a folder the miner takes as one input (`mine --parquet DIR`). DuckDB writes them, not
// our code, so the layout is what a user who splits a file with DuckDB gets.
//
//   node bench/split-layout.mjs F OUT_DIR [--files 4] [--rows 8192] [--row-group 4096]
//
// The default makes bench/data/l4 from the 67k twin (bench/README.md). Each file is written to a
// temporary name and renamed, so a cut run leaves no file that looks finished.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { sqlString } from './sql.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { files: { type: 'string', default: '4' }, rows: { type: 'string', default: '8192' }, 'row-group': { type: 'string', default: '4096' } },
});
const [from, outDir] = positionals;
const files = Number(values.files);
const rows = Number(values.rows);
const rowGroup = Number(values['row-group']);
if (!from || !outDir || ![files, rows, rowGroup].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('usage: node bench/split-layout.mjs F OUT_DIR [--files 4] [--rows 8192] [--row-group 4096]');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
// LIMIT / OFFSET take the file's rows in order only while DuckDB keeps insertion order (its default).
const db = await DuckDBInstance.create(':memory:', { preserve_insertion_order: 'true' });
const c = await db.connect();
for (let k = 0; k < files; k++) {
  const final = resolve(join(outDir, `part-${k}.parquet`));
  const tmp = `${final}.tmp`;
  rmSync(tmp, { force: true });
  const t0 = performance.now();
  await c.run(
    `COPY (SELECT * FROM read_parquet(${sqlString(resolve(from))}) LIMIT ${rows} OFFSET ${rows * k}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`,
  );
  renameSync(tmp, final);
  console.error(`split-layout: ${final} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
