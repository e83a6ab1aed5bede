// Unit tests for src/contract/sign.ts, written from the mining contract section 3 (comparison keys,
// actionSignature, canon).
//
// Real message shapes and texts below are copied (some contents shortened, marked "excerpt") from
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { describe, expect, it } from 'vitest';
import { normaliseMessage, type NormaliseTally } from '../src/contract/normalise.js';
import {
  actionSignature,
  callSignature,
  canonArguments,
  comparisonKey,
  DEFAULT_REASONING_KEYS,
  keyAndSignature,
} from '../src/contract/sign.js';
import type { Message, ToolCall } from '../src/types.js';

const DEFAULT = new Set(DEFAULT_REASONING_KEYS);
const n = (raw: Record<string, unknown>): Message => {
  const t: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  return normaliseMessage(raw, t);
};
const asst = (m: Message) => m as { content: string | null; tool_calls: ToolCall[] | null };

// --- real upstream values (CC-BY-4.0 © Nebius) -------------------------------------------------

// Row PyPSA__linopy-79, message 26: a `think` call whose only argument is the thought.
const THINK_ARGS = String.raw`{"thought": "Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
const THINK_MSG = {
  content: "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n",
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [{ function: { arguments: THINK_ARGS, name: 'think' }, id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function' }],
};
// Row PyPSA__linopy-79, message 100: str_replace_editor `str_replace` (keys not in sorted order).
const SRE_ARGS = String.raw`{"path": "/workspace/PyPSA__linopy__0.0/test_solve_model.py", "old_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"highs\")\n        print(f\"Solved! Status: {m.status}\")", "new_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"gurobi\")\n        print(f\"Solved! Status: {m.status}\")", "command": "str_replace"}`;
const SRE_CANON = String.raw`{"command":"str_replace","new_str":"    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"gurobi\")\n        print(f\"Solved! Status: {m.status}\")","old_str":"    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"highs\")\n        print(f\"Solved! Status: {m.status}\")","path":"/workspace/PyPSA__linopy__0.0/test_solve_model.py"}`;
const SRE_MSG = {
  content: 'We have Gurobi available. Let me modify the test:\n\n',
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [{ function: { arguments: SRE_ARGS, name: 'str_replace_editor' }, id: 'chatcmpl-tool-9a921c83de064cd0b262ff5239fa7b26', type: 'function' }],
};
// Row tianocore__edk2-pytool-library-372, messages 4, 6, 3 and 0 (excerpt).
const VIEW_MSG = {
  content: '## Phase 2. RUNNING: Setting up and Running Tests\n\n',
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [
    { function: { arguments: '{"command": "view", "path": "/workspace"}', name: 'str_replace_editor' }, id: 'chatcmpl-tool-f500953ffe27402eae698eb36b345195', type: 'function' },
  ],
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
const THINK_TOOL_MSG = {
  content: 'Your thought has been logged.',
  name: 'think',
  role: 'tool',
  tool_call_id: 'chatcmpl-tool-0d1512284081400ea060472062f2e2d4',
  tool_calls: null,
};
const SYSTEM_MSG = {
  content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.',
  name: null,
  role: 'system',
  tool_call_id: null,
  tool_calls: null,
};
// Row numpy__numpydoc-101, message 13 (excerpt): execute_bash output padded with trailing spaces.
const PYTEST_OUTPUT_EXCERPT =
  'numpydoc/tests/test_docscrape.py::test_str PASSED' + ' '.repeat(767) + '\n' +
  '[... Observation truncated due to length ...]\n' +
  '[Command finished with exit code 0]';
const PYTEST_TOOL_MSG = {
  content: PYTEST_OUTPUT_EXCERPT,
  name: 'execute_bash',
  role: 'tool',
  tool_call_id: 'chatcmpl-tool-0e5ce2b0dc2743e9a9df13b80a84155b',
  tool_calls: null,
};

// ------------------------------------------------------------------------------------------------

describe('canonArguments: stable JSON without top-level reasoning keys', () => {
  const cases: { name: string; args: unknown; keys?: string[]; expected: string }[] = [
    { name: 'real think call: only the thought -> {}', args: JSON.parse(THINK_ARGS), expected: '{}' },
    { name: 'real str_replace call: keys sorted, no spaces', args: JSON.parse(SRE_ARGS), expected: SRE_CANON },
    { name: 'real view call', args: JSON.parse('{"command": "view", "path": "/workspace"}'), expected: '{"command":"view","path":"/workspace"}' },
    { name: 'thought, reasoning and think are all removed', args: { think: 't', reasoning: 'r', command: 'ls', thought: 'u' }, expected: '{"command":"ls"}' },
    { name: 'only top-level keys are removed', args: { command: 'ls', meta: { thought: 'x' }, thought: 'y' }, expected: '{"command":"ls","meta":{"thought":"x"}}' },
    { name: 'key match is exact (case-sensitive)', args: { Thought: 'x', thoughts: 'y' }, expected: '{"Thought":"x","thoughts":"y"}' },
    { name: '--reasoning-keys why: thought is kept, why removed', args: { thought: 'u', why: 'w', command: 'ls' }, keys: ['why'], expected: '{"command":"ls","thought":"u"}' },
    { name: 'empty --reasoning-keys keeps everything', args: { thought: 'u', command: 'ls' }, keys: [], expected: '{"command":"ls","thought":"u"}' },
    { name: 'nested objects are sorted too', args: { b: { y: 1, x: [2, { d: 1, c: 0 }] }, a: true }, expected: '{"a":true,"b":{"x":[2,{"c":0,"d":1}],"y":1}}' },
    { name: 'numbers in their shortest form', args: JSON.parse('{"b": 1.0, "a": 25e-1}'), expected: '{"a":2.5,"b":1}' },
    { name: 'unicode escapes become characters', args: JSON.parse('{"text": "caf\\u00e9"}'), expected: '{"text":"café"}' },
    { name: 'a string argument', args: 'pwd', expected: '"pwd"' },
    { name: 'an array argument is not filtered', args: [{ thought: 'x' }], expected: '[{"thought":"x"}]' },
    { name: 'null', args: null, expected: 'null' },
    // Index-like keys: JS objects list them first in numeric order, stable JSON sorts them as strings.
    { name: 'index-like keys sort as strings', args: JSON.parse('{"2": "b", "10": "a", "x": 1}'), expected: '{"10":"a","2":"b","x":1}' },
    { name: 'a key that only looks numeric stays in string order', args: JSON.parse('{"02": 1, "1.5": 2, "-1": 3}'), expected: '{"-1":3,"02":1,"1.5":2}' },
    // Object keys are data (contract v2 9.9): JSON.parse makes "__proto__" an own key, canon keeps it.
    { name: '"__proto__" with an object value is kept', args: JSON.parse('{"command": "pwd", "__proto__": {"shell": "bash"}}'), expected: '{"__proto__":{"shell":"bash"},"command":"pwd"}' },
    { name: '"__proto__" with a string value (flat) is kept', args: JSON.parse('{"__proto__": "x", "command": "pwd"}'), expected: '{"__proto__":"x","command":"pwd"}' },
    { name: '"constructor" and "toString" are ordinary keys', args: JSON.parse('{"toString": 1, "constructor": "login"}'), expected: '{"constructor":"login","toString":1}' },
    { name: 'escapes and lone surrogates as in JSON.stringify', args: JSON.parse('{"q": "a\\"b\\n\\ud800", "b": false}'), expected: '{"b":false,"q":"a\\"b\\n\\ud800"}' },
  ];
  it.each(cases)('$name', ({ args, keys, expected }) => {
    expect(canonArguments(args, keys ? new Set(keys) : DEFAULT)).toBe(expected);
  });
});

describe('callSignature / actionSignature', () => {
  const cases: { name: string; msg: Record<string, unknown>; keys?: string[]; expected: string }[] = [
    { name: 'real think call', msg: THINK_MSG, expected: 'think {}' },
    {
      name: 'real think call, --reasoning-keys without thought',
      msg: THINK_MSG,
      keys: ['reasoning'],
      expected:
        'think ' +
        String.raw`{"thought":"Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`,
    },
    { name: 'real str_replace call', msg: SRE_MSG, expected: 'str_replace_editor ' + SRE_CANON },
    { name: 'real view call', msg: VIEW_MSG, expected: 'str_replace_editor {"command":"view","path":"/workspace"}' },
    { name: 'real execute_bash call', msg: BASH_CALL_MSG, expected: 'execute_bash {"command":"cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}' },
    {
      name: 'several calls joined by newline, in order',
      msg: { role: 'assistant', content: 'x', tool_calls: [...BASH_CALL_MSG.tool_calls, ...VIEW_MSG.tool_calls] },
      expected:
        'execute_bash {"command":"cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}\n' +
        'str_replace_editor {"command":"view","path":"/workspace"}',
    },
    {
      name: 'malformed arguments: name + norm(raw string)',
      msg: { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '  {"command": "ls -la  \r\n' } }] },
      expected: 'execute_bash {"command": "ls -la',
    },
    {
      name: 'malformed arguments: reasoning keys are not removed from the raw string',
      msg: { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"thought": "x", "command": ' } }] },
      expected: 'execute_bash {"thought": "x", "command":',
    },
    { name: 'no calls: "text " + norm(content)', msg: { role: 'assistant', content: '  All done.  \r\nBye\t', tool_calls: null }, expected: 'text All done.\nBye' },
    { name: 'no calls and null content', msg: { role: 'assistant', content: null, tool_calls: null }, expected: 'text ' },
    { name: 'tool_calls "None" is no calls', msg: { role: 'assistant', content: 'Hi', tool_calls: 'None' }, expected: 'text Hi' },
    { name: 'tool_calls [] is no calls', msg: { role: 'assistant', content: 'Hi', tool_calls: [] }, expected: 'text Hi' },
  ];
  it.each(cases)('$name', ({ msg, keys, expected }) => {
    const m = asst(n(msg));
    const ks = keys ? new Set(keys) : DEFAULT;
    expect(actionSignature(m, ks)).toBe(expected);
    if (m.tool_calls && m.tool_calls.length === 1) expect(callSignature(m.tool_calls[0]!, ks)).toBe(expected);
  });
});

