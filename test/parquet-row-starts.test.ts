// Pages holding no wanted row are skipped before they are read (row-starts.ts): the row starts of a
// list's leaves come from its cheapest leaf (the guide), so a snappy or gzip v1 page, whose levels sit
// inside the compressed body, need not be decompressed to learn that none of its rows is wanted.
// Checked here: the values read are the values of a full read, for every codec and page version and
// any choice of rows; a skipped page is really never decompressed (its body corrupted, the read still
// succeeds; asking for one of its rows fails); the rest of a page past its last wanted row is not read
// either; and a leaf whose levels disagree with the guide's is refused on the pages it decodes, never
// read with its rows misplaced.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Field, List, Struct, Table, Utf8, tableToIPC, vectorFromArray } from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { bitWidth, decodeHybrid, leafRows, rowStartsOf } from '../src/parquet/column.js';
import { withPages } from './support/parquet-fuzz.mjs';
import { GUIDE_RATIO, footer, readRowGroup } from '../src/parquet/reader.js';
import { RowStarts, repetitionOwner } from '../src/parquet/row-starts.js';
import { ParquetFormatError, ThriftReader, count, num, struct } from '../src/parquet/thrift.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-row-starts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Deterministic text of `n` characters that compresses a little (no codec turns it into nothing). */
function text(seed: number, n: number): string {
  let s = '';
  let x = seed * 2654435761 + 1;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    s += `${x.toString(36)} `;
  }
  return s.slice(0, n);
}

type Call = { name: string; arguments: string };
type Message = { role: string; content: string | null; tool_calls: Call[] | null };

const ROWS = 48;
/** Rows of 0-9 messages, with a null and empty trajectory among them, long contents, some tool calls. */
const trajectories: (Message[] | null)[] = Array.from({ length: ROWS }, (_, r) => {
  if (r === 7) return null;
  if (r === 8 || r === 30) return [];
  return Array.from({ length: (r * 7) % 10 }, (_, i) => ({
    role: i === 0 ? 'system' : i % 2 ? 'assistant' : 'tool',
    content: (r + i) % 11 === 3 ? null : text(r * 100 + i, 300 + ((r * 31 + i * 17) % 1700)),
    tool_calls: i % 2 ? Array.from({ length: (r + i) % 3 }, (_, k) => ({ name: `t${k}`, arguments: `{"path":"${text(r + i + k, 40)}"}` })) : null,
  }));
});
const ids = Array.from({ length: ROWS }, (_, r) => `row-${r}`);

const CALL = new Struct([new Field('name', new Utf8(), true), new Field('arguments', new Utf8(), true)]);
const MESSAGE = new Struct([
  new Field('role', new Utf8(), true),
  new Field('content', new Utf8(), true),
  new Field('tool_calls', new List(new Field('element', CALL, true)), true),
]);
const TRAJECTORY = new List(new Field('element', MESSAGE, true));

type Codec = 'SNAPPY' | 'GZIP' | 'ZSTD' | 'UNCOMPRESSED' | 'LZ4_RAW';
/** parquet-wasm's page limit applies between write batches: 16 values per batch gives pages of a few KB. */
function write(codec: Codec, version: 0 | 1): string {
  const table = new Table({ id: vectorFromArray(ids, new Utf8()), trajectory: vectorFromArray(trajectories, TRAJECTORY) });
  const props = new pw.WriterPropertiesBuilder()
    .setWriterVersion(version)
    .setCompression(pw.Compression[codec])
    .setDictionaryEnabled(false)
    .setDataPageSizeLimit(4096)
    .setWriteBatchSize(4)
    .setMaxRowGroupSize(ROWS)
    .build();
  const path = join(dir, `${codec}-v${version + 1}.parquet`);
  writeFileSync(path, pw.writeParquet(pw.Table.fromIPCStream(tableToIPC(table, 'stream')), props));
  return path;
}

