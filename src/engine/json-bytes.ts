// JSON text written straight into one growing buffer as UTF-8, with strings taken either as JS strings
// or as the UTF-8 bytes they already are (a spill record's fields): the latter are escaped byte by
// byte, exactly as JSON.stringify escapes the string they decode to, at about twice the speed of
// decoding them, JSON.stringify and encoding again (bench/README.md). Only well-formed UTF-8 may be
// given as bytes: a lone surrogate, which JSON.stringify escapes, has no UTF-8 (spill.ts keeps such a
// field as UTF-16LE, and it goes by the string path).

/** Per byte: 0 copied as is; else the second byte of its short escape, or 117 ('u') for \u00XX. */
const ESCAPE = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) ESCAPE[c] = 117;
ESCAPE[8] = 98; // \b
ESCAPE[9] = 116; // \t
ESCAPE[10] = 110; // \n
ESCAPE[12] = 102; // \f
ESCAPE[13] = 114; // \r
ESCAPE[34] = 34; // \"
ESCAPE[92] = 92; // \\
const HEX = Buffer.from('0123456789abcdef');

/** Fields up to this many bytes get room for their worst case (6 bytes per byte) without a count. */
const ROOM_WITHOUT_COUNT = 1 << 20;

export class JsonBytes {
  private buf: Buffer;
  /** Bytes written so far. */
  used = 0;

  constructor(private readonly keep: number) {
    this.buf = Buffer.allocUnsafe(keep);
  }

  /** Room for `n` more bytes. */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.used + n, 2 * this.buf.length));
    this.buf.copy(bigger, 0, 0, this.used);
    this.buf = bigger;
  }

  /** JSON text or punctuation already written, ASCII only (keys, brackets). */
  ascii(s: string): void {
    this.room(s.length);
    this.used += this.buf.write(s, this.used, 'latin1');
  }

  /** JSON.stringify(v); false (nothing written) where JSON.stringify gives undefined. */
  value(v: unknown): boolean {
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) return false;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; a long text is measured instead.
    this.room(json.length <= ROOM_WITHOUT_COUNT ? 3 * json.length : Buffer.byteLength(json, 'utf8'));
    this.used += this.buf.write(json, this.used, 'utf8');
    return true;
  }

  /** `,"key":` and JSON.stringify(v), as an object member JSON.stringify writes after another; nothing where it gives undefined. */
  member(key: string, v: unknown): void {
    const at = this.used;
    this.ascii(`,${JSON.stringify(key)}:`);
    if (!this.value(v)) this.used = at;
  }

  /** JSON.stringify of the string whose well-formed UTF-8 is `src[start, end)`, from the bytes. */
  utf8String(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    let need = 6 * n + 2;
    if (n > ROOM_WITHOUT_COUNT) {
      need = n + 2;
      for (let i = start; i < end; i++) {
        const e = ESCAPE[src[i]!]!;
        if (e !== 0) need += e === 117 ? 5 : 1;
      }
    }
    this.room(need);
    const out = this.buf;
    let o = this.used;
    out[o++] = 34;
    for (let i = start; i < end; i++) {
      const c = src[i]!;
      const e = ESCAPE[c]!;
      if (e === 0) {
        out[o++] = c;
        continue;
      }
      out[o++] = 92;
      out[o++] = e;
      if (e === 117) {
        out[o++] = 48;
        out[o++] = 48;
        out[o++] = HEX[c >> 4]!;
        out[o++] = HEX[c & 15]!;
      }
    }
    out[o++] = 34;
    this.used = o;
  }

  /** The bytes written, in a buffer of their own; the writer starts again (back to its first size after a large text). */
  take(): Uint8Array {
    const out = new Uint8Array(this.used);
    out.set(this.buf.subarray(0, this.used));
    this.used = 0;
    if (this.buf.length > this.keep) this.buf = Buffer.allocUnsafe(this.keep);
    return out;
  }
}
