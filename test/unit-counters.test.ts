// Unit tests for src/contract/counters.ts (contract section 7). The numbers in the table test are those of the
// contract's published reference run (nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius),
// with made-up pairs_walked / no_divergence / capped that keep the identity.
import { describe, expect, it } from 'vitest';
import { addCounters, assertIdentity, COUNTER_NAMES, emptyCounters, formatCounters, identityHolds, type Counters } from '../src/contract/counters.js';

const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });

const REFERENCE = counters({
  trajectories_read: 67074,
  instances: 6306,
  eligible_instances: 1741,
  trajectories_extracted: 8757,
  pairs_walked: 1234567,
  no_divergence: 1226158,
  environment_divergence: 493,
  near_duplicate: 726,
  exact_duplicate: 1670,
  capped: 100,
  pairs_emitted: 5420,
  divergence_turn_0: 673,
});

describe('counter names', () => {
  it('are the contract section 7 list, in its order', () => {
    expect([...COUNTER_NAMES]).toStrictEqual([
      'trajectories_read',
      'duplicate_trajectory_ids',
      'unlabelled',
      'bad_rows',
      'malformed_arguments',
      'unknown_roles',
      'instances',
      'eligible_instances',
      'trajectories_extracted',
      'pairs_walked',
      'no_divergence',
      'environment_divergence',
      'near_duplicate',
      'exact_duplicate',
      'capped',
      'pairs_emitted',
      'divergence_turn_0',
    ]);
    expect(Object.keys(emptyCounters())).toStrictEqual([...COUNTER_NAMES]);
    expect(Object.values(emptyCounters()).every((v) => v === 0)).toBe(true);
  });
});

describe('identity: pairs_walked = no_divergence + environment + near + exact + capped + emitted', () => {
  const cases: [string, Partial<Counters>, boolean][] = [
    ['all zero', {}, true],
    ['reference-like run', REFERENCE, true],
    ['one of each outcome', { pairs_walked: 6, no_divergence: 1, environment_divergence: 1, near_duplicate: 1, exact_duplicate: 1, capped: 1, pairs_emitted: 1 }, true],
    ['a walked pair with no outcome', { pairs_walked: 1 }, false],
    ['an outcome without a walked pair', { capped: 1 }, false],
    ['counters outside the walk do not take part', { trajectories_read: 5, bad_rows: 2, malformed_arguments: 9, divergence_turn_0: 0 }, true],
  ];
  it.each(cases)('%s -> %s', (_name, c, holds) => {
    expect(identityHolds(counters(c))).toBe(holds);
    if (holds) expect(() => assertIdentity(counters(c))).not.toThrow();
    else expect(() => assertIdentity(counters(c))).toThrow(/identity/);
  });
});

describe('addCounters', () => {
  it('adds every counter and returns the target', () => {
    const into = counters({ pairs_walked: 2, pairs_emitted: 2 });
    const out = addCounters(into, { pairs_walked: 3, capped: 3, malformed_arguments: 1 });
    expect(out).toBe(into);
    expect(into).toStrictEqual(counters({ pairs_walked: 5, pairs_emitted: 2, capped: 3, malformed_arguments: 1 }));
  });
});

describe('formatCounters: aligned table, thousands separators', () => {
  it('reference-like run', () => {
    expect(formatCounters(REFERENCE)).toBe(
      [
        'trajectories_read            67,074',
        'duplicate_trajectory_ids          0',
        'unlabelled                        0',
        'bad_rows                          0',
        'malformed_arguments               0',
        'unknown_roles                     0',
        'instances                     6,306',
        'eligible_instances            1,741',
        'trajectories_extracted        8,757',
        'pairs_walked              1,234,567',
        'no_divergence             1,226,158',
        'environment_divergence          493',
        'near_duplicate                  726',
        'exact_duplicate               1,670',
        'capped                          100',
        'pairs_emitted                 5,420',
        'divergence_turn_0               673',
      ].join('\n') + '\n',
    );
  });

  it('all zero: the value column is one character wide', () => {
    const lines = formatCounters(emptyCounters()).split('\n');
    expect(lines).toHaveLength(18); // 17 counters and the final newline
    expect(lines[0]).toBe('trajectories_read         0');
    expect(lines[1]).toBe('duplicate_trajectory_ids  0');
    expect(lines[17]).toBe('');
  });

  it('every line has the same width (right-aligned values)', () => {
    const lines = formatCounters(counters({ trajectories_read: 1000, capped: 7 })).trimEnd().split('\n');
    expect(new Set(lines.map((l) => l.length))).toStrictEqual(new Set([24 + 2 + 5]));
    expect(lines.find((l) => l.startsWith('capped'))).toBe('capped                        7');
  });
});

describe('formatCounters: the published column', () => {
  const c = { ...emptyCounters(), trajectories_read: 67_074, instances: 6_306, pairs_walked: 5_420, pairs_emitted: 5_420 };
  const published = { trajectories_read: 67_074, instances: 6_300, pairs_emitted: 5_420 };
  const lines = formatCounters(c, published).trimEnd().split('\n');
  const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!;

  it('a counter with a published figure shows it, right-aligned to the widest figure', () => {
    expect(row('trajectories_read')).toMatch(/ 67,074  published 67,074$/);
    expect(row('pairs_emitted')).toMatch(/  5,420  published  5,420$/);
  });
  it('a figure that differs is marked, one that matches is not', () => {
    expect(row('instances')).toMatch(/  6,306  published  6,300  differs$/);
    expect(row('trajectories_read')).not.toContain('differs');
  });
  it('counters without a published figure are printed as without the column', () => {
    expect(row('pairs_walked')).toBe(formatCounters(c).split('\n').find((l) => l.startsWith('pairs_walked '))!);
    expect(row('exact_duplicate')).not.toContain('published');
  });
  it('every row still lists every counter in contract order', () => {
    expect(lines.map((l) => l.split(' ')[0])).toEqual([...COUNTER_NAMES]);
  });
});
