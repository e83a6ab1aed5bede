// Numbers in argument JSON (src/contract/json-numbers.ts, contract v3 §11): output keeps the source
// text, comparison reads the value as JSON.parse does.
import { describe, expect, it } from 'vitest';
import {
  LosslessNumber,
  isLosslessNumber,
  jsonTextByValue,
  numberKeepsText,
  numbersByValue,
  parseKeepingNumbers,
  stableJsonByValue,
  stringifyKeepingNumbers,
} from '../src/contract/json-numbers.js';
import { parseJson } from '../src/contract/json-depth.js';
import { BadValue, normaliseToolCall } from '../src/contract/normalise.js';
import { callSignature } from '../src/contract/sign.js';
import { dedupeKey, emitToolCalls } from '../src/contract/emit.js';
import stableStringify from 'fast-json-stable-stringify';

// [source text of a JSON document, is some number in it kept as text (a LosslessNumber)?]
const DOCUMENTS: [string, boolean][] = [
  ['12345678901234567890', true],
  ['9007199254740993', true], // 2^53 + 1: the double is 9007199254740992
  ['9007199254740991', false], // 2^53 - 1 round-trips
  ['1.0', true],
  ['1e5', true],
  ['1E+5', true],
  ['1e-7', false], // JS writes 1e-7 itself
  ['0.0000001', true], // JS writes 1e-7
  ['-0', true], // JSON.stringify(-0) is "0"
  ['-0.0', true],
  ['0', false],
  ['0.1', false],
  ['0.10', true],
  ['1.5e300', true], // JS writes 1.5e+300
  ['1.5e+300', false],
  ['5e-324', false],
  ['4.9e-324', true], // the same double, written 5e-324 by JS
  ['1e-400', true], // underflows to 0
  ['1e400', true], // overflows to Infinity (JSON.stringify: null)
  ['100000000000000000000', false], // 1e20 is written in full by JS
  ['1000000000000000000000', true], // 1e21: JS writes 1e+21
  ['30', false],
  ['-17', false],
  ['{"a": 1.0, "b": [1, 2.50, {"c": 12345678901234567890}], "d": "1.0"}', true],
  ['[[[[-0.0]]]]', true],
  ['{"command": "ls -la 1.0.2", "n": 3}', false], // "1.0" inside a string is text, not a number
  ['{"version": "1e5", "big": "12345678901234567890"}', false], // strings that look like numbers
  ['{"a": true, "b": null, "c": "x"}', false],
];

/** Every LosslessNumber of a parsed value, in document order. */
function losslessIn(v: unknown): string[] {
  if (isLosslessNumber(v)) return [(v as LosslessNumber).value];
  if (Array.isArray(v)) return v.flatMap(losslessIn);
  if (v !== null && typeof v === 'object') return Object.values(v).flatMap(losslessIn);
  return [];
}

describe('parseKeepingNumbers / stringifyKeepingNumbers', () => {
  it.each(DOCUMENTS)('%s: written back with its source text (spaces aside)', (text, kept) => {
    const v = parseKeepingNumbers(text);
    expect(losslessIn(v).length > 0).toBe(kept);
    expect(stringifyKeepingNumbers(v)).toBe(text.replace(/("(?:[^"\\]|\\.)*")|\s+/g, (m, str: string | undefined) => str ?? ''));
  });

  it.each(DOCUMENTS)('%s: by value it is exactly what JSON.parse makes', (text) => {
    const v = parseKeepingNumbers(text);
    expect(JSON.stringify(numbersByValue(v))).toBe(JSON.stringify(JSON.parse(text)));
    expect(stableJsonByValue(v)).toBe(stableStringify(JSON.parse(text)));
    expect(jsonTextByValue(stringifyKeepingNumbers(v)!)).toBe(JSON.stringify(JSON.parse(text)));
  });

  it('keeps the sign of -0 and -0.0 by value (Object.is), as JSON.parse does', () => {
    expect(Object.is(numbersByValue(parseKeepingNumbers('-0.0')), -0)).toBe(true);
  });

  it('a number that round-trips stays a JS number; one that does not is a LosslessNumber with its text', () => {
    const v = parseKeepingNumbers('{"a": 30, "b": 1.0, "c": 0.5}') as Record<string, unknown>;
    expect(v.a).toBe(30);
    expect(v.c).toBe(0.5);
    expect(v.b).toBeInstanceOf(LosslessNumber);
    expect((v.b as LosslessNumber).value).toBe('1.0');
  });

  it('repeated keys: the last value at the first place, as JSON.parse', () => {
    const text = '{"a": 1.0, "b": 2, "a": 3.0}';
    expect(stringifyKeepingNumbers(parseKeepingNumbers(text))).toBe('{"a":3.0,"b":2}');
    expect(Object.keys(parseKeepingNumbers(text) as object)).toEqual(Object.keys(JSON.parse(text)));
  });

  it('"__proto__" is a data key, as JSON.parse makes it', () => {
    const text = '{"__proto__": {"x": 1.0}, "y": 2}';
    expect(stringifyKeepingNumbers(parseKeepingNumbers(text))).toBe('{"__proto__":{"x":1.0},"y":2}');
  });

  it('an object that only looks like a LosslessNumber is data', () => {
    const text = '{"x": {"isLosslessNumber": true, "value": "5"}, "y": 1.0}';
    expect(stringifyKeepingNumbers(parseKeepingNumbers(text))).toBe('{"x":{"isLosslessNumber":true,"value":"5"},"y":1.0}');
  });

  it('invalid JSON throws SyntaxError, as JSON.parse', () => {
    expect(() => parseKeepingNumbers('{"a": 1.0')).toThrow(SyntaxError);
  });

  it.each([
    ['1.0', false],
    ['1', true],
    ['-0', false],
    ['1e5', false],
    ['100000', true],
    ['12345678901234567890', false],
  ])('numberKeepsText(%s) is %s', (t, keeps) => {
    expect(numberKeepsText(t)).toBe(keeps);
  });
});

describe('argument numbers through the contract', () => {
  const ARGS = '{"command": "ls", "timeout": 1.0, "id": 12345678901234567890, "f": 1e5}';
  const BY_VALUE = '{"command": "ls", "timeout": 1, "id": 12345678901234567000, "f": 100000}';
  const call = (args: string) => normaliseToolCall({ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: args } }, { malformed_arguments: 0, unknown_roles: 0 });

  it('the emitted tool_calls keep the source text', () => {
    expect(emitToolCalls([call(ARGS)])).toBe('[{"id":"c1","type":"function","function":{"name":"execute_bash","arguments":{"command":"ls","timeout":1.0,"id":12345678901234567890,"f":1e5}}}]');
  });

  it('the signature compares by value: the same as the by-value text and as contract v2', () => {
    const rk = new Set<string>();
    expect(callSignature(call(ARGS), rk)).toBe('execute_bash {"command":"ls","f":100000,"id":12345678901234567000,"timeout":1}');
    expect(callSignature(call(ARGS), rk)).toBe(callSignature(call(BY_VALUE), rk));
  });

  it('nested arguments sign by value too', () => {
    const rk = new Set<string>();
    expect(callSignature(call('{"a": {"b": [1.0, -0.0]}}'), rk)).toBe(callSignature(call('{"a": {"b": [1, 0]}}'), rk));
  });

  it('the exact-duplicate key compares by value', () => {
    const m = (args: string) => ({ role: 'assistant', content: '', tool_calls: emitToolCalls([call(args)]) });
    expect(dedupeKey({ prompt: [m(ARGS)], chosen: m(ARGS), rejected: m(ARGS) })).toBe(dedupeKey({ prompt: [m(BY_VALUE)], chosen: m(BY_VALUE), rejected: m(BY_VALUE) }));
  });

  it('parseJson keeps the depth limit (BadValue) with number text kept', () => {
    expect(() => parseJson('['.repeat(1001) + '1.0' + ']'.repeat(1001), 'x', 'text')).toThrow(BadValue);
    expect(stringifyKeepingNumbers(parseJson('['.repeat(1000) + '1.0' + ']'.repeat(1000), 'x', 'text'))).toBe('['.repeat(1000) + '1.0' + ']'.repeat(1000));
  });
});

