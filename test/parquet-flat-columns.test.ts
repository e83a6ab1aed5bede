// Columns that are one leaf outside any list (the index pass's ids, labels and repos, the exit
// status): assembleRow takes each row's one entry as is, without shaping and merging. A null is null (never
// undefined), a value is the value, whatever the type, the encoding (dictionary or plain), the page
// version and the codec; and the assembled columns beside them read the same.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bool, Field, Float64, Int32, Int64, List, RecordBatch, Schema, Struct, Table, Utf8, makeData, tableToIPC, vectorFromArray } from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { readRowGroup } from '../src/parquet/reader.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-flat-columns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 40;
/** Every fifth row null, and the first; a few repeated values so that dictionaries are used. */
const nullAt = (r: number) => r % 5 === 0;
const COLUMNS = {
  s: Array.from({ length: ROWS }, (_, r) => (nullAt(r) ? null : `instance-${r % 7}`)),
  i: Array.from({ length: ROWS }, (_, r) => (nullAt(r) ? null : r - 20)),
  b: Array.from({ length: ROWS }, (_, r) => (nullAt(r) ? null : r % 3 === 0)),
  f: Array.from({ length: ROWS }, (_, r) => (nullAt(r) ? null : r / 4)),
  l: Array.from({ length: ROWS }, (_, r) => (nullAt(r) ? null : BigInt(r) * 1000n)),
  // Required (not nullable): its leaf has no definition levels at all.
  req: Array.from({ length: ROWS }, (_, r) => `row-${r}`),
  // A list beside them, assembled as before.
  tags: Array.from({ length: ROWS }, (_, r) => (r % 4 === 0 ? null : Array.from({ length: r % 3 }, (_, k) => `t${k}`))),
};

function write(name: string, version: 0 | 1, dictionary: boolean, codec: 'SNAPPY' | 'ZSTD' | 'UNCOMPRESSED'): string {
  const vectors = {
    s: vectorFromArray(COLUMNS.s, new Utf8()),
    i: vectorFromArray(COLUMNS.i, new Int32()),
    b: vectorFromArray(COLUMNS.b, new Bool()),
    f: vectorFromArray(COLUMNS.f, new Float64()),
    l: vectorFromArray(COLUMNS.l, new Int64()),
    req: vectorFromArray(COLUMNS.req, new Utf8()),
    tags: vectorFromArray(COLUMNS.tags, new List(new Field('element', new Utf8(), true))),
  };
  const fields = Object.entries(vectors).map(([n, v]) => new Field(n, v.type, n !== 'req'));
  const data = makeData({ type: new Struct(fields), length: ROWS, nullCount: 0, children: Object.values(vectors).map((v) => v.data[0]!) });
  const strict = new Table([new RecordBatch(new Schema(fields), data)]);
  const props = new pw.WriterPropertiesBuilder()
    .setWriterVersion(version)
    .setCompression(pw.Compression[codec])
    .setDictionaryEnabled(dictionary)
    .setDataPageSizeLimit(64)
    .setWriteBatchSize(8)
    .setMaxRowGroupSize(25)
    .build();
  const path = join(dir, `${name}.parquet`);
  writeFileSync(path, pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(strict, 'stream')), props));
  return path;
}

describe('flat columns read row by row without assembly', () => {
  const FILES: [string, 0 | 1, boolean, 'SNAPPY' | 'ZSTD' | 'UNCOMPRESSED'][] = [
    ['v1-dictionary-snappy', 0, true, 'SNAPPY'],
    ['v1-plain-zstd', 0, false, 'ZSTD'],
    ['v2-dictionary-zstd', 1, true, 'ZSTD'],
    ['v2-plain-uncompressed', 1, false, 'UNCOMPRESSED'],
  ];
  it.each(FILES)('%s', (name, version, dictionary, codec) => {
    const path = write(name, version, dictionary, codec);
    const names = Object.keys(COLUMNS);
    const got = new Map<string, unknown[]>(names.map((c) => [c, []]));
    for (const g of [0, 1]) for (const [c, vs] of readRowGroup(path, g, names, null)) got.get(c)!.push(...vs);
    // int64 values come as numbers (BigInt only past 2^53, as the Arrow path gives them).
    const want = (c: string) => (COLUMNS[c as keyof typeof COLUMNS] as unknown[]).map((v) => (typeof v === 'bigint' ? Number(v) : v));
    for (const c of names) expect(got.get(c), c).toEqual(want(c));
    // Nulls are null, not undefined (toEqual would not tell them apart).
    for (const c of ['s', 'i', 'b', 'f', 'l']) expect(got.get(c)!.filter((v) => v === null)).toHaveLength(ROWS / 5);
    // Some rows only, in both row groups.
    const some = readRowGroup(path, 1, ['s', 'i', 'tags'], [0, 4, 5, 14]);
    expect(some.get('s')).toEqual([0, 4, 5, 14].map((r) => COLUMNS.s[25 + r]));
    expect(some.get('i')).toEqual([0, 4, 5, 14].map((r) => COLUMNS.i[25 + r]));
    expect(some.get('tags')).toEqual([0, 4, 5, 14].map((r) => COLUMNS.tags[25 + r]));
  });
});
