// `merge`'s parts: files, folders or globs of `mine --partition` outputs, and the check that their
// stats hold every partition 0..N-1 exactly once, made before anything is written.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { resolveInputs } from '../io/inputs.js';

/**
 * The part files named by `args`: a file as given; a folder, every *.jsonl, *.jsonl.gz and *.parquet
 * below it; a glob, the files it matches (both sorted). The merge's own output (`out`) is left out,
 * so that a merge into the parts' folder can be run again.
 */
export function findParts(args: readonly string[], out: string): string[] {
  const outPath = out === '-' ? null : resolve(out);
  const parts: string[] = [];
  for (const arg of args) {
    const glob = /[*?]/.test(arg);
    let folder = false;
    try {
      folder = statSync(arg).isDirectory();
    } catch {
      if (!glob) throw new UserError(`${arg}: no such file or folder`, ExitCode.missingInput);
    }
    if (!folder && !glob) {
      parts.push(arg);
      continue;
    }
    const found = resolveInputs([arg], null)
      .map((f) => f.path)
      .filter((p) => resolve(p) !== outPath);
    if (found.length === 0) throw new UserError(`${arg}: holds no part besides the output ${out}`, ExitCode.missingInput);
    parts.push(...found);
  }
  return parts;
}

/** A partition some stats claim, and the file to name for it (the part when paired, else its stats). */
export interface Claim {
  index: number;
  count: number;
  file: string;
}

/** `a/N, b/N`, with runs of three or more as `a/N to b/N`. */
function listPartitions(indices: readonly number[], count: number): string {
  const out: string[] = [];
  for (let k = 0; k < indices.length; ) {
    let j = k;
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1) j++;
    if (j - k >= 2) out.push(`${indices[k]}/${count} to ${indices[j]}/${count}`);
    else for (let m = k; m <= j; m++) out.push(`${indices[m]}/${count}`);
    k = j + 1;
  }
  return out.join(', ');
}

/** The indices of 0..count-1 that `seen` (sorted, distinct) lacks, without listing all of 0..count-1. */
function missingOf(seen: readonly number[], count: number): number[] {
  const missing: number[] = [];
  let next = 0;
  for (const i of [...seen, count]) {
    // Past 1000 missing indices the list is cut (the count says how many).
    for (let m = next; m < i && missing.length < 1000; m++) missing.push(m);
    next = i + 1;
  }
  return missing;
}

/**
 * Every partition 0..N-1 claimed exactly once, or one line naming each missing and each duplicated
 * partition: exit 3 when some are missing (re-run those tasks), else exit 2.
 */
export function checkCoverage(claims: readonly Claim[]): void {
  const count = claims[0]!.count;
  const byIndex = new Map<number, string[]>();
  for (const c of claims) {
    const files = byIndex.get(c.index);
    if (files) files.push(c.file);
    else byIndex.set(c.index, [c.file]);
  }
  const seen = [...byIndex.keys()].sort((a, b) => a - b);
  const missingCount = count - seen.length;
  const missing = missingOf(seen, count);
  const twice = seen.filter((i) => byIndex.get(i)!.length > 1);
  if (missingCount === 0 && twice.length === 0) return;
  const problems: string[] = [];
  if (missingCount > 0) {
    const cut = missing.length < missingCount ? `, ... (${missingCount - missing.length} more)` : '';
    problems.push(`${missingCount} of ${count} partitions missing: ${listPartitions(missing, count)}${cut}`);
  }
  for (const i of twice) {
    const files = byIndex.get(i)!;
    problems.push(`partition ${i}/${count} given ${files.length === 2 ? 'twice' : `${files.length} times`} (${files.join(', ')})`);
  }
  throw new UserError(`${problems.join('; ')}; nothing written`, missingCount > 0 ? ExitCode.missingInput : ExitCode.usage);
}
