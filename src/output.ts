// Choosing and opening the output for a run: format by extension, the published parquet schema.
import { ExitCode, UserError } from './errors.js';
import type { PairRow } from './types.js';
import { JsonlSink } from './write/jsonl.js';
import { DOUBLE, INT64, MESSAGE_LIST, MESSAGE_STRUCT, ParquetSink, STRING, fullMessage, type ColumnSpec } from './write/parquet.js';
import type { RowSink } from './write/sink.js';

export type OutputFormat = 'jsonl' | 'parquet';

export function outputFormat(path: string): OutputFormat {
  if (path === '-' || /\.jsonl$/i.test(path)) return 'jsonl';
  if (/\.parquet$/i.test(path)) return 'parquet';
  throw new UserError(`${path}: unknown output format (name it *.jsonl or *.parquet, or use - for JSONL on stdout)`, ExitCode.usage);
}

/** Parquet columns of the contract's `published` shape (section 6). */
export const PUBLISHED_COLUMNS: ColumnSpec<PairRow>[] = [
  { name: 'prompt', type: MESSAGE_LIST, value: (r) => r.prompt.map(fullMessage) },
  { name: 'chosen', type: MESSAGE_STRUCT, value: (r) => fullMessage(r.chosen) },
  { name: 'rejected', type: MESSAGE_STRUCT, value: (r) => fullMessage(r.rejected) },
  { name: 'instance_id', type: STRING, value: (r) => r.instance_id },
  { name: 'repo', type: STRING, value: (r) => r.repo },
  { name: 'chosen_trajectory_id', type: STRING, value: (r) => r.chosen_trajectory_id },
  { name: 'rejected_trajectory_id', type: STRING, value: (r) => r.rejected_trajectory_id },
  { name: 'divergence_turn', type: INT64, value: (r) => r.divergence_turn },
  { name: 'divergence_msg_index', type: INT64, value: (r) => r.divergence_msg_index },
  { name: 'action_similarity', type: DOUBLE, value: (r) => r.action_similarity },
];

function approxBytes(r: PairRow): number {
  let n = 256;
  for (const m of r.prompt) n += (m.content?.length ?? 0) + (m.tool_calls?.length ?? 0) + 64;
  return n + (r.chosen.content?.length ?? 0) + (r.rejected.content?.length ?? 0);
}

export function openPublishedSink(path: string): RowSink<PairRow> {
  return outputFormat(path) === 'parquet' ? new ParquetSink<PairRow>(path, PUBLISHED_COLUMNS, approxBytes) : new JsonlSink<PairRow>(path);
}
