// The spill store: normalised messages of extracted trajectories are written to disk as they are
// decoded, so that memory holds only a role code and an offset per message, whatever the input size.
// The walk hashes the comparison keys of the messages it compares from their records, and rebuilds
// rows from the spill when it emits them.
//
// One record per message (little endian):
//   u8 role code, u8 flags (bit k: field k is null; bit 3+k: field k is UTF-16LE; bit 6: the signature
//   is UTF-16LE; bit 7: the tool_calls keep a number's source text, json-numbers.ts), u32 x3 byte lengths of fields 0..2, field 0 (content), field 1, field 2, u32 byte
//   length of the signature, the signature.
// Text is UTF-8, except a string holding a lone surrogate: UTF-8 would turn it into U+FFFD, changing
// the output and making two different messages hash alike (contract 9.9), so it is kept as UTF-16LE.
// Fields 1 and 2: assistant -> tool_calls as emitted (JSON text), unused; tool -> name, tool_call_id;
// a role outside the contract's four -> the role itself, unused. The bytes from the role code to the
// end of field 2 determine the emitted message (emit.ts) and nothing else, so their hash decides
// exact duplicates (`emittedHash`, computed by the walk only for messages that take part in one). Raw UTF-8 costs one copy; JSON text of every message cost ~40% of the encoding.
// A trajectory's records are followed by its index block (appendIndexBlock). Without a placer the
// file holds everything in the order appended; with one (spill-space.ts), each trajectory goes whole
// where the placer says, and the space of walked trajectories is written again.
import { hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { readAt } from '../io/read-at.js';
import { ROLE_CODES, ROLE_NAMES } from './protocol.js';
import { isWellFormed, keyHash, keyHashOfBytes } from './key-hash.js';
import { keyPartsOf } from '../contract/sign.js';
import { normKeepsUtf8 } from '../contract/normalise.js';
import { jsonTextByValue } from '../contract/json-numbers.js';
import type { EmittedMessage } from '../types.js';
import type { Utf8Bytes } from '../parquet/utf8-bytes.js';
import type { JsonBytes } from './json-bytes.js';
import { SEGMENT_BYTES, type SpillPlacer } from './spill-space.js';

export { isWellFormed } from './key-hash.js';

const FLUSH_BYTES = 1 << 20;
/** With a placer: the most of one trajectory kept in memory before it streams to a run. */
const BUFFERED_TRAJECTORY = 4 * SEGMENT_BYTES;
/** Flags bit: the signature is stored as UTF-16LE. */
export const SIGNATURE_UTF16 = 64;
/**
 * Flags bit: field 1 (tool_calls) keeps the source text of a number JSON.stringify writes otherwise
 * (contract v3, 11). Exact duplicates compare numbers by value, so such a record hashes as the record
 * of its tool_calls by value (what contract v2 emitted) would.
 */
export const SOURCE_NUMBERS = 128;
/** Role code, null flags and three field lengths. */
export const HEADER = 14;

export class SpillWriter {
  /** null: the bytes go to `sink` only (memory-spill.ts keeps them in memory). */
  private readonly fd: number | null;
  /** Bytes appended so far: the logical offsets appendMessage returns (encode.ts builds a trajectory's offsets from them). */
  private pos = 0;
  /** Bytes not yet written, encoded straight into one reused buffer (no per-message allocation). */
  private buf: Buffer;
  private used = 0;
  /**
   * File position minus logical offset of the buffered bytes. Without a placer always 0 (the file
   * is the bytes in order); with one, null until the trajectory being buffered gets its place.
   */
  private delta: number | null;
  /** The buffer's size between trajectories. */
  private readonly capacity: number;

  /**
   * `placer`: place each trajectory where spill-space.ts says (a segment, whole, or a run at the end)
   * instead of after the previous one; the offsets and block positions this writer gives out are then
   * the file positions the trajectory was written at.
   */
  constructor(
    path: string | null,
    private readonly placer: SpillPlacer | null = null,
  ) {
    this.fd = path === null ? null : openSync(path, 'w');
    // A trajectory is buffered whole until it is placed, up to a segment.
    this.capacity = placer ? SEGMENT_BYTES : FLUSH_BYTES;
    this.buf = Buffer.allocUnsafe(this.capacity);
    this.delta = placer ? null : 0;
  }

  /** Where flushed bytes go: `b` at file position `at`; `b` is reused after the call returns. */
  protected sink(b: Buffer, at: number): void {
    let written = 0;
    while (written < b.length) written += writeSync(this.fd!, b, written, b.length - written, at + written);
  }

  /** Room for `bytes` more in the buffer: flush first if needed, grow for a single large write. */
  private reserve(bytes: number): void {
    // Stryker disable next-line all: buffer sizing only: the same bytes are written
    if (this.used + bytes <= this.buf.length) return;
    if (this.delta === null) {
      // A trajectory without a place yet stays whole in the buffer (it gets its place by its size at
      // its index block), up to BUFFERED_TRAJECTORY; a larger one streams to a run at the file's end.
      if (this.used + bytes <= BUFFERED_TRAJECTORY) {
        const grown = Buffer.allocUnsafe(Math.min(BUFFERED_TRAJECTORY, Math.max(2 * this.buf.length, this.used + bytes)));
        this.buf.copy(grown, 0, 0, this.used);
        this.buf = grown;
        return;
      }
      this.delta = this.placer!.startRun() - (this.pos - this.used);
    }
    this.flush();
    // Stryker disable next-line all: buffer sizing only: the same bytes are written
    if (bytes > this.buf.length) this.buf = Buffer.allocUnsafe(bytes);
  }
  /** Append `s` (UTF-8); returns its end offset. Its start is the previous end. */
  append(s: string): number {
    if (s.length === 0) return this.pos;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(s.length * 3);
    const n = this.buf.write(s, this.used, 'utf8');
    this.used += n;
    this.pos += n;
    return this.pos;
  }

  /**
   * Append the record of an emitted message (see the top of this file); returns its end offset.
   * `sourceNumbers`: the tool_calls keep a number's source text (sets SOURCE_NUMBERS). `content`: the
   * UTF-8 of the content, written in place of `e.content` (the reader's bytes, never decoded: encode.ts).
   */
  appendMessage(code: number, e: EmittedMessage, signature: string, sourceNumbers = false, content?: Utf8Bytes): number {
    const [text, f1, f2] = recordFields(code, e);
    const f0 = content ? null : text;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the record is written whole into the buffer. A
    // record beyond the buffer gets its exact size: three times a 300 MB tool output is 900 MB.
    const units = (f0?.length ?? 0) + (f1?.length ?? 0) + (f2?.length ?? 0) + signature.length;
    const exact = (f: string | null) => (f ? Buffer.byteLength(f, isWellFormed(f) ? 'utf8' : 'utf16le') : 0);
    const bytes = content?.length ?? 0;
    // Stryker disable next-line all: buffer sizing only: either bound holds the record
    this.reserve(HEADER + 4 + bytes + (3 * units <= FLUSH_BYTES ? 3 * units : exact(f0) + exact(f1) + exact(f2) + exact(signature)));
    const b = this.buf;
    const start = this.used;
    b[start] = code;
    let flags = 0;
    let p = start + HEADER;
    const fields = [f0, f1, f2];
    for (let k = 0; k < 3; k++) {
      const f = fields[k];
      let n = 0;
      if (k === 0 && content) {
        // Checked UTF-8, so it holds no lone surrogate: the bytes writeText would have written.
        content.copyTo(b, p);
        n = content.length;
      } else if (f === null || f === undefined) flags |= 1 << k;
      else if (f) {
        n = writeText(b, f, p);
        if (n < 0) {
          flags |= 8 << k;
          n = -n;
        }
      }
      b.writeUInt32LE(n, start + 2 + 4 * k);
      p += n;
    }
    let n = 0;
    if (signature) {
      n = writeText(b, signature, p + 4);
      if (n < 0) {
        flags |= SIGNATURE_UTF16;
        n = -n;
      }
    }
    if (sourceNumbers && code === ROLE_CODES.assistant && f1) flags |= SOURCE_NUMBERS;
    b[start + 1] = flags;
    b.writeUInt32LE(n, p);
    p += 4 + n;
    this.pos += p - start;
    this.used = p;
    return this.pos;
  }

  /**
   * Append a trajectory's index block: offsets (n+1 float64, first so that they stay 8-byte aligned
   * when read into a fresh buffer), roles (n). `offsets` are this writer's logical offsets (appendMessage);
   * the block holds them as file positions. Returns the block's file position. With a placer the
   * trajectory is placed and written now.
   */
  appendIndexBlock(offsets: Float64Array, roles: Uint8Array): number {
    const bytes = indexBlockBytes(roles.length);
    this.reserve(bytes);
    // A run started while the trajectory was appended (reserve) already has its place.
    let run = this.placer !== null && this.delta !== null;
    if (this.delta === null) {
      // The trajectory is in the buffer whole, with its block (and any records before offsets[0], of a
      // trajectory that turned bad: nothing refers to them, they are placed along).
      const size = this.used + bytes;
      run = size > SEGMENT_BYTES;
      this.delta = (run ? this.placer!.startRun() : this.placer!.place(size)) - (this.pos - this.used);
    }
    const delta = this.delta;
    const start = this.pos;
    const b = this.buf;
    let p = this.used;
    if (delta === 0) b.set(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength), p);
    else for (let i = 0; i < offsets.length; i++) b.writeDoubleLE(offsets[i]! + delta, p + 8 * i);
    p += offsets.byteLength;
    b.set(roles, p);
    p += roles.length;
    this.pos += p - this.used;
    this.used = p;
    if (this.placer) {
      this.flush();
      // A placed trajectory was counted in its segment by place(); a run's segments are pinned.
      if (run) this.placer.endRun(this.pos + delta);
      this.delta = null;
    }
    return start + delta;
  }

  get offset(): number {
    return this.pos;
  }

  flush(): void {
    // Stryker disable next-line all: equivalent: sinking an empty buffer writes nothing
    if (this.used > 0 && this.delta !== null) this.sink(this.buf.subarray(0, this.used), this.pos - this.used + this.delta);
    // Bytes without a place (delta null) are records of a trajectory that turned bad: dropped.
    this.used = 0;
    // Stryker disable next-line all: buffer sizing only: the same bytes are written
    if (this.buf.length > this.capacity) this.buf = Buffer.allocUnsafe(this.capacity);
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
  }
}

