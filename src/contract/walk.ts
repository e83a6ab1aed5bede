// Contract section 5: the lockstep walk of one (resolved, failed) pair and the filters, in order.
import stringSimilarity from 'string-similarity';
import type { Counters } from './counters.js';
import type { PairRow } from '../types.js';

/** What the walk needs of a trajectory; implemented in memory (tests, library) and over the spill store. */
export interface Walkable {
  readonly trajectoryId: string;
  readonly length: number;
  role(i: number): string;
  /** Do message i of this and message i of `other` have equal comparison keys? */
  sameKey(i: number, other: this): boolean;
}

export interface WalkOptions {
  minSimilaritySkip: number;
  maxPairsPerInstance: number;
}

/** What walkInstance reads of a row it keeps. */
export type KeptRow = Pick<PairRow, 'divergence_turn'>;

export interface InstanceHooks<T extends Walkable, R extends KeptRow = PairRow> {
  /** actionSignature of assistant message i. */
  signature(t: T, i: number): string;
  /**
   * The exact-duplicate key of the row for a divergence at i: equal keys exactly when the rows' prompt,
   * chosen and rejected are deep-equal (contract 5.4: stable JSON of the three, or anything equivalent).
   */
  dedupeKey(resolved: T, failed: T, i: number): string;
  /** The output row for a divergence at i; called only for rows that are kept. */
  buildRow(resolved: T, failed: T, i: number, similarity: number): R;
}

/** First index whose keys differ, or null when one trajectory is a prefix of the other. */
export function findDivergence<T extends Walkable>(a: T, b: T): number | null {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (!a.sameKey(i, b)) return i;
  return null;
}

/** Number of assistant messages before index i (the 0-based assistant-turn index). */
export function assistantTurn(t: Walkable, i: number): number {
  let turns = 0;
  for (let j = 0; j < i; j++) if (t.role(j) === 'assistant') turns++;
  return turns;
}

export function actionSimilarity(sigR: string, sigF: string): number {
  return stringSimilarity.compareTwoStrings(sigR, sigF);
}

/**
 * Walk every (resolved, failed) pair of one instance, resolved-major, both sides already in rank order,
 * applying the filters in contract order. Updates `counters` and returns the kept rows in order.
 */
export function walkInstance<T extends Walkable, R extends KeptRow = PairRow>(
  resolved: readonly T[],
  failed: readonly T[],
  opts: WalkOptions,
  hooks: InstanceHooks<T, R>,
  counters: Counters,
): R[] {
  const kept: R[] = [];
  const seen = new Set<string>();
  for (const r of resolved) {
    for (const f of failed) {
      counters.pairs_walked++;
      const i = findDivergence(r, f);
      if (i === null) {
        counters.no_divergence++;
        continue;
      }
      if (r.role(i) !== 'assistant' || f.role(i) !== 'assistant') {
        counters.environment_divergence++;
        continue;
      }
      const similarity = actionSimilarity(hooks.signature(r, i), hooks.signature(f, i));
      if (similarity >= opts.minSimilaritySkip) {
        counters.near_duplicate++;
        continue;
      }
      const dedupeKey = hooks.dedupeKey(r, f, i);
      if (seen.has(dedupeKey)) {
        counters.exact_duplicate++;
        continue;
      }
      if (kept.length >= opts.maxPairsPerInstance) {
        counters.capped++;
        continue;
      }
      seen.add(dedupeKey);
      const row = hooks.buildRow(r, f, i, similarity);
      kept.push(row);
      counters.pairs_emitted++;
      if (row.divergence_turn === 0) counters.divergence_turn_0++;
    }
  }
  return kept;
}
