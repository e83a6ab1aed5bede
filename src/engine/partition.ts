// Partitioned runs (--partition i/N) and what `merge` needs to prove partitions belong together.
// Pairs never cross instances, so instances partition the job: an instance belongs to partition
// uint64_be(SHA-256(instance_id)[0..8]) mod N.
import { closeSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from 'commander';
import type { CounterName } from '../contract/counters.js';
import type { InputFile } from '../io/inputs.js';

export interface Partition {
  index: number;
  count: number;
}

export function parsePartition(v: string): Partition {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError(`expected i/N such as 0/4, got "${v}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw new InvalidArgumentError(`need 0 <= i < N, got ${index}/${count}`);
  return { index, count };
}

export function partitionOf(instanceId: string, count: number): number {
  const h = createHash('sha256').update(instanceId, 'utf8').digest();
  return Number(h.readBigUInt64BE(0) % BigInt(count));
}

/**
 * Counters computed over every row, before instances are partitioned: every partition reports the
 * same value, and a merge keeps one. All other counters add up across partitions.
 */
export const ROW_LEVEL_COUNTERS: readonly CounterName[] = ['trajectories_read', 'duplicate_trajectory_ids', 'unlabelled'];

const EDGE = 64 * 1024;

/**
 * Content fingerprint of the inputs: size plus SHA-256 of the first and last 64 KiB of each file,
 * in order. Cheap on multi-GB files, and independent of where the file sits on each machine.
 */
export function fingerprintInputs(inputs: readonly InputFile[]): string {
  const h = createHash('sha256');
  for (const f of inputs) {
    h.update(`${f.kind}:${f.bytes}:`);
    // A Hub file is also the commit it was read at: partitions that read different commits never merge.
    if (f.source) h.update(`hf:${f.source.repo}@${f.source.commit}/${f.source.path}:`);
    const fd = openSync(f.path, 'r');
    try {
      const head = Buffer.alloc(Math.min(EDGE, f.bytes));
      readSync(fd, head, 0, head.length, 0);
      const tailLen = Math.min(EDGE, f.bytes);
      const tail = Buffer.alloc(tailLen);
      readSync(fd, tail, 0, tailLen, f.bytes - tailLen);
      h.update(head).update(tail);
    } finally {
      closeSync(fd);
    }
  }
  return h.digest('hex');
}
