// Our own parquet reader (`--engine js`): footer, pages and record assembly in TypeScript, zstd by
// zstd-napi or fzstd (inflate.ts). It reads only the wanted rows' values out of a streamed page,
// which bounds memory by those rows instead of by the row group, and decompresses natively.
// Features it does not handle raise `Unsupported`; the worker then reads that row group with
// parquet-wasm, which gives the same values.
import { closeSync, openSync } from 'node:fs';
import { ExitCode, UserError } from '../errors.js';
import { assembleRow, listLevels } from './assemble.js';
import { ValueTooLong } from './bounds.js';
import { checkPages, largestWholePage, sampleDataPages, leafRows, rowStartsOf, type PageChecks, type RowTriples } from './column.js';
import { decodesWhole } from './inflate.js';
import { Unsupported, readFooter, type ChunkMeta, type FileMeta, type LeafColumn, type LogicalNode } from './meta.js';
import { RowStarts, repetitionOwner } from './row-starts.js';
import type { MetaResult } from './file-summary.js';
import { ParquetFormatError } from './thrift.js';

export { Unsupported } from './meta.js';
export { Utf8Bytes } from './utf8-bytes.js';

function corrupt(path: string, where: string, e: unknown): UserError {
  // A value too long for a string is no corrupt byte: the message says what it is.
  if (e instanceof ValueTooLong) return new UserError(`${path}: ${where}${e.message}`, ExitCode.corrupt);
  return new UserError(`${path}: ${where}corrupt parquet data (${(e as Error).message})`, ExitCode.corrupt);
}

const footers = new Map<string, FileMeta>();

export function footer(path: string): FileMeta {
  let m = footers.get(path);
  if (!m) {
    try {
      m = readFooter(path);
    } catch (e) {
      if (e instanceof ParquetFormatError) throw corrupt(path, '', e);
      throw e;
    }
    footers.set(path, m);
  }
  return m;
}

/** How readRows hands over string values. */
export interface ReadOptions {
  /**
   * The leaves whose strings of at least `bytesFrom` bytes come as Utf8Bytes (utf8-bytes.ts), for a
   * caller that passes them on undecoded; every other string is a string.
   */
  bytesLeaf?: (leaf: LeafColumn) => boolean;
  bytesFrom?: number;
}

/** ReadOptions.bytesLeaf for field `name` of the structs in a top-level list (a message's content). */
export function listStructField(name: string): (leaf: LeafColumn) => boolean {
  return (leaf) => {
    const [list, struct, field] = leaf.nodes;
    return leaf.nodes.length === 3 && list!.kind === 'list' && struct!.kind === 'struct' && field!.kind === 'leaf' && field!.name === name;
  };
}

/** A column as readRows reads it: its tree, its leaves with their chunks, and what its errors name. */
interface ReadColumn {
  name: string;
  node: LogicalNode;
  leaves: LeafColumn[];
  nodes: (readonly LogicalNode[])[];
  listAt: (readonly number[])[];
  chunks: ChunkMeta[];
  where: { column: string; leaves: string[] };
}

/** Which column, or leaf of it, readRows was reading: what an error names. */
interface RowPlace {
  where: string;
}

/**
 * The next row of `cols`: one row's triples from each of its leaves' streams, assembled per column.
 * Apart from readRows so that the per-row work is a plain function: a shape a run meets late (the
 * decode pass's nested columns after the index pass's flat ones) recompiles it, not the generator.
 */
function nextRow(cols: readonly ReadColumn[], streams: readonly (readonly Generator<RowTriples, void, void>[])[], numRows: number, at: RowPlace): unknown[] {
  const values = new Array<unknown>(cols.length);
  for (let c = 0; c < cols.length; c++) {
    const col = cols[c]!;
    const leafStreams = streams[c]!;
    const triples: RowTriples[] = [];
    for (let j = 0; j < leafStreams.length; j++) {
      at.where = col.where.leaves[j]!;
      const r = leafStreams[j]!.next();
      if (r.done) throw new ParquetFormatError(`fewer rows than the row group's ${numRows}`);
      triples.push(r.value);
    }
    at.where = col.where.column;
    values[c] = assembleRow(col.node, col.nodes, triples, col.listAt);
  }
  return values;
}

/**
 * The values of `columns` for each of `rows` (ascending, within the row group; null = every row), one
 * row at a time: every leaf of every column streams in step, so memory holds one row's values plus
 * one compressed page per leaf. Errors (corrupt data, `Unsupported`) can surface at any row.
 */
