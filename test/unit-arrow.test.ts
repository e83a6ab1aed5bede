// Unit tests for src/io/arrow-values.ts: makeGetter turns Arrow column data into plain JS values.
// Vectors are built with apache-arrow's vectorFromArray; the trajectory vector has the upstream
// nested message schema, and its messages are copied (contents shortened) from
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import {
  Bool,
  type DataType,
  Field,
  Float64,
  Int32,
  Int64,
  LargeUtf8,
  List,
  Null,
  Struct,
  Utf8,
  vectorFromArray,
  type Vector,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { isLabelType, isStringType, isTrajectoryType, makeGetter } from '../src/io/arrow-values.js';

const values = (v: Vector) => {
  expect(v.data).toHaveLength(1);
  const data = v.data[0]!;
  const get = makeGetter(data);
  return Array.from({ length: data.length }, (_, i) => get(i));
};

const str = () => new Utf8();
const FUNCTION = new Struct([new Field('arguments', str(), true), new Field('name', str(), true)]);
const CALL = new Struct([new Field('function', FUNCTION, true), new Field('id', str(), true), new Field('type', str(), true)]);
const MESSAGE = new Struct([
  new Field('content', str(), true),
  new Field('name', str(), true),
  new Field('role', str(), true),
  new Field('tool_call_id', str(), true),
  new Field('tool_calls', new List(new Field('element', CALL, true)), true),
]);
const TRAJECTORY = new List(new Field('element', MESSAGE, true));

// Row tianocore__edk2-pytool-library-372, messages 0 (excerpt), 6 and 7 (excerpt).
const SYSTEM = { content: 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.', name: null, role: 'system', tool_call_id: null, tool_calls: null };
const BASH_CALL = {
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
const BASH_OUTPUT = {
  content: '/workspace/tianocore__edk2-pytool-library__0.15\n[Command finished with exit code 0]',
  name: 'execute_bash',
  role: 'tool',
  tool_call_id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a',
  tool_calls: null,
};

describe('makeGetter: scalar columns', () => {
  const cases: { name: string; input: unknown[]; type: DataType; expected: unknown[] }[] = [
    { name: 'Utf8 with null, empty and non-ASCII', input: ['a', null, 'é✅', ''], type: new Utf8(), expected: ['a', null, 'é✅', ''] },
    { name: 'LargeUtf8 (64-bit offsets)', input: ['x', null, 'yz'], type: new LargeUtf8(), expected: ['x', null, 'yz'] },
    { name: 'Int64 BigInt -> number', input: [1n, null, 0n, -1n], type: new Int64(), expected: [1, null, 0, -1] },
    { name: 'Int32', input: [1, 0, null], type: new Int32(), expected: [1, 0, null] },
    { name: 'Float64 (a float resolved column)', input: [1.0, 0.5, null, -1], type: new Float64(), expected: [1, 0.5, null, -1] },
    { name: 'Bool across a byte boundary', input: [true, false, null, true, true, false, true, false, true, false], type: new Bool(), expected: [true, false, null, true, true, false, true, false, true, false] },
    { name: 'Null type', input: [null, null], type: new Null(), expected: [null, null] },
    { name: 'all-valid Utf8 (no null bitmap)', input: ['chatcmpl-eb27c5fe3baa10d5272928b4e016d84f', 'PyPSA__linopy-79'], type: new Utf8(), expected: ['chatcmpl-eb27c5fe3baa10d5272928b4e016d84f', 'PyPSA__linopy-79'] },
  ];
  it.each(cases)('$name', ({ input, type, expected }) => {
    expect(values(vectorFromArray(input, type))).toStrictEqual(expected);
  });

  it('Int64 values are JS numbers', () => {
    const got = values(vectorFromArray([1n, 0n], new Int64()));
    expect(got.map((v) => typeof v)).toStrictEqual(['number', 'number']);
  });

  it('a dictionary-encoded string column goes through the generic path', () => {
    const v = vectorFromArray(['PyPSA/linopy', 'numpy/numpydoc', 'PyPSA/linopy']);
    expect(String(v.type)).toBe('Dictionary<Int32, Utf8>');
    expect(values(v)).toStrictEqual(['PyPSA/linopy', 'numpy/numpydoc', 'PyPSA/linopy']);
  });
});

describe('makeGetter: sliced vectors (local index, offsets and bit offsets)', () => {
  const cases: { name: string; input: unknown[]; type: DataType; begin: number; end?: number; expected: unknown[] }[] = [
    { name: 'Utf8 [1, 3)', input: ['a', null, 'é', 'zz'], type: new Utf8(), begin: 1, end: 3, expected: [null, 'é'] },
    { name: 'Utf8 [2, end)', input: ['a', null, 'é', 'zz'], type: new Utf8(), begin: 2, expected: ['é', 'zz'] },
    { name: 'LargeUtf8 [1, end)', input: ['x', null, 'yz'], type: new LargeUtf8(), begin: 1, expected: [null, 'yz'] },
    { name: 'Int64 [2, end)', input: [1n, null, 0n, -1n], type: new Int64(), begin: 2, expected: [0, -1] },
    { name: 'Int64 [1, 3) keeps the null', input: [1n, null, 0n, -1n], type: new Int64(), begin: 1, end: 3, expected: [null, 0] },
    { name: 'Bool [3, end): bit offset not on a byte', input: [true, false, null, true, true, false, true, false, true, false], type: new Bool(), begin: 3, expected: [true, true, false, true, false, true, false] },
    { name: 'Bool [1, 4): null in the middle', input: [true, false, null, true, true], type: new Bool(), begin: 1, end: 4, expected: [false, null, true] },
    { name: 'Float64 [1, 2)', input: [1.0, 0.5, null], type: new Float64(), begin: 1, end: 2, expected: [0.5] },
  ];
  it.each(cases)('$name', ({ input, type, begin, end, expected }) => {
    expect(values(vectorFromArray(input, type).slice(begin, end))).toStrictEqual(expected);
  });
});

describe('makeGetter: List<Struct> (the upstream trajectory column)', () => {
  const rows = [[SYSTEM, BASH_CALL, BASH_OUTPUT], null, [], [{ ...SYSTEM, content: null }, null]];
  const EXPECTED = [
    [
      { content: SYSTEM.content, name: null, role: 'system', tool_call_id: null, tool_calls: null },
      {
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
      },
      {
        content: '/workspace/tianocore__edk2-pytool-library__0.15\n[Command finished with exit code 0]',
        name: 'execute_bash',
        role: 'tool',
        tool_call_id: 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a',
        tool_calls: null,
      },
    ],
    null,
    [],
    [{ content: null, name: null, role: 'system', tool_call_id: null, tool_calls: null }, null],
  ];

  it('whole vector: nested lists, structs, null list, empty list, null struct, null fields', () => {
    expect(values(vectorFromArray(rows, TRAJECTORY))).toStrictEqual(EXPECTED);
  });

  const slices: [number, number | undefined][] = [
    [1, undefined],
    [2, 4],
    [3, 4],
    [0, 1],
  ];
  it.each(slices)('slice(%i, %s)', (begin, end) => {
    expect(values(vectorFromArray(rows, TRAJECTORY).slice(begin, end))).toStrictEqual(EXPECTED.slice(begin, end));
  });

  it('a struct column sliced (children sliced with it)', () => {
    const v = vectorFromArray([SYSTEM, null, BASH_OUTPUT], MESSAGE).slice(1);
    expect(values(v)).toStrictEqual([null, BASH_OUTPUT]);
  });
});

describe('type checks', () => {
  const cases: { name: string; type: DataType; string: boolean; label: boolean; trajectory: boolean }[] = [
    { name: 'Utf8', type: new Utf8(), string: true, label: false, trajectory: false },
    { name: 'LargeUtf8', type: new LargeUtf8(), string: true, label: false, trajectory: false },
    { name: 'Int64', type: new Int64(), string: false, label: true, trajectory: false },
    { name: 'Float64', type: new Float64(), string: false, label: true, trajectory: false },
    { name: 'Bool', type: new Bool(), string: false, label: true, trajectory: false },
    { name: 'Null (all-null column)', type: new Null(), string: false, label: true, trajectory: false },
    { name: 'List<Struct{role,...}>', type: TRAJECTORY, string: false, label: false, trajectory: true },
    { name: 'List<Utf8>', type: new List(new Field('element', new Utf8(), true)), string: false, label: false, trajectory: false },
    { name: 'List<Struct> without role', type: new List(new Field('element', FUNCTION, true)), string: false, label: false, trajectory: false },
  ];
  it.each(cases)('$name', ({ type, string, label, trajectory }) => {
    expect([isStringType(type), isLabelType(type), isTrajectoryType(type)]).toStrictEqual([string, label, trajectory]);
  });

  it('a dictionary of strings is a string type', () => {
    expect(isStringType(vectorFromArray(['a', 'b']).type)).toBe(true);
  });
});
