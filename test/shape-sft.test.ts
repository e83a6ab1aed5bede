// `--shape sft` rows from the resolved side, deduplicated (src/shapes/sft.ts).
//
// The mined pairs come from fixtures/sources/open-swe-traces.jsonl, derived from three real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands
// Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mineRows } from '../src/engine/mine-rows.js';
import { SftDeduper, sftKey, toSftRow, type SftSource } from '../src/shapes/sft.js';
import { detectSchema, toStandardRow } from '../src/sources/schema.js';
import type { EmittedMessage } from '../src/types.js';

const user: EmittedMessage = { role: 'user', content: 'Fix the bug in a.py' };
const act = (cmd: string): EmittedMessage => ({
  role: 'assistant',
  content: '',
  tool_calls: JSON.stringify([{ id: 'c', type: 'function', function: { name: 'execute_bash', arguments: { command: cmd } } }]),
});
const pair = (over: Partial<SftSource> & { rejected?: EmittedMessage } = {}): SftSource & { rejected: EmittedMessage } => ({
  prompt: [user],
  chosen: act('grep -n bug a.py'),
  rejected: act('ls'),
  instance_id: 'o__r-1',
  repo: 'o/r',
  chosen_trajectory_id: 'R1',
  divergence_turn: 0,
  divergence_msg_index: 1,
  ...over,
});

describe('toSftRow', () => {
  it('prompt/completion from the resolved side, in field order; rejected never used', () => {
    const row = toSftRow(pair());
    expect(Object.keys(row)).toEqual(['prompt', 'completion', 'instance_id', 'repo', 'trajectory_id', 'divergence_turn', 'divergence_msg_index']);
    expect(row).toEqual({
      prompt: [user],
      completion: [act('grep -n bug a.py')],
      instance_id: 'o__r-1',
      repo: 'o/r',
      trajectory_id: 'R1',
      divergence_turn: 0,
      divergence_msg_index: 1,
    });
    expect(JSON.stringify(row)).not.toContain('"ls"');
  });

  it('a trajectory continuation is the completion as it is (with loss flags)', () => {
    const cont = [
      { ...act('pytest'), loss: true },
      { role: 'tool', content: 'ok', name: 'execute_bash', tool_call_id: 'c', loss: false },
    ];
    expect(toSftRow(pair({ chosen: cont })).completion).toEqual(cont);
  });
});

describe('SftDeduper', () => {
  // [name, pairs, indices of pairs that give a row]
  const cases: [string, SftSource[], number[]][] = [
    ['distinct pairs all kept', [pair(), pair({ chosen: act('cat a.py') }), pair({ instance_id: 'o__r-2' })], [0, 1, 2]],
    [
      'same resolved action against two failed runs: one row',
      [pair({ rejected: act('ls') }), pair({ rejected: act('pwd'), chosen_trajectory_id: 'R1' })],
      [0],
    ],
    ['same prompt and completion from another resolved trajectory: one row', [pair(), pair({ chosen_trajectory_id: 'R2' })], [0]],
    ['same prompt and completion in another instance: kept', [pair(), pair({ instance_id: 'o__r-9' })], [0, 1]],
    ['different prompt: kept', [pair(), pair({ prompt: [user, { role: 'assistant', content: 'x', tool_calls: null }] })], [0, 1]],
    [
      'key order inside messages does not matter (stable stringify)',
      [pair(), pair({ prompt: [{ content: 'Fix the bug in a.py', role: 'user' }] })],
      [0],
    ],
    ['single message vs one-message list completion: the same row', [pair(), pair({ chosen: [act('grep -n bug a.py')] })], [0]],
  ];
  it.each(cases)('%s', (_n, pairs, kept) => {
    const d = new SftDeduper();
    const out = pairs.map((p) => d.add(p));
    expect(out.map((r, k) => (r ? k : -1)).filter((k) => k >= 0)).toEqual(kept);
    expect(d.emitted).toBe(kept.length);
    expect(d.duplicates).toBe(pairs.length - kept.length);
  });

  it('sftKey covers exactly instance, prompt and completion', () => {
    const a = toSftRow(pair());
    expect(sftKey(a)).toBe(sftKey({ ...a, trajectory_id: 'other', divergence_turn: 5 } as typeof a));
    expect(sftKey(a)).not.toBe(sftKey({ ...a, completion: [act('x')] }));
    expect(sftKey(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('from mined pairs of the Open-SWE-Traces fixture (CC-BY-4.0 © Nebius)', () => {
    const rows = readFileSync(new URL('../fixtures/sources/open-swe-traces.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown> & { messages: unknown[]; resolved: number; instance_id: string });
    const d = detectSchema(Object.keys(rows[0]!), rows[0]);
    // A second failed run per instance that skips TWO turns at the same message (10 or 16) as the
    // fixture's failed run: both failed runs diverge from the real row at the same index with
    // different actions, so the resolved side repeats (same prompt, same chosen action).
    const skip = { 'PyPSA__linopy-79': 10, 'numpy__numpydoc-101': 16, 'tianocore__edk2-pytool-library-372': 10 } as Record<string, number>;
    const failed2 = rows
      .filter((r) => r.resolved === 1)
      .map((r) => {
        const k = skip[r.instance_id]!;
        return { ...r, trajectory_id: `skip2-${r.instance_id}`, resolved: 0, messages: [...r.messages.slice(0, k), ...r.messages.slice(k + 4)] };
      });
    const { rows: pairs, counters } = mineRows([...rows, ...failed2].map((r) => toStandardRow(r, d.mapping, d.schema)));
    expect(counters.pairs_emitted).toBe(6);
    expect(pairs.map((p) => p.divergence_msg_index)).toEqual([10, 10, 16, 16, 10, 10]);
    const dedup = new SftDeduper();
    const sft = pairs.map((p) => dedup.add(p));
    // per instance: the first pair gives the row, the second is a repeat of (instance, prompt, completion)
    expect(sft.map((r) => r !== null)).toEqual([true, false, true, false, true, false]);
    expect(dedup.duplicates).toBe(3);
    for (const [k, r] of sft.entries()) {
      if (!r) continue;
      expect(r).toEqual(toSftRow(pairs[k]!));
      expect(r.completion).toEqual([pairs[k]!.chosen]);
      expect(pairs[k + 1]!.rejected).not.toEqual(pairs[k]!.rejected);
    }
  });
});
