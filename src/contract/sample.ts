// Contract section 4: labels, groups, eligibility and the SHA-256 rank sampling.
import { createHash } from 'node:crypto';

export type Label = 'resolved' | 'failed' | 'unlabelled';

/** `1`/`true` = resolved, `0`/`false` = failed; anything else (null, -1, 0.5, "1") = unlabelled. */
export function labelOf(v: unknown): Label {
  if (v === true || v === 1 || v === 1n) return 'resolved';
  if (v === false || v === 0 || v === 0n) return 'failed';
  return 'unlabelled';
}

/** Lowercase hex SHA-256 of `seed + ":" + trajectory_id`; ascending rank order. */
export function rankKey(seed: string, trajectoryId: string): string {
  return createHash('sha256').update(`${seed}:${trajectoryId}`).digest('hex');
}

export interface Candidate {
  trajectoryId: string;
  rank: string;
}

/** The first `k` candidates by ascending rank (ties cannot happen: ids are unique). */
export function pickRanked<T extends Candidate>(cands: readonly T[], k: number): T[] {
  return [...cands].sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0)).slice(0, k);
}

/** JavaScript string order (UTF-16 code units), as the contract's walk order requires. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
