// The parquet footer (FileMetaData) read with our own Thrift decoder, and the schema turned into the
// logical tree the record assembler walks (assemble.ts). Anything this reader does not handle is an
// `Unsupported` error: the caller then uses parquet-wasm for that read instead.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { ParquetFormatError, ThriftReader, count, isStruct, list, num, optNum, str, struct, structs, type ThriftStruct, type ThriftValue } from './thrift.js';

/** A file feature this reader does not decode (an encoding, codec or type): fall back to parquet-wasm. */
export class Unsupported extends Error {}

export type LeafKind = 'string' | 'int32' | 'int64' | 'float' | 'double' | 'boolean';

export type LogicalNode =
  | { kind: 'leaf'; name: string; def: number; leaf: number; type: LeafKind }
  | { kind: 'struct'; name: string; def: number; fields: LogicalNode[] }
  /** `def`: the list is non-null; `elemDef`: it has at least one element; `rep`: its elements' repetition level. */
  | { kind: 'list'; name: string; def: number; elemDef: number; rep: number; item: LogicalNode };

export interface LeafColumn {
  /** Dotted parquet path, e.g. trajectory.list.element.content. */
  path: string[];
  physical: number;
  maxDef: number;
  maxRep: number;
  kind: LeafKind;
  /** Logical nodes from the top-level column down to this leaf (assemble.ts). */
  nodes: LogicalNode[];
}

export interface ChunkMeta {
  codec: number;
  start: number;
  length: number;
  numValues: number;
}

export interface FileMeta {
  size: number;
  numRows: number;
  createdBy: string | undefined;
  /** Top-level columns by name, each with the indexes of its leaves. */
  columns: Map<string, { node: LogicalNode | null; leaves: number[]; unsupported?: string }>;
  leaves: (LeafColumn | null)[];
  rowGroups: { numRows: number; chunks: ChunkMeta[] }[];
}

// parquet.thrift enums
const T = { BOOLEAN: 0, INT32: 1, INT64: 2, INT96: 3, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6, FIXED: 7 } as const;
const REQUIRED = 0;
const OPTIONAL = 1;
const REPEATED = 2;
const CONVERTED_UTF8 = 0;
const CONVERTED_LIST = 3;
const CONVERTED_INT_8 = 15;
const CONVERTED_INT_64 = 18;
/** parquet.thrift's ConvertedType runs 0 (UTF8) .. 21 (INTERVAL). */
const CONVERTED_MAX = 21;

/** parquet.thrift's Encoding values (1, the removed GROUP_VAR_INT, is none). */
export function isEncoding(v: number): boolean {
  return Number.isInteger(v) && v >= 0 && v <= 9 && v !== 1;
}
/** Byte width of a statistics value of each fixed-width physical type (BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE). */
const STAT_WIDTH: Record<number, number> = { 0: 1, 1: 4, 2: 8, 3: 12, 4: 4, 5: 8 };
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

interface RawElement {
  name: string;
  type: number | undefined;
  repetition: number;
  numChildren: number;
  converted: number | undefined;
  logical: ThriftStruct | undefined;
  children: RawElement[];
}

export function readFooter(path: string): FileMeta {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < 12) throw new ParquetFormatError('file too small');
    const tail = Buffer.alloc(8);
    readSync(fd, tail, 0, 8, size - 8);
    if (tail.toString('latin1', 4) !== 'PAR1') throw new ParquetFormatError('no PAR1 footer magic');
    const len = tail.readUInt32LE(0);
    if (len > size - 12) throw new ParquetFormatError('footer length past the start of the file');
    const buf = Buffer.allocUnsafe(len);
    if (readSync(fd, buf, 0, len, size - 8 - len) !== len) throw new ParquetFormatError('footer cut short');
    const r = new ThriftReader(buf);
    const fm = r.struct();
    if (r.pos !== len) throw new ParquetFormatError(`footer has ${len - r.pos} bytes after its metadata`);
    return parseFileMeta(fm, size);
  } finally {
    closeSync(fd);
  }
}

