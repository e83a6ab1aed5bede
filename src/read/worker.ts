// Decode worker: every parquet-wasm call runs here, so a wasm trap on a corrupt file becomes an
// error message instead of killing the process, and zstd decoding uses every core.
import { createReadStream, openAsBlob } from 'node:fs';
import { createInterface } from 'node:readline';
import { parentPort, workerData } from 'node:worker_threads';
import { createGunzip } from 'node:zlib';
import { tableFromIPC, type Data } from 'apache-arrow';
import { ParquetFile } from 'parquet-wasm';
import { encodeTrajectory } from '../encode.js';
import { ExitCode, UserError, toPayload } from '../errors.js';
import type { NormaliseTally } from '../normalise.js';
import { SpillWriter } from '../spill.js';
import { isLabelType, isStringType, isTrajectoryType, makeGetter, type Getter } from './arrow-values.js';
import type { DecodeResult, DecodedTrajectory, IndexResult, MetaResult, Task, WorkerReply } from './protocol.js';

interface WasmBatch {
  readonly numRows: number;
  slice(offset: number, length: number): WasmBatch;
  intoIPCStream(): Uint8Array;
  free(): void;
}

const { spillPath, spillIndex } = workerData as { spillPath: string; spillIndex: number };
let spill: SpillWriter | null = null;
const files = new Map<string, ParquetFile>();

async function open(path: string): Promise<ParquetFile> {
  let f = files.get(path);
  if (!f) files.set(path, (f = await ParquetFile.fromFile(await openAsBlob(path))));
  return f;
}

