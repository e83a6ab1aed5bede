// The tree pairing (`--pairing tree`, docs/tree-pairing.md): per instance, a prefix tree over every
// labelled attempt, keyed by the contract's comparison keys (contract §3); each node is valued by the
// share of resolved attempts through it, and pairs are emitted between children that differ by an
// assistant action and whose values differ by at least the minimum gap. Pure: attempts come as key
// sequences (hashes or strings, anything comparable by `===`), rows are built by the caller's hooks.
import { actionSimilarity } from '../contract/walk.js';
import { addCounts, zeroCounts } from '../contract/counters.js';
import type { PairRow } from '../types.js';

/** One attempt as the tree sees it: its label, its rank (contract §4.3) and its message keys. */
export interface TreeAttempt {
  readonly trajectoryId: string;
  readonly resolved: boolean;
  /** The contract's rank key (lowercase hex SHA-256 of seed:id); ascending = preferred. */
  readonly rank: string;
  readonly length: number;
  /** The comparison key (or its hash) of message i, as a string: equal keys, equal strings. */
  keyAt(i: number): string;
  role(i: number): string;
}

export interface TreeOptions {
  /** Children whose values differ by less than this give no pair (default 0.5). */
  minValueGap: number;
  /** Attempts each child needs (default 1). */
  minSupport: number;
  /** The contract's near-duplicate threshold (§5.3). */
  minSimilaritySkip: number;
  /** The contract's per-instance cap (§5.5). */
  maxPairsPerInstance: number;
  /** Rows kept per branch node. */
  maxPairsPerNode: number;
}

export const DEFAULT_TREE_OPTIONS: Readonly<Pick<TreeOptions, 'minValueGap' | 'minSupport' | 'maxPairsPerNode'>> = Object.freeze({
  minValueGap: 0.5,
  minSupport: 1,
  maxPairsPerNode: 2,
});

/** Gaps are compared with this slack: 0.3 computed as 7/10 - 4/10 must still pass --min-value-gap 0.3. */
const GAP_EPSILON = 1e-9;

export interface TreeNode {
  /** Messages on the path from the root: the node stands for the shared prefix 0 .. depth-1. */
  depth: number;
  /** Indices into the instance's attempts (rank order) whose first `depth` messages are this path. */
  attempts: number[];
  resolved: number;
  /** Ordered by the best (lowest) rank of the attempts through each child. */
  children: TreeNode[];
  /** Role of message depth-1 (the message that leads here); null at the root. */
  role: string | null;
  /** Branch points (nodes with two or more children) strictly above this node. */
  branchDepth: number;
}

export function nodeValue(n: TreeNode): number {
  return n.resolved / n.attempts.length;
}

/**
 * The prefix tree of one instance. `attempts` must be in rank order (ascending rank); node attempt
 * lists stay in that order. Built with an explicit stack (a trajectory may have many messages).
 */
export function buildTree(attempts: readonly TreeAttempt[]): TreeNode {
  const all = attempts.map((_, k) => k);
  const root: TreeNode = { depth: 0, attempts: all, resolved: attempts.filter((a) => a.resolved).length, children: [], role: null, branchDepth: 0 };
  const stack: TreeNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const d = node.depth;
    const groups = new Map<string, number[]>();
    for (const k of node.attempts) {
      const a = attempts[k]!;
      if (a.length <= d) continue; // the attempt ends here
      const key = a.keyAt(d);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = []));
      g.push(k);
    }
    // Map order is first appearance in the node's rank-ordered list: children by best rank.
    const below = node.branchDepth + (groups.size >= 2 ? 1 : 0);
    for (const g of groups.values()) {
      const child: TreeNode = {
        depth: d + 1,
        attempts: g,
        resolved: g.reduce((s, k) => s + (attempts[k]!.resolved ? 1 : 0), 0),
        children: [],
        role: attempts[g[0]!]!.role(d),
        branchDepth: below,
      };
      node.children.push(child);
      stack.push(child);
    }
  }
  return root;
}

/** Every node but the root, in pre-order (children in rank order). */
export function* nodesOf(root: TreeNode): Generator<TreeNode> {
  const stack = [...root.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    yield n;
    for (let c = n.children.length - 1; c >= 0; c--) stack.push(n.children[c]!);
  }
}

/** The tree funnel; `child_pairs` is split exactly over the outcomes (see treeIdentityHolds). */
export const TREE_COUNTER_NAMES = [
  'tree_instances',
  'tree_attempts',
  'nodes',
  'branch_points',
  'action_branch_points',
  'child_pairs',
  'environment_divergence',
  'low_support',
  'small_value_gap',
  'near_duplicate',
  'exact_duplicate',
  'node_capped',
  'capped',
  'pairs_emitted',
  'divergence_turn_0',
] as const;

