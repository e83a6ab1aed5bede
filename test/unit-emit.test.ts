// Unit tests for src/contract/emit.ts, written from the mining contract section 6 (emitted messages, the
// output row) and section 5 step 4 (the exact-duplicate key).
//
// Real message shapes and texts below are copied from nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct",
// Nebius blog, 2025).
import { describe, expect, it } from 'vitest';
import stableStringify from 'fast-json-stable-stringify';
import { dedupeKey, emitMessage, emitToolCalls, emitToolCallsAsValue, makeRow } from '../src/contract/emit.js';
import { normaliseMessage, type NormaliseTally } from '../src/contract/normalise.js';
import { canonArguments, sharingArgumentsJson } from '../src/contract/sign.js';
import type { Message, ToolCall } from '../src/types.js';

const n = (raw: Record<string, unknown>): Message => {
  const t: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  return normaliseMessage(raw, t);
};

// Row PyPSA__linopy-79, message 26 (think) and 100 (str_replace); row tianocore__edk2-pytool-library-372,
// messages 3 and 6.
const THINK_ARGS = String.raw`{"thought": "Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
const THINK_NARRATION = "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n";
const THINK_MSG = {
  content: THINK_NARRATION,
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [{ function: { arguments: THINK_ARGS, name: 'think' }, id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function' }],
};
const SRE_ARGS = String.raw`{"path": "/workspace/PyPSA__linopy__0.0/test_solve_model.py", "old_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"highs\")\n        print(f\"Solved! Status: {m.status}\")", "new_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"gurobi\")\n        print(f\"Solved! Status: {m.status}\")", "command": "str_replace"}`;
const SRE_MSG = {
  content: 'We have Gurobi available. Let me modify the test:\n\n',
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [{ function: { arguments: SRE_ARGS, name: 'str_replace_editor' }, id: 'chatcmpl-tool-9a921c83de064cd0b262ff5239fa7b26', type: 'function' }],
};
const THINK_TOOL_MSG = {
  content: 'Your thought has been logged.',
  name: 'think',
  role: 'tool',
  tool_call_id: 'chatcmpl-tool-0d1512284081400ea060472062f2e2d4',
  tool_calls: null,
};
const BASH_CALL_MSG = {
  content: '',
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [
    {
      function: { arguments: '{"command": "cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}', name: 'execute_bash' },
      id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a',
      type: 'function',
    },
  ],
};

describe('emitMessage: only the role\'s fields, tool_calls as a JSON string', () => {
  const cases: { name: string; raw: Record<string, unknown>; expected: Record<string, unknown>; keys: string[] }[] = [
    {
      name: 'system',
      raw: { role: 'system', content: 'You are OpenHands agent.', name: null, tool_call_id: null, tool_calls: null },
      expected: { role: 'system', content: 'You are OpenHands agent.' },
      keys: ['role', 'content'],
    },
    {
      name: 'user (content verbatim, CRLF kept)',
      raw: { role: 'user', content: 'Fix it.\r\nThanks  ', name: null, tool_call_id: null, tool_calls: null },
      expected: { role: 'user', content: 'Fix it.\r\nThanks  ' },
      keys: ['role', 'content'],
    },
    {
      name: 'real tool message',
      raw: THINK_TOOL_MSG,
      expected: { role: 'tool', content: 'Your thought has been logged.', name: 'think', tool_call_id: 'chatcmpl-tool-0d1512284081400ea060472062f2e2d4' },
      keys: ['role', 'content', 'name', 'tool_call_id'],
    },
    {
      name: 'real think call: narration and thought verbatim, arguments as an object',
      raw: THINK_MSG,
      expected: {
        role: 'assistant',
        content: THINK_NARRATION,
        tool_calls:
          '[{"id":"chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2","type":"function","function":{"name":"think","arguments":' +
          String.raw`{"thought":"Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}` +
          '}}]',
      },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'real str_replace call: argument keys keep their source order (JSON.stringify, not stable)',
      raw: SRE_MSG,
      expected: {
        role: 'assistant',
        content: 'We have Gurobi available. Let me modify the test:\n\n',
        tool_calls:
          '[{"id":"chatcmpl-tool-9a921c83de064cd0b262ff5239fa7b26","type":"function","function":{"name":"str_replace_editor","arguments":' +
          String.raw`{"path":"/workspace/PyPSA__linopy__0.0/test_solve_model.py","old_str":"    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"highs\")\n        print(f\"Solved! Status: {m.status}\")","new_str":"    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"gurobi\")\n        print(f\"Solved! Status: {m.status}\")","command":"str_replace"}` +
          '}}]',
      },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'real execute_bash call with empty narration',
      raw: BASH_CALL_MSG,
      expected: {
        role: 'assistant',
        content: '',
        tool_calls:
          '[{"id":"chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a","type":"function","function":{"name":"execute_bash","arguments":{"command":"cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}}}]',
      },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'malformed arguments: the raw string',
      raw: { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"command": ' } }] },
      expected: { role: 'assistant', content: null, tool_calls: String.raw`[{"id":"a","type":"function","function":{"name":"execute_bash","arguments":"{\"command\": "}}]` },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'two calls, non-ASCII kept as characters',
      raw: {
        role: 'assistant',
        content: '✅ done',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "echo caf\\u00e9"}' } },
          { id: 'b', type: 'function', function: { name: 'finish', arguments: '{"message": "ok"}' } },
        ],
      },
      expected: {
        role: 'assistant',
        content: '✅ done',
        tool_calls:
          '[{"id":"a","type":"function","function":{"name":"execute_bash","arguments":{"command":"echo café"}}},' +
          '{"id":"b","type":"function","function":{"name":"finish","arguments":{"message":"ok"}}}]',
      },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'assistant without calls: tool_calls null',
      raw: { role: 'assistant', content: 'All done.', tool_calls: 'None' },
      expected: { role: 'assistant', content: 'All done.', tool_calls: null },
      keys: ['role', 'content', 'tool_calls'],
    },
    {
      name: 'unknown role: role, content',
      raw: { role: 'developer', content: 'Be brief.', name: 'x', tool_call_id: 'y', tool_calls: null },
      expected: { role: 'developer', content: 'Be brief.' },
      keys: ['role', 'content'],
    },
  ];
  it.each(cases)('$name', ({ raw, expected, keys }) => {
    const e = emitMessage(n(raw));
    expect(e).toStrictEqual(expected);
    expect(Object.keys(e)).toStrictEqual(keys);
  });

  it('the tool_calls string parses back to calls whose arguments are objects', () => {
    const e = emitMessage(n(THINK_MSG));
    const calls = JSON.parse(e.tool_calls!) as { function: { arguments: unknown } }[];
    expect(typeof calls[0]!.function.arguments).toBe('object');
    expect(Object.keys(calls[0]!.function.arguments as object)).toStrictEqual(['thought']);
  });

  it('emitToolCalls: null, undefined and [] -> null', () => {
    expect(emitToolCalls(null)).toBeNull();
    expect(emitToolCalls(undefined)).toBeNull();
    expect(emitToolCalls([])).toBeNull();
  });
});

