// formatCount must write every number as `toLocaleString('en-US')` does: it only skips loading
// ICU for the integers every count is.
import { describe, expect, it } from 'vitest';
import { formatCount } from '../src/count-text.js';

describe('formatCount', () => {
  it.each([
    [0, '0'],
    [7, '7'],
    [999, '999'],
    [1000, '1,000'],
    [67074, '67,074'],
    [1234567, '1,234,567'],
    [-1000, '-1,000'],
    [-999, '-999'],
    [Number.MAX_SAFE_INTEGER, '9,007,199,254,740,991'],
  ])('%s -> %s', (n, text) => {
    expect(formatCount(n)).toBe(text);
  });

  // The values it leaves to Intl, and the integers it groups itself, against the runtime's own text.
  it.each([
    0, -0, 1, -1, 12, 123, 1234, -1234, 12345, 123456, 1234567, 999999, 1000000, -1000000, 2 ** 31, 2 ** 32 - 1,
    Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 60, 1e21, 1e22, -1e25,
    0.5, 1.25, 1234.5678, -0.0001, 1e-7, 999.9995, 12345.6789,
    NaN, Infinity, -Infinity,
  ])('%s as toLocaleString("en-US")', (n) => {
    expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
  });

  it('agrees with toLocaleString("en-US") on random integers of every length', () => {
    let x = 0x2f6b_1d3;
    for (let i = 0; i < 2000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const digits = 1 + (i % 16);
      const n = (x % 2 ? -1 : 1) * Math.floor((x / 2 ** 32) * 10 ** digits);
      expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
    }
  });
});
