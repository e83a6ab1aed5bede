// Unit tests for src/contract/normalise.ts, written from the mining contract (sections 2 and 3, `norm`).
//
// Real message shapes and texts below are copied (some contents shortened, marked "excerpt") from
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { describe, expect, it } from 'vitest';
import { BadValue, norm, normKeepsUtf8, normaliseMessage, normaliseToolCall, type NormaliseTally } from '../src/contract/normalise.js';

const tally = (): NormaliseTally => ({ malformed_arguments: 0, unknown_roles: 0 });

// --- real upstream values (CC-BY-4.0 © Nebius) -------------------------------------------------

// Row PyPSA__linopy-79, message 15: str_replace_editor `cat -n` output; the empty file lines end in a tab.
const CAT_OUTPUT =
  "Here's the result of running `cat -n` on /workspace/PyPSA__linopy__0.0/pyproject.toml:\n" +
  '     1\t[build-system]\n' +
  '     2\trequires = ["setuptools>=45", "wheel", "setuptools_scm>=6.2"]\n' +
  '     3\t\n' +
  '     4\t[tool.setuptools_scm]\n' +
  '     5\twrite_to = "linopy/version.py"\n' +
  '     6\t\n';

// Row numpy__numpydoc-101, message 13: execute_bash pytest output (excerpt: its line 19, padded with
// 767 trailing spaces, the truncation marker, and the last lines of the output).
const PYTEST_OUTPUT_EXCERPT =
  'numpydoc/tests/test_docscrape.py::test_str PASSED' + ' '.repeat(767) + '\n' +
  '[... Observation truncated due to length ...]\n' +
  '[The command completed with exit code 0.]\n' +
  '[Current working directory: /workspace/numpy__numpydoc__0.7]\n' +
  '[Python interpreter: /opt/conda/envs/testbed/bin/python]\n' +
  '[Command finished with exit code 0]';

// Row tianocore__edk2-pytool-library-372, message 1 (excerpt): the issue text mixes LF and CRLF.
const USER_CRLF_EXCERPT =
  '### Describe the Bug\n\nGetEdk2RelativePathFromAbsolutePath() is currently defined as follows:\r\n\r\n' +
  '```python\r\n        """Given an absolute path return a edk2 path relative to workspace or packagespath.\r\n\r\n' +
  '        Note: absolute path must be in the OS specific path form\r\n';