function rawTree(elements: ThriftStruct[]): RawElement {
  let i = 0;
  const take = (depth: number): RawElement => {
    if (depth > 64) throw new ParquetFormatError('schema nested too deeply');
    const e = elements[i++];
    if (!e) throw new ParquetFormatError('schema ends early');
    const rawName = e[4];
    if (!(rawName instanceof Uint8Array)) throw new ParquetFormatError('a schema element without a name');
    let name: string;
    try {
      name = fatalUtf8.decode(rawName);
    } catch {
      throw new ParquetFormatError('a schema element name that is not UTF-8');
    }
    const el: RawElement = {
      name,
      type: optNum(e, 1),
      repetition: optNum(e, 3) ?? REQUIRED,
      numChildren: e[5] === undefined ? 0 : count(e, 5, 'num_children', elements.length),
      converted: optNum(e, 6),
      logical: struct(e, 10),
      children: [],
    };
    if (el.converted !== undefined && (el.converted < 0 || el.converted > CONVERTED_MAX)) throw new ParquetFormatError(`schema element ${name}: converted type ${el.converted}`);
    if (el.repetition < REQUIRED || el.repetition > REPEATED) throw new ParquetFormatError(`schema element ${name}: repetition type ${el.repetition}`);
    if (el.numChildren === 0 && el.converted !== undefined) {
      // A leaf annotated as a group (MAP, MAP_KEY_VALUE, LIST), or a string whose converted type says otherwise.
      const logicalKind = el.logical ? Number(Object.keys(el.logical)[0]) : undefined;
      if (el.converted === 1 || el.converted === 2 || el.converted === CONVERTED_LIST || (logicalKind === 1 && el.converted !== CONVERTED_UTF8)) {
        throw new ParquetFormatError(`leaf ${name}: converted type ${el.converted}${logicalKind === undefined ? '' : ` with logical type ${logicalKind}`}`);
      }
    }
    if (el.numChildren > 0) {
      // A group is annotated LIST, MAP or MAP_KEY_VALUE or not at all, and a LIST converted type and
      // a LIST logical type do not contradict each other (readers that go by either would build other values).
      const logicalKind = el.logical ? Number(Object.keys(el.logical)[0]) : undefined;
      if (Number.isNaN(logicalKind)) throw new ParquetFormatError(`group ${name}: logical type without a kind`);
      if (el.converted !== undefined && el.converted !== 1 && el.converted !== 2 && el.converted !== CONVERTED_LIST) throw new ParquetFormatError(`group ${name}: converted type ${el.converted}`);
      if (el.converted !== undefined && logicalKind !== undefined && (el.converted === CONVERTED_LIST) !== (logicalKind === 3)) {
        throw new ParquetFormatError(`group ${name}: converted type ${el.converted} against logical type ${logicalKind}`);
      }
    }
    for (let c = 0; c < el.numChildren; c++) el.children.push(take(depth + 1));
    return el;
  };
  const root = take(0);
  if (i !== elements.length) throw new ParquetFormatError('schema has elements outside the root');
  return root;
}

function leafKind(e: RawElement): LeafKind {
  const logical = e.logical;
  const logicalKind = logical ? Number(Object.keys(logical)[0]) : undefined;
  switch (e.type) {
    case T.BYTE_ARRAY:
      // Only annotated strings: plain binary reads as bytes in Arrow, which this reader does not build.
      if (e.converted === CONVERTED_UTF8 || logicalKind === 1) return 'string';
      break;
    case T.BOOLEAN:
      if (e.converted === undefined && logical === undefined) return 'boolean';
      break;
    case T.FLOAT:
      if (e.converted === undefined && logical === undefined) return 'float';
      break;
    case T.DOUBLE:
      if (e.converted === undefined && logical === undefined) return 'double';
      break;
    case T.INT32:
    case T.INT64: {
      // Signed integers only (unsigned, dates, times and decimals read differently in Arrow).
      const signedLogical = logicalKind === 10 && struct(logical!, 10)?.[2] === true;
      const signedConverted = e.converted !== undefined && e.converted >= CONVERTED_INT_8 && e.converted <= CONVERTED_INT_64;
      if ((e.converted === undefined && logical === undefined) || signedLogical || (signedConverted && (logical === undefined || signedLogical)))
        return e.type === T.INT32 ? 'int32' : 'int64';
      break;
    }
  }
  throw new Unsupported(`column ${e.name}: physical type ${e.type} with converted type ${e.converted ?? 'none'}`);
}

function isListGroup(e: RawElement): boolean {
  const logicalKind = e.logical ? Number(Object.keys(e.logical)[0]) : undefined;
  return e.converted === CONVERTED_LIST || logicalKind === 3;
}

