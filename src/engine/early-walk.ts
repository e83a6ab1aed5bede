// Pass 3 for the contract's own JSONL rows, in the workers and overlapping pass 2: an instance is
// walked as soon as its last trajectory is decoded (walk tasks go ahead of queued decodes), its
// rows are serialised there, and the bytes wait in a file until every earlier instance is written.
// The output order stays the instance order; only the work moves, so the output is unchanged.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { Counters } from '../contract/counters.js';
import type { Pool } from './pool.js';
import { mark } from '../io/timeline.js';
import type { Task, WalkInstance, WalkResult } from './protocol.js';

/** Ready instances per walk task: small, so that walk tasks slot in between decodes. */
const WALK_CHUNK = 16;
/** Bytes of rows read from the rows file and handed to the output at once. */
const COPY_BATCH = 8 * 2 ** 20;

export class EarlyWalk {
  /** Trajectories of each instance not decoded yet. */
  private readonly pending: Int32Array;
  private ready: number[] = [];
  private readonly tasks: Promise<void>[] = [];
  /** Per instance: offset and length of its rows in the rows file (-1: not walked yet). */
  private readonly spans: Float64Array;
  private fd: number | null;
  private pos = 0;

  constructor(
    private readonly pool: Pool,
    sizes: readonly number[],
    /** The instance's decoded trajectories (called once it is ready). */
    private readonly walkInstance: (index: number) => WalkInstance,
    private readonly opts: { minSimilaritySkip: number; maxPairsPerInstance: number },
    private readonly counters: Counters,
    rowsPath: string,
  ) {
    this.pending = Int32Array.from(sizes);
    this.spans = new Float64Array(2 * sizes.length).fill(-1);
    this.fd = openSync(rowsPath, 'w+');
    sizes.forEach((n, i) => {
      if (n === 0) this.ready.push(i);
    });
  }

  /** One more trajectory of instance `index` is decoded (or found bad). */
  done(index: number): void {
    if (--this.pending[index]! === 0) this.ready.push(index);
  }

  /** Send the ready instances to the workers, in chunks; `all` also sends a last partial chunk. */
  dispatch(all = false): void {
    while (this.ready.length >= WALK_CHUNK || (all && this.ready.length > 0)) {
      const chunk = this.ready.splice(0, WALK_CHUNK);
      const task: Task = { kind: 'walk', instances: chunk.map((i) => this.walkInstance(i)), ...this.opts };
      const p = this.pool.run<WalkResult>(task, true).then((r) => this.store(chunk, r));
      p.catch(() => {}); // awaited in finish(); this only keeps an early failure from being unhandled
      this.tasks.push(p);
    }
  }

  private store(chunk: number[], r: WalkResult): void {
    for (const [k, v] of Object.entries(r.counters)) this.counters[k as keyof Counters] += v;
    let written = 0;
    const fd = this.fd!;
    while (written < r.jsonl.length) written += writeSync(fd, r.jsonl, written, r.jsonl.length - written);
    let at = this.pos;
    chunk.forEach((index, k) => {
      this.spans[2 * index] = at;
      this.spans[2 * index + 1] = r.sizes[k]!;
      at += r.sizes[k]!;
    });
    this.pos += r.jsonl.length;
  }

  /**
   * After pass 2: walk what is left, then hand every instance's rows over in instance order, in
   * batches of up to COPY_BATCH bytes read into one buffer: `write` must be done with its bytes when
   * its promise resolves (the next batch reuses them). `walked` is called once every instance is
   * walked, before the copy.
   */
  async finish(write: (bytes: Uint8Array) => Promise<void>, walked?: () => void): Promise<void> {
    this.dispatch(true);
    await Promise.all(this.tasks);
    mark('mine: every instance walked');
    // Only the rows file is read from here on: the caller may let go of the rest now.
    walked?.();
    try {
      let batch = Buffer.allocUnsafe(0);
      let used = 0;
      const flush = async () => {
        if (used > 0) await write(batch.subarray(0, used));
        used = 0;
      };
      for (let i = 0; i < this.spans.length / 2; i++) {
        const [at, n] = [this.spans[2 * i]!, this.spans[2 * i + 1]!];
        if (n < 0) throw new Error(`instance ${i} was never walked`);
        if (n === 0) continue;
        if (used + n > batch.length) {
          await flush();
          // One instance's rows may be larger than a batch: it gets a buffer of its size.
          if (n > batch.length) batch = Buffer.allocUnsafe(Math.max(n, Math.min(COPY_BATCH, this.pos)));
        }
        let got = 0;
        while (got < n) {
          const k = readSync(this.fd!, batch, used + got, n - got, at + got);
          if (k === 0) throw new Error('the rows file is shorter than written');
          got += k;
        }
        used += n;
      }
      await flush();
    } finally {
      this.close();
    }
  }

  /** Release the rows file (also on a failed run; the spill folder it lives in is removed anyway). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
