// A large plain JSONL input is read by every worker at once: its bytes are cut into ranges, each
// index (and exit-status, and decode) task reads the lines that start in one range
// (io/jsonl-lines.ts LineRange), and the main thread numbers their lines in range order. A gzipped
// input is one stream: it is read whole, by one task, as before.
import type { ByteRange } from './protocol.js';

/** The smallest range: below it a task's start-up (open, the skipped partial line) is not worth it. */
export const MIN_RANGE_BYTES = minRangeBytes(process.env.DIVERGENCE_MINE_JSONL_RANGE);

/** `DIVERGENCE_MINE_JSONL_RANGE` (bytes, for tests of small files cut in many places), else 16 MiB. */
export function minRangeBytes(given: string | undefined): number {
  const n = Number(given);
  return Number.isInteger(n) && n >= 1 && n <= 2 ** 40 ? n : 16 * 2 ** 20;
}

/**
 * The byte ranges a JSONL input of `bytes` bytes is read in, or null to read it whole: gzipped, one
 * worker, or too small for two ranges. About four ranges per worker, so that one slow range (long
 * lines) does not leave the others idle, each at least `minBytes`.
 */
export function jsonlRanges(bytes: number, gzipped: boolean, workers: number, minBytes: number = MIN_RANGE_BYTES): ByteRange[] | null {
  if (gzipped || workers < 2) return null;
  const size = Math.max(minBytes, Math.ceil(bytes / (4 * workers)));
  const count = Math.ceil(bytes / size);
  if (count < 2) return null;
  const ranges: ByteRange[] = [];
  for (let k = 0; k < count; k++) ranges.push({ start: k * size, end: Math.min(bytes, (k + 1) * size) });
  return ranges;
}

/** A range once its index task is read: where its lines fall among the file's. */
export interface NumberedRange {
  /** Lines that start before the range. */
  linesBefore: number;
  /** Lines that start in it, blank ones included. */
  lineCount: number;
}

/** The range of `ranges` (in file order) that holds the file's line `line`. */
export function rangeOfLine(ranges: readonly NumberedRange[], line: number): number {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ranges[mid]!.linesBefore < line) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
