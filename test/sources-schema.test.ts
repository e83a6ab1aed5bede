// Source detection and column mapping (src/sources/schema.ts).
//
// The fixture rows in fixtures/sources/ are derived from three real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands
// Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025); see fixtures/sources/README.md.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.js';
import { mineRows } from '../src/engine/mine-rows.js';
import { labelOf } from '../src/contract/sample.js';
import {
  describeDetection,
  detectSchema,
  mappedColumns,
  parseTools,
  SchemaError,
  toStandardRow,
  type Detection,
  type SchemaOverrides,
} from '../src/sources/schema.js';

const NEBIUS = ['trajectory_id', 'instance_id', 'repo', 'trajectory', 'tools', 'model_patch', 'exit_status', 'resolved', 'gen_tests_correct', 'pred_passes_gen_tests'];
const OPEN_SWE_TRACES = ['instance_id', 'repo', 'license', 'language', 'trajectory_id', 'messages', 'tools', 'resolved', 'metadata', 'hf_dataset_name'];
const SWE_GYM = ['instance_id', 'run_id', 'resolved', 'messages', 'tools', 'test_result'];
const SWE_SMITH = ['messages', 'instance_id', 'resolved', 'model', 'traj_id', 'patch'];

const F = '```';
const textSample = {
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Fix the bug.' },
    { role: 'assistant', content: `THOUGHT: look\n\n${F}bash\nls\n${F}` },
    { role: 'user', content: '<returncode>0</returncode>\n<output>\na.py\n</output>' },
  ],
};
const callSample = {
  messages: [
    { role: 'user', content: 'Fix the bug.' },
    { role: 'assistant', content: `${F}bash\nls\n${F}`, tool_calls: [{ id: '1', type: 'function', function: { name: 'bash', arguments: '{"command": "ls"}' } }] },
  ],
};

