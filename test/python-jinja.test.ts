// Single Jinja constructs rendered by src/templates/python-jinja.ts against the text transformers'
// Jinja environment wrote for them (fixtures/chat-templates/jinja-cases.txt: template TAB variables
// as JSON; the outputs are golden.json.gz `jinja_cases`, made by make.py with transformers 5.18 and
// jinja2). Variables are parsed as Python's json.loads types them (1.0 and 1e5 are floats).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { PythonTemplate, pyStrftime } from '../src/templates/python-jinja.js';
import { parsePythonJson } from '../src/templates/python-json.js';

const HERE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'chat-templates');
const golden = JSON.parse(gunzipSync(readFileSync(join(HERE, 'golden.json.gz'))).toString('utf8')) as { jinja_cases: ({ output: string } | { error: string })[] };
const cases = readFileSync(join(HERE, 'jinja-cases.txt'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l, i) => {
    const [raw, vars] = l.split('\t') as [string, string];
    const src = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw; // a JSON string: newlines and tabs
    return [src, vars, golden.jinja_cases[i]!] as const;
  });

describe('Python Jinja2 semantics (transformers environment)', () => {
  it('has a Python result for every case', () => expect(golden.jinja_cases.length).toBe(cases.length));

  it.each(cases)('%s  with %s', (src, vars, want) => {
    const render = (): string => new PythonTemplate(src).render(parsePythonJson(vars) as Record<string, unknown>);
    if ('error' in want) expect(render, want.error).toThrow();
    else expect(render()).toBe(want.output);
  });
});

describe('parsePythonJson', () => {
  it.each([
    ['{"a": 1.0}', { a: { isLosslessNumber: true, value: '1.0' } }],
    ['[1e5, 2.5, 3, -0.0]', [{ isLosslessNumber: true, value: '1e5' }, 2.5, 3, { isLosslessNumber: true, value: '-0.0' }]],
    ['{"id": 12345678901234567890, "s": "1.0 e"}', { id: { isLosslessNumber: true, value: '12345678901234567890' }, s: '1.0 e' }],
    ['{"s": "a\\"1.0"}', { s: 'a"1.0' }],
  ])('%s', (text, want) => expect(parsePythonJson(text)).toEqual(want));

  it('keeps the order of integer-like keys (a Map, which the renderer reads in order)', () => {
    const v = parsePythonJson('{"b": 1, "10": 2, "2": {"x": 1.0}}') as Map<string, unknown>;
    expect(v).toBeInstanceOf(Map);
    expect([...v.keys()]).toEqual(['b', '10', '2']);
    expect(v.get('2')).toEqual({ x: { isLosslessNumber: true, value: '1.0' } });
  });

  it('throws on invalid JSON as JSON.parse does', () => expect(() => parsePythonJson('{"a": 1.0,}')).toThrow(SyntaxError));
});

describe('strftime_now', () => {
  it.each([
    ['%d %b %Y', '05 Mar 2026'],
    ['%Y-%m-%d %H:%M:%S', '2026-03-05 07:08:09'],
    ['%A %B %j %I%p %%', 'Thursday March 064 07AM %'],
  ])('%s', (fmt, want) => expect(pyStrftime(new Date(2026, 2, 5, 7, 8, 9), fmt)).toBe(want));
});
