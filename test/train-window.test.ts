import { describe, expect, it } from 'vitest';
import { windowPrompt, windowRow } from '../src/shapes/window.js';
import { toTrlRow } from '../src/shapes/trl.js';
import { TEMPLATE_PATH, samplePairs } from './template/pairs.js';
import { checkRow } from '../src/dataset/template.js';
import { loadTemplate } from '../src/commands/check-template.js';

/** Roles by letter: s system, u user, a assistant, t tool. */
function msgs(spec: string) {
  const role = { s: 'system', u: 'user', a: 'assistant', t: 'tool' } as const;
  return [...spec].map((c, i) => ({ role: role[c as keyof typeof role], i }));
}

describe('windowPrompt', () => {
  // prompt spec, N, kept indices
  const cases: [string, number, number[]][] = [
    ['suatatat', 2, [0, 1, 6, 7]],
    ['suatatat', 1, [0, 1, 6, 7]], // starts on a tool result: grows back to its call
    ['suatatat', 3, [0, 1, 4, 5, 6, 7]],
    ['suatatat', 0, [0, 1]],
    ['suatatat', 8, [0, 1, 2, 3, 4, 5, 6, 7]],
    ['suatatat', 100, [0, 1, 2, 3, 4, 5, 6, 7]],
    ['suatattt', 2, [0, 1, 4, 5, 6, 7]], // parallel results stay with their call
    ['suatattt', 1, [0, 1, 4, 5, 6, 7]],
    ['uatat', 1, [0, 3, 4]], // no system message
    ['satuat', 1, [0, 3, 4, 5]], // first user is not message 1; tool after the head
    ['sutttt', 1, [0, 1, 2, 3, 4, 5]], // results right after the head: kept with the head
    ['su', 1, [0, 1]],
    ['', 3, []],
    ['suauat', 2, [0, 1, 4, 5]], // a later user message is an ordinary message
  ];
  it.each(cases)('%s with N=%i keeps %j', (spec, n, kept) => {
    const p = msgs(spec);
    const w = windowPrompt(p, n);
    expect(w.prompt.map((m) => m.i)).toEqual(kept);
    expect(w.dropped).toBe(p.length - kept.length);
  });

  it('never separates a kept tool result from its call (exhaustive over short prompts)', () => {
    const letters = ['a', 't', 'u'];
    const specs: string[] = [''];
    for (let len = 0; len < 7; len++) for (const s of specs.splice(0)) for (const c of letters) specs.push(s + c);
    for (const tail of specs) {
      const spec = 'su' + tail;
      const p = msgs(spec);
      for (let n = 0; n <= p.length; n++) {
        const kept = new Set(windowPrompt(p, n).prompt.map((m) => m.i));
        for (const i of kept) {
          if (spec[i] !== 't') continue;
          let j = i - 1;
          while (j >= 0 && spec[j] === 't') j--;
          // the call (or whatever precedes the run of results) and the results between are kept
          for (let k = Math.max(j, 0); k < i; k++) expect(kept.has(k), `${spec} N=${n} i=${i}`).toBe(true);
        }
        // the last N messages are always kept
        for (let k = Math.max(p.length - n, 0); k < p.length; k++) expect(kept.has(k)).toBe(true);
      }
    }
  });

  it.each([-1, 1.5, Number.NaN])('rejects N=%s', (n) => {
    expect(() => windowPrompt(msgs('su'), n)).toThrow(RangeError);
  });
});

describe('windowRow', () => {
  it('records the dropped count and keeps field order (published and trl)', () => {
    const { row, tools } = samplePairs([14])[0]!;
    const w = windowRow(row, 4);
    expect(Object.keys(w)).toEqual([...Object.keys(row), 'prompt_messages_dropped']);
    expect(w.prompt.length + w.prompt_messages_dropped).toBe(row.divergence_msg_index);
    expect(w.prompt[0]!.role).toBe('system');
    expect(w.prompt[1]!.role).toBe('user');

    const t = toTrlRow(row, { tools, arguments: 'object' });
    const wt = windowRow(t, 4);
    expect(Object.keys(wt).slice(-2)).toEqual(['prompt_messages_dropped', 'tools']);
    expect(wt.prompt_messages_dropped).toBe(w.prompt_messages_dropped);
    // windowing twice counts against the full trajectory
    const twice = windowRow(wt, 2);
    expect(twice.prompt.length + twice.prompt_messages_dropped).toBe(row.divergence_msg_index);
  });

  it('windowed trl rows still pass the qwen3-coder-style template check', () => {
    const tpl = loadTemplate(TEMPLATE_PATH);
    for (const n of [0, 1, 2, 5]) {
      for (const { row, tools } of samplePairs()) {
        const res = checkRow(tpl, toTrlRow(windowRow(row, n), { tools, arguments: 'object' }));
        expect(res.problems, `N=${n} ${row.instance_id}@${row.divergence_msg_index}`).toEqual([]);
      }
    }
  });
});
