// Decode worker: every parquet-wasm call runs here, so a wasm trap on a corrupt file becomes an
// error message instead of killing the process, and zstd decoding uses every core.
import { closeSync, openAsBlob, openSync } from 'node:fs';
import { readAt } from '../io/read-at.js';
import { availableParallelism, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { Data } from 'apache-arrow';
import type { ParquetFile } from 'parquet-wasm';
import { badTrajectory, encodeTrajectory, type SignatureScheme } from './encode.js';
import { ExitCode, UserError, asDecoderError } from '../errors.js';
import { BadValue, type NormaliseTally } from '../contract/normalise.js';
import { isContractLayout, mappedColumns, parseTools, trajectoryIdOf, type ColumnMapping, type SchemaName } from '../sources/schema.js';
import { sourceMessages } from '../sources/messages.js';
import { pairWithinKey } from '../sources/identity.js';
import { signatureSchemeOf } from '../sources/text-actions.js';
import { SpillWriter } from './spill.js';
import { SpillPlacer, SpillSpace } from './spill-space.js';
import { holdsNumber, mayHoldSourceNumbers, parseKeepingNumbers } from '../contract/json-numbers.js';
import { nestedDeeperThan } from '../contract/json-depth.js';
import { jsonlLineBytes, jsonlLines, MAX_LINE_BYTES, parseJsonLine } from '../io/jsonl-lines.js';
import type { Getter } from '../io/arrow-values.js';
import { parquetLibs } from '../io/parquet-libs.js';
import type { ByteRange, ColumnResult, DecodeResult, DecodedTrajectory, EncodedTrajectory, IndexResult, MetaResult, SampleResult, Task, WalkResult } from './protocol.js';
import { emptyCounters } from '../contract/counters.js';
import { SpillReader } from './spill.js';
import { SpillTrajectory, jsonlHooksFor } from './spill-walk.js';
import { JsonBytes } from './json-bytes.js';
import { walkInstance } from '../contract/walk.js';
import { checkPageHeaders, fileMeta, footer, listStructField, readRows, Unsupported, type ReadOptions } from '../parquet/reader.js';
import { pureJsDecoders } from '../parquet/inflate.js';
import { mark, timingOn } from '../io/timeline.js';
import { serve } from './serve.js';
import { atFileLine, fileLineOf, indexJsonl } from './jsonl-index.js';

interface WasmBatch {
  readonly numRows: number;
  slice(offset: number, length: number): WasmBatch;
  intoIPCStream(): Uint8Array;
  free(): void;
}

/** Runs a call into a third-party decoder: what it throws is about the file's bytes (errors.ts DecoderError). */
async function decoder<T>(f: () => T | Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw asDecoderError(e);
  }
}

/** A decoder's stream, its errors as DecoderErrors; the loop body (our code) stays outside. */
async function* decoderStream<T>(open: () => Promise<unknown>): AsyncGenerator<T> {
  const it = (await decoder(open)) as AsyncIterable<T>;
  const iter = await decoder(() => it[Symbol.asyncIterator]());
  for (;;) {
    const r = await decoder(() => iter.next());
    if (r.done) return;
    yield r.value;
  }
}

/** What the parquet-wasm reads need, loaded on a worker's first one (JSONL inputs and the js engine's index and decode never do). */
async function wasmLibs() {
  const { arrow, wasm, values } = await parquetLibs();
  return { tableFromIPC: arrow.tableFromIPC, ParquetFile: wasm.ParquetFile, ...values };
}

/**
 * What is checked with our reader before parquet-wasm or DuckDB reads a row group's columns
 * (reader.ts checkPageHeaders): page headers (declared sizes against what the values can take,
 * dictionary sizes), the value lengths of pages larger than the longest string, and the levels
 * (both readers take a definition level above its maximum for a value or a null: rows that are not
 * in the file). The levels cost about 0.3 CPU-s per 150 MB file (README, "Engines and hostile files").
 */
const PAGE_CHECKS = { levels: true };
const data = workerData as { spillPath: string | null; spillIndex: number; spillSpace?: SharedArrayBuffer | null };
const spillIndex = data.spillIndex;
/** This worker's spill file: from workerData, or for a worker started early, from its pool's first message. */
let spillPath = data.spillPath ?? '';
/** Where trajectories go in the spill file, when the pool places them (spill-space.ts). */
let spillSpace = data.spillSpace ?? null;
let spill: SpillWriter | null = null;
const files = new Map<string, ParquetFile>();