// Row PyPSA__linopy-79, message 26: a `think` call (arguments still a JSON string, as upstream stores it).
const THINK_ARGS = String.raw`{"thought": "Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
const THOUGHT =
  'Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n' +
  '1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n' +
  '4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\n' +
  "Let me start by looking at the variables.py file since that's where the Variable class should be defined.";
const THINK_MSG = {
  content: "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n",
  name: null,
  role: 'assistant',
  tool_call_id: null,
  tool_calls: [{ function: { arguments: THINK_ARGS, name: 'think' }, id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function' }],
};

// Row PyPSA__linopy-79, message 100: a str_replace_editor `str_replace` call (keys in upstream order).
const SRE_ARGS = String.raw`{"path": "/workspace/PyPSA__linopy__0.0/test_solve_model.py", "old_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"highs\")\n        print(f\"Solved! Status: {m.status}\")", "new_str": "    # Try to solve\n    print(\"Attempting to solve...\")\n    try:\n        solution = m.solve(solver_name=\"gurobi\")\n        print(f\"Solved! Status: {m.status}\")", "command": "str_replace"}`;
const SRE_CALL = { function: { arguments: SRE_ARGS, name: 'str_replace_editor' }, id: 'chatcmpl-tool-9a921c83de064cd0b262ff5239fa7b26', type: 'function' };

// Row tianocore__edk2-pytool-library-372, messages 0 (excerpt), 3, 6 and 7.
const SYSTEM_MSG = {
  content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.',
  name: null,
  role: 'system',
  tool_call_id: null,
  tool_calls: null,
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
const BASH_OUTPUT_MSG = {
  content:
    '/workspace/tianocore__edk2-pytool-library__0.15\n[The command completed with exit code 0.]\n' +
    '[Current working directory: /workspace/tianocore__edk2-pytool-library__0.15]\n' +
    '[Python interpreter: /opt/conda/envs/testbed/bin/python]\n[Command finished with exit code 0]',
  name: 'execute_bash',
  role: 'tool',
  tool_call_id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a',
  tool_calls: null,
};

// ------------------------------------------------------------------------------------------------

describe('norm (contract section 3)', () => {
  const cases: [string, string | null | undefined, string][] = [
    ['null -> empty string', null, ''],
    ['undefined -> empty string', undefined, ''],
    ['empty string', '', ''],
    ['CRLF -> LF', 'a\r\nb', 'a\nb'],
    ['trailing spaces and tabs on every line', 'a  \nb\t\nc \t ', 'a\nb\nc'],
    ['trailing blanks before a CRLF', 'a \t\r\nb', 'a\nb'],
    ['leading spaces of inner lines are kept', 'def f():\n    return 1   \n', 'def f():\n    return 1'],
    ['leading and trailing whitespace of the whole string', '\n\n  x y  \n\n', 'x y'],
    ['blank lines inside are kept (emptied)', 'a\n   \n\t\nb', 'a\n\n\nb'],
    ['inner runs of spaces are kept', 'a    b', 'a    b'],
    ['no-break space at a line end is not a space or tab', 'a\u00a0\nb', 'a\u00a0\nb'],
    ['only whitespace', ' \t\r\n \n', ''],
    [
      'real str_replace_editor cat -n output: line-number tabs of empty lines',
      CAT_OUTPUT,
      "Here's the result of running `cat -n` on /workspace/PyPSA__linopy__0.0/pyproject.toml:\n" +
        '     1\t[build-system]\n' +
        '     2\trequires = ["setuptools>=45", "wheel", "setuptools_scm>=6.2"]\n' +
        '     3\n' +
        '     4\t[tool.setuptools_scm]\n' +
        '     5\twrite_to = "linopy/version.py"\n' +
        '     6',
    ],
    [
      'real execute_bash pytest output padded with trailing spaces',
      PYTEST_OUTPUT_EXCERPT,
      'numpydoc/tests/test_docscrape.py::test_str PASSED\n' +
        '[... Observation truncated due to length ...]\n' +
        '[The command completed with exit code 0.]\n' +
        '[Current working directory: /workspace/numpy__numpydoc__0.7]\n' +
        '[Python interpreter: /opt/conda/envs/testbed/bin/python]\n' +
        '[Command finished with exit code 0]',
    ],
    [
      'real user issue text with CRLF line ends',
      USER_CRLF_EXCERPT,
      '### Describe the Bug\n\nGetEdk2RelativePathFromAbsolutePath() is currently defined as follows:\n\n' +
        '```python\n        """Given an absolute path return a edk2 path relative to workspace or packagespath.\n\n' +
        '        Note: absolute path must be in the OS specific path form',
    ],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(norm(input)).toBe(expected);
  });

  it('is idempotent on every case above', () => {
    for (const [, input] of cases) expect(norm(norm(input))).toBe(norm(input));
  });
});

describe('normaliseToolCall (contract section 2)', () => {
  const cases: { name: string; input: unknown; expected: unknown; malformed: number }[] = [
    {
      name: 'real think call: arguments JSON-parsed',
      input: THINK_MSG.tool_calls[0],
      expected: { id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function', function: { name: 'think', arguments: { thought: THOUGHT } } },
      malformed: 0,
    },
    {
      name: 'real str_replace_editor call: arguments JSON-parsed (key order as in the source)',
      input: SRE_CALL,
      expected: {
        id: 'chatcmpl-tool-9a921c83de064cd0b262ff5239fa7b26',
        type: 'function',
        function: {
          name: 'str_replace_editor',
          arguments: {
            path: '/workspace/PyPSA__linopy__0.0/test_solve_model.py',
            old_str: '    # Try to solve\n    print("Attempting to solve...")\n    try:\n        solution = m.solve(solver_name="highs")\n        print(f"Solved! Status: {m.status}")',
            new_str: '    # Try to solve\n    print("Attempting to solve...")\n    try:\n        solution = m.solve(solver_name="gurobi")\n        print(f"Solved! Status: {m.status}")',
            command: 'str_replace',
          },
        },
      },
      malformed: 0,
    },
    {
      name: 'truncated arguments JSON: raw string kept, counted',
      input: { id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls -la' } },
      expected: { id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "ls -la' }, malformed: true },
      malformed: 1,
    },
    {
      name: 'empty arguments string does not parse: raw kept, counted',
      input: { id: 'c2', type: 'function', function: { name: 'finish', arguments: '' } },
      expected: { id: 'c2', type: 'function', function: { name: 'finish', arguments: '' }, malformed: true },
      malformed: 1,
    },
    {
      name: 'arguments nested 1000 deep parse; brackets inside strings do not count',
      input: { id: 'c6', type: 'function', function: { name: 'x', arguments: '{"a":"[[[[\\"[[[[",' + '"b":' + '['.repeat(999) + ']'.repeat(999) + '}' } },
      expected: { id: 'c6', type: 'function', function: { name: 'x', arguments: JSON.parse('{"a":"[[[[\\"[[[[",' + '"b":' + '['.repeat(999) + ']'.repeat(999) + '}') } },
      malformed: 0,
    },
    {
      name: 'arguments already an object (JSONL export) are kept as they are',
      input: { id: 'c3', type: 'function', function: { name: 'execute_bash', arguments: { command: 'pwd' } } },
      expected: { id: 'c3', type: 'function', function: { name: 'execute_bash', arguments: { command: 'pwd' } } },
      malformed: 0,
    },
    {
      name: 'a JSON string that parses to a non-object is parsed, not malformed',
      input: { id: 'c4', type: 'function', function: { name: 'execute_bash', arguments: '"pwd"' } },
      expected: { id: 'c4', type: 'function', function: { name: 'execute_bash', arguments: 'pwd' } },
      malformed: 0,
    },
    {
      name: 'absent id / type / arguments become null',
      input: { function: { name: 'finish' } },
      expected: { id: null, type: null, function: { name: 'finish', arguments: null } },
      malformed: 0,
    },
  ];
  it.each(cases)('$name', ({ input, expected, malformed }) => {
    const t = tally();
    expect(normaliseToolCall(input, t)).toStrictEqual(expected);
    expect(t).toStrictEqual({ malformed_arguments: malformed, unknown_roles: 0 });
  });

  it('rejects a call that is not an object', () => {
    expect(() => normaliseToolCall('execute_bash', tally())).toThrow(BadValue);
    expect(() => normaliseToolCall(null, tally())).toThrow(BadValue);
    // Nested past the documented depth limit: a bad value (exit 7), not a malformed count.
    const deep = '['.repeat(1001) + ']'.repeat(1001);
    expect(() => normaliseToolCall({ id: 'c5', type: 'function', function: { name: 'x', arguments: deep } }, tally())).toThrow(
      'tool_calls[].function.arguments: JSON nested deeper than 1000 levels (the limit)',
    );
    // tool_calls given as JSON text: the depth error keeps its own message (not "neither None nor a list").
    expect(() => normaliseMessage({ role: 'assistant', content: '', tool_calls: deep }, tally())).toThrow('tool_calls: JSON nested deeper than 1000 levels (the limit)');
  });
});

describe('normaliseMessage: fields kept per role (contract section 2)', () => {
  const cases: { name: string; input: Record<string, unknown>; expected: unknown; tally?: NormaliseTally }[] = [
    {
      name: 'real system message keeps role, content',
      input: SYSTEM_MSG,
      expected: { role: 'system', content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.' },
    },
    {
      name: 'user message keeps role, content (content verbatim, not normed)',
      input: { content: USER_CRLF_EXCERPT, name: null, role: 'user', tool_call_id: null, tool_calls: null },
      expected: { role: 'user', content: USER_CRLF_EXCERPT },
    },
    {
      name: 'real tool message keeps role, content, name, tool_call_id',
      input: THINK_TOOL_MSG,
      expected: { role: 'tool', content: 'Your thought has been logged.', name: 'think', tool_call_id: 'chatcmpl-tool-0d1512284081400ea060472062f2e2d4' },
    },
    {
      name: 'real tool output keeps its trailing spaces (verbatim)',
      input: { ...BASH_OUTPUT_MSG, content: PYTEST_OUTPUT_EXCERPT },
      expected: { role: 'tool', content: PYTEST_OUTPUT_EXCERPT, name: 'execute_bash', tool_call_id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a' },
    },
    {
      name: 'real assistant call keeps role, content, tool_calls (narration and thought verbatim)',
      input: THINK_MSG,
      expected: {
        role: 'assistant',
        content: "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n",
        tool_calls: [{ id: 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2', type: 'function', function: { name: 'think', arguments: { thought: THOUGHT } } }],
      },
    },
    {
      name: 'real assistant call with empty narration',
      input: BASH_CALL_MSG,
      expected: {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a',
            type: 'function',
            function: { name: 'execute_bash', arguments: { command: 'cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd' } },
          },
        ],
      },
    },
    {
      name: 'assistant tool_calls null -> null',
      input: { role: 'assistant', content: 'Done.', tool_calls: null },
      expected: { role: 'assistant', content: 'Done.', tool_calls: null },
    },
    {
      name: 'assistant tool_calls "None" -> null',
      input: { role: 'assistant', content: 'Done.', tool_calls: 'None' },
      expected: { role: 'assistant', content: 'Done.', tool_calls: null },
    },
    {
      name: 'assistant tool_calls [] -> null',
      input: { role: 'assistant', content: 'Done.', tool_calls: [] },
      expected: { role: 'assistant', content: 'Done.', tool_calls: null },
    },
    {
      name: 'assistant without a tool_calls field -> null',
      input: { role: 'assistant', content: 'Done.' },
      expected: { role: 'assistant', content: 'Done.', tool_calls: null },
    },
    {
      name: 'assistant: two malformed calls are counted per call',
      input: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"command": ' } },
          { id: 'b', type: 'function', function: { name: 'str_replace_editor', arguments: '{"command": "view"' } },
          { id: 'c', type: 'function', function: { name: 'execute_bash', arguments: '{"command": "pwd"}' } },
        ],
      },
      expected: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'execute_bash', arguments: '{"command": ' }, malformed: true },
          { id: 'b', type: 'function', function: { name: 'str_replace_editor', arguments: '{"command": "view"' }, malformed: true },
          { id: 'c', type: 'function', function: { name: 'execute_bash', arguments: { command: 'pwd' } } },
        ],
      },
      tally: { malformed_arguments: 2, unknown_roles: 0 },
    },
    {
      name: 'system message: tool_calls is not kept, so its bad arguments are not counted',
      input: { role: 'system', content: 's', tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{' } }] },
      expected: { role: 'system', content: 's' },
    },
    {
      name: 'unknown role keeps role, content and is counted',
      input: { role: 'developer', content: 'Be brief.', name: 'n', tool_call_id: 't', tool_calls: null },
      expected: { role: 'developer', content: 'Be brief.' },
      tally: { malformed_arguments: 0, unknown_roles: 1 },
    },
    {
      name: 'unknown role "function" (older OpenAI shape) keeps role, content and is counted',
      input: { role: 'function', content: '42', name: 'calc' },
      expected: { role: 'function', content: '42' },
      tally: { malformed_arguments: 0, unknown_roles: 1 },
    },
    {
      name: 'null content stays null',
      input: { role: 'tool', content: null, name: null, tool_call_id: null },
      expected: { role: 'tool', content: null, name: null, tool_call_id: null },
    },
  ];
  it.each(cases)('$name', ({ input, expected, tally: want }) => {
    const t = tally();
    expect(normaliseMessage(input, t)).toStrictEqual(expected);
    expect(t).toStrictEqual(want ?? { malformed_arguments: 0, unknown_roles: 0 });
  });

  const bad: [string, unknown][] = [
    ['a message that is not an object', 'hello'],
    ['a missing role', { content: 'x' }],
    ['an empty role', { role: '', content: 'x' }],
    ['a non-string content', { role: 'user', content: 5 }],
    ['tool_calls that is an object', { role: 'assistant', content: '', tool_calls: { id: 'x' } }],
  ];
  it.each(bad)('rejects %s with BadValue', (_name, input) => {
    expect(() => normaliseMessage(input as Record<string, unknown>, tally())).toThrow(BadValue);
  });
});

// Contract v2 (sections 3 and 9.5): "\n" is the only line end. A v1 implementation that stripped blanks
// before every JavaScript line terminator (lone "\r", U+2028, U+2029, as `/[ \t]+$/gm` does) fails
// every row below that keeps a blank before one of them.
describe('norm: "\\n" is the only line end (contract v2)', () => {
  const cases: [string, string, string][] = [
    ['a lone CR (progress-bar output) is an ordinary character', '50% \r100% ', '50% \r100%'],
    ['blanks before a lone CR inside a line are kept', 'a \t\rb\nc', 'a \t\rb\nc'],
    ['a lone CR before blanks and "\\n": only the blanks after it go', 'a \r \nb', 'a \r\nb'],
    ['CRLF is one line end, blanks before it go', 'a \t\r\nb', 'a\nb'],
    ['U+2028 is an ordinary character', 'a \u2028b', 'a \u2028b'],
    ['U+2029 is an ordinary character', 'a\t\u2029b', 'a\t\u2029b'],
    ['blanks before "\\n" go even after a lone CR', 'x\r  \ny', 'x\r\ny'],
    ['trim() still removes U+2028 and a lone CR at the ends of the whole string', '\u2028 a \r', 'a'],
    ['no-break space is not a blank at a line end', 'a\u00a0 \nb', 'a\u00a0\nb'],
    ['a lone surrogate is kept as is', 'a\ud800 \nb', 'a\ud800\nb'],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(norm(input)).toBe(expected);
  });
});

// The walk hashes a key from the record's bytes when normKeepsUtf8 says norm is a no-op on them.
describe('normKeepsUtf8: true only where norm leaves the text unchanged', () => {
  const cases: [string, string, boolean][] = [
    ['empty', '', true],
    ['one word', 'ok', true],
    ['real tool output', 'Your thought has been logged.', true],
    ['lines without trailing blanks', 'a\nb\n\nc', true],
    ['non-ASCII inside', 'caf\u00e9 \u2705 done', true],
    ['CRLF', 'a\r\nb', false],
    ['a lone CR is kept by norm', 'a\rb', true],
    ['space before LF', 'a \nb', false],
    ['tab before LF', 'a\t\nb', false],
    ['leading space', ' a', false],
    ['trailing LF', 'a\n', false],
    ['leading tab', '\ta', false],
    ['trailing NBSP', 'a\u00a0', false],
    ['leading U+2028', '\u2028a', false],
    ['leading BOM', '\ufeffa', false],
    ['emoji at the end (not white space, but not ASCII)', 'done \ud83d\udd27', false],
    ['pytest padding', 'test_str PASSED' + ' '.repeat(767) + '\n[Command finished]', false],
  ];
  it.each(cases)('%s', (_name, text, keeps) => {
    expect(normKeepsUtf8(Buffer.from(text, 'utf8'))).toBe(keeps);
    if (keeps) expect(norm(text)).toBe(text);
  });
  it('never says "unchanged" for a text norm changes (random texts over white space and letters)', () => {
    const alphabet = ['a', 'Z', ' ', '\t', '\r', '\n', '\u00a0', '\u2028', '\ufeff', '\u00e9', '\ud83d\udd27', '\u3000', '\x0b', '\x00'];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    let kept = 0;
    for (let k = 0; k < 20_000; k++) {
      let t = '';
      for (let n = Math.floor(rnd() * 8); n > 0; n--) t += alphabet[Math.floor(rnd() * alphabet.length)];
      if (normKeepsUtf8(Buffer.from(t, 'utf8'))) {
        kept++;
        expect(norm(t)).toBe(t);
      }
    }
    expect(kept).toBeGreaterThan(1000);
  });
});

describe('norm: cost', () => {
  // A blank run that is NOT at a line end must not make norm quadratic (real pytest -v outputs pad
  // lines with ~900 spaces). With the old `/[ \t]+$/gm`, 1,000,000 blanks take minutes and this
  // test hits vitest's timeout; linear, it is instant. Not a benchmark: a hang guard.
  it('handles a 1,000,000-blank run before text', () => {
    const s = ' '.repeat(1_000_000) + 'x \t\n' + ' '.repeat(1_000_000) + 'y';
    expect(norm(s)).toBe('x\n' + ' '.repeat(1_000_000) + 'y');
  });
});
