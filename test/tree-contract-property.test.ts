// Property: with two attempts per instance and --min-value-gap 1.0, the tree pairing emits exactly
// what the contract's walk emits (docs/tree-pairing.md "Relation to the contract's walk"): the same
// rows, in the same order, and the same outcome counts, because a tree of two attempts has at most
// one branch point, and its two children are the resolved and the failed attempt (values 1 and 0).
// Instances are generated from a seeded PRNG in the message shapes of
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0 © Nebius): system + user prompt, then
// assistant tool calls and tool results; the second attempt forks the first at a random message
// in one of the ways real pairs differ (another action, another output, the same action narrated
// differently, a near-identical command, a shorter run, a clone).
import { describe, expect, it } from 'vitest';
import { mineRows, type InputRow } from '../src/engine/mine-rows.js';
import { DEFAULT_TREE_OPTIONS, TREE_FIELD_NAMES } from '../src/pairing/tree.js';
import { mulberry32 as prng } from './support/prng.mjs';


const COMMANDS = ['ls -la /workspace', 'cat setup.py', 'python -m pytest tests/unit -q', 'grep -rn "def parse" src', 'git status', 'git diff'];

function call(id: string, command: string, thought?: string) {
  return [{ id, type: 'function', function: { name: 'execute_bash', arguments: JSON.stringify({ command, ...(thought ? { thought } : {}) }) } }];
}

function trajectory(rnd: () => number, tag: string, turns: number): Record<string, unknown>[] {
  const msgs: Record<string, unknown>[] = [
    { role: 'system', content: 'You are OpenHands agent, a helpful AI assistant.' },
    { role: 'user', content: `<uploaded_files>\n/workspace/${tag}\n</uploaded_files>\nFix the issue.` },
  ];
  for (let k = 0; k < turns; k++) {
    const id = `call-${tag}-${k}`;
    const cmd = COMMANDS[Math.floor(rnd() * COMMANDS.length)]!;
    msgs.push({ role: 'assistant', content: 'Let me look.', tool_calls: call(id, cmd) });
    msgs.push({ role: 'tool', content: `output of ${cmd} #${Math.floor(rnd() * 3)}`, name: 'execute_bash', tool_call_id: id });
  }
  return msgs;
}

/** The second attempt: a copy of `base` forked at a random message. */
function fork(rnd: () => number, base: Record<string, unknown>[]): Record<string, unknown>[] {
  const out = base.map((m) => ({ ...m }));
  const i = Math.floor(rnd() * out.length);
  const m = out[i]!;
  const kind = Math.floor(rnd() * 7);
  switch (kind) {
    case 0: // another action (or another prompt text at 0/1)
      if (m.role === 'assistant') m.tool_calls = call('x', `echo ${Math.floor(rnd() * 1e6)} && make test`);
      else m.content = `${String(m.content)} (changed)`;
      break;
    case 1: // another tool output / environment
      if (m.role === 'tool') m.content = 'Traceback (most recent call last): ...';
      else if (m.role === 'assistant') out.splice(i, 1, { role: 'user', content: 'Please continue.' });
      break;
    case 2: // the same action, narrated differently, new call id, reasoning key: equal keys
      if (m.role === 'assistant') {
        const cmd = JSON.parse((m.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments).command as string;
        Object.assign(m, { content: 'Now this.', tool_calls: call('y', cmd, 'why not') });
      }
      break;
    case 3: // a near-identical command: one more character (similarity >= 0.95, contract §5.3)
      if (m.role === 'assistant') {
        const cmd = JSON.parse((m.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments).command as string;
        m.tool_calls = call('z', `${cmd}.`);
      }
      break;
    case 4: // a shorter run: a prefix of the first
      out.length = i;
      break;
    case 5: // a longer run: the first plus one more action
      out.push({ role: 'assistant', content: '', tool_calls: call('w', 'git diff') });
      break;
    default: // a clone
      break;
  }
  return out;
}

function instances(seed: number, count: number): InputRow[] {
  const rnd = prng(seed);
  const rows: InputRow[] = [];
  for (let n = 0; n < count; n++) {
    const inst = `repo__pkg-${n}`;
    const base = trajectory(rnd, inst, 1 + Math.floor(rnd() * 4));
    const labels = [rnd() < 0.75 ? 1 : 0, rnd() < 0.35 ? 1 : 0];
    rows.push({ trajectory_id: `${inst}-a`, instance_id: inst, repo: 'repo/pkg', resolved: labels[0], trajectory: base });
    rows.push({ trajectory_id: `${inst}-b`, instance_id: inst, repo: 'repo/pkg', resolved: labels[1], trajectory: fork(rnd, base) });
  }
  return rows;
}

describe('tree pairing with two attempts per instance and gap 1.0 = the contract walk', () => {
  it.each([1, 2, 3, 4])('seed %i: 150 instances', (seed) => {
    const rows = instances(seed, 150);
    const contract = mineRows(rows);
    const tree = mineRows(rows, {}, '<rows>', 'contract', { tree: { ...DEFAULT_TREE_OPTIONS, minValueGap: 1, minSimilaritySkip: 0.95, maxPairsPerInstance: 4 } });
    const plain = tree.rows.map((r) => {
      const o: Record<string, unknown> = { ...r };
      for (const f of TREE_FIELD_NAMES) delete o[f];
      return o;
    });
    expect(plain).toEqual(contract.rows);
    expect(JSON.stringify(plain)).toBe(JSON.stringify(contract.rows)); // field order too
    for (const r of tree.rows as unknown as Record<string, number>[]) {
      expect([r.chosen_value, r.rejected_value, r.chosen_support, r.rejected_support, r.branch_depth]).toEqual([1, 0, 1, 1, 0]);
    }
    const c = contract.counters;
    const t = tree.tree!.counters;
    expect({ env: t.environment_divergence, near: t.near_duplicate, dup: t.exact_duplicate, emitted: t.pairs_emitted, turn0: t.divergence_turn_0 }).toEqual({
      env: c.environment_divergence,
      near: c.near_duplicate,
      dup: c.exact_duplicate,
      emitted: c.pairs_emitted,
      turn0: c.divergence_turn_0,
    });
    // Every walked pair of the contract is one child pair of the tree unless it ended without a divergence.
    expect(t.child_pairs - t.small_value_gap).toBe(c.pairs_walked - c.no_divergence);
    // The generator reaches every outcome the two can share.
    expect(Math.min(c.pairs_emitted, c.environment_divergence, c.near_duplicate, c.no_divergence)).toBeGreaterThan(0);
  });
});
