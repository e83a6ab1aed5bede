// Decompression of one page body, read by the caller through a small window (column.ts), for every
// parquet codec but LZO. The page header's `uncompressed_page_size` is a claim, not a fact: no codec
// produces a byte past it, and a body that decompresses to more or fewer bytes is a corrupt page.
// A declared size above what the codec can expand the body to is refused before anything is
// allocated for it.
//
// Memory per open page (one per leaf being read), and the library doing the work:
// - UNCOMPRESSED: nothing beyond the compressed body.
// - ZSTD: streamed, the frame's window (2 MiB in DuckDB's pages) plus the caller's window, the compressed body read from
//   the file a step at a time (StreamedBody). zstd-napi native (about 1.7 GB/s per core here),
//   else fzstd in pure JS (about 0.25 GB/s).
// - GZIP: pages declaring up to 64 MiB are inflated whole by node:zlib (`unzipSync`, which accepts
//   gzip and the raw zlib some old writers used, as Arrow does), bounded by `maxOutputLength`;
//   larger pages are streamed through fflate in 16 KiB input steps, so a bomb holds at most about
//   16 MiB (deflate expands at most 1032x) whatever it declares.
// - BROTLI: pages declaring up to 4 MiB are decoded whole by node:zlib (one-shot, bounded by
//   `maxOutputLength`, at most 4096x the body: real data is 5-50x); larger pages stream through
//   brotli-wasm 3.0.1's DecompressStream (the Rust brotli decoder compiled to wasm, synchronous) in
//   64 KiB steps of input and of output: memory holds the stream's window (at most 16 MiB) and a
//   step, whatever the page declares, so no ratio cap is needed there. node:zlib is the faster of the
//   two on real pages (0.65 against 0.38 GB/s on pyarrow's brotli pages, bench/brotli-paths.mjs).
//   Both refuse bytes after the end of the stream. DIVERGENCE_MINE_BROTLI=stream / =whole force
//   one path for every page (tests).
// - LZ4 in the legacy Hadoop framing ([u32 BE output size][u32 BE block size][block], repeated):
//   frame by frame as the page is read, each frame one raw block decoded on its own: memory holds
//   one frame's output (256 KiB from Hadoop's codec), its sizes checked against the bytes behind it,
//   the page's remaining declared size and 255x its block before it is allocated. A page that is not
//   a complete chain of frames is one raw block (like Arrow C++ and parquet-rs), decoded whole.
//   (Arrow C++ falls back to the raw block also when a frame fails to decode; here a complete chain
//   of frame headers is taken as framed, and a frame that fails is a corrupt page: a raw block whose
//   bytes also chain up exactly to the declared size is read as framed.)
// - SNAPPY, LZ4_RAW (one raw block), unframed LZ4: block formats with no streaming decoder in any
//   of the libraries: the whole declared page is held, which the codec's maximum expansion bounds
//   (snappy 64 bytes per 3-byte copy; LZ4 255 bytes per byte: at most 255x the body plus 64 bytes)
//   and never over 2 GiB.
//   LZ4: lz4-napi when its native addon loads (1.3 GB/s on a 4 MB page of trajectory JSON, 0.6
//   GB/s with the size prefix it needs copied in), else lz4js (0.24 GB/s); same bytes either way.
//   Snappy: `snappy` (napi-rs 7.4.3, the snap crate) when its prebuilt addon loads, about 1.5 GB/s
//   on pyarrow's 1-2 MB pages of trajectory JSON against 0.4 GB/s for snappyjs; else snappyjs.
//   (@napi-rs/snappy 1.0.2, the old name, crashed the process with SIGSEGV when a worker thread that
//   had loaded it exited; 7.4.3 does not: 60 worker exits and terminations in a row.) Its output
//   is copied into a V8 Buffer: the decoder's own buffer, if kept, is freed only when the event
//   loop turns, which a synchronous read never lets happen (RSS grew by 1 GB on 1 MB pages). Pages
//   of 32 MiB and more go to snappyjs, which writes into one buffer (the copy would hold such a
//   page twice), and is as fast there (page faults dominate: 1.1 CPU-s for a 379 MB page either way).
// Whole pages and their compressed bodies: bodies of pages decoded whole share one buffer per
// thread (column.ts), and a decoded page of 64 MiB or more is collected as soon as it is read
// (releaseLarge): DuckDB writes 380 MB pages, and V8 would otherwise keep the last one beside the
// next. Gzip: node:zlib 0.13 GB/s, fflate 0.06 GB/s (one-shot, whose result node:zlib concatenates
// from chunks: a gzip page decoded whole is held about twice while it is decoded).
// DIVERGENCE_MINE_ZSTD / _LZ4 / _SNAPPY = js force the pure-JS decoder; DIVERGENCE_MINE_GZIP=stream forces
// the fflate path for every gzip page (tests).
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as zlib from 'node:zlib';
import { brotliDecompressSync, unzipSync, type BrotliOptions } from 'node:zlib';
import { Unsupported } from './meta.js';
import { ParquetFormatError } from './thrift.js';