export type TreeCounterName = (typeof TREE_COUNTER_NAMES)[number];
export type TreeCounters = Record<TreeCounterName, number>;

/** Outcomes of a child pair, in the order the filters apply. */
export const TREE_OUTCOMES = ['environment_divergence', 'low_support', 'small_value_gap', 'near_duplicate', 'exact_duplicate', 'node_capped', 'capped', 'pairs_emitted'] as const satisfies readonly TreeCounterName[];

export function emptyTreeCounters(): TreeCounters {
  return zeroCounts(TREE_COUNTER_NAMES);
}

export function addTreeCounters(into: TreeCounters, from: Partial<TreeCounters>): TreeCounters {
  return addCounts(TREE_COUNTER_NAMES, into, from);
}

/** child_pairs = environment_divergence + low_support + small_value_gap + near_duplicate + exact_duplicate + node_capped + capped + pairs_emitted. */
export function treeIdentityHolds(c: TreeCounters): boolean {
  return c.child_pairs === TREE_OUTCOMES.reduce((s, n) => s + c[n], 0);
}

/** A violated identity is a bug in the miner (exit 1), never a property of the input. */
export function assertTreeIdentity(c: TreeCounters): void {
  if (!treeIdentityHolds(c)) {
    throw new Error(`internal error: tree counter identity violated (child_pairs=${c.child_pairs}, sum of outcomes=${TREE_OUTCOMES.reduce((s, n) => s + c[n], 0)})`);
  }
}

/** Value gaps of emitted pairs in ten bins of 0.1 ([0.5, 0.6) ... [0.9, 1.0]; 1.0 falls in the last). */
export function gapBin(gap: number): number {
  return Math.min(9, Math.floor(gap * 10 + GAP_EPSILON));
}

export function emptyGapHistogram(): number[] {
  return new Array<number>(10).fill(0);
}

export interface TreeHooks<T extends TreeAttempt> {
  /** actionSignature (contract §3.2) of assistant message i of `t`. */
  signature(t: T, i: number): string;
  /** Equal exactly when the rows' prompt, chosen and rejected are deep-equal (contract §5.4). */
  dedupeKey(prompt: T, chosen: T, rejected: T, i: number): string;
  /** The contract's row for a branch at message i; called only for rows that are kept. */
  buildRow(prompt: T, chosen: T, rejected: T, i: number, similarity: number): PairRow;
}

/** What a tree row adds to the contract's row. */
export interface TreeFields {
  chosen_value: number;
  rejected_value: number;
  chosen_support: number;
  rejected_support: number;
  branch_depth: number;
}

export const TREE_FIELD_NAMES = ['chosen_value', 'rejected_value', 'chosen_support', 'rejected_support', 'branch_depth'] as const;

export interface TreePair<T> {
  row: PairRow;
  tree: TreeFields;
  /** The attempt the prompt comes from (its tools go with the row). */
  promptAttempt: T;
  chosenAttempt: T;
  rejectedAttempt: T;
  /** The comparison keys of the two branches' actions (message i): a branch's identity within its node. */
  branches: [string, string];
}

/** The first attempt (rank order) of `n` with this label; a node with none has none. */
function firstWith<T extends TreeAttempt>(attempts: readonly T[], n: TreeNode, resolved: boolean): T | null {
  for (const k of n.attempts) if (attempts[k]!.resolved === resolved) return attempts[k]!;
  return null;
}

/**
 * Representatives (docs/tree-pairing.md): the prompt comes from the lowest-ranked resolved attempt
 * through the branch node, `chosen` from the lowest-ranked resolved attempt through the higher-valued
 * child, `rejected` from the lowest-ranked failed attempt through the lower-valued child. A positive
 * gap guarantees all three exist.
 */
export function representatives<T extends TreeAttempt>(attempts: readonly T[], node: TreeNode, hi: TreeNode, lo: TreeNode): { prompt: T; chosen: T; rejected: T } {
  const prompt = firstWith(attempts, node, true);
  const chosen = firstWith(attempts, hi, true);
  const rejected = firstWith(attempts, lo, false);
  if (!prompt || !chosen || !rejected) throw new Error('internal error: a valued pair without a resolved chosen or a failed rejected attempt');
  return { prompt, chosen, rejected };
}

interface Candidate {
  node: TreeNode;
  hi: TreeNode;
  lo: TreeNode;
  /** Gap as a fraction gapNum / gapDen (exact order). */
  gapNum: number;
  gapDen: number;
  /** Child positions within the node, for the tie order. */
  hiPos: number;
  loPos: number;
}

