// Where a worker's spill file puts each trajectory, so that the space of walked trajectories is
// written again instead of the file growing by every byte spilled. Appending gigabytes to a new file
// costs the kernel 0.2-2.7 CPU-s per GB here, depending on the page cache's state (14.8 s of system
// time in one 67k run against 4.1 in the next), while writing pages already in the page cache costs
// 0.15 every time (bench/spill-write.mjs; bench/README.md, "Spill space written again"). Only the
// early walk (early-walk.ts) releases trajectories; without releases nothing is ever written twice.
//
// The file is cut into segments of SEGMENT_BYTES. A trajectory whose records and index block fit in
// a segment is placed whole in one (spill.ts SpillWriter buffers it until its index block), and the
// segment counts the trajectories placed in it. A larger one streams to a run of fresh segments at the
// file's end, which are pinned: never written again. The main thread releases a trajectory once its
// instance's rows are stored (nothing reads it after that); a segment whose count falls to 0 goes on
// a ring the writer takes free segments from. The counts and the ring live in one SharedArrayBuffer
// shared by the main thread (the only releaser) and the worker that writes the file (the only placer).
import { mark } from '../io/timeline.js';

/**
 * Bytes per segment: a few trajectories each (a tail too short for the next one is left unused).
 * DIVERGENCE_MINE_SPILL_SEGMENT (a power of two from 64 KiB to 1 GiB) sets another size, so that
 * tests see segments written again on small inputs; the main thread and the workers read the same
 * environment.
 */
export const SEGMENT_BYTES = segmentBytes(process.env.DIVERGENCE_MINE_SPILL_SEGMENT);

/** The segment size `given` names, if it is a power of two from 64 KiB to 1 GiB; else 4 MiB. */
export function segmentBytes(given: string | undefined): number {
  const n = Number(given);
  return Number.isInteger(n) && n >= 2 ** 16 && n <= 2 ** 30 && (n & (n - 1)) === 0 ? n : 4 * 2 ** 20;
}
/** Segments counted (1 TiB of spill); segments beyond are never written twice. */
const COUNTED = 2 ** 18;
/** Free-segment ring entries; an entry overwritten before the writer takes it is only space not reused. */
const RING = 2 ** 12;
/** The count of a run's segment: no release brings it to 0. */
const PINNED = 2 ** 30;
/** Int32 layout: [0] ring head (entries pushed so far), [1, 1 + RING) ring, then one count per segment. */
const HEAD = 0;
const RING_AT = 1;
const COUNTS_AT = RING_AT + RING;

/** The shared part: segment counts and the free ring. */
export class SpillSpace {
  readonly shared: SharedArrayBuffer;
  private readonly words: Int32Array;

  constructor(shared?: SharedArrayBuffer) {
    this.shared = shared ?? new SharedArrayBuffer(4 * (COUNTS_AT + COUNTED));
    this.words = new Int32Array(this.shared);
    if (this.words.length !== COUNTS_AT + COUNTED) throw new Error(`spill space: ${this.shared.byteLength} bytes shared, ${4 * (COUNTS_AT + COUNTED)} expected`);
  }

  /** The trajectory whose index block starts at `block` is walked: its segment may be written again. */
  release(block: number): void {
    const k = segmentOf(block);
    if (k >= COUNTED) return;
    const before = Atomics.sub(this.words, COUNTS_AT + k, 1);
    if (before <= 0) throw new Error(`spill space: segment ${k} released more often than placed`);
    if (before !== 1) return;
    const head = Atomics.load(this.words, HEAD);
    Atomics.store(this.words, RING_AT + (head % RING), k);
    Atomics.store(this.words, HEAD, head + 1);
  }

  /** Trajectories placed in segment k and not released (PINNED or more for a run's segment). */
  count(k: number): number {
    return k < COUNTED ? Atomics.load(this.words, COUNTS_AT + k) : PINNED;
  }

  hold(k: number): void {
    if (k < COUNTED) Atomics.add(this.words, COUNTS_AT + k, 1);
  }

  pin(k: number): void {
    if (k < COUNTED) Atomics.store(this.words, COUNTS_AT + k, PINNED);
  }

  /** Ring entries pushed so far. */
  pushed(): number {
    return Atomics.load(this.words, HEAD);
  }

  entry(i: number): number {
    return Atomics.load(this.words, RING_AT + (i % RING));
  }
}

function segmentOf(position: number): number {
  return Math.floor(position / SEGMENT_BYTES);
}

/** The writer's side: chooses where each trajectory goes (one per spill file, in its worker). */
export class SpillPlacer {
  /** Segments in the file. */
  private segments = 0;
  /** The segment being filled (-1: none) and the bytes used in it. */
  private current = -1;
  private fill = 0;
  /** Ring entries taken so far. */
  private taken = 0;
  /** A segment was written again (marked once on the timeline). */
  private reused = false;

  constructor(readonly space: SpillSpace) {}

  /** Where a trajectory of `bytes` (at most SEGMENT_BYTES) goes: the rest of the current segment, a free one, or a new one. */
  place(bytes: number): number {
    if (bytes > SEGMENT_BYTES) throw new RangeError(`spill space: ${bytes} bytes do not fit a segment`);
    if (this.current >= 0 && this.fill + bytes <= SEGMENT_BYTES) {
      const at = this.current * SEGMENT_BYTES + this.fill;
      this.fill += bytes;
      return this.hold(at);
    }
    // Every trajectory of the full segment walked already: fill it again from its start.
    const again = this.current >= 0 && this.space.count(this.current) === 0 ? this.current : this.freeSegment();
    if (again !== null && !this.reused) {
      this.reused = true;
      mark('spill: a released segment is written again');
    }
    const k = again ?? this.segments++;
    this.current = k;
    this.fill = bytes;
    return this.hold(k * SEGMENT_BYTES);
  }

  private hold(at: number): number {
    this.space.hold(segmentOf(at));
    return at;
  }

  /** A released segment nothing was placed in since (not the current one), if the ring has one. */
  private freeSegment(): number | null {
    const pushed = this.space.pushed();
    // Entries overwritten before they were taken are skipped (their segments are only not reused).
    this.taken = Math.max(this.taken, pushed - RING);
    while (this.taken < pushed) {
      const k = this.space.entry(this.taken++);
      if (k !== this.current && k < this.segments && this.space.count(k) === 0) return k;
    }
    return null;
  }

  /** Start a run for a trajectory larger than a segment: returns its position, the file's end. */
  startRun(): number {
    this.current = -1;
    return this.segments * SEGMENT_BYTES;
  }

  /** The run started last ends at `end`: its segments are pinned. */
  endRun(end: number): void {
    const last = Math.ceil(end / SEGMENT_BYTES);
    for (let k = this.segments; k < last; k++) this.space.pin(k);
    this.segments = Math.max(this.segments, last);
  }
}
