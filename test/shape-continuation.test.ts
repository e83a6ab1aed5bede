// Trajectory continuations with loss flags, and `--unit groups`
// (src/shapes/continuation.ts).
//
// The real-trajectory cases use fixtures/sources/open-swe-traces.jsonl, derived from three real
// rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius (Trofimova et al.,
// "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { emitMessage } from '../src/contract/emit.js';
import { normaliseMessage } from '../src/contract/normalise.js';
import {
  continuation,
  groupBounds,
  groupCount,
  groupRows,
  pairIdOf,
  turnSpans,
  withLoss,
  type AnyMessage,
  type LossMessage,
} from '../src/shapes/continuation.js';
import type { EmittedMessage } from '../src/types.js';

// Compact synthetic trajectories: 'a' = assistant with one call, 'A2' = assistant with two calls,
// 't' = tool result, 'u' = user (harness text), 's' = system, 'x' = assistant text only.
function traj(spec: string): EmittedMessage[] {
  let call = 0;
  return spec.split(' ').map((c, j): EmittedMessage => {
    switch (c) {
      case 'a':
        return { role: 'assistant', content: `step ${j}`, tool_calls: JSON.stringify([{ id: `c${++call}`, type: 'function', function: { name: 'execute_bash', arguments: { command: `cmd ${j}` } } }]) };
      case 'A2':
        return {
          role: 'assistant',
          content: `two calls ${j}`,
          tool_calls: JSON.stringify([
            { id: `c${++call}`, type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls' } } },
            { id: `c${++call}`, type: 'function', function: { name: 'execute_bash', arguments: { command: 'pwd' } } },
          ]),
        };
      case 'x':
        return { role: 'assistant', content: `text ${j}`, tool_calls: null };
      case 't':
        return { role: 'tool', content: `out ${j}`, name: 'execute_bash', tool_call_id: `c${call}` };
      case 'u':
        return { role: 'user', content: `Please continue ${j}` };
      case 's':
        return { role: 'system', content: 'sys' };
      default:
        throw new Error(c);
    }
  });
}
const roles = (ms: readonly { role: string }[]) => ms.map((m) => m.role[0]).join('');
const lossString = (ms: readonly LossMessage[]) => ms.map((m) => (m.loss ? '1' : '0')).join('');

describe('continuation', () => {
  it('loss: true on assistant turns only (tool results and harness text false)', () => {
    const msgs = traj('s u a t x u a t t A2 t t a');
    const c = continuation(msgs, 2);
    expect(roles(c)).toBe('atauattatta');
    expect(c.map((m) => [m.role, m.loss])).toEqual([
      ['assistant', true],
      ['tool', false],
      ['assistant', true],
      ['user', false],
      ['assistant', true],
      ['tool', false],
      ['tool', false],
      ['assistant', true],
      ['tool', false],
      ['tool', false],
      ['assistant', true],
    ]);
  });

  it('keeps only the role fields, tool_calls as a JSON string, loss last', () => {
    const tally = { malformed_arguments: 0, unknown_roles: 0 };
    const raw = [
      { role: 'assistant', content: 'x', name: null, tool_call_id: null, tool_calls: [{ id: '1', type: 'function', function: { name: 'think', arguments: '{"thought": "t"}' } }] },
      { role: 'tool', content: 'ok', name: 'think', tool_call_id: '1', tool_calls: null },
    ].map((m) => normaliseMessage(m, tally));
    const c = continuation(raw, 0);
    expect(c).toEqual([
      { ...emitMessage(raw[0]!), loss: true },
      { ...emitMessage(raw[1]!), loss: false },
    ]);
    expect(Object.keys(c[0]!)).toEqual(['role', 'content', 'tool_calls', 'loss']);
    expect(Object.keys(c[1]!)).toEqual(['role', 'content', 'name', 'tool_call_id', 'loss']);
    expect(c[0]!.tool_calls).toBe('[{"id":"1","type":"function","function":{"name":"think","arguments":{"thought":"t"}}}]');
    // emitted input gives the same result
    expect(continuation(raw.map(emitMessage), 0)).toEqual(c);
  });

  // From message 0 of 'a t A2 t t a t u a t a' (turns of 2, 3, 3, 2, 1 messages).
  const spec = 'a t A2 t t a t u a t a';
  const trims: [max: number | undefined, expected: number, why: string][] = [
    [undefined, 11, 'no limit: everything'],
    [100, 11, 'limit above the length'],
    [11, 11, 'limit equal to the length'],
    [10, 10, 'the last turn (1 message) dropped'],
    [9, 8, 'cutting the 2-message turn would leave a call without its result'],
    [8, 8, 'exactly at a turn boundary'],
    [7, 5, 'not inside the user message of turn 3'],
    [5, 5, 'after the two-call turn with both results'],
    [4, 2, 'never between a call and one of its two results'],
    [2, 2, 'the first turn'],
    [1, 2, 'the first turn is always kept whole'],
  ];
  it.each(trims)('maxMessages %s keeps %i messages (%s)', (max, expected) => {
    const c = continuation(traj(spec), 0, max);
    expect(c).toHaveLength(expected);
    // a cut always falls after a turn's results (only the uncut trajectory ends on its last call)
    if (c.length < 11) expect(c.at(-1)!.role).not.toBe('assistant');
  });

  it('a trajectory that ends on an assistant call keeps it (the end, not a cut)', () => {
    expect(roles(continuation(traj('a t a'), 0))).toBe('ata');
    expect(roles(continuation(traj('a t a'), 0, 2))).toBe('at');
  });

  it('starts at i; bad arguments are range errors', () => {
    const msgs = traj('s u a t a t');
    expect(roles(continuation(msgs, 4))).toBe('at');
    expect(() => continuation(msgs, 6)).toThrow(RangeError);
    expect(() => continuation(msgs, -1)).toThrow(RangeError);
    expect(() => continuation(msgs, 2, 0)).toThrow(/at least 1/);
    expect(() => continuation(msgs, 2, 1.5)).toThrow(RangeError);
  });

  it('turnSpans: leading non-assistant messages join the first turn', () => {
    expect(turnSpans(traj('u t a t u a a t'))).toEqual([
      [0, 5],
      [5, 6],
      [6, 8],
    ]);
    expect(turnSpans(traj('u t'))).toEqual([]);
  });
});

describe('groupRows (--unit groups)', () => {
  const counts: [tc: number, tr: number, g: number][] = [
    [1, 1, 1],
    [1, 9, 1],
    [3, 10, 3],
    [4, 4, 4],
    [5, 9, 5],
    [9, 5, 5],
    [6, 6, 6],
    [7, 20, 6],
    [40, 40, 6],
  ];
  it.each(counts)('turns %i / %i -> %i groups on both sides', (tc, tr, g) => {
    expect(groupCount(tc, tr)).toBe(g);
  });

  it('group sizes differ by at most one, larger groups last', () => {
    const spans = turnSpans(traj(Array(7).fill('a t').join(' ')));
    expect(groupBounds(spans, 6).map(([s, e]) => (e - s) / 2)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(groupBounds(spans, 4).map(([s, e]) => (e - s) / 2)).toEqual([1, 2, 2, 2]);
  });

  /** Every invariant of the rows of one pair. */
  function checkPair(pairId: string, chosen: readonly AnyMessage[], rejected: readonly AnyMessage[]) {
    const rows = groupRows(pairId, chosen, rejected);
    const g = groupCount(turnSpans(chosen).length, turnSpans(rejected).length);
    expect(rows).toHaveLength(g);
    for (const [side, msgs] of [['chosen', chosen], ['rejected', rejected]] as const) {
      const supervised = new Array<number>(msgs.length).fill(0);
      let prevLen = 0;
      rows.forEach((row, k) => {
        expect(row.sample_uid).toBe(`${pairId}#k${k + 1}`);
        expect(row.prefix_groups).toBe(k + 1);
        expect(row.group_count).toBe(g);
        expect(row.is_full_trajectory).toBe(k + 1 === g);
        const part = row[side];
        // a prefix of the side, growing by whole turns
        expect(part.map(({ loss: _l, ...m }) => m)).toEqual(msgs.slice(0, part.length).map((m) => withLoss(m)).map(({ loss: _l, ...m }) => m));
        expect(part.length).toBeGreaterThan(prevLen);
        expect(part.length === msgs.length || msgs[part.length]!.role === 'assistant').toBe(true);
        // loss only on assistant messages of group k (those after the previous row's prefix)
        part.forEach((m, j) => {
          expect(m.loss).toBe(m.role === 'assistant' && j >= prevLen);
          if (m.loss) supervised[j]!++;
        });
        prevLen = part.length;
      });
      expect(prevLen).toBe(msgs.length);
      // each assistant turn is a target exactly once across the pair's rows
      msgs.forEach((m, j) => expect(supervised[j]).toBe(m.role === 'assistant' ? 1 : 0));
    }
    return rows;
  }

  const shapes: [name: string, chosen: string, rejected: string][] = [
    ['one turn each', 'a t', 'a'],
    ['3 vs 10 turns', 'a t a t a', Array(10).fill('a t').join(' ')],
    ['4 turns each with harness text and parallel calls', 'a t u A2 t t x u a t', 'a t a t a t a t'],
    ['5 vs 9 turns', Array(5).fill('a t').join(' '), Array(9).fill('a t t').join(' ')],
    ['6 vs 6', Array(6).fill('a t').join(' '), Array(6).fill('x u').join(' ')],
    ['7 vs 20', Array(7).fill('a t').join(' '), Array(20).fill('a t').join(' ')],
    ['leading observation (continuation not starting at an assistant)', 't a t a t a t a t', 'a t a t a t a t a'],
  ];
  it.each(shapes)('invariants: %s', (_n, c, r) => {
    checkPair('p1', traj(c), traj(r));
  });

  it('every (T_c, T_r) from 1 to 14: each assistant turn supervised exactly once on each side', () => {
    for (let tc = 1; tc <= 14; tc++) {
      for (let tr = 1; tr <= 14; tr++) {
        const c = traj(Array.from({ length: tc }, (_, k) => (k % 3 === 1 ? 'A2 t t' : k % 4 === 3 ? 'x u' : 'a t')).join(' '));
        const r = traj(Array.from({ length: tr }, () => 'a t').join(' '));
        checkPair(`p${tc}.${tr}`, c, r);
      }
    }
  });

  it('minGroups drops short pairs; complete=false clears is_full_trajectory; maxGroups caps', () => {
    const c = traj('a t a t a t');
    const r = traj(Array(10).fill('a t').join(' '));
    expect(groupRows('p', c, r, { minGroups: 4 })).toEqual([]);
    expect(groupRows('p', c, r, { minGroups: 3 })).toHaveLength(3);
    expect(groupRows('p', c, r, { complete: false }).map((x) => x.is_full_trajectory)).toEqual([false, false, false]);
    expect(groupRows('p', r, r, { maxGroups: 4 })).toHaveLength(4);
    expect(groupRows('p', traj('u t'), r)).toEqual([]);
    expect(() => groupRows('p', c, r, { maxGroups: 0 })).toThrow(RangeError);
  });

  it('rows of a real pair (fixture, derived from CC-BY-4.0 © Nebius rows)', () => {
    const rows = readFileSync(new URL('../fixtures/sources/open-swe-traces.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { instance_id: string; trajectory_id: string; resolved: number; messages: Record<string, unknown>[] });
    const tally = { malformed_arguments: 0, unknown_roles: 0 };
    const norm = (r: (typeof rows)[number]) => r.messages.map((m) => normaliseMessage(m, tally));
    const real = rows.find((r) => r.instance_id === 'numpy__numpydoc-101' && r.resolved === 1)!;
    const failed = rows.find((r) => r.instance_id === 'numpy__numpydoc-101' && r.resolved === 0)!;
    // divergence at message 16 (fixtures/sources/README.md)
    const chosen = continuation(norm(real), 16);
    const rejected = continuation(norm(failed), 16);
    expect(chosen).toHaveLength(36 - 16);
    expect(rejected).toHaveLength(34 - 16);
    const pairId = pairIdOf({ chosen_trajectory_id: real.trajectory_id, rejected_trajectory_id: failed.trajectory_id });
    const out = checkPair(pairId, chosen, rejected);
    // 10 and 9 assistant turns -> 6 groups
    expect(out).toHaveLength(6);
    expect(out[0]!.sample_uid).toBe(`${real.trajectory_id}~${failed.trajectory_id}#k1`);
    // trimmed: 7 messages from 16 = turns of 2 + 2 + 2 (the 4th turn would make 8)
    const trimmed = continuation(norm(real), 16, 7);
    expect(lossString(trimmed)).toBe('101010');
  });
});
