// A string value handed over undecoded: its UTF-8 bytes, checked to be UTF-8 and copied out of the
// page. A caller that only passes a long string on (the miner spills a tool result's content as its
// UTF-8) would otherwise pay for decoding it and encoding it again, which for text holding one
// non-ASCII character runs at about 250 and 650 MB/s on Node 20, against a copy at 10 GB/s.
// readRows hands a leaf's strings over this way only when its caller asks for it (ReadOptions).
export class Utf8Bytes {
  /** Bytes [start, end) of `buf`, which no one writes again (Utf8Arena below). */
  constructor(
    private readonly buf: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  /** The whole of `b`, which no one writes again. */
  static of(b: Buffer): Utf8Bytes {
    return new Utf8Bytes(b, 0, b.length);
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Copies the bytes to `target` at `at`. */
  copyTo(target: Uint8Array, at: number): void {
    this.buf.copy(target, at, this.start, this.end);
  }

  /** The bytes, as a view. */
  get bytes(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }

  /** The string itself (valid UTF-8 decodes and encodes back to these very bytes). */
  text(): string {
    return this.buf.toString('utf8', this.start, this.end);
  }
}

/** Bytes per arena: values are copied end to end into one, so that each costs no Buffer of its own. */
const ARENA = 1 << 20;

/**
 * Copies of values, end to end in buffers that are only ever appended to: a Utf8Bytes stays valid for
 * as long as it is held, and an arena is garbage once none of its values is.
 */
export class Utf8Arena {
  private buf = Buffer.allocUnsafe(0);
  private used = 0;

  /** A copy of `b[start, end)`. */
  copy(b: Buffer, start: number, end: number): Utf8Bytes {
    const n = end - start;
    if (n > ARENA / 4) return Utf8Bytes.of(Buffer.from(b.subarray(start, end)));
    if (this.used + n > this.buf.length) {
      this.buf = Buffer.allocUnsafeSlow(ARENA);
      this.used = 0;
    }
    b.copy(this.buf, this.used, start, end);
    const v = new Utf8Bytes(this.buf, this.used, this.used + n);
    this.used += n;
    return v;
  }
}
