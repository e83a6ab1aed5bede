// One column chunk, page by page: levels and values of the wanted rows only. Pages are decompressed
// through a small sliding window (inflate.ts), so memory holds the wanted rows' values plus one
// compressed page, never a whole decompressed page or column chunk.
import { isUtf8 } from 'node:buffer';
import { readSync } from 'node:fs';
import { Unsupported, isEncoding, type ChunkMeta, type LeafColumn } from './meta.js';
import { ENC, FIXED_WIDTH, MAX_PAGE, MAX_RUN_PADDING, MAX_STRING_BYTES, checkDeclared, checkStringLength, hybridBound, levelsBound, valuesBound } from './bounds.js';
import { checkDeclaredSize, decodesWhole, inflater, mayHoldWhole, streamsBody, type Body, type Inflater, type StreamedBody } from './inflate.js';
import { ParquetFormatError, ThriftEndError, ThriftReader, count, num, optNum, struct, type ThriftStruct } from './thrift.js';
import { RowStarts } from './row-starts.js';
import { Utf8Arena, type Utf8Bytes } from './utf8-bytes.js';

const PAGE = { DATA: 0, DICTIONARY: 2, DATA_V2: 3 } as const;
/**
 * Level entries a page may hold, and one row may hold in one leaf. Every entry can be stored in next
 * to no bytes (an RLE run of width 0), so the bytes cannot bound these counts: the footer's value
 * counts do (checked against the row group), and these ceilings cap what a page's level and index
 * arrays (3 bytes, 2 levels and up to 4 for an index, per entry: at most 320 MiB) and a row's triples
 * (about 24 bytes per entry: at most 100 MiB) may cost. Far above any trajectory.
 */
export const MAX_PAGE_VALUES = 2 ** 26;
export const MAX_ROW_VALUES = 2 ** 22;

/** The triples (repetition level, definition level, value) of one wanted row. */
export interface RowTriples {
  reps: number[];
  defs: number[];
  /** The value where def === maxDef, else undefined. */
  vals: unknown[];
}

/** The first refill of a page's window (Window.refill). */
const FIRST_REFILL = 1 << 14;
/** A page's window: the decompressed bytes at hand at once (a value longer than this grows it). */
const WINDOW = 1 << 20;
/** Bytes read from the file per step of a streamed page body (FileBody): a chunk the CPU's cache holds. */
const STREAM_STEP = 1 << 18;
/** Bytes read for a page header at first (grown fourfold while the header runs past them). */
const HEADER_READ = 1 << 14;
const NO_BYTES = new Uint8Array(0);
const EMPTY_BUFFER = Buffer.alloc(0);

/**
 * A page body read from the file a step at a time, as its decoder asks for it (streamsBody): the
 * compressed page is never held whole. The bytes of each step are checked to be in the file.
 */
class FileBody implements StreamedBody {
  private start = 0;
  private have = 0;
  constructor(
    private readonly fd: number,
    private readonly offset: number,
    readonly length: number,
    private readonly buf: Buffer,
  ) {}
  at(pos: number): Uint8Array {
    if (pos >= this.start && pos < this.start + this.have) return this.buf.subarray(pos - this.start, this.have);
    if (pos >= this.length) return NO_BYTES;
    const got = readSync(this.fd, this.buf, 0, Math.min(this.buf.length, this.length - pos), this.offset + pos);
    if (got === 0) throw new ParquetFormatError('file ends inside a page');
    this.start = pos;
    this.have = got;
    return this.buf.subarray(0, got);
  }
}

/** Sliding window over a page body being decompressed. */
export class Window {
  buf: Buffer;
  pos = 0;
  end = 0;
  consumed = 0;
  private eof = false;
  /**
   * Bytes asked of the inflater per refill: small first, then doubling up to the window. A v1 page
   * without a wanted row is given up after its levels, which sit at its front: filling the whole
   * window at once would decompress all of a 1 MB page to read a few hundred bytes of levels.
   */
  private refill = FIRST_REFILL;
  /**
   * `total`: the body's decompressed size per its page header; no read may go past it. `reuse`: a
   * buffer of WINDOW bytes no other open window uses (a fresh one per page costs its page faults).
   */
  constructor(
    private readonly inf: Inflater,
    private readonly total: number,
    reuse?: Buffer,
  ) {
    // A page decoded whole is read where it lies: copying it into a window would move every byte once more.
    const whole = inf.takeWhole?.() ?? null;
    if (whole) {
      this.buf = Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength);
      this.end = whole.length;
    } else this.buf = reuse ?? Buffer.allocUnsafe(Math.min(total + 1, WINDOW));
  }
  /** Make `n` bytes available at `pos`; false when the body ends first. */
  ensure(n: number): boolean {
    if (this.end - this.pos >= n) return true;
    // A length past the page's declared size is corrupt: refuse it before allocating for it.
    if (this.consumed + n > this.total) return false;
    if (this.pos > 0) {
      this.buf.copy(this.buf, 0, this.pos, this.end);
      this.end -= this.pos;
      this.pos = 0;
    }
    if (n > this.buf.length) {
      if (n > MAX_PAGE) return false;
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(bigger, 0, 0, this.end);
      this.buf = bigger;
    }
    while (this.end < n && !this.eof) {
      const got = this.inf.read(this.buf.subarray(this.end, Math.min(this.buf.length, Math.max(n, this.end + this.refill))));
      this.refill = Math.min(2 * this.refill, this.buf.length);
      if (got === 0) this.eof = true;
      this.end += got;
    }
    return this.end >= n;
  }
  need(n: number, what: string): void {
    if (!this.ensure(n)) throw new ParquetFormatError(`page ends inside ${what}`);
  }
  advance(n: number): void {
    this.pos += n;
    this.consumed += n;
  }
  /** Skip `n` bytes without keeping them (a skipped value may be larger than the window). */
  skip(n: number): void {
    if (n > this.rest()) throw new ParquetFormatError('a value past the end of the page');
    while (n > 0) {
      if (this.end === this.pos && !this.ensure(Math.min(n, this.buf.length))) {
        if (this.end === this.pos) throw new ParquetFormatError('page ends inside a value');
      }
      const k = Math.min(n, this.end - this.pos);
      this.advance(k);
      n -= k;
    }
  }
  /** Done with the body (read to its end or not). */
  close(): void {
    // A whole page held here must not outlive the page (inflate.ts releaseLarge collects it now).
    this.buf = EMPTY_BUFFER;
    this.pos = this.end = 0;
    this.inf.close();
  }
  /** The values are all read: the body must end here, neither later (bytes left over) nor earlier. */
  finish(what: string): void {
    if (this.rest() !== 0) throw new ParquetFormatError(`${this.rest()} bytes left over after the ${what}`);
    // Bytes the inflater produced past the declared size: the page header lies about the body.
    if (this.end > this.pos || this.inf.read(Buffer.allocUnsafe(1)) > 0) throw new ParquetFormatError(`the ${what} decompress past the page's declared size`);
    this.close();
  }
  /** A 4-byte length, then that many bytes of RLE / bit-packed runs: `out.length` values of `width` bits. */
  runs(width: number, out: Uint8Array | Uint32Array, what: string): void {
    const len = this.u32(what);
    // Checked before the window grows to it: the runs of `out.length` values cannot take more.
    checkDeclared(len, hybridBound(out.length, width), out.length, what);
    this.need(len, what);
    decodeHybrid(this.buf.subarray(this.pos, this.pos + len), width, out.length, out, true);
    this.advance(len);
  }
  /** Bytes of the body not yet consumed. */
  rest(): number {
    return this.total - this.consumed;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.pos);
    this.advance(4);
    return v;
  }
}

export function bitWidth(maxLevel: number): number {
  return maxLevel === 0 ? 0 : 32 - Math.clz32(maxLevel);
}

/**
 * `groups` whole bit-packed groups of 8 values of `width` <= 8 bits, LSB first, from `bytes` at `at`
 * into `out` at `k`: a group is `width` bytes, read as two little-endian 32-bit words.
 */
