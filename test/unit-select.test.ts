// Unit tests for src/contract/sample.ts and src/contract/select.ts, written from the mining contract sections 1 and 4.
// Expected SHA-256 ranks were computed independently with coreutils, e.g.
//   printf '0:r4' | sha256sum   ->  296f465d...
// The trajectory id chatcmpl-eb27c5fe3baa10d5272928b4e016d84f is a real id from
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0 © Nebius).
import { describe, expect, it } from 'vitest';
import { emptyCounters, type Counters } from '../src/contract/counters.js';
import { UserError } from '../src/errors.js';
import { compareStrings, labelOf, pickRanked, rankKey } from '../src/contract/sample.js';
import { Indexer, type IndexRecord, type SelectOptions } from '../src/contract/select.js';

// seed "0" and seed "7" ranks of the ids used below (sha256sum of "<seed>:<id>").
const RANK0: Record<string, string> = {
  r1: 'a248003760981d767ceaeac5a3586be2306ac8ad0e8da8add8e744307554ec34',
  r2: '3fd1d1bdd4310867dcb289f8cedc876487303322d98abb80525a0052c8ec31a9',
  r3: '3a82da38d472adbc340188cea8fdc836986a59e550a7d6d936c8048e780b8729',
  r4: '296f465d8583d81df7a7976c41639b269a45c3525de346fe6e318aa2aac5a39f',
  r5: 'd0fdd6500c04f15ba95dee61856ef3b63daa5e36d938d87869a8c645d1832da2',
  f1: '423646f578f07c556744beff8a6e8177d849a621920afa5f2a6ccd8761c3bafc',
  f2: 'c7b1e5c1b764a739862bebd1c64f87b0227531a779d1c0edd183eaf4bd2320bf',
  f3: 'd1efe2d64409b817e75e55f3c066e4756cfb201678357ac30f47d1514bafb955',
  f4: 'd408f8ad1543af7da361e962f428d1797fc204ca74f50dab208b3560d64e8529',
};

describe('labelOf (contract section 1, resolved column)', () => {
  const cases: [string, unknown, string][] = [
    ['int 1', 1, 'resolved'],
    ['float 1.0', 1.0, 'resolved'],
    ['bool true', true, 'resolved'],
    ['int64 1n (BigInt)', 1n, 'resolved'],
    ['int 0', 0, 'failed'],
    ['float -0.0', -0, 'failed'],
    ['bool false', false, 'failed'],
    ['int64 0n (BigInt)', 0n, 'failed'],
    ['null', null, 'unlabelled'],
    ['undefined (column value absent)', undefined, 'unlabelled'],
    ['-1', -1, 'unlabelled'],
    ['0.5', 0.5, 'unlabelled'],
    ['2', 2, 'unlabelled'],
    ['NaN', NaN, 'unlabelled'],
    ['string "1"', '1', 'unlabelled'],
    ['string "true"', 'true', 'unlabelled'],
  ];
  it.each(cases)('%s -> %s', (_name, v, expected) => {
    expect(labelOf(v)).toBe(expected);
  });
});

describe('rankKey: lowercase hex SHA-256 of seed + ":" + trajectory_id', () => {
  const cases: [string, string, string][] = [
    ['0', 'chatcmpl-eb27c5fe3baa10d5272928b4e016d84f', '132e55a97375a8323cfdee64415557d3bc18b52ef2b7070b3d5306cf8c50bb55'],
    ['7', 'chatcmpl-eb27c5fe3baa10d5272928b4e016d84f', 'b939f892ab4ffb4a331901fd61397ca7e9a9ad60ad63d4cf9c60ddcb40da54af'],
    ['0', 'r4', '296f465d8583d81df7a7976c41639b269a45c3525de346fe6e318aa2aac5a39f'],
    ['7', 'r1', '3981035c207d4032b1c4d7e8af2eeb22c794f9711c681e3061698f7ca1a4d8db'],
  ];
  it.each(cases)('seed %s, id %s', (seed, id, expected) => {
    expect(rankKey(seed, id)).toBe(expected);
  });
});