export function* readRows(
  path: string,
  rowGroup: number,
  columns: readonly string[],
  rows: readonly number[] | null,
  options: ReadOptions = {},
): Generator<unknown[], void, void> {
  const meta = footer(path);
  const rg = meta.rowGroups[rowGroup];
  if (!rg) throw new UserError(`${path}: no row group ${rowGroup}`, ExitCode.corrupt);
  const cols = columns.map((name): ReadColumn => {
    const col = meta.columns.get(name);
    if (!col) throw new Unsupported(`no column ${name}`);
    if (!col.node) throw new Unsupported(col.unsupported ?? name);
    const leaves = col.leaves.map((i) => meta.leaves[i]!);
    const nodes = leaves.map((l) => l.nodes);
    // What an error names: built once, not per row.
    const where = { column: `column ${name}: `, leaves: leaves.map((l) => `column ${l.path.join('.')}: `) };
    return { name, node: col.node, leaves, nodes, listAt: nodes.map((n) => listLevels(n)), chunks: col.leaves.map((i) => rg.chunks[i]!), where };
  });
  const fd = openSync(path, 'r');
  const at: RowPlace = { where: '' };
  try {
    const last = rows?.[rows.length - 1];
    // Rows are located up to the last wanted one (and no further: a footer's row count is a claim).
    const starts =
      last === undefined || !(last >= 0 && last < rg.numRows) ? null : guidedStarts(fd, cols.flatMap((c) => c.leaves.map((leaf, j) => ({ leaf, chunk: c.chunks[j]! }))), rg.numRows, last);
    let k0 = 0;
    const { bytesLeaf, bytesFrom = Infinity } = options;
    const streams = cols.map((c) =>
      c.leaves.map((l, j) => leafRows(fd, c.chunks[j]!.codec, c.chunks[j]!, l, rg.numRows, rows, starts?.[k0++] ?? null, bytesLeaf?.(l) ? bytesFrom : Infinity)),
    );
    const n = rows === null ? rg.numRows : rows.length;
    for (let k = 0; k < n; k++) yield nextRow(cols, streams, rg.numRows, at);
    // Run every stream to its end, where it checks its row count.
    for (const ss of streams) for (const s of ss) if (!s.next().done) throw new ParquetFormatError('more rows than expected');
  } catch (e) {
    if (e instanceof ParquetFormatError) throw corrupt(path, `row group ${rowGroup}, ${at.where}`, e);
    throw e;
  } finally {
    closeSync(fd);
  }
}

/**
 * A leaf whose chunk is at least this many times its guide's is read with the guide's row starts
 * (row-starts.ts): reading the guide's levels then costs at most a small share of reading the leaf,
 * whose pages holding no wanted row are then skipped undecompressed.
 */
export const GUIDE_RATIO = 16;

/**
 * The row starts each leaf is read with (null: none): a leaf outside any list has one entry per row;
 * the leaves under one list take the starts of its leaf of smallest chunk, the guide, read once up to
 * row `last`, when their chunk is GUIDE_RATIO times the guide's or more. A guide whose levels cannot be read
 * guides nothing: its own reading says what is wrong, if it reaches the fault.
 */
function guidedStarts(fd: number, leaves: readonly { leaf: LeafColumn; chunk: ChunkMeta }[], numRows: number, last: number): (RowStarts | null)[] {
  const guides = new Map<LogicalNode, { leaf: LeafColumn; chunk: ChunkMeta; starts?: RowStarts | null }>();
  for (const l of leaves) {
    const owner = repetitionOwner(l.leaf);
    if (owner === null) continue;
    const g = guides.get(owner);
    if (!g || l.chunk.length < g.chunk.length) guides.set(owner, { ...l });
  }
  return leaves.map(({ leaf, chunk }) => {
    const owner = repetitionOwner(leaf);
    if (owner === null) return RowStarts.identity(numRows);
    const g = guides.get(owner)!;
    if (g.leaf === leaf || chunk.length < GUIDE_RATIO * g.chunk.length) return null;
    if (g.starts === undefined) {
      try {
        g.starts = rowStartsOf(fd, g.chunk, g.leaf, numRows, last);
      } catch (e) {
        if (!(e instanceof ParquetFormatError || e instanceof Unsupported)) throw e;
        g.starts = null;
      }
    }
    // Leaves under one list hold the guide's entries: a chunk of fewer is read on its own levels
    // (and refused there as the reader refuses it).
    return g.starts !== null && g.starts.located! <= chunk.numValues ? g.starts : null;
  });
}

/** All of `readRows` at once, by column (tests and small reads). */
export function readRowGroup(path: string, rowGroup: number, columns: readonly string[], rows: readonly number[] | null): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>(columns.map((c) => [c, []]));
  for (const values of readRows(path, rowGroup, columns, rows)) columns.forEach((c, k) => out.get(c)!.push(values[k]));
  return out;
}

/** Arrow-style type names for our own reader's logical nodes (only used in messages). */
export function arrowName(n: LogicalNode | null): string {
  if (!n) return 'Unsupported';
  switch (n.kind) {
    case 'leaf':
      return { string: 'Utf8', int32: 'Int32', int64: 'Int64', float: 'Float32', double: 'Float64', boolean: 'Bool' }[n.type];
    case 'list':
      return `List<${arrowName(n.item)}>`;
    case 'struct':
      return `Struct<{${n.fields.map((f) => `${f.name}:${arrowName(f)}`).join(', ')}}>`;
  }
}

