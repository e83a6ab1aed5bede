// Table-driven pins of the contract core (sections 2-7 of the mining contract) and of the spill
// walk's exact-duplicate key, written to kill the mutants StrykerJS (`npm run mutate`) found alive:
// every row states a rule and its expected value worked out by hand from the contract.
// Messages here are short stand-ins in the upstream shape (role, content, tool_calls with
// {id, type, function: {name, arguments}}), not copies of dataset rows.
import { describe, expect, it } from 'vitest';
import { assertIdentity, emptyCounters, type Counters } from '../src/contract/counters.js';
import { UserError } from '../src/errors.js';
import { mineRows, type InputRow } from '../src/engine/mine-rows.js';
import { BadValue, normaliseMessage, normaliseToolCall, normaliseTrajectory, type NormaliseTally } from '../src/contract/normalise.js';
import { compareStrings, rankKey } from '../src/contract/sample.js';
import { Indexer } from '../src/contract/select.js';
import { actionSignature, callSignature, canonArguments, comparisonKey } from '../src/contract/sign.js';

const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });
const tally = (): NormaliseTally => ({ malformed_arguments: 0, unknown_roles: 0 });
const REASONING = new Set(['thought', 'reasoning', 'think']);

// --- message builders --------------------------------------------------------------------------
type Raw = Record<string, unknown>;
const sys: Raw = { role: 'system', content: 'You are a coding agent.' };
const user: Raw = { role: 'user', content: 'Fix the failing test.' };
const call = (command: string, id: string, narration = ''): Raw => ({
  role: 'assistant',
  content: narration,
  tool_calls: [{ id, type: 'function', function: { name: 'execute_bash', arguments: JSON.stringify({ command }) } }],
});
const result = (id: string, content: string): Raw => ({ role: 'tool', content, name: 'execute_bash', tool_call_id: id });
const row = (trajectory_id: string, resolved: number, trajectory: unknown, instance_id = 'I'): InputRow => ({ trajectory_id, instance_id, repo: 'o/r', resolved, trajectory });
/** Two ids whose SHA-256 ranks (seed 0) put `first` before `second`. */
function ranked(a: string, b: string): [string, string] {
  return rankKey('0', a) < rankKey('0', b) ? [a, b] : [b, a];
}

describe('section 7: a violated identity names both sides', () => {
  const rows: [string, Partial<Counters>, string][] = [
    ['one walked, none accounted', { pairs_walked: 1 }, 'pairs_walked=1, sum of outcomes=0'],
    ['every outcome counted once', { pairs_walked: 7, no_divergence: 1, environment_divergence: 1, near_duplicate: 1, exact_duplicate: 1, capped: 1, pairs_emitted: 1 }, 'pairs_walked=7, sum of outcomes=6'],
    ['outcomes beyond the walked', { pairs_walked: 0, capped: 2, pairs_emitted: 3 }, 'pairs_walked=0, sum of outcomes=5'],
  ];
  it.each(rows)('%s', (_name, c, message) => {
    expect(() => assertIdentity(counters(c))).toThrow(`internal error: counter identity violated (${message})`);
  });
});