async function open(path: string): Promise<ParquetFile> {
  let f = files.get(path);
  const { ParquetFile } = await wasmLibs();
  if (!f) files.set(path, (f = await decoder(async () => ParquetFile.fromFile(await openAsBlob(path)))));
  return f;
}

async function meta(path: string): Promise<MetaResult> {
  await wasmLibs();
  return decoder(() => metaWasm(path));
}

/**
 * --engine js: the footer by our own reader, which the index and decode passes read with anyway
 * (parquet-wasm costs about 190 ms to load and parse a footer on a run's fixed path). A file with a
 * column type our reader does not build, or a footer it refuses, is asked of parquet-wasm as before:
 * its flags (string, label, trajectory) and its messages for a corrupt footer are the ones a run
 * always had. Type names in messages are Arrow's for parquet's types (`Utf8` also where a writer's
 * embedded Arrow schema said `LargeUtf8`). Files of 4 GiB and more (beyond parquet-wasm) always
 * take our reader's answer.
 */
async function metaJs(path: string, bytes: number): Promise<MetaResult> {
  if (bytes >= 2 ** 32) return fileMeta(path);
  let ours: MetaResult;
  try {
    ours = fileMeta(path);
  } catch {
    return meta(path);
  }
  return ours.fields.some((f) => f.type.includes('Unsupported')) ? meta(path) : ours;
}

async function metaWasm(path: string): Promise<MetaResult> {
  const { tableFromIPC, isStringType, isLabelType, isTrajectoryType } = await wasmLibs();
  const f = await open(path);
  const md = f.metadata();
  const rowGroupRows = md.rowGroups().map((g) => g.numRows());
  const schema = tableFromIPC(f.schema().intoIPCStream()).schema;
  return {
    numRows: md.fileMetadata().numRows(),
    rowGroupRows,
    fields: schema.fields.map((fl) => ({
      name: fl.name,
      type: String(fl.type),
      isString: isStringType(fl.type),
      isLabel: isLabelType(fl.type),
      isTrajectory: isTrajectoryType(fl.type),
    })),
  };
}

/** Stream one row group's columns; calls `each(getters, nRows)` per record batch. */
async function scan(
  path: string,
  rowGroup: number,
  columns: string[],
  batchSize: number,
  each: (get: Record<string, Getter>, n: number) => void,
): Promise<void> {
  const { tableFromIPC, makeGetter } = await wasmLibs();
  checkPageHeaders(path, rowGroup, columns, PAGE_CHECKS);
  const f = await open(path);
  for await (const wasmBatch of decoderStream<{ intoIPCStream(): Uint8Array }>(() => f.stream({ rowGroups: [rowGroup], columns, batchSize }))) {
    const table = await decoder(() => tableFromIPC(wasmBatch.intoIPCStream()));
    for (const batch of table.batches) {
      const get: Record<string, Getter> = {};
      for (const name of columns) {
        const idx = batch.schema.fields.findIndex((fl) => fl.name === name);
        get[name] = makeGetter(batch.data.children[idx] as Data);
      }
      each(get, batch.numRows);
    }
  }
}

function idParts(m: ColumnMapping): string[] {
  return Array.isArray(m.id) ? [...m.id] : [m.id as string];
}

/** One row of the index pass (every parquet reader); `value(column)` is the row's value of a mapped column. */
function addIndexRow(res: IndexResult, mapping: ColumnMapping, parts: readonly string[], value: (column: string) => unknown): void {
  res.ids.push(trajectoryIdOf(Object.fromEntries(parts.map((c) => [c, value(c)])), mapping.id));
  res.instances.push(mapping.instance !== null ? value(mapping.instance) : null);
  res.resolved.push(value(mapping.resolved));
  res.repos.push(mapping.repo ? value(mapping.repo) : null);
  const group = pairWithinKey(mapping, value);
  if (group !== undefined) (res.groups ??= []).push(group);
}

/** Only the small columns: never the messages or tools. */
function indexColumns(mapping: ColumnMapping): string[] {
  return mappedColumns(mapping).filter((c) => c !== mapping.messages && c !== mapping.tools);
}

