// Corrupt one page of a real parquet file without moving anything else: the page's header is
// written anew (thrift compact) with a filler field of an unknown id, so that header plus body keep
// their exact length and every offset in the footer stays right. Readers skip unknown fields.
import { readFileSync, writeFileSync } from 'node:fs';
import { footer } from '../../src/parquet/reader.js';
import { ThriftReader, type ThriftStruct } from '../../src/parquet/thrift.js';

/** The header fields this rewrite understands: a v1 data page without statistics or CRC. */
interface PageHeader {
  type: number;
  uncompressed: number;
  compressed: number;
  numValues: number;
  encoding: number;
  defEncoding: number;
  repEncoding: number;
}

function varint(out: number[], n: number): void {
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
}
const zigzag = (out: number[], n: number) => varint(out, n >= 0 ? 2 * n : -2 * n - 1);

/** Compact-protocol bytes of a v1 data page header, padded with field 100 (binary) to `length` bytes. */
function encodeHeader(h: PageHeader, length: number): Uint8Array {
  const core = (pad: number | null): number[] => {
    const out: number[] = [];
    // field 1..3: i32 (type 5), deltas of 1
    out.push(0x15);
    zigzag(out, h.type);
    out.push(0x15);
    zigzag(out, h.uncompressed);
    out.push(0x15);
    zigzag(out, h.compressed);
    // field 5: struct (type 12), delta 2
    out.push(0x2c);
    for (const v of [h.numValues, h.encoding, h.defEncoding, h.repEncoding]) {
      out.push(0x15);
      zigzag(out, v);
    }
    out.push(0);
    if (pad !== null) {
      // field 100, binary (type 8): long-form field header (type byte, then the zigzag id)
      out.push(0x08);
      zigzag(out, 100);
      varint(out, pad);
      for (let i = 0; i < pad; i++) out.push(0);
    }
    out.push(0);
    return out;
  };
  if (core(null).length === length) return Uint8Array.from(core(null));
  // The filler's own length prefix grows with it: find the pad that lands exactly.
  for (let pad = 0; pad < length; pad++) {
    const b = core(pad);
    if (b.length === length) return Uint8Array.from(b);
    if (b.length > length) break;
  }
  throw new Error(`no header of exactly ${length} bytes`);
}

export interface PageEdit {
  /** The declared uncompressed size to write. */
  uncompressed: number;
  /** The new body; it may be shorter than the old one (the header's filler takes the rest). */
  body: Uint8Array;
}

/**
 * Rewrite the first page of `column`'s chunk in row group 0 of `src` into `dst`. `edit` gets the
 * page's declared size and body and returns the corrupt version.
 */
export function editFirstPage(src: string, dst: string, column: string, edit: (uncompressed: number, body: Uint8Array) => PageEdit): void {
  const bytes = new Uint8Array(readFileSync(src));
  const meta = footer(src);
  const leaf = meta.columns.get(column)!.leaves[0]!;
  const start = meta.rowGroups[0]!.chunks[leaf]!.start;
  const r = new ThriftReader(bytes, start);
  const raw = r.struct();
  const dh = raw[5] as ThriftStruct | undefined;
  const known = Object.keys(raw).every((k) => ['1', '2', '3', '5'].includes(k)) && dh && Object.keys(dh).every((k) => ['1', '2', '3', '4'].includes(k));
  if (!known || raw[1] !== 0) throw new Error(`${src}: the first page of ${column} is not a plain v1 data page header (fields ${Object.keys(raw)})`);
  const h: PageHeader = {
    type: 0,
    uncompressed: raw[2] as number,
    compressed: raw[3] as number,
    numValues: dh[1] as number,
    encoding: dh[2] as number,
    defEncoding: dh[3] as number,
    repEncoding: dh[4] as number,
  };
  const total = r.pos - start + h.compressed;
  const body = bytes.subarray(r.pos, r.pos + h.compressed);
  const e = edit(h.uncompressed, body.slice());
  const header = encodeHeader({ ...h, uncompressed: e.uncompressed, compressed: e.body.length }, total - e.body.length);
  const out = new Uint8Array(bytes);
  out.set(header, start);
  out.set(e.body, start + header.length);
  writeFileSync(dst, out);
}
