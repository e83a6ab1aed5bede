// Small end-to-end tables for src/engine/mine-rows.ts (mineRows: the whole contract over rows in memory).
// Every expected row and counter set is worked out from docs/mining-contract.md.
// SHA-256 ranks (contract section 4) were computed with coreutils `printf '<seed>:<id>' | sha256sum`:
//   seed 0: r4 296f.. < r3 3a82.. < r2 3fd1.. < r1 a248..;  f1 4236.. < f2 c7b1..
//   seed 7: r1 3981.. < r2 c816..;                          f2 180a.. < f1 7cd2..
//
// Real message shapes and texts below are copied (some contents shortened, marked "excerpt") from
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius
// (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025).
import { describe, expect, it } from 'vitest';
import { emptyCounters, type Counters } from '../src/contract/counters.js';
import { UserError } from '../src/errors.js';
import { mineRows, type InputRow } from '../src/engine/mine-rows.js';
import type { MiningOptions } from '../src/contract/options.js';
import type { PairRow } from '../src/types.js';

const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });

// --- upstream-shaped message builders (all five fields, as the dataset stores them) --------------
type Raw = { role: string; content: string | null; name: string | null; tool_call_id: string | null; tool_calls: unknown };
const msg = (role: string, content: string | null, extra: Partial<Raw> = {}): Raw => ({ content, name: null, role, tool_call_id: null, tool_calls: null, ...extra });
const call = (narration: string, id: string, name: string, args: string): Raw =>
  msg('assistant', narration, { tool_calls: [{ function: { arguments: args, name }, id, type: 'function' }] });
const out = (name: string, id: string, content: string): Raw => msg('tool', content, { name, tool_call_id: id });
const text = (content: string): Raw => msg('assistant', content);

