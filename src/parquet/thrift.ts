// Thrift compact protocol, decoding only: parquet's footer and page headers. A struct decodes to
// an object keyed by field id; the callers (meta.ts, pages.ts) name the fields they use.

/** Thrown for bytes that cannot be a valid structure: the callers turn it into a corrupt-file error. */
export class ParquetFormatError extends Error {}

/** The bytes end inside a structure: a page-header reader may retry with more bytes (column.ts). */
export class ThriftEndError extends ParquetFormatError {}

export type ThriftValue = boolean | number | Uint8Array | ThriftValue[] | ThriftStruct | Map<ThriftValue, ThriftValue>;
export interface ThriftStruct {
  [field: number]: ThriftValue | undefined;
}

/** Structs and collections nested deeper than this are corrupt (parquet's own are at most 4 deep). */
const MAX_DEPTH = 64;

/** The kind of a decoded value, for telling a repeated field of another type. */
function kindOf(v: ThriftValue): string {
  if (v instanceof Uint8Array) return 'binary';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'map';
  return typeof v;
}

export class ThriftReader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos;
  }

  private byte(): number {
    if (this.pos >= this.buf.length) throw new ThriftEndError('thrift: read past the end');
    return this.buf[this.pos++]!;
  }

  /** Unsigned varint as a double: exact up to 2^53, enough for every size and offset in a file. */
  varint(): number {
    let r = 0;
    let m = 1;
    for (let i = 0; i < 10; i++) {
      const x = this.byte();
      r += (x & 0x7f) * m;
      if ((x & 0x80) === 0) return r;
      m *= 128;
    }
    throw new ParquetFormatError('thrift: varint longer than 10 bytes');
  }

  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  private left(): number {
    return this.buf.length - this.pos;
  }

  /** A bool inside a list, set or map takes a byte of its own (1 = true; 0 and 2 are false, as parquet-rs reads them). */
  private element(type: number, depth: number): ThriftValue {
    return type === 1 || type === 2 ? this.byte() === 1 : this.value(type, depth);
  }

  private value(type: number, depth: number): ThriftValue {
    if (depth > MAX_DEPTH) throw new ParquetFormatError('thrift: nesting too deep');
    switch (type) {
      case 1:
        return true;
      case 2:
        return false;
      case 3: {
        const v = this.byte();
        return v > 127 ? v - 256 : v;
      }
      case 4:
      case 5:
      case 6:
        return this.zigzag();
      case 7: {
        if (this.left() < 8) throw new ThriftEndError('thrift: read past the end');
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case 8: {
        const n = this.varint();
        if (n > this.left()) throw new ThriftEndError('thrift: binary past the end');
        const v = this.buf.subarray(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case 9:
      case 10: {
        const h = this.byte();
        let n = h >> 4;
        const et = h & 15;
        if (n === 15) n = this.varint();
        // Every element takes at least one byte (a bool too, inside a list): a larger count cannot be real.
        // Checked before the loop, so a claimed 2^30 elements fails at once instead of after 2^30 pushes.
        if (n > this.left()) throw new ThriftEndError(`thrift: list of ${n} elements in ${this.left()} bytes`);
        if (n > 0 && (et === 0 || et > 12)) throw new ParquetFormatError(`thrift: list of unknown element type ${et}`);
        const out: ThriftValue[] = [];
        for (let i = 0; i < n; i++) out.push(this.element(et, depth + 1));
        return out;
      }
      case 11: {
        const n = this.varint();
        const m = new Map<ThriftValue, ThriftValue>();
        if (n === 0) return m; // an empty map has no key/value type byte
        // The type byte, then at least a byte per key and a byte per value.
        if (2 * n + 1 > this.left()) throw new ThriftEndError(`thrift: map of ${n} entries in ${this.left()} bytes`);
        const kv = this.byte();
        for (let i = 0; i < n; i++) {
          const k = this.element(kv >> 4, depth + 1);
          m.set(k, this.element(kv & 15, depth + 1));
        }
        return m;
      }
      case 12:
        return this.struct(depth + 1);
      default:
        throw new ParquetFormatError(`thrift: unknown field type ${type}`);
    }
  }

  struct(depth = 0): ThriftStruct {
    if (depth > MAX_DEPTH) throw new ParquetFormatError('thrift: nesting too deep');
    const o: ThriftStruct = {};
    let id = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return o;
      const d = h >> 4;
      id = d ? id + d : this.zigzag();
      const v = this.value(h & 15, depth);
      // A field given twice as two different types: readers differ on which one counts (the last of
      // the same type wins, as in DuckDB's and parquet-rs's decoders).
      if (o[id] !== undefined && kindOf(o[id]!) !== kindOf(v)) throw new ParquetFormatError(`thrift: field ${id} given twice, as two types`);
      o[id] = v;
    }
  }
}

// Typed field access: a missing or mistyped required field is a format error.
// Integers only: a double or a varint past 2^53 in an integer field is as corrupt as a missing one.
export function num(s: ThriftStruct, f: number, what: string): number {
  const v = s[f];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new ParquetFormatError(`missing ${what}`);
  return v;
}
export function optNum(s: ThriftStruct, f: number): number | undefined {
  const v = s[f];
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
}
/** A count or size: an integer in 0..max (a negative one would turn a bound check around). */
export function count(s: ThriftStruct, f: number, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const v = num(s, f, what);
  if (v < 0 || v > max) throw new ParquetFormatError(`${what} ${v} outside 0..${max}`);
  return v;
}
/** Whether a decoded value is a struct (not a binary, list or map). */
export function isStruct(v: ThriftValue | undefined): v is ThriftStruct {
  return v !== undefined && typeof v === 'object' && !(v instanceof Uint8Array) && !Array.isArray(v) && !(v instanceof Map);
}
export function struct(s: ThriftStruct, f: number): ThriftStruct | undefined {
  const v = s[f];
  return isStruct(v) ? v : undefined;
}
/** The struct entries of a list field (entries of another type left out). */
export function structs(s: ThriftStruct, f: number): ThriftStruct[] {
  return list(s, f).filter(isStruct);
}
export function list(s: ThriftStruct, f: number): ThriftValue[] {
  const v = s[f];
  return Array.isArray(v) ? v : [];
}
const utf8 = new TextDecoder();
export function str(s: ThriftStruct, f: number): string | undefined {
  const v = s[f];
  return v instanceof Uint8Array ? utf8.decode(v) : undefined;
}
