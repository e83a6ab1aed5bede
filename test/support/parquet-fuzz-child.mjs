// One reader per process, driven by the fuzzer (parquet-fuzz.mjs) over IPC: `ours` (dist/parquet/, the
// built reader), `ref` (parquet-wasm + the Arrow getters the wasm engine uses), `duck` (DuckDB's
// native parquet reader, values as its to_json gives them) or `check` (the checks the wasm and duckdb
// engines run with our reader before those readers get a row group: checkPageHeaders with levels). The parent owns the watchdog: a case that
// hangs or aborts this process is killed and reported there.
import { openAsBlob } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';

const which = process.argv[2];
const dist = new URL('../../dist/', import.meta.url);
const { checkPageHeaders, fileMeta, readRowGroup, Unsupported } = await import(new URL('parquet/reader.js', dist).href);
const { UserError } = await import(new URL('errors.js', dist).href);
const { makeGetter } = await import(new URL('io/arrow-values.js', dist).href);
const { ParquetFile } = await import('parquet-wasm');

/** Rows wanted by the subset read: every other row, so both the skipping and the reading paths run. */
const subset = (n) => Array.from({ length: n }, (_, i) => i).filter((i) => i % 2 === 1);

function ours(path, columns) {
  const groups = fileMeta(path).rowGroupRows;
  const full = [];
  const part = [];
  for (let g = 0; g < groups.length; g++) {
    full.push(Object.fromEntries(readRowGroup(path, g, columns, null)));
    part.push(Object.fromEntries(readRowGroup(path, g, columns, subset(groups[g]))));
  }
  return { groups, full, part };
}

async function ref(path, columns) {
  const f = await ParquetFile.fromFile(await openAsBlob(path));
  const n = f.metadata().numRowGroups();
  const groups = [];
  const full = [];
  for (let g = 0; g < n; g++) {
    const out = Object.fromEntries(columns.map((c) => [c, []]));
    const stream = await f.stream({ rowGroups: [g], columns, batchSize: 64 });
    for await (const b of stream) {
      for (const batch of tableFromIPC(b.intoIPCStream()).batches) {
        for (const c of columns) {
          const get = makeGetter(batch.data.children[batch.schema.fields.findIndex((fl) => fl.name === c)]);
          for (let i = 0; i < batch.numRows; i++) out[c].push(get(i));
        }
      }
    }
    groups.push(out[columns[0]].length);
    full.push(out);
  }
  const part = full.map((o, g) => Object.fromEntries(Object.entries(o).map(([c, v]) => [c, subset(groups[g]).map((i) => v[i])])));
  return { groups, full, part };
}

let duckConn = null;
const sqlString = (s) => `'${s.replaceAll("'", "''")}'`;
const sqlIdent = (s) => `"${s.replaceAll('"', '""')}"`;

/**
 * DuckDB's reading of the same columns: row groups from parquet_metadata, each value as the JSON
 * text of to_json (structs with their fields in schema order, lists as arrays, NULL as null),
 * parsed. The parent compares it with ours after the same JSON round trip of ours.
 */
async function duck(path, columns) {
  if (!duckConn) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    duckConn = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
  }
  const file = sqlString(path);
  const meta = await duckConn.runAndReadAll(`SELECT row_group_id, any_value(row_group_num_rows) FROM parquet_metadata(${file}) GROUP BY row_group_id ORDER BY row_group_id`);
  const groups = meta.getRows().map((r) => Number(r[1]));
  const sel = columns.map((c) => `to_json(${sqlIdent(c)})::VARCHAR`).join(', ');
  const res = await duckConn.runAndReadAll(`SELECT ${sel} FROM read_parquet(${file}, file_row_number=true) ORDER BY file_row_number`);
  const rows = res.getRows();
  const full = [];
  let at = 0;
  for (const n of groups) {
    full.push(Object.fromEntries(columns.map((c, k) => [c, rows.slice(at, at + n).map((r) => (r[k] === null ? null : JSON.parse(r[k])))])));
    at += n;
  }
  if (at !== rows.length) throw new Error(`DuckDB returned ${rows.length} rows, its row groups declare ${at}`);
  const part = full.map((o, g) => Object.fromEntries(Object.entries(o).map(([c, v]) => [c, subset(groups[g]).map((i) => v[i])])));
  return { groups, full, part };
}

/** The engines' pre-check on every row group: ok (null) or the UserError it throws. */
function check(path, columns) {
  const groups = fileMeta(path).rowGroupRows;
  for (let g = 0; g < groups.length; g++) checkPageHeaders(path, g, columns, { levels: true });
  return null;
}

process.on('message', async ({ id, path, columns }) => {
  let reply;
  try {
    const value = which === 'ours' ? ours(path, columns) : which === 'duck' ? await duck(path, columns) : which === 'check' ? check(path, columns) : await ref(path, columns);
    reply = { id, kind: 'ok', value };
  } catch (e) {
    if (which === 'ours' && e instanceof Unsupported) reply = { id, kind: 'unsupported', message: e.message };
    else if ((which === 'ours' || which === 'check') && e instanceof UserError) reply = { id, kind: 'user-error', exitCode: e.exitCode, message: e.message };
    else reply = { id, kind: 'exception', message: e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e) };
  }
  reply.maxRssKiB = process.resourceUsage().maxRSS;
  process.send(reply);
});
process.send({ ready: true });
