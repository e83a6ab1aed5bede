// The dataset card's sections for `--pairing tree` runs (docs/tree-pairing.md): the tree funnel with
// its identity, the histogram of value gaps of the emitted pairs, and the extra columns.
import { TREE_OUTCOMES, type TreeCounters } from '../pairing/tree.js';
import { COUNTER_NAMES } from '../contract/counters.js';
import { formatCount } from '../count-text.js';

export interface CardTree {
  counters: TreeCounters;
  /** Emitted pairs per value-gap bin of 0.1 (pairing/tree.ts gapBin). */
  gaps: readonly number[];
  minValueGap: number;
  minSupport: number;
  maxPairsPerNode: number;
}

const pct = (p: number, w: number) => (w > 0 ? `${((100 * p) / w).toFixed(1)}%` : 'n/a');

/** The contract's counters a tree run shares with the default pairing (selection only: the walk's are not run). */
export function selectionCounters(c: Readonly<Record<string, number>>): Record<string, number> {
  const upTo = COUNTER_NAMES.indexOf('trajectories_extracted');
  return Object.fromEntries(COUNTER_NAMES.slice(0, upTo + 1).map((n) => [n, c[n]!]));
}

const LINES: [keyof TreeCounters, string, string][] = [
  ['tree_instances', 'instances with a tree (eligible)', ''],
  ['tree_attempts', 'attempts in the trees (every labelled attempt, no sampling)', ''],
  ['nodes', 'tree nodes (distinct shared prefixes)', ''],
  ['branch_points', 'branch points (nodes with two or more children)', ''],
  ['action_branch_points', 'action branch points (two or more distinct actions)', ''],
  ['child_pairs', 'child pairs at branch points', ''],
  ['environment_divergence', 'environment divergence (not both actions)', '−'],
  ['low_support', 'a branch below --min-support', '−'],
  ['small_value_gap', 'value gap below --min-value-gap', '−'],
  ['near_duplicate', 'near-duplicate actions', '−'],
  ['exact_duplicate', 'exact duplicate rows', '−'],
  ['node_capped', 'over the per-node cap', '−'],
  ['capped', 'over the per-instance cap', '−'],
  ['pairs_emitted', '**pairs emitted**', '='],
  ['divergence_turn_0', 'of which at divergence turn 0', ''],
];

export function treeCardSection(t: CardTree): string {
  const c = t.counters;
  const out = [
    `Pairing: **tree** (every labelled attempt of an instance in a prefix tree; pairs between branches whose values differ by at least ${t.minValueGap}, at least ${t.minSupport} attempt${t.minSupport === 1 ? '' : 's'} per branch, at most ${t.maxPairsPerNode} per node).`,
    '',
    '| stage | | count | share |',
    '|---|:-:|--:|--:|',
  ];
  for (const [k, label, sign] of LINES) {
    const base = sign === '' ? (k === 'divergence_turn_0' ? c.pairs_emitted : undefined) : c.child_pairs;
    out.push(`| ${label} | ${sign} | ${formatCount(c[k])} | ${base === undefined ? '' : pct(c[k], base)} |`);
  }
  const sum = TREE_OUTCOMES.reduce((s, k) => s + c[k], 0);
  out.push('');
  out.push(
    sum === c.child_pairs
      ? `Identity check: child pairs = ${formatCount(c.child_pairs)} = the seven skip counters + pairs emitted ✓`
      : `Identity check FAILED: child pairs ${formatCount(c.child_pairs)} ≠ ${formatCount(sum)} (skips + emitted)`,
  );
  out.push('', '### Value gap of the emitted pairs', '', '| chosen value − rejected value | pairs |', '|---|--:|');
  t.gaps.forEach((n, k) => {
    if (k < 5 && n === 0) return; // below the least allowed gap the default run has none
    out.push(`| ${(k / 10).toFixed(1)} – ${((k + 1) / 10).toFixed(1)}${k === 9 ? ' (incl. 1.0)' : ''} | ${formatCount(n)} |`);
  });
  out.push(
    '',
    'Rows add `chosen_value` and `rejected_value` (share of resolved attempts through each branch), ' +
      '`chosen_support` and `rejected_support` (attempts through each branch) and `branch_depth` (branch points above the node).',
  );
  return out.join('\n');
}
