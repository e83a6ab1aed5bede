// Our own parquet reader (src/parquet/, `--engine js`): the pure decoders table-driven, then whole
// files written by DuckDB (an independent writer) read back and compared value for value with
// parquet-wasm + arrow-values.ts, the values the wasm engine hands to the encoder.
import { openAsBlob } from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableFromIPC } from 'apache-arrow';
import { ParquetFile } from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLabelType, isStringType, isTrajectoryType } from '../src/io/arrow-values.js';
import { listLevels, merge, shapeLeaf } from '../src/parquet/assemble.js';
import { bitWidth, decodeHybrid, Window } from '../src/parquet/column.js';
import type { LogicalNode } from '../src/parquet/meta.js';
import { fileMeta, readRowGroup, Unsupported } from '../src/parquet/reader.js';
import { ParquetFormatError, ThriftEndError, ThriftReader } from '../src/parquet/thrift.js';
import { UserError } from '../src/errors.js';
import { wasmValues } from './support/wasm-values.js';
// @ts-expect-error -- plain ESM test support without types
import { withFooter } from './support/parquet-fuzz.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dm-unit-pq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('decodeHybrid (RLE / bit-packed levels and indices)', () => {
  it.each([
    { name: 'one RLE run', bytes: [0x08, 0x01], width: 1, count: 4, want: [1, 1, 1, 1] },
    { name: 'RLE run of width 0 (no value bytes)', bytes: [0x0a], width: 0, count: 5, want: [0, 0, 0, 0, 0] },
    // The parquet spec's example: 0..7 bit-packed at width 3.
    { name: 'bit-packed group', bytes: [0x03, 0x88, 0xc6, 0xfa], width: 3, count: 8, want: [0, 1, 2, 3, 4, 5, 6, 7] },
    { name: 'bit-packed group cut at count', bytes: [0x03, 0x88, 0xc6, 0xfa], width: 3, count: 5, want: [0, 1, 2, 3, 4] },
    { name: 'RLE then bit-packed', bytes: [0x06, 0x02, 0x03, 0x88, 0xc6, 0xfa], width: 3, count: 6, want: [2, 2, 2, 0, 1, 2] },
    { name: 'two-byte RLE value', bytes: [0x04, 0x34, 0x12], width: 13, count: 2, want: [0x1234, 0x1234] },
    // DuckDB pads its last bit-packed run past the count: the bytes are there, so it is accepted.
    { name: 'bit-packed run longer than needed', bytes: [0x05, 0x88, 0xc6, 0xfa, 0, 0, 0], width: 3, count: 3, want: [0, 1, 2] },
  ])('$name', ({ bytes, width, count, want }) => {
    const out = new Uint32Array(count);
    decodeHybrid(Uint8Array.from(bytes), width, count, out);
    expect([...out]).toEqual(want);
  });

  it.each([
    { name: 'no bytes for the values', bytes: [], width: 1, count: 1 },
    { name: 'a bit-packed group past the end', bytes: [0x03, 0x88], width: 3, count: 8 },
    { name: 'an RLE value past the end', bytes: [0x04], width: 8, count: 2 },
    { name: 'a width above 32', bytes: [0x02, 0, 0, 0, 0, 0], width: 33, count: 1 },
    { name: 'an RLE run longer than the values left', bytes: [0x64, 0x03], width: 2, count: 3 },
    // Width 0 costs no value bytes: 2^31 values claimed in five bytes, refused before any is written.
    { name: 'a width-0 RLE run claiming 2^31 values', bytes: [0x80, 0x80, 0x80, 0x80, 0x10], width: 0, count: 10 },
    { name: 'an empty RLE run (it would loop without progress)', bytes: [0x00, 0x00, 0x02, 0x01], width: 1, count: 1 },
    { name: 'an empty bit-packed run', bytes: [0x01, 0x02, 0x01], width: 1, count: 1 },
    { name: 'a run header longer than 5 bytes', bytes: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], width: 1, count: 1 },
  ])('rejects $name', ({ bytes, width, count }) => {
    expect(() => decodeHybrid(Uint8Array.from(bytes), width, count, new Uint32Array(count))).toThrow(ParquetFormatError);
  });

  it.each([
    { name: 'bytes after the last run', bytes: [0x08, 0x01, 0x00], width: 1, count: 4 },
    // Two values of width 3 fit in the one byte there, but a group of 8 takes 3.
    { name: 'a bit-packed group cut short', bytes: [0x03, 0x88], width: 3, count: 2 },
  ])('with exact, rejects $name', ({ bytes, width, count }) => {
    expect(() => decodeHybrid(Uint8Array.from(bytes), width, count, new Uint32Array(count), true)).toThrow(ParquetFormatError);
  });

  // Whole groups of widths up to 8 take a faster path than the values around them: every width, with
  // counts that end on a group, inside one, and inside the padding of the last run, checked against
  // the definition (value j is bits j*width .. j*width+width-1, LSB first) read bit by bit.
  it.each(Array.from({ length: 25 }, (_, width) => width))('bit-packed runs of width %i against the bit-by-bit definition', (width) => {
    let seed = 7 + width;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const [groups, count] of [[1, 8], [3, 24], [3, 21], [63, 500], [63, 504], [40, 317]] as const) {
      const packed = new Uint8Array(groups * width);
      for (let i = 0; i < packed.length; i++) packed[i] = Math.floor(random() * 256);
      const want = Array.from({ length: count }, (_, j) => {
        let v = 0;
        for (let b = 0; b < width; b++) v += ((packed[(j * width + b) >> 3]! >> ((j * width + b) & 7)) & 1) * 2 ** b;
        return v;
      });
      // Two runs back to back, the second cut at the count: the faster path must leave the position right.
      const bytes = Uint8Array.from([(groups << 1) | 1, ...packed, (groups << 1) | 1, ...packed.subarray(0, Math.ceil((count * width) / 8))]);
      for (const out of [new Uint32Array(groups * 8 + count), ...(width <= 8 ? [new Uint8Array(groups * 8 + count)] : [])]) {
        decodeHybrid(bytes, width, groups * 8 + count, out);
        const full = Array.from({ length: groups * 8 }, (_, j) => {
          let v = 0;
          for (let b = 0; b < width; b++) v += ((packed[(j * width + b) >> 3]! >> ((j * width + b) & 7)) & 1) * 2 ** b;
          return v;
        });
        expect([...out]).toEqual([...full, ...want]);
      }
    }
  });

  it.each([
    [0, 0],
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [255, 8],
  ])('bitWidth(%i) = %i', (level, width) => expect(bitWidth(level)).toBe(width));
});

