// Unit tests for src/pairing/tree.ts (docs/tree-pairing.md), on hand-built instances. A message is
// "role:text" (s = system, u = user, a = assistant, t = tool); its key is the string itself and an
// action's signature its text. Every expected tree, value and pair below was worked out by hand
// from the document, not by running the code.
import { describe, expect, it } from 'vitest';
import { assistantTurn, type Walkable } from '../src/contract/walk.js';
import { makeRow } from '../src/contract/emit.js';
import {
  DEFAULT_TREE_OPTIONS,
  TREE_OUTCOMES,
  buildTree,
  emptyGapHistogram,
  emptyTreeCounters,
  gapBin,
  nodeValue,
  nodesOf,
  treeIdentityHolds,
  treePairs,
  type TreeAttempt,
  type TreeCounters,
  type TreeHooks,
  type TreeOptions,
} from '../src/pairing/tree.js';
import { admitExitStatus, emptyExitStatusTally } from '../src/pairing/exit-status.js';

const ROLES: Record<string, string> = { s: 'system', u: 'user', a: 'assistant', t: 'tool' };

class A implements TreeAttempt, Walkable {
  constructor(
    readonly trajectoryId: string,
    readonly resolved: boolean,
    readonly rank: string,
    readonly msgs: string[],
  ) {}
  get length(): number {
    return this.msgs.length;
  }
  keyAt(i: number): string {
    return this.msgs[i]!;
  }
  role(i: number): string {
    return ROLES[this.msgs[i]!.split(':')[0]!]!;
  }
  sameKey(i: number, o: A): boolean {
    return this.msgs[i] === o.msgs[i];
  }
}

const emit = (m: string) => ({ role: ROLES[m.split(':')[0]!]!, content: m });
const hooks: TreeHooks<A> = {
  signature: (t, i) => t.msgs[i]!,
  dedupeKey: (p, c, r, i) => JSON.stringify([p.msgs.slice(0, i), c.msgs[i], r.msgs[i]]),
  buildRow: (p, c, r, i, similarity) =>
    makeRow(p.msgs.slice(0, i).map(emit), emit(c.msgs[i]!), emit(r.msgs[i]!), {
      instance_id: 'I',
      repo: null,
      chosen_trajectory_id: c.trajectoryId,
      rejected_trajectory_id: r.trajectoryId,
      divergence_turn: assistantTurn(p, i),
      divergence_msg_index: i,
      action_similarity: similarity,
    }),
};
const OPTS: TreeOptions = { ...DEFAULT_TREE_OPTIONS, minSimilaritySkip: 0.95, maxPairsPerInstance: 4 };
const run = (atts: A[], o: Partial<TreeOptions> = {}) => {
  const c = emptyTreeCounters();
  const gaps = emptyGapHistogram();
  const pairs = treePairs(atts, { ...OPTS, ...o }, hooks, c, gaps);
  expect(treeIdentityHolds(c)).toBe(true);
  return {
    c,
    gaps,
    rows: pairs.map((p) => ({ at: p.row.divergence_msg_index, turn: p.row.divergence_turn, prompt: p.promptAttempt.trajectoryId, chosen: p.row.chosen_trajectory_id, rejected: p.row.rejected_trajectory_id, ...p.tree })),
  };
};
const pick = (c: TreeCounters, names: (keyof TreeCounters)[]) => Object.fromEntries(names.map((n) => [n, c[n]]));
const FUNNEL: (keyof TreeCounters)[] = ['nodes', 'branch_points', 'action_branch_points', 'child_pairs', ...TREE_OUTCOMES];

// Three attempts sharing a prefix and branching twice: C leaves at message 4, B at message 6.
const A1 = new A('A', true, '1', ['s:sys', 'u:task', 'a:ls', 't:files', 'a:view', 't:code', 'a:edit']);
const B1 = new A('B', false, '2', ['s:sys', 'u:task', 'a:ls', 't:files', 'a:view', 't:code', 'a:finish']);
const C1 = new A('C', false, '3', ['s:sys', 'u:task', 'a:ls', 't:files', 'a:grep']);