function unpackGroups(bytes: Uint8Array, at: number, width: number, groups: number, out: Uint32Array | Uint8Array, k: number): void {
  const mask = (1 << width) - 1;
  const low = Math.min(width, 4);
  for (let g = 0, q = at; g < groups; g++, q += width) {
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < low; i++) lo |= bytes[q + i]! << (8 * i);
    for (let i = 4; i < width; i++) hi |= bytes[q + i]! << (8 * (i - 4));
    for (let j = 0, s = 0; j < 8; j++, s += width) {
      out[k++] = (s + width <= 32 ? lo >>> s : s >= 32 ? hi >>> (s - 32) : (lo >>> s) | (hi << (32 - s))) & mask;
    }
  }
}

/**
 * The RLE / bit-packed hybrid encoding (levels and dictionary indices): `count` values into `out`.
 * No RLE run may claim more values than are left (they cost no bytes: nothing else bounds them), and
 * with `exact`, the runs must end with the bytes.
 */
export function decodeHybrid(bytes: Uint8Array, width: number, count: number, out: Uint32Array | Uint8Array, exact = false): void {
  if (width > 32) throw new ParquetFormatError(`bit width ${width}`);
  const valueBytes = (width + 7) >> 3;
  const mask = width === 32 ? 0xffffffff : (1 << width) - 1;
  let p = 0;
  let k = 0;
  while (k < count) {
    if (p >= bytes.length) throw new ParquetFormatError('levels or indices end early');
    let h = 0;
    let m = 1;
    for (let i = 0; ; i++) {
      if (p >= bytes.length || i > 5) throw new ParquetFormatError('bad run header');
      const x = bytes[p++]!;
      h += (x & 0x7f) * m;
      if ((x & 0x80) === 0) break;
      m *= 128;
    }
    if (h % 2 === 1) {
      const groups = (h - 1) / 2;
      // Its values cost bytes, so a long run is bounded by them; DuckDB pads the last run past the count.
      if (groups === 0) throw new ParquetFormatError('an empty bit-packed run');
      // The last run may pad past the count (DuckDB fills a block of 256 values), by less than 256
      // values: more would be bytes no value needs, which no bound of the page could then allow
      // for (bounds.ts hybridBound).
      if (groups * 8 - (count - k) > MAX_RUN_PADDING) throw new ParquetFormatError(`a bit-packed run of ${groups} groups with ${count - k} values left`);
      const n = Math.min(groups * 8, count - k);
      if (p + Math.ceil((n * width) / 8) > bytes.length) throw new ParquetFormatError('bit-packed run past the end');
      // LSB-first bit packing.
      let bitPos = p * 8;
      let j = 0;
      if (width <= 8) {
        // Levels: whole groups of 8 values, three to four times the speed of the loop below, which
        // reads what is left (a last group cut short by the count, whose bytes may end early).
        const whole = n >> 3;
        unpackGroups(bytes, p, width, whole, out, k);
        k += whole * 8;
        j = whole * 8;
        bitPos += j * width;
      }
      if (width <= 24) {
        // Up to 24 bits at any bit offset fit in the 32 bits read from 4 bytes (missing bytes read as 0).
        for (; j < n; j++, bitPos += width) {
          const b = bitPos >> 3;
          const w32 = bytes[b]! | ((bytes[b + 1] ?? 0) << 8) | ((bytes[b + 2] ?? 0) << 16) | ((bytes[b + 3] ?? 0) << 24);
          out[k++] = (w32 >>> (bitPos & 7)) & mask;
        }
      } else {
        for (; j < n; j++) {
          let v = 0;
          for (let b = 0; b < width; b++, bitPos++) v += ((bytes[bitPos >> 3]! >> (bitPos & 7)) & 1) * 2 ** b;
          out[k++] = v;
        }
      }
      p += groups * width;
    } else {
      const run = h / 2;
      if (run === 0 || run > count - k) throw new ParquetFormatError(`an RLE run of ${run} values with ${count - k} left`);
      if (p + valueBytes > bytes.length) throw new ParquetFormatError('RLE run past the end');
      let v = 0;
      for (let b = 0; b < valueBytes; b++) v += bytes[p + b]! * 2 ** (8 * b);
      p += valueBytes;
      // The bits above the width must be zero: masking them off would turn a corrupt level or index into a valid one.
      if (v > mask) throw new ParquetFormatError(`an RLE value ${v} wider than its ${width} bits`);
      const n = Math.min(run, count - k);
      out.fill(v, k, k + n);
      k += n;
    }
  }
  if (exact && p !== bytes.length) throw new ParquetFormatError(`${bytes.length - p} bytes left over after the runs`);
}

/** Levels above the column's maximum cannot be assembled into anything. */
function checkLevels(levels: Uint8Array, max: number, what: string): void {
  for (let i = 0; i < levels.length; i++) if (levels[i]! > max) throw new ParquetFormatError(`${what} level ${levels[i]} above the maximum ${max}`);
}

/**
 * DELTA_BINARY_PACKED: the `count` values of a page read from the window. Arithmetic wraps at
 * 32 or 64 bits as the format defines; int64 values become doubles as Arrow's do.
 */
export function deltaBinaryPacked(w: Window, count: number, bits: 32 | 64): number[] {
  const uvarint = (): bigint => {
    let r = 0n;
    for (let i = 0, sh = 0n; i < 10; i++, sh += 7n) {
      w.need(1, 'a delta header');
      const x = w.buf[w.pos]!;
      w.advance(1);
      r |= BigInt(x & 0x7f) << sh;
      if ((x & 0x80) === 0) return r;
    }
    throw new ParquetFormatError('delta: varint longer than 10 bytes');
  };
  const zigzag = (): bigint => {
    const v = uvarint();
    return (v >> 1n) ^ -(v & 1n);
  };
  const blockSize = Number(uvarint());
  const miniblocks = Number(uvarint());
  const total = Number(uvarint());
  let value = zigzag();
  // The spec's shape (blocks of a multiple of 128 values, miniblocks of a multiple of 32), and
  // exactly the page's values: a count from the header never drives a loop or an allocation.
  if (blockSize <= 0 || blockSize % 128 !== 0 || blockSize > 2 ** 20 || miniblocks <= 0 || blockSize % miniblocks !== 0 || (blockSize / miniblocks) % 32 !== 0) {
    throw new ParquetFormatError(`delta: bad header (block of ${blockSize} values in ${miniblocks} miniblocks)`);
  }
  if (total !== count) throw new ParquetFormatError(`delta: ${total} values in a page of ${count}`);
  const perMini = blockSize / miniblocks;
  const out: number[] = [];
  if (count > 0) out.push(Number(value));
  let decoded = total > 0 ? 1 : 0;
  while (out.length < count) {
    const minDelta = zigzag();
    w.need(miniblocks, 'miniblock bit widths');
    const widths = Uint8Array.from(w.buf.subarray(w.pos, w.pos + miniblocks));
    w.advance(miniblocks);
    // Miniblocks past the last value are absent (their widths are present and meaningless).
    for (let m = 0; m < miniblocks && decoded < total && out.length < count; m++) {
      const width = widths[m]!;
      if (width > bits) throw new ParquetFormatError(`delta: bit width ${width}`);
      const bytes = (perMini * width) / 8;
      w.need(bytes, 'a miniblock');
      const b = w.buf;
      if (bits === 32) {
        // 32-bit values (lengths, int32): plain doubles, wrapped with `| 0`.
        let v32 = Number(value) | 0;
        const min32 = Number(BigInt.asIntN(32, minDelta));
        for (let j = 0, bit = w.pos * 8; j < perMini && decoded < total; j++, bit += width) {
          let packed = 0;
          if (width <= 24) {
            const at = bit >> 3;
            const w32 = b[at]! | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24);
            packed = width === 0 ? 0 : (w32 >>> (bit & 7)) & ((1 << width) - 1);
          } else for (let k = 0; k < width; k++) packed += ((b[(bit + k) >> 3]! >> ((bit + k) & 7)) & 1) * 2 ** k;
          v32 = (v32 + min32 + packed) | 0;
          decoded++;
          if (out.length < count) out.push(v32);
        }
        value = BigInt(v32);
      } else {
        for (let j = 0, bit = w.pos * 8; j < perMini && decoded < total; j++, bit += width) {
          let packed = 0n;
          for (let k = 0; k < width; k++) if ((b[(bit + k) >> 3]! >> ((bit + k) & 7)) & 1) packed |= 1n << BigInt(k);
          value = BigInt.asIntN(64, value + minDelta + packed);
          decoded++;
          if (out.length < count) out.push(Number(value));
        }
      }
      w.advance(bytes);
    }
  }
  return out;
}