async function meta(path: string): Promise<MetaResult> {
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
  const f = await open(path);
  const stream = await f.stream({ rowGroups: [rowGroup], columns, batchSize });
  for await (const wasmBatch of stream as unknown as AsyncIterable<{ intoIPCStream(): Uint8Array }>) {
    const table = tableFromIPC(wasmBatch.intoIPCStream());
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

async function index(path: string, rowGroup: number, hasRepo: boolean): Promise<IndexResult> {
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [] };
  const columns = ['trajectory_id', 'instance_id', 'resolved', ...(hasRepo ? ['repo'] : [])];
  await scan(path, rowGroup, columns, 8192, (get, n) => {
    for (let i = 0; i < n; i++) {
      res.ids.push(get.trajectory_id!(i));
      res.instances.push(get.instance_id!(i));
      res.resolved.push(get.resolved!(i));
      res.repos.push(hasRepo ? get.repo!(i) : null);
    }
  });
  return res;
}

function spillWriter(): SpillWriter {
  return (spill ??= new SpillWriter(spillPath));
}

function toolsJson(v: unknown): string | null {
  if (v == null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

type DuckConnection = { stream(sql: string): Promise<{ fetchChunk(): Promise<DuckChunk | null> }> };
type DuckChunk = { rowCount: number; getColumnVector(i: number): { getItem(i: number): unknown } };
let duck: Promise<DuckConnection> | null = null;

async function duckConnection(): Promise<DuckConnection> {
  duck ??= (async () => {
    let mod: typeof import('@duckdb/node-api');
    try {
      mod = await import('@duckdb/node-api');
    } catch (e) {
      throw new UserError(`--engine duckdb needs the optional package @duckdb/node-api, which failed to load (${(e as Error).message}); use --engine wasm`, ExitCode.usage);
    }
    // One DuckDB thread per worker: the pool already runs one task per core.
    const instance = await mod.DuckDBInstance.create(':memory:', { threads: '1' });
    return (await instance.connect()) as unknown as DuckConnection;
  })();
  return duck;
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** The same rows as `decode`, read by DuckDB's native parquet reader: trajectories arrive as JSON text. */
async function decodeDuck(task: Extract<Task, { kind: 'decode' }>): Promise<DecodeResult> {
  const conn = await duckConnection();
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const w = spillWriter();
  const keyOf = new Map<number, number>();
  task.rows.forEach((r, k) => keyOf.set(task.rowOffset + r, task.keys[k]!));
  const tools = task.withTools ? ', to_json(tools)::VARCHAR' : '';
  // file_row_number filters prune other row groups, so each task decodes only its own.
  const sql =
    `SELECT file_row_number, to_json(trajectory)::VARCHAR${tools} FROM read_parquet(${sqlString(task.path)}, file_row_number=true) ` +
    `WHERE file_row_number IN (${[...keyOf.keys()].join(',')}) ORDER BY file_row_number`;
  const res = await conn.stream(sql);
  for (let chunk = await res.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await res.fetchChunk()) {
    const rn = chunk.getColumnVector(0);
    const js = chunk.getColumnVector(1);
    const tv = task.withTools ? chunk.getColumnVector(2) : null;
    for (let i = 0; i < chunk.rowCount; i++) {
      const key = keyOf.get(Number(rn.getItem(i)))!;
      const text = js.getItem(i) as string | null;
      const t = encodeTrajectory(key, text === null ? null : JSON.parse(text), reasoning, tally, w);
      if (tv) t.tools = (tv.getItem(i) as string | null) ?? null;
      out.push(t);
    }
  }
  w.flush();
  if (out.length !== task.rows.length) throw new UserError(`${task.path}: row group ${task.rowGroup}: expected ${task.rows.length} rows, DuckDB returned ${out.length}`, ExitCode.corrupt);
  out.sort((a, b) => a.key - b.key);
  const rowsDecoded = task.rows.length;
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded };
}

async function decode(task: Extract<Task, { kind: 'decode' }>): Promise<DecodeResult> {
  if (task.engine === 'duckdb') return decodeDuck(task);
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const columns = ['trajectory', ...(task.withTools ? ['tools'] : [])];
  let base = 0;
  let next = 0;
  const w = spillWriter();
  const f = await open(task.path);
  const stream = await f.stream({ rowGroups: [task.rowGroup], columns, batchSize: 256 });
  for await (const wasmBatch of stream as unknown as AsyncIterable<WasmBatch>) {
    const n = wasmBatch.numRows;
    // Only the extracted rows cross from wasm to JS (about 1 in 8 on the real file): a one-row
    // slice serialises just that row's buffers.
    while (next < task.rows.length && task.rows[next]! < base + n) {
      const local = task.rows[next]! - base;
      const batch = tableFromIPC(wasmBatch.slice(local, 1).intoIPCStream()).batches[0]!;
      const get = (name: string) => makeGetter(batch.data.children[batch.schema.fields.findIndex((fl) => fl.name === name)] as Data);
      const t = encodeTrajectory(task.keys[next]!, get('trajectory')(0), reasoning, tally, w);
      if (task.withTools) t.tools = toolsJson(get('tools')(0));
      out.push(t);
      next++;
    }
    wasmBatch.free();
    base += n;
  }
  w.flush();
  if (next !== task.rows.length) throw new UserError(`${task.path}: row group ${task.rowGroup} has fewer rows than its metadata says`, ExitCode.corrupt);
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded: base };
}

async function* jsonlLines(path: string): AsyncGenerator<[number, string]> {
  const input = createReadStream(path);
  const stream = path.endsWith('.gz') ? input.pipe(createGunzip()) : input;
  // A gunzip failure would otherwise surface as an unhandled 'error' on the piped stream.
  const failed = new Promise<never>((_, reject) => {
    stream.on('error', (e: Error) => reject(new UserError(`${path}: cannot read: ${e.message}`, ExitCode.corrupt)));
  });
  failed.catch(() => {});
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  let n = 0;
  const it = rl[Symbol.asyncIterator]();
  for (;;) {
    const r = await Promise.race([it.next(), failed]);
    if (r.done) break;
    n++;
    if (r.value.trim() !== '') yield [n, r.value];
  }
}

function parseLine(path: string, line: number, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}:${line}: invalid JSON (${(e as Error).message})`, ExitCode.corrupt);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UserError(`${path}:${line}: a line must be a JSON object`, ExitCode.corrupt);
  return v as Record<string, unknown>;
}

/** Keys a JSONL row must have (a null value is a bad value; a missing key is a schema error, as in parquet). */
const REQUIRED_KEYS = ['trajectory_id', 'instance_id', 'resolved', 'trajectory'];

function checkKeys(path: string, line: number, o: Record<string, unknown>): void {
  const missing = REQUIRED_KEYS.filter((k) => !(k in o));
  if (missing.length === 0) return;
  const found = Object.keys(o).join(', ') || 'none';
  throw new UserError(`${path}:${line}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (found: ${found})`, ExitCode.schema);
}

async function indexJsonl(path: string): Promise<IndexResult> {
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [], lines: [] };
  for await (const [line, text] of jsonlLines(path)) {
    const o = parseLine(path, line, text);
    checkKeys(path, line, o);
    res.ids.push(o.trajectory_id);
    res.instances.push(o.instance_id);
    res.repos.push(o.repo ?? null);
    res.resolved.push(o.resolved);
    res.lines!.push(line);
  }
  return res;
}

async function decodeJsonl(task: Extract<Task, { kind: 'decode-jsonl' }>): Promise<DecodeResult> {
  const reasoning = new Set(task.reasoningKeys);
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const out: DecodedTrajectory[] = [];
  const w = spillWriter();
  let next = 0;
  let rows = 0;
  for await (const [line, text] of jsonlLines(task.path)) {
    if (next >= task.lines.length) break;
    if (line !== task.lines[next]) continue;
    const o = parseLine(task.path, line, text);
    const t = encodeTrajectory(task.keys[next]!, o.trajectory, reasoning, tally, w);
    if (task.withTools) t.tools = toolsJson(o.tools);
    out.push(t);
    next++;
    rows++;
  }
  w.flush();
  return { spill: spillIndex, trajectories: out, ...tally, rowsDecoded: rows };
}

async function run(task: Task): Promise<MetaResult | IndexResult | DecodeResult> {
  switch (task.kind) {
    case 'meta':
      return meta(task.path);
    case 'index':
      return index(task.path, task.rowGroup, task.hasRepo);
    case 'index-jsonl':
      return indexJsonl(task.path);
    case 'decode':
      return decode(task);
    case 'decode-jsonl':
      return decodeJsonl(task);
  }
}

parentPort!.on('message', (msg: { id: number; task: Task }) => {
  run(msg.task).then(
    (result) => {
      const transfer: ArrayBuffer[] = [];
      if ('trajectories' in result) {
        for (const t of result.trajectories) transfer.push(t.roles.buffer as ArrayBuffer, t.hashes.buffer as ArrayBuffer, t.offsets.buffer as ArrayBuffer);
      }
      parentPort!.postMessage({ id: msg.id, ok: true, result } satisfies WorkerReply, transfer);
    },
    (err: unknown) => parentPort!.postMessage({ id: msg.id, ok: false, error: toPayload(err) } satisfies WorkerReply),
  );
});