/** Build the logical node of `e` (whose parent's def/rep levels are given) and register its leaves. */
function build(e: RawElement, parentDef: number, parentRep: number, path: string[], nodes: LogicalNode[], leaves: LeafColumn[]): LogicalNode {
  if (e.repetition === REPEATED) throw new Unsupported(`column ${path.join('.')}: repeated field outside a LIST`);
  const def = parentDef + (e.repetition === OPTIONAL ? 1 : 0);
  const here = [...path, e.name];
  if (e.children.length === 0) {
    if (e.type === undefined) throw new ParquetFormatError(`column ${here.join('.')}: leaf without a type`);
    const node: LogicalNode = { kind: 'leaf', name: e.name, def, leaf: leaves.length, type: leafKind(e) };
    leaves.push({ path: here, physical: e.type, maxDef: def, maxRep: parentRep, kind: node.type, nodes: [...nodes, node] });
    return node;
  }
  const converted = e.converted;
  if (converted === 1 || converted === 2 || (e.logical && Number(Object.keys(e.logical)[0]) === 2)) throw new Unsupported(`column ${here.join('.')}: MAP`);
  if (isListGroup(e)) {
    const rep = e.children[0];
    if (e.children.length !== 1 || !rep || rep.repetition !== REPEATED) throw new Unsupported(`column ${here.join('.')}: LIST without one repeated child`);
    // Three-level lists only (the legacy two-level forms name the repeated group "array" or "*_tuple").
    const item = rep.children[0];
    if (rep.children.length !== 1 || !item || rep.name === 'array' || rep.name.endsWith('_tuple')) throw new Unsupported(`column ${here.join('.')}: legacy LIST layout`);
    const node = { kind: 'list', name: e.name, def, elemDef: def + 1, rep: parentRep + 1, item: null as unknown as LogicalNode } satisfies LogicalNode;
    node.item = build(item, def + 1, parentRep + 1, [...here, rep.name], [...nodes, node], leaves);
    return node;
  }
  const node = { kind: 'struct', name: e.name, def, fields: [] as LogicalNode[] } satisfies LogicalNode;
  for (const c of e.children) node.fields.push(build(c, def, parentRep, here, [...nodes, node], leaves));
  return node;
}

/**
 * The fields of a chunk's ColumnMetaData that parquet.thrift requires, with their types and enum
 * domains, and its statistics' widths. This reader uses few of them (pages name their own
 * encodings), but DuckDB and parquet-rs refuse a file without them: a footer that breaks them is
 * corrupt, not a file to read anyway.
 */
function checkChunkMeta(md: ThriftStruct, leaf: LeafColumn | null): void {
  const bad = (what: string): never => {
    throw new ParquetFormatError(`column chunk metadata: ${what}`);
  };
  const encodings = md[2];
  if (!Array.isArray(encodings)) bad('no encodings list');
  for (const e of encodings as ThriftValue[]) if (typeof e !== 'number' || !isEncoding(e)) bad(`encoding ${String(e)}`);
  if (!Array.isArray(md[3]) || !(md[3] as ThriftValue[]).every((p) => p instanceof Uint8Array)) bad('no path_in_schema');
  if (typeof md[6] !== 'number') bad('no total_uncompressed_size');
  // CompressionCodec is an enum of 0..7 (LZO among them, which this reader declines at its first page).
  // Another value is no codec: DuckDB and parquet-rs refuse the file, whether or not a page needs it.
  const codec = num(md, 4, 'codec');
  if (codec < 0 || codec > 7) bad(`codec ${codec}`);
  const stats = md[13];
  // A mistyped optional field is skipped, as Thrift's generated decoders (DuckDB's) skip it.
  if (Array.isArray(stats)) {
    for (const st of stats) {
      if (!isStruct(st)) bad('encoding_stats entry is not a struct');
      const s = st as ThriftStruct;
      const pageType = num(s, 1, 'encoding_stats page_type');
      if (pageType < 0 || pageType > 3) bad(`encoding_stats page_type ${pageType}`);
      if (!isEncoding(num(s, 2, 'encoding_stats encoding'))) bad(`encoding_stats encoding ${String(s[2])}`);
      num(s, 3, 'encoding_stats count');
    }
  }
  const st = struct(md, 12);
  const width = leaf ? STAT_WIDTH[leaf.physical] : undefined;
  if (st && width !== undefined) {
    // max_value, min_value: a fixed-width type's values are exactly that wide.
    for (const f of [5, 6]) {
      const v = st[f];
      if (v !== undefined && (!(v instanceof Uint8Array) || v.length !== width)) bad(`statistics value of ${v instanceof Uint8Array ? v.length : 'no'} bytes for a ${width}-byte type`);
    }
  }
}

function countLeaves(e: RawElement): number {
  return e.children.length === 0 ? 1 : e.children.reduce((s, c) => s + countLeaves(c), 0);
}

/**
 * Fields parquet.thrift requires that this reader does not use: DuckDB and parquet-rs (parquet-wasm)
 * both refuse a footer without them (their generated decoders check every required field), so a file
 * lacking one is corrupt here too, never rows only this reader would give. A value of another type
 * counts as missing, as those decoders skip it. The file's own fields here; a row group's in
 * checkUnusedRowGroupFields. (A column chunk's key_value_metadata entry without a key is left alone:
 * parquet-rs reads such a file.)
 */
