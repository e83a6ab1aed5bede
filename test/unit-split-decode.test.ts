// How the decode pass cuts row groups into tasks (src/engine/split-decode.ts): pure planning, no I/O.
import { describe, expect, it } from 'vitest';
import { DECOMPRESS_SHARE, decompressedRows, makespan, pieceCost, planPieces, rowWeight, type GroupLoad } from '../src/engine/split-decode.js';

const every = (n: number, step: number): number[] => Array.from({ length: Math.ceil(n / step) }, (_, i) => i * step);
/** A group of one streamed page (the twin's DuckDB-written chunks), wanted rows every `step`. */
const group = (groupRows: number, step: number, splittable = true): GroupLoad => ({ groupRows, rows: every(groupRows, step), pageRows: groupRows, wholePages: false, splittable: () => splittable });
/** The same rows in pages of `pageRows` rows, decompressed whole or streamed. */
const paged = (g: GroupLoad, pageRows: number, wholePages: boolean): GroupLoad => ({ ...g, pageRows, wholePages });

/** Every wanted row of every group exactly once, pieces in file order and row order. */
function expectCover(groups: GroupLoad[], pieces: { group: number; from: number; to: number }[]): void {
  let at = { group: 0, row: 0 };
  for (const p of pieces) {
    if (p.group !== at.group) {
      expect(at.row).toBe(groups[at.group]!.rows.length);
      expect(p.group).toBe(at.group + 1);
      at = { group: p.group, row: 0 };
    }
    expect(p.from).toBe(at.row);
    expect(p.to).toBeGreaterThan(p.from);
    at.row = p.to;
  }
  expect(at).toEqual({ group: groups.length - 1, row: groups[groups.length - 1]!.rows.length });
}

describe('planPieces', () => {
  // [name, group, from, to, rows decompressed]
  const decompressed: [string, GroupLoad, number, number, number][] = [
    ['one streamed page: up to the last row', group(100, 10), 0, 10, 91],
    ['one streamed page: a later piece still reads from the start', group(100, 10), 5, 10, 91],
    ['one streamed page: an earlier piece stops at its last row', group(100, 10), 0, 5, 41],
    ['pages of 20 rows streamed: each page up to its last wanted row', paged(group(100, 10), 20, false), 0, 10, 5 * 11],
    ['pages of 20 rows streamed: a later piece skips the pages before it', paged(group(100, 10), 20, false), 6, 10, 2 * 11],
    ['pages of 20 rows whole: every page holding a wanted row', paged(group(100, 10), 20, true), 6, 10, 2 * 20],
    ['pages of 30 rows whole: the last page ends with the group', paged(group(100, 10), 30, true), 9, 10, 10],
    ['pages without a wanted row cost nothing', paged({ groupRows: 100, rows: [0, 95], pageRows: 10, wholePages: true, splittable: () => true }, 10, true), 0, 2, 20],
    ['an empty piece', group(100, 10), 3, 3, 0],
  ];
  it.each(decompressed)('prices decompression: %s', (_name, g, from, to, rows) => {
    expect(decompressedRows(g, from, to)).toBe(rows);
  });

  it('costs a piece by its pages plus its own rows, decompression being DECOMPRESS_SHARE of the whole', () => {
    const g = group(100, 10); // rows 0, 10, ..., 90
    const perRow = rowWeight([g]);
    expect((DECOMPRESS_SHARE * (91 + perRow * 10)) / 91).toBeCloseTo(1);
    expect(pieceCost(g, 0, 10, perRow)).toBeCloseTo(91 + 10 * perRow);
    expect(pieceCost(g, 5, 10, perRow)).toBeCloseTo(91 + 5 * perRow);
    expect(pieceCost(g, 3, 3, perRow)).toBe(0);
    expect(rowWeight([{ groupRows: 10, rows: [], pageRows: 10, wholePages: false, splittable: () => true }])).toBe(0);
  });

  it('simulates the pool: tasks in order, each to the first free worker', () => {
    expect(makespan([4, 1, 1, 1], 2)).toBe(4);
    expect(makespan([1, 1, 4], 2)).toBe(5);
    expect(makespan([3, 3], 1)).toBe(6);
  });

  it('cuts the large group of 4,096 + 904 rows so both workers work, and keeps every row once', () => {
    const groups = [group(4096, 8), group(904, 8)];
    const pieces = planPieces(groups, 2);
    expectCover(groups, pieces);
    expect(pieces.filter((p) => p.group === 0).length).toBe(2);
    const perRow = rowWeight(groups);
    const whole = makespan(groups.map((g) => pieceCost(g, 0, g.rows.length, perRow)), 2);
    expect(makespan(pieces.map((p) => pieceCost(groups[p.group]!, p.from, p.to, perRow)), 2)).toBeLessThan(0.8 * whole);
  });

  // pyarrow's 1 MB pages: a later piece does not pay for the pages before it, so the cut can even
  // the workers out; priced as one stream, the same group was cut far from even.
  it('cuts a paged group where the workers come out even', () => {
    const groups = [paged(group(4096, 8), 8, true), paged(group(904, 8), 8, true)];
    const pieces = planPieces(groups, 2);
    expectCover(groups, pieces);
    const perRow = rowWeight(groups);
    const costs = pieces.map((p) => pieceCost(groups[p.group]!, p.from, p.to, perRow));
    const total = costs.reduce((a, b) => a + b, 0);
    expect(makespan(costs, 2)).toBeLessThan(0.56 * total);
    // Each piece decompresses only its own pages: nothing is paid twice.
    expect(pieces.reduce((a, p) => a + decompressedRows(groups[p.group]!, p.from, p.to), 0)).toBe(groups.reduce((a, g) => a + decompressedRows(g, 0, g.rows.length), 0));
  });

  it('cuts a single row group in two for two workers, not for one', () => {
    expect(planPieces([group(5000, 8)], 2).length).toBe(2);
    expect(planPieces([group(5000, 8)], 1)).toEqual([{ group: 0, from: 0, to: 625 }]);
  });

  it('leaves many equal groups whole, and never cuts an unsplittable group or a single row', () => {
    const many = Array.from({ length: 17 }, (_, i) => group(i < 16 ? 4096 : 1538, 8));
    expect(planPieces(many, 2)).toEqual(many.map((g, i) => ({ group: i, from: 0, to: g.rows.length })));
    let asked = 0;
    const big: GroupLoad = { ...group(5000, 8), splittable: () => (asked++, false) };
    expect(planPieces([big], 2)).toEqual([{ group: 0, from: 0, to: 625 }]);
    expect(asked).toBeGreaterThan(0);
    expect(planPieces([{ groupRows: 10, rows: [3], pageRows: 10, wholePages: false, splittable: () => true }], 2)).toEqual([{ group: 0, from: 0, to: 1 }]);
  });

  // Asking may read every page header of a group: only a group whose cut would be taken is asked.
  it('asks only the groups it would cut whether they may be cut', () => {
    const asked = new Set<number>();
    const counted = (g: GroupLoad, i: number): GroupLoad => ({ ...g, splittable: () => (asked.add(i), true) });
    const many = Array.from({ length: 17 }, (_, i) => counted(group(i < 16 ? 4096 : 1538, 8), i));
    planPieces(many, 2);
    expect([...asked]).toEqual([]);
    // 4,096 + 904 rows: the large first group is the one cut.
    const unequal = [counted(group(4096, 8), 0), counted(group(904, 8), 1)];
    expect(planPieces(unequal, 2).length).toBeGreaterThan(2);
    expect([...asked]).toEqual([0]);
  });
});