/**
 * A UTF8 value as a string. Invalid bytes are corrupt (parquet-rs and DuckDB refuse them), never
 * replaced with U+FFFD: that would change the value silently.
 */
function checkUtf8(b: Buffer, start: number, end: number): void {
  if (!isUtf8(b.subarray(start, end))) throw new ParquetFormatError('a string that is not UTF-8');
}

function utf8(b: Buffer, start: number, end: number): string {
  checkUtf8(b, start, end);
  return b.toString('utf8', start, end);
}

/** A string value read from `b`: its text, or from `bytesFrom` bytes on its UTF-8 (utf8-bytes.ts). */
type TextReader = (b: Buffer, start: number, end: number) => string | Utf8Bytes;

function textReader(bytesFrom: number): TextReader {
  if (bytesFrom === Infinity) return utf8;
  const arena = new Utf8Arena();
  return (b, start, end) => {
    if (end - start < bytesFrom) return utf8(b, start, end);
    checkUtf8(b, start, end);
    // A copy: the page's buffer is reused for the next window.
    return arena.copy(b, start, end);
  };
}

/**
 * A string value's length, checked against what is left of the page and against the longest
 * JavaScript string before any of its bytes is decompressed (a zstd page can expand 64 KB to 2 GiB).
 */
function stringLength(w: Window, len: number): number {
  if (len > w.rest()) throw new ParquetFormatError('page ends inside a string');
  checkStringLength(len);
  return len;
}

/** Fixed-width plain values: byte size and reader. */
const FIXED: Record<'int32' | 'int64' | 'float' | 'double', [number, (b: Buffer, p: number) => number]> = {
  int32: [4, (b, p) => b.readInt32LE(p)],
  // Arrow hands int64 over as BigInt and the Arrow reader turns it into a double the same way.
  int64: [8, (b, p) => Number(b.readBigInt64LE(p))],
  float: [4, (b, p) => b.readFloatLE(p)],
  double: [8, (b, p) => b.readDoubleLE(p)],
};

/** Reads one value of a plain-encoded page from the window, or skips it. */
type PlainReader = (w: Window, keep: boolean) => unknown;

function plainReader(leaf: LeafColumn, text: TextReader = utf8): PlainReader {
  switch (leaf.kind) {
    case 'string':
      return (w, keep) => {
        const len = stringLength(w, w.u32('a string length'));
        if (!keep) {
          w.skip(len);
          return undefined;
        }
        w.need(len, 'a string');
        const s = text(w.buf, w.pos, w.pos + len);
        w.advance(len);
        return s;
      };
    case 'int32':
    case 'int64':
    case 'float':
    case 'double': {
      const [size, read] = FIXED[leaf.kind];
      return (w) => {
        w.need(size, `a ${leaf.kind}`);
        const v = read(w.buf, w.pos);
        w.advance(size);
        return v;
      };
    }
    case 'boolean':
      throw new Error('booleans are read bit by bit (leafRows)');
  }
}

/**
 * Compressed bodies of pages decoded whole (decodesWhole): the codec is done with them before the
 * next body is read, so every leaf of this thread shares one buffer, up to SHARED_BODY bytes. A
 * larger body gets a buffer of its own, garbage as soon as its page is decompressed: a leaf never
 * keeps its largest compressed page beside the decompressed one (DuckDB writes 137 MB bodies).
 */
let sharedBody = Buffer.alloc(0);
const SHARED_BODY = 16 * 2 ** 20;

class ChunkFile {
  private bodyBuffer = Buffer.alloc(0);
  private headerBuffer = Buffer.alloc(0);
  private stepBuffer: Buffer | null = null;
  private windowBuffer: Buffer | null = null;
  private pos: number;
  private readonly end: number;
  constructor(
    private readonly fd: number,
    chunk: ChunkMeta,
  ) {
    this.pos = chunk.start;
    this.end = chunk.start + chunk.length;
  }
  get done(): boolean {
    return this.pos >= this.end;
  }
  /** The file offset of what is read next. */
  get at(): number {
    return this.pos;
  }
  /**
   * The next page header. Its buffer is reused for every header of the chunk (a fresh 16 KiB per
   * page cost more than reading it: 6-47 ms against 4 ms for a row group's 653 headers), so the
   * struct is valid until the next call; the reader takes only its numbers.
   */
  header(): ThriftStruct {
    let size = Math.min(this.end - this.pos, HEADER_READ);
    for (;;) {
      if (this.headerBuffer.length < size) this.headerBuffer = Buffer.allocUnsafe(size);
      const b = this.headerBuffer;
      const got = readSync(this.fd, b, 0, size, this.pos);
      const r = new ThriftReader(b.subarray(0, got));
      try {
        const h = r.struct();
        this.pos += r.pos;
        return h;
      } catch (e) {
        if (!(e instanceof ThriftEndError) || size >= this.end - this.pos) throw e instanceof ThriftEndError ? new ParquetFormatError('page header past the column chunk') : e;
        size = Math.min(this.end - this.pos, size * 4);
      }
    }
  }
  /**
   * The next page body, in a buffer reused for every page (valid until the next call). `transient`:
   * the body is decoded whole before any other body is read (decodesWhole), see `sharedBody`.
   */
  body(n: number, transient = false): Buffer {
    if (n < 0 || this.pos + n > this.end) throw new ParquetFormatError('page body past the column chunk');
    let b: Buffer;
    if (transient) {
      if (n > SHARED_BODY) b = Buffer.allocUnsafe(n);
      else {
        if (sharedBody.length < n) sharedBody = Buffer.allocUnsafe(Math.min(SHARED_BODY, Math.max(n, sharedBody.length * 2)));
        b = sharedBody.subarray(0, n);
      }
    } else {
      // Reusing one buffer avoids a fresh allocation (and its page faults) per page of tens of MB.
      if (this.bodyBuffer.length < n) this.bodyBuffer = Buffer.allocUnsafe(Math.max(n, this.bodyBuffer.length * 2));
      b = this.bodyBuffer.subarray(0, n);
    }
    let off = 0;
    while (off < n) {
      const got = readSync(this.fd, b, off, n - off, this.pos + off);
      if (got === 0) throw new ParquetFormatError('file ends inside a page');
      off += got;
    }
    this.pos += n;
    return b;
  }
  skipBody(n: number): void {
    if (n < 0 || this.pos + n > this.end) throw new ParquetFormatError('page body past the column chunk');
    this.pos += n;
  }
  /**
   * The next page body of `n` bytes, for `inflater(codec, ..., size)`: streamed from the file where
   * the codec reads it front to back (streamsBody), else read whole (see body()). One body of a
   * chunk is open at a time: the next call reuses the buffers.
   */
  pageBody(n: number, codec: number, size: number): Body {
    if (!streamsBody(codec, size)) return this.body(n, decodesWhole(codec, size));
    if (n < 0 || this.pos + n > this.end) throw new ParquetFormatError('page body past the column chunk');
    const b = new FileBody(this.fd, this.pos, n, (this.stepBuffer ??= Buffer.allocUnsafe(STREAM_STEP)));
    this.pos += n;
    return b;
  }
  /** A window buffer for the chunk's open page (one at a time). */
  window(): Buffer {
    return (this.windowBuffer ??= Buffer.allocUnsafe(WINDOW));
  }
}

/** Bytes a PLAIN value takes at least (a string: its 4-byte length). */
const MIN_PLAIN: Record<Exclude<LeafColumn['kind'], 'boolean'>, number> = { string: 4, int32: 4, int64: 8, float: 4, double: 8 };

