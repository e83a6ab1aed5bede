// The walk over spilled trajectories (mine-pairs.ts's walk, and worker walk tasks): a trajectory's
// roles and offsets come from its index block; comparison-key hashes, messages and signatures from
// its spill records, each read when the walk first needs it.
import { createHash } from 'node:crypto';
import { makeRow } from '../contract/emit.js';
import { HASH_BYTES } from './key-hash.js';
import { ROLE_NAMES, type DecodedTrajectory, type WalkTrajectory } from './protocol.js';
import { continuation, type MinedContinuation } from '../shapes/continuation.js';
import { HEADER as SPILL_HEADER, SIGNATURE_UTF16, SpillReader, decodeRecord, emittedHash, emittedLength, readIndexBlock, recordKeyHash, writeRecordJson } from './spill.js';
import type { JsonBytes } from './json-bytes.js';
import type { EmittedMessage, PairRow } from '../types.js';
import { assistantTurn, type InstanceHooks, type KeptRow, type Walkable } from '../contract/walk.js';

export type { MinedContinuation } from '../shapes/continuation.js';

/** Spill bytes read at once for the comparison keys of consecutive messages. */
const KEY_READ = 1 << 16;

/** A decoded trajectory as the walk sees it: roles and offsets from its spill index block. */
export class SpillTrajectory implements Walkable {
  /** The index block's arrays, present only while the trajectory's instance is walked. */
  private d: ReturnType<typeof readIndexBlock> | null = null;
  private reader: SpillReader | null = null;
  /** Comparison-key hashes of messages [0, hashed), 16 bytes each, computed as the walk reaches them. */
  private hashes: Uint8Array | null = null;
  private hashed = 0;
  /** Spill bytes [chunkStart, chunkStart + chunk.length) last read for keys. */
  private chunk: Buffer | null = null;
  private chunkStart = 0;
  constructor(
    readonly trajectoryId: string,
    readonly repo: string | null,
    private readonly meta: Pick<DecodedTrajectory, 'length' | 'block' | 'tools'>,
    readonly spillPath: string,
  ) {}
  load(reader: SpillReader): this {
    this.d ??= readIndexBlock(reader, this.spillPath, this.meta.block, this.meta.length);
    this.reader = reader;
    return this;
  }
  unload(): void {
    this.d = null;
    this.emitted = null;
    this.prefix = 0;
    this.hashes = null;
    this.hashed = 0;
    this.chunk = null;
  }
  private get a(): NonNullable<SpillTrajectory['d']> {
    if (!this.d) throw new Error(`trajectory ${this.trajectoryId}: index block not loaded`);
    return this.d;
  }
  get length(): number {
    return this.meta.length;
  }
  /** This trajectory by reference, for a walk task in a worker. */
  ref(): WalkTrajectory {
    return { trajectoryId: this.trajectoryId, repo: this.repo, length: this.meta.length, block: this.meta.block, spill: this.spillPath };
  }
  role(i: number): string {
    return ROLE_NAMES[this.a.roles[i]!]!;
  }
  sameKey(i: number, other: SpillTrajectory): boolean {
    const a = this.keyHashes(i);
    const b = other.keyHashes(i);
    for (let k = i * HASH_BYTES, e = k + HASH_BYTES; k < e; k++) if (a[k] !== b[k]) return false;
    return true;
  }
  /** The comparison-key hash of message i as a 16-character latin1 string (a Map key for the tree pairing). */
  keyHash(i: number): string {
    const h = this.keyHashes(i);
    return Buffer.from(h.buffer, h.byteOffset + i * HASH_BYTES, HASH_BYTES).toString('latin1');
  }
  /**
   * The hashes array, holding those of messages 0..i at least. Walks compare index after index, so
   * the hashes are computed in order, from records read KEY_READ bytes at a time (a longer record whole).
   */
  private keyHashes(i: number): Uint8Array {
    if (i < 0 || i >= this.length) throw new RangeError(`trajectory ${this.trajectoryId}: no message ${i}`);
    const h = (this.hashes ??= new Uint8Array(this.length * HASH_BYTES));
    const o = this.a.offsets;
    for (; this.hashed <= i; this.hashed++) {
      const j = this.hashed;
      const start = o[j]!;
      const end = o[j + 1]!;
      if (!this.chunk || start < this.chunkStart || end > this.chunkStart + this.chunk.length) {
        let to = j + 1;
        while (to < this.length && o[to + 1]! - start <= KEY_READ) to++;
        this.chunk = this.reader!.readBytes(this.spillPath, start, o[to]!);
        this.chunkStart = start;
      }
      h.set(recordKeyHash(this.chunk, start - this.chunkStart), j * HASH_BYTES);
      // A record larger than a read (a 300 MB tool output) is not kept once hashed.
      if (this.chunk.length > KEY_READ) this.chunk = null;
    }
    if (this.hashed === this.length) this.chunk = null;
    return h;
  }
  /** Emitted message i alone, read back from the spill. */
  message(reader: SpillReader, i: number): EmittedMessage {
    return decodeRecord(this.recordBytes(reader, i, i), 0).message;
  }
  get tools(): string | null {
    return this.meta.tools ?? null;
  }
  /** Emitted-form hashes of messages [0, prefix) (spill.ts emittedHash), computed on demand while loaded. */
  private emitted: Uint8Array | null = null;
  private prefix = 0;
  /** The emitted-form hash of message i; with `withPrefix`, also of every message before it (read in one go). */
  emittedHash(reader: SpillReader, i: number, withPrefix: boolean): Uint8Array {
    const e = (this.emitted ??= new Uint8Array(this.length * HASH_BYTES));
    const o = this.a.offsets;
    if (i < this.prefix) return e.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES);
    const from = withPrefix ? this.prefix : i;
    const b = reader.readBytes(this.spillPath, o[from]!, o[i + 1]!);
    for (let j = from; j <= i; j++) e.set(emittedHash(b, o[j]! - o[from]!), j * HASH_BYTES);
    if (withPrefix) this.prefix = i + 1;
    return e.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES);
  }
  /** Emitted messages 0..i (inclusive) read back from the spill. */
  messages(reader: SpillReader, upTo: number): EmittedMessage[] {
    const b = this.recordBytes(reader, 0, upTo);
    const out: EmittedMessage[] = [];
    let p = 0;
    for (let j = 0; j <= upTo; j++) {
      const r = decodeRecord(b, p);
      out.push(r.message);
      p = r.end;
    }
    return out;
  }
  /** The spill bytes of records from..to (inclusive), end to end. */
  recordBytes(reader: SpillReader, from: number, to: number): Buffer {
    const o = this.a.offsets;
    return reader.readBytes(this.spillPath, o[from]!, o[to + 1]!);
  }
  signature(reader: SpillReader, i: number): string {
    const o = this.a.offsets;
    // The signature ends the record; its start follows from the header's field lengths.
    const header = reader.readBytes(this.spillPath, o[i]!, o[i]! + SPILL_HEADER);
    const start = o[i]! + emittedLength(header, 0) + 4;
    return reader.readBytes(this.spillPath, start, o[i + 1]!).toString(header[1]! & SIGNATURE_UTF16 ? 'utf16le' : 'utf8');
  }
}