describe('ThriftReader (compact protocol)', () => {
  it('decodes ints, binary, lists, nested structs and long-form field ids', () => {
    const bytes = Uint8Array.from([
      0x15, 0x0a, // field 1 i32 = 5
      0x18, 0x02, 0x61, 0x62, // field 2 binary "ab"
      0x29, 0x25, 0x02, 0x04, // field 4 list<i32> [1, 2]
      0x1c, 0x11, 0x00, // field 5 struct { 1: true }
      0x06, 0x28, 0x03, // field 20 (long form) i64 = -2
      0x00,
    ]);
    const s = new ThriftReader(bytes).struct();
    expect(s[1]).toBe(5);
    expect([...(s[2] as Uint8Array)]).toEqual([0x61, 0x62]);
    expect(s[4]).toEqual([1, 2]);
    expect(s[5]).toEqual({ 1: true });
    expect(s[20]).toBe(-2);
  });

  it.each([
    { name: 'a struct cut short', bytes: [0x15], err: ThriftEndError },
    { name: 'a binary longer than the bytes', bytes: [0x18, 0x09, 0x61], err: ThriftEndError },
    { name: 'an unknown field type', bytes: [0x1d, 0x00], err: ParquetFormatError },
    { name: 'a list count larger than its bytes', bytes: [0x19, 0xf5, 0xff, 0xff, 0x03], err: ParquetFormatError },
    // 2^30 elements claimed: refused before the first is read.
    { name: 'a list claiming 2^30 i32 elements', bytes: [0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x04, 0x00], err: ThriftEndError },
    { name: 'a list claiming 2^30 bools (a byte each inside a list)', bytes: [0x19, 0xf1, 0x80, 0x80, 0x80, 0x80, 0x04, 0x00], err: ThriftEndError },
    { name: 'a map claiming 2^30 entries of bools', bytes: [0x1b, 0x80, 0x80, 0x80, 0x80, 0x04, 0x11, 0x00], err: ThriftEndError },
    { name: 'a list of an unknown element type', bytes: [0x19, 0x1d, 0x00, 0x00], err: ParquetFormatError },
    { name: 'structs nested 100 deep', bytes: [...Array(100).fill(0x1c), ...Array(101).fill(0x00)], err: ParquetFormatError },
    { name: 'lists nested 100 deep', bytes: [0x19, ...Array(100).fill(0x19), 0x00], err: ParquetFormatError },
    { name: 'a varint longer than 10 bytes', bytes: [0x15, ...Array(11).fill(0xff), 0x00], err: ParquetFormatError },
  ])('rejects $name', ({ bytes, err }) => {
    expect(() => new ThriftReader(Uint8Array.from(bytes)).struct()).toThrow(err);
  });

  it('reads an empty map without a type byte, and bools inside a map a byte each', () => {
    expect(new ThriftReader(Uint8Array.from([0x1b, 0x00, 0x00])).struct()[1]).toEqual(new Map());
    expect(new ThriftReader(Uint8Array.from([0x1b, 0x01, 0x11, 0x01, 0x02, 0x00])).struct()[1]).toEqual(new Map([[true, false]]));
  });
});

describe('record assembly (shapeLeaf + merge)', () => {
  // optional list<optional struct<a: optional string, b: optional list<optional string>>>
  const a: LogicalNode = { kind: 'leaf', name: 'a', def: 4, leaf: 0, type: 'string' };
  const bItem: LogicalNode = { kind: 'leaf', name: 'element', def: 6, leaf: 1, type: 'string' };
  const b: LogicalNode = { kind: 'list', name: 'b', def: 4, elemDef: 5, rep: 2, item: bItem };
  const elem: LogicalNode = { kind: 'struct', name: 'element', def: 3, fields: [a, b] };
  const col: LogicalNode = { kind: 'list', name: 'v', def: 1, elemDef: 2, rep: 1, item: elem };
  const pathA = [col, elem, a];
  const pathB = [col, elem, b, bItem];
  type T = [rep: number, def: number, value?: string];
  const cases: { name: string; a: T[]; b: T[]; want: unknown }[] = [
    { name: 'null list', a: [[0, 0]], b: [[0, 0]], want: null },
    { name: 'empty list', a: [[0, 1]], b: [[0, 1]], want: [] },
    { name: 'a null element', a: [[0, 2]], b: [[0, 2]], want: [null] },
    { name: 'null fields', a: [[0, 3]], b: [[0, 3]], want: [{ a: null, b: null }] },
    { name: 'an empty inner list', a: [[0, 4, 'x']], b: [[0, 4]], want: [{ a: 'x', b: [] }] },
    {
      name: 'values, a null inner element, two elements',
      a: [[0, 4, 'x'], [1, 4, 'y']],
      b: [[0, 6, 'p'], [2, 5], [2, 6, 'q'], [1, 3]],
      want: [{ a: 'x', b: ['p', null, 'q'] }, { a: 'y', b: null }],
    },
  ];
  it.each(cases)('$name', ({ a: ta, b: tb, want }) => {
    const shape = (path: LogicalNode[], t: T[]) =>
      shapeLeaf(path, t.map((x) => x[0]), t.map((x) => x[1]), t.map((x) => x[2]), 0, t.length, listLevels(path));
    expect(merge(col, 0, [shape(pathA, ta), shape(pathB, tb)])).toEqual(want);
  });

  it('rejects a row that starts with a repetition', () => {
    expect(() => shapeLeaf(pathA, [1], [4], ['x'], 0, 1)).toThrow(ParquetFormatError);
  });

  // One leaf says the element struct is null (def 2), the other that it has fields (def 3, 4):
  // readers that believe one leaf or the other build different rows, so neither is believed.
  it.each([
    { name: 'first leaf null struct, second leaf a field', a: [[0, 2]] as T[], b: [[0, 4]] as T[] },
    { name: 'first leaf a value, second leaf null struct', a: [[0, 4, 'x']] as T[], b: [[0, 2]] as T[] },
    { name: 'first leaf null fields, second leaf null struct', a: [[0, 3]] as T[], b: [[0, 2]] as T[] },
  ])('rejects leaves that disagree on a null: $name', ({ a: ta, b: tb }) => {
    const shape = (path: LogicalNode[], t: T[]) =>
      shapeLeaf(path, t.map((x) => x[0]), t.map((x) => x[1]), t.map((x) => x[2]), 0, t.length, listLevels(path));
    expect(() => merge(col, 0, [shape(pathA, ta), shape(pathB, tb)])).toThrow('leaves disagree on a null');
  });
});

