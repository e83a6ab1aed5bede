// Values sliced from their JSON source (src/contract/json-source.ts): a slice is used only where it is
// exactly what JSON.stringify writes, and nothing changes where it is not.
import { describe, expect, it } from 'vitest';
import { flatMembersOfSource } from '../src/contract/json-source.js';
import { canonArguments, flatArgumentsJson, parsedFrom, sharingArgumentsJson } from '../src/contract/sign.js';
import { encodeTrajectory } from '../src/engine/encode.js';
import type { SpillWriter } from '../src/engine/spill.js';
import type { EmittedMessage } from '../src/types.js';
import { emitToolCalls } from '../src/contract/emit.js';
import { normaliseToolCall } from '../src/contract/normalise.js';

/** What flatArgumentsJson gives without a source: each value written by JSON.stringify. */
function written(text: string): [string, string][] {
  const v = JSON.parse(text) as Record<string, unknown>;
  return Object.keys(v).map((k) => [k, JSON.stringify(v[k])]);
}
const members = (text: string) => flatMembersOfSource(text, Object.keys(JSON.parse(text) as object));

describe('flatMembersOfSource', () => {
  // Real arguments are Python json.dumps text (", " and ": " separators, ensure_ascii off): whole files
  // with every short escape, and \u00XX for the other control characters.
  it.each([
    ['JSON.stringify text', JSON.stringify({ command: 'create', path: '/a/b.py', file_text: 'x = "1"\n\tif a\\b:\r\n\b\f\u001b\u0000\u007f é 😀' })],
    ['Python json.dumps separators and spacing', '{"command": "str_replace", "old_str": "a\\nb", "new_str": "\\"q\\"", "flag": true, "none": null, "off": false}'],
    ['white space of every kind around tokens', ' \t\r\n{ \n"a" \t: \r"x" ,\n "b":true }\n '],
    ['an empty object', '{}'],
    ['an empty string and a lone backslash escape at the end', '{"a": "", "b": "\\\\"}'],
    ['an escaped quote right before the closing one', '{"a": "say \\"hi\\""}'],
    ['a two-byte string (non-Latin-1 text)', '{"a": "日本語\\n😀"}'],
  ])('%s: slices, equal to what JSON.stringify writes', (_name, text) => {
    const got = members(text);
    expect(got).not.toBeNull();
    expect(got).toEqual(written(text));
  });

  it.each([
    ['an escaped slash (JSON.stringify writes "/")', '{"a": "x\\/y"}'],
    ['a \\u escape of a character JSON.stringify writes as is', '{"a": "caf\\u00e9"}'],
    ['an upper-case \\u00XX escape', '{"a": "\\u001B"}'],
    ['a control character with a short escape written long', '{"a": "\\u000a"}'],
    ['an escaped surrogate pair', '{"a": "\\ud83d\\ude00"}'],
    ['an escaped lone surrogate (JSON.stringify writes it so, but it is not a slice we read)', '{"a": "\\ud800"}'],
    ['a number', '{"a": "x", "n": 1}'],
    ['a nested object', '{"a": {"b": "c"}}'],
    ['an array', '{"a": ["b"]}'],
    ['a key written with an escape', '{"\\u0061": "x"}'],
    ['a key holding a quote', '{"a\\"b": "x"}'],
    ['a key ending in an escaped backslash', '{"a\\\\": "x"}'],
    ['duplicate keys (JSON.parse keeps the last value)', '{"a": "x", "a": "y"}'],
    ['not an object', '["a"]'],
  ])('%s: null', (_name, text) => {
    expect(members(text)).toBeNull();
  });

  it('a raw lone surrogate in a value: null (JSON.stringify escapes it)', () => {
    expect(members(`{"a": "x\ud800y"}`)).toBeNull();
  });

  it('keys in another order than the text, or fewer or more keys: null', () => {
    expect(flatMembersOfSource('{"a": "x", "b": "y"}', ['b', 'a'])).toBeNull();
    expect(flatMembersOfSource('{"a": "x", "b": "y"}', ['a'])).toBeNull();
    expect(flatMembersOfSource('{"a": "x"}', ['a', 'b'])).toBeNull();
  });

  // Generated objects written several ways: the answer is null, or exactly JSON.stringify's.
  it('2,000 generated texts: null or exactly JSON.stringify per value', () => {
    let seed = 20261206;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['a', ' ', '"', '\\', '/', '\n', '\r', '\t', '\b', '\f', '\u0000', '\u001f', '\u007f', 'é', '日', '\ud83d\ude00', '\u2028', '\ud800', '\udc00'];
    const str = () => Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const value = (): unknown => {
      const r = random();
      return r < 0.7 ? str() : r < 0.8 ? random() < 0.5 : r < 0.9 ? null : Math.floor(random() * 100);
    };
    // Python's json.dumps(ensure_ascii=True) style: every non-ASCII character as \uXXXX.
    const asciiOnly = (t: string) => t.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    let sliced = 0;
    for (let n = 0; n < 2000; n++) {
      const o: Record<string, unknown> = {};
      // Keys too may need escapes: quotes and backslashes, at the end of the key above all.
      const tails = ['', '', '', '"', '\\', '\\\\', '\\"', 'é', '\n'];
      for (let k = Math.floor(random() * 4); k > 0; k--) o[`k${Math.floor(random() * 5)}${tails[Math.floor(random() * tails.length)]}`] = value();
      const plain = JSON.stringify(o);
      for (const text of [plain, JSON.stringify(o, null, 2), plain.replaceAll('":', '": ').replaceAll(',"', ', "'), asciiOnly(plain)]) {
        const got = flatMembersOfSource(text, Object.keys(JSON.parse(text) as object));
        if (got === null) continue;
        sliced++;
        expect(got).toEqual(written(text));
      }
    }
    expect(sliced).toBeGreaterThan(1000);
  });
});