/** Every data page of a leaf's chunk in row group 0: where its body lies and which entries it holds. */
function pagesOf(path: string, leafPath: string) {
  const meta = footer(path);
  const li = meta.leaves.findIndex((l) => l?.path.join('.') === leafPath);
  const chunk = meta.rowGroups[0]!.chunks[li]!;
  const bytes = readFileSync(path);
  const pages: { body: number; compressed: number; first: number; count: number }[] = [];
  let pos = chunk.start;
  let seen = 0;
  while (pos < chunk.start + chunk.length) {
    const r = new ThriftReader(bytes, pos);
    const h = r.struct();
    const compressed = count(h, 3, 'compressed', 2 ** 31);
    const type = num(h, 1, 'type');
    if (type === 0 || type === 3) {
      const n = count(struct(h, type === 0 ? 5 : 8)!, 1, 'values', 2 ** 31);
      pages.push({ body: r.pos, compressed, first: seen, count: n });
      seen += n;
    }
    pos = r.pos + compressed;
  }
  return { meta, leaf: meta.leaves[li]!, chunk, pages };
}

const CONTENT = 'trajectory.list.element.content';
const ROLE = 'trajectory.list.element.role';

/** The guide leaf of the messages list (`role`) and its chunk in row group 0. */
function guideOf(meta: ReturnType<typeof footer>) {
  const roleLeaf = meta.leaves.find((l) => l?.path.join('.') === ROLE)!;
  return { roleLeaf, roleChunk: meta.rowGroups[0]!.chunks[meta.leaves.indexOf(roleLeaf)]! };
}

describe('reading some rows with the guide leaf row starts gives the full read values', () => {
  const SETS: [string, number[]][] = [
    ['the first row', [0]],
    ['the last row', [ROWS - 1]],
    ['one row in the middle', [23]],
    ['the null and the empty trajectories', [7, 8, 30]],
    ['sparse rows', [2, 11, 12, 29, 40]],
    ['every third row', Array.from({ length: ROWS / 3 }, (_, i) => 3 * i + 1)],
    ['every row', Array.from({ length: ROWS }, (_, i) => i)],
  ];
  const FILES: [Codec, 0 | 1][] = [
    ['SNAPPY', 0],
    ['GZIP', 0],
    ['ZSTD', 0],
    ['UNCOMPRESSED', 0],
    ['LZ4_RAW', 0],
    ['SNAPPY', 1],
    ['ZSTD', 1],
  ];
  it.each(FILES)('%s, data pages v%s', (codec, version) => {
    const path = write(codec, version);
    const { pages, chunk } = pagesOf(path, CONTENT);
    // The file is what the test needs: many content pages, the content chunk far larger than the role chunk.
    expect(pages.length).toBeGreaterThan(20);
    const { chunk: role } = pagesOf(path, ROLE);
    expect(chunk.length).toBeGreaterThanOrEqual(GUIDE_RATIO * role.length);
    const all = readRowGroup(path, 0, ['id', 'trajectory'], null);
    expect(all.get('id')).toEqual(ids);
    expect(all.get('trajectory')!.map((t) => (t as Message[] | null)?.map((m) => m.content) ?? null)).toEqual(
      trajectories.map((t) => t?.map((m) => m.content) ?? null),
    );
    for (const [, rows] of SETS) {
      const some = readRowGroup(path, 0, ['trajectory', 'id'], rows);
      expect(some.get('trajectory')).toEqual(rows.map((r) => all.get('trajectory')![r]));
      expect(some.get('id')).toEqual(rows.map((r) => ids[r]));
    }
  });
});

describe('a page holding no wanted row is never decompressed', () => {
  it.each(['SNAPPY', 'GZIP', 'ZSTD'] as const)('%s: its body corrupted, the other rows still read; one of its rows asked for, the read fails', (codec) => {
    const path = write(codec, 0);
    const { pages, meta } = pagesOf(path, CONTENT);
    const { roleLeaf, roleChunk } = guideOf(meta);
    const starts = withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, ROWS - 1));
    // A page in the middle whose rows are all its own (it neither starts nor ends inside a row that
    // another page shares): the rows before and after it can be read without it.
    const page = pages.find((p, i) => i > pages.length / 3 && starts.rowOf(p.first) !== starts.rowOf(pages[i - 1]!.first + pages[i - 1]!.count - 1))!;
    expect(page).toBeDefined();
    const firstRow = starts.rowOf(page.first);
    const lastRow = starts.rowOf(page.first + page.count - 1);
    const bytes = Buffer.from(readFileSync(path));
    for (let k = 0; k < page.compressed; k++) bytes[page.body + k] = (k * 37 + 11) & 0xff;
    const bad = join(dir, `bad-${codec}.parquet`);
    writeFileSync(bad, bytes);
    const others = Array.from({ length: ROWS }, (_, r) => r).filter((r) => r < firstRow || r > lastRow + 1);
    const good = readRowGroup(path, 0, ['trajectory'], others).get('trajectory');
    expect(readRowGroup(bad, 0, ['trajectory'], others).get('trajectory')).toEqual(good);
    expect(() => readRowGroup(bad, 0, ['trajectory'], [lastRow])).toThrow(/corrupt parquet data|SNAPPY|GZIP|ZSTD|zstd|incorrect|invalid/i);
  });
});