// What Python datasets 5.0.1 hands a trainer, measured (fixtures/python-numbers/roundtrip.json): the
// rule must flag every value the measurement saw change, and none it saw kept.
import { readFileSync } from 'node:fs';
import { jsonFeatureMayChange, jsonLoaderMayChange } from '../src/contract/json-numbers.js';

describe('numbers Python datasets may change (measured)', () => {
  const measured = JSON.parse(readFileSync(new URL('../fixtures/python-numbers/roundtrip.json', import.meta.url), 'utf8')) as {
    files: Record<string, { calls: { column: string; text?: string; values: Record<string, string> }[] }>;
  };
  // The arguments of the measurement, as mined (the string-mode text is the output's own).
  const text = measured.files['trl-string.jsonl']!.calls[0]!.text!;
  const source = parseKeepingNumbers(text) as Record<string, unknown>;
  const pyRepr = (v: unknown): string => {
    const t = typeof v === 'number' ? JSON.stringify(v) : (v as LosslessNumber).value;
    return t; // compared through Python's float/int parse below
  };
  /** Whether Python's value (type and repr) is the source number exactly. */
  const same = (src: unknown, seen: string): boolean => {
    const [type, repr] = seen.split(' ') as [string, string];
    const t = pyRepr(src);
    const isInt = !/[.eE]/.test(t);
    if (type === 'int') return isInt && BigInt(repr) === BigInt(t);
    if (isInt) return false;
    return Object.is(Number(repr), Number(t));
  };
  it.each([
    ['trl-object.jsonl', jsonLoaderMayChange],
    ['trl-object.parquet', jsonFeatureMayChange],
  ] as const)('%s: flagged exactly where some column of the measurement changed the value', (file, rule) => {
    for (const [k, v] of Object.entries(source)) {
      if (typeof v === 'string') continue;
      const changed = measured.files[file]!.calls.some((c) => !same(v, c.values[k]!));
      expect([k, rule(v as number | LosslessNumber)]).toEqual([k, changed]);
    }
  });

  it('string arguments: Python json.loads keeps every value', () => {
    for (const file of ['trl-string.jsonl', 'trl-string.parquet'])
      for (const c of measured.files[file]!.calls)
        for (const [k, v] of Object.entries(source)) if (typeof v !== 'string') expect([file, k, same(v, c.values[k]!)]).toEqual([file, k, true]);
  });

  it.each([
    ['30', false, false],
    ['9007199254740992', false, false],
    ['9007199254740993', true, false],
    ['0.5', false, false],
    ['0.1', false, false],
    ['3.141592653589793', true, false],
    ['-0.0', true, false],
    ['5e-324', true, true],
    ['1e400', true, true],
    ['1.5e300', false, false],
    ['1.0', false, false],
  ])('%s: JSON loader %s, parquet %s', (t, jsonl, parquet) => {
    const n = numberKeepsText(t) ? Number(t) : new LosslessNumber(t);
    expect([jsonLoaderMayChange(n), jsonFeatureMayChange(n)]).toEqual([jsonl, parquet]);
  });
});
