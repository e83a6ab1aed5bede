// Contract sections 1 and 4: the first pass over id / instance / label, duplicate ids, bad rows,
// grouping by instance, eligibility and the per-side SHA-256 rank sampling.
import { emptyCounters, type Counters } from './counters.js';
import { UserError, ExitCode } from '../errors.js';
import { compareStrings, labelOf, pickRanked, rankKey } from './sample.js';

export interface SelectOptions {
  seed: string;
  maxPerSide: number;
  skipBadRows: boolean;
  /**
   * Options beyond the contract (e.g. the exit-status filters, src/pairing/exit-status.ts): a labelled
   * row that passed the row checks (§1.3) and is refused here takes no further part; the caller counts it.
   */
  admit?: (rec: IndexRecord<unknown>, label: 'resolved' | 'failed') => boolean;
}

/** One row as the first pass sees it. `loc` tells the second pass where to find the trajectory. */
export interface IndexRecord<L> {
  trajectoryId: unknown;
  instanceId: unknown;
  repo: unknown;
  resolved: unknown;
  loc: L;
  /** A value only `admit` reads (e.g. the row's exit_status). */
  extra?: unknown;
  /**
   * `--pair-within` (docs/mining-contract.md §10.8): the row's group within its instance. Rows of
   * one instance with different groups are never paired: sampling, the walk, the cap and the
   * exact-duplicate scope work on (instance, group) as they do on the instance without it.
   */
  group?: string;
}

export interface Selected<L> {
  trajectoryId: string;
  instanceId: string;
  repo: string | null;
  rank: string;
  loc: L;
}

export interface SelectedInstance<L> {
  instanceId: string;
  /** The `--pair-within` group (absent without the option). */
  group?: string;
  /** Rank order, at most maxPerSide each. */
  resolved: Selected<L>[];
  failed: Selected<L>[];
}

export interface Selection<L> {
  /** Eligible instances in ascending instance_id (JavaScript string order). */
  instances: SelectedInstance<L>[];
  counters: Counters;
}

function requiredString(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export class Indexer<L> {
  private readonly seen = new Set<string>();
  private readonly groups = new Map<string, { instanceId: string; group?: string; resolved: Selected<L>[]; failed: Selected<L>[] }>();
  /** One string per repository: rows share it (memory per row matters at 4x the real file). */
  private readonly repos = new Map<string, string>();
  readonly counters: Counters = emptyCounters();

  constructor(private readonly opts: SelectOptions) {}

  /** `where()` names the file and row for an error message; only called on error. */
  add(rec: IndexRecord<L>, where: () => string): void {
    this.counters.trajectories_read++;
    const id = requiredString(rec.trajectoryId);
    const instance = requiredString(rec.instanceId);
    const repoOk = rec.repo == null || typeof rec.repo === 'string';
    if (id === null || instance === null || !repoOk) {
      const what = id === null ? 'trajectory_id' : instance === null ? 'instance_id' : 'repo';
      const problem = what === 'repo' ? 'is not a string' : 'is null or empty';
      if (!this.opts.skipBadRows) {
        throw new UserError(`${where()}: ${what} ${problem} (use --skip-bad-rows to count and skip such rows)`, ExitCode.badValue);
      }
      this.counters.bad_rows++;
      return;
    }
    if (this.seen.has(id)) {
      this.counters.duplicate_trajectory_ids++;
      return;
    }
    this.seen.add(id);
    const label = labelOf(rec.resolved);
    if (label === 'unlabelled') {
      this.counters.unlabelled++;
      return;
    }
    if (this.opts.admit && !this.opts.admit(rec, label)) return;
    const groupKey = rec.group === undefined ? instance : `${instance}\u0000${rec.group}`;
    let g = this.groups.get(groupKey);
    if (!g) this.groups.set(groupKey, (g = rec.group === undefined ? { instanceId: instance, resolved: [], failed: [] } : { instanceId: instance, group: rec.group, resolved: [], failed: [] }));
    let repo = (rec.repo as string | null) ?? null;
    if (repo !== null) {
      const known = this.repos.get(repo);
      if (known === undefined) this.repos.set(repo, repo);
      else repo = known;
    }
    // The rank is computed in finish(), for eligible instances only (most rows never need one).
    const sel: Selected<L> = { trajectoryId: id, instanceId: g.instanceId, repo, rank: '', loc: rec.loc };
    (label === 'resolved' ? g.resolved : g.failed).push(sel);
  }

  /** Group, check eligibility and sample. `keep` restricts the run to some instances (partitions). */
  finish(keep: (instanceId: string) => boolean = () => true): Selection<L> {
    const c = this.counters;
    const instances: SelectedInstance<L>[] = [];
    // Instances in §5.0 order; the groups of one instance (--pair-within) by their key.
    const order = [...this.groups.values()].sort((a, b) => compareStrings(a.instanceId, b.instanceId) || compareStrings(a.group ?? '', b.group ?? ''));
    for (const g of order) {
      const instanceId = g.instanceId;
      if (!keep(instanceId)) continue;
      c.instances++;
      if (g.resolved.length === 0 || g.failed.length === 0) continue;
      c.eligible_instances++;
      for (const x of [...g.resolved, ...g.failed]) x.rank = rankKey(this.opts.seed, x.trajectoryId);
      const resolved = pickRanked(g.resolved, this.opts.maxPerSide);
      const failed = pickRanked(g.failed, this.opts.maxPerSide);
      c.trajectories_extracted += resolved.length + failed.length;
      instances.push(g.group === undefined ? { instanceId, resolved, failed } : { instanceId, group: g.group, resolved, failed });
    }
    return { instances, counters: c };
  }
}