/**
 * Dictionaries of up to this many entries are held as JS values (the fastest to look up); larger
 * ones as typed arrays (a string's bytes and offsets, numbers as doubles): a JS string costs 20 bytes
 * or more beside its text, so millions of short entries would cost several times their page.
 * Writers cap dictionaries far below this (1 MiB pages); a whole Arrow dictionary written as is (a
 * pandas categorical) can hold entries no row of the chunk uses, so the count is not bounded by the
 * chunk's values, only by MAX_PAGE_VALUES.
 */
const EAGER_DICTIONARY = 1 << 16;

/** A dictionary page's values, looked up by index. */
export interface Dictionary {
  readonly size: number;
  get(ix: number): unknown;
}

class ValueDictionary implements Dictionary {
  constructor(private readonly values: unknown[]) {}
  get size(): number {
    return this.values.length;
  }
  get(ix: number): unknown {
    return this.values[ix];
  }
}

/** Many strings: their UTF-8 bytes end to end and where each starts; a string is made on lookup. */
class StringDictionary implements Dictionary {
  constructor(
    private readonly bytes: Buffer,
    private readonly offsets: Uint32Array,
  ) {}
  get size(): number {
    return this.offsets.length - 1;
  }
  get(ix: number): string {
    return this.bytes.toString('utf8', this.offsets[ix], this.offsets[ix + 1]);
  }
}

class NumberDictionary implements Dictionary {
  constructor(private readonly values: Float64Array) {}
  get size(): number {
    return this.values.length;
  }
  get(ix: number): number {
    return this.values[ix]!;
  }
}

/**
 * The dictionary page's entries: count and declared size checked against each other before anything
 * is allocated or decompressed (at least 4 bytes per string, exactly the width per number; at most
 * MAX_PAGE_VALUES entries).
 */
export function dictionaryHeader(leaf: LeafColumn, h: ThriftStruct, uncompressed: number): number {
  const dh = struct(h, 7);
  if (!dh) throw new ParquetFormatError('dictionary page without its header');
  const n = count(dh, 1, 'dictionary size');
  const enc = num(dh, 2, 'dictionary encoding');
  if (enc !== ENC.PLAIN && enc !== ENC.PLAIN_DICTIONARY) throw new Unsupported(`dictionary encoding ${enc}`);
  if (leaf.kind === 'boolean') throw new Unsupported('boolean dictionary');
  if (n * MIN_PLAIN[leaf.kind] > uncompressed) throw new ParquetFormatError(`dictionary of ${n} values in ${uncompressed} bytes`);
  if (n > MAX_PAGE_VALUES) throw new ParquetFormatError(`a dictionary of ${n} entries, more than ${MAX_PAGE_VALUES}`);
  if (leaf.kind !== 'string') checkDeclared(uncompressed, n * FIXED_WIDTH[leaf.kind], n, 'a dictionary');
  return n;
}

function readDictionary(leaf: LeafColumn, codec: number, body: Body, h: ThriftStruct, uncompressed: number, window?: Buffer): Dictionary {
  const n = dictionaryHeader(leaf, h, uncompressed);
  const w = new Window(inflater(codec, body, uncompressed), uncompressed, window);
  const read = plainReader(leaf);
  let dict: Dictionary;
  if (n <= EAGER_DICTIONARY) {
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(read(w, true));
    dict = new ValueDictionary(out);
  } else if (leaf.kind === 'string') {
    const offsets = new Uint32Array(n + 1);
    // Grown as the bytes arrive: the declared size is a claim, the bytes are what the page holds.
    let bytes = Buffer.allocUnsafe(Math.min(uncompressed - 4 * n, 1 << 20));
    let end = 0;
    for (let i = 0; i < n; i++) {
      let len: number;
      if (w.end - w.pos >= 4) {
        len = w.buf.readUInt32LE(w.pos);
        w.advance(4);
      } else len = w.u32('a string length');
      // Empty entries (millions of them cost a few bytes of zstd) need no copy and no check.
      if (len > 0) {
        w.need(stringLength(w, len), 'a string');
        checkUtf8(w.buf, w.pos, w.pos + len);
        if (end + len > bytes.length) {
          const bigger = Buffer.allocUnsafe(Math.min(uncompressed, Math.max(end + len, 2 * bytes.length)));
          bytes.copy(bigger, 0, 0, end);
          bytes = bigger;
        }
        w.buf.copy(bytes, end, w.pos, w.pos + len);
        w.advance(len);
        end += len;
      }
      offsets[i + 1] = end;
    }
    dict = new StringDictionary(bytes.subarray(0, end), offsets);
  } else {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = read(w, true) as number;
    dict = new NumberDictionary(values);
  }
  w.finish('dictionary');
  return dict;
}

/** What a data page's header says, checked (dataPageHeader). v2 fields are 0 / true on a v1 page. */
interface DataPage {
  v2: boolean;
  numValues: number;
  encoding: number;
  pageRows: number;
  numNulls: number;
  repLen: number;
  defLen: number;
  isCompressed: boolean;
}

/**
 * A data page's header (v1 or v2) checked before its body is read: counts against the values left
 * in the column chunk, level encodings and lengths, and the declared size against what the page's
 * values and levels can take (bounds.ts), so that a lie is refused before anything is allocated or
 * decompressed for it. The reader and checkPages (headers only) share it.
 */
function dataPageHeader(h: ThriftStruct, type: number, leaf: LeafColumn, valuesLeft: number, compressed: number, uncompressed: number): DataPage {
  const repWidth = bitWidth(leaf.maxRep);
  const defWidth = bitWidth(leaf.maxDef);
  const pageValues = (dh: ThriftStruct): number => {
    const n = count(dh, 1, 'page value count', MAX_PAGE_VALUES);
    if (n > valuesLeft) throw new ParquetFormatError(`a page of ${n} values with ${valuesLeft} left in the column chunk`);
    return n;
  };
  if (type === PAGE.DATA) {
    const dh = struct(h, 5);
    if (!dh) throw new ParquetFormatError('data page without its header');
    const numValues = pageValues(dh);
    const encoding = num(dh, 2, 'page encoding');
    // Required fields even where the level is not stored.
    const defEncoding = num(dh, 3, 'definition level encoding');
    const repEncoding = num(dh, 4, 'repetition level encoding');
    // parquet.thrift's Encoding enum: 0 and 2..9 (anything else is not an encoding at all).
    if (!isEncoding(defEncoding) || !isEncoding(repEncoding)) throw new ParquetFormatError(`level encodings ${defEncoding} and ${repEncoding}`);
    if (leaf.maxRep > 0 && repEncoding !== ENC.RLE) throw new Unsupported('BIT_PACKED repetition levels');
    if (leaf.maxDef > 0 && defEncoding !== ENC.RLE) throw new Unsupported('BIT_PACKED definition levels');
    // Which values are null shows only in the levels: the bound takes every entry as a value.
    const levels = (leaf.maxRep > 0 ? levelsBound(numValues, repWidth) : 0) + (leaf.maxDef > 0 ? levelsBound(numValues, defWidth) : 0);
    checkDeclared(uncompressed, levels + valuesBound(leaf.kind, encoding, numValues), numValues, 'a page');
    return { v2: false, numValues, encoding, pageRows: 0, numNulls: 0, repLen: 0, defLen: 0, isCompressed: true };
  }
  const dh = struct(h, 8);
  if (!dh) throw new ParquetFormatError('data page v2 without its header');
  const numValues = pageValues(dh);
  const encoding = num(dh, 4, 'page encoding');
  const pageRows = count(dh, 3, 'page row count', numValues);
  const numNulls = count(dh, 2, 'page null count', numValues);
  const defLen = count(dh, 5, 'definition levels length', compressed);
  const repLen = count(dh, 6, 'repetition levels length', compressed);
  // Outside lists every value is a row; a row has at least one value; levels of maximum 0 are not stored.
  if (leaf.maxRep === 0 ? pageRows !== numValues : pageRows === 0 && numValues > 0) throw new ParquetFormatError(`a page of ${numValues} values in ${pageRows} rows`);
  if ((leaf.maxRep === 0 && repLen > 0) || (leaf.maxDef === 0 && defLen > 0)) throw new ParquetFormatError('levels stored for a level of maximum 0');
  if (leaf.maxDef === 0 && numNulls > 0) throw new ParquetFormatError(`${numNulls} nulls in a required column`);
  if (repLen + defLen > Math.min(compressed, uncompressed)) throw new ParquetFormatError('levels longer than the page');
  checkDeclared(repLen, hybridBound(numValues, repWidth), numValues, 'repetition levels');
  checkDeclared(defLen, hybridBound(numValues, defWidth), numValues, 'definition levels');
  // The null count is checked against the levels once they are read; the bound may take it now.
  checkDeclared(uncompressed - repLen - defLen, valuesBound(leaf.kind, encoding, numValues - numNulls), numValues - numNulls, 'a page');
  return { v2: true, numValues, encoding, pageRows, numNulls, repLen, defLen, isCompressed: (dh[7] ?? true) !== false };
}

