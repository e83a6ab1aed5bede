// `merge` of `--pairing tree` and `--shape kto` parts: the tree funnel, the value-gap histogram and
// the KTO row counts add up across partitions (instances are disjoint; KTO repeats are found within
// an instance); the tree identity is asserted on the sum.
import { ExitCode, UserError } from '../errors.js';
import { TREE_COUNTER_NAMES, addTreeCounters, assertTreeIdentity, emptyTreeCounters, type TreeCounters } from '../pairing/tree.js';

export interface TreeStats {
  counters: TreeCounters;
  value_gap_histogram: { from: number; to: number; pairs: number }[];
}

/** The merged tree stats, or null when the parts are not tree runs (all parts agree: merge compares options). */
export function mergeTreeStats(docs: { tree?: TreeStats }[]): TreeStats | null {
  if (!docs[0]?.tree) return null;
  const counters = emptyTreeCounters();
  const bins = docs[0].tree.value_gap_histogram.map((b) => ({ ...b, pairs: 0 }));
  for (const d of docs) {
    const t = d.tree;
    if (!t || typeof t.counters !== 'object' || !Array.isArray(t.value_gap_histogram) || t.value_gap_histogram.length !== bins.length) {
      throw new UserError('a --pairing tree part has no (or a malformed) "tree" entry in its stats; re-mine that part', ExitCode.schema);
    }
    for (const n of TREE_COUNTER_NAMES) if (typeof t.counters[n] !== 'number') throw new UserError(`a --pairing tree part's stats lack tree counter ${n}`, ExitCode.schema);
    addTreeCounters(counters, t.counters);
    t.value_gap_histogram.forEach((b, k) => (bins[k]!.pairs += b.pairs));
  }
  assertTreeIdentity(counters);
  return { counters, value_gap_histogram: bins };
}

export interface KtoStats {
  rows: number;
  desirable: number;
  undesirable: number;
  repeats_dropped: number;
}

/** The summed KTO row counts, or null when the parts are not kto runs. */
export function mergeKtoStats(docs: { kto?: KtoStats }[]): KtoStats | null {
  if (!docs[0]?.kto) return null;
  const out: KtoStats = { rows: 0, desirable: 0, undesirable: 0, repeats_dropped: 0 };
  for (const d of docs) {
    const k = d.kto;
    if (!k || (['rows', 'desirable', 'undesirable', 'repeats_dropped'] as const).some((n) => typeof k[n] !== 'number')) {
      throw new UserError('a --shape kto part has no (or a malformed) "kto" entry in its stats; re-mine that part', ExitCode.schema);
    }
    for (const n of ['rows', 'desirable', 'undesirable', 'repeats_dropped'] as const) out[n] += k[n];
  }
  if (out.rows !== out.desirable + out.undesirable) throw new Error('internal error: kto rows are not desirable + undesirable');
  return out;
}
