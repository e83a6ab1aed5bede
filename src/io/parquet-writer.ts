// Parquet output through apache-arrow (build record batches) and parquet-wasm (encode), streamed:
// rows are buffered into batches, each batch crosses into wasm as Arrow IPC and is encoded by
// `transformParquetStream`, whose byte chunks go straight to the temporary file.
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { DataType, Struct, List } from 'apache-arrow';
import { commitTemp, openTempFor, removeTemp } from './atomic.js';
import { parquetLibs, type Arrow, type ParquetLibs } from './parquet-libs.js';
import type { RowSink } from './sink.js';
import { stringifyKeepingNumbers } from '../contract/json-numbers.js';

/**
 * An Arrow type, built from apache-arrow once a parquet sink has loaded it (parquet-libs.ts): the
 * column lists are defined at start-up, when a JSONL run must not pay for loading apache-arrow.
 */
export type ColumnType = (arrow: Arrow) => DataType;

/** A column: its Arrow type and how to get its value from a row. */
export interface ColumnSpec<R> {
  name: string;
  type: ColumnType;
  value: (row: R) => unknown;
}

const messageFields = ({ Field, Utf8 }: Arrow) => [
  new Field('role', new Utf8(), true),
  new Field('content', new Utf8(), true),
  new Field('name', new Utf8(), true),
  new Field('tool_call_id', new Utf8(), true),
  new Field('tool_calls', new Utf8(), true),
];
export const MESSAGE_STRUCT: ColumnType = (a) => new a.Struct(messageFields(a));
export const MESSAGE_LIST: ColumnType = (a) => new a.List(new a.Field('item', MESSAGE_STRUCT(a), true));
export const STRING: ColumnType = (a) => new a.Utf8();
export const INT64: ColumnType = (a) => new a.Int64();
export const DOUBLE: ColumnType = (a) => new a.Float64();
export const BOOL: ColumnType = (a) => new a.Bool();
/** Behaviour sequences. */
export const STRING_LIST: ColumnType = (a) => new a.List(new a.Field('item', new a.Utf8(), true));
/** A continuation message, the five message fields plus `loss` (supervised or context). */
export const LOSS_MESSAGE_STRUCT: ColumnType = (a) => new a.Struct([...messageFields(a), new a.Field('loss', new a.Bool(), true)]);
export const LOSS_MESSAGE_LIST: ColumnType = (a) => new a.List(new a.Field('item', LOSS_MESSAGE_STRUCT(a), true));

/** A message with all five fields (absent ones null), as the parquet struct wants it. */
export function fullMessage(m: { role: string; content: string | null; name?: string | null; tool_call_id?: string | null; tool_calls?: string | null }) {
  return { role: m.role, content: m.content, name: m.name ?? null, tool_call_id: m.tool_call_id ?? null, tool_calls: m.tool_calls ?? null };
}

/** A continuation message with all five fields and its loss flag. */
export function fullLossMessage(m: Parameters<typeof fullMessage>[0] & { loss: boolean }) {
  return { ...fullMessage(m), loss: m.loss };
}

// ---- the `trl` shape (src/shapes/trl.ts): messages with real tool-call arrays

/**
 * Field metadata of the canonical Arrow JSON extension type (`arrow.json`, storage utf8). pyarrow
 * >= 19 reads it as `pa.json_()` and `datasets` >= 4.7 as its `Json()` feature, which decodes the
 * text back to objects; readers that do not know it see a plain string.
 */
export const JSON_EXTENSION_METADATA: ReadonlyMap<string, string> = new Map([
  ['ARROW:extension:name', 'arrow.json'],
  ['ARROW:extension:metadata', ''],
]);

/**
 * A trl message: {role, content, tool_calls: list<{id, type, function: {name, arguments}}>, name,
 * tool_call_id}. `arguments` is JSON text; with `jsonArguments` it is tagged `arrow.json`
 * (`--arguments object`), otherwise a plain string (`--arguments string`).
 */
export function trlMessageStruct(jsonArguments: boolean, { Field, List, Struct, Utf8 }: Arrow): Struct {
  const fn = new Struct([
    new Field('name', new Utf8(), true),
    new Field('arguments', new Utf8(), true, jsonArguments ? new Map(JSON_EXTENSION_METADATA) : undefined),
  ]);
  const call = new Struct([new Field('id', new Utf8(), true), new Field('type', new Utf8(), true), new Field('function', fn, true)]);
  return new Struct([
    new Field('role', new Utf8(), true),
    new Field('content', new Utf8(), true),
    new Field('tool_calls', new List(new Field('item', call, true)), true),
    new Field('name', new Utf8(), true),
    new Field('tool_call_id', new Utf8(), true),
  ]);
}