describe('arguments parsed from their text a moment ago (sign.ts parsedFrom, encode.ts)', () => {
  it('inside sharingArgumentsJson, flatArgumentsJson takes the values from the text (a text that disagrees shows it)', () => {
    // Misuse on purpose: a text the object was not parsed from. Only a slice can give "y".
    const o = { a: 'x' };
    expect(sharingArgumentsJson(() => (parsedFrom(o, '{"a": "y"}'), flatArgumentsJson(o)))).toEqual([['a', '"y"']]);
    // Outside the scope nothing is kept, and index-like keys are left to flatArgumentsJson (null).
    parsedFrom(o, '{"a": "y"}');
    expect(flatArgumentsJson(o)).toEqual([['a', '"x"']]);
    const indexed = { 0: 'x' };
    expect(sharingArgumentsJson(() => (parsedFrom(indexed, '{"0": "x"}'), flatArgumentsJson(indexed)))).toBeNull();
  });

  it('encodeTrajectory slices each call\'s values from the text it parsed (a text that reads differently afterwards shows it)', () => {
    // A raw call whose arguments read as one text the first time (normalisation) and another after:
    // the emitted calls and the signature hold the second text's value only if encode slices from it.
    // Normalisation reads it three times (its value, its type, then the text it parses); encode once more.
    let reads = 0;
    const fn = { name: 'f', get arguments() { return ++reads <= 3 ? '{"a": "x"}' : '{"a": "y"}'; } };
    const records: { toolCalls: string | null | undefined; signature: string }[] = [];
    const spill = { offset: 0, appendMessage: (_code: number, e: EmittedMessage, signature: string) => (records.push({ toolCalls: e.tool_calls, signature }), 0) } as unknown as SpillWriter;
    encodeTrajectory(0, [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: fn }] }], new Set(), { malformed_arguments: 0, unknown_roles: 0 }, spill);
    expect(reads).toBe(4);
    expect(records).toEqual([{ toolCalls: '[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":"y"}}}]', signature: 'f {"a":"y"}' }]);
  });

  it('signatures and emitted calls are the same with and without the text', () => {
    const texts = ['{"command": "create", "path": "/p", "file_text": "a\\n\\"b\\"\\t\\u001b", "thought": "t"}', '{"a": "x\\/y", "n": 1.50}', '{"0": "index key", "b": "c"}', '{"a": {"b": [1, 2]}}', '{"a": "caf\\u00e9"}'];
    const reasoning = new Set(['thought']);
    for (const text of texts) {
      const call = normaliseToolCall({ id: 'c', type: 'function', function: { name: 'f', arguments: text } }, { malformed_arguments: 0, unknown_roles: 0 });
      const args = call.function.arguments as object;
      const withText = sharingArgumentsJson(() => (parsedFrom(args, text), [canonArguments(args, reasoning), emitToolCalls([call])]));
      expect(withText).toEqual([canonArguments(args, reasoning), emitToolCalls([call])]);
    }
  });
});
