// The source rules of docs/mining-contract.md §10, table-driven, in process: text-action signatures
// (XML function calls, bare and tagged fences), source messages, synthesised ids and
// --instance-from-id, --pair-within groups, detection of the corpora and its errors, and mineSourceRows
// (the library path) against the independent reference (fixtures/reference-*.mjs).
//
// Fixture rows: fixtures/corpora/ (see its README for licenses: CC-BY-4.0 © Nebius, MIT SWE-smith).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.js';
import { Indexer } from '../src/contract/select.js';
import { mineSourceRows } from '../src/engine/mine-rows.js';
import { RowIdentity, pairWithinKey } from '../src/sources/identity.js';
import { sourceMessages } from '../src/sources/messages.js';
import { detectSchema, describeDetection, type ColumnMapping, type SchemaOverrides } from '../src/sources/schema.js';
import { TEXT_ACTION_SCHEMES, textActionMessageSignature, xmlFunctionCalls } from '../src/sources/text-actions.js';
import { labelTurns } from '../src/shapes/behavior.js';
import { referenceMine } from '../fixtures/reference-walker.mjs';
import { REFERENCE_SOURCES } from '../fixtures/reference-sources.mjs';

const F = '```';
const RK = new Set(['thought', 'reasoning', 'think']);
const readJsonl = (rel: string) =>
  readFileSync(new URL(`../fixtures/corpora/${rel}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function userError(f: () => unknown): UserError {
  try {
    f();
  } catch (e) {
    if (e instanceof UserError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('xmlFunctionCalls (§10.3)', () => {
  const cases: [name: string, content: string, calls: [string, Record<string, string>][]][] = [
    ['one call after narration', 'Look first.\n\n<function=bash>\n<parameter=command>ls -la</parameter>\n</function>', [['bash', { command: 'ls -la' }]]],
    ['long value: one leading and one trailing newline removed', '<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=file_text>\n\nx = 1\n\n</parameter>\n</function>', [['str_replace_editor', { command: 'create', file_text: '\nx = 1\n' }]]],
    ['no parameters', '<function=submit>\n</function>', [['submit', {}]]],
    ['a repeated parameter keeps the last value', '<function=bash><parameter=command>a</parameter><parameter=command>b</parameter></function>', [['bash', { command: 'b' }]]],
    ['two calls, in order', '<function=a><parameter=k>1</parameter></function> then <function=b></function>', [['a', { k: '1' }], ['b', {}]]],
    ['an unclosed call is no call and ends the scan', '<function=a><parameter=k>1</parameter> <function=b></function>'.replace('</function>', ''), []],
    ['an unclosed parameter is ignored', '<function=a><parameter=k>1</function>', [['a', {}]]],
    ['a name with a line end is not a tag', '<function=a\nb></function>', []],
    ['__proto__ is a parameter like any other', '<function=f><parameter=__proto__>x</parameter></function>', [['f', JSON.parse('{"__proto__":"x"}') as Record<string, string>]]],
    ['no call', 'just text <function', []],
  ];
  it.each(cases)('%s', (_n, content, calls) => {
    const got = xmlFunctionCalls(content).map((c) => [c.name, { ...c.params }]);
    expect(got).toEqual(calls.map(([n, p]) => [n, { ...p }]));
    if (calls.some(([, p]) => Object.hasOwn(p, '__proto__'))) expect(Object.keys(xmlFunctionCalls(content)[0]!.params)).toEqual(['__proto__']);
  });
});

describe('text-action signatures per schema (§10.2, §10.3)', () => {
  const sign = (content: string | null, scheme: keyof typeof TEXT_ACTION_SCHEMES, tool_calls: never[] | null = null) =>
    textActionMessageSignature({ content, tool_calls }, RK, TEXT_ACTION_SCHEMES[scheme]);
  const cases: [name: string, content: string, scheme: keyof typeof TEXT_ACTION_SCHEMES, expected: string][] = [
    ['swe-agent: bare fence after prose', `Let me look.\n${F}\nls -F\n${F}`, 'swe-agent', 'bash ls -F'],
    ['swe-agent: the same command tagged bash', `Other words.\n${F}bash\nls -F  \n${F}`, 'swe-agent', 'bash ls -F'],
    ['swe-agent: the last fence wins, multi-line kept', `${F}\nls\n${F}\nthen\n${F}\nedit 5:5\n  x\nend_of_edit\n${F}`, 'swe-agent', 'bash edit 5:5\n  x\nend_of_edit'],
    ['swe-agent: a python block is not an action', `${F}python\nprint(1)\n${F}`, 'swe-agent', `text ${F}python\nprint(1)\n${F}`],
    ['text-actions: a bare fence is narration (mini-swe-agent tags its blocks)', `${F}\nls\n${F}`, 'text-actions', `text ${F}\nls\n${F}`],
    ['swe-smith xml: parameters in canonical order', 'x\n<function=str_replace_editor>\n<parameter=path>/a</parameter>\n<parameter=command>view</parameter>\n</function>', 'swe-smith', 'str_replace_editor {"command":"view","path":"/a"}'],
    ['swe-smith xml: reasoning keys removed as in canon', '<function=think><parameter=thought>hm</parameter></function>', 'swe-smith', 'think {}'],
    ['swe-smith xml: values are not normalised (canon keeps strings)', '<function=bash><parameter=command>ls  </parameter></function>', 'swe-smith', 'bash {"command":"ls  "}'],
    ['swe-smith xml wins over a fence in the narration', `${F}bash\nls\n${F}\n<function=bash><parameter=command>pwd</parameter></function>`, 'swe-smith', 'bash {"command":"pwd"}'],
    ['swe-smith ticks: a bare fence', `thought\n\n${F}\nstr_replace_editor view /testbed\n${F}`, 'swe-smith', 'bash str_replace_editor view /testbed'],
  ];
  it.each(cases)('%s', (_n, content, scheme, expected) => expect(sign(content, scheme)).toBe(expected));

  it('tool calls win over text in every scheme', () => {
    const call = { id: '1', type: 'function', function: { name: 'bash', arguments: { command: 'ls', thought: 'x' } } };
    for (const s of ['swe-agent', 'swe-smith', 'text-actions'] as const) {
      expect(textActionMessageSignature({ content: `${F}\npwd\n${F}`, tool_calls: [call] }, RK, TEXT_ACTION_SCHEMES[s])).toBe('bash {"command":"ls"}');
    }
  });
});

describe('sourceMessages (§10.1-§10.3)', () => {
  it('swe-agent: text, the system prompt, ai -> assistant; mask and cutoff_date dropped', () => {
    const got = sourceMessages(
      [
        { role: 'system', text: null, system_prompt: 'SETTING: ...', mask: false, cutoff_date: '01.01.2023' },
        { role: 'user', text: 'issue', system_prompt: null, mask: false, cutoff_date: null },
        { role: 'ai', text: `t\n${F}\nls\n${F}`, system_prompt: null, mask: true, cutoff_date: null },
        { role: 'human', text: 'obs', system_prompt: null, mask: false, cutoff_date: null },
      ],
      'swe-agent',
    );
    expect(got).toEqual([
      { role: 'system', content: 'SETTING: ...', name: undefined, tool_call_id: undefined, tool_calls: undefined },
      { role: 'user', content: 'issue', name: undefined, tool_call_id: undefined, tool_calls: undefined },
      { role: 'assistant', content: `t\n${F}\nls\n${F}`, name: undefined, tool_call_id: undefined, tool_calls: undefined },
      { role: 'user', content: 'obs', name: undefined, tool_call_id: undefined, tool_calls: undefined },
    ]);
  });

  it('swe-smith: content parts joined, tool_call_ids -> tool_call_id; JSON text parsed', () => {
    const text = JSON.stringify([{ role: 'tool', content: [{ type: 'text', text: 'OBSERVATION:\n' }, { type: 'text', text: 'ok' }], tool_call_ids: ['a', 'b'], agent: 'main' }]);
    expect(sourceMessages(text, 'swe-smith')).toEqual([{ role: 'tool', content: 'OBSERVATION:\nok', tool_call_ids: ['a', 'b'], tool_call_id: 'a,b', agent: 'main' }]);
  });

  it('other schemas: only the role aliases; a value that is not a list passes unchanged', () => {
    const m = { role: 'user', content: 'x' };
    expect(sourceMessages([m, { role: 'ai', content: 'y' }], 'openhands')).toEqual([m, { role: 'assistant', content: 'y' }]);
    expect(sourceMessages('not json', 'openhands')).toBe('not json');
    expect(sourceMessages(null, 'swe-agent')).toBeNull();
  });
});

describe('RowIdentity (§10.1)', () => {
  const mapping = (m: Partial<ColumnMapping>): ColumnMapping => ({ id: 'trajectory_id', instance: 'instance_id', messages: 'messages', resolved: 'resolved', tools: null, repo: null, ...m });

  it('synthesised ids: instance + "#" + its row count in read order; a row without instance counts for none', () => {
    const id = new RowIdentity(mapping({ id: [] }));
    const got = [['a'], ['b'], ['a'], [null], [''], ['a#1'], ['a']].map(([inst]) => id.resolve(null, inst));
    expect(got.map((g) => g.trajectoryId)).toEqual(['a#1', 'b#1', 'a#2', null, null, 'a#1#1', 'a#3']);
    expect(got[3]!.note).toBe('no run id to make without an instance_id');
  });

  it('--instance-from-id: the first group, else the whole match; no match or an empty instance is noted', () => {
    const cf = new RowIdentity(mapping({ instance: null, instanceFromId: '^(.+)_run\\d+$' }));
    expect(cf.resolve('0b01001001__spectree-64_run12', 'ignored')).toEqual({ trajectoryId: '0b01001001__spectree-64_run12', instanceId: '0b01001001__spectree-64' });
    expect(cf.resolve('x_run_a', null)).toEqual({ trajectoryId: 'x_run_a', instanceId: null, note: 'trajectory_id "x_run_a" does not match --instance-from-id ^(.+)_run\\d+$' });
    expect(cf.resolve(null, null)).toEqual({ trajectoryId: null, instanceId: null });
    const whole = new RowIdentity(mapping({ instance: null, instanceFromId: '^[a-z]+' }));
    expect(whole.resolve('abc-1', null).instanceId).toBe('abc');
    const empty = new RowIdentity(mapping({ instance: null, instanceFromId: '^()x' }));
    expect(empty.resolve('x1', null).note).toMatch(/gives an empty instance/);
  });

  it('pairWithinKey: stable JSON of the values, a struct path, null for what is missing', () => {
    const m = mapping({ pairWithin: [{ name: 'metadata.teacher_model.name', column: 'metadata', path: ['teacher_model', 'name'] }, { name: 'scaffold', column: 'scaffold', path: [] }] });
    const row: Record<string, unknown> = { metadata: { teacher_model: { name: 'M' } }, scaffold: 'openhands' };
    expect(pairWithinKey(m, (c) => row[c])).toBe('["M","openhands"]');
    expect(pairWithinKey(m, (c) => ({ metadata: null, scaffold: 7n })[c])).toBe('[null,7]');
    expect(pairWithinKey(mapping({}), () => 1)).toBeUndefined();
  });
});

describe('Indexer groups (--pair-within, §10.8)', () => {
  it('groups of one instance are walked in key order, after smaller instances; the partition filter sees the instance', () => {
    const ix = new Indexer<number>({ seed: '0', maxPerSide: 3, skipBadRows: false });
    const add = (id: string, inst: string, resolved: number, group: string) => ix.add({ trajectoryId: id, instanceId: inst, repo: null, resolved, loc: 0, group }, () => '');
    add('1', 'b', 1, '["y"]');
    add('2', 'b', 0, '["y"]');
    add('3', 'b', 1, '["x"]');
    add('4', 'b', 0, '["x"]');
    add('5', 'a', 1, '["z"]');
    add('6', 'a', 0, '["w"]');
    const { instances, counters } = ix.finish((inst) => inst !== 'c');
    expect(instances.map((i) => [i.instanceId, i.group, i.resolved.map((s) => s.trajectoryId), i.failed.map((s) => s.trajectoryId)])).toEqual([
      ['b', '["x"]', ['3'], ['4']],
      ['b', '["y"]', ['1'], ['2']],
    ]);
    expect(counters).toMatchObject({ instances: 4, eligible_instances: 2, trajectories_extracted: 4 });
  });
});

describe('detectSchema: the corpora (§10)', () => {
  const SWE_AGENT = ['instance_id', 'model_name', 'target', 'trajectory', 'exit_status', 'generated_patch', 'eval_logs'];
  const CODERFORGE = ['trajectory_id', 'finish_reason', 'image', 'messages', 'reward', 'tools', 'license'];
  it('column names alone: swe-agent (synthesised ids, target) and coderforge (instance from the id, reward)', () => {
    const a = detectSchema(SWE_AGENT);
    expect([a.schema, a.mapping]).toEqual(['swe-agent', { id: [], instance: 'instance_id', messages: 'trajectory', resolved: 'target', tools: null, repo: null }]);
    const c = detectSchema(CODERFORGE);
    expect([c.schema, c.mapping]).toEqual(['openhands', { id: 'trajectory_id', instance: null, instanceFromId: '^(.+)_run\\d+$', messages: 'messages', resolved: 'reward', tools: 'tools', repo: null }]);
  });

  it('--source fills in every role; explicit column options win', () => {
    const d = detectSchema(['traj_id', 'instance_id', 'messages', 'resolved'], undefined, { source: 'swe-smith' });
    expect(describeDetection(d)).toBe('schema swe-smith (given with --source swe-smith (SWE-bench/SWE-smith-trajectories)); columns id=traj_id instance=instance_id messages=messages resolved=resolved');
    const own = detectSchema([...SWE_AGENT, 'row_id'], undefined, { source: 'swe-agent', idColumn: 'row_id' });
    expect(own.mapping.id).toBe('row_id');
    const cf = detectSchema([...CODERFORGE, 'task'], undefined, { source: 'coderforge', instanceColumn: 'task' });
    expect([cf.mapping.instance, cf.mapping.instanceFromId]).toEqual(['task', undefined]);
  });

  const errors: [name: string, columns: string[], overrides: SchemaOverrides, exit: number, message: RegExp][] = [
    ['--source and a different --schema', SWE_AGENT, { source: 'swe-agent', schema: 'openhands' }, 2, /--source swe-agent reads schema swe-agent; leave out --schema openhands/],
    ['--source whose column is missing', ['instance_id', 'trajectory'], { source: 'swe-agent' }, 6, /--source swe-agent: resolved column target: no such column \(found columns: instance_id, trajectory\)/],
    ['--instance-from-id and --instance-column', CODERFORGE, { instanceFromId: 'x', instanceColumn: 'image' }, 2, /give --instance-column or --instance-from-id, not both/],
    ['--instance-from-id that does not compile', CODERFORGE, { instanceFromId: '(' }, 2, /--instance-from-id \(: not a regular expression/],
    ['--pair-within of no column', CODERFORGE, { pairWithin: ['metadata.model'] }, 6, /--pair-within metadata\.model: no such column \(found columns: trajectory_id/],
  ];
  it.each(errors)('error: %s', (_n, columns, overrides, exit, message) => {
    const e = userError(() => detectSchema(columns, undefined, overrides));
    expect(e.exitCode).toBe(exit);
    expect(e.message).toMatch(message);
  });

  it('--pair-within resolves the longest column prefix of a dotted name', () => {
    const d = detectSchema(['trajectory_id', 'instance_id', 'messages', 'resolved', 'metadata', 'metadata.x'], undefined, { pairWithin: ['metadata.x.y', 'metadata.teacher_model.name'] });
    expect(d.mapping.pairWithin).toEqual([
      { name: 'metadata.x.y', column: 'metadata.x', path: ['y'] },
      { name: 'metadata.teacher_model.name', column: 'metadata', path: ['teacher_model', 'name'] },
    ]);
  });
});

describe('mineSourceRows (the library path, the same source rules)', () => {
  const teacher = (r: Record<string, unknown>) => (r.source as { metadata: { teacher_model: { name: string } } }).metadata.teacher_model.name;
  it('open-swe-traces models.jsonl: 6 pairs across models, 3 with --pair-within, as the reference', () => {
    const rows = readJsonl('open-swe-traces/models.jsonl');
    const std = REFERENCE_SOURCES['open-swe-traces'].rows(rows);
    const all = mineSourceRows(rows);
    expect(all.counters).toMatchObject({ instances: 3, eligible_instances: 3, pairs_walked: 6, pairs_emitted: 6 });
    expect(all.rows).toEqual((referenceMine(std) as { rows: unknown[] }).rows);
    const within = mineSourceRows(rows, {}, { pairWithin: ['metadata.teacher_model.name'] });
    const ref = referenceMine(std, { group: teacher }) as { rows: unknown[]; counters: Record<string, number> };
    expect(within.rows).toEqual(ref.rows);
    expect(within.counters).toEqual(ref.counters);
    expect(within.counters).toMatchObject({ instances: 6, eligible_instances: 3, pairs_emitted: 3 });
  });

  it('swe-smith xml.jsonl: the same rows and counters as the reference', () => {
    const rows = readJsonl('swe-smith-trajectories/xml.jsonl');
    const got = mineSourceRows(rows);
    expect(got.detection.schema).toBe('swe-smith');
    const ref = referenceMine(REFERENCE_SOURCES['swe-smith'].rows(rows), { text: REFERENCE_SOURCES['swe-smith'].text }) as { rows: unknown[]; counters: Record<string, number> };
    expect(got.rows).toEqual(ref.rows);
    expect(got.counters).toEqual(ref.counters);
  });

  it('a CoderForge id without _run<N>: a bad row that says why (exit 7), counted under skipBadRows', () => {
    const row = (id: string, reward: number) => ({ trajectory_id: id, messages: '[{"role":"user","content":"x"}]', reward, tools: '[]' });
    const rows = [row('t_run1', 1.0), row('t_run2', 0.0), row('t-final', 0.0)];
    const e = userError(() => mineSourceRows(rows));
    expect(e.exitCode).toBe(7);
    expect(e.message).toBe('<rows>: row 2 (trajectory_id "t-final" does not match --instance-from-id ^(.+)_run\\d+$): instance_id is null or empty (use --skip-bad-rows to count and skip such rows)');
    expect(mineSourceRows(rows, { skipBadRows: true }).counters).toMatchObject({ trajectories_read: 3, bad_rows: 1, instances: 1, eligible_instances: 1, pairs_walked: 1, no_divergence: 1 });
  });
});

describe('behaviour labels read text actions as the source signs them', () => {
  it('a bare fence (swe-agent) and an XML call (swe-smith) are labelled by their command, not as reasoning', () => {
    const bare = [{ role: 'assistant', content: `I will look.\n${F}\nls -F\n${F}`, tool_calls: null }];
    expect(labelTurns(bare, { textActions: true, ...TEXT_ACTION_SCHEMES['text-actions'] })).toEqual(['reason_plan']);
    expect(labelTurns(bare, { textActions: true, ...TEXT_ACTION_SCHEMES['swe-agent'] })).not.toEqual(['reason_plan']);
    const xml = [{ role: 'assistant', content: 'Done.\n<function=submit>\n</function>', tool_calls: null }];
    expect(labelTurns(xml, { textActions: true, ...TEXT_ACTION_SCHEMES['swe-smith'] })).toEqual(['finalize']);
    expect(labelTurns(xml, { textActions: true, ...TEXT_ACTION_SCHEMES['swe-agent'] })).toEqual(['reason_plan']);
  });
});