describe('buildTree', () => {
  it('three attempts, two branchings: nodes, attempts, values, branch depths', () => {
    const root = buildTree([A1, B1, C1]);
    const nodes = [...nodesOf(root)];
    // A's path: 7 nodes; B adds its message 6, C its message 4.
    expect(nodes.map((n) => `${n.depth}:${n.attempts.length}/${n.resolved}:${n.branchDepth}`)).toEqual([
      '1:3/1:0', '2:3/1:0', '3:3/1:0', '4:3/1:0', '5:2/1:1', '6:2/1:1', '7:1/1:2', '7:1/0:2', '5:1/0:1',
    ]);
    expect(nodes.filter((n) => n.children.length >= 2).map((n) => n.depth)).toEqual([4, 6]);
    expect(nodeValue(nodes[4]!)).toBe(0.5);
  });

  it('all attempts identical: one path, no branch point', () => {
    const same = ['s:sys', 'u:task', 'a:ls', 't:files'];
    const root = buildTree([new A('X', true, '1', same), new A('Y', false, '2', same), new A('Z', true, '3', same)]);
    const nodes = [...nodesOf(root)];
    expect(nodes.map((n) => `${n.attempts.length}/${n.resolved}`)).toEqual(['3/2', '3/2', '3/2', '3/2']);
    expect(nodes.every((n) => n.children.length <= 1)).toBe(true);
  });

  it('children come in rank order of their best attempt, whatever the input order of equal-rank lists', () => {
    const x = new A('X', false, '1', ['s:sys', 'a:two']);
    const y = new A('Y', true, '2', ['s:sys', 'a:one']);
    const root = buildTree([x, y]);
    expect(root.children[0]!.children.map((n) => n.attempts)).toEqual([[0], [1]]);
  });
});

