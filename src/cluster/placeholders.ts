// `{i}` and `{N}` in output paths (`--out parts/part-{i}-of-{N}.jsonl`), so that every task of an
// array runs the same command line. `{i}` is the partition index as a plain decimal number, without
// zero padding (`merge` learns each part's i/N from its stats, not from its name or order).
import { ExitCode, UserError } from '../errors.js';

const PLACEHOLDER = /\{(i|N)\}/g;
/** Likely slips for the two placeholders: refused rather than left in a file name. */
const NEAR_MISS = /\{(I|n|index|count)\}/;

export function hasPlaceholders(path: string): boolean {
  return /\{(i|N)\}/.test(path);
}

/** Refuse `{I}`, `{n}`, `{index}`, `{count}` in `path` (named by `option`). */
export function checkPlaceholders(option: string, path: string): void {
  const m = NEAR_MISS.exec(path);
  if (m) throw new UserError(`${option} ${path}: unknown placeholder ${m[0]}; the placeholders are {i} (partition index) and {N} (partition count)`, ExitCode.usage);
}

/** `path` with `{i}` and `{N}` replaced by the partition's index and count. */
export function expandPlaceholders(path: string, partition: { index: number; count: number }): string {
  return path.replace(PLACEHOLDER, (_, name: string) => String(name === 'i' ? partition.index : partition.count));
}