describe('section 2: bad values are refused with what is wrong', () => {
  const rows: [string, unknown, string][] = [
    ['a null message', null, 'a message must be an object'],
    ['a string message', 'hello', 'a message must be an object'],
    ['a numeric content', { role: 'user', content: 5 }, 'content must be a string or null, found number'],
    ['a numeric tool name', { role: 'tool', content: '', name: 1 }, 'name must be a string or null, found number'],
    ['a boolean tool_call_id', { role: 'tool', content: '', tool_call_id: true }, 'tool_call_id must be a string or null, found boolean'],
    ['tool_calls an object', { role: 'assistant', content: '', tool_calls: { id: 'x' } }, 'tool_calls must be a list or null, found object'],
    ['tool_calls a number', { role: 'assistant', content: '', tool_calls: 3 }, 'tool_calls must be a list or null, found number'],
    ['tool_calls text that is not JSON', { role: 'assistant', content: '', tool_calls: '[{oops' }, 'tool_calls is a string that is neither "None" nor a JSON list'],
    ['tool_calls JSON text of an object', { role: 'assistant', content: '', tool_calls: '{"id": "x"}' }, 'tool_calls must be a list or null, found object'],
    ['a call that is a string', { role: 'assistant', content: '', tool_calls: ['ls'] }, 'a tool call must be an object'],
    ['a null call', { role: 'assistant', content: '', tool_calls: [null] }, 'a tool call must be an object'],
    ['a call function that is a number', { role: 'assistant', content: '', tool_calls: [{ function: 5 }] }, 'tool_calls[].function must be an object'],
    ['a numeric call id', { role: 'assistant', content: '', tool_calls: [{ id: 1, function: {} }] }, 'tool_calls[].id must be a string or null, found number'],
    ['a numeric call type', { role: 'assistant', content: '', tool_calls: [{ type: 1, function: {} }] }, 'tool_calls[].type must be a string or null, found number'],
    ['a numeric function name', { role: 'assistant', content: '', tool_calls: [{ function: { name: 1 } }] }, 'tool_calls[].function.name must be a string or null, found number'],
  ];
  it.each(rows)('%s', (_name, input, message) => {
    expect(() => normaliseMessage(input as Raw, tally())).toThrow(new BadValue(message));
  });

  it('a bad message is named by its index in the trajectory', () => {
    expect(() => normaliseTrajectory([sys, { role: 'user', content: 5 }], tally())).toThrow(new BadValue('message 1: content must be a string or null, found number'));
  });

  const programmingErrors: [string, () => unknown][] = [
    ['normaliseTrajectory', () => normaliseTrajectory([sys, { get role(): string { throw new TypeError('getter bug'); } }], tally())],
    ['mineRows', () => mineRows([row('r', 1, [sys, { get role(): string { throw new TypeError('getter bug'); } }]), row('f', 0, [sys])])],
  ];
  it.each(programmingErrors)('%s: an error that is not a bad value passes through unchanged', (_name, run) => {
    expect(run).toThrow(TypeError);
    expect(run).toThrow('getter bug');
  });
});

