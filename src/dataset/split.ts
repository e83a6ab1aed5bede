// `--split NAME=FRACTION --split-by instance|repo` and `--shards N` / `--shard-bytes SIZE`.
//
// Split rule (deterministic, group-disjoint): the group key is the row's `instance_id`
// (`--split-by instance`) or its `repo` (`--split-by repo`; a row with a null repo falls back to
// its `instance_id`). h = SHA-256 of the UTF-8 key (of `seed + ":" + key` when a seed is given);
// u = the first 8 bytes of h as a big-endian unsigned 64-bit integer. With splits
// NAME1=f1, NAME2=f2, ... in the order given: u < floor(f1 * 2^64) -> NAME1,
// u < floor((f1 + f2) * 2^64) -> NAME2, ..., otherwise `train`. Every row of a group gets the same
// split, so no instance (or repo) is in two splits, and adding rows never moves a group.
//
// Shard rule: all rows of a group (the instance, or the split group) go to one shard. Groups are
// taken largest total bytes first (ties: ascending key, JavaScript string order) and each goes to
// the shard with the fewest bytes so far (ties: lowest shard index) — the LPT greedy, which keeps
// the largest shard within 4/3 of the optimum. Row order inside a shard is the input order.
import { createHash } from 'node:crypto';

export type SplitBy = 'instance' | 'repo';

export interface SplitSpec {
  name: string;
  fraction: number;
}

const TWO_64 = 2n ** 64n;
const SPLIT_NAME = /^\w+(\.\w+)*$/; // the Hugging Face Hub's split-name pattern

/** First 8 bytes of SHA-256(seed:key or key) as an unsigned 64-bit integer. */
export function hashU64(key: string, seed?: string): bigint {
  const h = createHash('sha256')
    .update(seed === undefined ? key : `${seed}:${key}`, 'utf8')
    .digest();
  return h.readBigUInt64BE(0);
}

function threshold(fraction: number): bigint {
  if (fraction >= 1) return TWO_64;
  if (fraction <= 0) return 0n;
  // fraction * 2^64 is exact in binary floating point up to the double's 53-bit mantissa.
  return BigInt(Math.floor(fraction * 2 ** 64));
}

/** `--split` values ("dev=0.1", "test=0.05") -> specs. Names must be distinct, not `train`. */
export function parseSplitSpecs(values: readonly string[]): SplitSpec[] {
  const specs: SplitSpec[] = [];
  let total = 0;
  for (const v of values) {
    const m = /^([^=]+)=(.+)$/.exec(v.trim());
    if (!m) throw new RangeError(`--split must look like NAME=FRACTION (e.g. dev=0.1), got "${v}"`);
    const name = m[1]!.trim();
    const fraction = Number(m[2]);
    if (!SPLIT_NAME.test(name)) throw new RangeError(`--split name "${name}" must match ${SPLIT_NAME.source}`);
    if (name === 'train') throw new RangeError('--split names the held-out splits; "train" gets the rest');
    if (specs.some((s) => s.name === name)) throw new RangeError(`--split "${name}" is given twice`);
    if (!Number.isFinite(fraction) || fraction <= 0 || fraction >= 1)
      throw new RangeError(`--split ${name}: fraction must be between 0 and 1 (exclusive), got "${m[2]}"`);
    total += fraction;
    specs.push({ name, fraction });
  }
  if (total >= 1) throw new RangeError(`--split fractions add up to ${total}; they must leave some rows for train`);
  return specs;
}

/** The split a group key belongs to (see the rule at the top of this file). */
export function assignSplit(key: string, specs: readonly SplitSpec[], seed?: string): string {
  const u = hashU64(key, seed);
  let cum = 0;
  for (const s of specs) {
    cum += s.fraction;
    if (u < threshold(cum)) return s.name;
  }
  return 'train';
}

/** The one-split form: `dev` when u / 2^64 < devFraction, else `train`. */
export function splitOf(key: string, devFraction: number, seed?: string): 'dev' | 'train' {
  return hashU64(key, seed) < threshold(devFraction) ? 'dev' : 'train';
}

/** The group key of a row for `--split-by`. */
export function groupKeyOf(row: { instance_id: string; repo: string | null }, by: SplitBy): string {
  return by === 'repo' ? (row.repo ?? row.instance_id) : row.instance_id;
}

export interface ShardPlan {
  /** Number of shards (at most the number of groups, at least 1). */
  count: number;
  /** group key -> shard index. */
  shardOf: Map<string, number>;
  bytes: number[];
  rows: number[];
}

/**
 * Balance groups over `n` shards by bytes (see the rule at the top of this file). `rows` is any
 * iterable of {groupKey, bytes} (one entry per row; a group's bytes are summed). When there are
 * fewer groups than `n`, the plan has one shard per group (no empty shard files).
 */
export function planShards(rows: Iterable<{ groupKey: string; bytes: number }>, n: number): ShardPlan {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`shard count must be a positive integer, got ${n}`);
  const groups = new Map<string, { bytes: number; rows: number }>();
  for (const r of rows) {
    const g = groups.get(r.groupKey);
    if (g) {
      g.bytes += r.bytes;
      g.rows++;
    } else groups.set(r.groupKey, { bytes: r.bytes, rows: 1 });
  }
  const count = Math.max(1, Math.min(n, groups.size));
  const order = [...groups.entries()].sort((a, b) =>
    b[1].bytes !== a[1].bytes ? b[1].bytes - a[1].bytes : a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0,
  );
  const bytes = new Array<number>(count).fill(0);
  const rowCounts = new Array<number>(count).fill(0);
  const shardOf = new Map<string, number>();
  for (const [key, g] of order) {
    let best = 0;
    for (let s = 1; s < count; s++) if (bytes[s]! < bytes[best]!) best = s;
    shardOf.set(key, best);
    bytes[best]! += g.bytes;
    rowCounts[best]! += g.rows;
  }
  return { count, shardOf, bytes, rows: rowCounts };
}

/** Shards needed so that each holds about `shardBytes` (`--shard-bytes`): ceil(total / size), >= 1. */
export function shardCountForBytes(totalBytes: number, shardBytes: number): number {
  if (!(shardBytes > 0)) throw new RangeError(`shard size must be positive, got ${shardBytes}`);
  return Math.max(1, Math.ceil(totalBytes / shardBytes));
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * `--shard-bytes` values: a number with an optional unit. KB/MB/GB are decimal (1 MB = 10^6 bytes,
 * as `datasets`' `max_shard_size`), KiB/MiB/GiB binary; case-insensitive ("500MB", "1.5GiB", "200000").
 */
export function parseByteSize(s: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(s);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new RangeError(`not a size: "${s}" (examples: 500MB, 1GiB, 200000)`);
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1) throw new RangeError(`size must be at least 1 byte, got "${s}"`);
  return bytes;
}

function pad5(n: number): string {
  return String(n).padStart(5, '0');
}

/** `train-00003-of-00008.parquet` (0-based index, as the Hub's own shards). */
export function shardFileName(split: string, index: number, count: number, ext: string): string {
  return `${split}-${pad5(index)}-of-${pad5(count)}.${ext}`;
}

/** An unsharded split: `dev.parquet`. */
export function splitFileName(split: string, ext: string): string {
  return `${split}.${ext}`;
}

/** The Hub `data_files` pattern for a split written as `count` shards (or one file). */
export function dataFilesPattern(split: string, count: number | null, ext: string, dir = ''): string {
  const prefix = dir === '' ? '' : dir.replace(/\/+$/, '') + '/';
  return count === null ? `${prefix}${splitFileName(split, ext)}` : `${prefix}${split}-*.${ext}`;
}
