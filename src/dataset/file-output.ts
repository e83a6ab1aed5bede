// Choosing and opening the output for a run: format by extension, the parquet schema of each shape.
import { ExitCode, UserError } from '../errors.js';
import type { TrlRow } from '../shapes/trl.js';
import type { PairRow } from '../types.js';
import { JsonlSink } from '../io/jsonl-writer.js';
import {
  BOOL,
  DOUBLE,
  INT64,
  LOSS_MESSAGE_LIST,
  MESSAGE_LIST,
  MESSAGE_STRUCT,
  ParquetSink,
  STRING,
  STRING_LIST,
  fullLossMessage,
  fullMessage,
  fullTrlMessage,
  trlMessageList,
  type ColumnSpec,
} from '../io/parquet-writer.js';
import type { RowSink } from '../io/sink.js';
import type { KtoRow } from '../shapes/kto.js';

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

/** `--prompt-window`: messages removed from the prompt (src/shapes/window.ts). */
const DROPPED_COLUMN: ColumnSpec<{ prompt_messages_dropped?: number }> = {
  name: 'prompt_messages_dropped',
  type: INT64,
  value: (r) => r.prompt_messages_dropped ?? 0,
};

/** Parquet columns of the `trl` shape: the same fields as its JSONL, in the same order. */
export function trlColumns(args: 'object' | 'string', windowed: boolean): ColumnSpec<TrlRow>[] {
  const list = trlMessageList(args === 'object');
  return [
    { name: 'prompt', type: list, value: (r) => r.prompt.map(fullTrlMessage) },
    { name: 'chosen', type: list, value: (r) => r.chosen.map(fullTrlMessage) },
    { name: 'rejected', type: list, value: (r) => r.rejected.map(fullTrlMessage) },
    ...(PUBLISHED_COLUMNS.slice(3) as unknown as ColumnSpec<TrlRow>[]),
    ...(windowed ? [DROPPED_COLUMN as ColumnSpec<TrlRow>] : []),
    { name: 'tools', type: STRING, value: (r) => r.tools },
  ];
}

/** What a run writes: the shape, how trl arguments are stored, whether rows carry prompt_messages_dropped. */
export interface OutputLayout {
  shape: 'published' | 'trl' | 'sft' | 'kto';
  arguments: 'object' | 'string';
  windowed: boolean;
  /** chosen/rejected (sft: completion) are continuations, lists of messages with `loss`. */
  continuation?: boolean;
  /** Rows carry chosen_/rejected_behavior_sequence (sft: behavior_sequence). */
  behavior?: boolean;
  /** `--unit groups`: rows carry sample_uid, prefix_groups, group_count, is_full_trajectory. */
  groups?: boolean;
  /** `--tokenizer`: trl rows carry prompt_tokens, chosen_tokens, rejected_tokens (after the shape's other columns). */
  tokens?: boolean;
  /** `--pairing tree`: pair rows carry chosen_value, rejected_value, chosen_support, rejected_support, branch_depth; kto rows value, support, branch_depth. */
  tree?: boolean;
}

/** `--pairing tree`: the columns a pair row adds (pairing/tree.ts TreeFields), after the shape's own. */
const TREE_COLUMNS: ColumnSpec<Loose>[] = [
  { name: 'chosen_value', type: DOUBLE, value: (r) => r.chosen_value },
  { name: 'rejected_value', type: DOUBLE, value: (r) => r.rejected_value },
  { name: 'chosen_support', type: INT64, value: (r) => r.chosen_support },
  { name: 'rejected_support', type: INT64, value: (r) => r.rejected_support },
  { name: 'branch_depth', type: INT64, value: (r) => r.branch_depth },
];

