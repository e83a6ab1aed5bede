// What a page's values can take at most, from their count and encoding alone: a page header that
// declares more is refused before anything is allocated or decompressed for it (a zstd page of
// zeros expands to 2 GiB from 64 KB, so the compressed size bounds nothing). Every bound holds for
// every page the decoders in column.ts accept; strings have none (any value may be long), but no
// string may be longer than V8 can hold.
import { constants } from 'node:buffer';
import type { LeafKind } from './meta.js';
import { ParquetFormatError } from './thrift.js';

/** parquet.thrift's Encoding values this reader decodes. */
export const ENC = { PLAIN: 0, PLAIN_DICTIONARY: 2, RLE: 3, DELTA_BINARY_PACKED: 5, DELTA_LENGTH_BYTE_ARRAY: 6, DELTA_BYTE_ARRAY: 7, RLE_DICTIONARY: 8, BYTE_STREAM_SPLIT: 9 } as const;

/** Largest declared page (a JS Buffer's limit is 2^31 - 1 on some platforms); also "no bound". */
export const MAX_PAGE = 2 ** 31 - 1;

/**
 * The longest string value read: V8's limit (0x1fffffe8 UTF-16 units on 64-bit). It is checked on
 * the UTF-8 length, before the bytes are expanded: a value of more bytes is refused even when its
 * characters would fit (a UTF-8 byte is at most one UTF-16 unit, so nothing shorter fails later).
 */
export const MAX_STRING_BYTES = constants.MAX_STRING_LENGTH;

/** A value no JavaScript string can hold: not corrupt, but no row of it can be read. */
export class ValueTooLong extends ParquetFormatError {}

/** Refuse a string value of `len` bytes past MAX_STRING_BYTES. */
export function checkStringLength(len: number): void {
  if (len > MAX_STRING_BYTES) {
    throw new ValueTooLong(`a string value of ${len.toLocaleString('en-US')} bytes, longer than the longest JavaScript string (${MAX_STRING_BYTES.toLocaleString('en-US')} characters)`);
  }
}

/** Bytes of one fixed-width value of each numeric kind. */
export const FIXED_WIDTH: Record<'int32' | 'int64' | 'float' | 'double', number> = { int32: 4, int64: 8, float: 4, double: 8 };

/** Values past the count a bit-packed run may pad (DuckDB fills its last block of 256 values). */
export const MAX_RUN_PADDING = 255;

/**
 * Most bytes of an RLE / bit-packed hybrid run sequence of `n` values of `width` bits, as
 * decodeHybrid (column.ts) accepts it: a run header is at most 6 bytes; an RLE run of one value (the
 * costliest per value) is a header and ceil(width/8) bytes; a bit-packed run holds groups of 8
 * values at `width` bytes a group, and the last run may pad up to MAX_RUN_PADDING values past the
 * count (32 groups at most).
 */
export function hybridBound(n: number, width: number): number {
  return n * (6 + ((width + 7) >> 3)) + 32 * width;
}

/** Most bytes of a v1 page's levels of `n` entries at `width` bits: a 4-byte length, then the runs. */
export function levelsBound(n: number, width: number): number {
  return 4 + hybridBound(n, width);
}

/**
 * Most bytes of DELTA_BINARY_PACKED `n` values of `bytes`-byte integers as deltaBinaryPacked reads
 * them: a header of 4 varints (at most 10 bytes each), then blocks of B values (128 <= B <= 2^20),
 * each a 10-byte minimum delta, a width byte per miniblock (at most B/32) and its miniblocks up to
 * the last value, the last of which may be padding of at most a block. Summed over the blocks and
 * taken at the worst B: under 50 + (2 * bytes + 1) * n + 2^15 + bytes * 2^20.
 */
function deltaBound(n: number, bytes: number): number {
  return n <= 1 ? 40 : 50 + (2 * bytes + 1) * n + 2 ** 15 + bytes * 2 ** 20;
}

/**
 * Most bytes `n` values of `kind` in `encoding` can take in a page (MAX_PAGE: no bound, as for
 * strings and encodings this reader does not decode). Dictionary indices: the bit-width byte and the
 * runs at the widest width (32 bits; readers tighten it once the width is read).
 */
export function valuesBound(kind: LeafKind, encoding: number, n: number): number {
  const width = kind === 'boolean' || kind === 'string' ? 0 : FIXED_WIDTH[kind];
  switch (encoding) {
    case ENC.PLAIN:
      return kind === 'string' ? MAX_PAGE : kind === 'boolean' ? Math.ceil(n / 8) : n * width;
    case ENC.PLAIN_DICTIONARY:
    case ENC.RLE_DICTIONARY:
      return 1 + hybridBound(n, 32);
    case ENC.RLE:
      return kind === 'boolean' ? 4 + hybridBound(n, 1) : MAX_PAGE;
    case ENC.DELTA_BINARY_PACKED:
      return kind === 'int32' || kind === 'int64' ? deltaBound(n, width) : MAX_PAGE;
    case ENC.BYTE_STREAM_SPLIT:
      return width > 0 ? n * width : MAX_PAGE;
    default:
      return MAX_PAGE;
  }
}

/** Refuse a declared size past `bound` for `n` values (`what`: which part of the page). */
export function checkDeclared(size: number, bound: number, n: number, what: string): void {
  if (size > bound) throw new ParquetFormatError(`${what} of ${n} values declares ${size} bytes, more than they can take (${bound})`);
}