/** The index pass through our own reader; the reason when it cannot decode these columns (then parquet-wasm does). */
function indexJs(path: string, rowGroup: number, mapping: ColumnMapping): IndexResult | string {
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [] };
  const parts = idParts(mapping);
  const columns = indexColumns(mapping);
  try {
    for (const v of readRows(path, rowGroup, columns, null)) addIndexRow(res, mapping, parts, (c) => v[columns.indexOf(c)]);
  } catch (e) {
    if (e instanceof Unsupported) return e.message;
    throw e;
  }
  return res;
}

async function index(path: string, rowGroup: number, mapping: ColumnMapping): Promise<IndexResult> {
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [] };
  const columns = indexColumns(mapping);
  const parts = idParts(mapping);
  await scan(path, rowGroup, columns, 8192, (get, n) => {
    for (let i = 0; i < n; i++) addIndexRow(res, mapping, parts, (c) => get[c]!(i));
  });
  return res;
}

/** The first row of row group 0, `columns` only, for schema detection (one-row batches: nothing more is decoded). */
async function sample(path: string, columns: string[]): Promise<SampleResult> {
  const { tableFromIPC, makeGetter } = await wasmLibs();
  const f = await open(path);
  if ((await decoder(() => f.metadata().numRowGroups())) === 0) return { row: null };
  // Schema detection only: the headers, so that no page bomb reaches parquet-wasm (the read proper checks the rest).
  checkPageHeaders(path, 0, columns);
  for await (const wasmBatch of decoderStream<WasmBatch>(() => f.stream({ rowGroups: [0], columns, batchSize: 1, limit: 1 }))) {
    const batch = (await decoder(() => tableFromIPC(wasmBatch.intoIPCStream()))).batches[0]; // intoIPCStream consumes (frees) the wasm batch
    if (!batch || batch.numRows === 0) continue;
    const row: Record<string, unknown> = {};
    for (const name of columns) row[name] = makeGetter(batch.data.children[batch.schema.fields.findIndex((fl) => fl.name === name)] as Data)(0);
    return { row };
  }
  return { row: null };
}

function spillWriter(): SpillWriter {
  if (spillPath === '') throw new Error('no spill file: a task came before the spill path');
  return (spill ??= new SpillWriter(spillPath, spillSpace ? new SpillPlacer(new SpillSpace(spillSpace)) : null));
}

/** The main thread's share of an encoded trajectory: its arrays go to the spill as an index block. */
function toDecoded(t: EncodedTrajectory, w: SpillWriter): DecodedTrajectory {
  const d: DecodedTrajectory = { key: t.key, length: t.roles.length, block: t.bad === undefined ? w.appendIndexBlock(t.offsets, t.roles) : -1 };
  if (t.bad !== undefined) d.bad = t.bad;
  if (t.tools !== undefined) d.tools = t.tools;
  return d;
}

