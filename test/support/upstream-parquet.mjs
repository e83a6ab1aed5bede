// Writes rows to parquet with the exact nested schema of
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius), using DuckDB.
// Shared by the fixture builder and the benchmark twin generator.
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';

const TOOL_CALL = 'STRUCT("function" STRUCT(arguments VARCHAR, "name" VARCHAR), id VARCHAR, "type" VARCHAR)';
export const MESSAGE_TYPE = `STRUCT("content" VARCHAR, "name" VARCHAR, "role" VARCHAR, tool_call_id VARCHAR, tool_calls ${TOOL_CALL}[])`;
const PARAM = 'STRUCT(description VARCHAR, "enum" VARCHAR[], "type" VARCHAR)';
const PARAM_ITEMS = 'STRUCT(description VARCHAR, items STRUCT("type" VARCHAR), "type" VARCHAR)';
const TASK_ITEM = 'STRUCT(additionalProperties BOOLEAN, properties STRUCT(id STRUCT(description VARCHAR, "type" VARCHAR), notes STRUCT(description VARCHAR, "type" VARCHAR), status STRUCT(description VARCHAR, "enum" VARCHAR[], "type" VARCHAR), title STRUCT(description VARCHAR, "type" VARCHAR)), required VARCHAR[], "type" VARCHAR)';
const PROPERTIES = `STRUCT(command ${PARAM}, file_text ${PARAM}, insert_line ${PARAM}, is_input ${PARAM}, message ${PARAM}, new_str ${PARAM}, old_str ${PARAM}, path ${PARAM}, task_list STRUCT(description VARCHAR, items ${TASK_ITEM}, "type" VARCHAR), thought ${PARAM}, timeout ${PARAM}, view_range ${PARAM_ITEMS})`;
export const TOOL_TYPE = `STRUCT("function" STRUCT(description VARCHAR, "name" VARCHAR, parameters STRUCT(additionalProperties BOOLEAN, properties ${PROPERTIES}, required VARCHAR[], "type" VARCHAR)), "type" VARCHAR)`;

/** Column name -> DuckDB type, in upstream column order. */
export const UPSTREAM_COLUMNS = {
  trajectory_id: 'VARCHAR',
  instance_id: 'VARCHAR',
  repo: 'VARCHAR',
  trajectory: `${MESSAGE_TYPE}[]`,
  tools: `${TOOL_TYPE}[]`,
  model_patch: 'VARCHAR',
  exit_status: 'VARCHAR',
  resolved: 'BIGINT',
  gen_tests_correct: 'DOUBLE',
  pred_passes_gen_tests: 'DOUBLE',
};

function sqlString(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

/**
 * Write `rows` (objects shaped like the `datasets` rows: tool_calls arguments as JSON strings)
 * to `outPath`. `rows` may be an array or a (sync/async) iterable, so large twins stream.
 * `columns` overrides the column map (to write deliberately wrong schemas in tests).
 */
export async function writeUpstreamParquet(outPath, rows, opts = {}) {
  const { rowGroupSize = 4096, compression = 'zstd', columns = UPSTREAM_COLUMNS } = opts;
  const dir = mkdtempSync(join(tmpdir(), 'dm-upstream-'));
  try {
    const jsonl = join(dir, 'rows.jsonl');
    const out = createWriteStream(jsonl);
    for await (const row of rows) {
      if (!out.write(JSON.stringify(row) + '\n')) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    const colSpec = Object.entries(columns).map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`).join(', ');
    await conn.run(`COPY (SELECT * FROM read_json(${sqlString(jsonl)}, format='newline_delimited', columns={${colSpec}}, maximum_object_size=1000000000))
      TO ${sqlString(outPath)} (FORMAT parquet, COMPRESSION ${compression}, ROW_GROUP_SIZE ${rowGroupSize})`);
    conn.closeSync?.();
    instance.closeSync?.();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
