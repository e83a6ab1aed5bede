// What a page's values can take (src/parquet/bounds.ts) and the checks built on it: the reader
// refuses a declared size past the bound before allocating or decompressing for it, checkPageHeaders
// (what the wasm and duckdb engines run first) refuses the same from the headers alone, and every
// page of every real writer's file (fixtures/writers/, fixtures/*.parquet: rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius) is within its bounds. Dictionaries
// of more than 65,536 entries are held as typed arrays and read like parquet-wasm reads them.
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { constants } from 'node:buffer';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_STRING_BYTES, ValueTooLong, checkStringLength, hybridBound, levelsBound, valuesBound } from '../src/parquet/bounds.js';
import { decodeHybrid } from '../src/parquet/column.js';
import { checkPageHeaders, fileMeta, readRowGroup } from '../src/parquet/reader.js';
import { ParquetFormatError } from '../src/parquet/thrift.js';
import { UserError } from '../src/errors.js';
// @ts-expect-error -- plain ESM test support without types
import { withPages } from './support/parquet-fuzz.mjs';
import { wasmValues } from './support/wasm-values.js';

const ROOT = join(import.meta.dirname, '..');
const FORKS = join(ROOT, 'fixtures', 'forks.parquet');
const dir = mkdtempSync(join(tmpdir(), 'dm-page-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A varint of `v` padded to `len` bytes (a non-minimal run header, which decodeHybrid accepts up to 6 bytes). */
function paddedVarint(v: number, len: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < len; i++, v = Math.floor(v / 128)) out.push((v % 128) | (i < len - 1 ? 0x80 : 0));
  return out;
}

describe('hybridBound: the costliest run sequences decodeHybrid accepts stay within it', () => {
  it.each([0, 1, 3, 8, 9, 17, 32])('width %i: one-value RLE runs with 6-byte headers, then a last bit-packed run padded by 255 values', (width) => {
    const n = 41;
    const bytes: number[] = [];
    // n - 1 RLE runs of one value each (header 2 = one value), the value in ceil(width / 8) bytes.
    for (let i = 0; i < n - 1; i++) bytes.push(...paddedVarint(2, 6), ...new Array<number>((width + 7) >> 3).fill(0));
    // The last value in a bit-packed run of 32 groups (256 values, 255 of them padding, as DuckDB pads).
    bytes.push(...paddedVarint(2 * 32 + 1, 6), ...new Array<number>(32 * width).fill(0));
    const out = new Uint32Array(n);
    decodeHybrid(Uint8Array.from(bytes), width, n, out, true);
    expect(bytes.length).toBeLessThanOrEqual(hybridBound(n, width));
    // One group more of padding is refused: no bound could allow for it.
    const more = [...bytes.slice(0, bytes.length - 6 - 32 * width), ...paddedVarint(2 * 33 + 1, 6), ...new Array<number>(33 * width).fill(0)];
    expect(() => decodeHybrid(Uint8Array.from(more), width, n, new Uint32Array(n), true)).toThrow(/a bit-packed run of 33 groups with 1 values left/);
  });
});

describe('valuesBound', () => {
  it.each([
    { kind: 'int32', encoding: 0, n: 10, bound: 40 },
    { kind: 'int64', encoding: 0, n: 10, bound: 80 },
    { kind: 'double', encoding: 9, n: 10, bound: 80 },
    { kind: 'boolean', encoding: 0, n: 17, bound: 3 },
    { kind: 'boolean', encoding: 3, n: 17, bound: 4 + hybridBound(17, 1) },
    { kind: 'string', encoding: 8, n: 10, bound: 1 + hybridBound(10, 32) },
    { kind: 'int64', encoding: 2, n: 10, bound: 1 + hybridBound(10, 32) },
    { kind: 'string', encoding: 0, n: 10, bound: 2 ** 31 - 1 },
    { kind: 'string', encoding: 6, n: 10, bound: 2 ** 31 - 1 },
    { kind: 'int32', encoding: 5, n: 1, bound: 40 },
  ] as const)('$kind in encoding $encoding, $n values: $bound', ({ kind, encoding, n, bound }) => expect(valuesBound(kind, encoding, n)).toBe(bound));
  it('DELTA_BINARY_PACKED grows with the value count and the width', () => {
    expect(valuesBound('int64', 5, 1000)).toBeGreaterThan(valuesBound('int32', 5, 1000));
    expect(valuesBound('int64', 5, 2000) - valuesBound('int64', 5, 1000)).toBe(17 * 1000);
  });
});

describe('checkStringLength: the longest JavaScript string, in bytes', () => {
  it('accepts MAX_STRING_BYTES, refuses one more with the size in the message', () => {
    expect(MAX_STRING_BYTES).toBe(constants.MAX_STRING_LENGTH);
    expect(() => checkStringLength(MAX_STRING_BYTES)).not.toThrow();
    let err: unknown;
    try {
      checkStringLength(MAX_STRING_BYTES + 1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValueTooLong);
    expect(err).toBeInstanceOf(ParquetFormatError);
    expect((err as Error).message).toBe(`a string value of ${(MAX_STRING_BYTES + 1).toLocaleString('en-US')} bytes, longer than the longest JavaScript string (${MAX_STRING_BYTES.toLocaleString('en-US')} characters)`);
  });
});

// ---- declared sizes past the bound: refused by the reader and by the header check ----------------
const zstd = () => createRequire(import.meta.url)('zstd-napi') as { compress(b: Buffer): Buffer; decompress(b: Buffer): Buffer };
const get = (s: Tree | undefined, id: number) => s?.fields.find((f) => f.id === id)?.v;
interface Tree {
  fields: { id: number; type: number; v: unknown }[];
}
interface Page {
  header: Tree;
  body: Buffer;
}
interface Chunk {
  codec: number;
  leaf: { path: string };
  pages: Page[];
}
type Set = (s: Tree, id: number, type: number, v: bigint) => void;

function rewrite(bytes: Buffer, column: string, type: number, edit: (content: Buffer, p: Page, set: Set) => Buffer): Buffer {
  return withPages(bytes, (f: { groups: Chunk[][] }, o: { set: Set }) => {
    const chunk = f.groups[0]!.find((c) => c.leaf.path === column)!;
    const p = chunk.pages.find((pg) => Number(get(pg.header, 1)) === type)!;
    const content = edit(zstd().decompress(p.body), p, o.set);
    p.body = zstd().compress(content);
    o.set(p.header, 2, 5, BigInt(content.length));
    o.set(p.header, 3, 5, BigInt(p.body.length));
  }) as Buffer;
}

const plainBase = (): Buffer => {
  const props = new pw.WriterPropertiesBuilder().setWriterVersion(0).setCompression(pw.Compression.ZSTD).setDictionaryEnabled(false).build();
  return Buffer.from(pw.writeParquet(pw.readParquet(readFileSync(FORKS)), props));
};
const ZEROS = Buffer.alloc(1 << 20);

describe('a page declaring more than its values can take: refused before its body is held', () => {
  // Each page keeps its real content and gets 1 MiB of zeros behind it (declared and real).
  const cases = [
    { name: 'PLAIN int64 values (resolved)', base: plainBase, column: 'resolved', type: 0, why: `a page of 14 values declares ${0} bytes, more than they can take (${levelsBound(14, 1) + 14 * 8})` },
    { name: 'PLAIN booleans (additionalProperties)', base: () => readFileSync(FORKS), column: 'tools.list.element.function.parameters.additionalProperties', type: 0, why: `a page of 70 values declares ${0} bytes, more than they can take (${levelsBound(70, 1) + levelsBound(70, 3) + Math.ceil(70 / 8)})` },
    { name: 'dictionary indices (resolved)', base: () => readFileSync(FORKS), column: 'resolved', type: 0, why: `a page of 14 values declares ${0} bytes, more than they can take (${levelsBound(14, 1) + 1 + hybridBound(14, 32)})` },
    { name: 'a dictionary of doubles (gen_tests_correct)', base: () => readFileSync(FORKS), column: 'gen_tests_correct', type: 2, why: /^a dictionary of \d+ values declares \d+ bytes, more than they can take \(\d+\)$/ },
  ];
  it.each(cases)('$name', ({ name, base, column, type, why }) => {
    let declared = 0;
    const bytes = rewrite(base(), column, type, (content) => {
      const out = Buffer.concat([content, ZEROS]);
      declared = out.length;
      return out;
    });
    // A name per case: the reader keeps footers by path.
    const path = join(dir, `bound-${name.replace(/\W+/g, '-')}.parquet`);
    writeFileSync(path, bytes);
    const message = typeof why === 'string' ? why.replace(' 0 bytes', ` ${declared} bytes`) : why;
    const expectRefused = (f: () => unknown) => {
      let err: unknown;
      try {
        f();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).exitCode).toBe(5);
      const m = (err as Error).message;
      expect(m.startsWith(`${path}: row group 0, column ${column}: corrupt parquet data (`)).toBe(true);
      const inner = m.slice(`${path}: row group 0, column ${column}: corrupt parquet data (`.length, -1);
      if (typeof message === 'string') expect(inner).toBe(message);
      else expect(inner).toMatch(message);
    };
    expectRefused(() => readRowGroup(path, 0, [column.split('.')[0]!], null));
    expectRefused(() => checkPageHeaders(path, 0, [column.split('.')[0]!]));
  });

  it('a v1 level section longer than its values can take: refused before the window grows to it; the headers alone cannot tell, the levels check can', () => {
    // A string page (its values have no bound): the definition levels claim 16 MiB more, and have them.
    let claimed = 0;
    const bytes = rewrite(plainBase(), 'trajectory_id', 0, (content) => {
      const runs = content.subarray(4, 4 + content.readUInt32LE(0));
      const len = Buffer.alloc(4);
      len.writeUInt32LE((claimed = runs.length + (1 << 24)));
      return Buffer.concat([len, runs, Buffer.alloc(1 << 24), content.subarray(4 + runs.length)]);
    });
    const path = join(dir, 'levels-length.parquet');
    writeFileSync(path, bytes);
    const why = new RegExp(`^${path}: row group 0, column trajectory_id: corrupt parquet data \\(definition levels of 14 values declares ${claimed} bytes, more than they can take \\(${hybridBound(14, 1)}\\)\\)$`);
    expect(() => readRowGroup(path, 0, ['trajectory_id'], null)).toThrow(why);
    expect(() => checkPageHeaders(path, 0, ['trajectory_id'])).not.toThrow();
    expect(() => checkPageHeaders(path, 0, ['trajectory_id'], { levels: true })).toThrow(why);
  });
});

describe('checkPageHeaders with levels: every page of every real writer passes', () => {
  const writers = join(ROOT, 'fixtures', 'writers', 'files');
  const files = [...readdirSync(writers).map((f) => join(writers, f)), ...['forks.parquet', 'labels.parquet', 'sampling.parquet', 'edges.parquet'].map((f) => join(ROOT, 'fixtures', f))];
  it.each(files)('%s', (path) => {
    const meta = fileMeta(path);
    const columns = meta.fields.map((f) => f.name);
    for (let g = 0; g < meta.rowGroupRows.length; g++) checkPageHeaders(path, g, columns, { levels: true });
  });
});

describe('dictionaries of more than 65,536 entries (typed arrays) read like parquet-wasm reads them', () => {
  it('strings and int64, 70,000 distinct values each', async () => {
    const count = 70_000;
    const s = Array.from({ length: count }, (_, i) => (i % 7 === 0 ? `é${i}` : `v${i}`));
    const n = BigInt64Array.from({ length: count }, (_, i) => BigInt(i * 3 - 1000));
    const ipc = tableToIPC(tableFromArrays({ s, n }), 'stream');
    const props = new pw.WriterPropertiesBuilder().setWriterVersion(0).setCompression(pw.Compression.ZSTD).setDictionaryEnabled(true).setMaxRowGroupSize(count).build();
    const path = join(dir, 'big-dictionaries.parquet');
    writeFileSync(path, pw.writeParquet(pw.Table.fromIPCStream(ipc), props));
    // Both columns really are dictionary-encoded with every value in the dictionary.
    withPages(readFileSync(path), (f: { groups: Chunk[][] }) => {
      for (const c of f.groups[0]!) {
        const dict = c.pages.find((p) => Number(get(p.header, 1)) === 2);
        expect(Number(get(get(dict?.header, 7) as Tree, 1))).toBe(count);
      }
    });
    // Compared as JSON text: a deep comparison of 70,000-element arrays takes seconds.
    const ours = readRowGroup(path, 0, ['s', 'n'], null);
    const ref = await wasmValues(path, ['s', 'n']);
    expect(JSON.stringify(ours.get('s'))).toBe(JSON.stringify(s));
    expect(JSON.stringify(ours.get('n'))).toBe(JSON.stringify(Array.from(n, Number)));
    expect(JSON.stringify(ours.get('s'))).toBe(JSON.stringify(ref.get('s')));
    expect(JSON.stringify(ours.get('n'))).toBe(JSON.stringify(ref.get('n')));
    // Some rows only, through the same dictionaries.
    const rows = [0, 1, 65_535, 65_536, 69_999];
    expect(readRowGroup(path, 0, ['s', 'n'], rows).get('s')).toEqual(rows.map((i) => s[i]));
    expect(readRowGroup(path, 0, ['s', 'n'], rows).get('n')).toEqual(rows.map((i) => Number(n[i])));
  }, 60_000);
});
