// Unit tests for src/contract/walk.ts, written from the mining contract section 5 (walk and filters, in order).
// The trajectories here are minimal stand-ins: a message is [role, text], its comparison key is
// role + "\n" + text and the action signature of an assistant message is its text. The signatures
// in the similarity rows are real call signatures in the shape of nebius/SWE-rebench-openhands-
// trajectories (CC-BY-4.0 © Nebius) where noted.
//
// string-similarity compareTwoStrings (the contract's measure) is the Dice coefficient over
// character bigrams after removing all whitespace: 2 * |shared bigrams| / (bigrams(a) + bigrams(b)).
// The expected similarities below were worked out by hand from that definition.
import { describe, expect, it } from 'vitest';
import { emptyCounters, identityHolds, type Counters } from '../src/contract/counters.js';
import { dedupeKey, makeRow } from '../src/contract/emit.js';
import type { PairRow } from '../src/types.js';
import { actionSimilarity, assistantTurn, findDivergence, walkInstance, type InstanceHooks, type Walkable, type WalkOptions } from '../src/contract/walk.js';

type Msg = [role: string, text: string];

class T implements Walkable {
  /** Action signatures that differ from the message text (index -> signature). */
  readonly sig = new Map<number, string>();
  constructor(
    readonly trajectoryId: string,
    readonly msgs: Msg[],
  ) {}
  get length(): number {
    return this.msgs.length;
  }
  role(i: number): string {
    return this.msgs[i]![0];
  }
  key(i: number): string {
    return `${this.msgs[i]![0]}\n${this.msgs[i]![1]}`;
  }
  sameKey(i: number, other: T): boolean {
    return this.key(i) === other.key(i);
  }
}

const emit = ([role, text]: Msg) => ({ role, content: text });
const signatureCalls: string[] = [];
const hooks: InstanceHooks<T> = {
  signature: (t, i) => {
    signatureCalls.push(`${t.trajectoryId}@${i}`);
    return t.sig.get(i) ?? t.msgs[i]![1];
  },
  dedupeKey: (r, f, i) => dedupeKey({ prompt: r.msgs.slice(0, i).map(emit), chosen: emit(r.msgs[i]!), rejected: emit(f.msgs[i]!) }),
  buildRow: (r, f, i, similarity) =>
    makeRow(r.msgs.slice(0, i).map(emit), emit(r.msgs[i]!), emit(f.msgs[i]!), {
      instance_id: 'I',
      repo: null,
      chosen_trajectory_id: r.trajectoryId,
      rejected_trajectory_id: f.trajectoryId,
      divergence_turn: assistantTurn(r, i),
      divergence_msg_index: i,
      action_similarity: similarity,
    }),
};
const DEFAULTS: WalkOptions = { minSimilaritySkip: 0.95, maxPairsPerInstance: 4 };
const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });

function walk(resolved: T[], failed: T[], opts: Partial<WalkOptions> = {}) {
  const c = emptyCounters();
  signatureCalls.length = 0;
  const rows = walkInstance(resolved, failed, { ...DEFAULTS, ...opts }, hooks, c);
  expect(identityHolds(c)).toBe(true);
  return { rows, counters: c };
}