function checkUnusedFileFields(fm: ThriftStruct): void {
  need(Number.isInteger(fm[1]), 'version');
  structs(fm, 5).forEach((kv, k) => need(kv[1] instanceof Uint8Array, `key of key_value_metadata entry ${k}`));
}

/** A row group's required fields this reader does not use (see checkUnusedFileFields). */
function checkUnusedRowGroupFields(rg: ThriftStruct, g: number): void {
  need(Number.isInteger(rg[2]), `row group ${g} total_byte_size`);
  structs(rg, 4).forEach((sc, k) => {
    need(Number.isInteger(sc[1]), `row group ${g} sorting column ${k} column_idx`);
    need(typeof sc[2] === 'boolean', `row group ${g} sorting column ${k} descending`);
    need(typeof sc[3] === 'boolean', `row group ${g} sorting column ${k} nulls_first`);
  });
}

/** Refuse a required field that is missing or of another type (an integer field: any integral value; these fields bound nothing, so no 2^53 limit as num() sets). */
function need(ok: boolean, what: string): void {
  if (!ok) throw new ParquetFormatError(`missing ${what}`);
}

export function parseFileMeta(fm: ThriftStruct, size: number): FileMeta {
  checkUnusedFileFields(fm);
  const root = rawTree(list(fm, 2) as ThriftStruct[]);
  const columns: FileMeta['columns'] = new Map();
  const leaves: (LeafColumn | null)[] = [];
  for (const c of root.children) {
    const before = leaves.length;
    try {
      const ok: LeafColumn[] = [];
      const node = build(c, 0, 0, [], [], ok);
      leaves.push(...ok);
      columns.set(c.name, { node, leaves: ok.map((_, k) => before + k) });
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
      // Keep the leaf numbering aligned with the row groups' column chunks.
      const n = countLeaves(c);
      for (let k = 0; k < n; k++) leaves.push(null);
      columns.set(c.name, { node: null, leaves: [], unsupported: e.message });
    }
  }
  const fileRows = count(fm, 3, 'num_rows');
  let groupRows = 0;
  const rowGroups = (list(fm, 4) as ThriftStruct[]).map((rg, g) => {
    const numRows = count(rg, 3, `row group ${g} num_rows`, fileRows);
    checkUnusedRowGroupFields(rg, g);
    groupRows += numRows;
    const chunks = (list(rg, 1) as ThriftStruct[]).map((cc, c) => {
      if (str(cc, 1) !== undefined) throw new Unsupported('column chunks in another file');
      const md = struct(cc, 3);
      if (!md) throw new ParquetFormatError(`row group ${g}: column chunk without metadata`);
      count(cc, 2, 'file_offset'); // required, if unused: parquet-rs refuses a chunk without it
      const leaf = leaves[c];
      // The chunk's values are decoded as the schema's type: a chunk of another type is not that column.
      if (leaf && num(md, 1, 'column type') !== leaf.physical) throw new ParquetFormatError(`row group ${g}, column ${leaf.path.join('.')}: chunk of type ${num(md, 1, 'column type')}, schema type ${leaf.physical}`);
      checkChunkMeta(md, leaf ?? null);
      const data = count(md, 9, 'data_page_offset');
      const dict = optNum(md, 11);
      const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
      const numValues = count(md, 5, 'num_values');
      // Every row has at least one level entry in every leaf, and exactly one in a leaf outside lists.
      if (leaf && (leaf.maxRep === 0 ? numValues !== numRows : numValues < numRows)) {
        throw new ParquetFormatError(`row group ${g}, column ${leaf.path.join('.')}: ${numValues} values for ${numRows} rows`);
      }
      return { codec: num(md, 4, 'codec'), start, length: count(md, 7, 'total_compressed_size'), numValues };
    });
    if (chunks.length !== leaves.length) throw new ParquetFormatError(`row group ${g} has ${chunks.length} column chunks, the schema ${leaves.length} leaves`);
    for (const ch of chunks) if (ch.start < 4 || ch.start + ch.length > size - 8) throw new ParquetFormatError(`row group ${g}: column chunk outside the file`);
    return { numRows, chunks };
  });
  if (groupRows !== fileRows) throw new ParquetFormatError(`row groups hold ${groupRows} rows, the file says ${fileRows}`);
  return { size, numRows: fileRows, createdBy: str(fm, 6), columns, leaves, rowGroups };
}
