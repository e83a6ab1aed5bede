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
    /**
     * Entry index of the first entry of rows 0..known-1, then where row `known` starts (the chunk's
     * entry count when there is none): the located part of the chunk. null: one entry per row.
     */
    private readonly starts: Float64Array | null,
    /** Rows located. */
    readonly known: number,
  ) {}

  /** A leaf outside any list: entry e is row e. */
  static identity(rows: number): RowStarts {
    return new RowStarts(null, rows);
  }

  /**
   * From where rows 0..known-1 start (strictly ascending, the first 0) and, in `starts[known]`,
   * where the row after them starts.
   */
  static of(starts: Float64Array, known: number): RowStarts {
    if (starts.length < known + 1) throw new RangeError('row starts: too few');
    return new RowStarts(starts.subarray(0, known + 1), known);
  }

  /** Entries located (rows 0..known-1 end there); null for a leaf outside any list. */
  get located(): number | null {
    return this.starts === null ? null : this.starts[this.known]!;
  }

  /** The row holding entry `e`; past the located entries, `known` (that row or a later one). */
  rowOf(e: number): number {
    const s = this.starts;
    if (s === null) return e;
    // The last row whose start is at or before e (row `known` for every entry past the located ones).
    let lo = 0;
    let hi = this.known;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= e) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The row starts of a decoded page (entries [first, first + count), `reps` its repetition levels)
   * must be exactly these, as far as they are located: the pages skipped on their word hold no
   * entry of a wanted row only if every leaf under the same lists agrees with the guide.
   */
  check(reps: Uint8Array | null, first: number, count: number): void {
    const s = this.starts;
    if (s === null || reps === null) return;
    let r = this.rowOf(first);
    if (s[r]! < first) r++;
    const end = Math.min(first + count, s[this.known]!);
    for (let e = first; e < end; e++) {
      const starts = s[r] === e;
      if ((reps[e - first] === 0) !== starts) throw new ParquetFormatError(`entry ${e} ${starts ? 'continues' : 'starts'} a row where the other leaves of its list say it ${starts ? 'starts' : 'continues'} one`);
      if (starts) r++;
    }
    // Where the located rows end, the next row starts.
    if (first + count > end && end >= first && reps[end - first] !== 0) throw new ParquetFormatError(`entry ${end} continues a row where the other leaves of its list say it starts one`);
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