/**
 * A page body the decoder reads front to back as it goes (streamsBody): the caller reads it from the
 * file a chunk at a time, so memory holds one chunk, never the compressed page, and the decoder's
 * input stays in the CPU's cache (a 100 MB body read whole, then decompressed, runs at a third of
 * the speed: bench/README.md).
 */
export interface StreamedBody {
  readonly length: number;
  /** The body's bytes from `pos` on, as many as are at hand (at least one while pos < length); valid until the next call. */
  at(pos: number): Uint8Array;
}

/** A page body: all of it in memory, or streamed. */
export type Body = Uint8Array | StreamedBody;

/** Bytes `pos` to at most `end` of a body (fewer when a streamed body has fewer at hand: at least one while pos < end). */
function bytesOf(src: Body, pos: number, end: number): Uint8Array {
  if (src instanceof Uint8Array) return src.subarray(pos, end);
  const v = src.at(pos);
  return v.length > end - pos ? v.subarray(0, end - pos) : v;
}

/** A body a decoder needs whole: only streamsBody's codecs may be given a streamed one. */
function wholeBody(src: Body, name: string): Uint8Array {
  if (src instanceof Uint8Array) return src;
  throw new Error(`${name}: a streamed page body given to a decoder that needs it whole`);
}

export interface Inflater {
  /** Fill `dst` from the start; returns the bytes written, 0 once the body is exhausted. */
  read(dst: Uint8Array): number;
  /** Done with this body, read to its end or not: give back what it holds (a zstd context). */
  close(): void;
  /**
   * The whole decompressed body, where the decoder holds it at once (a page decoded whole) and none
   * of it was read yet: the caller then reads it in place, and for `read` it is all read. Null otherwise.
   */
  takeWhole?(): Uint8Array | null;
}

export const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, LZO: 3, BROTLI: 4, LZ4: 5, ZSTD: 6, LZ4_RAW: 7 } as const;
const CODEC_NAME = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];

export function codecName(codec: number): string {
  return CODEC_NAME[codec] ?? `number ${codec}`;
}

/** Largest gzip page inflated in one call; larger ones stream (see the top). */
const GZIP_WHOLE = 64 * 2 ** 20;
/** Largest brotli page decoded whole by node:zlib; larger ones stream through brotli-wasm (see the top). */
const BROTLI_WHOLE = 4 * 2 ** 20;
/** brotli-wasm step: input bytes fed and output bytes asked for per call. */
const BROTLI_STEP = 64 * 1024;
/** fflate input step: bounds what one step can produce (1032x) for a streamed gzip page. */
const GZIP_STEP = 16 * 1024;
/**
 * Snappy pages from this size on go to snappyjs (see the top): the native decoder's output is
 * copied into a JS Buffer (its own buffer, kept as is, is freed only once the event loop turns,
 * which a synchronous read never lets happen), so it holds a large page twice, and on such pages
 * it is no faster (page faults dominate: 1.1 CPU-s for a 379 MB page either way).
 */
const SNAPPY_NATIVE_MAX = 32 * 2 ** 20;
/** A whole decoded page from this size on is given back as soon as it is read (releaseLarge). */
const LARGE_PAGE = 64 * 2 ** 20;
const EMPTY = new Uint8Array(0);
/** Largest declared page of any codec (a JS Buffer's limit is 2^31 - 1 on some platforms). */
const MAX_PAGE = 2 ** 31 - 1;

const requireCjs = createRequire(import.meta.url);

/** Output of a codec that produced more or fewer bytes than the page header says. */
function sizeMismatch(name: string, got: number | 'more', size: number): ParquetFormatError {
  return new ParquetFormatError(
    got === 'more' ? `${name} page decompresses to more than its declared ${size} bytes` : `${name} page decompresses to ${got} bytes, not its declared ${size}`,
  );
}

/** Refuse a declared size the codec cannot reach from `compressed` bytes (a bomb, or a corrupt header). */
function plausible(name: string, size: number, compressed: number, ratio: number, slack: number): void {
  if (size > MAX_PAGE || size > compressed * ratio + slack) {
    throw new ParquetFormatError(`${name} page declares ${size} bytes from ${compressed} compressed bytes, more than ${name} can expand to`);
  }
}

/**
 * What `inflater(codec, body, size)` refuses from the sizes alone, before it decodes anything: a
 * declared size over 2 GiB, an uncompressed body of another size, and, where the page is held
 * whole, a size beyond the codec's largest expansion of `compressed` bytes (streamed pages need no
 * ratio cap: what they declare is never allocated).
 */