describe('section 2: tool_calls given as JSON text', () => {
  const rows: [string, string, unknown][] = [
    ['a JSON list of calls', '[{"id": "c1", "type": "function", "function": {"name": "execute_bash", "arguments": "{\\"command\\": \\"ls\\"}"}}]',
      [{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls' } } }]],
    ['an empty JSON list', '[]', null],
    ['JSON null', 'null', null],
    ['the string "None"', 'None', null],
  ];
  it.each(rows)('%s', (_name, text, calls) => {
    expect(normaliseMessage({ role: 'assistant', content: 'x', tool_calls: text }, tally())).toStrictEqual({ role: 'assistant', content: 'x', tool_calls: calls });
  });

  it('a null function is an empty one', () => {
    expect(normaliseToolCall({ id: 'c', type: null, function: null }, tally())).toStrictEqual({ id: 'c', type: null, function: { name: null, arguments: null } });
  });
});

describe('section 1: a bad row says which value is wrong', () => {
  const rows: [string, Raw, string][] = [
    ['a null trajectory_id', { trajectoryId: null, instanceId: 'I', repo: null }, 'where: trajectory_id is null or empty'],
    ['an empty instance_id', { trajectoryId: 't', instanceId: '', repo: null }, 'where: instance_id is null or empty'],
    ['a numeric repo', { trajectoryId: 't', instanceId: 'I', repo: 7 }, 'where: repo is not a string'],
  ];
  it.each(rows)('%s', (_name, rec, message) => {
    const ix = new Indexer<null>({ seed: '0', maxPerSide: 3, skipBadRows: false });
    expect(() => ix.add({ ...rec, resolved: 1, loc: null } as never, () => 'where')).toThrow(new UserError(`${message} (use --skip-bad-rows to count and skip such rows)`, 7));
  });
});

describe('section 4: a partition keeps only its instances', () => {
  it('instances outside `keep` are neither counted nor extracted', () => {
    const ix = new Indexer<null>({ seed: '0', maxPerSide: 3, skipBadRows: false });
    for (const [id, inst, resolved] of [['a1', 'A', 1], ['a2', 'A', 0], ['b1', 'B', 1], ['b2', 'B', 0], ['c1', 'C', 1]] as const) {
      ix.add({ trajectoryId: id, instanceId: inst, repo: null, resolved, loc: null }, () => '');
    }
    const { instances, counters: c } = ix.finish((inst) => inst !== 'A');
    expect(instances.map((i) => i.instanceId)).toEqual(['B']);
    expect(c).toEqual(counters({ trajectories_read: 5, instances: 2, eligible_instances: 1, trajectories_extracted: 2 }));
  });
});

describe('section 5: JavaScript string order', () => {
  const rows: [string, string, number][] = [
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    ['Z', 'a', -1],
    ['\uffff', '\u{10000}', 1], // UTF-16 code units: U+10000 starts with the surrogate 0xD800
  ];
  it.each(rows)('compareStrings(%j, %j) = %i', (a, b, want) => {
    expect(compareStrings(a, b)).toBe(want);
  });
});

describe('section 3: canon(arguments) is stable JSON whatever the keys', () => {
  const rows: [string, unknown, string][] = [
    // Integer-like keys: a plain object lists them first; stable JSON sorts them as strings.
    ['a one-digit key after a letter-digit key', { '9': 1, '8a': 2 }, '{"8a":2,"9":1}'],
    ['a two-digit key after a longer key', { '12': 1, '10a': 2 }, '{"10a":2,"12":1}'],
    ['key 0 after a symbol key', { '0': 1, '-': 2 }, '{"-":2,"0":1}'],
    ['nested objects only', { b: { z: 1, a: 2 }, a: { y: [{ d: 1, c: 2 }] } }, '{"a":{"y":[{"c":2,"d":1}]},"b":{"a":2,"z":1}}'],
    ['reasoning keys dropped at the top level only', { thought: 'x', b: { thought: 'kept' }, a: 1 }, '{"a":1,"b":{"thought":"kept"}}'],
    ['a list', [{ b: 1, a: 2 }], '[{"a":2,"b":1}]'],
    ['a string', 'ls -la', '"ls -la"'],
    ['null', null, 'null'],
    ['undefined', undefined, 'null'],
  ];
  it.each(rows)('%s', (_name, args, want) => {
    expect(canonArguments(args, REASONING)).toBe(want);
  });
});

describe('section 3 and 9.4: signatures and keys', () => {
  const sig: [string, { content: string | null; tool_calls: unknown }, string][] = [
    ['no calls', { content: ' look first  ', tool_calls: null }, 'text look first'],
    ['an empty call list', { content: 'look first', tool_calls: [] }, 'text look first'],
    ['a null call name', { content: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: null, arguments: { command: 'ls' } } }] }, ' {"command":"ls"}'],
    ['a malformed call with a null name', { content: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: null, arguments: '{oops ' }, malformed: true }] }, ' {oops'],
  ];
  it.each(sig)('actionSignature: %s', (_name, msg, want) => {
    expect(actionSignature(msg as never, REASONING)).toBe(want);
  });

  it('callSignature: a null name is ""', () => {
    expect(callSignature({ id: null, type: null, function: { name: null, arguments: {} } }, REASONING)).toBe(' {}');
  });

  const keys: [string, Raw, string][] = [
    ['a tool reply with a null name', { role: 'tool', content: 'ok ', name: null, tool_call_id: 'c' }, 'tool\n\nok'],
    ['a tool reply', { role: 'tool', content: 'ok', name: 'execute_bash', tool_call_id: 'c' }, 'tool\nexecute_bash\nok'],
  ];
  it.each(keys)('comparisonKey: %s', (_name, msg, want) => {
    expect(comparisonKey(msg as never, REASONING)).toBe(want);
  });
});