describe('comparisonKey per role', () => {
  const cases: { name: string; msg: Record<string, unknown>; key: string; signature: string }[] = [
    { name: 'assistant with a call', msg: VIEW_MSG, key: 'assistant\nstr_replace_editor {"command":"view","path":"/workspace"}', signature: 'str_replace_editor {"command":"view","path":"/workspace"}' },
    { name: 'assistant think call', msg: THINK_MSG, key: 'assistant\nthink {}', signature: 'think {}' },
    { name: 'assistant text', msg: { role: 'assistant', content: 'Done. ', tool_calls: null }, key: 'assistant\ntext Done.', signature: 'text Done.' },
    { name: 'real tool message', msg: THINK_TOOL_MSG, key: 'tool\nthink\nYour thought has been logged.', signature: '' },
    {
      name: 'real tool output with trailing spaces',
      msg: PYTEST_TOOL_MSG,
      key: 'tool\nexecute_bash\nnumpydoc/tests/test_docscrape.py::test_str PASSED\n[... Observation truncated due to length ...]\n[Command finished with exit code 0]',
      signature: '',
    },
    { name: 'real system message', msg: SYSTEM_MSG, key: 'system\nYou are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.', signature: '' },
    { name: 'user message with CRLF', msg: { role: 'user', content: 'Fix it.\r\nThanks  \r\n' }, key: 'user\nFix it.\nThanks', signature: '' },
    { name: 'unknown role', msg: { role: 'developer', content: ' Be brief. ' }, key: 'developer\nBe brief.', signature: '' },
    { name: 'null content', msg: { role: 'user', content: null }, key: 'user\n', signature: '' },
  ];
  it.each(cases)('$name', ({ msg, key, signature }) => {
    const m = n(msg);
    expect(comparisonKey(m, DEFAULT)).toBe(key);
    expect(keyAndSignature(m, DEFAULT)).toStrictEqual({ key, signature });
  });

  const equal: { name: string; a: Record<string, unknown>; b: Record<string, unknown> }[] = [
    { name: 'tool_call_id is ignored', a: THINK_TOOL_MSG, b: { ...THINK_TOOL_MSG, tool_call_id: 'chatcmpl-tool-ffffffffffffffffffffffffffffffff' } },
    { name: 'tool output differing only in trailing spaces', a: PYTEST_TOOL_MSG, b: { ...PYTEST_TOOL_MSG, content: PYTEST_OUTPUT_EXCERPT.replace(/ +\n/g, '\n') } },
    { name: 'narration is not part of the key when there are calls', a: VIEW_MSG, b: { ...VIEW_MSG, content: 'Let me look around first.' } },
    {
      name: 'the thought is not part of the key, nor the call id',
      a: THINK_MSG,
      b: { ...THINK_MSG, tool_calls: [{ function: { arguments: '{"thought": "Something else entirely."}', name: 'think' }, id: 'other-id', type: 'function' }] },
    },
    {
      name: 'argument key order does not matter',
      a: VIEW_MSG,
      b: { ...VIEW_MSG, tool_calls: [{ function: { arguments: '{"path": "/workspace", "command": "view"}', name: 'str_replace_editor' }, id: 'x', type: 'function' }] },
    },
  ];
  it.each(equal)('equal keys: $name', ({ a, b }) => {
    expect(comparisonKey(n(a), DEFAULT)).toBe(comparisonKey(n(b), DEFAULT));
  });

  const different: { name: string; a: Record<string, unknown>; b: Record<string, unknown> }[] = [
    { name: 'same content, different role', a: { role: 'user', content: 'x' }, b: { role: 'system', content: 'x' } },
    { name: 'same output, different tool name', a: THINK_TOOL_MSG, b: { ...THINK_TOOL_MSG, name: 'execute_bash' } },
    { name: 'narration matters when there are no calls', a: { role: 'assistant', content: 'Yes.' }, b: { role: 'assistant', content: 'No.' } },
    {
      name: 'same command, different tool',
      a: BASH_CALL_MSG,
      b: { ...BASH_CALL_MSG, tool_calls: [{ ...BASH_CALL_MSG.tool_calls[0]!, function: { ...BASH_CALL_MSG.tool_calls[0]!.function, name: 'execute_ipython_cell' } }] },
    },
  ];
  it.each(different)('different keys: $name', ({ a, b }) => {
    expect(comparisonKey(n(a), DEFAULT)).not.toBe(comparisonKey(n(b), DEFAULT));
  });
});