/** A data page opened for its values: its levels (null where the level's maximum is 0) and a window on its values. */
interface OpenPage {
  reps: Uint8Array | null;
  defs: Uint8Array | null;
  w: Window;
}

/**
 * Read a data page's levels and open a window on its values. v1: the levels lead the decompressed
 * body. v2: they are stored uncompressed ahead of the values, and are checked here against the
 * header's row and null counts. Apart from leafRows, like pageValues: a page kind first met late
 * recompiles only this.
 */
function openPage(file: ChunkFile, codec: number, page: DataPage, leaf: LeafColumn, compressed: number, uncompressed: number, repWidth: number, defWidth: number): OpenPage {
  const { numValues } = page;
  let reps: Uint8Array | null = null;
  let defs: Uint8Array | null = null;
  if (!page.v2) {
    const w = new Window(inflater(codec, file.pageBody(compressed, codec, uncompressed), uncompressed), uncompressed, file.window());
    if (leaf.maxRep > 0) w.runs(repWidth, (reps = new Uint8Array(numValues)), 'repetition levels');
    if (leaf.maxDef > 0) w.runs(defWidth, (defs = new Uint8Array(numValues)), 'definition levels');
    return { reps, defs, w };
  }
  const { pageRows, numNulls, repLen, defLen, isCompressed } = page;
  const valuesSize = uncompressed - repLen - defLen;
  const body = file.body(compressed, isCompressed && decodesWhole(codec, valuesSize));
  if (repLen + defLen > body.length) throw new ParquetFormatError('levels longer than the page');
  if (leaf.maxRep > 0) decodeHybrid(body.subarray(0, repLen), repWidth, numValues, (reps = new Uint8Array(numValues)), true);
  if (leaf.maxDef > 0) decodeHybrid(body.subarray(repLen, repLen + defLen), defWidth, numValues, (defs = new Uint8Array(numValues)), true);
  if (reps) {
    // V2 pages start at a row boundary, and their row count can then be checked.
    if (numValues > 0 && reps[0] !== 0) throw new ParquetFormatError('a v2 page starts inside a row');
    let starts = 0;
    for (let i = 0; i < numValues; i++) if (reps[i] === 0) starts++;
    if (starts !== pageRows) throw new ParquetFormatError(`a page of ${starts} rows declares ${pageRows}`);
  }
  if (defs) {
    let nulls = 0;
    for (let i = 0; i < numValues; i++) if (defs[i]! < leaf.maxDef) nulls++;
    if (nulls !== numNulls) throw new ParquetFormatError(`a page of ${nulls} nulls declares ${numNulls}`);
  }
  if (repLen + defLen > uncompressed) throw new ParquetFormatError('levels longer than the declared page');
  const values = body.subarray(repLen + defLen);
  return { reps, defs, w: new Window(inflater(isCompressed ? codec : 0, values, valuesSize), valuesSize, file.window()) };
}

/** How a data page's values are read: set up once per page, before its values (pageValues). */
interface PageValues {
  /** Dictionary indices for the whole page. */
  indices: Uint32Array | null;
  /** Booleans of a v2 page (RLE runs of width 1). */
  boolRuns: Uint32Array | null;
  /** Decoded up front: integer / float values (delta, byte-stream-split). */
  decodedValues: number[] | null;
  /** String lengths (delta), and prefix lengths (delta byte array). */
  lengths: number[] | null;
  prefixes: number[] | null;
}

/** The bit width that starts a page's dictionary indices, read past: at most 32. */
function indexBitWidth(w: Window): number {
  w.need(1, 'the index bit width');
  const width = w.buf[w.pos]!;
  w.advance(1);
  if (width > 32) throw new ParquetFormatError(`bit width ${width}`);
  return width;
}

/**
 * The values of a page of `present` non-null values in `encoding`, from where its levels end in `w`:
 * whatever is decoded up front (dictionary indices, delta and byte-stream-split values, string
 * lengths); plain values are read one by one in leafRows. Apart from leafRows, so that an encoding
 * first met late in a run recompiles only this function, not the reader's whole loop.
 */
function pageValues(w: Window, encoding: number, leaf: LeafColumn, dict: Dictionary | null, present: number): PageValues {
  let indices: Uint32Array | null = null;
  let boolRuns: Uint32Array | null = null;
  let decodedValues: number[] | null = null;
  let lengths: number[] | null = null;
  let prefixes: number[] | null = null;
  if (encoding === ENC.PLAIN_DICTIONARY || encoding === ENC.RLE_DICTIONARY) {
    if (!dict) throw new ParquetFormatError('dictionary-encoded page without a dictionary');
    indices = new Uint32Array(present);
    if (present > 0) {
      const width = indexBitWidth(w);
      const len = w.rest(); // the indices run to the end of the page
      // The header's bound took 32 bits: at this width the runs may take less, and no more is held.
      checkDeclared(len, hybridBound(present, width), present, 'dictionary indices');
      w.need(len, 'dictionary indices');
      decodeHybrid(w.buf.subarray(w.pos, w.pos + len), width, present, indices, true);
      w.advance(len);
      // Every index, wanted or not: a file with one out of range is corrupt whichever rows are read.
      const size = dict.size;
      for (let j = 0; j < present; j++) if (indices[j]! >= size) throw new ParquetFormatError(`dictionary index ${indices[j]} of a dictionary of ${size}`);
    } else if (w.rest() > 0) {
      // A page of nulls: writers differ on whether it still has its bit width, and no index is read.
      // A width that is there is checked all the same: DuckDB and parquet-wasm refuse one over 32
      // whatever the page holds (parquet fuzzer, seed 20261212, case 568).
      indexBitWidth(w);
      w.skip(w.rest());
    }
  } else if (encoding === ENC.DELTA_BINARY_PACKED && (leaf.kind === 'int32' || leaf.kind === 'int64')) {
    decodedValues = deltaBinaryPacked(w, present, leaf.kind === 'int32' ? 32 : 64);
  } else if (encoding === ENC.DELTA_LENGTH_BYTE_ARRAY && leaf.kind === 'string') {
    lengths = deltaBinaryPacked(w, present, 32);
  } else if (encoding === ENC.DELTA_BYTE_ARRAY && leaf.kind === 'string') {
    // Prefix lengths, then the suffixes as DELTA_LENGTH_BYTE_ARRAY.
    prefixes = deltaBinaryPacked(w, present, 32);
    lengths = deltaBinaryPacked(w, present, 32);
  } else if (encoding === ENC.BYTE_STREAM_SPLIT && leaf.kind !== 'string' && leaf.kind !== 'boolean') {
    // Byte k of every value, then byte k+1 of every value, ...: put the bytes back together.
    const [size, read] = FIXED[leaf.kind];
    w.need(present * size, 'byte-stream-split values');
    const joined = Buffer.allocUnsafe(present * size);
    for (let j = 0; j < present; j++) for (let k = 0; k < size; k++) joined[j * size + k] = w.buf[w.pos + k * present + j]!;
    w.advance(present * size);
    decodedValues = Array.from({ length: present }, (_, j) => read(joined, j * size));
  } else if (encoding === ENC.RLE && leaf.kind === 'boolean') {
    // Booleans in v2 pages: a 4-byte length, then RLE / bit-packed runs of width 1.
    boolRuns = new Uint32Array(present);
    if (present > 0) w.runs(1, boolRuns, 'boolean runs');
  } else if (encoding !== ENC.PLAIN) {
    throw new Unsupported(`page encoding ${encoding}`);
  }
  return { indices, boolRuns, decodedValues, lengths, prefixes };
}

