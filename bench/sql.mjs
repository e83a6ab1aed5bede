// DuckDB SQL text shared by the bench scripts that drive DuckDB (gen, replicate, jsonl-twin,
// split-layout, run's baseline scan).

/** `s` as a SQL string literal: in single quotes, each single quote doubled. */
export const sqlString = (s) => `'${String(s).replaceAll("'", "''")}'`;
