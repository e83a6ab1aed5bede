import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  assignSplit,
  dataFilesPattern,
  groupKeyOf,
  hashU64,
  parseByteSize,
  parseSplitSpecs,
  planShards,
  shardCountForBytes,
  shardFileName,
  splitFileName,
  splitOf,
} from '../src/dataset/split.js';

/** The documented rule, computed independently: hex of the first 8 bytes / 2^64. */
function unitOf(s: string): number {
  return Number.parseInt(createHash('sha256').update(s).digest('hex').slice(0, 16), 16) / 2 ** 64;
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('split rule', () => {
  it('hashU64 is the first 8 bytes of SHA-256, big-endian', () => {
    for (const k of ['a', 'django__django-11099', 'ünïcode/repo']) {
      expect(hashU64(k)).toBe(BigInt('0x' + createHash('sha256').update(k, 'utf8').digest('hex').slice(0, 16)));
      expect(hashU64(k, '7')).toBe(BigInt('0x' + createHash('sha256').update(`7:${k}`, 'utf8').digest('hex').slice(0, 16)));
    }
  });

  it('splitOf follows u / 2^64 < fraction (checked away from float rounding)', () => {
    let checked = 0;
    for (let i = 0; i < 3000; i++) {
      const key = `inst-${i}`;
      const u = unitOf(key);
      if (Math.abs(u - 0.1) < 1e-9) continue;
      expect(splitOf(key, 0.1)).toBe(u < 0.1 ? 'dev' : 'train');
      checked++;
    }
    expect(checked).toBeGreaterThan(2990);
  });

  it('fractions come out close to the request over many groups', () => {
    const n = 20000;
    let dev = 0;
    for (let i = 0; i < n; i++) if (splitOf(`g${i}`, 0.1) === 'dev') dev++;
    expect(dev / n).toBeGreaterThan(0.09);
    expect(dev / n).toBeLessThan(0.11);
    expect([...Array(100).keys()].every((i) => splitOf(`g${i}`, 0) === 'train')).toBe(true);
    expect([...Array(100).keys()].every((i) => splitOf(`g${i}`, 1) === 'dev')).toBe(true);
  });

  it('assignSplit uses cumulative fractions in the order given', () => {
    const specs = parseSplitSpecs(['dev=0.1', 'test=0.2']);
    const seen = { dev: 0, test: 0, train: 0 } as Record<string, number>;
    for (let i = 0; i < 5000; i++) {
      const key = `k${i}`;
      const u = unitOf(key);
      const s = assignSplit(key, specs);
      seen[s]!++;
      expect(s).toBe(u < 0.1 ? 'dev' : u < 0.1 + 0.2 ? 'test' : 'train');
      if (u < 0.1) expect(splitOf(key, 0.1)).toBe('dev');
    }
    expect(seen.test! / 5000).toBeGreaterThan(0.17);
  });

  it('a seed changes the assignment, deterministically', () => {
    const a = [...Array(200).keys()].map((i) => splitOf(`g${i}`, 0.5, 's1'));
    const b = [...Array(200).keys()].map((i) => splitOf(`g${i}`, 0.5, 's1'));
    const c = [...Array(200).keys()].map((i) => splitOf(`g${i}`, 0.5, 's2'));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  const bad: [string[], RegExp][] = [
    [['dev'], /NAME=FRACTION/],
    [['dev=0'], /between 0 and 1/],
    [['dev=1'], /between 0 and 1/],
    [['dev=abc'], /between 0 and 1/],
    [['train=0.1'], /"train" gets the rest/],
    [['dev=0.1', 'dev=0.2'], /twice/],
    [['dev=0.6', 'test=0.5'], /add up/],
    [['dev set=0.1'], /must match/],
  ];
  it.each(bad)('parseSplitSpecs(%j) is refused', (v, re) => {
    expect(() => parseSplitSpecs(v)).toThrow(re);
  });

  it('groups are disjoint across splits by instance and by repo', () => {
    const rnd = lcg(1);
    const rows = [...Array(3000).keys()].map(() => {
      const repo = `org${Math.floor(rnd() * 40)}/repo`;
      return { instance_id: `${repo.replace('/', '__')}-${Math.floor(rnd() * 30)}`, repo: rnd() < 0.05 ? null : repo };
    });
    for (const by of ['instance', 'repo'] as const) {
      const splitOfGroup = new Map<string, Set<string>>();
      const instSplits = new Map<string, Set<string>>();
      for (const r of rows) {
        const key = groupKeyOf(r, by);
        const s = splitOf(key, 0.2);
        (splitOfGroup.get(key) ?? splitOfGroup.set(key, new Set()).get(key)!).add(s);
        (instSplits.get(r.instance_id) ?? instSplits.set(r.instance_id, new Set()).get(r.instance_id)!).add(s);
      }
      for (const v of splitOfGroup.values()) expect(v.size).toBe(1);
      if (by === 'repo') {
        // instances of a repo share its split; null-repo rows fall back to their instance
        for (const r of rows) if (r.repo !== null) expect(splitOf(r.repo, 0.2)).toBe(splitOf(groupKeyOf(r, 'repo'), 0.2));
      } else for (const v of instSplits.values()) expect(v.size).toBe(1);
    }
    expect(groupKeyOf({ instance_id: 'i', repo: null }, 'repo')).toBe('i');
  });
});

describe('planShards', () => {
  function rowsFor(seed: number, groups: number) {
    const rnd = lcg(seed);
    const rows: { groupKey: string; bytes: number }[] = [];
    for (let g = 0; g < groups; g++) {
      const n = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < n; k++) rows.push({ groupKey: `inst-${g}`, bytes: 1000 + Math.floor(rnd() * 200000) });
    }
    return rows;
  }

  it.each([
    [1, 50, 1],
    [2, 50, 4],
    [3, 300, 8],
    [4, 7, 3],
  ])('seed %i: %i groups over %i shards are balanced and never split', (seed, groups, n) => {
    const rows = rowsFor(seed, groups);
    const plan = planShards(rows, n);
    expect(plan.count).toBe(n);
    const bytes = new Array(n).fill(0);
    const perGroup = new Map<string, number>();
    for (const r of rows) {
      const s = plan.shardOf.get(r.groupKey)!;
      bytes[s] += r.bytes;
      perGroup.set(r.groupKey, (perGroup.get(r.groupKey) ?? 0) + r.bytes);
    }
    expect(bytes).toEqual(plan.bytes);
    expect(plan.rows.reduce((a, b) => a + b, 0)).toBe(rows.length);
    // greedy list scheduling: the spread is at most the largest group
    const largest = Math.max(...perGroup.values());
    expect(Math.max(...bytes) - Math.min(...bytes)).toBeLessThanOrEqual(largest);
    // LPT bound against the lower bound of the optimum
    const lower = Math.max(largest, rows.reduce((a, r) => a + r.bytes, 0) / n);
    expect(Math.max(...bytes)).toBeLessThanOrEqual((4 / 3) * lower + 1e-9);
  });

  it('does not depend on input order', () => {
    const rows = rowsFor(9, 120);
    const shuffled = [...rows].sort((a, b) => (a.bytes % 7) - (b.bytes % 7) || a.bytes - b.bytes);
    expect([...planShards(shuffled, 5).shardOf.entries()].sort()).toEqual([...planShards(rows, 5).shardOf.entries()].sort());
  });

  it('breaks ties by key, then by lowest shard', () => {
    const plan = planShards(
      [
        { groupKey: 'b', bytes: 10 },
        { groupKey: 'a', bytes: 10 },
        { groupKey: 'c', bytes: 10 },
        { groupKey: 'd', bytes: 5 },
        { groupKey: 'd', bytes: 5 },
      ],
      2,
    );
    // order: a, b, c, d (all 10 bytes, key order); a->0, b->1, c->0, d->1
    expect(Object.fromEntries(plan.shardOf)).toEqual({ a: 0, b: 1, c: 0, d: 1 });
    expect(plan.bytes).toEqual([20, 20]);
    expect(plan.rows).toEqual([2, 3]);
  });

  it('never makes more shards than groups', () => {
    expect(planShards([{ groupKey: 'x', bytes: 5 }], 4).count).toBe(1);
    expect(planShards([], 4).count).toBe(1);
    expect(() => planShards([], 0)).toThrow(RangeError);
  });
});

describe('sizes and names', () => {
  it.each([
    ['200000', 200000],
    ['500MB', 500e6],
    ['500mb', 500e6],
    ['1.5GB', 1.5e9],
    ['64KiB', 65536],
    ['1GiB', 2 ** 30],
    ['10k', 10000],
  ])('parseByteSize(%s) = %d', (s, n) => {
    expect(parseByteSize(s)).toBe(n);
  });
  it.each(['', 'MB', '-5MB', '5XB', '0'])('parseByteSize(%j) is refused', (s) => {
    expect(() => parseByteSize(s)).toThrow(RangeError);
  });
  it('shard counts and file names', () => {
    expect(shardCountForBytes(0, 100)).toBe(1);
    expect(shardCountForBytes(1000, 100)).toBe(10);
    expect(shardCountForBytes(1001, 100)).toBe(11);
    expect(shardFileName('train', 3, 8, 'parquet')).toBe('train-00003-of-00008.parquet');
    expect(shardFileName('train', 0, 1, 'jsonl')).toBe('train-00000-of-00001.jsonl');
    expect(splitFileName('dev', 'parquet')).toBe('dev.parquet');
    expect(dataFilesPattern('train', 8, 'parquet')).toBe('train-*.parquet');
    expect(dataFilesPattern('dev', null, 'parquet', 'data/')).toBe('data/dev.parquet');
  });
});