describe('section 5.2: environment divergence on either side', () => {
  const base = [sys, user, call('ls', 'c1'), result('c1', 'setup.py')];
  const rows: [string, Raw[], Raw[]][] = [
    ['the resolved side has a tool reply, the failed an action', [...base, result('c9', 'extra output')], [...base, call('pytest', 'c2')]],
    ['the resolved side has an action, the failed a tool reply', [...base, call('pytest', 'c2')], [...base, result('c9', 'extra output')]],
    ['both have user messages', [...base, { role: 'user', content: 'continue' }], [...base, { role: 'user', content: 'stop' }]],
  ];
  it.each(rows)('%s', (_name, r, f) => {
    const res = mineRows([row('r', 1, r), row('f', 0, f)]);
    expect(res.rows).toEqual([]);
    expect(res.counters).toEqual(counters({ trajectories_read: 2, malformed_arguments: 0, instances: 1, eligible_instances: 1, trajectories_extracted: 2, pairs_walked: 1, environment_divergence: 1 }));
  });
});

describe('text-actions signatures (mineRows scheme)', () => {
  // Two replies that run the same fenced bash block with different narration.
  const fence = (narration: string) => ({ role: 'assistant', content: `${narration}\n\`\`\`bash\nls -la\n\`\`\`` });
  const rows = [row('r', 1, [sys, user, fence('I will look around.'), user, { role: 'assistant', content: 'done' }]), row('f', 0, [sys, user, fence('Listing files first.'), user, { role: 'assistant', content: 'stuck on it' }])];
  const cases: [string, 'contract' | 'text-actions', number][] = [
    ['contract: the narration is the action, they part at message 2', 'contract', 2],
    ['text-actions: the bash block is the action, they part at message 4', 'text-actions', 4],
  ];
  it.each(cases)('%s', (_name, scheme, index) => {
    const res = mineRows(rows, {}, '<rows>', scheme);
    expect(res.rows.map((r) => r.divergence_msg_index)).toEqual([index]);
  });
});

describe('section 5.4: exact duplicates compare the emitted messages, whatever the walk order', () => {
  // Failed runs F1 and F2 agree with each other by key through message 4 and are byte-identical at 4,
  // but their message 2 differs in its call id only. Resolved R0 parts from them at 2 (F1 and F2 give
  // two rows: the rejected messages differ by call id, 9.7); resolved R parts from them at 4, where
  // F2's row repeats F1's exactly. 3 rows (the two at 2 at turn 0) and 1 exact duplicate in either
  // order of R0 and R (the failed side in rank order: `fa` holds call id c2-a).
  const f = (id2: string) => [sys, user, call('ls', id2), result(id2, 'setup.py'), call('pytest -x', 'c4'), result('c4', '1 failed')];
  const r0 = [sys, user, call('cat setup.py', 'c2'), result('c2', 'from setuptools import setup')];
  const r = [sys, user, call('ls', 'c2'), result('c2', 'setup.py'), call('git diff', 'c4'), result('c4', '')];
  const [fa, fb] = ranked('f-one', 'f-two');
  const [first, second] = ranked('r-one', 'r-two');
  const orders: [string, Raw[], Raw[], number[]][] = [
    ['R0 walked first', r0, r, [2, 2, 4]],
    ['R walked first', r, r0, [4, 2, 2]],
  ];
  it.each(orders)('%s', (_name, t1, t2, indices) => {
    const res = mineRows([row(first, 1, t1), row(second, 1, t2), row(fa, 0, f('c2-a')), row(fb, 0, f('c2-b'))]);
    expect(res.rows.map((x) => x.divergence_msg_index)).toEqual(indices);
    expect(res.rows.filter((x) => x.divergence_msg_index === 2).map((x) => JSON.parse(x.rejected.tool_calls!)[0].id)).toEqual(['c2-a', 'c2-b']);
    expect(res.counters).toEqual(counters({ trajectories_read: 4, instances: 1, eligible_instances: 1, trajectories_extracted: 4, pairs_walked: 4, exact_duplicate: 1, pairs_emitted: 3, divergence_turn_0: 2 }));
  });
});
