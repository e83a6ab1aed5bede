// Read a pairs file written by `mine` (JSONL, optionally gzipped, or parquet) back into PairRows,
// streaming: JSONL line by line, parquet batch by batch (parquet-wasm -> Arrow IPC -> apache-arrow).
import { closeSync, openAsBlob, openSync, readSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Data } from 'apache-arrow';
import type { ParquetFile } from 'parquet-wasm';
import { ExitCode, UserError } from '../errors.js';
import type { EmittedMessage, PairRow } from '../types.js';
import type { Getter } from './arrow-values.js';
import { parquetLibs, type ParquetLibs } from './parquet-libs.js';
import { checkParquetMagic } from './inputs.js';
import { stringifyKeepingNumbers } from '../contract/json-numbers.js';
import { jsonlLineBytes, jsonlLines, parseJsonLine } from './jsonl-lines.js';

export type PairsFormat = 'jsonl' | 'parquet';

export interface ReadPair {
  /** 0-based row number in the file */
  index: number;
  pair: PairRow;
  /** number of prompt messages in the file (pair.prompt may hold only the last `promptTail`) */
  promptLength: number;
}

export interface ReadPairsOptions {
  /** keep only the last N prompt messages of each row (the report needs no more); default all */
  promptTail?: number;
}

const REQUIRED_COLUMNS = [
  'prompt',
  'chosen',
  'rejected',
  'instance_id',
  'chosen_trajectory_id',
  'rejected_trajectory_id',
  'divergence_turn',
  'divergence_msg_index',
  'action_similarity',
] as const;

/** Check the path exists and is a file; pick the format by extension, else by the PAR1 magic. */
export function pairsFormat(path: string): PairsFormat {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new UserError(`${path}: no such file`, ExitCode.missingInput);
  }
  if (st.isDirectory()) throw new UserError(`${path}: is a folder; give a pairs file (.jsonl or .parquet)`, ExitCode.missingInput);
  const lower = path.toLowerCase();
  if (lower.endsWith('.parquet') || lower.endsWith('.pq')) return 'parquet';
  if (/\.(jsonl|ndjson|json)(\.gz)?$/.test(lower)) return 'jsonl';
  return readMagic(path, 0) === 'PAR1' ? 'parquet' : 'jsonl';
}

function readMagic(path: string, at: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(4);
    const n = readSync(fd, buf, 0, 4, at);
    return buf.toString('latin1', 0, n);
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------- validation

function fail(where: string, what: string): never {
  throw new UserError(`${where}: not a pairs row: ${what}`, ExitCode.schema);
}

/**
 * A message as the file has it. Parquet structs carry all five fields (absent ones null); with
 * `roleFields` only the role's own fields are kept (contract section 2), as JSONL writes them.
 */
function toMessage(v: unknown, where: string, field: string, roleFields = false): EmittedMessage {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(where, `${field} must be a message object`);
  const m = v as Record<string, unknown>;
  if (typeof m.role !== 'string') fail(where, `${field}.role must be a string`);
  const out: EmittedMessage = { role: m.role, content: typeof m.content === 'string' ? m.content : m.content == null ? null : String(m.content) };
  const keep = (f: 'tool_calls' | 'name' | 'tool_call_id') =>
    f in m && (!roleFields || (f === 'tool_calls' ? m.role === 'assistant' : m.role === 'tool'));
  if (keep('tool_calls')) out.tool_calls = m.tool_calls == null ? null : typeof m.tool_calls === 'string' ? m.tool_calls : stringifyKeepingNumbers(m.tool_calls);
  if (keep('name')) out.name = typeof m.name === 'string' ? m.name : null;
  if (keep('tool_call_id')) out.tool_call_id = typeof m.tool_call_id === 'string' ? m.tool_call_id : null;
  return out;
}

function toNumber(v: unknown, where: string, field: string): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) fail(where, `${field} must be a number`);
  return n;
}