describe('treePairs', () => {
  it('three attempts, two branchings: both pairs, the larger gap first', () => {
    const { c, rows, gaps } = run([A1, B1, C1]);
    expect(rows).toEqual([
      // message 6: a:edit (A, 1/1) vs a:finish (B, 0/1); one branch point (message 4) above it
      { at: 6, turn: 2, prompt: 'A', chosen: 'A', rejected: 'B', chosen_value: 1, rejected_value: 0, chosen_support: 1, rejected_support: 1, branch_depth: 1 },
      // message 4: a:view (A and B, 1/2) vs a:grep (C, 0/1): gap 0.5, exactly the default minimum
      { at: 4, turn: 1, prompt: 'A', chosen: 'A', rejected: 'C', chosen_value: 0.5, rejected_value: 0, chosen_support: 2, rejected_support: 1, branch_depth: 0 },
    ]);
    expect(pick(c, FUNNEL)).toEqual({ nodes: 9, branch_points: 2, action_branch_points: 2, child_pairs: 2, ...zeroOutcomes(), pairs_emitted: 2 });
    expect(c.tree_attempts).toBe(3);
    expect(gaps).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
  });

  it('a gap above the branch: --min-value-gap 0.6 keeps only message 6', () => {
    const { c, rows } = run([A1, B1, C1], { minValueGap: 0.6 });
    expect(rows.map((r) => r.at)).toEqual([6]);
    expect(c.small_value_gap).toBe(1);
  });

  it('all attempts identical: no pair', () => {
    const same = ['s:sys', 'u:task', 'a:ls', 't:files'];
    const { c, rows } = run([new A('X', true, '1', same), new A('Y', false, '2', same)]);
    expect(rows).toEqual([]);
    expect(pick(c, FUNNEL)).toEqual({ nodes: 4, branch_points: 0, action_branch_points: 0, child_pairs: 0, ...zeroOutcomes(), pairs_emitted: 0 });
  });

  // One resolved among ten: R and F1..F4 take a:ls at message 2, F5..F9 a:cat; below a:ls, R
  // alone takes a:fix at message 4, F1..F4 a:quit. Ranks: R is '5', so it is not the first attempt.
  const tenAttempts = () => {
    const head = ['s:sys', 'u:task'];
    const atts = [new A('R', true, '5', [...head, 'a:ls', 't:out', 'a:fix'])];
    for (let k = 1; k <= 4; k++) atts.push(new A(`F${k}`, false, String(k === 1 ? 0 : k + 5), [...head, 'a:ls', 't:out', 'a:quit']));
    for (let k = 5; k <= 9; k++) atts.push(new A(`F${k}`, false, String(k + 5), [...head, 'a:cat']));
    return atts.sort((a, b) => (a.rank < b.rank ? -1 : 1));
  };

  it('one resolved among ten: only the decisive branch passes the default gap', () => {
    const { c, rows } = run(tenAttempts());
    // message 2: a:ls 1/5 = 0.2 vs a:cat 0/5: gap 0.2 < 0.5; message 4: a:fix 1/1 vs a:quit 0/4.
    // rejected = the lowest-ranked failed attempt of a:quit: F1 (rank '0').
    expect(rows).toEqual([{ at: 4, turn: 1, prompt: 'R', chosen: 'R', rejected: 'F1', chosen_value: 1, rejected_value: 0, chosen_support: 1, rejected_support: 4, branch_depth: 1 }]);
    expect(pick(c, FUNNEL)).toEqual({ nodes: 7, branch_points: 2, action_branch_points: 2, child_pairs: 2, ...zeroOutcomes(), small_value_gap: 1, pairs_emitted: 1 });
  });

  it('one resolved among ten: --min-value-gap 0.2 adds message 2 (prompt from R, the only resolved attempt)', () => {
    const { rows } = run(tenAttempts(), { minValueGap: 0.2 });
    expect(rows.map((r) => [r.at, r.chosen, r.rejected, r.chosen_value, r.rejected_value, r.chosen_support, r.rejected_support])).toEqual([
      [4, 'R', 'F1', 1, 0, 1, 4],
      [2, 'R', 'F5', 0.2, 0, 5, 5],
    ]);
  });

  it('one resolved among ten: --min-support 2 refuses the branch R takes alone', () => {
    const { c, rows } = run(tenAttempts(), { minSupport: 2 });
    expect(rows).toEqual([]);
    expect(c.low_support).toBe(1);
    expect(c.small_value_gap).toBe(1);
  });

  it('the same action repeated at different depths: nodes are prefixes, not actions', () => {
    const r = new A('R', true, '1', ['s:sys', 'u:task', 'a:ls', 't:out', 'a:ls', 't:out', 'a:fix']);
    const f = new A('F', false, '2', ['s:sys', 'u:task', 'a:ls', 't:out', 'a:quit']);
    const { c, rows } = run([r, f]);
    // a:ls at message 2 is shared (value 1/2); the branch is at message 4: a:ls again vs a:quit.
    expect(rows).toEqual([{ at: 4, turn: 1, prompt: 'R', chosen: 'R', rejected: 'F', chosen_value: 1, rejected_value: 0, chosen_support: 1, rejected_support: 1, branch_depth: 0 }]);
    expect(c.nodes).toBe(8);
  });

  it('children that differ by a tool output are environment divergence, as in the contract', () => {
    const r = new A('R', true, '1', ['s:sys', 'u:task', 'a:ls', 't:one', 'a:fix']);
    const f = new A('F', false, '2', ['s:sys', 'u:task', 'a:ls', 't:two', 'a:fix']);
    const { c, rows } = run([r, f]);
    expect(rows).toEqual([]);
    expect(pick(c, ['branch_points', 'action_branch_points', 'child_pairs', 'environment_divergence'])).toEqual({ branch_points: 1, action_branch_points: 0, child_pairs: 1, environment_divergence: 1 });
  });

  it('near duplicates, the node cap and the instance cap, in that order', () => {
    // Message 2: a:fix-it (R) against a:fix-it! (near, similarity >= 0.95), a:quit and a:stop.
    const head = ['s:sys', 'u:task'];
    const atts = [
      new A('R', true, '1', [...head, 'a:fix-the-bug-now']),
      new A('N', false, '2', [...head, 'a:fix-the-bug-now!']),
      new A('Q', false, '3', [...head, 'a:quit']),
      new A('S', false, '4', [...head, 'a:stop']),
    ];
    const one = run(atts, { maxPairsPerNode: 1 });
    // R-N near duplicate, R-Q kept, R-S node-capped; N-Q, N-S, Q-S have gap 0.
    expect(one.rows.map((r) => r.rejected)).toEqual(['Q']);
    expect(pick(one.c, ['child_pairs', 'near_duplicate', 'node_capped', 'small_value_gap', 'pairs_emitted'])).toEqual({ child_pairs: 6, near_duplicate: 1, node_capped: 1, small_value_gap: 3, pairs_emitted: 1 });
    const inst = run(atts, { maxPairsPerNode: 5, maxPairsPerInstance: 1 });
    expect(pick(inst.c, ['node_capped', 'capped', 'pairs_emitted'])).toEqual({ node_capped: 0, capped: 1, pairs_emitted: 1 });
  });

  it('turn 0 and the gap bins', () => {
    const r = new A('R', true, '1', ['s:sys', 'u:task', 'a:ls']);
    const f = new A('F', false, '2', ['s:sys', 'u:task', 'a:cat']);
    const { c } = run([r, f]);
    expect(c.divergence_turn_0).toBe(1);
    expect([0.5, 0.55, 0.6, 0.7 - 0.4 + 0.3, 0.9999, 1].map(gapBin)).toEqual([5, 5, 6, 6, 9, 9]);
  });
});

describe('admitExitStatus', () => {
  it.each([
    // [rejected list, exclude list, label, status, kept, excluded, not_rejectable]
    [['submit'], null, 'failed', 'submit', true, 0, 0],
    [['submit'], null, 'failed', 'max_iterations', false, 0, 1],
    [['submit'], null, 'resolved', 'max_iterations', true, 0, 0],
    [['submit'], null, 'failed', null, false, 0, 1],
    [null, ['error'], 'resolved', 'error', false, 1, 0],
    [['submit'], ['error'], 'failed', 'error', false, 1, 0],
    [null, ['null'], 'failed', null, false, 1, 0],
  ] as const)('rejected %j exclude %j: %s %j -> kept %s', (rejected, exclude, label, status, kept, excluded, notRejectable) => {
    const t = emptyExitStatusTally();
    expect(admitExitStatus({ rejected, exclude }, label, status, t)).toBe(kept);
    expect([t.excluded, t.not_rejectable]).toEqual([excluded, notRejectable]);
    expect(Object.keys(t.observed)).toEqual([status ?? 'null']);
  });
});

function zeroOutcomes() {
  return Object.fromEntries(TREE_OUTCOMES.map((n) => [n, 0]));
}
