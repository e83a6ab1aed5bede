// Parquet output through apache-arrow (build record batches) and parquet-wasm (encode), streamed:
// rows are buffered into batches, each batch crosses into wasm as Arrow IPC and is encoded by
// `transformParquetStream`, whose byte chunks go straight to the temporary file.
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import {
  Bool,
  Field,
  Float64,
  Int64,
  List,
  Struct,
  Utf8,
  makeTable,
  tableToIPC,
  vectorFromArray,
  type DataType,
} from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, transformParquetStream } from 'parquet-wasm';
import { commitTemp, removeTemp, tempPathFor, trackTemp } from './atomic.js';
import type { RowSink } from './sink.js';

/** A column: its Arrow type and how to get its value from a row. */
export interface ColumnSpec<R> {
  name: string;
  type: DataType;
  value: (row: R) => unknown;
}

export const MESSAGE_STRUCT = new Struct([
  new Field('role', new Utf8(), true),
  new Field('content', new Utf8(), true),
  new Field('name', new Utf8(), true),
  new Field('tool_call_id', new Utf8(), true),
  new Field('tool_calls', new Utf8(), true),
]);
export const MESSAGE_LIST = new List(new Field('item', MESSAGE_STRUCT, true));
export const STRING = new Utf8();
export const INT64 = new Int64();
export const DOUBLE = new Float64();
export const BOOL = new Bool();
/** Behaviour sequences. */
export const STRING_LIST = new List(new Field('item', new Utf8(), true));
/** A continuation message, the five message fields plus `loss` (supervised or context). */
export const LOSS_MESSAGE_STRUCT = new Struct([...MESSAGE_STRUCT.children, new Field('loss', new Bool(), true)]);
export const LOSS_MESSAGE_LIST = new List(new Field('item', LOSS_MESSAGE_STRUCT, true));

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
export function trlMessageStruct(jsonArguments: boolean): Struct {
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

export function trlMessageList(jsonArguments: boolean): List {
  return new List(new Field('item', trlMessageStruct(jsonArguments), true));
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
              arguments: typeof c.function.arguments === 'string' ? c.function.arguments : (JSON.stringify(c.function.arguments ?? null) ?? null),
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
  bytes = 0;

  constructor(
    private readonly path: string,
    private readonly columns: ColumnSpec<R>[],
    private readonly sizeOf: (row: R) => number = () => 1024,
  ) {
    const tmp = tempPathFor(path);
    this.tmp = tmp;
    trackTemp(tmp);
    // Opened synchronously, so abort() never races an open still in flight (which would leave the
    // temporary file behind after it was removed).
    const out = createWriteStream(tmp, { fd: openSync(tmp, 'w') });
    this.out = out;
    const batches = new ReadableStream<unknown>({ start: (c) => void (this.controller = c) });
    const props = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).setMaxRowGroupSize(4096).build();
    this.done = (async () => {
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
    if (this.batch.length >= BATCH_ROWS || this.batchBytes >= BATCH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    const rows = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    this.controller.enqueue(encodeBatch(rows, this.columns));
  }

  async close(): Promise<void> {
    // An empty output still gets a valid file with the full schema.
    if (this.batch.length > 0 || this.bytes === 0) this.controller.enqueue(encodeBatch(this.batch, this.columns));
    this.batch = [];
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

function encodeBatch<R>(rows: R[], columns: ColumnSpec<R>[]): unknown {
  const vectors: Record<string, unknown> = {};
  for (const c of columns) {
    let values = rows.map(c.value);
    if (c.type instanceof Int64) values = values.map((v) => (v == null ? null : BigInt(v as number)));
    vectors[c.name] = vectorFromArray(values as never[], c.type as never);
  }
  const table = makeTable(vectors as never);
  const wasm = WasmTable.fromIPCStream(tableToIPC(table as never, 'stream'));
  // One Arrow table from our batch holds exactly one record batch.
  return wasm.recordBatch(0);
}
