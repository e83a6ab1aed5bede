// `mine --partition i/N | auto | auto/N` and the `{i}` / `{N}` placeholders of the output paths:
// the option's parser and its resolution (from the scheduler's environment for `auto`), before any
// other check, so that every later check sees the paths this task really writes.
import { InvalidArgumentError } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { parsePartition, type Partition } from '../engine/partition.js';
import { LOOKED_FOR, resolveFromScheduler, type Env, type PartitionRequest, type Scheduler } from '../cluster/scheduler-env.js';
import { checkPlaceholders, expandPlaceholders, hasPlaceholders } from '../cluster/placeholders.js';

/** Where a run's partition came from, as the stats file records it (`partition_source`). */
export interface PartitionSource {
  /** null: given as i/N on the command line. */
  scheduler: Scheduler | null;
  /** What --partition said: `1/4`, `auto` or `auto/4`. */
  argument: string;
  variables?: Record<string, string>;
  ignored?: string[];
}

export interface RunPartition extends Partition {
  source: PartitionSource;
}

/** The parser of `--partition`: `i/N`, `auto` or `auto/N`. */
export function partitionArg(v: string): PartitionRequest {
  const t = v.trim();
  if (t === 'auto') return { auto: true, count: null };
  const auto = /^auto\/(\d{1,15})$/.exec(t);
  if (auto) {
    const count = Number(auto[1]);
    if (count < 1) throw new InvalidArgumentError(`need N >= 1 in auto/N, got "${v}"`);
    return { auto: true, count };
  }
  if (!/^\d{1,15}\/\d{1,15}$/.test(t)) throw new InvalidArgumentError(`expected i/N such as 0/4, auto (index and count from the scheduler) or auto/N, got "${v}"`);
  return { auto: false, ...parsePartition(t) };
}

function argumentText(r: PartitionRequest): string {
  return r.auto ? (r.count === null ? 'auto' : `auto/${r.count}`) : `${r.index}/${r.count}`;
}

const NAMES: Record<Scheduler, string> = { slurm: 'the Slurm array', kubernetes: 'the Kubernetes Indexed Job', 'aws-batch': 'the AWS Batch array job' };

export interface PathOptions {
  partition?: PartitionRequest;
  out: string;
  stats?: string;
  card?: string;
}

export interface ResolvedPartitionOptions<T extends PathOptions> {
  /** The options with `{i}` and `{N}` replaced in --out and --stats. */
  cli: T;
  partition: RunPartition | null;
  /** One line for stderr: where the partition came from (null without --partition auto). */
  note: string | null;
  warnings: string[];
}

/** Resolve `--partition` (reading `env` for `auto`) and the placeholders of --out and --stats. */
export function resolvePartitionOptions<T extends PathOptions>(o: T, env: Env): ResolvedPartitionOptions<T> {
  const paths = [
    ['--out', o.out],
    ['--stats', o.stats],
    ['--card', o.card],
  ] as const;
  for (const [flag, p] of paths) if (p !== undefined) checkPlaceholders(flag, p);
  const req = o.partition;
  if (!req) {
    const used = paths.find(([, p]) => p !== undefined && hasPlaceholders(p));
    if (used) throw new UserError(`${used[0]} ${used[1]}: the placeholders {i} and {N} need --partition (i/N, auto or auto/N)`, ExitCode.usage);
    return { cli: o, partition: null, note: null, warnings: [] };
  }
  let partition: RunPartition;
  const warnings: string[] = [];
  let note: string | null = null;
  if (!req.auto) {
    partition = { index: req.index, count: req.count, source: { scheduler: null, argument: argumentText(req) } };
  } else {
    const r = resolveFromScheduler(env, req.count);
    if (!r.ok) throw new UserError(r.message, ExitCode.usage);
    const p = r.partition;
    partition = {
      index: p.index,
      count: p.count,
      source: { scheduler: p.scheduler, argument: argumentText(req), variables: p.variables, ...(p.ignored.length > 0 ? { ignored: p.ignored } : {}) },
    };
    const vars = Object.entries(p.variables)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    note = `partition ${p.index}/${p.count} from ${NAMES[p.scheduler]} (${vars})`;
    if (p.ignored.length > 0) {
      const order = LOOKED_FOR.map((s) => s.variable).join(' > ');
      warnings.push(`--partition auto: took partition ${p.index}/${p.count} from ${NAMES[p.scheduler]}; also set, and ignored (precedence ${order}): ${p.ignored.join(' ')}`);
    }
  }
  const expand = (s: string | undefined) => (s === undefined ? undefined : expandPlaceholders(s, partition));
  const cli = { ...o, out: expand(o.out)!, ...(o.stats !== undefined ? { stats: expand(o.stats) } : {}) };
  return { cli, partition, note, warnings };
}
