import { describe, expect, it } from 'vitest';
import { BadValue } from '../src/contract/normalise.js';
import { cleanTools, makeToolsColumnCache, nonObjectArguments, stripNulls, toTrlMessage, toTrlRow, toolsColumn } from '../src/shapes/trl.js';
import type { EmittedMessage, PairRow } from '../src/types.js';
import { firstNullPath } from '../src/dataset/template.js';
import { samplePairs, sampleRows } from './template/pairs.js';

const RAW_TOOLS = sampleRows()[0]!.tools as Record<string, any>[];

function row(over: Partial<PairRow> = {}): PairRow {
  return {
    prompt: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'task' },
      { role: 'assistant', content: null, tool_calls: JSON.stringify([{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls' } } }]) },
      { role: 'tool', content: 'a.py', name: 'execute_bash', tool_call_id: 'c1' },
    ],
    chosen: { role: 'assistant', content: 'look', tool_calls: JSON.stringify([{ id: 'c2', type: 'function', function: { name: 'str_replace_editor', arguments: { command: 'view', path: '/a.py', view_range: [1, 5] } } }]) },
    rejected: { role: 'assistant', content: 'done', tool_calls: null },
    instance_id: 'o__r-1',
    repo: 'o/r',
    chosen_trajectory_id: 't1',
    rejected_trajectory_id: 't2',
    divergence_turn: 1,
    divergence_msg_index: 4,
    action_similarity: 0.25,
    ...over,
  };
}

describe('cleanTools', () => {
  it('the upstream tools column really has null placeholders', () => {
    expect(firstNullPath(RAW_TOOLS)).not.toBeNull();
    const bash = RAW_TOOLS.find((t) => t.function.name === 'execute_bash')!;
    expect(Object.keys(bash.function.parameters.properties)).toHaveLength(12);
    expect(bash.function.parameters.properties.command.enum).toBeNull();
  });

  const cases: [string, unknown][] = [
    ['parquet list of structs', RAW_TOOLS],
    ['JSON string', JSON.stringify(RAW_TOOLS)],
    ['already clean (idempotent)', cleanTools(RAW_TOOLS)],
    ['Arrow-like rows with toJSON', RAW_TOOLS.map((t) => Object.assign(Object.create({ toJSON: () => t }), {}))],
  ];
  it.each(cases)('%s -> no null left, real schema kept', (_name, input) => {
    const tools = cleanTools(input) as Record<string, any>[];
    expect(tools.map((t) => t.function.name)).toEqual(['execute_bash', 'think', 'finish', 'task_tracker', 'str_replace_editor']);
    expect(firstNullPath(tools)).toBeNull();
    const by = Object.fromEntries(tools.map((t) => [t.function.name, t.function]));
    expect(Object.keys(by.execute_bash.parameters.properties)).toEqual(['command', 'is_input', 'timeout']);
    expect(by.execute_bash.parameters.properties.command).not.toHaveProperty('enum');
    expect(by.execute_bash.parameters.properties.is_input.enum).toEqual(['true', 'false']);
    expect(by.execute_bash.parameters).not.toHaveProperty('additionalProperties');
    expect(by.execute_bash.parameters.required).toEqual(['command']);
    expect(Object.keys(by.think.parameters.properties)).toEqual(['thought']);
    expect(Object.keys(by.str_replace_editor.parameters.properties)).toEqual([
      'command', 'file_text', 'insert_line', 'new_str', 'old_str', 'path', 'view_range',
    ]);
    expect(by.str_replace_editor.parameters.properties.view_range.items).toEqual({ type: 'integer' });
    // nested schema: false is a value, not a placeholder
    const taskList = by.task_tracker.parameters.properties.task_list;
    expect(taskList.items.additionalProperties).toBe(false);
    expect(taskList.items.properties.status.enum).toEqual(['todo', 'in_progress', 'done']);
    expect(taskList.items.properties.id).toEqual({ description: 'Unique task identifier', type: 'string' });
  });

  it.each([null, undefined, '', 'None', 'null', '[]', []])('%j means no tools', (v) => {
    expect(cleanTools(v)).toEqual([]);
    expect(toolsColumn(v)).toBeNull();
  });

  it.each([['{not json'], [42], [{ a: 1 }], [[1, 2]]])('%j is a bad value', (v) => {
    expect(() => cleanTools(v)).toThrow(BadValue);
  });

  it('the tools column cache returns the same value as toolsColumn', () => {
    const col = makeToolsColumnCache(2);
    const raw = JSON.stringify(RAW_TOOLS);
    expect(col(raw)).toBe(toolsColumn(raw));
    expect(col(raw)).toBe(col(raw));
    expect(col(null)).toBeNull();
    expect(col('[{"a": null, "b": 1}]')).toBe('[{"b":1}]');
    expect(col(raw)).toBe(toolsColumn(RAW_TOOLS)); // evicted and recomputed
  });

  it('keeps nulls inside arrays (data, not placeholders)', () => {
    expect(stripNulls({ a: [1, null], b: null, c: { d: null, e: 0 } })).toEqual({ a: [1, null], c: { e: 0 } });
  });
});

describe('toTrlRow', () => {
  it('reshapes a published row for TRL', () => {
    const t = toTrlRow(row(), { tools: RAW_TOOLS, arguments: 'object' });
    expect(Object.keys(t)).toEqual([
      'prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id', 'rejected_trajectory_id',
      'divergence_turn', 'divergence_msg_index', 'action_similarity', 'tools',
    ]);
    expect(t.chosen).toEqual([
      { role: 'assistant', content: 'look', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'str_replace_editor', arguments: { command: 'view', path: '/a.py', view_range: [1, 5] } } }] },
    ]);
    expect(t.rejected).toEqual([{ role: 'assistant', content: 'done' }]);
    expect(t.prompt[2]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls' } } }],
    });
    expect(t.prompt[3]).toEqual({ role: 'tool', content: 'a.py', name: 'execute_bash', tool_call_id: 'c1' });
    expect(typeof t.tools).toBe('string');
    expect(JSON.parse(t.tools!)).toEqual(cleanTools(RAW_TOOLS));
  });

  const modes: ['object' | 'string', unknown][] = [
    ['object', { command: 'view', path: '/a.py', view_range: [1, 5] }],
    ['string', JSON.stringify({ command: 'view', path: '/a.py', view_range: [1, 5] })],
  ];
  it.each(modes)('--arguments %s', (mode, expected) => {
    const t = toTrlRow(row(), { tools: null, arguments: mode });
    expect(t.chosen[0]!.tool_calls![0]!.function.arguments).toEqual(expected);
    expect(t.tools).toBeNull();
  });

  it('carries prompt_messages_dropped before tools and accepts a precomputed tools column', () => {
    const t = toTrlRow({ ...row(), prompt_messages_dropped: 7 }, { tools: 'ignored', toolsJson: '[{"x":1}]', arguments: 'object' });
    expect(Object.keys(t).slice(-2)).toEqual(['prompt_messages_dropped', 'tools']);
    expect(t.prompt_messages_dropped).toBe(7);
    expect(t.tools).toBe('[{"x":1}]');
  });

  const messages: [string, EmittedMessage, object][] = [
    ['user', { role: 'user', content: 'hi' }, { role: 'user', content: 'hi' }],
    ['null content', { role: 'system', content: null }, { role: 'system', content: '' }],
    ['assistant "None" calls', { role: 'assistant', content: 'x', tool_calls: 'None' }, { role: 'assistant', content: 'x' }],
    ['assistant [] calls', { role: 'assistant', content: 'x', tool_calls: '[]' }, { role: 'assistant', content: 'x' }],
    ['tool with null id', { role: 'tool', content: 'o', name: 'think', tool_call_id: null }, { role: 'tool', content: 'o', name: 'think', tool_call_id: null }],
    ['unknown role', { role: 'observation', content: 'o' }, { role: 'observation', content: 'o' }],
  ];
  it.each(messages)('message: %s', (_n, m, expected) => {
    expect(toTrlMessage(m, 'object')).toEqual(expected);
  });

  const odd: [string, unknown, unknown, unknown, number][] = [
    // label, arguments in the published tool_calls, object mode, string mode, wrapped
    ['truncated JSON (raw string)', '{"command": "ls', { malformed_arguments: '{"command": "ls' }, '{"command": "ls', 1],
    ['Python repr (raw string)', "{'command': 'ls'}", { malformed_arguments: "{'command': 'ls'}" }, "{'command': 'ls'}", 1],
    ['JSON array', [1, 2], { malformed_arguments: '[1,2]' }, '[1,2]', 1],
    ['null (no arguments)', null, {}, '{}', 0],
    ['empty object', {}, {}, '{}', 0],
  ];
  it.each(odd)('arguments that are not an object: %s', (_n, args, asObject, asString, wrapped) => {
    const r = row({ chosen: { role: 'assistant', content: '', tool_calls: JSON.stringify([{ id: 'c', type: 'function', function: { name: 'execute_bash', arguments: args } }]) } });
    const tally = { wrapped_arguments: 0 };
    const t = toTrlRow(r, { tools: null, arguments: 'object', tally });
    expect(t.chosen[0]!.tool_calls![0]!.function.arguments).toEqual(asObject);
    expect(tally.wrapped_arguments).toBe(wrapped);
    expect(nonObjectArguments(t)).toBe(0);
    const s = toTrlRow(r, { tools: null, arguments: 'string' });
    expect(s.chosen[0]!.tool_calls![0]!.function.arguments).toBe(asString);
    expect(nonObjectArguments(s)).toBe(2); // the prompt call too: strings in string mode
  });

  it('converts every sample pair without losing a call', () => {
    const pairs = samplePairs();
    expect(pairs.length).toBe(12);
    for (const { row: r, tools } of pairs) {
      const t = toTrlRow(r, { tools, arguments: 'object' });
      expect(t.prompt).toHaveLength(r.prompt.length);
      const calls = (m: EmittedMessage) => (m.tool_calls ? (JSON.parse(m.tool_calls) as unknown[]).length : 0);
      expect(t.prompt.map((m) => m.tool_calls?.length ?? 0)).toEqual(r.prompt.map(calls));
      expect(nonObjectArguments(t)).toBe(0);
      expect(firstNullPath(JSON.parse(t.tools!))).toBeNull();
    }
  });
});
