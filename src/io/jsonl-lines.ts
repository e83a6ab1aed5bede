// Reading JSONL (optionally gzipped) line by line, and parsing one line into an object, with errors
// that name the file and the 1-based line. Shared by the trajectory reader and the pairs reader.
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ExitCode, UserError } from '../errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../contract/json-depth.js';
import { formatCount } from '../count-text.js';

/**
 * Longest accepted line, in bytes (README "Errors and exit codes"). Below V8's string limit
 * (2^29 - 24 UTF-16 units), so a line that passes always decodes; longer lines (or a gzip bomb
 * without newlines) are a clean error instead of a RangeError.
 */
export const MAX_LINE_BYTES = 512_000_000;

/** Whether a JSONL input is read through gunzip: by its name, as input discovery names it (`.jsonl.gz`). */
export function isGzipped(path: string): boolean {
  return path.toLowerCase().endsWith('.gz');
}

/** A line's bytes without one trailing "\r" (a CRLF file). */
function lineBytes(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, bytes.length - 1) : bytes;
}

/** The bytes JS's String.prototype.trim removes when they stand alone: tab, LF, VT, FF, CR, space. */
function isAsciiBlank(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * `bytes.toString().trim() === ''`, mostly without decoding: any other ASCII byte is text trim
 * keeps; a line of ASCII blanks is blank; only a line of blanks and non-ASCII bytes (U+00A0, U+FEFF,
 * U+2028 ... are blanks to trim) is decoded to decide.
 */
function isBlankLine(bytes: Buffer): boolean {
  let high = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c >= 0x80) high = true;
    else if (!isAsciiBlank(c)) return false;
  }
  return !high || bytes.toString('utf8').trim() === '';
}

/**
 * A part of a plain (not gzipped) JSONL file, for reading it in pieces: the lines that start at a
 * byte in [start, end), numbered from 1 at the first of them. Every line of the file starts in
 * exactly one of the ranges that tile it, so their lines, in range order, are the file's.
 */
export interface LineRange {
  start: number;
  end: number;
  /** Set when the range has been read: how many lines start in it, blank ones included. */
  tally?: { lines: number };
}

/**
 * The number of lines that start before byte `start` of a plain file (the file's number of the
 * first line of a range at `start` is this plus 1). Reads the bytes before it: for error messages.
 */
export function linesBefore(path: string, start: number): number {
  if (start <= 0) return 0;
  // Lines start at byte 0 and after every "\n" before start - 1.
  let n = 1;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < start - 1; ) {
      const got = readSync(fd, buf, 0, Math.min(buf.length, start - 1 - pos), pos);
      if (got === 0) break;
      for (let i = buf.indexOf(10); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) n++;
      pos += got;
    }
  } finally {
    closeSync(fd);
  }
  return n;
}

/**
 * Non-blank lines with their 1-based numbers, split on "\n", as bytes (one trailing "\r" removed);
 * a read or gunzip failure becomes a UserError. A line's bytes are valid until the next line is
 * asked for (they may be a view of a buffer reused for the next one): a caller that wants only some
 * lines decodes only those. Streams with backpressure: memory holds the current line and one read
 * chunk, whatever the file's (or the gunzipped) size. Each line comes with the offset of its first
 * byte (in the gunzipped stream, for a gzipped file). With `range` (a plain file only), only the
 * lines that start in it, numbered from its first; `lineOf` turns such a number into the file's,
 * for the messages of errors (it may read the file: it is called only for one).
 */