export class SpillReader {
  private readonly fds = new Map<string, number>();

  read(path: string, start: number, end: number): string {
    return this.readBytes(path, start, end).toString('utf8');
  }

  readBytes(path: string, start: number, end: number): Buffer {
    if (end <= start) return Buffer.alloc(0);
    let fd = this.fds.get(path);
    if (fd === undefined) this.fds.set(path, (fd = openSync(path, 'r')));
    const b = Buffer.allocUnsafe(end - start);
    if (readAt(fd, b, 0, b.length, start) !== b.length) throw new Error(`spill file ${path} is shorter than expected`);
    return b;
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

/**
 * The first 16 bytes of the SHA-256 of the emitted part of the record at `p` in `b` (role code to the
 * end of field 2): equal exactly when the emitted messages are equal (fixed field order, lengths and
 * null flags included), so it stands in for the message in the exact-duplicate key.
 */
export function emittedHash(b: Buffer, p: number): Buffer {
  const bytes = b[p + 1]! & SOURCE_NUMBERS ? recordByValue(b, p) : b.subarray(p, p + emittedLength(b, p));
  return (hash('sha256', bytes, 'buffer') as unknown as Buffer).subarray(0, 16);
}

/** The emitted part of a SOURCE_NUMBERS record as it would be with its tool_calls by value. */
function recordByValue(b: Buffer, p: number): Buffer {
  const { l0, l1, l2 } = recordHeader(b, p);
  const f1 = p + HEADER + l0;
  const byValue = Buffer.from(jsonTextByValue(b.toString('utf8', f1, f1 + l1)), 'utf8');
  const header = Buffer.from(b.subarray(p, p + HEADER));
  header[1] = header[1]! & ~SOURCE_NUMBERS;
  header.writeUInt32LE(byValue.length, 6);
  return Buffer.concat([header, b.subarray(p + HEADER, f1), byValue, b.subarray(f1 + l1, f1 + l1 + l2)]);
}

/** Bytes of the emitted part of the record at `p` (header and fields 0-2), from its header alone. */
export function emittedLength(b: Buffer, p: number): number {
  return HEADER + b.readUInt32LE(p + 2) + b.readUInt32LE(p + 6) + b.readUInt32LE(p + 10);
}

/** U+FFFD in UTF-8: what Buffer.write puts for a lone surrogate (and for U+FFFD itself). */
const REPLACEMENT = Buffer.from('\ufffd', 'utf8');

/**
 * `s` written at `p` in `b` (room for 3 bytes per UTF-16 unit): its UTF-8 byte count, or, for a
 * string holding a lone surrogate, minus its UTF-16LE byte count. UTF-8 would turn the surrogate
 * into U+FFFD, so only a string whose UTF-8 holds U+FFFD is scanned for one: the scan of every
 * string cost more than the search of its bytes, and an ASCII string (its byte count is its length)
 * is not searched at all.
 */
function writeText(b: Buffer, s: string, p: number): number {
  const n = b.write(s, p, 'utf8');
  // As many bytes as UTF-16 units: every unit was ASCII (any other takes 2 or 3 bytes), no U+FFFD.
  if (n === s.length || b.subarray(p, p + n).indexOf(REPLACEMENT) === -1 || isWellFormed(s)) return n;
  return -b.write(s, p, 'utf16le');
}

/**
 * The emitted message's members by role code, in emit.ts's order, each with the record field (0-2)
 * that holds it, or null for a `role` given by the code itself. The one statement of which field is
 * which member, for the record's three readings: recordFields (message to fields), decodeRecord
 * (fields to message) and writeRecordJson (fields to the message's JSON). `prefix` is the member's
 * key as JSON.stringify writes it, with the `{` or `,` before it.
 */
interface Member {
  key: 'role' | 'content' | 'tool_calls' | 'name' | 'tool_call_id';
  field: 0 | 1 | 2 | null;
  prefix: string;
}
function members(list: [Member['key'], Member['field']][]): readonly Member[] {
  return list.map(([key, field], i) => ({ key, field, prefix: `${i === 0 ? '{' : ','}${JSON.stringify(key)}:` }));
}
/** system, user and any code without an entry below: the role's name, then the content. */
const PLAIN = members([['role', null], ['content', 0]]);
const MEMBERS: Readonly<Partial<Record<number, readonly Member[]>>> = {
  [ROLE_CODES.assistant]: members([['role', null], ['content', 0], ['tool_calls', 1]]),
  [ROLE_CODES.tool]: members([['role', null], ['content', 0], ['name', 1], ['tool_call_id', 2]]),
  // A role outside the contract's four keeps its name in field 1.
  [ROLE_CODES.other]: members([['role', 1], ['content', 0]]),
};
function membersOf(code: number): readonly Member[] {
  return MEMBERS[code] ?? PLAIN;
}

/** The record's fields 0-2 of an emitted message (the inverse of decodeRecord). */
function recordFields(code: number, e: EmittedMessage): [string | null, string | null, string | null] {
  const fields: [string | null, string | null, string | null] = [null, null, null];
  for (const m of membersOf(code)) if (m.field !== null) fields[m.field] = e[m.key] ?? null;
  return fields;
}

/** The header of the record at `p` in `b`: role code, flags and the byte lengths of fields 0-2. */
function recordHeader(b: Buffer, p: number): { code: number; flags: number; l0: number; l1: number; l2: number } {
  return { code: b[p]!, flags: b[p + 1]!, l0: b.readUInt32LE(p + 2), l1: b.readUInt32LE(p + 6), l2: b.readUInt32LE(p + 10) };
}

/** Field k of a record, `len` bytes at `start`, as text (null by its flag, UTF-16LE by its flag). */
function fieldText(b: Buffer, flags: number, k: number, start: number, len: number): string | null {
  return flags & (1 << k) ? null : b.toString(flags & (8 << k) ? 'utf16le' : 'utf8', start, start + len);
}

/** An emitted message (emit.ts) from its spill record at `p` in `b`; returns it and the record's end. */
export function decodeRecord(b: Buffer, p: number): { message: EmittedMessage; end: number; signatureStart: number } {
  const { code, flags, l0, l1, l2 } = recordHeader(b, p);
  let q = p + HEADER;
  const f0 = fieldText(b, flags, 0, q, l0);
  q += l0;
  const f1 = fieldText(b, flags, 1, q, l1);
  q += l1;
  const f2 = fieldText(b, flags, 2, q, l2);
  q += l2;
  const sig = b.readUInt32LE(q);
  const end = q + 4 + sig;
  const message: Record<string, string | null> = {};
  for (const m of membersOf(code)) message[m.key] = m.field === null ? ROLE_NAMES[code]! : m.field === 0 ? f0 : m.field === 1 ? f1 : f2;
  return { message: message as unknown as EmittedMessage, end, signatureStart: q + 4 };
}

/**
 * JSON.stringify(decodeRecord(b, p).message), written into `out` from the record's bytes: a UTF-8
 * field is escaped as it is (it is well-formed: writeText keeps anything else as UTF-16LE), a UTF-16LE
 * field goes by its text. Returns the record's end.
 */
export function writeRecordJson(b: Buffer, p: number, out: JsonBytes): number {
  const { code, flags, l0, l1, l2 } = recordHeader(b, p);
  const f0 = p + HEADER;
  const f1 = f0 + l0;
  const f2 = f1 + l1;
  for (const m of membersOf(code)) {
    out.ascii(m.prefix);
    if (m.field === null) out.value(ROLE_NAMES[code]);
    else if (m.field === 0) fieldJson(b, flags, 0, f0, l0, out);
    else if (m.field === 1) fieldJson(b, flags, 1, f1, l1, out);
    else fieldJson(b, flags, 2, f2, l2, out);
  }
  out.ascii('}');
  const q = f2 + l2;
  return q + 4 + b.readUInt32LE(q);
}

/** JSON.stringify(fieldText(b, flags, k, start, len)) into `out`: a UTF-8 field from its bytes. */
function fieldJson(b: Buffer, flags: number, k: number, start: number, len: number, out: JsonBytes): void {
  if (flags & (1 << k)) out.ascii('null');
  else if (flags & (8 << k)) out.value(b.toString('utf16le', start, start + len));
  else out.utf8String(b, start, start + len);
}

/** The signature of the record at `p` in `b` (the whole record must be in `b`). */
export function decodeSignature(b: Buffer, p: number): string {
  return signatureBytes(b, p).toString(b[p + 1]! & SIGNATURE_UTF16 ? 'utf16le' : 'utf8');
}

/** The signature's bytes in the record at `p` in `b`: after the emitted part and its own 4-byte length. */
function signatureBytes(b: Buffer, p: number): Buffer {
  const start = p + emittedLength(b, p) + 4;
  return b.subarray(start, start + b.readUInt32LE(start - 4));
}

/** Bytes of the index block of an n-message trajectory. */
export function indexBlockBytes(n: number): number {
  return 8 * (n + 1) + n;
}

/** A trajectory's arrays read back from its index block. */
export function readIndexBlock(reader: SpillReader, path: string, block: number, n: number): { offsets: Float64Array; roles: Uint8Array } {
  // Copy into a fresh ArrayBuffer: a pooled Buffer may start at an offset a Float64Array cannot use.
  const u8 = new Uint8Array(reader.readBytes(path, block, block + indexBlockBytes(n)));
  const o = 8 * (n + 1);
  return { offsets: new Float64Array(u8.buffer, 0, n + 1), roles: u8.subarray(o, o + n) };
}

const ASSISTANT_KEY = Buffer.from('assistant\n');
const TOOL_KEY = Buffer.from('tool\n');
const NEWLINE_KEY = Buffer.from('\n');
const ROLE_KEYS = ROLE_NAMES.map((r) => Buffer.from(`${r}\n`));

/**
 * The comparison-key hash (key-hash.ts keyHash of sign.ts keyPartsOf) of the message whose record
 * starts at `p` in `b` (the whole record must be in `b`): the record holds everything the key depends
 * on, the role (the name itself for a role outside the four), the content, a tool result's name and
 * an assistant message's signature, exactly as encodeTrajectory had them. Hashed from the record's
 * bytes where they are the key's (UTF-8 fields, a content norm leaves as it is), else from the text.
 */
export function recordKeyHash(b: Buffer, p: number): Buffer {
  const { code, flags, l0, l1 } = recordHeader(b, p);
  const f0 = p + HEADER;
  if (code === ROLE_CODES.assistant) {
    const sig = signatureBytes(b, p);
    // A signature kept as UTF-8 is well-formed: its WTF-8 is these very bytes.
    if (!(flags & SIGNATURE_UTF16)) return keyHashOfBytes([ASSISTANT_KEY, sig]);
    return keyHash(keyPartsOf('assistant', null, null, sig.toString('utf16le')));
  }
  const content = b.subarray(f0, f0 + l0);
  const f1 = b.subarray(f0 + l0, f0 + l0 + l1);
  // A null content or tool name keys as '' (its bytes are empty); a field kept as UTF-16LE (flag bits
  // 3 and 4) holds a lone surrogate and goes by the text. Field 1 of system and user is unused.
  const f1Used = code === ROLE_CODES.tool || code === ROLE_CODES.other;
  if (!(flags & 8) && !(f1Used && flags & 16) && normKeepsUtf8(content)) {
    if (code === ROLE_CODES.tool) return keyHashOfBytes([TOOL_KEY, f1, NEWLINE_KEY, content]);
    return keyHashOfBytes(code === ROLE_CODES.other ? [f1, NEWLINE_KEY, content] : [ROLE_KEYS[code]!, content]);
  }
  const text = fieldText(b, flags, 0, f0, l0);
  const f1Text = fieldText(b, flags, 1, f0 + l0, l1);
  if (code === ROLE_CODES.tool) return keyHash(keyPartsOf('tool', text, f1Text, ''));
  return keyHash(keyPartsOf(code === ROLE_CODES.other ? f1Text! : ROLE_NAMES[code]!, text, null, ''));
}