describe('the rest of a page after its last wanted row is not read', () => {
  it('its values corrupted past that row, the rows asked for still read; the next row asked for, the read fails', () => {
    const path = write('UNCOMPRESSED', 0);
    const { pages, leaf, meta } = pagesOf(path, CONTENT);
    const { roleLeaf, roleChunk } = guideOf(meta);
    const starts = withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, ROWS - 1));
    const bytes = Buffer.from(readFileSync(path));
    // A page in which a row a starts and the row b = a + 1 starts too, with a value of its own: where
    // b's values begin in the page body (its levels, then plain values of the non-null entries).
    let cut: { a: number; at: number; page: (typeof pages)[number] } | null = null;
    for (const page of pages.slice(1)) {
      const body = bytes.subarray(page.body, page.body + page.compressed);
      let pos = 0;
      const levels: Uint8Array[] = [];
      for (const max of [leaf.maxRep, leaf.maxDef]) {
        const len = body.readUInt32LE(pos);
        const out = new Uint8Array(page.count);
        decodeHybrid(body.subarray(pos + 4, pos + 4 + len), bitWidth(max), page.count, out, true);
        levels.push(out);
        pos += 4 + len;
      }
      const [reps, defs] = levels as [Uint8Array, Uint8Array];
      let startsSeen = 0;
      for (let i = 0; i < page.count && cut === null; i++) {
        if (reps[i] === 0 && ++startsSeen === 2 && defs[i] === leaf.maxDef) cut = { a: starts.rowOf(page.first + i) - 1, at: page.body + pos, page };
        if (defs[i] === leaf.maxDef) pos += 4 + body.readUInt32LE(pos);
      }
      if (cut) break;
    }
    expect(cut).not.toBeNull();
    const { a, at, page } = cut!;
    // Every string length from b on reads 0xFFFFFFFF: past the end of the page.
    bytes.fill(0xff, at, page.body + page.compressed);
    const bad = join(dir, 'bad-tail.parquet');
    writeFileSync(bad, bytes);
    expect(() => readRowGroup(bad, 0, ['trajectory'], null)).toThrow(/page ends inside|past the end of the page/);
    // With a wanted row after the page (the last one): the read goes on past the page, not into its tail.
    const rows = [a, ROWS - 1];
    expect(starts.rowOf(page.first + page.count - 1)).toBeLessThan(ROWS - 1);
    expect(readRowGroup(bad, 0, ['trajectory'], rows).get('trajectory')).toEqual(readRowGroup(path, 0, ['trajectory'], rows).get('trajectory'));
    expect(() => readRowGroup(bad, 0, ['trajectory'], [a + 1])).toThrow(/past the end of the page|page ends inside/);
  });
});

const snappy = createRequire(import.meta.url)('snappyjs') as { compress(b: Uint8Array): Uint8Array; uncompress(b: Uint8Array): Uint8Array };

/** One RLE run per level (a valid hybrid encoding of any levels), behind its 4-byte length. */
function levelRuns(levels: number[], width: number): Buffer {
  const bytes = (width + 7) >> 3;
  const out = Buffer.alloc(4 + levels.length * (1 + bytes));
  out.writeUInt32LE(levels.length * (1 + bytes));
  levels.forEach((v, i) => {
    out[4 + i * (1 + bytes)] = 2; // an RLE run of one value
    out.writeUIntLE(v, 5 + i * (1 + bytes), bytes);
  });
  return out;
}

/**
 * The SNAPPY v1 file with the content leaf's pages cut anew every `every` entries, so that most pages
 * start inside a row (as older parquet-cpp and other writers cut v1 pages; parquet-wasm, pyarrow 25
 * and polars cut at row boundaries).
 */
