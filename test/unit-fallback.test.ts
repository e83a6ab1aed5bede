// The tally of row groups the js engine left to parquet-wasm, and its stderr line.
import { describe, expect, it } from 'vitest';
import { FallbackTally, fallbackLine } from '../src/engine/fallback.js';

describe('FallbackTally', () => {
  it.each([
    { name: 'nothing fell back', adds: [['a', 0, undefined]], want: { row_groups: 0, reasons: {} } },
    { name: 'one row group, both passes', adds: [['a', 0, 'compression codec LZO'], ['a', 0, 'compression codec LZO']], want: { row_groups: 1, reasons: { 'compression codec LZO': 1 } } },
    { name: 'first reason of a row group wins', adds: [['a', 0, 'x'], ['a', 0, 'y']], want: { row_groups: 1, reasons: { x: 1 } } },
    { name: 'same row group number in two files', adds: [['a', 1, 'x'], ['b', 1, 'x'], ['b', 2, undefined]], want: { row_groups: 2, reasons: { x: 2 } } },
    { name: 'reasons sorted, whatever the order of arrival', adds: [['a', 0, 'z'], ['a', 1, 'b']], want: { row_groups: 2, reasons: { b: 1, z: 1 } } },
  ] as { name: string; adds: [string, number, string | undefined][]; want: unknown }[])('$name', ({ adds, want }) => {
    const t = new FallbackTally();
    for (const [path, rg, reason] of adds) t.add(path, rg, reason);
    expect(t.summary()).toEqual(want);
    expect(JSON.stringify(t.summary())).toBe(JSON.stringify(want));
  });
});

describe('fallbackLine', () => {
  it.each([
    { f: undefined, want: '' },
    { f: { row_groups: 0, reasons: {} }, want: '' },
    { f: { row_groups: 1, reasons: { 'compression codec LZO': 1 } }, want: 'divergence-mine: --engine js read 1 row group through parquet-wasm (compression codec LZO: 1)\n' },
    { f: { row_groups: 3, reasons: { a: 2, b: 1 } }, want: 'divergence-mine: --engine js read 3 row groups through parquet-wasm (a: 2, b: 1)\n' },
  ])('$f', ({ f, want }) => expect(fallbackLine(f)).toBe(want));
});