describe('detectSchema', () => {
  type Case = [name: string, columns: string[], sample: unknown, overrides: SchemaOverrides, schema: Detection['schema'], mapping: Partial<Detection['mapping']>];
  const cases: Case[] = [
    ['nebius openhands parquet', NEBIUS, undefined, {}, 'openhands', { id: 'trajectory_id', instance: 'instance_id', messages: 'trajectory', resolved: 'resolved', tools: 'tools', repo: 'repo' }],
    ['nvidia/Open-SWE-Traces', OPEN_SWE_TRACES, undefined, {}, 'open-swe-traces', { id: 'trajectory_id', messages: 'messages', tools: 'tools', repo: 'repo' }],
    ['SWE-Gym: no id column, run_id + instance_id', SWE_GYM, undefined, {}, 'openhands', { id: ['run_id', 'instance_id'], messages: 'messages', repo: null }],
    ['SWE-smith-like columns, text sample -> text-actions', SWE_SMITH, textSample, {}, 'text-actions', { id: 'traj_id', messages: 'messages', tools: null }],
    ['SWE-smith columns, tool-call sample (split tool) -> swe-smith', SWE_SMITH, callSample, {}, 'swe-smith', { id: 'traj_id' }],
    ['SWE-smith columns, no sample -> swe-smith', SWE_SMITH, undefined, {}, 'swe-smith', { id: 'traj_id' }],
    ['Open-SWE-Traces columns with a text sample -> text-actions', OPEN_SWE_TRACES, textSample, {}, 'text-actions', { id: 'trajectory_id' }],
    ['--schema wins over detection', OPEN_SWE_TRACES, undefined, { schema: 'text-actions' }, 'text-actions', { messages: 'messages' }],
    ['column options for anything else', ['uid', 'task', 'conv', 'success'], undefined, { idColumn: 'uid', instanceColumn: 'task', messagesColumn: 'conv', resolvedColumn: 'success' }, 'openhands', { id: 'uid', instance: 'task', messages: 'conv', resolved: 'success', tools: null, repo: null }],
    ['composite --id-column', ['run', 'task', 'messages', 'resolved', 'instance_id'], undefined, { idColumn: 'run, task' }, 'openhands', { id: ['run', 'task'], instance: 'instance_id' }],
    ['--messages-column overrides the candidate order', ['trajectory_id', 'instance_id', 'messages', 'trajectory', 'resolved'], undefined, { messagesColumn: 'trajectory' }, 'openhands', { messages: 'trajectory' }],
    ['both messages and trajectory: messages first', ['trajectory_id', 'instance_id', 'messages', 'trajectory', 'resolved'], undefined, {}, 'open-swe-traces', { messages: 'messages' }],
    [
      'a sample whose messages column is not chat messages falls back to trajectory',
      ['trajectory_id', 'instance_id', 'messages', 'trajectory', 'resolved'],
      { messages: [{ action: 'run', source: 'agent' }], trajectory: [{ role: 'user', content: 'x' }] },
      {},
      'openhands',
      { messages: 'trajectory' },
    ],
  ];
  it.each(cases)('%s', (_name, columns, sample, overrides, schema, mapping) => {
    const d = detectSchema(columns, sample, overrides);
    expect(d.schema).toBe(schema);
    expect(d.mapping).toMatchObject(mapping);
    expect(d.auto).toBe(overrides.schema === undefined);
  });

  it('prints the choice', () => {
    expect(describeDetection(detectSchema(OPEN_SWE_TRACES))).toBe(
      'schema open-swe-traces (auto-detected: columns trajectory_id + messages (Open-SWE-Traces layout)); columns id=trajectory_id instance=instance_id messages=messages resolved=resolved tools=tools repo=repo',
    );
    expect(describeDetection(detectSchema(SWE_GYM))).toBe(
      'schema openhands (auto-detected: columns run_id+instance_id + messages); columns id=run_id+instance_id instance=instance_id messages=messages resolved=resolved tools=tools',
    );
    expect(describeDetection(detectSchema(NEBIUS, undefined, { schema: 'openhands' }))).toMatch(/^schema openhands \(given with --schema\);/);
  });

  it('mappedColumns lists what a reader must project', () => {
    expect(mappedColumns(detectSchema(SWE_GYM).mapping)).toEqual(['run_id', 'instance_id', 'messages', 'resolved', 'tools']);
  });

  const errors: [name: string, columns: string[], sample: unknown, overrides: SchemaOverrides, message: string][] = [
    [
      'nothing matches',
      ['prompt', 'chosen', 'rejected'],
      undefined,
      {},
      'cannot detect the input schema: no id column (tried trajectory_id, traj_id, id, run_id+instance_id; or --id-column); no instance column (tried instance_id; or --instance-column, or --instance-from-id REGEX); no messages column (tried messages, trajectory; or --messages-column); no resolved column (tried resolved, target, reward; or --resolved-column); or name the corpus with --source (nebius-openhands, swe-agent, swe-smith, coderforge, open-swe-traces, swe-gym, text-actions) (found columns: prompt, chosen, rejected)',
    ],
    ['only the label is missing', ['trajectory_id', 'instance_id', 'trajectory'], undefined, {}, 'cannot detect the input schema: no resolved column (tried resolved, target, reward; or --resolved-column); or name the corpus with --source (nebius-openhands, swe-agent, swe-smith, coderforge, open-swe-traces, swe-gym, text-actions) (found columns: trajectory_id, instance_id, trajectory)'],
    ['no columns at all', [], undefined, {}, '(found columns: none)'],
    ['a named column that does not exist', NEBIUS, undefined, { resolvedColumn: 'target' }, '--resolved-column target: no such column (found columns: trajectory_id, instance_id, repo, trajectory, tools, model_patch, exit_status, resolved, gen_tests_correct, pred_passes_gen_tests)'],
    ['a composite id part that does not exist', SWE_GYM, undefined, { idColumn: 'run_id,attempt' }, '--id-column attempt: no such column'],
    ['--schema given but a role is unfilled', ['id', 'messages', 'resolved'], undefined, { schema: 'text-actions' }, 'cannot map the columns for --schema text-actions: no instance column'],
    [
      'the only messages candidate is not chat messages in the sample',
      ['trajectory_id', 'instance_id', 'trajectory', 'resolved'],
      { trajectory: [{ source: 'agent', action: 'run' }] },
      {},
      'no messages column (tried messages, trajectory; trajectory in the sample row is not a list of messages with a role; or --messages-column)',
    ],
  ];
  it.each(errors)('error: %s', (_name, columns, sample, overrides, message) => {
    let err: unknown;
    try {
      detectSchema(columns, sample, overrides);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SchemaError);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(6);
    expect((err as Error).message).toContain(message);
  });

  it('an unknown --schema is a usage error', () => {
    expect(() => detectSchema(NEBIUS, undefined, { schema: 'sweagent' as never })).toThrow(/--schema sweagent: expected one of openhands, open-swe-traces, text-actions/);
  });
});