/** Why pageRowValues stopped. */
const STOP_ROW = 0; // a wanted row is complete: LeafRead.done
const STOP_PAGE_END = 1; // every entry of the page is read
const STOP_REST_SKIPPED = 2; // no wanted row starts in the rest of the page, whose window is closed
const STOP_PAST_LAST = 3; // the page reached the row after the last wanted one; its window is closed

const NO_PAGE_VALUES: PageValues = { indices: null, boolRuns: null, decodedValues: null, lengths: null, prefixes: null };

/**
 * Where a leafRows read stands: its place among the rows, and the page whose entries are being
 * read. Apart from the generator so that the per-value loop (pageRowValues) is a plain function: a
 * path a run first meets late (the chunk's last wanted row, a string across two windows, the rest
 * of a page skipped) then recompiles that loop, not the whole reader (each isolate compiles its
 * own code, so with two workers every recompile of a large generator is paid twice).
 */
class LeafRead {
  /** The wanted row being collected. */
  cur: RowTriples | null = null;
  /** A complete row for the generator to yield (STOP_ROW). */
  done: RowTriples | null = null;
  /** The row of the last entry read (-1 before the first). */
  row = -1;
  /** The index in `rows` of the next wanted row. */
  next = 0;
  keep = false;
  // The page being read: its window, levels, values and the next entry to read.
  w: Window | null = null;
  reps: Uint8Array | null = null;
  defs: Uint8Array | null = null;
  numValues = 0;
  i = 0;
  /** The rows starting in the page (for a read of some rows), and how many of them were reached. */
  pageStarts = 0;
  startsRead = 0;
  values: PageValues = NO_PAGE_VALUES;
  dict: Dictionary | null = null;
  previous: Buffer = EMPTY_BUFFER;
  expanded = 0;
  nextIndex = 0;
  boolByte = 0;
  boolBit = 8;

  constructor(
    readonly rows: readonly number[] | null,
    readonly last: number,
    readonly maxDef: number,
    readonly plain: PlainReader | null,
    readonly text: TextReader,
    readonly skipString: boolean,
  ) {}

  /** Start on a page's entries, from its first. */
  openEntries(w: Window, reps: Uint8Array | null, defs: Uint8Array | null, numValues: number, pageStarts: number, values: PageValues, dict: Dictionary | null): void {
    this.w = w;
    this.reps = reps;
    this.defs = defs;
    this.numValues = numValues;
    this.pageStarts = pageStarts;
    this.values = values;
    this.dict = dict;
    this.i = 0;
    this.startsRead = 0;
    this.previous = EMPTY_BUFFER;
    this.expanded = 0;
    this.nextIndex = 0;
    this.boolByte = 0;
    this.boolBit = 8;
  }
}

/**
 * Read the open page's entries from `s.i` on, collecting the wanted rows' triples, until a wanted
 * row is complete (STOP_ROW: it is in `s.done`, and the next call goes on with the entry that
 * starts the next row), the page ends, or the rest of the page holds no wanted row.
 */
function pageRowValues(s: LeafRead): number {
  const { rows, last, maxDef, plain, text, skipString, reps, defs, numValues, pageStarts, dict } = s;
  const w = s.w!;
  const { indices, boolRuns, decodedValues, lengths, prefixes } = s.values;
  let { cur, row, next, keep, startsRead, previous, expanded, nextIndex, boolByte, boolBit } = s;
  let stop = STOP_PAGE_END;
  let i = s.i;
  for (; i < numValues; i++) {
    const r = reps ? reps[i]! : 0;
    const d = defs ? defs[i]! : 0;
    if (r === 0) {
      // A new row starts: the previous wanted row is complete.
      if (cur) {
        s.done = cur;
        cur = null;
        stop = STOP_ROW;
        break;
      }
      row++;
      startsRead++;
      if (row > last) {
        w.close();
        stop = STOP_PAST_LAST;
        break;
      }
      keep = rows === null || (next < rows.length && rows[next] === row);
      if (keep) {
        cur = { reps: [], defs: [], vals: [] };
        next++;
      } else if (rows !== null && rows[next]! > row + pageStarts - startsRead) {
        // No wanted row starts in the rest of the page: the rest is not decompressed (a zstd page
        // streams, so its tail never is). Like a page skipped whole, its bytes are not checked.
        row += pageStarts - startsRead;
        w.close();
        stop = STOP_REST_SKIPPED;
        break;
      }
    }
    let v: unknown = undefined;
    if (d === maxDef) {
      if (indices) {
        const ix = indices[nextIndex++]!;
        if (keep) v = dict!.get(ix);
      } else if (lengths) {
        const len = lengths[nextIndex]!;
        if (len < 0) throw new ParquetFormatError('a negative string length');
        if (prefixes) {
          // Every value is needed to build the next one.
          const pre = prefixes[nextIndex]!;
          if (pre < 0 || pre > previous.length) throw new ParquetFormatError('a prefix longer than the previous value');
          checkStringLength(pre + stringLength(w, len));
          // Prefixes cost no bytes in the page: bound the bytes they expand to, or a small page could copy terabytes.
          expanded += pre + len;
          if (expanded > MAX_PAGE) throw new ParquetFormatError('prefix-encoded values of more than 2 GiB in one page');
          w.need(len, 'a string suffix');
          previous = Buffer.concat([previous.subarray(0, pre), w.buf.subarray(w.pos, w.pos + len)]);
          w.advance(len);
          if (keep) v = utf8(previous, 0, previous.length);
        } else if (keep) {
          stringLength(w, len);
          w.need(len, 'a string');
          v = text(w.buf, w.pos, w.pos + len);
          w.advance(len);
        } else w.skip(stringLength(w, len));
        nextIndex++;
      } else if (decodedValues) {
        v = decodedValues[nextIndex++];
      } else if (skipString && !keep) {
        // The common case, inlined: the length and bytes of a value nobody wants.
        let len: number;
        if (w.end - w.pos >= 4) {
          len = w.buf.readUInt32LE(w.pos);
          w.advance(4);
        } else len = w.u32('a string length');
        // (A window never holds more than the longest string: whatever passes here is no longer.)
        if (w.end - w.pos >= len) w.advance(len);
        else w.skip(stringLength(w, len));
      } else if (plain) {
        v = plain(w, keep);
      } else if (boolRuns) {
        v = boolRuns[nextIndex++] === 1;
      } else {
        if (boolBit === 8) {
          w.need(1, 'a boolean');
          boolByte = w.buf[w.pos]!;
          w.advance(1);
          boolBit = 0;
        }
        v = ((boolByte >> boolBit++) & 1) === 1;
      }
    }
    if (cur) {
      if (cur.reps.length >= MAX_ROW_VALUES) throw new ParquetFormatError(`a row of more than ${MAX_ROW_VALUES} values`);
      cur.reps.push(r);
      cur.defs.push(d);
      cur.vals.push(v);
    }
  }
  s.i = i;
  s.cur = cur;
  s.row = row;
  s.next = next;
  s.keep = keep;
  s.startsRead = startsRead;
  s.previous = previous;
  s.expanded = expanded;
  s.nextIndex = nextIndex;
  s.boolByte = boolByte;
  s.boolBit = boolBit;
  return stop;
}

/**
 * Stream `leaf`'s column chunk in one row group and yield the triples of each of `rows` (ascending
 * row numbers within the group), or of every row when `rows` is null. A generator, so that the
 * leaves of a column advance together row by row and only one row's values are held at a time.
 * Run it to its end: the row count is checked there. `starts` (row-starts.ts, with `rows` only): where
 * this leaf's rows start, so that a page holding none of `rows` is skipped before it is read; every
 * page read is checked against them. The pages are read here, their entries in pageRowValues.
 */
