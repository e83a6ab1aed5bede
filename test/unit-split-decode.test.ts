// How the decode pass cuts row groups into tasks (src/engine/split-decode.ts): pure planning, no I/O.
import { describe, expect, it } from 'vitest';
import { DECOMPRESS_SHARE, makespan, pieceCost, planPieces, type GroupLoad } from '../src/engine/split-decode.js';

const every = (n: number, step: number): number[] => Array.from({ length: Math.ceil(n / step) }, (_, i) => i * step);
const group = (groupRows: number, step: number, splittable = true): GroupLoad => ({ groupRows, rows: every(groupRows, step), splittable: () => splittable });

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
  it('costs a piece by the pages up to its last row plus its own rows', () => {
    const g = group(100, 10); // rows 0, 10, ..., 90
    expect(pieceCost(g, 0, 10)).toBeCloseTo(DECOMPRESS_SHARE * 91 + (1 - DECOMPRESS_SHARE) * 100);
    // The second half decompresses everything before it, the first half stops at its last row.
    expect(pieceCost(g, 5, 10)).toBeCloseTo(DECOMPRESS_SHARE * 91 + (1 - DECOMPRESS_SHARE) * 50);
    expect(pieceCost(g, 0, 5)).toBeCloseTo(DECOMPRESS_SHARE * 41 + (1 - DECOMPRESS_SHARE) * 50);
    expect(pieceCost(g, 3, 3)).toBe(0);
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
    const whole = makespan(groups.map((g) => pieceCost(g, 0, g.rows.length)), 2);
    expect(makespan(pieces.map((p) => pieceCost(groups[p.group]!, p.from, p.to)), 2)).toBeLessThan(0.8 * whole);
  });

  it('cuts a single row group in two for two workers, not for one', () => {
    expect(planPieces([group(5000, 8)], 2).length).toBe(2);
    expect(planPieces([group(5000, 8)], 1)).toEqual([{ group: 0, from: 0, to: 625 }]);
  });

  it('leaves many equal groups whole, and never cuts an unsplittable group or a single row', () => {
    const many = Array.from({ length: 17 }, (_, i) => group(i < 16 ? 4096 : 1538, 8));
    expect(planPieces(many, 2)).toEqual(many.map((g, i) => ({ group: i, from: 0, to: g.rows.length })));
    let asked = 0;
    const big: GroupLoad = { groupRows: 5000, rows: every(5000, 8), splittable: () => (asked++, false) };
    expect(planPieces([big], 2)).toEqual([{ group: 0, from: 0, to: 625 }]);
    expect(asked).toBeGreaterThan(0);
    expect(planPieces([{ groupRows: 10, rows: [3], splittable: () => true }], 2)).toEqual([{ group: 0, from: 0, to: 1 }]);
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