// A trajectory head in the upstream shape: system, user, then assistant/tool turns.
const HEAD: Msg[] = [
  ['system', 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.'],
  ['user', 'Fix the issue.'],
];
const t = (id: string, ...rest: Msg[]) => new T(id, [...HEAD, ...rest]);
const a = (text: string): Msg => ['assistant', text];
const tool = (text: string): Msg => ['tool', text];

describe('findDivergence: first index whose keys differ', () => {
  const cases: { name: string; r: T; f: T; expected: number | null }[] = [
    { name: 'identical', r: t('r', a('x'), tool('o')), f: t('f', a('x'), tool('o')), expected: null },
    { name: 'failed is a prefix of resolved', r: t('r', a('x'), tool('o'), a('y')), f: t('f', a('x')), expected: null },
    { name: 'resolved is a prefix of failed', r: t('r'), f: t('f', a('x')), expected: null },
    { name: 'both empty', r: new T('r', []), f: new T('f', []), expected: null },
    { name: 'first message differs', r: new T('r', [['system', 'A']]), f: new T('f', [['system', 'B']]), expected: 0 },
    { name: 'first assistant message differs', r: t('r', a('x')), f: t('f', a('y')), expected: 2 },
    { name: 'tool output differs', r: t('r', a('x'), tool('ok')), f: t('f', a('x'), tool('error')), expected: 3 },
    { name: 'same text, different role', r: t('r', a('x')), f: t('f', ['user', 'x']), expected: 2 },
  ];
  it.each(cases)('$name', ({ r, f, expected }) => {
    expect(findDivergence(r, f)).toBe(expected);
  });
});

describe('assistantTurn: assistant messages before index i', () => {
  const tr = t('r', a('x'), tool('o'), a('y'), tool('p'), ['user', 'more'], a('z'));
  const cases: [number, number][] = [
    [0, 0],
    [2, 0],
    [3, 1],
    [4, 1],
    [5, 2],
    [7, 2],
    [8, 3],
  ];
  it.each(cases)('i = %i -> %i', (i, expected) => {
    expect(assistantTurn(tr, i)).toBe(expected);
  });
});

describe('actionSimilarity: compareTwoStrings of the two signatures', () => {
  const cases: [string, string, string, number][] = [
    ['identical', 'execute_bash {"command":"pwd"}', 'execute_bash {"command":"pwd"}', 1],
    ['whitespace is ignored', 'execute_bash {"command":"ls -la"}', 'execute_bash {"command":"ls  -la"}', 1],
    ['no shared bigram', 'ls', 'pwd', 0],
    // "textab" and "textcd": 5 bigrams each, shared te ex xt -> 2*3/10
    ['3 of 5 bigrams shared', 'text ab', 'text cd', 0.6],
    // 21 characters each, 20 distinct bigrams each, 19 shared -> 38/40
    ['19 of 20 bigrams shared', 'text abcdefghijklmnopq', 'text abcdefghijklmnopZ', 0.95],
    // a one-character string has no bigram
    ['single character', 'a', 'ab', 0],
  ];
  it.each(cases)('%s', (_name, x, y, expected) => {
    expect(actionSimilarity(x, y)).toBe(expected);
  });
});

describe('walkInstance: one pair, each outcome (filters in contract order)', () => {
  const cases: { name: string; r: T; f: T; opts?: Partial<WalkOptions>; counters: Partial<Counters>; row?: Partial<PairRow> }[] = [
    { name: 'identical -> no_divergence', r: t('r', a('x'), tool('o')), f: t('f', a('x'), tool('o')), counters: { pairs_walked: 1, no_divergence: 1 } },
    { name: 'prefix -> no_divergence', r: t('r', a('x'), tool('o'), a('finish')), f: t('f', a('x'), tool('o')), counters: { pairs_walked: 1, no_divergence: 1 } },
    { name: 'tool outputs differ -> environment_divergence', r: t('r', a('x'), tool('ok')), f: t('f', a('x'), tool('error')), counters: { pairs_walked: 1, environment_divergence: 1 } },
    { name: 'assistant vs user at i -> environment_divergence', r: t('r', a('x')), f: t('f', ['user', 'x']), counters: { pairs_walked: 1, environment_divergence: 1 } },
    { name: 'system prompts differ -> environment_divergence', r: new T('r', [['system', 'A'], a('x')]), f: new T('f', [['system', 'B'], a('y')]), counters: { pairs_walked: 1, environment_divergence: 1 } },
    {
      name: 'commands differing only in whitespace -> near_duplicate (similarity 1)',
      r: t('r', a('execute_bash {"command":"ls -la"}')),
      f: t('f', a('execute_bash {"command":"ls  -la"}')),
      counters: { pairs_walked: 1, near_duplicate: 1 },
    },
    {
      name: 'similarity exactly at the default threshold 0.95 -> near_duplicate',
      r: t('r', a('text abcdefghijklmnopq')),
      f: t('f', a('text abcdefghijklmnopZ')),
      counters: { pairs_walked: 1, near_duplicate: 1 },
    },
    {
      name: 'similarity 0.95 just below a threshold of 0.9500000000000001 -> kept',
      r: t('r', a('text abcdefghijklmnopq')),
      f: t('f', a('text abcdefghijklmnopZ')),
      opts: { minSimilaritySkip: 0.9500000000000001 },
      counters: { pairs_walked: 1, pairs_emitted: 1, divergence_turn_0: 1 },
      row: { action_similarity: 0.95, divergence_turn: 0, divergence_msg_index: 2 },
    },
    {
      name: 'similarity 0.6 exactly at --min-similarity-skip 0.6 -> near_duplicate',
      r: t('r', a('text ab')),
      f: t('f', a('text cd')),
      opts: { minSimilaritySkip: 0.6 },
      counters: { pairs_walked: 1, near_duplicate: 1 },
    },
    {
      name: 'similarity 0.6 under the default -> kept',
      r: t('r', a('text ab')),
      f: t('f', a('text cd')),
      counters: { pairs_walked: 1, pairs_emitted: 1, divergence_turn_0: 1 },
      row: { action_similarity: 0.6, divergence_turn: 0, divergence_msg_index: 2 },
    },
    {
      name: 'real calls, divergence after two assistant turns -> kept, turn 2',
      r: t('r', a('think {}'), tool('Your thought has been logged.'), a('execute_bash {"command":"pwd"}'), tool('/workspace'), a('str_replace_editor {"command":"view","path":"/workspace"}')),
      f: t('f', a('think {}'), tool('Your thought has been logged.'), a('execute_bash {"command":"pwd"}'), tool('/workspace'), a('execute_bash {"command":"ls"}')),
      counters: { pairs_walked: 1, pairs_emitted: 1 },
      // 56 chars (55 bigrams) vs 28 chars (27 bigrams); shared: the 11 bigrams of {"command":" , '"}' and 'e_'
      row: { divergence_turn: 2, divergence_msg_index: 6, action_similarity: 26 / 82 },
    },
  ];
  it.each(cases)('$name', ({ r, f, opts, counters: c, row }) => {
    const res = walk([r], [f], opts);
    expect(res.counters).toStrictEqual(counters(c));
    if (row) {
      expect(res.rows).toHaveLength(1);
      expect(res.rows[0]).toMatchObject(row);
    } else expect(res.rows).toHaveLength(0);
  });

  it('asks for action signatures only when both messages at i are assistant messages', () => {
    walk([t('r', a('x'), tool('ok'))], [t('f', a('x'), tool('error'))]);
    expect(signatureCalls).toStrictEqual([]);
    walk([t('r', a('x'))], [t('f', a('y'))]);
    expect(signatureCalls).toStrictEqual(['r@2', 'f@2']);
  });

  it('the row: prompt = resolved messages 0..i-1, chosen/rejected = message i', () => {
    const { rows } = walk([t('R', a('x'), tool('o'), a('y'))], [t('F', a('x'), tool('o'), a('z'))]);
    expect(rows).toStrictEqual([
      {
        prompt: [
          { role: 'system', content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.' },
          { role: 'user', content: 'Fix the issue.' },
          { role: 'assistant', content: 'x' },
          { role: 'tool', content: 'o' },
        ],
        chosen: { role: 'assistant', content: 'y' },
        rejected: { role: 'assistant', content: 'z' },
        instance_id: 'I',
        repo: null,
        chosen_trajectory_id: 'R',
        rejected_trajectory_id: 'F',
        divergence_turn: 1,
        divergence_msg_index: 4,
        action_similarity: 0,
      },
    ]);
  });
});

describe('walkInstance: several pairs (order, exact_duplicate scope, capped)', () => {
  // Distinct first actions: "ls", "pwd", "cat", ... share no bigram with each other.
  const R = (id: string, act: string) => t(id, a(act));
  const F = (id: string, act: string) => t(id, a(act));
  const pairsOf = (rows: PairRow[]) => rows.map((r) => `${r.chosen_trajectory_id}/${r.rejected_trajectory_id}`);

  it('resolved-major, both sides in the given (rank) order', () => {
    const res = walk([R('R2', 'ls'), R('R1', 'pwd')], [F('F1', 'cat'), F('F2', 'git')]);
    expect(pairsOf(res.rows)).toStrictEqual(['R2/F1', 'R2/F2', 'R1/F1', 'R1/F2']);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 4, pairs_emitted: 4, divergence_turn_0: 4 }));
  });

  it('3 x 3 distinct pairs with the default cap 4: the first 4 kept, 5 capped', () => {
    const res = walk([R('Ra', 'ls'), R('Rb', 'pwd'), R('Rc', 'cat')], [F('Fa', 'git'), F('Fb', 'vim'), F('Fc', 'make')]);
    expect(pairsOf(res.rows)).toStrictEqual(['Ra/Fa', 'Ra/Fb', 'Ra/Fc', 'Rb/Fa']);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 9, pairs_emitted: 4, capped: 5, divergence_turn_0: 4 }));
  });

  it('--max-pairs-per-instance 0 caps everything that passes the other filters', () => {
    const res = walk([R('R1', 'ls'), t('R2', a('x'))], [F('F1', 'pwd'), t('F2', a('x'))], { maxPairsPerInstance: 0 });
    // R1/F1 capped, R1/F2 capped, R2/F1 capped, R2/F2 identical -> no_divergence
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 4, capped: 3, no_divergence: 1 }));
  });

  it('same prompt/chosen/rejected as a kept row -> exact_duplicate (trajectory ids are not part of it)', () => {
    const res = walk([R('R1', 'ls'), R('R2', 'ls')], [F('F1', 'pwd')]);
    expect(pairsOf(res.rows)).toStrictEqual(['R1/F1']);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 2, pairs_emitted: 1, exact_duplicate: 1, divergence_turn_0: 1 }));
  });

  it('a duplicate of a kept row at the cap is exact_duplicate (filter 4 before 5); a duplicate of a capped row is capped', () => {
    // cap 1. R1 and R2 have the same messages; F1 and F2 differ.
    // R1/F1 kept; R1/F2 capped (row X, never kept); R2/F1 = kept row -> exact_duplicate; R2/F2 = row X -> capped.
    const res = walk([R('R1', 'ls'), R('R2', 'ls')], [F('F1', 'pwd'), F('F2', 'cat')], { maxPairsPerInstance: 1 });
    expect(pairsOf(res.rows)).toStrictEqual(['R1/F1']);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 4, pairs_emitted: 1, exact_duplicate: 1, capped: 2, divergence_turn_0: 1 }));
  });

  it('near_duplicate is decided before exact_duplicate', () => {
    // R1/F1 is kept. R2/F1 builds the same row as R1/F1 (R2 has R1's messages), and R2's action signature is
    // made equal to F1's, so both filters match R2/F1: step 3 (near) must count it, not step 4 (exact).
    const r2 = R('R2', 'ls');
    r2.sig.set(2, 'pwd');
    const res = walk([R('R1', 'ls'), r2], [F('F1', 'pwd')]);
    expect(pairsOf(res.rows)).toStrictEqual(['R1/F1']);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 2, pairs_emitted: 1, near_duplicate: 1, divergence_turn_0: 1 }));
  });

  it('the same rejected message after a different prompt is not a duplicate', () => {
    const res = walk([t('R1', a('x'), tool('o'), a('ls')), t('R2', a('y'), tool('o'), a('ls'))], [t('F1', a('x'), tool('o'), a('pwd')), t('F2', a('y'), tool('o'), a('pwd'))]);
    // R1/F1 kept (i 4), R1/F2 diverges at 2 (x vs y) kept, R2/F1 diverges at 2 kept, R2/F2 kept (i 4)
    expect(pairsOf(res.rows)).toStrictEqual(['R1/F1', 'R1/F2', 'R2/F1', 'R2/F2']);
    expect(res.rows.map((r) => r.divergence_msg_index)).toStrictEqual([4, 2, 2, 4]);
    expect(res.counters).toStrictEqual(counters({ pairs_walked: 4, pairs_emitted: 4, divergence_turn_0: 2 }));
  });

  it('no resolved or no failed trajectory walks nothing', () => {
    expect(walk([], [F('F1', 'ls')]).counters).toStrictEqual(counters({}));
    expect(walk([R('R1', 'ls')], []).counters).toStrictEqual(counters({}));
  });

  it('adds to the counters it is given (instances share one funnel)', () => {
    const c = counters({ pairs_walked: 10, pairs_emitted: 10 });
    walkInstance([R('R1', 'ls')], [F('F1', 'pwd')], DEFAULTS, hooks, c);
    expect(c).toStrictEqual(counters({ pairs_walked: 11, pairs_emitted: 11, divergence_turn_0: 1 }));
  });
});