/** `--shape kto` (shapes/kto.ts): the same fields as its JSONL, in the same order. */
function ktoColumns(layout: OutputLayout): ColumnSpec<KtoRow>[] {
  const list = trlMessageList(layout.arguments === 'object');
  return [
    { name: 'prompt', type: list, value: (r) => r.prompt.map(fullTrlMessage) },
    { name: 'completion', type: list, value: (r) => r.completion.map(fullTrlMessage) },
    { name: 'label', type: BOOL, value: (r) => r.label },
    { name: 'instance_id', type: STRING, value: (r) => r.instance_id },
    { name: 'repo', type: STRING, value: (r) => r.repo },
    { name: 'trajectory_id', type: STRING, value: (r) => r.trajectory_id },
    { name: 'divergence_turn', type: INT64, value: (r) => r.divergence_turn },
    { name: 'divergence_msg_index', type: INT64, value: (r) => r.divergence_msg_index },
    ...(layout.tree
      ? [
          { name: 'value', type: DOUBLE, value: (r: KtoRow) => r.value },
          { name: 'support', type: INT64, value: (r: KtoRow) => r.support },
          { name: 'branch_depth', type: INT64, value: (r: KtoRow) => r.branch_depth },
        ]
      : []),
    ...(layout.windowed ? [DROPPED_COLUMN as ColumnSpec<KtoRow>] : []),
    { name: 'tools', type: STRING, value: (r) => r.tools },
  ];
}

type Loose = Record<string, unknown>;
type LossList = (Parameters<typeof fullLossMessage>[0])[];

/** Columns of the other shapes (continuation, behaviour, groups), in the order the rows carry them (after the shape's own columns). */
const BEHAVIOR_COLUMNS: ColumnSpec<Loose>[] = [
  { name: 'chosen_behavior_sequence', type: STRING_LIST, value: (r) => r.chosen_behavior_sequence },
  { name: 'rejected_behavior_sequence', type: STRING_LIST, value: (r) => r.rejected_behavior_sequence },
];
const GROUP_COLUMNS: ColumnSpec<Loose>[] = [
  { name: 'sample_uid', type: STRING, value: (r) => r.sample_uid },
  { name: 'prefix_groups', type: INT64, value: (r) => r.prefix_groups },
  { name: 'group_count', type: INT64, value: (r) => r.group_count },
  { name: 'is_full_trajectory', type: BOOL, value: (r) => r.is_full_trajectory },
];

/** `--tokenizer` (src/tokens/): token counts, null when the template cannot render the row. */
const TOKEN_COLUMNS: ColumnSpec<Loose>[] = [
  { name: 'prompt_tokens', type: INT64, value: (r) => r.prompt_tokens ?? null },
  { name: 'chosen_tokens', type: INT64, value: (r) => r.chosen_tokens ?? null },
  { name: 'rejected_tokens', type: INT64, value: (r) => r.rejected_tokens ?? null },
];

/** `--shape sft` (shapes/sft.ts): prompt/completion rows of the resolved side. */
function sftColumns(layout: OutputLayout): ColumnSpec<Loose>[] {
  const asList = (v: unknown) => v as Parameters<typeof fullMessage>[0][];
  return [
    { name: 'prompt', type: MESSAGE_LIST, value: (r) => asList(r.prompt).map(fullMessage) },
    layout.continuation
      ? { name: 'completion', type: LOSS_MESSAGE_LIST, value: (r) => (r.completion as LossList).map(fullLossMessage) }
      : { name: 'completion', type: MESSAGE_LIST, value: (r) => asList(r.completion).map(fullMessage) },
    { name: 'instance_id', type: STRING, value: (r) => r.instance_id },
    { name: 'repo', type: STRING, value: (r) => r.repo },
    { name: 'trajectory_id', type: STRING, value: (r) => r.trajectory_id },
    { name: 'divergence_turn', type: INT64, value: (r) => r.divergence_turn },
    { name: 'divergence_msg_index', type: INT64, value: (r) => r.divergence_msg_index },
    ...(layout.behavior ? [{ name: 'behavior_sequence', type: STRING_LIST, value: (r: Loose) => r.behavior_sequence }] : []),
  ];
}

/** Published columns with continuation sides (lists of messages with loss). */
const CONTINUATION_SIDES: ColumnSpec<Loose>[] = [
  { name: 'chosen', type: LOSS_MESSAGE_LIST, value: (r) => (r.chosen as LossList).map(fullLossMessage) },
  { name: 'rejected', type: LOSS_MESSAGE_LIST, value: (r) => (r.rejected as LossList).map(fullLossMessage) },
];

