// JSON written from UTF-8 bytes (src/engine/json-bytes.ts): byte for byte what JSON.stringify of the
// decoded string writes, for every byte that needs an escape, every UTF-8 length, and texts long
// enough to be counted before they are written.
import { describe, expect, it } from 'vitest';
import { JsonBytes } from '../src/engine/json-bytes.js';

/** JsonBytes' output for the UTF-8 of `s`, given as bytes inside a larger buffer. */
function fromBytes(s: string, keep = 16): string {
  const out = new JsonBytes(keep);
  const pad = Buffer.from('\u00ff~', 'utf8');
  const b = Buffer.concat([pad, Buffer.from(s, 'utf8'), pad]);
  out.utf8String(b, pad.length, b.length - pad.length);
  return Buffer.from(out.take()).toString('utf8');
}

describe('JsonBytes.utf8String', () => {
  it.each(Array.from({ length: 128 }, (_, c) => c))('the ASCII character %i alone and between letters', (c) => {
    const ch = String.fromCharCode(c);
    expect(fromBytes(ch)).toBe(JSON.stringify(ch));
    expect(fromBytes(`a${ch}b${ch}`)).toBe(JSON.stringify(`a${ch}b${ch}`));
  });

  it.each([
    ['empty', ''],
    ['two-, three- and four-byte characters', 'é 日本 😀 \u00a0'],
    ['U+2028, U+2029 and U+FFFD (JSON.stringify writes them as they are)', '\u2028\u2029\ufffd'],
    ['DEL and the C1 controls', '\u007f\u0080\u009f'],
    ['a real tool output', 'numpydoc/tests/test_docscrape.py::test_str PASSED   \r\n\t[... Observation truncated ...]\n"quoted" \\path\\ \u001b[0m'],
  ])('%s', (_name, s) => {
    expect(fromBytes(s)).toBe(JSON.stringify(s));
  });

  it('2,000 generated strings, from a 16-byte buffer that has to grow', () => {
    let seed = 99;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pieces = ['a', '"', '\\', '\n', '\u0000', '\u001f', '\u0008', '\u000c', 'é', '日', '😀', '\u2028', '/', ' '];
    for (let n = 0; n < 2000; n++) {
      const s = Array.from({ length: Math.floor(random() * 40) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      expect(fromBytes(s)).toBe(JSON.stringify(s));
    }
  });

  it('a text over 1 MiB (counted first) with escapes, after other output', () => {
    const s = `${'line "one"\t\\\n'.repeat(90_000)}\u0001😀`;
    const out = new JsonBytes(1024);
    out.ascii('[');
    const b = Buffer.from(s, 'utf8');
    expect(b.length).toBeGreaterThan(1 << 20);
    out.utf8String(b, 0, b.length);
    out.ascii(']');
    expect(Buffer.from(out.take()).toString('utf8')).toBe(JSON.stringify([s]));
  });
});

describe('JsonBytes members and values', () => {
  it('writes JSON.stringify of each value; a member whose value JSON.stringify leaves out is left out', () => {
    const out = new JsonBytes(8);
    out.ascii('{"a":1');
    out.member('b', 'x\ud800"');
    out.member('gone', undefined);
    out.member('c', null);
    out.member('d', 0.5);
    out.member('e', Number.NaN);
    out.member('k"ey', '日本');
    out.ascii('}');
    expect(Buffer.from(out.take()).toString('utf8')).toBe(JSON.stringify({ a: 1, b: 'x\ud800"', gone: undefined, c: null, d: 0.5, e: Number.NaN, 'k"ey': '日本' }));
    expect(out.value(undefined)).toBe(false);
    expect(out.used).toBe(0);
  });

  it('take gives the bytes in a buffer of their own and starts again', () => {
    const out = new JsonBytes(4);
    out.ascii('"abcdefgh"');
    const first = out.take();
    out.ascii('"z"');
    expect(Buffer.from(first).toString()).toBe('"abcdefgh"');
    expect(Buffer.from(out.take()).toString()).toBe('"z"');
  });
});