// --- real upstream values (CC-BY-4.0 © Nebius) -------------------------------------------------
// Row tianocore__edk2-pytool-library-372, message 0 (excerpt).
const SYSTEM = 'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.';
// Row PyPSA__linopy-79, message 26: a think call.
const THINK_ID = 'chatcmpl-tool-be1e45884ad7426fb5d4e5c3f869f6a2';
const THINK_NARRATION = "There's one failing test, but it's unrelated to our issue. Let me proceed to Phase 3.\n\n## Phase 3. EXPLORATION: Finding Related Files\n\n";
const THINK_ARGS = String.raw`{"thought": "Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
const THINK_ARGS_EMITTED = String.raw`{"thought":"Let me search for relevant files and methods. The issue is about the Variable class inheriting from xarray.DataArray and having problems with the diff method. I need to:\n\n1. Look at the Variable class definition\n2. Understand how it inherits from xarray.DataArray\n3. See what happens when diff is called on a Variable\n4. Find where constraints are processed\n5. Understand how the diff operation affects the optimization\n\nLet me start by looking at the variables.py file since that's where the Variable class should be defined."}`;
// Row tianocore__edk2-pytool-library-372, messages 3 (tool reply to a think call), 4 (view) and 6 (execute_bash).
const THOUGHT_LOGGED = 'Your thought has been logged.';
const BASH_ID = 'chatcmpl-tool-94f98f516f5c4a66afbb81192c0a228a';
const CD_PWD = '{"command": "cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}';
const VIEW_ID = 'chatcmpl-tool-f500953ffe27402eae698eb36b345195';
const VIEW_NARRATION = '## Phase 2. RUNNING: Setting up and Running Tests\n\n';
// Row numpy__numpydoc-101, message 13 (excerpt): execute_bash output padded with trailing spaces.
const PYTEST_PADDED =
  'numpydoc/tests/test_docscrape.py::test_str PASSED' + ' '.repeat(767) + '\n' +
  '[... Observation truncated due to length ...]\n' +
  '[Command finished with exit code 0]';
const PYTEST_TRIMMED = PYTEST_PADDED.replace(/ +\n/g, '\n');

const opts = (o: Partial<MiningOptions> = {}) => o;
const row = (trajectory_id: string, instance_id: string, resolved: unknown, trajectory: unknown, repo: string | null = null): InputRow => ({
  trajectory_id,
  instance_id,
  repo,
  resolved,
  trajectory,
  // extra upstream columns are ignored
  tools: '[]',
  model_patch: '',
  exit_status: 'submit',
  gen_tests_correct: null,
  pred_passes_gen_tests: null,
});
/** A short trajectory whose first assistant action is `action` (message index 2). */
const short = (action: string, task = 'Fix the issue.') => [msg('system', SYSTEM), msg('user', task), text(action)];

describe('mineRows: the row (contract section 6)', () => {
  // Resolved and failed agree on messages 0..5 by comparison key, but not byte for byte:
  // CRLF and trailing spaces, narration, thought, call ids and argument spacing all differ.
  const R = [
    msg('system', SYSTEM),
    msg('user', 'Fix the issue.\r\nThanks  '),
    call(THINK_NARRATION, THINK_ID, 'think', THINK_ARGS),
    out('think', THINK_ID, THOUGHT_LOGGED),
    call('', BASH_ID, 'execute_bash', CD_PWD),
    out('execute_bash', BASH_ID, PYTEST_PADDED),
    call(VIEW_NARRATION, VIEW_ID, 'str_replace_editor', '{"command": "view", "path": "/workspace"}'),
    out('str_replace_editor', VIEW_ID, 'Here are the files'),
  ];
  const F = [
    msg('system', SYSTEM),
    msg('user', 'Fix the issue.\nThanks'),
    call('Let me think.', 'chatcmpl-tool-aaaa', 'think', '{"thought": "Something else entirely."}'),
    out('think', 'chatcmpl-tool-aaaa', THOUGHT_LOGGED),
    call('Let me check where I am.', 'chatcmpl-tool-bbbb', 'execute_bash', '{"command":"cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}'),
    out('execute_bash', 'chatcmpl-tool-bbbb', PYTEST_TRIMMED),
    call('', 'chatcmpl-tool-cccc', 'execute_bash', '{"command": "ls"}'),
  ];
  const EXPECTED: PairRow = {
    prompt: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Fix the issue.\r\nThanks  ' },
      {
        role: 'assistant',
        content: THINK_NARRATION,
        tool_calls: `[{"id":"${THINK_ID}","type":"function","function":{"name":"think","arguments":${THINK_ARGS_EMITTED}}}]`,
      },
      { role: 'tool', content: THOUGHT_LOGGED, name: 'think', tool_call_id: THINK_ID },
      {
        role: 'assistant',
        content: '',
        tool_calls: `[{"id":"${BASH_ID}","type":"function","function":{"name":"execute_bash","arguments":{"command":"cd /workspace/tianocore__edk2-pytool-library__0.15 && pwd"}}}]`,
      },
      { role: 'tool', content: PYTEST_PADDED, name: 'execute_bash', tool_call_id: BASH_ID },
    ],
    chosen: {
      role: 'assistant',
      content: VIEW_NARRATION,
      tool_calls: `[{"id":"${VIEW_ID}","type":"function","function":{"name":"str_replace_editor","arguments":{"command":"view","path":"/workspace"}}}]`,
    },
    rejected: {
      role: 'assistant',
      content: '',
      tool_calls: '[{"id":"chatcmpl-tool-cccc","type":"function","function":{"name":"execute_bash","arguments":{"command":"ls"}}}]',
    },
    instance_id: 'PyPSA__linopy-79',
    repo: 'PyPSA/linopy',
    chosen_trajectory_id: 'r4',
    rejected_trajectory_id: 'f1',
    divergence_turn: 2, // assistant messages 2 and 4 come before index 6
    divergence_msg_index: 6,
    // str_replace_editor{"command":"view","path":"/workspace"} (55 bigrams) vs execute_bash{"command":"ls"}
    // (27 bigrams): 13 shared ({"command":" is 11, plus "} and e_) -> 2*13/82
    action_similarity: 26 / 82,
  };

  const cases: { name: string; rows: InputRow[] }[] = [
    { name: 'resolved row first', rows: [row('r4', 'PyPSA__linopy-79', 1, R, 'PyPSA/linopy'), row('f1', 'PyPSA__linopy-79', 0, F, 'PyPSA/linopy')] },
    { name: 'failed row first (the prompt is still the resolved side)', rows: [row('f1', 'PyPSA__linopy-79', false, F, 'PyPSA/linopy'), row('r4', 'PyPSA__linopy-79', true, R, 'PyPSA/linopy')] },
  ];
  it.each(cases)('$name', ({ rows }) => {
    const res = mineRows(rows, opts());
    expect(res.rows).toStrictEqual([EXPECTED]);
    expect(JSON.stringify(Object.keys(res.rows[0]!))).toBe(
      '["prompt","chosen","rejected","instance_id","repo","chosen_trajectory_id","rejected_trajectory_id","divergence_turn","divergence_msg_index","action_similarity"]',
    );
    expect(res.counters).toStrictEqual(
      counters({ trajectories_read: 2, instances: 1, eligible_instances: 1, trajectories_extracted: 2, pairs_walked: 1, pairs_emitted: 1 }),
    );
  });

  it('divergence_turn counts assistant messages only (an extra user turn is not one)', () => {
    const head = [msg('system', SYSTEM), msg('user', 'Fix it.'), text('Which file?'), msg('user', 'setup.py'), text('Hmm.'), msg('user', 'Go on.')];
    const res = mineRows([row('r', 'I', 1, [...head, text('Done.')]), row('f', 'I', 0, [...head, text('I give up.')])]);
    expect(res.rows.map((r) => [r.divergence_msg_index, r.divergence_turn])).toStrictEqual([[6, 2]]);
    expect(res.counters.divergence_turn_0).toBe(0);
  });

  it('repo is copied; null stays null', () => {
    const res = mineRows([
      row('a-r', 'A', 1, short('ls'), 'tianocore/edk2-pytool-library'),
      row('a-f', 'A', 0, short('pwd'), 'tianocore/edk2-pytool-library'),
      row('b-r', 'B', 1, short('ls'), null),
      row('b-f', 'B', 0, short('pwd'), null),
    ]);
    expect(res.rows.map((r) => [r.instance_id, r.repo])).toStrictEqual([
      ['A', 'tianocore/edk2-pytool-library'],
      ['B', null],
    ]);
  });
});

describe('mineRows: order (contract section 5)', () => {
  it('instances in JavaScript string order: upper case, then "_", then lower case', () => {
    const insts = ['a', '_', 'B', 'b', 'Z', 'PyPSA__linopy-79', 'numpy__numpydoc-101'];
    const rows = insts.flatMap((i) => [row(`${i}-r`, i, 1, short('ls')), row(`${i}-f`, i, 0, short('pwd'))]);
    const res = mineRows(rows);
    expect(res.rows.map((r) => r.instance_id)).toStrictEqual(['B', 'PyPSA__linopy-79', 'Z', '_', 'a', 'b', 'numpy__numpydoc-101']);
    expect(res.counters.divergence_turn_0).toBe(7);
  });

  const pairs = (rs: PairRow[]) => rs.map((r) => `${r.chosen_trajectory_id}/${r.rejected_trajectory_id}`);
  const four = [
    row('r1', 'I', 1, short('ls')),
    row('f2', 'I', 0, short('git')),
    row('r2', 'I', 1, short('pwd')),
    row('f1', 'I', 0, short('cat')),
  ];
  const cases: { name: string; o: Partial<MiningOptions>; expected: string[] }[] = [
    { name: 'seed 0: resolved r2, r1; failed f1, f2 (rank order), resolved-major', o: {}, expected: ['r2/f1', 'r2/f2', 'r1/f1', 'r1/f2'] },
    { name: 'seed 7: resolved r1, r2; failed f2, f1', o: { seed: '7' }, expected: ['r1/f2', 'r1/f1', 'r2/f2', 'r2/f1'] },
    { name: 'seed 0, --max-per-side 1', o: { maxPerSide: 1 }, expected: ['r2/f1'] },
    { name: 'seed 0, --max-pairs-per-instance 3: the last pair is capped', o: { maxPairsPerInstance: 3 }, expected: ['r2/f1', 'r2/f2', 'r1/f1'] },
  ];
  it.each(cases)('$name', ({ o, expected }) => {
    expect(pairs(mineRows(four, o).rows)).toStrictEqual(expected);
  });
});

describe('mineRows: funnel counters', () => {
  it('every filter once', () => {
    const T = (task: string) => [msg('system', SYSTEM), msg('user', task)];
    const rows = [
      // N: identical trajectories -> no_divergence
      row('n-r', 'N', 1, [...T('n'), text('same')]),
      row('n-f', 'N', 0, [...T('n'), text('same')]),
      // E: tool outputs differ -> environment_divergence
      row('e-r', 'E', 1, [...T('e'), call('', 'c1', 'execute_bash', '{"command": "pytest"}'), out('execute_bash', 'c1', '1 passed')]),
      row('e-f', 'E', 0, [...T('e'), call('', 'c2', 'execute_bash', '{"command": "pytest"}'), out('execute_bash', 'c2', '1 failed')]),
      // D: 19 of 20 bigrams shared -> similarity exactly 0.95 -> near_duplicate
      row('d-r', 'D', 1, [...T('d'), text('abcdefghijklmnopq')]),
      row('d-f', 'D', 0, [...T('d'), text('abcdefghijklmnopZ')]),
      // X: two resolved runs with the same messages -> one kept, one exact_duplicate
      row('x-r1', 'X', 1, [...T('x'), text('ls')]),
      row('x-r2', 'X', 1, [...T('x'), text('ls')]),
      row('x-f', 'X', 0, [...T('x'), text('pwd')]),
      // unlabelled and duplicate rows
      row('u', 'X', null, [...T('x'), text('cat')]),
      row('x-f', 'X', 1, [...T('x'), text('cat')]),
    ];
    const res = mineRows(rows);
    expect(res.rows.map((r) => r.instance_id)).toStrictEqual(['X']);
    expect(res.counters).toStrictEqual(
      counters({
        trajectories_read: 11,
        duplicate_trajectory_ids: 1,
        unlabelled: 1,
        instances: 4,
        eligible_instances: 4,
        trajectories_extracted: 9,
        pairs_walked: 5,
        no_divergence: 1,
        environment_divergence: 1,
        near_duplicate: 1,
        exact_duplicate: 1,
        pairs_emitted: 1,
        divergence_turn_0: 1,
      }),
    );
  });

  it('exact_duplicate scope is the instance: the same row in two instances is kept in both', () => {
    const rows = ['I1', 'I2'].flatMap((i) => [row(`${i}-a`, i, 1, short('ls')), row(`${i}-b`, i, 1, short('ls')), row(`${i}-f`, i, 0, short('pwd'))]);
    const res = mineRows(rows);
    expect(res.rows.map((r) => r.instance_id)).toStrictEqual(['I1', 'I2']);
    expect(res.counters).toMatchObject({ pairs_walked: 4, pairs_emitted: 2, exact_duplicate: 2, capped: 0 });
  });

  it('capped: 3 x 3 distinct pairs, default cap 4', () => {
    const acts = ['ls', 'pwd', 'cat', 'git', 'vim', 'make'];
    const rows = [
      ...['r1', 'r2', 'r3'].map((id, k) => row(id, 'I', 1, short(acts[k]!))),
      ...['f1', 'f2', 'f3'].map((id, k) => row(id, 'I', 0, short(acts[k + 3]!))),
    ];
    expect(mineRows(rows).counters).toMatchObject({ pairs_walked: 9, pairs_emitted: 4, capped: 5 });
  });
});

describe('mineRows: malformed_arguments and unknown_roles count extracted trajectories only', () => {
  const twoMalformed = msg('assistant', '', {
    tool_calls: [
      { function: { arguments: '{"command": "ls', name: 'execute_bash' }, id: 'a', type: 'function' },
      { function: { arguments: '{"path": ', name: 'str_replace_editor' }, id: 'b', type: 'function' },
      { function: { arguments: '{"command": "pwd"}', name: 'execute_bash' }, id: 'c', type: 'function' },
    ],
  });
  const oneMalformed = call('', 'z', 'execute_bash', '{"command": ');
  const developer = msg('developer', 'Be brief.');
  const head = [msg('system', SYSTEM), msg('user', 'Fix it.')];
  const rows = [
    row('r4', 'E', 1, [...head, twoMalformed]), // extracted (rank 1 of the resolved side)
    row('f1', 'E', 0, [...head, developer]), // extracted
    row('r1', 'E', 1, [...head, oneMalformed, developer]), // rank 4 of the resolved side
    row('r3', 'N', 1, [...head, oneMalformed, developer]), // instance N has no failed run
    row('u1', 'E', -1, [...head, oneMalformed, developer]), // unlabelled
    row('f1', 'E', 0, [...head, oneMalformed, developer]), // repeated id
  ];
  const cases: { name: string; o: Partial<MiningOptions>; expected: Partial<Counters> }[] = [
    {
      name: '--max-per-side 1: only r4 and f1 are extracted',
      o: { maxPerSide: 1 },
      expected: { trajectories_extracted: 2, malformed_arguments: 2, unknown_roles: 1 },
    },
    {
      name: 'default: r1 is extracted too',
      o: {},
      expected: { trajectories_extracted: 3, malformed_arguments: 3, unknown_roles: 2 },
    },
  ];
  it.each(cases)('$name', ({ o, expected }) => {
    const res = mineRows(rows, o);
    expect(res.counters).toMatchObject({ trajectories_read: 6, duplicate_trajectory_ids: 1, unlabelled: 1, instances: 2, eligible_instances: 1, ...expected });
  });
});

describe('mineRows: bad input (contract sections 1 and 8)', () => {
  const good = (id: string, inst: string, resolved: number) => row(id, inst, resolved, short(resolved ? 'ls' : 'pwd'));

  const throwing: { name: string; rows: InputRow[]; contains: string[] }[] = [
    { name: 'instance_id null', rows: [good('r', 'I', 1), { ...good('f', 'I', 0), instance_id: null }], contains: ['trajectories.jsonl', 'row 1', 'instance_id'] },
    { name: 'trajectory_id missing', rows: [good('r', 'I', 1), { instance_id: 'I', resolved: 0, trajectory: short('pwd') }], contains: ['trajectories.jsonl', 'row 1', 'trajectory_id'] },
    { name: 'extracted trajectory null', rows: [good('r', 'I', 1), row('f', 'I', 0, null)], contains: ['trajectories.jsonl', 'f', 'trajectory is null'] },
    { name: 'extracted trajectory not a list', rows: [good('r', 'I', 1), row('f', 'I', 0, 'oops')], contains: ['trajectories.jsonl', 'f', 'not a list'] },
    {
      name: 'extracted trajectory with a message without role',
      rows: [good('r', 'I', 1), row('f', 'I', 0, [...short('pwd'), { content: 'x' }])],
      contains: ['trajectories.jsonl', 'f', 'message 3', 'role'],
    },
  ];
  it.each(throwing)('$name: one-line error, exit code 7', ({ rows, contains }) => {
    let err: unknown;
    try {
      mineRows(rows, {}, 'trajectories.jsonl');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const u = err as UserError;
    expect(u.exitCode).toBe(7);
    for (const c of contains) expect(u.message).toContain(c);
    expect(u.message).not.toContain('\n');
  });

  it('--skip-bad-rows: a bad extracted trajectory is counted and its pairs are not walked', () => {
    const res = mineRows([good('r1', 'I', 1), row('r2', 'I', 1, null), good('f1', 'I', 0), { ...good('x', 'I', 0), instance_id: '' }], { skipBadRows: true });
    expect(res.rows.map((r) => `${r.chosen_trajectory_id}/${r.rejected_trajectory_id}`)).toStrictEqual(['r1/f1']);
    expect(res.counters).toStrictEqual(
      counters({ trajectories_read: 4, bad_rows: 2, instances: 1, eligible_instances: 1, trajectories_extracted: 3, pairs_walked: 1, pairs_emitted: 1, divergence_turn_0: 1 }),
    );
  });

  // Contract ambiguity (section 1 "trajectory ... required" vs the issue's "the trajectory column is
  // decoded only for row groups that hold extracted trajectories"): the trajectory value is validated
  // only for extracted rows, the others are never decoded. Pinned here; raised in the closing note.
  it('a null trajectory in a row that is not extracted is not decoded, so not an error', () => {
    const res = mineRows([good('r', 'I', 1), good('f', 'I', 0), row('x', 'J', 1, null)], {}, 'trajectories.jsonl');
    expect(res.counters.bad_rows).toBe(0);
    expect(res.counters.pairs_walked).toBe(1);
  });

  // Contract section 2 counts malformed_arguments / unknown_roles over extracted trajectories; one skipped
  // as bad (section 1, --skip-bad-rows) adds only to bad_rows, in memory as in the streaming path.
  it('--skip-bad-rows: a skipped trajectory adds nothing to malformed_arguments / unknown_roles', () => {
    const bad = [...short('pwd').slice(0, 2), call('', 'z', 'execute_bash', '{"command": '), msg('developer', 'x'), { content: 'no role' }];
    const res = mineRows([good('r', 'I', 1), good('f', 'I', 0), row('f2', 'I', 0, bad)], { skipBadRows: true });
    expect(res.counters.bad_rows).toBe(1);
    expect(res.counters.malformed_arguments).toBe(0);
    expect(res.counters.unknown_roles).toBe(0);
  });
});