/**
 * `cont` (--continuation trajectory): also read both sides to their end and keep the continuations
 * beside the row. The row itself, and so the exact-duplicate key and every counter, stays the
 * action-level one of the contract: only the emitted payload differs.
 */
export function hooksFor(inst: { instanceId: string }, reader: SpillReader, cont: { maxMessages: number | undefined; rows: Map<PairRow, MinedContinuation> } | null) {
  return {
    signature: (t: SpillTrajectory, i: number) => t.signature(reader, i),
    // Contract 5.4 compares stable JSON of prompt, chosen and rejected; an emitted message's JSON is
    // canonical (emit.ts), so the sequence of their hashes is an equivalent key without reading the spill.
    dedupeKey: (r: SpillTrajectory, f: SpillTrajectory, i: number) => {
      const h = createHash('sha256');
      r.emittedHash(reader, i, true);
      for (let j = 0; j <= i; j++) h.update(r.emittedHash(reader, j, true));
      h.update(f.emittedHash(reader, i, false));
      return h.digest('base64');
    },
    buildRow: (r: SpillTrajectory, f: SpillTrajectory, i: number, similarity: number) => {
      const rm = r.messages(reader, cont ? r.length - 1 : i);
      // The failed side's prefix equals the prompt: only its message i is read (unless continuing).
      const fm = cont ? f.messages(reader, f.length - 1) : null;
      const rejected = fm ? fm[i]! : f.message(reader, i);
      const row = makeRow(rm.slice(0, i), rm[i]!, rejected, {
        instance_id: inst.instanceId,
        repo: r.repo,
        chosen_trajectory_id: r.trajectoryId,
        rejected_trajectory_id: f.trajectoryId,
        divergence_turn: assistantTurn(r, i),
        divergence_msg_index: i,
        action_similarity: similarity,
      });
      if (cont) {
        const chosen = continuation(rm, i, cont.maxMessages);
        const rej = continuation(fm!, i, cont.maxMessages);
        cont.rows.set(row, { chosen, rejected: rej, complete: chosen.length === r.length - i && rej.length === f.length - i });
      }
      return row;
    },
  };
}

/**
 * hooksFor's rows (without a continuation) written as JSONL into `out` as they are built: the bytes
 * of JSON.stringify of hooksFor's row and a newline, written from the spill records without decoding
 * them (spill.ts writeRecordJson). buildRow gives back only what walkInstance reads of a kept row.
 */
export function jsonlHooksFor(inst: { instanceId: string }, reader: SpillReader, out: JsonBytes): InstanceHooks<SpillTrajectory, KeptRow> {
  const { signature, dedupeKey } = hooksFor(inst, reader, null);
  return {
    signature,
    dedupeKey,
    buildRow: (r, f, i, similarity) => {
      const turn = assistantTurn(r, i);
      // makeRow's members in order: the prompt (messages 0..i-1 of the resolved side), chosen
      // (its message i), rejected (the failed side's message i), then the scalars.
      const rb = r.recordBytes(reader, 0, i);
      out.ascii('{"prompt":[');
      let p = 0;
      for (let j = 0; j < i; j++) {
        if (j > 0) out.ascii(',');
        p = writeRecordJson(rb, p, out);
      }
      out.ascii('],"chosen":');
      writeRecordJson(rb, p, out);
      out.ascii(',"rejected":');
      writeRecordJson(f.recordBytes(reader, i, i), 0, out);
      out.member('instance_id', inst.instanceId);
      out.member('repo', r.repo);
      out.member('chosen_trajectory_id', r.trajectoryId);
      out.member('rejected_trajectory_id', f.trajectoryId);
      out.member('divergence_turn', turn);
      out.member('divergence_msg_index', i);
      out.member('action_similarity', similarity);
      out.ascii('}\n');
      return { divergence_turn: turn };
    },
  };
}