function withRowsSplit(path: string, every: number): { path: string; pagesInsideRows: number } {
  const out = join(dir, `split-every-${every}.parquet`);
  let pagesInsideRows = 0;
  type S = { fields: { id: number; type: number; v: unknown }[] };
  const bytes = withPages(readFileSync(path), (f: { groups: { codec: number; pages: { header: S; body: Buffer }[]; leaf: { path: string; maxRep: number; maxDef: number } }[][] }, t: { get(s: S, id: number): unknown }) => {
    const chunk = f.groups[0]!.find((c) => c.leaf.path === CONTENT)!;
    expect(chunk.codec).toBe(1);
    const { maxRep, maxDef } = chunk.leaf;
    const reps: number[] = [];
    const defs: number[] = [];
    const values: Buffer[] = [];
    for (const p of chunk.pages) {
      if (Number(t.get(p.header, 1)) !== 0) continue;
      const n = Number(t.get(t.get(p.header, 5) as S, 1));
      const body = Buffer.from(snappy.uncompress(p.body));
      let pos = 0;
      for (const [max, into] of [[maxRep, reps], [maxDef, defs]] as const) {
        const len = body.readUInt32LE(pos);
        const out = new Uint8Array(n);
        decodeHybrid(body.subarray(pos + 4, pos + 4 + len), bitWidth(max), n, out, true);
        into.push(...out);
        pos += 4 + len;
      }
      for (let i = reps.length - n; i < reps.length; i++) {
        if (defs[i] !== maxDef) values.push(Buffer.alloc(0));
        else {
          const len = body.readUInt32LE(pos);
          values.push(body.subarray(pos, pos + 4 + len));
          pos += 4 + len;
        }
      }
    }
    const template = chunk.pages.find((p) => Number(t.get(p.header, 1)) === 0)!.header;
    const pages = [];
    for (let e = 0; e < reps.length; e += every) {
      const to = Math.min(reps.length, e + every);
      if (reps[e] !== 0) pagesInsideRows++;
      const raw = Buffer.concat([levelRuns(reps.slice(e, to), bitWidth(maxRep)), levelRuns(defs.slice(e, to), bitWidth(maxDef)), ...values.slice(e, to)]);
      const body = Buffer.from(snappy.compress(raw));
      const header = structuredClone(template);
      const dph = header.fields.find((x) => x.id === 5)!.v as S;
      dph.fields = dph.fields.filter((x) => x.id <= 4); // no statistics: they were the old page's
      dph.fields.find((x) => x.id === 1)!.v = to - e;
      header.fields = header.fields.filter((x) => x.id !== 4); // nor its CRC
      header.fields.find((x) => x.id === 2)!.v = raw.length;
      header.fields.find((x) => x.id === 3)!.v = body.length;
      pages.push({ header, body });
    }
    chunk.pages = [...chunk.pages.filter((p) => Number(t.get(p.header, 1)) !== 0), ...pages];
  });
  writeFileSync(out, bytes);
  return { path: out, pagesInsideRows };
}

describe('pages that start inside a row', () => {
  it.each([3, 5, 11])('content pages cut every %i entries read as the original file does, whatever rows are asked for', (every) => {
    const original = write('SNAPPY', 0);
    const { path, pagesInsideRows } = withRowsSplit(original, every);
    expect(pagesInsideRows).toBeGreaterThan(5);
    const all = readRowGroup(original, 0, ['trajectory'], null).get('trajectory')!;
    expect(readRowGroup(path, 0, ['trajectory'], null).get('trajectory')).toEqual(all);
    for (const rows of [[24], [4, 5], [14, 24, 34], [46, 47], Array.from({ length: 16 }, (_, i) => 3 * i)]) {
      expect(readRowGroup(path, 0, ['trajectory', 'id'], rows).get('trajectory')).toEqual(rows.map((r) => all[r]));
    }
  });
});

function withFd<T>(path: string, f: (fd: number) => T): T {
  const fd = openSync(path, 'r');
  try {
    return f(fd);
  } finally {
    closeSync(fd);
  }
}