describe('makeRow: output field order (section 6)', () => {
  it('prompt, chosen, rejected, instance_id, repo, ids, turn, index, similarity', () => {
    const row = makeRow([{ role: 'user', content: 'u' }], { role: 'assistant', content: 'a', tool_calls: null }, { role: 'assistant', content: 'b', tool_calls: null }, {
      action_similarity: 0.5,
      divergence_msg_index: 2,
      divergence_turn: 0,
      rejected_trajectory_id: 'F',
      chosen_trajectory_id: 'R',
      repo: 'PyPSA/linopy',
      instance_id: 'PyPSA__linopy-79',
    });
    expect(JSON.stringify(row)).toBe(
      '{"prompt":[{"role":"user","content":"u"}],"chosen":{"role":"assistant","content":"a","tool_calls":null},' +
        '"rejected":{"role":"assistant","content":"b","tool_calls":null},"instance_id":"PyPSA__linopy-79","repo":"PyPSA/linopy",' +
        '"chosen_trajectory_id":"R","rejected_trajectory_id":"F","divergence_turn":0,"divergence_msg_index":2,"action_similarity":0.5}',
    );
  });
});

describe('dedupeKey: fast-json-stable-stringify({prompt, chosen, rejected})', () => {
  const prompt = [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'Fix it.' },
  ];
  const chosen = { role: 'assistant', content: '', tool_calls: '[{"id":"a"}]' };
  const rejected = { role: 'assistant', content: 'Hmm', tool_calls: null };
  const meta = (o: object) => ({
    instance_id: 'I',
    repo: null,
    chosen_trajectory_id: 'R',
    rejected_trajectory_id: 'F',
    divergence_turn: 0,
    divergence_msg_index: 2,
    action_similarity: 0.1,
    ...o,
  });

  it('literal key: sorted keys at every level, tool_calls as an escaped string', () => {
    expect(dedupeKey({ prompt, chosen, rejected })).toBe(
      String.raw`{"chosen":{"content":"","role":"assistant","tool_calls":"[{\"id\":\"a\"}]"},` +
        String.raw`"prompt":[{"content":"S","role":"system"},{"content":"Fix it.","role":"user"}],` +
        String.raw`"rejected":{"content":"Hmm","role":"assistant","tool_calls":null}}`,
    );
  });

  const same: [string, object][] = [
    ['other trajectory ids', { chosen_trajectory_id: 'R2', rejected_trajectory_id: 'F2' }],
    ['other similarity, turn and index', { action_similarity: 0.9, divergence_turn: 3, divergence_msg_index: 7 }],
    ['other instance and repo', { instance_id: 'J', repo: 'o/r' }],
  ];
  it.each(same)('ignores %s', (_name, o) => {
    const a = makeRow(prompt, chosen, rejected, meta({}));
    const b = makeRow(prompt, chosen, rejected, meta(o));
    expect(dedupeKey(b)).toBe(dedupeKey(a));
  });

  const different: [string, object][] = [
    ['null vs empty content', { chosen: { ...chosen, content: null } }],
    ['a trailing space in the prompt', { prompt: [prompt[0], { role: 'user', content: 'Fix it. ' }] }],
    ['a shorter prompt', { prompt: [prompt[0]] }],
    ['swapped chosen and rejected', { chosen: rejected, rejected: chosen }],
  ];
  it.each(different)('distinguishes %s', (_name, o) => {
    expect(dedupeKey({ prompt, chosen, rejected, ...o } as Parameters<typeof dedupeKey>[0])).not.toBe(dedupeKey({ prompt, chosen, rejected }));
  });
});