describe('toStandardRow', () => {
  it('Open-SWE-Traces: tools JSON strings parsed, resolved copied (-1 stays unlabelled)', () => {
    const d = detectSchema(OPEN_SWE_TRACES);
    const tool = { type: 'function', function: { name: 'execute_bash', parameters: { type: 'object' } } };
    const row = {
      instance_id: 'python-attrs__attrs-770',
      repo: 'python-attrs/attrs',
      license: 'MIT',
      trajectory_id: 'f8853683-87bd-418b-b87f-19ab95c60317',
      messages: [{ role: 'user', content: 'x' }],
      tools: [JSON.stringify(tool), 'not json'],
      resolved: -1,
      metadata: { category: 'bug-fix' },
    };
    const s = toStandardRow(row, d.mapping, d.schema);
    expect(s).toEqual({
      trajectory_id: 'f8853683-87bd-418b-b87f-19ab95c60317',
      instance_id: 'python-attrs__attrs-770',
      repo: 'python-attrs/attrs',
      resolved: -1,
      trajectory: [{ role: 'user', content: 'x' }],
      tools: [tool, 'not json'],
    });
    expect(labelOf(s.resolved)).toBe('unlabelled');
    expect(labelOf(toStandardRow({ ...row, resolved: 0 }, d.mapping, d.schema).resolved)).toBe('failed');
    expect(labelOf(toStandardRow({ ...row, resolved: 1 }, d.mapping, d.schema).resolved)).toBe('resolved');
  });

  it('SWE-Gym: composite id, boolean labels, no repo', () => {
    const d = detectSchema(SWE_GYM);
    const row = { instance_id: 'getmoto__moto-6387', run_id: 'run_1', resolved: false, messages: [], tools: [{ type: 'function' }] };
    const s = toStandardRow(row, d.mapping, d.schema);
    expect(s.trajectory_id).toBe('run_1:getmoto__moto-6387');
    expect(s.repo).toBeNull();
    expect(labelOf(s.resolved)).toBe('failed');
    expect(toStandardRow({ ...row, run_id: null }, d.mapping, d.schema).trajectory_id).toBeNull();
    expect(toStandardRow({ ...row, run_id: '' }, d.mapping, d.schema).trajectory_id).toBeNull();
  });

  const toolCases: [name: string, value: unknown, expected: unknown][] = [
    ['null', null, null],
    ['a JSON string of a list', '[{"type":"function"}]', [{ type: 'function' }]],
    ['a list of JSON strings', ['{"a":1}', '{"b":2}'], [{ a: 1 }, { b: 2 }]],
    ['a list of objects (unchanged)', [{ a: 1 }], [{ a: 1 }]],
    ['a string that does not parse (kept)', 'tools?', 'tools?'],
  ];
  it.each(toolCases)('parseTools: %s', (_n, value, expected) => expect(parseTools(value)).toEqual(expected));

  it('messages given as a JSON string are parsed; a bad string is kept for the normaliser to report', () => {
    const d = detectSchema(SWE_SMITH);
    expect(toStandardRow({ traj_id: 'a', instance_id: 'i', resolved: true, messages: '[{"role":"user","content":"x"}]' }, d.mapping, d.schema).trajectory).toEqual([{ role: 'user', content: 'x' }]);
    expect(toStandardRow({ traj_id: 'a', instance_id: 'i', resolved: true, messages: '[oops' }, d.mapping, d.schema).trajectory).toBe('[oops');
  });
});