describe('a leaf whose levels disagree with the guide', () => {
  it('is refused on the first page it decodes where they differ, not read with its rows moved', () => {
    const path = write('SNAPPY', 0);
    const { chunk, leaf, meta } = pagesOf(path, CONTENT);
    const { roleLeaf, roleChunk } = guideOf(meta);
    expect(repetitionOwner(leaf)).toBe(repetitionOwner(roleLeaf));
    const truth = withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, ROWS - 1));
    const read = (starts: RowStarts, rows: number[]) =>
      withFd(path, (fd) => [...leafRows(fd, chunk.codec, chunk, leaf, ROWS, rows, starts)].map((t) => t.vals));
    // The true starts read what the leaf's own levels read.
    expect(read(truth, [23, 24])).toEqual(withFd(path, (fd) => [...leafRows(fd, chunk.codec, chunk, leaf, ROWS, [23, 24])].map((t) => t.vals)));
    // Row 24 (8 messages) said to start one entry later than it does (row 23 one entry longer).
    const s = Float64Array.from({ length: ROWS + 1 }, (_, r) => (r === ROWS ? truth.located! : entryOf(truth, r)));
    expect(s[25]! - s[24]!).toBe(8);
    s[24] = s[24]! + 1;
    const lying = RowStarts.of(s, ROWS);
    expect(() => read(lying, [24])).toThrow(ParquetFormatError);
    expect(() => read(lying, [24])).toThrow(/starts a row where the other leaves of its list say it continues one/);
  });
});

/** The first entry of row r (RowStarts keeps its array private: found by rowOf). */
function entryOf(starts: RowStarts, r: number): number {
  let e = 0;
  while (starts.rowOf(e) < r) e++;
  return e;
}

describe('rowStartsOf locates rows up to the one asked for, and no further', () => {
  it.each([0, 1, 23, ROWS - 2, ROWS - 1])('through row %i', (through) => {
    const path = write('SNAPPY', 0);
    const { meta } = pagesOf(path, CONTENT);
    const { roleLeaf, roleChunk } = guideOf(meta);
    const all = withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, ROWS - 1));
    const some = withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, through));
    expect(some.known).toBe(through + 1);
    // Every located entry is in the row the whole chunk's starts say; past them, row `known`.
    for (let e = 0; e < all.located!; e++) expect(some.rowOf(e)).toBe(Math.min(all.rowOf(e), through + 1));
    expect(some.located).toBe(through === ROWS - 1 ? all.located : entryOf(all, through + 1));
  });
  it('a row past the row group is refused before anything is read', () => {
    const path = write('SNAPPY', 0);
    const { meta } = pagesOf(path, CONTENT);
    const { roleLeaf, roleChunk } = guideOf(meta);
    expect(() => withFd(path, (fd) => rowStartsOf(fd, roleChunk, roleLeaf, ROWS, ROWS))).toThrow(RangeError);
  });
});

describe('RowStarts', () => {
  // Rows of 1, 3, 1 and 2 entries.
  const starts = RowStarts.of(Float64Array.from([0, 1, 4, 5, 7]), 4);
  it.each([
    [0, 0],
    [1, 1],
    [3, 1],
    [4, 2],
    [5, 3],
    [6, 3],
  ])('entry %i is in row %i', (e, r) => expect(starts.rowOf(e)).toBe(r));
  it('outside any list, entry e is row e', () => {
    const id = RowStarts.identity(10);
    expect([0, 5, 9].map((e) => id.rowOf(e))).toEqual([0, 5, 9]);
    expect(id.located).toBeNull();
  });
  it.each([
    ['a page of whole rows', [0, 1, 1, 0], 1, 4, null],
    ['a page starting inside a row', [1, 1, 0], 2, 3, null],
    ['the last entries', [0, 1], 5, 2, null],
    ['a start the guide does not have', [0, 0, 1, 0], 1, 4, /entry 2 starts a row/],
    ['a continuation where the guide starts a row', [1, 1, 1], 3, 3, /entry 4 continues a row/],
    ['past the located entries: only the first is checked (a row starts there)', [0, 1, 0, 0], 7, 4, null],
    ['the first entry past them continues a row', [1, 1, 1], 6, 3, /entry 7 continues a row/],
  ] as const)('check: %s', (_, reps, first, n, error) => {
    const run = () => starts.check(Uint8Array.from(reps), first, n);
    if (error === null) expect(run).not.toThrow();
    else expect(run).toThrow(error);
  });
});