describe('pickRanked: first k by ascending rank', () => {
  const cands = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id) => ({ trajectoryId: id, rank: RANK0[id]! }));
  const cases: [number, string[]][] = [
    [3, ['r4', 'r3', 'r2']],
    [1, ['r4']],
    [5, ['r4', 'r3', 'r2', 'r1', 'r5']],
    [10, ['r4', 'r3', 'r2', 'r1', 'r5']],
    [0, []],
  ];
  it.each(cases)('k = %i', (k, expected) => {
    expect(pickRanked(cands, k).map((c) => c.trajectoryId)).toStrictEqual(expected);
    expect(cands.map((c) => c.trajectoryId)).toStrictEqual(['r1', 'r2', 'r3', 'r4', 'r5']); // input untouched
  });
});

describe('compareStrings: JavaScript string order (UTF-16 code units)', () => {
  const cases: [string, string[], string[]][] = [
    ['upper case before lower case, "_" between them', ['a', '_', 'B', 'Z', 'b'], ['B', 'Z', '_', 'a', 'b']],
    ['real ids: prefix first, "_" after upper case', ['numpy__numpydoc-101', 'PyPSA__linopy-79', 'tianocore__edk2-pytool-library-372', 'PyPSA__linopy-7'], ['PyPSA__linopy-7', 'PyPSA__linopy-79', 'numpy__numpydoc-101', 'tianocore__edk2-pytool-library-372']],
    ['digits compare as characters, not numbers', ['x-10', 'x-9', 'x-100'], ['x-10', 'x-100', 'x-9']],
    ['astral characters (surrogates 0xD83D) sort before U+FF5E', ['\uFF5E', '\u{1F600}', 'z'], ['z', '\u{1F600}', '\uFF5E']],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect([...input].sort(compareStrings)).toStrictEqual(expected);
  });
  it('returns 0 for equal strings', () => {
    expect(compareStrings('same', 'same')).toBe(0);
  });
});

// ------------------------------------------------------------------------------------------------

type Row = { id: unknown; inst: unknown; resolved: unknown; repo?: unknown };
const rec = (r: Row, loc: number): IndexRecord<number> => ({ trajectoryId: r.id, instanceId: r.inst, repo: r.repo ?? null, resolved: r.resolved, loc });
const opts = (o: Partial<SelectOptions> = {}): SelectOptions => ({ seed: '0', maxPerSide: 3, skipBadRows: false, ...o });
const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });

function run(rows: Row[], o: Partial<SelectOptions> = {}) {
  const ix = new Indexer<number>(opts(o));
  rows.forEach((r, i) =>
    ix.add(rec(r, i), () => {
      throw new Error(`where() called for good row ${i}`);
    }),
  );
  const sel = ix.finish();
  return {
    counters: sel.counters,
    instances: sel.instances.map((s) => ({
      id: s.instanceId,
      resolved: s.resolved.map((x) => x.trajectoryId),
      failed: s.failed.map((x) => x.trajectoryId),
    })),
    raw: sel.instances,
  };
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
const fiveByFour: Row[] = [
  ...ids('r', 5).map((id) => ({ id, inst: 'inst', resolved: 1 })),
  ...ids('f', 4).map((id) => ({ id, inst: 'inst', resolved: 0 })),
];

describe('Indexer: sampling (contract section 4)', () => {
  const cases: { name: string; o: Partial<SelectOptions>; resolved: string[]; failed: string[] }[] = [
    { name: 'default seed 0, 3 per side', o: {}, resolved: ['r4', 'r3', 'r2'], failed: ['f1', 'f2', 'f3'] },
    { name: 'seed 7 changes the pick and the order', o: { seed: '7' }, resolved: ['r1', 'r5', 'r4'], failed: ['f2', 'f1', 'f3'] },
    { name: '--max-per-side 1', o: { maxPerSide: 1 }, resolved: ['r4'], failed: ['f1'] },
    { name: '--max-per-side larger than the group keeps all, in rank order', o: { maxPerSide: 9 }, resolved: ['r4', 'r3', 'r2', 'r1', 'r5'], failed: ['f1', 'f2', 'f3', 'f4'] },
  ];
  it.each(cases)('$name', ({ o, resolved, failed }) => {
    const r = run(fiveByFour, o);
    expect(r.instances).toStrictEqual([{ id: 'inst', resolved, failed }]);
    expect(r.counters).toStrictEqual(
      counters({ trajectories_read: 9, instances: 1, eligible_instances: 1, trajectories_extracted: resolved.length + failed.length }),
    );
  });

  it('does not depend on the order rows arrive in', () => {
    expect(run([...fiveByFour].reverse()).instances).toStrictEqual([{ id: 'inst', resolved: ['r4', 'r3', 'r2'], failed: ['f1', 'f2', 'f3'] }]);
  });

  it('carries rank, repo and loc of each kept trajectory', () => {
    const r = run([
      { id: 'r4', inst: 'PyPSA__linopy-79', resolved: 1, repo: 'PyPSA/linopy' },
      { id: 'f1', inst: 'PyPSA__linopy-79', resolved: 0 },
    ]);
    expect(r.raw[0]!.resolved[0]).toStrictEqual({ trajectoryId: 'r4', instanceId: 'PyPSA__linopy-79', repo: 'PyPSA/linopy', rank: RANK0.r4, loc: 0 });
    expect(r.raw[0]!.failed[0]).toStrictEqual({ trajectoryId: 'f1', instanceId: 'PyPSA__linopy-79', repo: null, rank: RANK0.f1, loc: 1 });
  });
});

describe('Indexer: groups, labels, duplicates, eligibility', () => {
  const cases: { name: string; rows: Row[]; instances: { id: string; resolved: string[]; failed: string[] }[]; counters: Partial<Counters> }[] = [
    {
      name: 'mixed funnel',
      rows: [
        { id: 'r1', inst: 'B', resolved: 1 },
        { id: 'f1', inst: 'B', resolved: 0 },
        { id: 'r1', inst: 'B', resolved: 0 }, // repeated id: first kept
        { id: 'r2', inst: 'a', resolved: true },
        { id: 'u1', inst: 'a', resolved: null },
        { id: 'u2', inst: 'a', resolved: -1 },
        { id: 'u3', inst: 'a', resolved: 0.5 },
        { id: 'f2', inst: 'a', resolved: false },
        { id: 'r3', inst: '_', resolved: 1.0 }, // resolved only: an instance, not eligible
        { id: 'u4', inst: 'z', resolved: 2 }, // unlabelled only: not an instance at all
      ],
      instances: [
        { id: 'B', resolved: ['r1'], failed: ['f1'] },
        { id: 'a', resolved: ['r2'], failed: ['f2'] },
      ],
      counters: { trajectories_read: 10, duplicate_trajectory_ids: 1, unlabelled: 4, instances: 3, eligible_instances: 2, trajectories_extracted: 4 },
    },
    {
      name: 'a repeated id keeps the first row read (its instance and label)',
      rows: [
        { id: 'x', inst: 'I', resolved: 1 },
        { id: 'y', inst: 'I', resolved: 0 },
        { id: 'x', inst: 'J', resolved: 1 },
        { id: 'z', inst: 'J', resolved: 0 },
      ],
      instances: [{ id: 'I', resolved: ['x'], failed: ['y'] }],
      counters: { trajectories_read: 4, duplicate_trajectory_ids: 1, instances: 2, eligible_instances: 1, trajectories_extracted: 2 },
    },
    {
      name: 'a repeated id whose first row is unlabelled stays excluded',
      rows: [
        { id: 'x', inst: 'I', resolved: null },
        { id: 'x', inst: 'I', resolved: 1 },
        { id: 'y', inst: 'I', resolved: 0 },
      ],
      instances: [],
      counters: { trajectories_read: 3, duplicate_trajectory_ids: 1, unlabelled: 1, instances: 1 },
    },
    {
      name: 'failed only and resolved only instances are not eligible',
      rows: [
        { id: 'a1', inst: 'A', resolved: 0 },
        { id: 'a2', inst: 'A', resolved: 0 },
        { id: 'b1', inst: 'B', resolved: 1 },
      ],
      instances: [],
      counters: { trajectories_read: 3, instances: 2 },
    },
    {
      name: 'eligible instances come out in JavaScript string order',
      rows: ['a', 'b', '_', 'Z', 'B'].flatMap((inst) => [
        { id: `${inst}-r`, inst, resolved: 1 },
        { id: `${inst}-f`, inst, resolved: 0 },
      ]),
      instances: ['B', 'Z', '_', 'a', 'b'].map((inst) => ({ id: inst, resolved: [`${inst}-r`], failed: [`${inst}-f`] })),
      counters: { trajectories_read: 10, instances: 5, eligible_instances: 5, trajectories_extracted: 10 },
    },
  ];
  it.each(cases)('$name', ({ rows, instances, counters: c }) => {
    const r = run(rows);
    expect(r.instances).toStrictEqual(instances);
    expect(r.counters).toStrictEqual(counters(c));
  });
});

describe('Indexer: bad rows (contract sections 1 and 8)', () => {
  const cases: { name: string; row: Row; column: string }[] = [
    { name: 'trajectory_id null', row: { id: null, inst: 'I', resolved: 1 }, column: 'trajectory_id' },
    { name: 'trajectory_id empty', row: { id: '', inst: 'I', resolved: 1 }, column: 'trajectory_id' },
    { name: 'trajectory_id absent', row: { id: undefined, inst: 'I', resolved: 1 }, column: 'trajectory_id' },
    { name: 'trajectory_id not a string', row: { id: 42, inst: 'I', resolved: 1 }, column: 'trajectory_id' },
    { name: 'instance_id null', row: { id: 'x', inst: null, resolved: 1 }, column: 'instance_id' },
    { name: 'instance_id empty', row: { id: 'x', inst: '', resolved: 0 }, column: 'instance_id' },
    { name: 'repo not a string', row: { id: 'x', inst: 'I', resolved: 0, repo: 7 }, column: 'repo' },
  ];

  it.each(cases)('$name: one-line error naming file, row and column; exit code 7', ({ row, column }) => {
    const ix = new Indexer<number>(opts());
    ix.add(rec({ id: 'ok', inst: 'I', resolved: 1 }, 0), () => 'never');
    let err: unknown;
    try {
      ix.add(rec(row, 1), () => 'trajectories.parquet: row 1');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const u = err as UserError;
    expect(u.exitCode).toBe(7);
    expect(u.message.startsWith('trajectories.parquet: row 1: ')).toBe(true);
    expect(u.message).toContain(column);
    expect(u.message).toContain('--skip-bad-rows');
    expect(u.message).not.toContain('\n');
  });

  it.each(cases)('$name with --skip-bad-rows: counted bad_rows, nothing else', ({ row }) => {
    const r = run([row, { id: 'r', inst: 'I', resolved: 1 }, { id: 'f', inst: 'I', resolved: 0 }], { skipBadRows: true });
    expect(r.counters).toStrictEqual(counters({ trajectories_read: 3, bad_rows: 1, instances: 1, eligible_instances: 1, trajectories_extracted: 2 }));
    expect(r.instances).toStrictEqual([{ id: 'I', resolved: ['r'], failed: ['f'] }]);
  });

  it('repo null or absent is fine and reads as null', () => {
    const r = run([
      { id: 'r', inst: 'I', resolved: 1, repo: null },
      { id: 'f', inst: 'I', resolved: 0 },
    ]);
    expect(r.raw[0]!.resolved[0]!.repo).toBeNull();
    expect(r.raw[0]!.failed[0]!.repo).toBeNull();
    expect(r.counters.bad_rows).toBe(0);
  });
});