export function checkDeclaredSize(codec: number, compressed: number, size: number): void {
  if (size < 0 || size > MAX_PAGE) throw new ParquetFormatError(`page declares ${size} bytes`);
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      if (compressed !== size) throw new ParquetFormatError(`uncompressed page of ${compressed} bytes declares ${size}`);
      return;
    case CODEC.SNAPPY:
      // A copy of 64 bytes costs 3: at most 64/3 x the body, plus the preamble.
      return plausible('SNAPPY', size, compressed, 22, 64);
    case CODEC.GZIP:
      // Deflate's longest match (258 bytes) costs at least 2 bits: at most 1032x, plus the headers.
      return plausible('GZIP', size, compressed, 1032, 1024);
    case CODEC.BROTLI:
      // The whole page is held: refuse a declared size far beyond real data (5-50x) before allocating it.
      if (brotliPath(size) === 'whole') plausible('BROTLI', size, compressed, 4096, 1024);
      return;
    case CODEC.LZ4:
    case CODEC.LZ4_RAW:
      // A match length byte of 255 is the most a byte can add.
      return plausible(codec === CODEC.LZ4 ? 'LZ4' : 'LZ4_RAW', size, compressed, 255, 64);
  }
}

let collect: (() => void) | null | undefined;

/**
 * A whole page of LARGE_PAGE bytes or more was read and dropped: collect it now. Its buffer is
 * external to V8's heap, which stays small meanwhile (one row's values), so V8 would free it only
 * at some later collection, after the next page of the leaf (DuckDB writes pages of 380 MB) is
 * already allocated beside it: two of them, over 1 GiB. A full collection of a small heap costs
 * milliseconds, against a second or more to decode such a page.
 */
function releaseLarge(): void {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  collect?.();
}

class Plain implements Inflater {
  private pos = 0;
  constructor(private src: Body) {}
  /** Drop the page at once: a decoded whole page may be hundreds of MB (see releaseLarge). */
  close(): void {
    const big = this.src instanceof Uint8Array && this.src.length >= LARGE_PAGE;
    this.src = EMPTY;
    if (big) releaseLarge();
  }
  takeWhole(): Uint8Array | null {
    if (!(this.src instanceof Uint8Array) || this.pos > 0) return null;
    this.pos = this.src.length;
    return this.src;
  }
  read(dst: Uint8Array): number {
    let n = 0;
    while (n < dst.length && this.pos < this.src.length) {
      const b = bytesOf(this.src, this.pos, this.pos + dst.length - n);
      dst.set(b, n);
      n += b.length;
      this.pos += b.length;
    }
    return n;
  }
}

/**
 * A streaming decoder held to the declared size: never hands out a byte past it, checks for output
 * beyond it (one byte's probe) as soon as the declared size is reached, and refuses an early end.
 */
class Bounded implements Inflater {
  private produced = 0;
  private readonly probe = new Uint8Array(1);
  constructor(
    private readonly inner: Inflater,
    private readonly name: string,
    private readonly size: number,
  ) {}
  close(): void {
    this.inner.close();
  }
  read(dst: Uint8Array): number {
    const want = Math.min(dst.length, this.size - this.produced);
    if (want === 0) return 0;
    let got = 0;
    while (got < want) {
      const n = this.inner.read(dst.subarray(got, want));
      if (n === 0) throw sizeMismatch(this.name, this.produced + got, this.size);
      got += n;
    }
    this.produced += got;
    if (this.produced === this.size && this.inner.read(this.probe) > 0) throw sizeMismatch(this.name, 'more', this.size);
    return got;
  }
}