describe('fixtures/sources (derived from CC-BY-4.0 © Nebius rows)', () => {
  const readJsonl = (name: string) =>
    readFileSync(new URL(`../fixtures/sources/${name}`, import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const mineFixture = (rows: Record<string, unknown>[]) => {
    const d = detectSchema(Object.keys(rows[0]!), rows[0]);
    return { d, result: mineRows(rows.map((r) => toStandardRow(r, d.mapping, d.schema))) };
  };

  it('open-swe-traces.jsonl: detected, converted and mined as the README says', () => {
    const { d, result } = mineFixture(readJsonl('open-swe-traces.jsonl'));
    expect(d.schema).toBe('open-swe-traces');
    expect(result.counters).toMatchObject({ trajectories_read: 9, unlabelled: 3, instances: 3, eligible_instances: 3, pairs_walked: 3, pairs_emitted: 3 });
    expect(result.rows.map((r) => [r.instance_id, r.divergence_msg_index])).toEqual([
      ['PyPSA__linopy-79', 10],
      ['numpy__numpydoc-101', 16],
      ['tianocore__edk2-pytool-library-372', 10],
    ]);
  });

  it('open-swe-traces.parquet: the same columns and rows through DuckDB', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const path = new URL('../fixtures/sources/open-swe-traces.parquet', import.meta.url).pathname;
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet('${path}')`);
    const rows = reader.getRowObjectsJson() as Record<string, unknown>[];
    const d = detectSchema(reader.columnNames(), rows[0]);
    expect(d.schema).toBe('open-swe-traces');
    const std = rows.map((r) => toStandardRow(r, d.mapping, d.schema));
    expect(std.map((s) => s.trajectory_id)).toEqual(readJsonl('open-swe-traces.jsonl').map((r) => r.trajectory_id));
    expect((std[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['execute_bash', 'str_replace_editor', 'think', 'finish']);
    const result = mineRows(std);
    expect(result.rows.map((r) => r.divergence_msg_index)).toEqual([10, 16, 10]);
    conn.closeSync?.();
  });

  it('swe-gym.jsonl: composite ids, boolean labels', () => {
    const { d, result } = mineFixture(readJsonl('swe-gym.jsonl'));
    expect(d.schema).toBe('openhands');
    expect(d.mapping.id).toEqual(['run_id', 'instance_id']);
    expect(result.counters).toMatchObject({ trajectories_read: 4, duplicate_trajectory_ids: 0, unlabelled: 0, eligible_instances: 2, pairs_emitted: 2 });
    expect(result.rows.map((r) => [r.chosen_trajectory_id, r.rejected_trajectory_id, r.divergence_msg_index])).toEqual([
      ['fixture-run_1:numpy__numpydoc-101', 'fixture-run_2:numpy__numpydoc-101', 16],
      ['fixture-run_1:tianocore__edk2-pytool-library-372', 'fixture-run_2:tianocore__edk2-pytool-library-372', 10],
    ]);
  });

  it('text-actions.jsonl: detected from the sample row', () => {
    const rows = readJsonl('text-actions.jsonl');
    const d = detectSchema(Object.keys(rows[0]!), rows[0]);
    expect(d.schema).toBe('text-actions');
    expect(d.mapping).toMatchObject({ id: 'traj_id', instance: 'instance_id', messages: 'messages', resolved: 'resolved', tools: null, repo: null });
  });
});