export function* leafRows(
  fd: number,
  codec: number,
  chunk: ChunkMeta,
  leaf: LeafColumn,
  numRows: number,
  rows: readonly number[] | null,
  starts: RowStarts | null = null,
  // Plain and length-prefixed string values of at least this many bytes come as Utf8Bytes.
  bytesFrom = Infinity,
): Generator<RowTriples, void, void> {
  const file = new ChunkFile(fd, chunk);
  const repWidth = bitWidth(leaf.maxRep);
  const defWidth = bitWidth(leaf.maxDef);
  const last = rows === null ? numRows - 1 : (rows[rows.length - 1] ?? -1);
  let dict: Dictionary | null = null;
  let seen = 0;
  const text = textReader(bytesFrom);
  const s = new LeafRead(rows, last, leaf.maxDef, leaf.kind === 'boolean' ? null : plainReader(leaf, text), text, leaf.kind === 'string');
  let dataPages = 0;
  outer: while (!file.done && seen < chunk.numValues) {
    const h = file.header();
    const type = num(h, 1, 'page type');
    const compressed = count(h, 3, 'compressed page size', MAX_PAGE);
    const uncompressed = count(h, 2, 'uncompressed page size', MAX_PAGE);
    if (type === PAGE.DICTIONARY) {
      if (dict || dataPages > 0) throw new ParquetFormatError('a dictionary page after the first page');
      dict = readDictionary(leaf, codec, file.pageBody(compressed, codec, uncompressed), h, uncompressed, file.window());
      continue;
    }
    if (type !== PAGE.DATA && type !== PAGE.DATA_V2) {
      file.skipBody(compressed); // index pages and unknown kinds carry no values
      continue;
    }
    dataPages++;
    const page = dataPageHeader(h, type, leaf, chunk.numValues - seen, compressed, uncompressed);
    const { numValues, encoding } = page;
    if (rows !== null && starts !== null && numValues > 0) {
      // The rows of the page's first and last entries, from the starts: none of them wanted (the row
      // it continues included), the body is neither read nor decompressed.
      const first = starts.rowOf(seen);
      const lastRow = starts.rowOf(seen + numValues - 1);
      if (!((s.cur !== null && first === s.row) || (s.next < rows.length && rows[s.next]! <= lastRow))) {
        file.skipBody(compressed);
        if (s.cur) {
          const complete = s.cur; // complete: this page starts a new row
          s.cur = null;
          yield complete;
        }
        s.row = lastRow;
        s.keep = false;
        seen += numValues;
        if (s.next >= rows.length) break;
        continue;
      }
    }
    if (page.v2) {
      const { pageRows } = page;
      if (s.row + pageRows >= numRows) throw new ParquetFormatError(`a page past the row group's ${numRows} rows`);
      // V2 pages start at row boundaries: a page with no wanted row is skipped undecompressed.
      if (rows !== null && (s.next >= rows.length || rows[s.next]! > s.row + pageRows)) {
        file.skipBody(compressed);
        s.row += pageRows;
        seen += numValues;
        if (s.row >= last) break;
        continue;
      }
    }
    const { reps, defs, w } = openPage(file, codec, page, leaf, compressed, uncompressed, repWidth, defWidth);
    if (reps) {
      checkLevels(reps, leaf.maxRep, 'repetition');
      // The chunk's first entry starts a row: a continuation there belongs to no row.
      if (numValues > 0 && reps[0] !== 0 && s.row < 0) throw new ParquetFormatError('the column chunk starts inside a row');
      starts?.check(reps, seen, numValues);
    }
    if (defs) checkLevels(defs, leaf.maxDef, 'definition');
    seen += numValues;
    // The rows starting in this page (for a read of some rows): its entries of repetition level 0
    // (every entry outside lists).
    let pageStarts = numValues;
    if (reps && rows !== null) {
      pageStarts = 0;
      for (let i = 0; i < numValues; i++) if (reps[i] === 0) pageStarts++;
    }
    if (rows !== null) {
      // A page none of whose rows is wanted: its values are never decompressed (of a v1 page, only
      // the levels at its front were). The rows starting here are the entries of repetition level 0;
      // a first entry above 0 continues the row before, which must not be a wanted one.
      const continues = reps !== null && reps[0] !== 0;
      if (!(continues && s.cur)) {
        if (s.next >= rows.length || rows[s.next]! > s.row + pageStarts) {
          w.close();
          if (s.cur) {
            const complete = s.cur; // complete: this page starts a new row
            s.cur = null;
            yield complete;
          }
          if (s.next >= rows.length) break;
          s.row += pageStarts;
          s.keep = false;
          continue;
        }
      }
    }
    const maxDef = leaf.maxDef;
    let present = 0;
    if (defs) for (let i = 0; i < numValues; i++) present += defs[i] === maxDef ? 1 : 0;
    else present = numValues;
    s.openEntries(w, reps, defs, numValues, pageStarts, pageValues(w, encoding, leaf, dict, present), dict);
    for (;;) {
      const stop = pageRowValues(s);
      if (stop === STOP_ROW) {
        const complete = s.done!;
        s.done = null;
        yield complete;
        continue;
      }
      if (stop === STOP_PAST_LAST) break outer;
      if (stop === STOP_REST_SKIPPED) continue outer;
      break;
    }
    w.finish('values');
  }
  if (s.cur) yield s.cur;
  // Read to the end (not stopped after the last wanted row): the pages hold what the footer says.
  if (rows === null && seen !== chunk.numValues) throw new ParquetFormatError(`pages hold ${seen} values, the column chunk ${chunk.numValues}`);
  if (rows === null && !file.done) throw new ParquetFormatError('bytes after the last page of the column chunk');
  if (rows === null ? s.row + 1 !== numRows : s.next !== rows.length) {
    throw new ParquetFormatError(`column ${leaf.path.join('.')} has ${s.row + 1} rows, the row group ${numRows}`);
  }
}

/**
 * Where rows 0..`through` start in `leaf`'s column chunk, and where the row after them starts (or the
 * chunk's entry count when `through` is its last row): row-starts.ts. Read from the repetition levels
 * of the data pages up to there, checked as leafRows checks them; values and dictionaries are
 * skipped, a v1 page is decompressed only as far as its levels. For a leaf inside a list: the guide
 * whose starts the other leaves of the list use. Only rows up to a wanted one are located, so the
 * array is bounded by the rows a caller asks for, never by what a footer claims.
 */
export function rowStartsOf(fd: number, chunk: ChunkMeta, leaf: LeafColumn, numRows: number, through: number): RowStarts {
  if (leaf.maxRep === 0) return RowStarts.identity(numRows);
  if (!(through >= 0 && through < numRows)) throw new RangeError(`row ${through} of ${numRows}`);
  const file = new ChunkFile(fd, chunk);
  const repWidth = bitWidth(leaf.maxRep);
  // Starts of rows 0..through+1 (the last one: where the row after them starts).
  const starts = new Float64Array(through + 2);
  let rows = 0;
  let seen = 0;
  scan: while (!file.done && seen < chunk.numValues) {
    const h = file.header();
    const type = num(h, 1, 'page type');
    const compressed = count(h, 3, 'compressed page size', MAX_PAGE);
    const uncompressed = count(h, 2, 'uncompressed page size', MAX_PAGE);
    if (type !== PAGE.DATA && type !== PAGE.DATA_V2) {
      file.skipBody(compressed); // dictionary, index and unknown pages hold no levels
      continue;
    }
    const page = dataPageHeader(h, type, leaf, chunk.numValues - seen, compressed, uncompressed);
    const { numValues } = page;
    const reps = new Uint8Array(numValues);
    if (!page.v2) {
      const w = new Window(inflater(chunk.codec, file.pageBody(compressed, chunk.codec, uncompressed), uncompressed), uncompressed, file.window());
      w.runs(repWidth, reps, 'repetition levels');
      w.close();
    } else {
      if (page.repLen > compressed) throw new ParquetFormatError('levels longer than the page');
      decodeHybrid(file.body(compressed).subarray(0, page.repLen), repWidth, numValues, reps, true);
    }
    checkLevels(reps, leaf.maxRep, 'repetition');
    if (numValues > 0 && reps[0] !== 0 && seen === 0) throw new ParquetFormatError('the column chunk starts inside a row');
    for (let i = 0; i < numValues; i++) {
      if (reps[i] !== 0) continue;
      if (rows >= numRows) throw new ParquetFormatError(`column ${leaf.path.join('.')} has more rows than the row group's ${numRows}`);
      starts[rows++] = seen + i;
      if (rows === through + 2) break scan;
    }
    seen += numValues;
  }
  if (rows === through + 2) return RowStarts.of(starts, through + 1);
  // The chunk ended first: it must hold exactly the row group's rows, and its row `through` ends with it.
  if (seen !== chunk.numValues) throw new ParquetFormatError(`pages hold ${seen} values, the column chunk ${chunk.numValues}`);
  if (rows !== numRows) throw new ParquetFormatError(`column ${leaf.path.join('.')} has ${rows} rows, the row group ${numRows}`);
  starts[through + 1] = seen;
  return RowStarts.of(starts, through + 1);
}