function toStr(v: unknown, where: string, field: string): string {
  if (typeof v !== 'string') fail(where, `${field} must be a string`);
  return v;
}

/** Validate a decoded row into a PairRow; `prompt` may already be cut to its tail by the caller. */
function toPair(o: Record<string, unknown>, where: string, promptTail: number | undefined, roleFields = false): { pair: PairRow; promptLength: number } {
  let full: unknown[];
  let skipped = 0;
  if (o.prompt instanceof PromptTail) {
    full = o.prompt.messages;
    skipped = o.prompt.length - full.length;
  } else if (Array.isArray(o.prompt)) full = o.prompt;
  else fail(where, 'prompt must be a list of messages');
  const start = promptTail === undefined ? 0 : Math.max(0, full.length - promptTail);
  const prompt: EmittedMessage[] = [];
  for (let i = start; i < full.length; i++) prompt.push(toMessage(full[i], where, `prompt[${skipped + i}]`, roleFields));
  const pair: PairRow = {
    prompt,
    chosen: toMessage(o.chosen, where, 'chosen', roleFields),
    rejected: toMessage(o.rejected, where, 'rejected', roleFields),
    instance_id: toStr(o.instance_id, where, 'instance_id'),
    repo: o.repo == null ? null : toStr(o.repo, where, 'repo'),
    chosen_trajectory_id: toStr(o.chosen_trajectory_id, where, 'chosen_trajectory_id'),
    rejected_trajectory_id: toStr(o.rejected_trajectory_id, where, 'rejected_trajectory_id'),
    divergence_turn: toNumber(o.divergence_turn, where, 'divergence_turn'),
    divergence_msg_index: toNumber(o.divergence_msg_index, where, 'divergence_msg_index'),
    action_similarity: toNumber(o.action_similarity, where, 'action_similarity'),
  };
  return { pair: withTreeFields(pair, o, where), promptLength: skipped + full.length };
}

/**
 * The fields a `--pairing tree` row adds (src/pairing/tree.ts TreeFields): copied onto the read
 * pair when the row has them, so `show` can print values and supports.
 */
export const TREE_PAIR_FIELDS = ['chosen_value', 'rejected_value', 'chosen_support', 'rejected_support', 'branch_depth'] as const;

function withTreeFields(pair: PairRow, o: Record<string, unknown>, where: string): PairRow {
  if (o.chosen_value === undefined || o.chosen_value === null) return pair;
  const out = pair as PairRow & Record<string, number>;
  for (const f of TREE_PAIR_FIELDS) out[f] = toNumber(o[f], where, f);
  return out;
}

// ---------------------------------------------------------------- JSONL

// ---------------------------------------------------------------- parquet

interface ParquetHandle {
  file: ParquetFile;
  numRows: number;
  /** rows per row group, in file order */
  rowGroupRows: number[];
  columns: string[];
}

async function openParquet(path: string): Promise<ParquetHandle> {
  const size = statSync(path).size;
  checkParquetMagic(path, size);
  const { arrow: { tableFromIPC }, wasm: { ParquetFile } } = await parquetLibs();
  let file: ParquetFile;
  try {
    file = await ParquetFile.fromFile(await openAsBlob(path));
  } catch (e) {
    throw new UserError(`${path}: cannot read parquet metadata: ${(e as Error)?.message ?? String(e)}`, ExitCode.corrupt);
  }
  const schema = tableFromIPC(file.schema().intoIPCStream()).schema;
  const columns = schema.fields.map((f) => f.name);
  const missing = REQUIRED_COLUMNS.filter((c) => !columns.includes(c));
  if (missing.length) {
    throw new UserError(
      `${path}: not a pairs file: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (found: ${columns.join(', ') || 'none'})`,
      ExitCode.schema,
    );
  }
  const md = file.metadata();
  return { file, numRows: md.fileMetadata().numRows(), rowGroupRows: md.rowGroups().map((g) => g.numRows()), columns };
}