function toolsJson(v: unknown): string | null {
  if (v == null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function schemeOf(schema: SchemaName): SignatureScheme {
  return signatureSchemeOf(schema);
}

/**
 * The contract's own layout: values are read exactly as the contract types them, whatever other sources allow (a string trajectory is a
 * bad value, tools are passed through), so its output cannot change.
 */
function contractLayout(mapping: ColumnMapping, schema: SchemaName): boolean {
  return isContractLayout(mapping, schema);
}

/** A messages value: outside the contract's layout, the source's messages (sources/messages.ts, as toStandardRow). */
function messagesValue(v: unknown, mapping: ColumnMapping, schema: SchemaName): unknown {
  if (contractLayout(mapping, schema)) return v;
  return sourceMessages(v, schema, mapping.messages);
}

/** Tools as JSON text; outside the contract's layout a list of JSON strings (Open-SWE-Traces) becomes objects first. */
function toolsText(v: unknown, mapping: ColumnMapping, schema: SchemaName): string | null {
  return toolsJson(contractLayout(mapping, schema) ? v : parseTools(v));
}

/**
 * One row's trajectory: `messages()` and `tools()` read its values (JSON text is parsed there), and a
 * BadValue from them (e.g. JSON nested too deeply) makes the trajectory bad, as a bad message does.
 */
function encodeRow(key: number, messages: () => unknown, tools: (() => string | null) | null, reasoning: ReadonlySet<string>, tally: NormaliseTally, w: SpillWriter, schema: SchemaName): EncodedTrajectory {
  try {
    const t = encodeTrajectory(key, messages(), reasoning, tally, w, schemeOf(schema));
    if (tools) t.tools = tools();
    return t;
  } catch (e) {
    if (e instanceof BadValue) return badTrajectory(key, e.message);
    throw e;
  }
}

/** A DuckDB identifier, quoted. */
function sqlIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

type DuckConnection = { stream(sql: string): Promise<{ fetchChunk(): Promise<DuckChunk | null> }> };
type DuckChunk = { rowCount: number; columnCount: number; getColumnVector(i: number): { getItem(i: number): unknown } };
let duck: Promise<DuckConnection> | null = null;

async function duckConnection(): Promise<DuckConnection> {
  duck ??= (async () => {
    let mod: typeof import('@duckdb/node-api');
    try {
      mod = await import('@duckdb/node-api');
    } catch (e) {
      throw new UserError(`--engine duckdb needs the optional package @duckdb/node-api, which failed to load (${(e as Error).message}); use --engine wasm`, ExitCode.usage);
    }
    const instance = await mod.DuckDBInstance.create(':memory:', duckSettings());
    return (await instance.connect()) as unknown as DuckConnection;
  })();
  return duck;
}

/**
 * DuckDB's settings in a decode worker. One thread: the pool already runs one task per core. A
 * memory limit (DuckDB's default is 80% of the machine per instance, and every worker has one):
 * half the machine shared by one instance per core, at least 1 GiB, so that several workers'
 * DuckDBs fail with a clean out-of-memory error before they exhaust the machine together; DuckDB
 * holds whole pages (380 MB ones from its own writer), so a lower cap would refuse real files.
 * Its spill files go to the run's temporary folder (removed with it), not to `.tmp` in the
 * working directory. Insertion order is not needed: every query orders its rows.
 */
function duckSettings(): Record<string, string> {
  const given = process.env.DIVERGENCE_MINE_DUCKDB_MEMORY_MIB;
  const limit = given && /^[1-9]\d{0,6}$/.test(given) ? Number(given) : Math.max(1024, Math.floor(totalmem() / 2 / availableParallelism() / 2 ** 20));
  return { threads: '1', memory_limit: `${limit}MiB`, preserve_insertion_order: 'false', temp_directory: join(dirname(spillPath), `duckdb-${spillIndex}`) };
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** The same rows as `decode`, read by DuckDB's native parquet reader: trajectories arrive as JSON text. */
async function decodeDuck(task: Extract<Task, { kind: 'decode' }>): Promise<DecodeResult> {
  const conn = await duckConnection();
  checkPageHeaders(task.path, task.rowGroup, [task.mapping.messages, ...(task.withTools && task.mapping.tools ? [task.mapping.tools] : [])], PAGE_CHECKS);
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const w = spillWriter();
  const keyOf = new Map<number, number>();
  task.rows.forEach((r, k) => keyOf.set(task.rowOffset + r, task.keys[k]!));
  const tools = task.withTools && task.mapping.tools ? `, to_json(${sqlIdent(task.mapping.tools)})::VARCHAR` : '';
  // file_row_number filters prune other row groups, so each task decodes only its own.
  const sql =
    `SELECT file_row_number, to_json(${sqlIdent(task.mapping.messages)})::VARCHAR${tools} FROM read_parquet(${sqlString(task.path)}, file_row_number=true) ` +
    `WHERE file_row_number IN (${[...keyOf.keys()].join(',')}) ORDER BY file_row_number`;
  const res = await decoder(() => conn.stream(sql));
  for (let chunk = await decoder(() => res.fetchChunk()); chunk && chunk.rowCount > 0; chunk = await decoder(() => res.fetchChunk())) {
    const rn = chunk.getColumnVector(0);
    const js = chunk.getColumnVector(1);
    const tv = tools ? chunk.getColumnVector(2) : null;
    for (let i = 0; i < chunk.rowCount; i++) {
      const key = keyOf.get(Number(rn.getItem(i)))!;
      const text = js.getItem(i) as string | null;
      const tj = tv ? ((tv.getItem(i) as string | null) ?? null) : null;
      const tools = tv ? () => (tj === null || contractLayout(task.mapping, task.schema) ? tj : toolsText(JSON.parse(tj), task.mapping, task.schema)) : null;
      const t = encodeRow(key, () => (text === null ? null : messagesValue(JSON.parse(text), task.mapping, task.schema)), tools, reasoning, tally, w, task.schema);
      out.push(toDecoded(t, w));
    }
  }
  w.flush();
  if (out.length !== task.rows.length) throw new UserError(`${task.path}: row group ${task.rowGroup}: expected ${task.rows.length} rows, DuckDB returned ${out.length}`, ExitCode.corrupt);
  out.sort((a, b) => a.key - b.key);
  const rowsDecoded = task.rows.length;
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded };
}

/** Message contents from this many bytes on reach encodeTrajectory as their UTF-8 (Utf8Bytes). */
const CONTENT_BYTES_FROM = 256;

/**
 * The reader's options for a decode pass: in the contract's layout, whose value goes to
 * encodeTrajectory as it is, a long message content (the `content` field of the list's struct) comes
 * as its bytes, which encode.ts spills without decoding them; a source's messages are built from
 * strings (sources/messages.ts), so there every value is a string.
 */
function contentAsBytes(mapping: ColumnMapping, schema: SchemaName): ReadOptions {
  if (!contractLayout(mapping, schema)) return {};
  return { bytesLeaf: listStructField('content'), bytesFrom: CONTENT_BYTES_FROM };
}

/** The decode pass through our own reader; the reason when it cannot decode these columns (then parquet-wasm does). */
function decodeJs(task: Extract<Task, { kind: 'decode' }>): DecodeResult | string {
  const withTools = task.withTools && task.mapping.tools !== null;
  const columns = [task.mapping.messages, ...(withTools ? [task.mapping.tools!] : [])];
  const reasoning = new Set(task.reasoningKeys);
  // Tallies and results are kept only if the whole row group decodes: on `Unsupported` parquet-wasm
  // starts over (the records already spilled are then never referenced).
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const w = spillWriter();
  let k = 0;
  try {
    // Row by row: each trajectory is encoded and dropped before the next is assembled.
    for (const [messages, tools] of readRows(task.path, task.rowGroup, columns, task.rows, contentAsBytes(task.mapping, task.schema))) {
      const t = encodeRow(task.keys[k]!, () => messagesValue(messages, task.mapping, task.schema), withTools ? () => toolsText(tools, task.mapping, task.schema) : null, reasoning, tally, w, task.schema);
      out.push(toDecoded(t, w));
      k++;
    }
  } catch (e) {
    if (e instanceof Unsupported) return e.message;
    throw e;
  }
  w.flush();
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded: footer(task.path).rowGroups[task.rowGroup]!.numRows };
}

async function decode(task: Extract<Task, { kind: 'decode' }>): Promise<DecodeResult> {
  if (task.engine === 'duckdb') return decodeDuck(task);
  let fallback: string | undefined;
  if (task.engine === 'js') {
    const r = decodeJs(task);
    if (typeof r !== 'string') return r;
    fallback = r;
  }
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const withTools = task.withTools && task.mapping.tools !== null;
  const columns = [task.mapping.messages, ...(withTools ? [task.mapping.tools!] : [])];
  let base = 0;
  let next = 0;
  const w = spillWriter();
  const { tableFromIPC, makeGetter } = await wasmLibs();
  checkPageHeaders(task.path, task.rowGroup, columns, PAGE_CHECKS);
  const f = await open(task.path);
  for await (const wasmBatch of decoderStream<WasmBatch>(() => f.stream({ rowGroups: [task.rowGroup], columns, batchSize: 256 }))) {
    const n = wasmBatch.numRows;
    // Only the extracted rows cross from wasm to JS (about 1 in 8 on the real file): a one-row
    // slice serialises just that row's buffers.
    while (next < task.rows.length && task.rows[next]! < base + n) {
      const local = task.rows[next]! - base;
      const batch = (await decoder(() => tableFromIPC(wasmBatch.slice(local, 1).intoIPCStream()))).batches[0]!;
      const get = (name: string) => makeGetter(batch.data.children[batch.schema.fields.findIndex((fl) => fl.name === name)] as Data);
      const t = encodeRow(task.keys[next]!, () => messagesValue(get(task.mapping.messages)(0), task.mapping, task.schema), withTools ? () => toolsText(get(task.mapping.tools!)(0), task.mapping, task.schema) : null, reasoning, tally, w, task.schema);
      out.push(toDecoded(t, w));
      next++;
    }
    wasmBatch.free();
    base += n;
  }
  w.flush();
  if (next !== task.rows.length) throw new UserError(`${task.path}: row group ${task.rowGroup} has fewer rows than its metadata says`, ExitCode.corrupt);
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded: base, ...(fallback !== undefined ? { fallback } : {}) };
}

