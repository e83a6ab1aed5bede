// Row groups the js engine handed to parquet-wasm (a feature our reader does not decode, such as
// LZO pages). Worth knowing: parquet-wasm holds whole row groups, gigabytes on a large file.

/** The `engine_fallback` entry of the stats file. */
export interface EngineFallback {
  /** Row groups read (in the index pass, the decode pass or both) through parquet-wasm. */
  row_groups: number;
  /** Reason -> row groups; a row group counts once, under its first reason (index pass first). */
  reasons: Record<string, number>;
}

export class FallbackTally {
  private readonly seen = new Map<string, string>();
  /** A pass over a row group of `path` fell back for `reason` (undefined: it did not). */
  add(path: string, rowGroup: number, reason: string | undefined): void {
    const key = `${rowGroup}:${path}`;
    if (reason !== undefined && !this.seen.has(key)) this.seen.set(key, reason);
  }
  summary(): EngineFallback {
    const reasons: Record<string, number> = {};
    // Sorted, so the stats file does not depend on the order passes finished in.
    for (const r of [...this.seen.values()].sort()) reasons[r] = (reasons[r] ?? 0) + 1;
    return { row_groups: this.seen.size, reasons };
  }
}

/** The stderr line for a run that fell back (empty when none did). */
export function fallbackLine(f: EngineFallback | undefined): string {
  if (!f || f.row_groups === 0) return '';
  const why = Object.entries(f.reasons)
    .map(([r, n]) => `${r}: ${n}`)
    .join(', ');
  return `divergence-mine: --engine js read ${f.row_groups} row group${f.row_groups === 1 ? '' : 's'} through parquet-wasm (${why})\n`;
}
