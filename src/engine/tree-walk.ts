// The tree pairing over spilled trajectories (docs/tree-pairing.md): an instance's tree is built
// from the comparison-key hashes of the trajectories' spill records (spill-walk.ts); messages are
// read back whole only for the representatives of the rows that are kept (and the signatures of
// the candidate actions).
import { createHash } from 'node:crypto';
import { makeRow } from '../contract/emit.js';
import { assistantTurn } from '../contract/walk.js';
import { treePairs, type TreeAttempt, type TreeCounters, type TreeHooks, type TreeOptions, type TreePair } from '../pairing/tree.js';
import type { SpillReader } from './spill.js';
import type { SpillTrajectory } from './spill-walk.js';

/** A spilled trajectory (index block loaded) with its label and rank. */
export class SpillAttempt implements TreeAttempt {
  constructor(
    readonly t: SpillTrajectory,
    readonly resolved: boolean,
    readonly rank: string,
  ) {}
  get trajectoryId(): string {
    return this.t.trajectoryId;
  }
  get length(): number {
    return this.t.length;
  }
  keyAt(i: number): string {
    return this.t.keyHash(i);
  }
  role(i: number): string {
    return this.t.role(i);
  }
}

/** Both sides of an instance in one rank order (ranks are unique: ids are). */
export function rankOrder(attempts: SpillAttempt[]): SpillAttempt[] {
  return attempts.sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
}

export function treeHooks(instanceId: string, reader: SpillReader): TreeHooks<SpillAttempt> {
  return {
    signature: (a, i) => a.t.signature(reader, i),
    // As the contract's walk (spill-walk.ts): the emitted-form hashes of prompt, chosen and rejected
    // (16 bytes each, so prompts of different lengths never collide) stand for their stable JSON.
    dedupeKey: (p, c, r, i) => {
      const h = createHash('sha256');
      if (i > 0) {
        p.t.emittedHash(reader, i - 1, true);
        for (let j = 0; j < i; j++) h.update(p.t.emittedHash(reader, j, true));
      }
      h.update(c.t.emittedHash(reader, i, false));
      h.update(r.t.emittedHash(reader, i, false));
      return h.digest('base64');
    },
    buildRow: (p, c, r, i, similarity) =>
      makeRow(i > 0 ? p.t.messages(reader, i - 1) : [], c.t.message(reader, i), r.t.message(reader, i), {
        instance_id: instanceId,
        repo: c.t.repo,
        chosen_trajectory_id: c.trajectoryId,
        rejected_trajectory_id: r.trajectoryId,
        divergence_turn: assistantTurn(p.t, i),
        divergence_msg_index: i,
        action_similarity: similarity,
      }),
  };
}

/** The tree pairs of one instance; every attempt's index block must be loaded. */
export function walkTreeInstance(instanceId: string, attempts: SpillAttempt[], opts: TreeOptions, reader: SpillReader, counters: TreeCounters, gaps: number[]): TreePair<SpillAttempt>[] {
  return treePairs(rankOrder(attempts), opts, treeHooks(instanceId, reader), counters, gaps);
}