async function sampleJsonl(path: string): Promise<SampleResult> {
  for await (const [line, text] of jsonlLines(path)) return { row: parseJsonLine(path, line, text), line };
  return { row: null };
}

/**
 * A JSONL line's messages with the source text of their numbers (contract v3, 11): arguments given
 * as objects are in the line's text only. The line is parsed again, losslessly, only when its
 * messages hold a number that may not round-trip, and not when it nests too deeply (that parser
 * recurses; the normaliser then reports the depth).
 */
function messagesKeepingNumbers(text: string, o: Record<string, unknown>, column: string): unknown {
  const v = o[column];
  if (!holdsNumber(v) || !mayHoldSourceNumbers(text) || nestedDeeperThan(o)) return v;
  return (parseKeepingNumbers(text, o) as Record<string, unknown>)[column];
}

async function decodeJsonl(task: Extract<Task, { kind: 'decode-jsonl' }>): Promise<DecodeResult> {
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const w = spillWriter();
  let next = 0;
  const m = task.mapping;
  const decodeLine = (line: number, text: string) => {
    const o = parseJsonLine(task.path, line, text);
    const messages = messagesKeepingNumbers(text, o, m.messages);
    // The contract's layout reads `tools` / `repo` on every line, whatever the first line holds.
    const tools = task.withTools ? () => toolsText(m.tools ? o[m.tools] : contractLayout(m, task.schema) ? o.tools : null, m, task.schema) : null;
    const t = encodeRow(task.keys[next]!, () => messagesValue(messages, m, task.schema), tools, reasoning, tally, w, task.schema);
    out.push(toDecoded(t, w));
    next++;
  };
  if (task.spans) {
    // The index pass found each wanted line's bytes: read just those (about 1 in 8 of the file).
    const fd = openSync(task.path, 'r');
    try {
      let buf = Buffer.allocUnsafe(1 << 16);
      for (let k = 0; k < task.lines.length; k++) {
        const offset = task.spans.offsets[k]!;
        const length = task.spans.lengths[k]!;
        if (length > buf.length) buf = Buffer.allocUnsafe(Math.max(length, 2 * buf.length));
        if (readAt(fd, buf, 0, length, offset) !== length) throw new UserError(`${task.path}: the file changed while it was read (line ${task.lines[k]} is no longer where the index pass found it)`, ExitCode.corrupt);
        decodeLine(task.lines[k]!, buf.toString('utf8', 0, length));
        // A buffer grown for a long line is not kept.
        if (buf.length > 4 << 20) buf = Buffer.allocUnsafe(1 << 16);
      }
    } finally {
      closeSync(fd);
    }
  } else {
    // A gzipped file, one stream: only the wanted lines are decoded to text.
    for await (const [line, bytes] of jsonlLineBytes(task.path)) {
      if (next >= task.lines.length) break;
      if (line !== task.lines[next]) continue;
      decodeLine(line, bytes.toString('utf8'));
    }
  }
  w.flush();
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded: next };
}