/**
 * What checkPages looks at beyond the headers. `levels`: decode every page's repetition and
 * definition levels and refuse those above their maximum (v1 pages keep them at the front of the
 * compressed body: a streamed page is decompressed only that far). Whatever the options, a page
 * that declares more than the longest string (a string page, or a string dictionary) is streamed
 * through its value lengths, checked before their bytes are expanded and skipped.
 */
export interface PageChecks {
  levels: boolean;
}

/** The lengths of `n` PLAIN strings in the window, each checked (stringLength), their bytes skipped. */
function skipStrings(w: Window, n: number): void {
  for (let i = 0; i < n; i++) w.skip(stringLength(w, w.u32('a string length')));
}

/**
 * Every page header of `chunk` checked as the reader checks it before reading a body (counts, level
 * lengths, declared sizes against what the values can take and against the codec's expansion,
 * dictionary sizes), and the bodies only as far as `checks` asks (PageChecks): cheap enough to run
 * before a reader that trusts these sizes (parquet-wasm, DuckDB) is handed the chunk. Throws what
 * the reader would.
 */
export function checkPages(fd: number, chunk: ChunkMeta, leaf: LeafColumn, checks: PageChecks): void {
  const file = new ChunkFile(fd, chunk);
  const repWidth = bitWidth(leaf.maxRep);
  const defWidth = bitWidth(leaf.maxDef);
  const levels = checks.levels && (leaf.maxRep > 0 || leaf.maxDef > 0);
  let seen = 0;
  while (!file.done && seen < chunk.numValues) {
    const h = file.header();
    const type = num(h, 1, 'page type');
    const compressed = count(h, 3, 'compressed page size', MAX_PAGE);
    const uncompressed = count(h, 2, 'uncompressed page size', MAX_PAGE);
    // A page no longer than the longest string cannot hold a string too long for one.
    const giant = leaf.kind === 'string' && uncompressed > MAX_STRING_BYTES;
    if (type === PAGE.DICTIONARY) {
      const n = dictionaryHeader(leaf, h, uncompressed);
      checkDeclaredSize(chunk.codec, compressed, uncompressed);
      if (!giant) file.skipBody(compressed);
      else {
        const w = new Window(inflater(chunk.codec, file.pageBody(compressed, chunk.codec, uncompressed), uncompressed), uncompressed, file.window());
        skipStrings(w, n);
        w.close();
      }
      continue;
    }
    if (type !== PAGE.DATA && type !== PAGE.DATA_V2) {
      file.skipBody(compressed);
      continue;
    }
    const page = dataPageHeader(h, type, leaf, chunk.numValues - seen, compressed, uncompressed);
    const { numValues } = page;
    const lv = page.repLen + page.defLen;
    checkDeclaredSize(page.isCompressed ? chunk.codec : 0, compressed - lv, uncompressed - lv);
    seen += numValues;
    const strings = giant && page.encoding === ENC.PLAIN;
    if (!levels && !strings) {
      file.skipBody(compressed);
      continue;
    }
    let reps: Uint8Array | null = null;
    let defs: Uint8Array | null = null;
    let w: Window | null = null;
    if (!page.v2) {
      w = new Window(inflater(chunk.codec, file.pageBody(compressed, chunk.codec, uncompressed), uncompressed), uncompressed, file.window());
      if (leaf.maxRep > 0) w.runs(repWidth, (reps = new Uint8Array(numValues)), 'repetition levels');
      if (leaf.maxDef > 0) w.runs(defWidth, (defs = new Uint8Array(numValues)), 'definition levels');
    } else {
      const body = file.body(compressed, page.isCompressed && decodesWhole(chunk.codec, uncompressed - lv));
      if (leaf.maxRep > 0) decodeHybrid(body.subarray(0, page.repLen), repWidth, numValues, (reps = new Uint8Array(numValues)), true);
      if (leaf.maxDef > 0) decodeHybrid(body.subarray(page.repLen, lv), defWidth, numValues, (defs = new Uint8Array(numValues)), true);
      if (strings) w = new Window(inflater(page.isCompressed ? chunk.codec : 0, body.subarray(lv), uncompressed - lv), uncompressed - lv, file.window());
    }
    if (reps) checkLevels(reps, leaf.maxRep, 'repetition');
    if (defs) checkLevels(defs, leaf.maxDef, 'definition');
    if (w && strings) {
      let present = numValues;
      if (defs) for (let i = 0; i < numValues; i++) if (defs[i] !== leaf.maxDef) present--;
      skipStrings(w, present);
    }
    w?.close();
  }
}

/**
 * The largest declared page of `chunk` that its codec may hold whole (mayHoldWhole), 0 when there is
 * none (zstd, uncompressed, brotli over 4 MiB): what reading the chunk holds at once, at least. Only page headers are
 * read. A caller may use it to keep two readers from holding such pages at the same time.
 */
export function largestWholePage(fd: number, chunk: ChunkMeta): number {
  if (!mayHoldWhole(chunk.codec, 0)) return 0;
  const file = new ChunkFile(fd, chunk);
  let largest = 0;
  while (!file.done) {
    const h = file.header();
    const size = count(h, 2, 'uncompressed page size', MAX_PAGE);
    if (mayHoldWhole(chunk.codec, size)) largest = Math.max(largest, size);
    file.skipBody(count(h, 3, 'compressed page size', MAX_PAGE));
  }
  return largest;
}

/** What the first data pages of a chunk show of its page size. */
export interface DataPageSample {
  /** The file offset of the first data page's header (past any dictionary page). */
  start: number;
  /** The median bytes in the file (header and body) of the data pages read. */
  pageBytes: number;
  /** The median uncompressed size they declare. */
  uncompressed: number;
}

/**
 * The first `upTo` data pages of `chunk`, past any dictionary or index page; null when the chunk has
 * none. Only page headers are read. Their median size against the whole chunk tells about how many
 * rows a page holds (split-decode.ts); a median, because a writer's first data page is often unlike
 * the rest (pyarrow's holds dictionary indexes before it falls back to plain values).
 */
export function sampleDataPages(fd: number, chunk: ChunkMeta, upTo: number): DataPageSample | null {
  const file = new ChunkFile(fd, chunk);
  let start = -1;
  const bytes: number[] = [];
  const sizes: number[] = [];
  while (!file.done && bytes.length < upTo) {
    const at = file.at;
    const h = file.header();
    const type = num(h, 1, 'page type');
    const compressed = count(h, 3, 'compressed page size', MAX_PAGE);
    const uncompressed = count(h, 2, 'uncompressed page size', MAX_PAGE);
    file.skipBody(compressed);
    if (type !== PAGE.DATA && type !== PAGE.DATA_V2) continue;
    if (start < 0) start = at;
    bytes.push(file.at - at);
    sizes.push(uncompressed);
  }
  if (start < 0) return null;
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  return { start, pageBytes: median(bytes), uncompressed: median(sizes) };
}