export function trlMessageList(jsonArguments: boolean): ColumnType {
  return (a): List => new a.List(new a.Field('item', trlMessageStruct(jsonArguments, a), true));
}

interface TrlMessageLike {
  role: string;
  content: string | null;
  tool_calls?: { id: string | null; type: string | null; function: { name: string | null; arguments: unknown } }[] | null;
  name?: string | null;
  tool_call_id?: string | null;
}

/** A trl message with all five fields (absent ones null), `arguments` as JSON text. */
export function fullTrlMessage(m: TrlMessageLike) {
  return {
    role: m.role,
    content: m.content,
    tool_calls:
      m.tool_calls == null
        ? null
        : m.tool_calls.map((c) => ({
            id: c.id,
            type: c.type,
            function: {
              name: c.function.name,
              arguments: typeof c.function.arguments === 'string' ? c.function.arguments : (stringifyKeepingNumbers(c.function.arguments ?? null) ?? null),
            },
          })),
    name: m.name ?? null,
    tool_call_id: m.tool_call_id ?? null,
  };
}

const BATCH_ROWS = 256;
const BATCH_BYTES = 32 << 20;

export class ParquetSink<R> implements RowSink<R> {
  private readonly tmp: string;
  private batch: R[] = [];
  private batchBytes = 0;
  private controller!: ReadableStreamDefaultController<unknown>;
  private readonly out: WriteStream;
  private readonly done: Promise<void>;
  /** apache-arrow and parquet-wasm (loading at construction) and the columns' Arrow types. */
  private readonly libs: Promise<{ libs: ParquetLibs; types: DataType[] }>;
  bytes = 0;

  constructor(
    private readonly path: string,
    private readonly columns: ColumnSpec<R>[],
    private readonly sizeOf: (row: R) => number = () => 1024,
  ) {
    // Opened synchronously, so abort() never races an open still in flight (which would leave the
    // temporary file behind after it was removed).
    const { tmp, fd } = openTempFor(path);
    this.tmp = tmp;
    const out = createWriteStream(tmp, { fd });
    this.out = out;
    const batches = new ReadableStream<unknown>({ start: (c) => void (this.controller = c) });
    const loaded = parquetLibs().then((libs) => ({ libs, types: columns.map((c) => c.type(libs.arrow)) }));
    this.libs = loaded;
    this.done = (async () => {
      const { Compression, WriterPropertiesBuilder, transformParquetStream } = (await loaded).libs.wasm;
      const props = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).setMaxRowGroupSize(4096).build();
      const bytes = (await transformParquetStream(batches as never, props)) as unknown as AsyncIterable<Uint8Array>;
      for await (const chunk of bytes) {
        this.bytes += chunk.byteLength;
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await once(out, 'close');
    })();
    this.done.catch(() => {});
  }

  async write(row: R): Promise<void> {
    this.batch.push(row);
    this.batchBytes += this.sizeOf(row);
    if (this.batch.length >= BATCH_ROWS || this.batchBytes >= BATCH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    const rows = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    // Batches taken before the libraries are loaded are encoded in the order they were taken.
    this.controller.enqueue(encodeBatch(rows, this.columns, await this.libs));
  }

  async close(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    const libs = await this.libs;
    // An empty output still gets a valid file with the full schema.
    if (rows.length > 0 || this.bytes === 0) this.controller.enqueue(encodeBatch(rows, this.columns, libs));
    this.controller.close();
    await this.done;
    commitTemp(this.tmp, this.path);
  }

  abort(): void {
    try {
      this.controller.error(new Error('aborted'));
    } catch {
      /* already closed */
    }
    this.out.destroy();
    removeTemp(this.tmp);
  }
}

function encodeBatch<R>(rows: R[], columns: ColumnSpec<R>[], { libs: { arrow, wasm: parquetWasm }, types }: { libs: ParquetLibs; types: DataType[] }): unknown {
  const { Int64, makeTable, tableToIPC, vectorFromArray } = arrow;
  const vectors: Record<string, unknown> = {};
  columns.forEach((c, k) => {
    const type = types[k]!;
    let values = rows.map(c.value);
    if (type instanceof Int64) values = values.map((v) => (v == null ? null : BigInt(v as number)));
    vectors[c.name] = vectorFromArray(values as never[], type as never);
  });
  const table = makeTable(vectors as never);
  const wasm = parquetWasm.Table.fromIPCStream(tableToIPC(table as never, 'stream'));
  // One Arrow table from our batch holds exactly one record batch.
  return wasm.recordBatch(0);
}