export async function* jsonlLineBytes(
  path: string,
  maxLineBytes: number = MAX_LINE_BYTES,
  range?: LineRange,
  lineOf: (n: number) => number = (n) => n,
): AsyncGenerator<[lineNo: number, bytes: Buffer, offset: number]> {
  const gz = isGzipped(path);
  if (range && gz) throw new Error(`internal error: a byte range of a gzipped file (${path})`);
  // A range after the first starts reading one byte early: the lines it owns begin after the first
  // "\n" from there (which may be that very byte).
  let skipping = range !== undefined && range.start > 0;
  const from = range ? Math.max(0, range.start - 1) : 0;
  const end = range?.end ?? Infinity;
  if (range && range.end <= from) {
    range.tally = { lines: 0 };
    return;
  }
  const input = createReadStream(path, { highWaterMark: 1 << 20, start: from });
  // pipeline() passes an error of either stream to the one iterated, and destroys both.
  const stream = gz ? pipeline(input, createGunzip(), () => {}) : input;
  // A line longer than one read chunk is gathered in one growing buffer (not a list of the chunks,
  // which would all stay alive until joined): a long line costs its bytes (at most twice, while the
  // buffer grows), then its text, never both beyond the yield.
  const line = new LineBuffer();
  let n = 0;
  // The offset of the current chunk's first byte, and of the line being read (in the gunzipped stream, for a gzipped file).
  let pos = from;
  let lineStart = from;
  const tooLong = () => new UserError(`${path}:${lineOf(n + 1)}: line longer than ${formatCount(maxLineBytes)} bytes (the limit)`, ExitCode.corrupt);
  try {
    try {
      chunks: for await (const chunk of stream as AsyncIterable<Buffer>) {
        let start = 0;
        for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
          if (skipping) {
            skipping = false;
          } else {
            if (lineStart >= end) break chunks;
            if (line.length + (nl - start) > maxLineBytes) throw tooLong();
            const bytes = lineBytes(line.length === 0 ? chunk.subarray(start, nl) : line.take(chunk.subarray(start, nl)));
            n++;
            if (!isBlankLine(bytes)) yield [n, bytes, lineStart];
          }
          start = nl + 1;
          lineStart = pos + start;
        }
        if (!skipping && start < chunk.length) {
          if (lineStart >= end) break;
          if (line.length + (chunk.length - start) > maxLineBytes) throw tooLong();
          line.append(chunk.subarray(start));
        }
        pos += chunk.length;
      }
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(`${path}: cannot read: ${(e as Error).message}`, ExitCode.corrupt);
    }
    if (line.length > 0 && lineStart < end) {
      n++;
      const bytes = lineBytes(line.take(Buffer.alloc(0)));
      if (!isBlankLine(bytes)) yield [n, bytes, lineStart];
    }
    if (range) range.tally = { lines: n };
  } finally {
    input.destroy();
    stream.destroy();
  }
}

/** Non-blank lines with their 1-based numbers, as text (jsonlLineBytes decoded as UTF-8). */
export async function* jsonlLines(path: string, maxLineBytes: number = MAX_LINE_BYTES): AsyncGenerator<[lineNo: number, text: string]> {
  for await (const [n, bytes] of jsonlLineBytes(path, maxLineBytes)) yield [n, bytes.toString('utf8')];
}

/** The bytes of a line that spans read chunks. */
class LineBuffer {
  private buf: Buffer = Buffer.alloc(0);
  length = 0;
  append(piece: Buffer): void {
    if (this.length + piece.length > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.length + piece.length, 2 * this.buf.length, 1 << 16));
      this.buf.copy(bigger, 0, 0, this.length);
      this.buf = bigger;
    }
    piece.copy(this.buf, this.length);
    this.length += piece.length;
  }
  /**
   * The line's bytes with `last` appended; the buffer is emptied (and let go when large). The bytes
   * are a view of the buffer: valid until the next append.
   */
  take(last: Buffer): Buffer {
    this.append(last);
    const bytes = this.buf.subarray(0, this.length);
    this.length = 0;
    // Stryker disable next-line all: memory only: a kept buffer is reused, a dropped one reallocated
    if (this.buf.length > 4 << 20) this.buf = Buffer.alloc(0);
    return bytes;
  }
}

export function parseJsonLine(path: string, line: number, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}:${line}: invalid JSON (${(e as Error).message})`, ExitCode.corrupt);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UserError(`${path}:${line}: a line must be a JSON object`, ExitCode.corrupt);
  // The line itself is level 1: each column's value may nest MAX_JSON_DEPTH levels.
  for (const [column, value] of Object.entries(v)) {
    if (nestedDeeperThan(value)) throw new UserError(`${path}:${line}: column ${column}: JSON nested deeper than ${MAX_JSON_DEPTH} levels (the limit)`, ExitCode.badValue);
  }
  return v as Record<string, unknown>;
}
