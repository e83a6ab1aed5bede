// The spill store (spill.ts) held in memory: mineRows (memory.ts) encodes, spills and walks rows
// with the very code of the streaming pipeline (encode.ts, spill-walk.ts), without a temporary file.
import { SpillReader, SpillWriter } from './spill.js';

/** The path every SpillTrajectory of a memory store names; the reader refuses any other. */
export const MEMORY_SPILL_PATH = '<memory spill>';

export class MemorySpillWriter extends SpillWriter {
  private readonly chunks: Buffer[] = [];
  private bytes: Buffer | null = null;

  constructor() {
    super(null);
  }

  protected override sink(b: Buffer): void {
    // The writer reuses its buffer: keep a copy.
    this.chunks.push(Buffer.from(b));
    this.bytes = null;
  }

  /** Everything appended so far (flushed first). */
  contents(): Buffer {
    this.flush();
    return (this.bytes ??= Buffer.concat(this.chunks));
  }
}

export class MemorySpillReader extends SpillReader {
  constructor(private readonly store: MemorySpillWriter) {
    super();
  }

  override readBytes(path: string, start: number, end: number): Buffer {
    if (path !== MEMORY_SPILL_PATH) throw new Error(`memory spill: unknown spill path ${path}`);
    if (end <= start) return Buffer.alloc(0);
    const b = this.store.contents();
    if (start < 0 || end > b.length) throw new Error(`memory spill: bytes [${start}, ${end}) outside the ${b.length} written`);
    return b.subarray(start, end);
  }

  override close(): void {}
}