describe('footer fields parquet.thrift requires, checked even where this reader does not use them', () => {
  // DuckDB and parquet-rs refuse a file that breaks any of these: ours reports it as corrupt (exit 5).
  const src = readFileSync(join(ROOT, 'fixtures/forks.parquet'));
  type Tree = { fields: { id: number; type: number; v: unknown; wire?: number }[] };
  type Ops = { get(s: Tree, id: number): any; set(s: Tree, id: number, type: number, v: unknown): void; drop(s: Tree, id: number): void; field(s: Tree, id: number): any };
  /** Column chunk 0's ColumnMetaData, and schema element `k`. */
  const chunk0 = (fm: Tree, o: Ops): Tree => o.get(o.get(o.get(fm, 4).list[0], 1).list[0], 3);
  const schema = (fm: Tree, o: Ops, k: number): Tree => o.get(fm, 2).list[k];
  const rowGroup0 = (fm: Tree, o: Ops): Tree => o.get(fm, 4).list[0];
  /** A key_value_metadata list: each entry [key, value], either one left out when undefined. */
  const keyValues = (entries: [string | undefined, string | undefined][]) => ({
    list: entries.map((e) => ({ fields: e.flatMap((x, k) => (x === undefined ? [] : [{ id: k + 1, type: 8, v: Buffer.from(x) }])) })),
    et: 12,
  });
  /** A sorting_columns list of one SortingColumn with these fields. */
  const sortingColumn = (fields: { id: number; type: number; v: bigint | boolean }[]) => ({ list: [{ fields }], et: 12 });
  /** An encoding_stats list of one PageEncodingStats: page_type, encoding, count (as many as given). */
  const stats = (v: bigint[]) => ({ list: [{ fields: v.map((x, k) => ({ id: k + 1, type: 5, v: x })) }], et: 12 });
  /** Index of the first leaf string element (trajectory_id) in the flattened schema. */
  const LEAF = 1;
  const cases: { name: string; edit: (fm: Tree, o: Ops) => void; error: string }[] = [
    { name: 'encodings removed', edit: (fm, o) => o.drop(chunk0(fm, o), 2), error: 'no encodings list' },
    { name: 'an encoding of 1 (no such encoding)', edit: (fm, o) => (o.get(chunk0(fm, o), 2).list[0] = 1n), error: 'encoding 1' },
    { name: 'path_in_schema removed', edit: (fm, o) => o.drop(chunk0(fm, o), 3), error: 'no path_in_schema' },
    { name: 'total_uncompressed_size removed', edit: (fm, o) => o.drop(chunk0(fm, o), 6), error: 'no total_uncompressed_size' },
    // The fuzzer's seed 20261207 case 682: a v2 chunk whose pages never ask for the codec.
    { name: 'codec -2^31 (not a CompressionCodec)', edit: (fm, o) => o.set(chunk0(fm, o), 4, 5, -2147483648n), error: 'codec -2147483648' },
    { name: 'codec 8 (past the enum)', edit: (fm, o) => o.set(chunk0(fm, o), 4, 5, 8n), error: 'codec 8' },
    { name: 'encoding_stats page type 9', edit: (fm, o) => o.set(chunk0(fm, o), 13, 9, stats([9n, 0n, 1n])), error: 'encoding_stats page_type 9' },
    { name: 'encoding_stats without its count', edit: (fm, o) => o.set(chunk0(fm, o), 13, 9, stats([0n, 0n])), error: 'encoding_stats count' },
    { name: 'a schema name that is not UTF-8', edit: (fm, o) => o.set(schema(fm, o, LEAF), 4, 8, Buffer.from([0x74, 0xff, 0x69])), error: 'not UTF-8' },
    { name: 'repetition type 7', edit: (fm, o) => o.set(schema(fm, o, LEAF), 3, 5, 7n), error: 'repetition type 7' },
    { name: 'converted type 99', edit: (fm, o) => o.set(schema(fm, o, LEAF), 6, 5, 99n), error: 'converted type 99' },
    { name: 'a string leaf annotated MAP', edit: (fm, o) => o.set(schema(fm, o, LEAF), 6, 5, 1n), error: 'converted type 1' },
    // The fuzzer's seed 20261209 case 1425: a row group without total_byte_size, read by ours alone.
    { name: 'a row group without total_byte_size', edit: (fm, o) => o.drop(rowGroup0(fm, o), 2), error: 'missing row group 0 total_byte_size' },
    { name: 'no version', edit: (fm, o) => o.drop(fm, 1), error: 'missing version' },
    {
      name: 'a key_value_metadata entry without its key',
      edit: (fm, o) => o.set(fm, 5, 9, keyValues([['k', 'v'], [undefined, 'v']])),
      error: 'missing key of key_value_metadata entry 1',
    },
    {
      name: 'a sorting column without descending',
      edit: (fm, o) => o.set(rowGroup0(fm, o), 4, 9, sortingColumn([{ id: 1, type: 5, v: 0n }, { id: 3, type: 2, v: false }])),
      error: 'missing row group 0 sorting column 0 descending',
    },
    {
      name: 'a sorting column whose nulls_first is an i32',
      edit: (fm, o) => o.set(rowGroup0(fm, o), 4, 9, sortingColumn([{ id: 1, type: 5, v: 0n }, { id: 2, type: 2, v: true }, { id: 3, type: 5, v: 1n }])),
      error: 'missing row group 0 sorting column 0 nulls_first',
    },
    {
      name: 'codec given twice, as a list and as an i32',
      edit: (fm, o) => chunk0(fm, o).fields.splice(3, 0, { id: 4, type: 9, v: { list: [], et: 5 } }),
      error: 'field 4 given twice, as two types',
    },
  ];
  it.each(cases)('$name', ({ edit, error }) => {
    const path = join(dir, `footer-${error.replace(/\W+/g, '-')}.parquet`);
    writeFileSync(path, withFooter(src, edit));
    expect(() => fileMeta(path)).toThrow(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: corrupt parquet data \\(.*${error}`));
  });

  it('the same file rebuilt unchanged, or with a field repeated as the same type (the last counts), reads as before', () => {
    const want = readRowGroup(join(ROOT, 'fixtures/forks.parquet'), 0, ['trajectory_id', 'trajectory'], null);
    const same = join(dir, 'footer-unchanged.parquet');
    writeFileSync(same, withFooter(src, () => {}));
    expect(readRowGroup(same, 0, ['trajectory_id', 'trajectory'], null)).toEqual(want);
    const twice = join(dir, 'footer-num-values-twice.parquet');
    writeFileSync(twice, withFooter(src, (fm, o: Ops) => chunk0(fm as Tree, o).fields.splice(4, 0, { id: 5, type: 6, v: 12345n })));
    expect(readRowGroup(twice, 0, ['trajectory_id', 'trajectory'], null)).toEqual(want);
  });

  // The same optional structs with every required field: DuckDB and parquet-wasm read these files.
  it('key_value_metadata with keys and a whole sorting column read as before', () => {
    const want = readRowGroup(join(ROOT, 'fixtures/forks.parquet'), 0, ['trajectory_id', 'trajectory'], null);
    const path = join(dir, 'footer-kv-sorting.parquet');
    writeFileSync(
      path,
      withFooter(src, (fm: Tree, o: Ops) => {
        o.set(fm, 5, 9, keyValues([['k', 'v'], ['only a key', undefined]]));
        o.set(rowGroup0(fm, o), 4, 9, sortingColumn([{ id: 1, type: 5, v: 0n }, { id: 2, type: 2, v: false }, { id: 3, type: 2, v: true }]));
      }),
    );
    expect(readRowGroup(path, 0, ['trajectory_id', 'trajectory'], null)).toEqual(want);
  });
});

/** Every value of `columns` in row group `rg` as parquet-wasm + arrow-values.ts read them. */
type Duck = { run(sql: string): Promise<unknown> };
let duck: Duck;
beforeAll(async () => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  duck = (await (await DuckDBInstance.create(':memory:')).connect()) as unknown as Duck;
});

// Nulls at every level, empty lists, every scalar type the reader builds, long and non-ASCII strings.
const NESTED_SQL = `
  SELECT i::INTEGER AS i32,
    CASE WHEN i % 7 = 3 THEN NULL ELSE i * 1000000007 END::BIGINT AS i64,
    CASE WHEN i % 5 = 1 THEN NULL ELSE i / 3 END::DOUBLE AS f64,
    (i / 4)::FLOAT AS f32,
    CASE WHEN i % 6 = 2 THEN NULL ELSE i % 2 = 0 END AS flag,
    CASE WHEN i % 9 = 4 THEN NULL ELSE 'row ' || i || repeat(' é☃😀', i % 4) END AS s,
    CASE WHEN i % 11 = 5 THEN 'same' ELSE 'v' || (i % 3) END AS dict_s,
    CASE
      WHEN i % 10 = 0 THEN NULL
      WHEN i % 10 = 1 THEN []
      WHEN i % 10 = 2 THEN [NULL]
      ELSE [
        {'a': CASE WHEN i % 4 = 0 THEN NULL ELSE 'a' || i END,
         'b': CASE WHEN i % 3 = 0 THEN NULL WHEN i % 3 = 1 THEN [] ELSE ['x', NULL, repeat('long ', i % 40)] END,
         'c': {'d': i::BIGINT, 'e': CASE WHEN i % 2 = 0 THEN NULL ELSE i / 7 END::DOUBLE, 'f': i % 3 = 0}},
        {'a': 'second', 'b': ['y'], 'c': NULL}
      ]
    END AS v
  FROM range(0, 4500) t(i)`;
const COLUMNS = ['i32', 'i64', 'f64', 'f32', 'flag', 's', 'dict_s', 'v'];

describe('whole files written by DuckDB read like parquet-wasm reads them', () => {
  it.each([
    { name: 'zstd, row groups of 2048', opts: 'COMPRESSION zstd, ROW_GROUP_SIZE 2048' },
    { name: 'uncompressed, row groups of 2048', opts: 'COMPRESSION uncompressed, ROW_GROUP_SIZE 2048' },
    { name: 'snappy, row groups of 2048', opts: 'COMPRESSION snappy, ROW_GROUP_SIZE 2048' },
    { name: 'gzip, row groups of 2048', opts: 'COMPRESSION gzip, ROW_GROUP_SIZE 2048' },
    { name: 'brotli, row groups of 2048', opts: 'COMPRESSION brotli, ROW_GROUP_SIZE 2048' },
    { name: 'lz4 (LZ4_RAW), row groups of 2048', opts: 'COMPRESSION lz4, ROW_GROUP_SIZE 2048' },
  ])('$name: every row, and a subset of rows', async ({ name, opts }) => {
    const path = join(dir, `${name.replace(/\W+/g, '-')}.parquet`);
    await duck.run(`COPY (${NESTED_SQL}) TO '${path}' (FORMAT parquet, ${opts})`);
    const groups = fileMeta(path).rowGroupRows.length;
    expect(groups).toBeGreaterThan(1);
    for (let g = 0; g < groups; g++) {
      const want = await wasmValues(path, COLUMNS, g);
      const all = readRowGroup(path, g, COLUMNS, null);
      for (const c of COLUMNS) expect(all.get(c), `${c} of row group ${g}`).toEqual(want.get(c));
      const rows = [0, 3, 4, 17, 50, 1999, 2047].filter((r) => r < want.get('i32')!.length);
      const some = readRowGroup(path, g, ['v', 's'], rows);
      expect(some.get('v')).toEqual(rows.map((r) => want.get('v')![r]));
      expect(some.get('s')).toEqual(rows.map((r) => want.get('s')![r]));
    }
  }, 60_000);

  it('the upstream fixtures: every column the miner reads', async () => {
    for (const name of ['forks', 'sampling', 'labels', 'labels-float']) {
      const path = join(ROOT, 'fixtures', `${name}.parquet`);
      const cols = ['trajectory_id', 'instance_id', 'repo', 'resolved', 'trajectory', 'tools'];
      const groups = fileMeta(path).rowGroupRows.length;
      for (let g = 0; g < groups; g++) {
        const want = await wasmValues(path, cols, g);
        const got = readRowGroup(path, g, cols, null);
        for (const c of cols) expect(got.get(c), `${name} ${c}`).toEqual(want.get(c));
      }
    }
  }, 60_000);

  it('names columns the way parquet-wasm classifies them (the metadata for files of 4 GiB and more)', async () => {
    const path = join(ROOT, 'fixtures', 'forks.parquet');
    const schema = tableFromIPC((await ParquetFile.fromFile(await openAsBlob(path))).schema().intoIPCStream()).schema;
    const mine = fileMeta(path);
    expect(mine.fields.map((f) => f.name)).toEqual(schema.fields.map((f) => f.name));
    for (const f of schema.fields) {
      const m = mine.fields.find((x) => x.name === f.name)!;
      expect([m.name, m.isString, m.isLabel, m.isTrajectory]).toEqual([f.name, isStringType(f.type), isLabelType(f.type), isTrajectoryType(f.type)]);
    }
  });

  it('v2 pages with delta encodings (PARQUET_VERSION v2: DELTA_LENGTH_BYTE_ARRAY strings, delta integers)', async () => {
    const path = join(dir, 'duckdb-v2.parquet');
    await duck.run(`COPY (${NESTED_SQL}) TO '${path}' (FORMAT parquet, COMPRESSION zstd, PARQUET_VERSION v2, ROW_GROUP_SIZE 2048)`);
    for (let g = 0; g < fileMeta(path).rowGroupRows.length; g++) {
      const want = await wasmValues(path, COLUMNS, g);
      const all = readRowGroup(path, g, COLUMNS, null);
      for (const c of COLUMNS) expect(all.get(c), `${c} of row group ${g}`).toEqual(want.get(c));
      const rows = [1, 2, 500].filter((r) => r < want.get('v')!.length);
      const some = readRowGroup(path, g, ['v', 's'], rows);
      expect(some.get('v')).toEqual(rows.map((r) => want.get('v')![r]));
    }
  }, 60_000);

  it('unsigned integers: Unsupported, so the worker falls back to parquet-wasm', async () => {
    const path = join(dir, 'unsigned.parquet');
    await duck.run(`COPY (SELECT i::UTINYINT AS u FROM range(0, 10) t(i)) TO '${path}' (FORMAT parquet)`);
    expect(() => readRowGroup(path, 0, ['u'], null)).toThrow(Unsupported);
  });

  it('a corrupt page is a corrupt-file error naming the file, row group and column', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const path = join(dir, 'corrupt.parquet');
    await duck.run(`COPY (${NESTED_SQL}) TO '${path}' (FORMAT parquet, COMPRESSION zstd)`);
    const bytes = readFileSync(path);
    // Garble the middle of the first column chunk (a zstd page of i32 values).
    for (let k = 40; k < 60; k++) bytes[k] = 0xff;
    writeFileSync(path, bytes);
    let err: unknown;
    try {
      readRowGroup(path, 0, ['i32'], null);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toMatch(/corrupt\.parquet: row group 0, column i32: corrupt parquet data/);
  });
});

// --- a hand-made file whose rows span pages ------------------------------------------------------
// Writers may cut v1 pages inside a record (parquet-cpp does unless told otherwise); DuckDB and
// parquet-rs never do, so this file is written here, byte by byte: one column
// `v: optional list<optional string>`, uncompressed v1 pages, PLAIN values, RLE levels.

/** Thrift compact encoding of the few shapes a footer and a page header need. */
type TV = { i32: number } | { i64: number } | { bin: string } | { list: TV[]; et: number } | { struct: [number, TV][] };
function thrift(fields: [number, TV][]): number[] {
  const out: number[] = [];
  const varint = (n: number) => {
    for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
    out.push(n);
  };
  const zz = (n: number) => varint(n >= 0 ? 2 * n : -2 * n - 1);
  const typeOf = (v: TV) => ('i32' in v ? 5 : 'i64' in v ? 6 : 'bin' in v ? 8 : 'list' in v ? 9 : 12);
  const value = (v: TV) => {
    if ('i32' in v) zz(v.i32);
    else if ('i64' in v) zz(v.i64);
    else if ('bin' in v) {
      const b = Buffer.from(v.bin);
      varint(b.length);
      out.push(...b);
    } else if ('list' in v) {
      out.push((Math.min(v.list.length, 15) << 4) | v.et);
      if (v.list.length >= 15) varint(v.list.length);
      v.list.forEach(value);
    } else struct(v.struct);
  };
  const struct = (fs: [number, TV][]) => {
    let last = 0;
    for (const [id, v] of fs) {
      out.push(((id - last) << 4) | typeOf(v));
      last = id;
      value(v);
    }
    out.push(0);
  };
  struct(fields);
  return out;
}

/** One uncompressed v1 data page of triples (rep, def, value?): levels as RLE runs of one. */
function dataPage(triples: [number, number, string?][]): number[] {
  const levels = (pick: (t: [number, number, string?]) => number) => {
    const runs = triples.flatMap((t) => [2, pick(t)]);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(runs.length);
    return [...len, ...runs];
  };
  const values = triples.filter((t) => t[2] !== undefined).flatMap((t) => {
    const b = Buffer.from(t[2]!);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return [...len, ...b];
  });
  const body = [...levels((t) => t[0]), ...levels((t) => t[1]), ...values];
  const header = thrift([
    [1, { i32: 0 }],
    [2, { i32: body.length }],
    [3, { i32: body.length }],
    [5, { struct: [[1, { i32: triples.length }], [2, { i32: 0 }], [3, { i32: 3 }], [4, { i32: 3 }]] }],
  ]);
  return [...header, ...body];
}

describe('rows that span pages (hand-made v1 file)', () => {
  const ROWS = [['a', null, 'b'], null, [], ['c'], [null], ['d', 'e', 'f', 'g']];
  // Pages cut inside row 0 and inside row 5.
  const PAGES: [number, number, string?][][] = [
    [[0, 3, 'a'], [1, 2]],
    [[1, 3, 'b'], [0, 0], [0, 1], [0, 3, 'c'], [0, 2], [0, 3, 'd'], [1, 3, 'e']],
    [[1, 3, 'f'], [1, 3, 'g']],
  ];
  const path = join(dir, 'spanning.parquet');
  beforeAll(async () => {
    const { writeFileSync } = await import('node:fs');
    const chunk = PAGES.flatMap(dataPage);
    const numValues = PAGES.reduce((s, p) => s + p.length, 0);
    const footerBytes = thrift([
      [1, { i32: 1 }],
      [2, { list: [
        { struct: [[4, { bin: 'schema' }], [5, { i32: 1 }]] },
        { struct: [[3, { i32: 1 }], [4, { bin: 'v' }], [5, { i32: 1 }], [6, { i32: 3 }]] },
        { struct: [[3, { i32: 2 }], [4, { bin: 'list' }], [5, { i32: 1 }]] },
        { struct: [[1, { i32: 6 }], [3, { i32: 1 }], [4, { bin: 'element' }], [6, { i32: 0 }]] },
      ], et: 12 }],
      [3, { i64: ROWS.length }],
      [4, { list: [{ struct: [
        [1, { list: [{ struct: [
          [2, { i64: 4 }],
          [3, { struct: [
            [1, { i32: 6 }], [2, { list: [{ i32: 0 }, { i32: 3 }], et: 5 }], [3, { list: [{ bin: 'v' }, { bin: 'list' }, { bin: 'element' }], et: 8 }],
            [4, { i32: 0 }], [5, { i64: numValues }], [6, { i64: chunk.length }], [7, { i64: chunk.length }], [9, { i64: 4 }],
          ] }],
        ] }], et: 12 }],
        [2, { i64: chunk.length }],
        [3, { i64: ROWS.length }],
      ] }], et: 12 }],
    ]);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(footerBytes.length);
    writeFileSync(path, Buffer.from([...Buffer.from('PAR1'), ...chunk, ...footerBytes, ...len, ...Buffer.from('PAR1')]));
  });

  it('parquet-wasm reads the file as written (the file is valid)', async () => {
    expect((await wasmValues(path, ['v'], 0)).get('v')).toEqual(ROWS);
  });

  it.each([
    { rows: null, want: ROWS },
    { rows: [0], want: [ROWS[0]] },
    { rows: [5], want: [ROWS[5]] },
    { rows: [0, 3, 5], want: [ROWS[0], ROWS[3], ROWS[5]] },
    { rows: [1, 2, 4], want: [ROWS[1], ROWS[2], ROWS[4]] },
  ])('our reader, rows $rows', ({ rows, want }) => {
    expect(readRowGroup(path, 0, ['v'], rows).get('v')).toEqual(want);
  });
});

// parquet-rs (through parquet-wasm's writer) with tiny pages: many pages per column chunk, so whole
// pages are skipped for unwanted rows, with dictionary and plain values, v1 and v2 pages.
describe('small pages written by parquet-rs', () => {
  it.each([
    { name: 'v1 zstd dictionary', version: 0, compression: 'ZSTD', dictionary: true },
    { name: 'v1 uncompressed plain', version: 0, compression: 'UNCOMPRESSED', dictionary: false },
    { name: 'v2 zstd dictionary', version: 1, compression: 'ZSTD', dictionary: true },
    { name: 'v2 snappy dictionary', version: 1, compression: 'SNAPPY', dictionary: true },
    { name: 'v1 Hadoop-framed lz4 plain', version: 0, compression: 'LZ4', dictionary: false },
    { name: 'v2 gzip plain', version: 1, compression: 'GZIP', dictionary: false },
    { name: 'v2 brotli dictionary', version: 1, compression: 'BROTLI', dictionary: true },
    { name: 'v1 LZ4_RAW dictionary', version: 0, compression: 'LZ4_RAW', dictionary: true },
    { name: 'v2 DELTA_BYTE_ARRAY', version: 1, compression: 'ZSTD', dictionary: false, encoding: 'DELTA_BYTE_ARRAY' },
    { name: 'v1 DELTA_LENGTH_BYTE_ARRAY', version: 0, compression: 'UNCOMPRESSED', dictionary: false, encoding: 'DELTA_LENGTH_BYTE_ARRAY' },
  ] as const)('$name: every row and subsets', async (c) => {
    const { name, version, compression, dictionary } = c;
    const { readFileSync, writeFileSync } = await import('node:fs');
    const pw = await import('parquet-wasm');
    let props = new pw.WriterPropertiesBuilder()
      .setWriterVersion(version)
      .setCompression(pw.Compression[compression])
      .setDictionaryEnabled(dictionary)
      .setDataPageSizeLimit(512)
      .setWriteBatchSize(1)
      .setMaxRowGroupSize(7);
    // String leaves only: the delta string encodings do not apply to the other types.
    if ('encoding' in c) {
      for (const col of ['trajectory_id', 'instance_id', 'repo', ...['content', 'name', 'role', 'tool_call_id'].map((l) => `trajectory.list.element.${l}`)]) {
        props = props.setColumnEncoding(col, pw.Encoding[c.encoding]);
      }
    }
    const path = join(dir, `small-pages-${name.replace(/\W+/g, '-')}.parquet`);
    writeFileSync(path, pw.writeParquet(pw.readParquet(readFileSync(join(ROOT, 'fixtures', 'forks.parquet'))), props.build()));
    const cols = ['trajectory_id', 'resolved', 'trajectory', 'tools'];
    const groups = fileMeta(path).rowGroupRows;
    expect(groups.length).toBeGreaterThan(1);
    for (let g = 0; g < groups.length; g++) {
      const want = await wasmValues(path, cols, g);
      const all = readRowGroup(path, g, cols, null);
      for (const c of cols) expect(all.get(c), `${c} of row group ${g}`).toEqual(want.get(c));
      for (const rows of [[0], [groups[g]! - 1], [1, 3], [0, 2, 4, 6].filter((r) => r < groups[g]!)]) {
        const some = readRowGroup(path, g, ['trajectory'], rows);
        expect(some.get('trajectory'), `rows ${rows} of row group ${g}`).toEqual(rows.map((r) => want.get('trajectory')![r]));
      }
    }
  }, 60_000);
});

// --- hostile files: one class of corruption per case, each a clean corrupt-file error --------------
// The column of the spanning-rows file (`v: optional list<optional string>`, max rep 1, max def 3),
// with pages and footer numbers given per case. Every case must end in a UserError of exit 5 naming
// the file (and, past the footer, the row group and column), quickly and without a large allocation.

type Triple = [number, number, string?];
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return [...b];
};
const plainStrings = (vals: string[]) => vals.flatMap((v) => [...u32(Buffer.byteLength(v)), ...Buffer.from(v)]);
const levelRuns = (levels: number[]) => levels.flatMap((l) => [2, l]);

/** A v1 page from its parts: header fields may be overridden, the body is given as bytes. */
function v1Page(body: number[], numValues: number, opts: { encoding?: number; type?: number; uncompressed?: number; compressed?: number } = {}): number[] {
  const header = thrift([
    [1, { i32: opts.type ?? 0 }],
    [2, { i32: opts.uncompressed ?? body.length }],
    [3, { i32: opts.compressed ?? body.length }],
    [5, { struct: [[1, { i32: numValues }], [2, { i32: opts.encoding ?? 0 }], [3, { i32: 3 }], [4, { i32: 3 }]] }],
  ]);
  return [...header, ...body];
}
/** Levels and PLAIN values of `triples`, as dataPage() lays them out. */
function v1Body(triples: Triple[]): number[] {
  const rep = levelRuns(triples.map((t) => t[0]));
  const def = levelRuns(triples.map((t) => t[1]));
  return [...u32(rep.length), ...rep, ...u32(def.length), ...def, ...plainStrings(triples.flatMap((t) => (t[2] === undefined ? [] : [t[2]])))];
}
function dictPage(vals: string[]): number[] {
  const body = plainStrings(vals);
  return [...thrift([[1, { i32: 2 }], [2, { i32: body.length }], [3, { i32: body.length }], [7, { struct: [[1, { i32: vals.length }], [2, { i32: 0 }]] }]]), ...body];
}

function hostileFile(name: string, chunk: number[], numRows: number, numValues: number, footerLength?: (real: number) => number, dictAt?: number, elementRepetition = 1): string {
  const footerBytes = thrift([
    [1, { i32: 1 }],
    [2, { list: [
      { struct: [[4, { bin: 'schema' }], [5, { i32: 1 }]] },
      { struct: [[3, { i32: 1 }], [4, { bin: 'v' }], [5, { i32: 1 }], [6, { i32: 3 }]] },
      { struct: [[3, { i32: 2 }], [4, { bin: 'list' }], [5, { i32: 1 }]] },
      { struct: [[1, { i32: 6 }], [3, { i32: elementRepetition }], [4, { bin: 'element' }], [6, { i32: 0 }]] },
    ], et: 12 }],
    [3, { i64: numRows }],
    [4, { list: [{ struct: [
      [1, { list: [{ struct: [
        [2, { i64: 4 }],
        [3, { struct: [
          [1, { i32: 6 }], [2, { list: [{ i32: 0 }, { i32: 3 }], et: 5 }], [3, { list: [{ bin: 'v' }, { bin: 'list' }, { bin: 'element' }], et: 8 }],
          [4, { i32: 0 }], [5, { i64: numValues }], [6, { i64: chunk.length }], [7, { i64: chunk.length }], [9, { i64: 4 + (dictAt ?? 0) }],
          ...(dictAt !== undefined ? ([[11, { i64: 4 }]] as [number, TV][]) : []),
        ] }],
      ] }], et: 12 }],
      [2, { i64: chunk.length }],
      [3, { i64: numRows }],
    ] }], et: 12 }],
  ]);
  const path = join(dir, `hostile-${name.replace(/\W+/g, '-')}.parquet`);
  const len = footerLength ? footerLength(footerBytes.length) : footerBytes.length;
  writeFileSync(path, Buffer.from([...Buffer.from('PAR1'), ...chunk, ...footerBytes, ...u32(len), ...Buffer.from('PAR1')]));
  return path;
}

describe('hostile files end in a clean corrupt-file error', () => {
  const good: Triple[] = [[0, 3, 'a'], [1, 3, 'b'], [0, 0], [0, 3, 'c']];
  const dict = dictPage(['x', 'y']);
  /** A dictionary-encoded page of two null rows (no value present), its index section as given. */
  const nullPage = (indexSection: number[]) => v1Page([...u32(4), ...levelRuns([0, 0]), ...u32(4), ...levelRuns([0, 0]), ...indexSection], 2, { encoding: 8 });
  const cases: { name: string; build: () => string; error: RegExp }[] = [
    { name: 'a footer length past the start of the file', build: () => hostileFile('footer', v1Page(v1Body(good), 4), 3, 4, () => 2 ** 31), error: /footer length past/ },
    { name: 'a footer length one byte short', build: () => hostileFile('footer-short', v1Page(v1Body(good), 4), 3, 4, (n) => n - 1), error: /corrupt parquet data/ },
    {
      // Width-1 repetition levels in one RLE run of 2^31 values: refused from the header, before the
      // levels are allocated (the chunk declares 4 values).
      name: 'a page claiming 2^31 values in an RLE run',
      build: () => hostileFile('huge-page', v1Page([...u32(5), 0x80, 0x80, 0x80, 0x80, 0x10, ...u32(2), 2, 3], 2 ** 31 - 1), 3, 4),
      error: /page value count 2147483647 outside 0\.\.67108864/,
    },
    {
      name: 'a page and its chunk both claiming 2^30 values',
      build: () => hostileFile('huge-chunk', v1Page([...u32(5), 0x80, 0x80, 0x80, 0x80, 0x08, ...u32(2), 2, 3], 2 ** 30), 3, 2 ** 30),
      error: /page value count 1073741824 outside 0\.\.67108864/,
    },
    { name: 'an RLE run longer than the page', build: () => hostileFile('long-run', v1Page([...u32(2), 0x10, 0, ...u32(2), 0x10, 3, ...plainStrings(['a'])], 4), 3, 4), error: /RLE run of 8 values with 4 left/ },
    { name: 'a definition level wider than its bit width', build: () => hostileFile('def-above', v1Page(v1Body([[0, 3, 'a'], [1, 3, 'b'], [0, 0], [0, 7, 'c']]), 4), 3, 4), error: /an RLE value 7 wider than its 2 bits/ },
    {
      // A required element: maximum definition level 2, stored in 2 bits, so a 3 fits its width.
      name: 'a definition level above the maximum',
      build: () => hostileFile('def-max', v1Page([...u32(8), ...levelRuns([0, 1, 0, 0]), ...u32(8), ...levelRuns([2, 2, 0, 3]), ...plainStrings(['a', 'b', 'c'])], 4), 3, 4, undefined, undefined, 0),
      error: /definition level 3 above the maximum 2/,
    },
    { name: 'a chunk that starts inside a row', build: () => hostileFile('starts-inside', v1Page(v1Body([[1, 3, 'a'], [1, 3, 'b'], [0, 0], [0, 3, 'c']]), 4), 3, 4), error: /starts inside a row/ },
    { name: 'bytes left over after the values', build: () => hostileFile('leftover', v1Page([...v1Body(good), 1, 2, 3], 4), 3, 4), error: /3 bytes left over after the values/ },
    { name: 'a string longer than the page', build: () => hostileFile('long-string', v1Page([...u32(2), 2, 0, ...u32(2), 2, 3, ...u32(1000), 0x61], 1), 1, 1), error: /page ends inside a string|past the end of the page/ },
    { name: 'an uncompressed page whose sizes disagree', build: () => hostileFile('sizes', v1Page(v1Body(good), 4, { uncompressed: 4000 }), 3, 4), error: /declares 4000/ },
    { name: 'a page body past the column chunk', build: () => hostileFile('past-chunk', v1Page(v1Body(good), 4, { compressed: 5000, uncompressed: 5000 }), 3, 4), error: /page body past the column chunk/ },
    { name: 'pages holding more values than the chunk declares', build: () => hostileFile('more-values', v1Page(v1Body(good), 4), 3, 3), error: /a page of 4 values with 3 left/ },
    { name: 'pages holding fewer values than the chunk declares', build: () => hostileFile('fewer-values', v1Page(v1Body(good), 4), 3, 5), error: /pages hold 4 values, the column chunk 5/ },
    { name: 'a row group assembling fewer rows than it declares', build: () => hostileFile('fewer-rows', v1Page(v1Body(good), 4), 4, 4), error: /fewer rows than the row group's 4|3 rows, the row group 4/ },
    { name: 'a row group assembling more rows than it declares', build: () => hostileFile('more-rows', v1Page(v1Body([...good, [0, 0]]), 5), 3, 5), error: /4 rows, the row group 3/ },
    {
      name: 'a dictionary index out of range',
      build: () => hostileFile('dict-index', [...dict, ...v1Page([...u32(8), ...levelRuns([0, 1, 0, 0]), ...u32(8), ...levelRuns([3, 3, 0, 3]), 3, 6, 5], 4, { encoding: 8 })], 3, 4, undefined, dict.length),
      error: /dictionary index 5 of a dictionary of 2/,
    },
    {
      name: 'a dictionary claiming more values than its bytes hold',
      build: () => {
        const body = plainStrings(['x']);
        const d = [...thrift([[1, { i32: 2 }], [2, { i32: body.length }], [3, { i32: body.length }], [7, { struct: [[1, { i32: 2 ** 30 }], [2, { i32: 0 }]] }]]), ...body];
        return hostileFile('dict-size', [...d, ...v1Page(v1Body(good), 4)], 3, 4, undefined, d.length);
      },
      error: /dictionary of 1073741824 values in 5 bytes/,
    },
    { name: 'a second dictionary page', build: () => hostileFile('two-dicts', [...dict, ...dict, ...v1Page(v1Body(good), 4)], 3, 4, undefined, 2 * dict.length), error: /dictionary page after the first page/ },
    // No index is read on a page of nulls, but a bit width that is there must be one (DuckDB and parquet-wasm refuse it too).
    { name: 'a page of nulls with an index bit width over 32', build: () => hostileFile('null-page-width', [...dict, ...nullPage([33])], 2, 2, undefined, dict.length), error: /bit width 33/ },
  ];
  it.each(cases)('$name', ({ build, error }) => {
    const path = build();
    let err: unknown;
    try {
      fileMeta(path);
      readRowGroup(path, 0, ['v'], null);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(5);
    expect((err as UserError).message).toMatch(error);
    expect((err as UserError).message.startsWith(`${path}: `)).toBe(true);
    expect((err as UserError).message).not.toContain('\n');
  });

  it('the file the cases derive from reads (a case fails for its own corruption)', () => {
    const path = hostileFile('good', v1Page(v1Body(good), 4), 3, 4);
    expect(readRowGroup(path, 0, ['v'], null).get('v')).toEqual([['a', 'b'], null, ['c']]);
    const withDict = hostileFile('good-dict', [...dict, ...v1Page([...u32(8), ...levelRuns([0, 1, 0, 0]), ...u32(8), ...levelRuns([3, 3, 0, 3]), 1, 4, 0, 2, 1], 4, { encoding: 8 })], 3, 4, undefined, dict.length);
    expect(readRowGroup(withDict, 0, ['v'], null).get('v')).toEqual([['x', 'x'], null, ['y']]);
    // A page of nulls with or without its bit width (writers differ), and with one up to 32.
    for (const [name, section] of [['no-width', []], ['width-0', [0]], ['width-32', [32]], ['width-and-run', [1, 2, 0]]] as const) {
      const nulls = hostileFile(`good-null-page-${name}`, [...dict, ...nullPage([...section])], 2, 2, undefined, dict.length);
      expect(readRowGroup(nulls, 0, ['v'], null).get('v'), name).toEqual([null, null]);
    }
  });
});

describe('Window: what a page body is asked to decompress', () => {
  /** An inflater over `total` bytes (byte i = i mod 251) that records every read's size. */
  const counting = (total: number) => {
    let pos = 0;
    const reads: number[] = [];
    return {
      reads,
      read(dst: Uint8Array) {
        const n = Math.min(dst.length, total - pos);
        for (let i = 0; i < n; i++) dst[i] = (pos + i) % 251;
        pos += n;
        reads.push(n);
        return n;
      },
      close() {},
    };
  };
  it('reading the levels at the front of a 1 MiB page decompresses 16 KiB, not the page', () => {
    const inf = counting(1 << 20);
    const w = new Window(inf, 1 << 20);
    expect(w.ensure(600)).toBe(true);
    expect(inf.reads).toEqual([1 << 14]);
    w.close();
  });
  it('refills double up to the window, and the bytes come out in order', () => {
    const total = 3 << 20;
    const inf = counting(total);
    const w = new Window(inf, total);
    let seen = 0;
    while (w.rest() > 0) {
      expect(w.ensure(1)).toBe(true);
      const k = Math.min(w.end - w.pos, w.rest());
      for (let i = 0; i < k; i++) if (w.buf[w.pos + i] !== (seen + i) % 251) throw new Error(`byte ${seen + i}`);
      w.advance(k);
      seen += k;
    }
    expect(seen).toBe(total);
    expect(inf.reads.slice(0, 8)).toEqual([1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 20]);
    w.finish('values');
  });
  it('a value longer than the refill is still made available whole', () => {
    const inf = counting(1 << 20);
    const w = new Window(inf, 1 << 20);
    expect(w.ensure(300_000)).toBe(true);
    expect(w.end - w.pos).toBeGreaterThanOrEqual(300_000);
    expect(inf.reads[0]).toBe(300_000);
    w.close();
  });
});
