// What the tree pairing and the kto shape add around the pairs (docs/tree-pairing.md): the card
// section, the counters table, the merge of partition stats, KTO rows and their repeats. In-process;
// counts and rows are hand-built, expected texts written from the document.
import { describe, expect, it } from 'vitest';
import { emptyCounters } from '../src/contract/counters.js';
import { treeCardSection } from '../src/dataset/tree-card.js';
import { formatTreeCounters, gapHistogram } from '../src/commands/mine-pairing.js';
import { mergeKtoStats, mergeTreeStats } from '../src/commands/merge-tree.js';
import { emptyTreeCounters, type TreeCounters } from '../src/pairing/tree.js';
import { KtoDeduper, ktoRows } from '../src/shapes/kto.js';
import type { PairRow } from '../src/types.js';

// 10 child pairs: 2 environment, 3 small gap, 1 node cap, 4 emitted (1 at turn 0).
const counters = (): TreeCounters => ({
  ...emptyTreeCounters(),
  tree_instances: 2,
  tree_attempts: 9,
  nodes: 40,
  branch_points: 6,
  action_branch_points: 5,
  child_pairs: 10,
  environment_divergence: 2,
  small_value_gap: 3,
  node_capped: 1,
  pairs_emitted: 4,
  divergence_turn_0: 1,
});
const gaps = [0, 0, 0, 0, 0, 1, 0, 0, 0, 3];

describe('tree views', () => {
  it('card section: funnel shares of child pairs, identity, gap table from 0.5', () => {
    const md = treeCardSection({ counters: counters(), gaps, minValueGap: 0.5, minSupport: 1, maxPairsPerNode: 2 });
    expect(md).toContain('| environment divergence (not both actions) | − | 2 | 20.0% |');
    expect(md).toContain('| **pairs emitted** | = | 4 | 40.0% |');
    expect(md).toContain('| of which at divergence turn 0 |  | 1 | 25.0% |');
    expect(md).toContain('Identity check: child pairs = 10 = the seven skip counters + pairs emitted ✓');
    expect(md).toContain('| 0.5 – 0.6 | 1 |');
    expect(md).toContain('| 0.9 – 1.0 (incl. 1.0) | 3 |');
    expect(md).not.toContain('| 0.4 – 0.5 |');
    const broken = treeCardSection({ counters: { ...counters(), pairs_emitted: 5 }, gaps, minValueGap: 0.5, minSupport: 1, maxPairsPerNode: 2 });
    expect(broken).toContain('Identity check FAILED: child pairs 10 ≠ 11');
  });

  it('counters table: selection counters, the tree funnel, the non-empty gap bins', () => {
    const text = formatTreeCounters({ ...emptyCounters(), trajectories_read: 12, trajectories_extracted: 9 }, { counters: counters(), gaps });
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(/^trajectories_read +12$/);
    expect(lines).not.toContainEqual(expect.stringMatching(/^pairs_walked/));
    expect(lines).toContainEqual(expect.stringMatching(/^node_capped +1$/));
    expect(lines.at(-1)).toBe('value gaps of emitted pairs: [0.5, 0.6) 1, [0.9, 1.0] 3');
  });

  it('merge: tree funnels and gap histograms add up; a part without its tree entry is refused', () => {
    const part = { tree: { counters: counters(), value_gap_histogram: gapHistogram(gaps) } };
    const m = mergeTreeStats([part, part])!;
    expect([m.counters.child_pairs, m.counters.pairs_emitted, m.value_gap_histogram[9]!.pairs]).toEqual([20, 8, 6]);
    expect(mergeTreeStats([{}, {}])).toBeNull();
    expect(() => mergeTreeStats([part, {}])).toThrow(/no \(or a malformed\) "tree" entry/);
    expect(() => mergeTreeStats([part, { tree: { counters: { ...counters(), capped: 1 }, value_gap_histogram: gapHistogram(gaps) } }])).toThrow(/identity violated/);
    expect(mergeKtoStats([{ kto: { rows: 3, desirable: 1, undesirable: 2, repeats_dropped: 0 } }, { kto: { rows: 2, desirable: 1, undesirable: 1, repeats_dropped: 1 } }])).toEqual({ rows: 5, desirable: 2, undesirable: 3, repeats_dropped: 1 });
  });
});

const pair = (chosenId: string, content: string): PairRow => ({
  prompt: [{ role: 'user', content: 'fix it' }],
  chosen: { role: 'assistant', content, tool_calls: '[{"id":"c1","type":"function","function":{"name":"execute_bash","arguments":{"command":"ls"}}}]' },
  rejected: { role: 'assistant', content: 'give up', tool_calls: null },
  instance_id: 'I',
  repo: 'o/r',
  chosen_trajectory_id: chosenId,
  rejected_trajectory_id: 'F',
  divergence_turn: 0,
  divergence_msg_index: 1,
  action_similarity: 0.2,
});

describe('kto rows', () => {
  it('contract pairing: chosen true, rejected false; trl messages; a repeated rejected row is dropped', () => {
    const d = new KtoDeduper();
    const o = { arguments: 'object' as const, toolsJson: null, threshold: 0.5 };
    const out = [...ktoRows(pair('R1', 'a'), undefined, o), ...ktoRows(pair('R2', 'b'), undefined, o)].map((r) => d.add(r));
    expect(out.map((r) => r && [r.trajectory_id, r.label])).toEqual([['R1', true], ['F', false], ['R2', true], null]);
    expect(out[0]!.completion).toEqual([{ role: 'assistant', content: 'a', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls' } } }] }]);
    expect(out[1]!.completion).toEqual([{ role: 'assistant', content: 'give up' }]);
    expect([d.emitted, d.desirable, d.undesirable, d.duplicates]).toEqual([3, 2, 1, 1]);
  });

  it('tree pairing: labels are value > threshold; a branch key stands for the completion', () => {
    const tree = { chosen_value: 0.5, rejected_value: 0, chosen_support: 2, rejected_support: 1, branch_depth: 1 };
    const [c, r] = ktoRows(pair('R1', 'a'), tree, { arguments: 'object', toolsJson: '[]', threshold: 0.5 });
    expect([c.label, c.value, c.support, c.branch_depth, r.label, r.value, c.tools]).toEqual([false, 0.5, 2, 1, false, 0, '[]']);
    expect(ktoRows(pair('R1', 'a'), tree, { arguments: 'object', toolsJson: null, threshold: 0.4 })[0].label).toBe(true);
    const d = new KtoDeduper();
    // The same branch (key "k") from another representative (other content): one row.
    expect(d.add(c, 'k')).not.toBeNull();
    expect(d.add(ktoRows(pair('R9', 'other narration'), tree, { arguments: 'object', toolsJson: null, threshold: 0.5 })[0], 'k')).toBeNull();
    expect(d.add(r, 'k2')).not.toBeNull();
  });
});
