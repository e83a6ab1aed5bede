// Streaming decompression of one page body into a caller's buffer, so a page of hundreds of MB
// (DuckDB writes a few pages per column chunk) never has to exist whole in memory.
// zstd: the zstd-napi native addon when it loads (about 1.1 GB/s per core here), else fzstd in pure
// JS (about 0.25 GB/s). Both produce the same bytes; only the speed differs.
import { createRequire } from 'node:module';
import { Unsupported } from './meta.js';
import { ParquetFormatError } from './thrift.js';

export interface Inflater {
  /** Fill `dst` from the start; returns the bytes written, 0 once the body is exhausted. */
  read(dst: Uint8Array): number;
  /** Done with this body, read to its end or not: give back what it holds (a zstd context). */
  close(): void;
}

export const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, ZSTD: 6 } as const;

class Plain implements Inflater {
  private pos = 0;
  constructor(private readonly src: Uint8Array) {}
  close(): void {}
  read(dst: Uint8Array): number {
    const n = Math.min(dst.length, this.src.length - this.pos);
    dst.set(this.src.subarray(this.pos, this.pos + n));
    this.pos += n;
    return n;
  }
}

type StreamResult = [ret: number, produced: number, consumed: number];
interface NativeDCtx {
  decompressStream(dst: Uint8Array, src: Uint8Array): StreamResult;
  reset(directive: number): void;
}
interface ZstdNapiBinding {
  DCtx: new () => NativeDCtx;
  ResetDirective: { sessionOnly: number };
}

let native: ZstdNapiBinding | null | undefined;
/** The zstd-napi binding, or null when the optional addon is not installed or failed to build. */
function nativeZstd(): ZstdNapiBinding | null {
  if (native === undefined) {
    try {
      if (process.env.DIVERGENCE_MINE_ZSTD === 'js') throw new Error('disabled');
      native = createRequire(import.meta.url)('zstd-napi/binding') as ZstdNapiBinding;
    } catch {
      native = null;
    }
  }
  return native;
}

/**
 * Decompression contexts not in use. Each page being read needs its own (the leaves of a column are
 * read in step, so several pages are open at once); a finished page gives its context back.
 */
const idle: NativeDCtx[] = [];

class NativeZstd implements Inflater {
  private pos = 0;
  private done = false;
  private ctx: NativeDCtx;
  constructor(
    private readonly src: Uint8Array,
    binding: ZstdNapiBinding,
    private readonly sessionOnly: number,
  ) {
    this.ctx = idle.pop() ?? new binding.DCtx();
    this.ctx.reset(sessionOnly); // a new frame
  }
  private finish(): void {
    this.done = true;
    idle.push(this.ctx);
  }
  close(): void {
    if (!this.done) this.finish();
  }
  read(dst: Uint8Array): number {
    let out = 0;
    while (out < dst.length && !this.done) {
      if (this.pos >= this.src.length) {
        this.finish();
        break;
      }
      let r: StreamResult;
      try {
        r = this.ctx.decompressStream(dst.subarray(out), this.src.subarray(this.pos));
      } catch (e) {
        throw new ParquetFormatError(`zstd: ${(e as Error).message}`);
      }
      const [ret, produced, consumed] = r;
      out += produced;
      this.pos += consumed;
      // A frame ended: more frames may follow in the same page (concatenated frames are valid zstd).
      if (ret === 0 && this.pos < this.src.length) this.ctx.reset(this.sessionOnly);
      if (produced === 0 && consumed === 0) {
        if (ret !== 0) throw new ParquetFormatError('zstd: truncated frame');
        if (this.pos >= this.src.length) this.finish();
      }
    }
    return out;
  }
}

type FzstdDecompress = new (ondata: (data: Uint8Array, final?: boolean) => void) => { push(chunk: Uint8Array, final?: boolean): void };
let fz: FzstdDecompress | undefined;

class JsZstd implements Inflater {
  private readonly queue: Uint8Array[] = [];
  private head = 0;
  private pos = 0;
  private readonly d: { push(chunk: Uint8Array, final?: boolean): void };
  constructor(private readonly src: Uint8Array) {
    fz ??= (createRequire(import.meta.url)('fzstd') as { Decompress: FzstdDecompress }).Decompress;
    this.d = new fz((data) => {
      if (data.length > 0) this.queue.push(data.slice());
    });
  }
  close(): void {}
  read(dst: Uint8Array): number {
    let out = 0;
    while (out < dst.length) {
      if (this.queue.length === 0) {
        if (this.pos >= this.src.length) break;
        const end = Math.min(this.src.length, this.pos + 65536);
        try {
          this.d.push(this.src.subarray(this.pos, end), end === this.src.length);
        } catch (e) {
          throw new ParquetFormatError(`zstd: ${(e as Error).message}`);
        }
        this.pos = end;
        continue;
      }
      const q = this.queue[0]!;
      const n = Math.min(dst.length - out, q.length - this.head);
      dst.set(q.subarray(this.head, this.head + n), out);
      out += n;
      this.head += n;
      if (this.head === q.length) {
        this.queue.shift();
        this.head = 0;
      }
    }
    return out;
  }
}

export function inflater(codec: number, src: Uint8Array): Inflater {
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      return new Plain(src);
    case CODEC.ZSTD: {
      const z = nativeZstd();
      if (z) return new NativeZstd(src, z, z.ResetDirective.sessionOnly);
      return new JsZstd(src);
    }
    default:
      throw new Unsupported(`compression codec ${codec}`);
  }
}