/**
 * Pairs of one instance. Child pairs at every node with two or more children, in pre-order, each
 * node's children in rank order: first the filters that need no row (environment divergence,
 * support, value gap); the remaining candidates are then taken by descending value gap (ties: the
 * shallower node, then the children's order) through near-duplicate, exact-duplicate, the node cap
 * and the instance cap. Updates `c` and `gaps` (histogram of emitted gaps).
 */
export function treePairs<T extends TreeAttempt>(attempts: readonly T[], opts: TreeOptions, hooks: TreeHooks<T>, c: TreeCounters, gaps?: number[]): TreePair<T>[] {
  const root = buildTree(attempts);
  c.tree_instances++;
  c.tree_attempts += attempts.length;
  const candidates: Candidate[] = [];
  const order = new Map<TreeNode, number>();
  for (const node of [root, ...nodesOf(root)]) {
    if (node !== root) c.nodes++;
    order.set(node, order.size);
    const kids = node.children;
    if (kids.length < 2) continue;
    c.branch_points++;
    if (kids.filter((k) => k.role === 'assistant').length >= 2) c.action_branch_points++;
    for (let a = 0; a < kids.length; a++) {
      for (let b = a + 1; b < kids.length; b++) {
        const x = kids[a]!;
        const y = kids[b]!;
        c.child_pairs++;
        if (x.role !== 'assistant' || y.role !== 'assistant') {
          c.environment_divergence++;
          continue;
        }
        if (x.attempts.length < opts.minSupport || y.attempts.length < opts.minSupport) {
          c.low_support++;
          continue;
        }
        // gap = |rx/nx - ry/ny| = |rx*ny - ry*nx| / (nx*ny), exact in integers.
        const num = x.resolved * y.attempts.length - y.resolved * x.attempts.length;
        const den = x.attempts.length * y.attempts.length;
        if (num === 0 || Math.abs(num) / den < opts.minValueGap - GAP_EPSILON) {
          c.small_value_gap++;
          continue;
        }
        candidates.push(num > 0 ? { node, hi: x, lo: y, gapNum: num, gapDen: den, hiPos: a, loPos: b } : { node, hi: y, lo: x, gapNum: -num, gapDen: den, hiPos: b, loPos: a });
      }
    }
  }
  candidates.sort(
    (p, q) =>
      q.gapNum * p.gapDen - p.gapNum * q.gapDen ||
      p.node.depth - q.node.depth ||
      order.get(p.node)! - order.get(q.node)! ||
      Math.min(p.hiPos, p.loPos) - Math.min(q.hiPos, q.loPos) ||
      Math.max(p.hiPos, p.loPos) - Math.max(q.hiPos, q.loPos),
  );
  const kept: TreePair<T>[] = [];
  const seen = new Set<string>();
  const perNode = new Map<TreeNode, number>();
  for (const cand of candidates) {
    const i = cand.node.depth;
    const reps = representatives(attempts, cand.node, cand.hi, cand.lo);
    const similarity = actionSimilarity(hooks.signature(reps.chosen, i), hooks.signature(reps.rejected, i));
    if (similarity >= opts.minSimilaritySkip) {
      c.near_duplicate++;
      continue;
    }
    const key = hooks.dedupeKey(reps.prompt, reps.chosen, reps.rejected, i);
    if (seen.has(key)) {
      c.exact_duplicate++;
      continue;
    }
    if ((perNode.get(cand.node) ?? 0) >= opts.maxPairsPerNode) {
      c.node_capped++;
      continue;
    }
    if (kept.length >= opts.maxPairsPerInstance) {
      c.capped++;
      continue;
    }
    seen.add(key);
    perNode.set(cand.node, (perNode.get(cand.node) ?? 0) + 1);
    const row = hooks.buildRow(reps.prompt, reps.chosen, reps.rejected, i, similarity);
    const tree: TreeFields = {
      chosen_value: nodeValue(cand.hi),
      rejected_value: nodeValue(cand.lo),
      chosen_support: cand.hi.attempts.length,
      rejected_support: cand.lo.attempts.length,
      branch_depth: cand.node.branchDepth,
    };
    kept.push({ row, tree, promptAttempt: reps.prompt, chosenAttempt: reps.chosen, rejectedAttempt: reps.rejected, branches: [reps.chosen.keyAt(i), reps.rejected.keyAt(i)] });
    c.pairs_emitted++;
    if (row.divergence_turn === 0) c.divergence_turn_0++;
    if (gaps) gaps[gapBin(cand.gapNum / cand.gapDen)]!++;
  }
  return kept;
}
