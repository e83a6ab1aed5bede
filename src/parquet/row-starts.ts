// Where each row's level entries start in a column chunk, so that a page holding no wanted row is
// skipped before it is read or decompressed. A v1 data page keeps its levels inside the compressed
// body: without this, a snappy or gzip page must be decompressed whole only to learn which rows it
// holds. Every leaf under the same lists has the same repetition levels (Dremel), so the starts are
// read once from the cheapest such leaf (the guide: column.ts rowStartsOf) and used for the others.
// A leaf outside any list has one entry per row. Pages that are decoded are checked against the
// starts (check), so a file whose leaves disagree cannot place a wanted row's values wrongly.
import type { LeafColumn, LogicalNode } from './meta.js';
import { ParquetFormatError } from './thrift.js';

export class RowStarts {
  private constructor(
    /** Entry index of each row's first entry, then the chunk's entry count; null: one entry per row. */
    private readonly starts: Float64Array | null,
    readonly rows: number,
  ) {}

  /** A leaf outside any list: entry e is row e. */
  static identity(rows: number): RowStarts {
    return new RowStarts(null, rows);
  }

  /** From the entry index of each row's first entry (strictly ascending, the first 0) and the entry count. */
  static of(starts: Float64Array, rows: number, entries: number): RowStarts {
    if (starts.length < rows + 1) throw new RangeError('row starts: too few');
    const s = starts.subarray(0, rows + 1);
    s[rows] = entries;
    return new RowStarts(s, rows);
  }

  /** Entries of the chunk (null for a leaf outside any list: unknown here, one per row). */
  get entries(): number | null {
    return this.starts === null ? null : this.starts[this.rows]!;
  }

  /** The row holding entry `e` (0 <= e < entries). */
  rowOf(e: number): number {
    const s = this.starts;
    if (s === null) return e;
    // The last row whose start is at or before e.
    let lo = 0;
    let hi = this.rows - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= e) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The row starts of a decoded page (entries [first, first + count), `reps` its repetition levels)
   * must be exactly these: the pages skipped on their word hold no entry of a wanted row only if
   * every leaf under the same lists agrees with the guide.
   */
  check(reps: Uint8Array | null, first: number, count: number): void {
    const s = this.starts;
    if (s === null || reps === null) return;
    let r = this.rowOf(first);
    if (s[r]! < first) r++;
    for (let i = 0; i < count; i++) {
      const starts = s[r] === first + i;
      if ((reps[i] === 0) !== starts) throw new ParquetFormatError(`entry ${first + i} ${starts ? 'continues' : 'starts'} a row where the other leaves of its list say it ${starts ? 'starts' : 'continues'} one`);
      if (starts) r++;
    }
  }
}

/**
 * The list a leaf's repetition levels belong to: its deepest enclosing list node (leaves under the
 * same one have the same repetition levels), or null outside any list.
 */
export function repetitionOwner(leaf: LeafColumn): LogicalNode | null {
  let owner: LogicalNode | null = null;
  for (const n of leaf.nodes) if (n.kind === 'list') owner = n;
  return owner;
}