// emitToolCalls and canonArguments write flat arguments from per-value JSON (sign.ts flatArgumentsJson),
// shared between the two inside sharingArgumentsJson: the text must be what the definitions give,
// JSON.stringify of the emitted fields and stable JSON of the kept arguments.
describe('tool calls and signatures written from per-value JSON equal their definitions', () => {
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const KEYS = ['command', 'path', 'old_str', 'new_str', 'thought', 'b', 'a', '__proto__', '0', '10', '01', '-1', 'café', '\ud83d\udd27', 'x\ud800', 'toJSON', ''];
  const leaf = (): unknown =>
    pick<() => unknown>([
      () => 'ls -la\n"quoted" \\ back\u2028\u0000',
      () => 'a'.repeat(Math.floor(rnd() * 50)),
      () => '\ud800 lone',
      () => pick([0, -0, 1.5, 1e21, -3, 2 ** 53 + 2]),
      () => pick([true, false, null]),
      () => undefined,
      () => [1, 'x'],
      () => ({ nested: { z: 1, a: 2 } }),
    ])();
  const args = (): unknown => {
    const kind = rnd();
    if (kind < 0.1) return pick(['{"command": "ls', null, 3, [1, 2], 'plain']);
    // JSON.parse gives own __proto__ keys; a literal would set the prototype.
    const o = JSON.parse('{}') as Record<string, unknown>;
    for (let n = Math.floor(rnd() * 5); n > 0; n--) {
      const k = pick(KEYS);
      const v = rnd() < 0.7 ? pick(['ls', 'x'.repeat(20), 7, null, true]) : leaf();
      Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return o;
  };
  const call = (): ToolCall => ({ id: pick(['c1', null, 'chatcmpl-tool-\u00e9']), type: pick(['function', null]), function: { name: pick(['execute_bash', null, 'str_replace_editor']), arguments: args() } });
  const reasoning = new Set(['thought', 'reasoning', 'think']);
  /** stable JSON of the arguments without the reasoning keys (contract 3.2), by definition. */
  const canonByDefinition = (a: unknown): string => {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) return stableStringify(a) ?? 'null';
    const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(a).filter((k) => !reasoning.has(k)).sort()) kept[k] = (a as Record<string, unknown>)[k];
    return stableStringify(kept);
  };
  it.each([false, true])('2,000 random calls (shared: %s)', (shared) => {
    for (let k = 0; k < 2000; k++) {
      const calls = Array.from({ length: 1 + Math.floor(rnd() * 3) }, call);
      const run = () => [emitToolCalls(calls), ...calls.map((c) => canonArguments(c.function.arguments, reasoning))];
      const got = shared ? sharingArgumentsJson(run) : run();
      expect(got[0]).toBe(emitToolCallsAsValue(calls));
      calls.forEach((c, i) => expect(got[i + 1]).toBe(canonByDefinition(c.function.arguments)));
    }
  });
  it('outside sharingArgumentsJson, a changed object is written as it is now', () => {
    const a = { command: 'ls' } as Record<string, unknown>;
    const calls: ToolCall[] = [{ id: 'c', type: 'function', function: { name: 'execute_bash', arguments: a } }];
    expect(canonArguments(a, reasoning)).toBe('{"command":"ls"}');
    a.command = 'pwd';
    expect(canonArguments(a, reasoning)).toBe('{"command":"pwd"}');
    expect(emitToolCalls(calls)).toBe('[{"id":"c","type":"function","function":{"name":"execute_bash","arguments":{"command":"pwd"}}}]');
  });
});