interface Batch {
  get: Record<string, Getter>;
  n: number;
  /** file row number of the batch's first row */
  first: number;
}

/** Stream record batches of `columns` as plain-value getters. */
async function* scanParquet(
  path: string,
  h: ParquetHandle,
  columns: string[],
  opts: { rowGroup?: number; offset?: number; limit?: number; batchSize?: number; promptTail?: number },
): AsyncGenerator<Batch> {
  // parquet-wasm applies offset/limit within each row group, so they are only used with one row group.
  if ((opts.offset !== undefined || opts.limit !== undefined) && opts.rowGroup === undefined) throw new Error('offset/limit need a row group');
  const libs = await parquetLibs();
  const { arrow: { tableFromIPC }, values: { makeGetter } } = libs;
  let stream;
  try {
    stream = await h.file.stream({
      columns,
      batchSize: opts.batchSize ?? 128,
      rowGroups: opts.rowGroup === undefined ? undefined : [opts.rowGroup],
      offset: opts.offset,
      limit: opts.limit,
    });
  } catch (e) {
    throw new UserError(`${path}: cannot read parquet data: ${(e as Error)?.message ?? String(e)}`, ExitCode.corrupt);
  }
  let row = (opts.offset ?? 0) + h.rowGroupRows.slice(0, opts.rowGroup ?? 0).reduce((a, b) => a + b, 0);
  const reader = (stream as unknown as ReadableStream<{ intoIPCStream(): Uint8Array }>).getReader();
  try {
    for (;;) {
      let r;
      try {
        r = await reader.read();
      } catch (e) {
        throw new UserError(`${path}: cannot read parquet data: ${(e as Error)?.message ?? String(e)}`, ExitCode.corrupt);
      }
      if (r.done) break;
      const table = tableFromIPC(r.value.intoIPCStream());
      for (const batch of table.batches) {
        const get: Record<string, Getter> = {};
        for (const name of columns) {
          const idx = batch.schema.fields.findIndex((f) => f.name === name);
          const data = batch.data.children[idx] as Data;
          get[name] = idx < 0 ? () => null : name === 'prompt' ? promptGetter(data, opts.promptTail, libs) : makeGetter(data);
        }
        yield { get, n: batch.numRows, first: row };
        row += batch.numRows;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The last messages of a parquet prompt list, decoded without touching the others. */
class PromptTail {
  constructor(
    readonly messages: unknown[],
    readonly length: number,
  ) {}
}

function promptGetter(data: Data, tail: number | undefined, { arrow: { Type }, values: { makeGetter } }: ParquetLibs): Getter {
  const typeId = (data.type as { typeId: number }).typeId;
  if (tail === undefined || (typeId !== Type.List && typeId !== Type.LargeList)) return makeGetter(data);
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const child = makeGetter(data.children[0] as Data);
  const bitmap = data.nullCount > 0 ? (data.nullBitmap as Uint8Array | undefined) : undefined;
  return (i) => {
    if (bitmap && bitmap.length > 0) {
      const j = data.offset + i;
      if ((((bitmap[j >> 3] as number) >> (j & 7)) & 1) === 0) return null;
    }
    const s = Number(offsets[i]);
    const e = Number(offsets[i + 1]);
    const from = Math.max(s, e - tail);
    const out = new Array<unknown>(e - from);
    for (let k = from; k < e; k++) out[k - from] = child(k);
    return new PromptTail(out, e - s);
  };
}

function pairColumns(h: ParquetHandle): string[] {
  return [...REQUIRED_COLUMNS, ...(h.columns.includes('repo') ? ['repo'] : []), ...(h.columns.includes('chosen_value') ? TREE_PAIR_FIELDS : [])];
}

function rowFromGetters(get: Record<string, Getter>, i: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, g] of Object.entries(get)) o[k] = g(i);
  return o;
}

// ---------------------------------------------------------------- public API

/** Every pair of the file, in file order. */
export async function* readPairs(path: string, opts: ReadPairsOptions = {}): AsyncGenerator<ReadPair> {
  const format = pairsFormat(path);
  if (format === 'jsonl') {
    let index = 0;
    for await (const [line, text] of jsonlLines(path)) {
      const { pair, promptLength } = toPair(parseJsonLine(path, line, text), `${path}:${line}`, opts.promptTail);
      yield { index: index++, pair, promptLength };
    }
    return;
  }
  const h = await openParquet(path);
  for await (const { get, n, first } of scanParquet(path, h, pairColumns(h), { batchSize: 64, promptTail: opts.promptTail })) {
    for (let i = 0; i < n; i++) {
      const { pair, promptLength } = toPair(rowFromGetters(get, i), `${path}: row ${first + i}`, opts.promptTail, true);
      yield { index: first + i, pair, promptLength };
    }
  }
}

/** Number of pairs in the file (JSONL: non-blank lines; parquet: from the footer). */
export async function countPairs(path: string): Promise<number> {
  if (pairsFormat(path) === 'parquet') return (await openParquet(path)).numRows;
  let n = 0;
  for await (const _ of jsonlLineBytes(path)) n++;
  return n;
}

/** The pair at 0-based `index`, or null when the file has fewer rows. */
export async function readPairAt(path: string, index: number, opts: ReadPairsOptions = {}): Promise<ReadPair | null> {
  if (pairsFormat(path) === 'jsonl') {
    let i = 0;
    for await (const [line, bytes] of jsonlLineBytes(path)) {
      if (i++ !== index) continue;
      const { pair, promptLength } = toPair(parseJsonLine(path, line, bytes.toString('utf8')), `${path}:${line}`, opts.promptTail);
      return { index, pair, promptLength };
    }
    return null;
  }
  const h = await openParquet(path);
  if (index >= h.numRows) return null;
  let group = 0;
  let local = index;
  while (group < h.rowGroupRows.length && local >= (h.rowGroupRows[group] as number)) local -= h.rowGroupRows[group++] as number;
  if (group >= h.rowGroupRows.length) return null;
  const only = { rowGroup: group, offset: local, limit: 1, batchSize: 1, promptTail: opts.promptTail };
  for await (const { get, n, first } of scanParquet(path, h, pairColumns(h), only)) {
    if (n < 1) continue;
    const { pair, promptLength } = toPair(rowFromGetters(get, 0), `${path}: row ${first}`, opts.promptTail, true);
    return { index: first, pair, promptLength };
  }
  return null;
}

/** 0-based row numbers of the pairs of one instance, in file order. */
export async function findInstanceRows(path: string, instanceId: string): Promise<number[]> {
  const rows: number[] = [];
  if (pairsFormat(path) === 'jsonl') {
    // Only parse lines that can contain the id.
    const needle = JSON.stringify(instanceId).slice(1, -1);
    let i = 0;
    for await (const [line, text] of jsonlLines(path)) {
      const index = i++;
      if (!text.includes(needle)) continue;
      if (parseJsonLine(path, line, text).instance_id === instanceId) rows.push(index);
    }
    return rows;
  }
  const h = await openParquet(path);
  for await (const { get, n, first } of scanParquet(path, h, ['instance_id'], { batchSize: 8192 })) {
    const g = get.instance_id as Getter;
    for (let i = 0; i < n; i++) if (g(i) === instanceId) rows.push(first + i);
  }
  return rows;
}

/** A row number in [0, count) chosen by `seed` alone: the same seed picks the same row of the same file, in either format. */
export function seededIndex(seed: string, count: number): number {
  if (count <= 0) return 0;
  const h = createHash('sha256').update(`divergence-mine show:${seed}`).digest();
  const u = h.readUIntBE(0, 6) / 2 ** 48;
  return Math.floor(u * count);
}
