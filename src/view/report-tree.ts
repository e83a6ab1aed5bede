// The report's sections for `--pairing tree` runs (docs/tree-pairing.md): the tree funnel from the
// stats file (with its identity) and the histogram of value gaps of the pairs in the file.
import { TREE_OUTCOMES, gapBin } from '../pairing/tree.js';
import { esc, fmtInt, hbarChart, histogram, type Bin, type HBar } from './charts.js';
import type { StatsDoc } from './report.js';

/** The tree funnel of a stats file, or null when the run was not a tree run. */
export function treeCountersOf(s: StatsDoc | null | undefined): Record<string, number> | null {
  const t = (s as { tree?: { counters?: unknown } } | null | undefined)?.tree?.counters;
  return t && typeof t === 'object' ? (t as Record<string, number>) : null;
}

const LABELS: Record<string, string> = {
  environment_divergence: 'environment divergence',
  low_support: 'below --min-support',
  small_value_gap: 'below --min-value-gap',
  near_duplicate: 'near duplicate',
  exact_duplicate: 'exact duplicate',
  node_capped: 'over the per-node cap',
  capped: 'over the per-instance cap',
};

export function treeFunnelHtml(s: StatsDoc, rowsInFile: number): string {
  const t = treeCountersOf(s)!;
  const c = (k: string) => (typeof t[k] === 'number' ? t[k]! : 0);
  const sc = (k: string) => (typeof s.counters[k] === 'number' ? s.counters[k]! : 0);
  const pairs = c('child_pairs');
  const scale = Math.max(pairs, 1);
  const rows: HBar[] = [
    { label: 'instances', value: sc('instances'), kind: 'inst' },
    { label: 'eligible instances', value: sc('eligible_instances'), kind: 'inst' },
    { label: 'attempts in trees', value: c('tree_attempts'), kind: 'traj' },
    { label: 'tree nodes', value: c('nodes'), kind: 'traj' },
    { label: 'branch points', value: c('branch_points'), kind: 'inst' },
    { label: 'action branch points', value: c('action_branch_points'), kind: 'inst' },
    { label: 'child pairs', value: pairs, kind: 'pair', scale },
  ];
  let remaining = pairs;
  for (const k of TREE_OUTCOMES) {
    if (k === 'pairs_emitted') continue;
    const v = c(k);
    remaining -= v;
    rows.push({ label: `− ${LABELS[k]}`, value: v, start: Math.max(0, remaining), kind: 'drop', scale, note: `−${fmtInt(v)}`, title: `${LABELS[k]}: ${fmtInt(v)} child pairs` });
  }
  rows.push({ label: 'pairs emitted', value: c('pairs_emitted'), kind: 'emit', scale });
  const sum = TREE_OUTCOMES.reduce((a, k) => a + c(k), 0);
  const identity =
    sum === pairs
      ? `<p class="ok" id="tree-identity">child pairs = environment + support + value gap + near duplicate + exact duplicate + node cap + instance cap + emitted (${fmtInt(pairs)}) ✓</p>`
      : `<p class="warn" id="tree-identity">tree counter identity does not hold: child pairs ${fmtInt(pairs)} ≠ outcomes ${fmtInt(sum)}</p>`;
  const mismatch =
    c('pairs_emitted') !== rowsInFile
      ? `<p class="warn" id="emitted-mismatch">The stats say ${fmtInt(c('pairs_emitted'))} pairs were emitted, but the pairs file has ${fmtInt(rowsInFile)} rows: are the two from the same run?</p>`
      : '';
  const side = [['pairs at turn 0', c('divergence_turn_0')], ['trajectories read', sc('trajectories_read')]]
    .map(([k, v]) => `<tr><td>${esc(String(k))}</td><td class="num">${fmtInt(Number(v))}</td></tr>`)
    .join('');
  return `<div class="funnel-wrap">${hbarChart(rows, { id: 'tree-funnel-chart', ariaLabel: 'tree pairing funnel', labelWidth: 190 })}
<table class="side-counters"><caption>also counted</caption>${side}</table></div>${identity}${mismatch}`;
}

/** Histogram of chosen_value - rejected_value over the file's tree rows (ten bins of 0.1). */
export function valueGapHistogram(gaps: readonly number[]): string {
  const bins: Bin[] = [];
  for (let i = 0; i < 10; i++) bins.push({ x0: i / 10, x1: (i + 1) / 10, count: 0, label: (i / 10).toFixed(1) });
  for (const g of gaps) bins[gapBin(g)]!.count++;
  return histogram(bins, { id: 'hist-gap', ariaLabel: 'histogram of value gaps', xTitle: 'value gap (chosen value − rejected value)', kind: 'sim' });
}
