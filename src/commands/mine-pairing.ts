// What `mine` records and prints for the pairing options (src/pairing/, docs/tree-pairing.md):
// `--pairing tree` (its funnel and value-gap histogram), the exit-status filters, kto rows.
import { COUNTER_NAMES, type Counters } from '../contract/counters.js';
import type { MineSummary } from '../engine/mine-pairs.js';
import { TREE_COUNTER_NAMES, type TreeCounters } from '../pairing/tree.js';
import type { ExitStatusTally } from '../pairing/exit-status.js';
import type { KtoDeduper } from '../shapes/kto.js';
import type { PairingPlan } from './mine-options.js';
import { formatCount } from '../count-text.js';

/** Stats entries: `options` (merge refuses parts that differ) and the run's `extra` figures. */
export function pairingStats(p: PairingPlan, kto: boolean, summary: MineSummary, ktoRows: KtoDeduper | null): { options: Record<string, unknown>; extra: Record<string, unknown> } | undefined {
  const options: Record<string, unknown> = {
    ...(p.tree
      ? { pairing: 'tree', min_value_gap: p.tree.minValueGap, min_support: p.tree.minSupport, max_pairs_per_node: p.tree.maxPairsPerNode }
      : {}),
    ...(p.exitStatus?.rejected ? { rejected_exit_status: [...p.exitStatus.rejected] } : {}),
    ...(p.exitStatus?.exclude ? { exclude_exit_status: [...p.exitStatus.exclude] } : {}),
    ...(kto && p.tree ? { kto_threshold: p.ktoThreshold } : {}),
  };
  const extra: Record<string, unknown> = {
    ...(summary.tree ? { tree: { counters: summary.tree.counters, value_gap_histogram: gapHistogram(summary.tree.gaps) } } : {}),
    ...(summary.exitStatus ? { exit_status_filter: summary.exitStatus } : {}),
    ...(ktoRows ? { kto: { rows: ktoRows.emitted, desirable: ktoRows.desirable, undesirable: ktoRows.undesirable, repeats_dropped: ktoRows.duplicates } } : {}),
  };
  return Object.keys(options).length + Object.keys(extra).length > 0 ? { options, extra } : undefined;
}

/** The histogram as bins with their bounds: [{from, to, pairs}], ten bins of 0.1. */
export function gapHistogram(gaps: readonly number[]): { from: number; to: number; pairs: number }[] {
  return gaps.map((pairs, k) => ({ from: k / 10, to: (k + 1) / 10, pairs }));
}

function table(rows: [string, number][]): string {
  const width = Math.max(...rows.map(([n]) => n.length));
  const vals = rows.map(([, v]) => formatCount(v));
  const vw = Math.max(...vals.map((v) => v.length));
  return rows.map(([n], i) => `${n.padEnd(width)}  ${vals[i]!.padStart(vw)}`).join('\n') + '\n';
}

/** The counters table of a tree run: the contract's selection counters, then the tree funnel, then the gap histogram. */
export function formatTreeCounters(c: Counters, tree: { counters: TreeCounters; gaps: number[] }): string {
  const upTo = COUNTER_NAMES.indexOf('trajectories_extracted');
  const rows: [string, number][] = [...COUNTER_NAMES.slice(0, upTo + 1).map((n) => [n, c[n]] as [string, number]), ...TREE_COUNTER_NAMES.map((n) => [n, tree.counters[n]] as [string, number])];
  const bins = gapHistogram(tree.gaps)
    .filter((b) => b.pairs > 0)
    .map((b) => `[${b.from.toFixed(1)}, ${b.to.toFixed(1)}${b.to === 1 ? ']' : ')'} ${formatCount(b.pairs)}`);
  return table(rows) + `value gaps of emitted pairs: ${bins.join(', ') || 'none'}\n`;
}

export function formatExitStatus(t: ExitStatusTally): string {
  const seen = Object.entries(t.observed)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([s, n]) => `${s} ${formatCount(n.resolved)}/${formatCount(n.failed)}`)
    .join(', ');
  return table([
    ['exit_status_excluded', t.excluded],
    ['exit_status_not_rejectable', t.not_rejectable],
  ]) + `exit_status of labelled rows (resolved/failed): ${seen || 'none'}\n`;
}