/** The run's view of a file (protocol.ts MetaResult) from our own footer reader. */
export function fileMeta(path: string): MetaResult {
  const m = footer(path);
  const fields = [...m.columns].map(([name, c]) => {
    const n = c.node;
    return {
      name,
      type: arrowName(n),
      isString: n?.kind === 'leaf' && n.type === 'string',
      isLabel: n?.kind === 'leaf' && n.type !== 'string',
      isTrajectory: n?.kind === 'list' && n.item.kind === 'struct' && n.item.fields.some((f) => f.name === 'role'),
    };
  });
  return { numRows: m.numRows, rowGroupRows: m.rowGroups.map((g) => g.numRows), fields };
}


/**
 * The page headers of `columns` in `rowGroup` checked as this reader checks them before reading a
 * body (column.ts checkPages: declared sizes against what the values can take, dictionary sizes,
 * counts), from the headers alone: run before parquet-wasm or DuckDB, which allocate what a page
 * declares, is handed the row group. Throws the reader's one-line corrupt-file error; a footer or
 * column this reader cannot read (corrupt by its stricter rules, or Unsupported) is left to them.
 */
export function checkPageHeaders(path: string, rowGroup: number, columns: readonly string[], checks: PageChecks = { levels: false }): void {
  let meta: FileMeta;
  try {
    meta = footer(path);
  } catch (e) {
    if (e instanceof UserError || e instanceof Unsupported) return;
    throw e;
  }
  const rg = meta.rowGroups[rowGroup];
  if (!rg) return;
  const fd = openSync(path, 'r');
  let where = '';
  try {
    for (const name of columns) {
      const col = meta.columns.get(name);
      if (!col?.node) continue;
      for (const i of col.leaves) {
        const leaf = meta.leaves[i];
        if (!leaf) continue;
        where = `column ${leaf.path.join('.')}: `;
        try {
          checkPages(fd, rg.chunks[i]!, leaf, checks);
        } catch (e) {
          if (!(e instanceof Unsupported)) throw e; // a leaf this reader does not decode: the other reader's alone
        }
      }
    }
  } catch (e) {
    if (e instanceof ParquetFormatError) throw corrupt(path, `row group ${rowGroup}, ${where}`, e);
    throw e;
  } finally {
    closeSync(fd);
  }
}

/**
 * `read(fd, chunks, numRows)` over the chunks of `columns` in `rowGroup` (every leaf of each, in column
 * order), from page headers; null when the file cannot be read that far (a corrupt or unsupported
 * file: the actual read will say what is wrong), a column is missing, or `read` says so.
 */
function fromChunks<T>(path: string, rowGroup: number, columns: readonly string[], read: (fd: number, chunks: ChunkMeta[], numRows: number) => T | null): T | null {
  let fd: number | null = null;
  try {
    const meta = footer(path);
    const rg = meta.rowGroups[rowGroup];
    if (!rg) return null;
    const chunks: ChunkMeta[] = [];
    for (const name of columns) {
      const col = meta.columns.get(name);
      if (!col) return null;
      for (const i of col.leaves) chunks.push(rg.chunks[i]!);
    }
    fd = openSync(path, 'r');
    return read(fd, chunks, rg.numRows);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * The largest page of `columns` in `rowGroup` that is decompressed whole (snappy, LZ4, brotli, gzip
 * up to 64 MiB), 0 when there is none; from the page headers alone. Null when the file cannot be
 * read that far (a corrupt or unsupported file: the actual read will say what is wrong).
 */
export function largestWholePageOf(path: string, rowGroup: number, columns: readonly string[]): number | null {
  return fromChunks(path, rowGroup, columns, (fd, chunks) => chunks.reduce((largest, c) => Math.max(largest, largestWholePage(fd, c)), 0));
}

/** How the pages of a row group's largest chunk hold its rows (split-decode.ts prices a piece of it by this). */
export interface PageShape {
  /** About how many rows one page holds: the group's rows times a typical data page's share of the chunk. */
  rowsPerPage: number;
  /** Whether such a page is decompressed whole (snappy, LZ4), not streamed up to the last row wanted. */
  wholePages: boolean;
}

/** Data pages whose headers pageShapeOf reads: enough for a median past an odd first page. */
const SAMPLED_PAGES = 9;

/**
 * The page shape of the largest chunk of `columns` in `rowGroup` (by its bytes in the file), from the
 * headers of its first data pages. Null when the file cannot be read that far (the actual read will
 * say what is wrong) or the chunk has no data page.
 */
export function pageShapeOf(path: string, rowGroup: number, columns: readonly string[]): PageShape | null {
  return fromChunks(path, rowGroup, columns, (fd, chunks, numRows) => {
    if (numRows <= 0 || chunks.length === 0) return null;
    const largest = chunks.reduce((a, b) => (b.length > a.length ? b : a));
    const sample = sampleDataPages(fd, largest, SAMPLED_PAGES);
    if (!sample) return null;
    const share = sample.pageBytes / (largest.start + largest.length - sample.start);
    return { rowsPerPage: Math.min(numRows, Math.max(1, Math.round(numRows * share))), wholePages: decodesWhole(largest.codec, sample.uncompressed) };
  });
}