/** Hands out queued output chunks of a push-style JS decoder (fzstd, fflate), pushing input as needed. */
class Pushed implements Inflater {
  private readonly queue: Uint8Array[] = [];
  private head = 0;
  private pos = 0;
  private readonly d: { push(chunk: Uint8Array, final?: boolean): void };
  constructor(
    private readonly src: Body,
    make: (ondata: (data: Uint8Array) => void) => { push(chunk: Uint8Array, final?: boolean): void },
    private readonly name: string,
    private readonly step: number,
    private readonly copy: boolean,
  ) {
    this.d = make((data) => {
      if (data.length > 0) this.queue.push(copy ? data.slice() : data);
    });
  }
  close(): void {}
  read(dst: Uint8Array): number {
    let out = 0;
    while (out < dst.length) {
      if (this.queue.length === 0) {
        if (this.pos >= this.src.length) break;
        const view = bytesOf(this.src, this.pos, Math.min(this.src.length, this.pos + this.step));
        const end = this.pos + view.length;
        // fzstd and fflate keep views of input they have not decoded yet: a streamed body's bytes are
        // overwritten by its next step, so they get a copy of their own.
        const chunk = this.src instanceof Uint8Array ? view : view.slice();
        try {
          this.d.push(chunk, end === this.src.length);
        } catch (e) {
          throw new ParquetFormatError(`${this.name}: ${(e as Error).message}`);
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

// ---- zstd ----

type StreamResult = [ret: number, produced: number, consumed: number];
interface NativeDCtx {
  decompressStream(dst: Uint8Array, src: Uint8Array): StreamResult;
  reset(directive: number): void;
}
interface ZstdNapiBinding {
  DCtx: new () => NativeDCtx;
  ResetDirective: { sessionOnly: number };
}

/** An optional native module: the module (null when it did not load) and why it did not. */
interface NativeSlot<T> {
  (): T | null;
  /** Why the module is not in use ('' when it is): its load error's first line, or the variable that turned it off. */
  why(): string;
}

/** An optional native module, loaded once; null when absent, failing to load, or forced off by `env`=js. */
function lazyNative<T>(env: string, load: () => T): NativeSlot<T> {
  let m: T | null | undefined;
  let why = '';
  const get = (): T | null => {
    if (m === undefined) {
      const forced = process.env[env];
      // `js`: the pure-JS decoder; `zlib` (zstd only): node:zlib where the runtime has it (tests).
      if (forced === 'js' || forced === 'zlib') {
        m = null;
        why = `${env}=${forced}`;
      } else {
        try {
          m = load();
        } catch (e) {
          m = null;
          why = firstLine(e instanceof Error ? e.message : String(e));
        }
      }
    }
    return m;
  };
  return Object.assign(get, { why: () => (get(), why) });
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** A codec whose pages this thread decoded with a pure-JS library because the native one did not load. */
export interface PureJsDecoder {
  /** The codec, lower case: `zstd`, `snappy`, `lz4`. */
  codec: string;
  /** The pure-JS library that decoded its pages. */
  library: string;
  /** The native package that would have, and why it did not. */
  native: string;
  reason: string;
}

const pureJsUsed = new Map<string, PureJsDecoder>();

function usedPureJs(codec: string, library: string, native: string, slot: NativeSlot<unknown>): void {
  if (!pureJsUsed.has(codec)) pureJsUsed.set(codec, { codec, library, native, reason: slot.why() });
}

/** snappy and lz4-napi ship prebuilt binaries as optional dependencies, one per platform. */
const PREBUILT_ADVICE = 'it ships prebuilt binaries as optional dependencies: reinstall without --omit=optional / --no-optional (or on a supported platform)';

/** How to get the native decoder back, per native package. */
const NATIVE_ADVICE: Record<string, string> = {
  // zstd-napi is compiled at install time by node-gyp (no prebuilt binaries).
  'zstd-napi':
    'it is built from source at install: with python3, make and a C++ compiler present (and install scripts allowed), run `npm rebuild zstd-napi`',
  snappy: PREBUILT_ADVICE,
  'lz4-napi': PREBUILT_ADVICE,
};

/** The one warning line for a codec decoded by its pure-JS fallback (no newline). */
export function pureJsAdvice(d: PureJsDecoder): string {
  const off = /^DIVERGENCE_MINE_\w+=(js|zlib)$/.test(d.reason);
  return (
    `${d.codec} pages are decoded by ${d.library}, a pure-JavaScript fallback several times slower than the native ${d.native} ` +
    (off ? `(turned off by ${d.reason}); unset it for the native decoder` : `(${d.reason}); ${NATIVE_ADVICE[d.native] ?? `reinstall ${d.native}`}`) +
    '. Same output either way.'
  );
}

/**
 * The fallbacks this thread has used so far, by codec: what a run reports once (mine's warning and
 * `pure_js_decoders` in --stats). Snappy pages of 32 MiB and more go to snappyjs by design and do
 * not count.
 */
export function pureJsDecoders(): PureJsDecoder[] {
  return [...pureJsUsed.values()].sort((a, b) => (a.codec < b.codec ? -1 : a.codec > b.codec ? 1 : 0));
}

const nativeZstd = lazyNative('DIVERGENCE_MINE_ZSTD', () => requireCjs('zstd-napi/binding') as ZstdNapiBinding);

/**
 * Decompression contexts not in use. Each page being read needs its own (the leaves of a column are
 * read in step, so several pages are open at once); a finished page gives its context back.
 */
const idle: NativeDCtx[] = [];

class NativeZstd implements Inflater {
  private pos = 0;
  private done = false;
  /**
   * Whether the decoder's last answer said a frame is complete (0). An input that runs out anywhere
   * else is a truncated frame, even when it gave the page's declared size: a last block not marked
   * last, or a checksum cut off (DuckDB and parquet-rs refuse such a page too).
   */
  private frameEnded = true;
  private ctx: NativeDCtx;
  constructor(
    private readonly src: Body,
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
      if (this.pos >= this.src.length && this.frameEnded) {
        this.finish();
        break;
      }
      let r: StreamResult;
      try {
        // With the input all read inside a frame, an empty input lets the decoder flush what it holds
        // (or say, producing nothing, that the frame is cut short: below).
        r = this.ctx.decompressStream(dst.subarray(out), this.pos < this.src.length ? bytesOf(this.src, this.pos, this.src.length) : EMPTY);
      } catch (e) {
        throw new ParquetFormatError(`zstd: ${(e as Error).message}`);
      }
      const [ret, produced, consumed] = r;
      out += produced;
      this.pos += consumed;
      this.frameEnded = ret === 0;
      // A frame ended: more frames may follow in the same page (concatenated frames are valid zstd).
      if (ret === 0 && this.pos < this.src.length) this.ctx.reset(this.sessionOnly);
      // Nothing done inside a frame: the frame is cut short (at the end of the input, the check at the
      // top of the loop ends a page whose last frame ended).
      if (produced === 0 && consumed === 0 && ret !== 0) throw new ParquetFormatError('zstd: truncated frame');
    }
    return out;
  }
}

type PushDecoder = new (ondata: (data: Uint8Array, final?: boolean) => void) => { push(chunk: Uint8Array, final?: boolean): void };
let fzstd: PushDecoder | undefined;

/** node:zlib's one-shot zstd (Node >= 22.15, >= 23.8), else undefined (Node 20 has none). */
const zlibZstd = (zlib as { zstdDecompressSync?: (buf: Uint8Array, options: { maxOutputLength: number }) => Buffer }).zstdDecompressSync;

/** node:zlib's zstd when zstd-napi is not in use: where the runtime has it, unless DIVERGENCE_MINE_ZSTD=js asks for fzstd. */
function zstdByZlib(): typeof zlibZstd {
  return process.env.DIVERGENCE_MINE_ZSTD === 'js' ? undefined : zlibZstd;
}
/** Largest zstd page node:zlib decodes whole when zstd-napi is missing; larger ones stream through fzstd. */
const ZSTD_ZLIB_WHOLE = 64 * 2 ** 20;

/** Whether zstd pages of `size` bytes are decoded whole (node:zlib, when zstd-napi is not in use). */
function zstdWhole(size: number): boolean {
  return nativeZstd() === null && size <= ZSTD_ZLIB_WHOLE && zstdByZlib() !== undefined;
}

function zstd(src: Body, size: number): Inflater {
  const z = nativeZstd();
  if (z) return new NativeZstd(src, z, z.ResetDirective.sessionOnly);
  // Without zstd-napi: node:zlib where the runtime has it (native, no build step; about half
  // zstd-napi's speed and 3-4x fzstd's, bench/zstd-paths.mjs), one-shot and bounded by the page's
  // declared size; DIVERGENCE_MINE_ZSTD=js turns it off too (the pure-JS path stays testable).
  if (zstdWhole(size)) return zlibWhole('ZSTD', size, (maxOutputLength) => zlibZstd!(wholeBody(src, 'ZSTD'), { maxOutputLength }));
  usedPureJs('zstd', 'fzstd', 'zstd-napi', nativeZstd);
  fzstd ??= (requireCjs('fzstd') as { Decompress: PushDecoder }).Decompress;
  // fzstd reuses its output buffer between pushes: keep a copy.
  return new Pushed(src, (ondata) => new fzstd!(ondata), 'zstd', 65536, true);
}

// ---- gzip, brotli: node:zlib ----

/** Whether gzip pages of `size` bytes are inflated whole (node:zlib) rather than streamed (fflate). */
function gzipWhole(size: number): boolean {
  return size <= GZIP_WHOLE && process.env.DIVERGENCE_MINE_GZIP !== 'stream';
}

interface ZlibError extends Error {
  code?: string;
}

/** A one-shot node:zlib call held to `size` output bytes. */
function zlibWhole(name: string, size: number, run: (maxOutputLength: number) => Buffer): Inflater {
  let out: Buffer;
  try {
    // maxOutputLength must be at least 1; an empty page that inflates to a byte is still caught below.
    out = run(Math.max(size, 1));
  } catch (e) {
    if (e instanceof ParquetFormatError) throw e;
    if ((e as ZlibError).code === 'ERR_BUFFER_TOO_LARGE') throw sizeMismatch(name, 'more', size);
    throw new ParquetFormatError(`${name}: ${(e as Error).message}`);
  }
  if (out.length !== size) throw sizeMismatch(name, out.length, size);
  return new Plain(out);
}

let fflate: { Gunzip: PushDecoder; Unzlib: PushDecoder } | undefined;

function gzip(src: Body, size: number): Inflater {
  if (gzipWhole(size)) {
    return zlibWhole('GZIP', size, (maxOutputLength) => unzipSync(wholeBody(src, 'GZIP'), { maxOutputLength }));
  }
  fflate ??= requireCjs('fflate') as { Gunzip: PushDecoder; Unzlib: PushDecoder };
  const gzipMagic = src.length >= 2 && bytesOf(src, 0, 1)[0] === 0x1f && bytesOf(src, 1, 2)[0] === 0x8b;
  const Decoder = gzipMagic ? fflate.Gunzip : fflate.Unzlib;
  return new Bounded(new Pushed(src, (ondata) => new Decoder(ondata), 'GZIP', GZIP_STEP, false), 'GZIP', size);
}

// ---- brotli: node:zlib one-shot for small pages, brotli-wasm streamed for the others ----

interface BrotliStreamResult {
  buf: Uint8Array;
  code: number;
  input_offset: number;
  free(): void;
}
interface BrotliWasm {
  DecompressStream: new () => { decompress(input: Uint8Array, outputSize: number): BrotliStreamResult; free(): void };
  BrotliStreamResultCode: { ResultSuccess: number; NeedsMoreInput: number; NeedsMoreOutput: number };
}
let brotliWasm: BrotliWasm | undefined;

/** How brotli pages are decoded: `stream` / `whole` force one path for every page (tests), else by size. */
function brotliPath(size: number): 'stream' | 'whole' {
  const forced = process.env.DIVERGENCE_MINE_BROTLI;
  if (forced === 'stream' || forced === 'whole') return forced;
  return size <= BROTLI_WHOLE ? 'whole' : 'stream';
}

/** An inflater whose decoder hands out its output a chunk at a time: `read` drains the current chunk, then asks `next` for another (null: the body is done). */
abstract class ChunkedOutput implements Inflater {
  private cur: Uint8Array = EMPTY;
  private head = 0;
  abstract close(): void;
  protected abstract next(): Uint8Array | null;
  protected drop(): void {
    this.cur = EMPTY;
  }
  read(dst: Uint8Array): number {
    let n = 0;
    while (n < dst.length) {
      if (this.head < this.cur.length) {
        const k = Math.min(dst.length - n, this.cur.length - this.head);
        dst.set(this.cur.subarray(this.head, this.head + k), n);
        n += k;
        this.head += k;
        continue;
      }
      const c = this.next();
      if (c === null) break;
      this.cur = c;
      this.head = 0;
    }
    return n;
  }
}

/**
 * brotli-wasm's DecompressStream, fed BROTLI_STEP input bytes and asked for at most BROTLI_STEP
 * output bytes a call: memory holds the stream's ring buffer (its window, at most 16 MiB, whatever
 * the page declares) and one step of output. The end of the stream must be the end of the body.
 */
class BrotliStream extends ChunkedOutput {
  private pos = 0;
  private ended = false;
  private d: InstanceType<BrotliWasm['DecompressStream']> | null;
  constructor(
    private readonly src: Body,
    private readonly lib: BrotliWasm,
  ) {
    super();
    this.d = new lib.DecompressStream();
  }
  close(): void {
    this.d?.free();
    this.d = null;
  }
  protected next(): Uint8Array | null {
    for (;;) {
      if (this.ended || !this.d) return null;
      const chunk = bytesOf(this.src, this.pos, Math.min(this.src.length, this.pos + BROTLI_STEP));
      let r: BrotliStreamResult;
      try {
        r = this.d.decompress(chunk, BROTLI_STEP);
      } catch (e) {
        throw new ParquetFormatError(`BROTLI: corrupt stream (${String((e as Error)?.message ?? e)})`);
      }
      const { buf, code, input_offset: used } = r;
      r.free();
      this.pos += used;
      const codes = this.lib.BrotliStreamResultCode;
      if (code === codes.ResultSuccess) {
        this.ended = true;
        if (this.pos !== this.src.length) throw new ParquetFormatError(`BROTLI: ${this.src.length - this.pos} bytes after the end of the stream`);
      } else if (code === codes.NeedsMoreInput) {
        if (this.pos >= this.src.length) throw new ParquetFormatError('BROTLI: truncated stream');
      } else if (code !== codes.NeedsMoreOutput) throw new ParquetFormatError(`BROTLI: stream result ${code}`);
      if (used === 0 && buf.length === 0 && code !== codes.ResultSuccess) throw new ParquetFormatError('BROTLI: the decoder makes no progress');
      if (buf.length > 0) return buf;
    }
  }
}

function brotli(body: Body, size: number): Inflater {
  if (brotliPath(size) === 'whole') {
    const src = wholeBody(body, 'BROTLI');
    return zlibWhole('BROTLI', size, (maxOutputLength) => {
      // `info` (not in @types/node's BrotliOptions) returns the engine too, which counts the input consumed.
      const withInfo = { maxOutputLength, info: true } as BrotliOptions;
      const { buffer, engine } = brotliDecompressSync(src, withInfo) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
      // node:zlib stops at the end of the stream and ignores what follows; the streamed path refuses it.
      if (engine.bytesWritten !== src.length) throw new ParquetFormatError(`BROTLI: ${src.length - engine.bytesWritten} bytes after the end of the stream`);
      return buffer;
    });
  }
  brotliWasm ??= requireCjs('brotli-wasm') as BrotliWasm;
  return new Bounded(new BrotliStream(body, brotliWasm), 'BROTLI', size);
}

// ---- snappy ----

interface SnappyNative {
  uncompressSync(data: Uint8Array, options: { asBuffer: boolean; copyOutputData: boolean }): Buffer | string;
}
// `snappy` (napi-rs, snap crate): safe to load in worker threads that later exit, unlike
// @napi-rs/snappy 1.0.2, whose addon crashed the process then (re-tested with 7.4.3: 60 worker exits).
const nativeSnappy = lazyNative('DIVERGENCE_MINE_SNAPPY', () => requireCjs('snappy') as SnappyNative);
let snappyJs: { uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array } | undefined;

function snappy(src: Uint8Array, size: number): Inflater {
  // The preamble (a varint) states the output length, which the decoders allocate: check it first.
  let len = 0;
  let p = 0;
  for (let shift = 1; ; shift *= 128, p++) {
    if (p >= src.length || p >= 5) throw new ParquetFormatError('SNAPPY: bad length preamble');
    len += (src[p]! & 0x7f) * shift;
    if ((src[p]! & 0x80) === 0) break;
  }
  if (len > size) throw sizeMismatch('SNAPPY', 'more', size);
  if (len < size) throw sizeMismatch('SNAPPY', len, size);
  let out: Uint8Array;
  try {
    const n = size < SNAPPY_NATIVE_MAX ? nativeSnappy() : null;
    if (n) out = n.uncompressSync(src, { asBuffer: true, copyOutputData: true }) as Buffer;
    else {
      if (size < SNAPPY_NATIVE_MAX) usedPureJs('snappy', 'snappyjs', 'snappy', nativeSnappy);
      snappyJs ??= requireCjs('snappyjs') as typeof snappyJs;
      out = snappyJs!.uncompress(src, size);
    }
  } catch (e) {
    throw new ParquetFormatError(`SNAPPY: ${(e as Error).message}`);
  }
  if (out.length !== size) throw sizeMismatch('SNAPPY', out.length, size);
  return new Plain(out);
}

// ---- LZ4 ----

interface Lz4Native {
  /** lz4_flex's size-prepended block: [u32 LE output size][raw LZ4 block]. */
  uncompressSync(data: Uint8Array): Buffer;
}
const nativeLz4 = lazyNative('DIVERGENCE_MINE_LZ4', () => requireCjs('lz4-napi') as Lz4Native);
let lz4js: { decompressBlock(src: Uint8Array, dst: Uint8Array, sIndex: number, sLength: number, dIndex: number): number } | undefined;

/** One raw LZ4 block of `size` output bytes; null when it does not decode to exactly that. */
function lz4Block(src: Uint8Array, size: number): Uint8Array | null {
  const n = nativeLz4();
  try {
    if (n) {
      const framed = Buffer.allocUnsafe(4 + src.length);
      framed.writeUInt32LE(size, 0);
      framed.set(src, 4);
      // lz4_flex refuses output past the prepended size and returns what it made when shorter.
      const out = n.uncompressSync(framed);
      return out.length === size ? out : null;
    }
    usedPureJs('lz4', 'lz4js', 'lz4-napi', nativeLz4);
    lz4js ??= requireCjs('lz4js') as typeof lz4js;
    const dst = new Uint8Array(size);
    // lz4js writes past the end of a typed array into nothing; its returned position tells.
    return lz4js!.decompressBlock(src, dst, 0, src.length, 0) === size ? dst : null;
  } catch {
    return null;
  }
}

/**
 * Hadoop framing: [u32 BE output size][u32 BE block size][block], repeated, filling the page
 * exactly. The frames of `src` when it is framed that way (each frame's sizes checked against the
 * bytes behind it, against what is left of the page's declared size and against LZ4's 255x before
 * anything is allocated), else null (then the page is read as one raw block, as Arrow C++ and
 * parquet-rs do). Only headers are read here: no block is decoded.
 */
function hadoopFrames(src: Uint8Array, size: number): [start: number, end: number, out: number][] | null {
  const frames: [start: number, end: number, out: number][] = [];
  const view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  let p = 0;
  let total = 0;
  while (p < src.length) {
    if (p + 8 > src.length) return null;
    const out = view.getUint32(p);
    const len = view.getUint32(p + 4);
    p += 8;
    if (len > src.length - p || out > size - total || out > len * 255 + 64) return null;
    frames.push([p, p + len, out]);
    p += len;
    total += out;
  }
  return total === size && frames.length > 0 ? frames : null;
}

/**
 * A Hadoop-framed page decoded frame by frame as it is read: memory holds one frame's output (Hadoop
 * writers cut 256 KiB frames) however large the page. A frame that does not decode to its declared
 * size is a corrupt page.
 */
class HadoopLz4 extends ChunkedOutput {
  private k = 0;
  constructor(
    private src: Uint8Array,
    private readonly frames: [start: number, end: number, out: number][],
  ) {
    super();
  }
  close(): void {
    this.src = EMPTY;
    this.drop();
  }
  protected next(): Uint8Array | null {
    if (this.k >= this.frames.length) return null;
    const [start, end, out] = this.frames[this.k]!;
    const b = lz4Block(this.src.subarray(start, end), out);
    if (!b) throw new ParquetFormatError(`LZ4: Hadoop frame ${this.k} is corrupt, or not of its declared ${out} bytes`);
    this.k++;
    return b;
  }
}

function lz4(src: Uint8Array, size: number, hadoop: boolean): Inflater {
  const name = hadoop ? 'LZ4' : 'LZ4_RAW';
  const frames = hadoop ? hadoopFrames(src, size) : null;
  if (frames) return new Bounded(new HadoopLz4(src, frames), name, size);
  // One raw block (LZ4_RAW, or an unframed LZ4 page): decoded whole, its declared size bounded above.
  const dst = lz4Block(src, size);
  if (!dst) throw new ParquetFormatError(`${name}: corrupt block, or not of its declared ${size} bytes`);
  return new Plain(dst);
}

/**
 * Whether `inflater(codec, body, size)` is done with `body` when it returns (the codec decodes the
 * page whole): the caller may then reuse or drop the compressed bytes at once.
 */
export function decodesWhole(codec: number, size: number): boolean {
  switch (codec) {
    case CODEC.SNAPPY:
    case CODEC.LZ4_RAW:
      return true;
    // A Hadoop-framed page is decoded from its body as it is read (an unframed one is whole, but
    // which it is shows only in the body).
    case CODEC.LZ4:
      return false;
    case CODEC.BROTLI:
      return brotliPath(size) === 'whole';
    case CODEC.GZIP:
      return gzipWhole(size);
    default:
      return false;
  }
}

/**
 * Whether `inflater(codec, body, size)` reads `body` front to back as it decodes, so that the caller
 * may hand it a StreamedBody: uncompressed pages and the streaming decoders (zstd but where
 * node:zlib decodes it whole, large gzip through fflate, large brotli through brotli-wasm).
 */
export function streamsBody(codec: number, size: number): boolean {
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      return true;
    case CODEC.ZSTD:
      return !zstdWhole(size);
    case CODEC.GZIP:
      return !gzipWhole(size);
    case CODEC.BROTLI:
      return brotliPath(size) === 'stream';
    default:
      return false;
  }
}

/**
 * Whether reading a page of `codec` declaring `size` bytes may hold all of them at once: a page
 * decoded whole, or a Hadoop-framed LZ4 page, whose frames only its body tells (parquet-rs writes
 * one frame per page): counted as the page, which no frame exceeds.
 */
export function mayHoldWhole(codec: number, size: number): boolean {
  return codec === CODEC.LZ4 || decodesWhole(codec, size);
}

/** The decompressed body of a page that declares `size` bytes. */
export function inflater(codec: number, src: Body, size: number): Inflater {
  checkDeclaredSize(codec, src.length, size);
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      return new Plain(src);
    case CODEC.SNAPPY:
      return snappy(wholeBody(src, 'SNAPPY'), size);
    case CODEC.GZIP:
      return gzip(src, size);
    case CODEC.BROTLI:
      return brotli(src, size);
    case CODEC.LZ4:
      return lz4(wholeBody(src, 'LZ4'), size, true);
    case CODEC.LZ4_RAW:
      return lz4(wholeBody(src, 'LZ4_RAW'), size, false);
    case CODEC.ZSTD:
      return new Bounded(zstd(src, size), 'ZSTD', size);
    default:
      throw new Unsupported(`compression codec ${codecName(codec)}`);
  }
}

/** The library that decodes `codec` pages in this process (tests check the forced pure-JS paths take effect). */
export function decoderOf(codec: number): string {
  switch (codec) {
    case CODEC.UNCOMPRESSED:
      return 'none';
    case CODEC.SNAPPY:
      return nativeSnappy() ? 'snappy' : 'snappyjs';
    case CODEC.GZIP:
      return process.env.DIVERGENCE_MINE_GZIP === 'stream' ? 'fflate' : 'node:zlib';
    case CODEC.BROTLI:
      return process.env.DIVERGENCE_MINE_BROTLI === 'stream' ? 'brotli-wasm' : 'node:zlib';
    case CODEC.LZ4:
    case CODEC.LZ4_RAW:
      return nativeLz4() ? 'lz4-napi' : 'lz4js';
    case CODEC.ZSTD:
      return nativeZstd() ? 'zstd-napi' : zstdByZlib() ? 'node:zlib' : 'fzstd';
    default:
      return 'parquet-wasm';
  }
}