/** True when the layout adds no column to the contract's row (the default output stays exactly the contract's). */
export function plainLayout(layout: OutputLayout): boolean {
  return layout.shape !== 'sft' && layout.shape !== 'kto' && !layout.continuation && !layout.behavior && !layout.groups && !layout.tree;
}

export const PUBLISHED_LAYOUT: OutputLayout = { shape: 'published', arguments: 'object', windowed: false };

export function columnsFor(layout: OutputLayout): ColumnSpec<unknown>[] {
  if (layout.shape === 'sft') return sftColumns(layout) as ColumnSpec<unknown>[];
  if (layout.shape === 'kto') return ktoColumns(layout) as ColumnSpec<unknown>[];
  const behavior = layout.behavior ? BEHAVIOR_COLUMNS : [];
  const groups = layout.groups ? GROUP_COLUMNS : [];
  const tree = layout.tree ? TREE_COLUMNS : [];
  const tokens = layout.tokens ? TOKEN_COLUMNS : [];
  if (layout.shape === 'trl') return [...trlColumns(layout.arguments, layout.windowed), ...tree, ...tokens, ...behavior] as ColumnSpec<unknown>[];
  const published = layout.continuation
    ? [PUBLISHED_COLUMNS[0]!, ...CONTINUATION_SIDES, ...PUBLISHED_COLUMNS.slice(3)]
    : PUBLISHED_COLUMNS;
  return [...published, ...(layout.windowed ? [DROPPED_COLUMN as ColumnSpec<PairRow>] : []), ...tree, ...behavior, ...groups] as ColumnSpec<unknown>[];
}

function approxBytes(r: PairRow): number {
  let n = 256;
  for (const m of r.prompt) n += (m.content?.length ?? 0) + (m.tool_calls?.length ?? 0) + 64;
  return n + (r.chosen.content?.length ?? 0) + (r.rejected.content?.length ?? 0);
}

/** Batch size estimate for issue-7 rows: every message list of the row. */
function approxLooseBytes(r: Loose): number {
  let n = 256;
  for (const k of ['prompt', 'chosen', 'rejected', 'completion']) {
    const v = r[k];
    for (const m of (Array.isArray(v) ? v : v ? [v] : []) as { content?: string | null; tool_calls?: string | null }[])
      n += (m.content?.length ?? 0) + (m.tool_calls?.length ?? 0) + 64;
  }
  return n;
}

/** Batch size estimate for the trl shape (tool calls counted by their argument text). */
function approxTrlBytes(r: TrlRow): number {
  let n = 256 + (r.tools?.length ?? 0);
  for (const list of [r.prompt, r.chosen, r.rejected])
    for (const m of list) {
      n += m.content.length + 64;
      for (const c of m.tool_calls ?? []) n += 64 + (typeof c.function.arguments === 'string' ? c.function.arguments.length : 256);
    }
  return n;
}

function approxKtoBytes(r: KtoRow): number {
  return approxTrlBytes({ prompt: r.prompt, chosen: r.completion, rejected: [], tools: r.tools } as unknown as TrlRow);
}

export function openPublishedSink(path: string): RowSink<PairRow> {
  return outputFormat(path) === 'parquet' ? new ParquetSink<PairRow>(path, PUBLISHED_COLUMNS, approxBytes) : new JsonlSink<PairRow>(path);
}

/** A sink for any layout; the default layout is exactly `openPublishedSink`. */
export function openSink(path: string, layout: OutputLayout, format: OutputFormat = outputFormat(path)): RowSink<unknown> {
  if (format === 'jsonl') return new JsonlSink<unknown>(path);
  if (layout.shape === 'published' && !layout.windowed && plainLayout(layout)) return new ParquetSink<PairRow>(path, PUBLISHED_COLUMNS, approxBytes) as RowSink<unknown>;
  const size =
    layout.shape === 'kto'
      ? (r: unknown) => approxKtoBytes(r as KtoRow)
      : layout.shape === 'trl'
      ? (r: unknown) => approxTrlBytes(r as TrlRow)
      : plainLayout(layout)
        ? (r: unknown) => approxBytes(r as PairRow)
        : (r: unknown) => approxLooseBytes(r as Loose);
  return new ParquetSink<unknown>(path, columnsFor(layout), size);
}
