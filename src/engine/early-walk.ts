// Pass 3 for the contract's own JSONL rows, in the workers and overlapping pass 2: an instance is
// walked as soon as its last trajectory is decoded (walk tasks go ahead of queued decodes, but not
// of the last ones: pool.ts run), its rows are serialised there, and the bytes wait in a file until
// every earlier instance is written.
// The output order stays the instance order; only the work moves, so the output is unchanged.
import { closeSync, openSync, writeSync } from 'node:fs';
import { readAt } from '../io/read-at.js';
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
  /** Walk tasks whose rows are stored, and what wakes finish() when one more is. */
  private storedTasks = 0;
  private stored: (() => void) | null = null;

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
      const instances = chunk.map((i) => this.walkInstance(i));
      const task: Task = { kind: 'walk', instances, ...this.opts };
      const p = this.pool.run<WalkResult>(task, true).then((r) => {
        this.store(chunk, r);
        // Nothing reads these trajectories again: their spill space may be written again.
        for (const inst of instances) for (const t of [...inst.resolved, ...inst.failed]) this.pool.release(t);
      });
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
    this.storedTasks++;
    this.stored?.();
  }

  /**
   * After pass 2: walk what is left, and hand every instance's rows over in instance order. Most
   * instances wait for the last row groups (their attempts are spread over the file), so what is left
   * is walked in instance order, and the walked prefix is copied out while the rest is walked: the
   * copy no longer waits for the last walk. Rows go in batches of up to COPY_BATCH bytes read into
   * one buffer: `write` must be done with its bytes when its promise resolves (the next batch reuses
   * them). `walked` is called once every instance is walked (the copy may still be going on).
   */
  async finish(write: (bytes: Uint8Array) => Promise<void>, walked?: () => void): Promise<void> {
    this.ready.sort((a, b) => a - b);
    this.dispatch(true);
    const all = Promise.all(this.tasks);
    let over = false;
    const walkedAll = all.then(() => {
      mark('mine: every instance walked');
      // Only the rows file is read from here on: the caller may let go of the rest now.
      walked?.();
    });
    walkedAll.then(
      () => (over = true),
      () => (over = true),
    );
    try {
      const copy = new OrderedCopy(this.spans.length / 2, COPY_BATCH);
      for (;;) {
        const before = this.storedTasks;
        await copy.run(this.spans, this.fd!, this.pos, write);
        if (copy.next === this.spans.length / 2) break;
        if (this.storedTasks !== before) continue; // stored while the copy was writing
        if (over) {
          await walkedAll; // a failed walk fails here
          if (copy.next === this.spans.length / 2) break;
          throw new Error(`instance ${copy.next} was never walked`);
        }
        // Wait for the next walk task to be stored (or for the walks to end).
        await new Promise<void>((resolve) => {
          this.stored = resolve;
          walkedAll.then(resolve, resolve);
        });
        this.stored = null;
      }
      await walkedAll;
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

/** The copy of the rows file to the output in instance order, as far as the instances are walked. */
class OrderedCopy {
  /** The first instance not yet handed to the output. */
  next = 0;
  private batch = Buffer.allocUnsafe(0);
  constructor(
    private readonly count: number,
    private readonly batchBytes: number,
  ) {}

  /**
   * Copy instances from `next` on while their rows are stored (a span of -1: not walked yet).
   * `stored`: the bytes in the rows file (a small output gets a batch of its size).
   */
  async run(spans: Float64Array, fd: number, stored: number, write: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    let used = 0;
    const flush = async () => {
      if (used > 0) await write(this.batch.subarray(0, used));
      used = 0;
    };
    for (; this.next < this.count; this.next++) {
      const [at, n] = [spans[2 * this.next]!, spans[2 * this.next + 1]!];
      if (n < 0) break;
      if (n === 0) continue;
      if (used + n > this.batch.length) {
        await flush();
        // One instance's rows may be larger than a batch: it gets a buffer of its size.
        if (n > this.batch.length) this.batch = Buffer.allocUnsafe(Math.max(n, Math.min(this.batchBytes, stored)));
      }
      if (readAt(fd, this.batch, used, n, at) !== n) throw new Error('the rows file is shorter than written');
      used += n;
    }
    await flush();
  }
}