// With --engine duckdb every read goes through DuckDB, also metadata and the index pass: parquet-wasm
// (wasm32) cannot address files of 4 GiB and more.
async function duckRows(sql: string): Promise<unknown[][]> {
  const conn = await duckConnection();
  const res = await decoder(() => conn.stream(sql));
  const rows: unknown[][] = [];
  for (let chunk = await decoder(() => res.fetchChunk()); chunk && chunk.rowCount > 0; chunk = await decoder(() => res.fetchChunk())) {
    const cols = Array.from({ length: chunk.columnCount }, (_, c) => chunk.getColumnVector(c));
    for (let i = 0; i < chunk.rowCount; i++) rows.push(cols.map((v) => v.getItem(i)));
  }
  return rows;
}

const DUCK_LABEL = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|BOOLEAN|DECIMAL\(.*\)|"NULL")$/;

async function metaDuck(path: string): Promise<MetaResult> {
  const p = sqlString(path);
  const groups = await duckRows(`SELECT row_group_id, max(row_group_num_rows) FROM parquet_metadata(${p}) GROUP BY row_group_id ORDER BY row_group_id`);
  const [[numRows]] = (await duckRows(`SELECT num_rows FROM parquet_file_metadata(${p})`)) as [[bigint]];
  const fields = await duckRows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${p}))`);
  return {
    numRows: Number(numRows),
    rowGroupRows: groups.map((g) => Number(g[1])),
    fields: fields.map(([name, t]) => {
      const type = String(t);
      return {
        name: String(name),
        type,
        isString: type === 'VARCHAR',
        isLabel: DUCK_LABEL.test(type),
        isTrajectory: /^STRUCT\(.*\brole\b.*\)\[\]$/s.test(type),
      };
    }),
  };
}

async function indexDuck(task: Extract<Task, { kind: 'index' }>): Promise<IndexResult> {
  const { mapping } = task;
  const parts = idParts(mapping);
  const pairCols = [...new Set((mapping.pairWithin ?? []).map((p) => p.column))];
  const cols = [...parts, ...(mapping.instance !== null ? [mapping.instance] : []), mapping.resolved, ...(mapping.repo ? [mapping.repo] : [])];
  checkPageHeaders(task.path, task.rowGroup, [...cols, ...pairCols], PAGE_CHECKS);
  // --pair-within values as JSON text (DuckDB's struct values are not plain objects).
  const quoted = [...cols.map((c) => sqlIdent(c)), ...pairCols.map((c) => `to_json(${sqlIdent(c)})::VARCHAR`)].join(', ');
  const rows = await duckRows(
    `SELECT ${quoted} FROM read_parquet(${sqlString(task.path)}, file_row_number=true) ` +
      `WHERE file_row_number >= ${task.rowOffset} AND file_row_number < ${task.rowOffset + task.rows} ORDER BY file_row_number`,
  );
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [] };
  // DuckDB hands int64 labels over as BigInt; the other readers give numbers.
  const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
  const pairValue = (r: unknown[], c: string) => {
    const t = r[cols.length + pairCols.indexOf(c)];
    return typeof t === 'string' ? JSON.parse(t) : null;
  };
  for (const r of rows) addIndexRow(res, mapping, parts, (c) => (c === mapping.resolved ? num(r[cols.indexOf(c)]) : pairCols.includes(c) && !cols.includes(c) ? pairValue(r, c) : r[cols.indexOf(c)]));
  return res;
}

let walkReader: SpillReader | null = null;
/**
 * The JSONL of a walk task, written into one buffer kept for every task (grown as needed, back to
 * WALK_BYTES after a larger task): a fresh buffer per row costs its page faults, at hundreds of MB of rows.
 */
const WALK_BYTES = 8 * 2 ** 20;
let walkJson: JsonBytes | null = null;

/** Walk instances over the spill files (every decode has finished and flushed) and serialise their rows. */
function walk(task: Extract<Task, { kind: 'walk' }>): WalkResult {
  const reader = (walkReader ??= new SpillReader());
  const out = (walkJson ??= new JsonBytes(WALK_BYTES));
  const counters = emptyCounters();
  const sizes: number[] = [];
  const opts = { minSimilaritySkip: task.minSimilaritySkip, maxPairsPerInstance: task.maxPairsPerInstance };
  for (const inst of task.instances) {
    const load = (t: (typeof inst.resolved)[number]) => new SpillTrajectory(t.trajectoryId, t.repo, t, t.spill).load(reader);
    // Each kept row's JSON line is written into `out` as the walk builds it (spill-walk.ts jsonlHooksFor).
    const start = out.used;
    walkInstance(inst.resolved.map(load), inst.failed.map(load), opts, jsonlHooksFor(inst, reader, out), counters);
    sizes.push(out.used - start);
  }
  // The bytes leave in a buffer of their own (moved to the main thread, not copied).
  return { jsonl: out.take(), sizes, counters: { ...counters } };
}

/** One small column of a row group, every row in order (our reader, else parquet-wasm; DuckDB for --engine duckdb). */
async function column(task: Extract<Task, { kind: 'column' }>): Promise<ColumnResult> {
  const values: unknown[] = [];
  if (task.engine === 'duckdb') {
    checkPageHeaders(task.path, task.rowGroup, [task.column], PAGE_CHECKS);
    const rows = await duckRows(
      `SELECT ${sqlIdent(task.column)} FROM read_parquet(${sqlString(task.path)}, file_row_number=true) ` +
        `WHERE file_row_number >= ${task.rowOffset} AND file_row_number < ${task.rowOffset + task.rows} ORDER BY file_row_number`,
    );
    return { values: rows.map((r) => r[0]) };
  }
  if (task.engine === 'js') {
    try {
      for (const v of readRows(task.path, task.rowGroup, [task.column], null)) values.push(v[0]);
      return { values };
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      values.length = 0;
    }
  }
  await scan(task.path, task.rowGroup, [task.column], 8192, (get, n) => {
    for (let i = 0; i < n; i++) values.push(get[task.column]!(i));
  });
  return { values };
}

async function columnJsonl(path: string, name: string, purpose: string, range?: ByteRange): Promise<ColumnResult> {
  const values: unknown[] = [];
  const lineOf = fileLineOf(path, range);
  for await (const [local, bytes] of jsonlLineBytes(path, MAX_LINE_BYTES, range, lineOf)) {
    const at = (line: number) => {
      const o = parseJsonLine(path, line, bytes.toString('utf8'));
      if (!(name in o)) throw new UserError(`${path}:${line}: ${purpose} read the column ${name}, which this row lacks (found: ${Object.keys(o).join(', ') || 'none'})`, ExitCode.schema);
      return o[name];
    };
    values.push(atFileLine(local, lineOf, at));
  }
  return { values };
}

async function run(task: Task): Promise<MetaResult | IndexResult | DecodeResult | SampleResult | WalkResult | ColumnResult> {
  switch (task.kind) {
    case 'meta':
      if (task.engine === 'duckdb') return metaDuck(task.path);
      return task.engine === 'js' ? metaJs(task.path, task.bytes) : meta(task.path);
    case 'sample':
      return sample(task.path, task.columns);
    case 'sample-jsonl':
      return sampleJsonl(task.path);
    case 'index':
      if (task.engine === 'duckdb') return indexDuck(task);
      if (task.engine === 'js') {
        const r = indexJs(task.path, task.rowGroup, task.mapping);
        if (typeof r !== 'string') return r;
        return { ...(await index(task.path, task.rowGroup, task.mapping)), fallback: r };
      }
      return index(task.path, task.rowGroup, task.mapping);
    case 'index-jsonl':
      return indexJsonl(task.path, task.mapping, isContractLayout(task.mapping, task.schema), task.range);
    case 'decode':
      return decode(task);
    case 'decode-jsonl':
      return decodeJsonl(task);
    case 'walk':
      return walk(task);
    case 'column':
      return column(task);
    case 'column-jsonl':
      return columnJsonl(task.path, task.column, task.purpose, task.range);
  }
}

/** Kinds whose first task has been marked on the timeline. */
const firstOfKind = new Set<string>();

/**
 * What the timeline calls `task`, or null when it is not marked: every decode task (where the pass's
 * wall goes between the workers, split-decode.ts), and the first task of every other kind.
 */
function timelineName(task: Task): string | null {
  if (task.kind === 'decode') return `decode rg ${task.rowGroup} rows ${task.rows[0] ?? '-'}..${task.rows[task.rows.length - 1] ?? '-'} (${task.rows.length})`;
  if (firstOfKind.has(task.kind)) return null;
  firstOfKind.add(task.kind);
  return `first ${task.kind} task`;
}

async function timed(task: Task): ReturnType<typeof run> {
  const name = timelineName(task);
  if (name === null) return run(task);
  mark(`worker: ${name} start`);
  try {
    return await run(task);
  } finally {
    mark(`worker: ${name} end`);
  }
}

mark('worker: modules loaded');
serve(parentPort!, timingOn() ? timed : run, pureJsDecoders, (path, space) => {
  spillPath = path;
  spillSpace = space;
});
