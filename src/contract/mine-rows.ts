// The whole contract over rows already in memory: the library entry for small inputs and the
// reference the streaming pipeline (engine/mine-pairs.ts) is tested against.
import { assertIdentity, type Counters } from './counters.js';
import { dedupeKey, emitMessage, makeRow } from './emit.js';
import { UserError, ExitCode } from '../errors.js';
import { BadValue, normaliseMessage, type NormaliseTally } from './normalise.js';
import { withDefaults, type MiningOptions } from './options.js';
import { Indexer, type Selected } from './select.js';
import { actionSignature, comparisonKey } from './sign.js';
import type { Message, PairRow, RawMessage, ToolCall } from '../types.js';
import { assistantTurn, walkInstance, type Walkable } from './walk.js';

/** An input row as `datasets` returns it (extra columns are ignored). */
export interface InputRow {
  trajectory_id?: unknown;
  instance_id?: unknown;
  repo?: unknown;
  resolved?: unknown;
  trajectory?: unknown;
  [other: string]: unknown;
}

export class MemoryTrajectory implements Walkable {
  readonly keys: string[];
  constructor(
    readonly trajectoryId: string,
    readonly messages: Message[],
    reasoningKeys: ReadonlySet<string>,
  ) {
    this.keys = messages.map((m) => comparisonKey(m, reasoningKeys));
  }
  get length(): number {
    return this.messages.length;
  }
  role(i: number): string {
    return this.messages[i]!.role;
  }
  sameKey(i: number, other: MemoryTrajectory): boolean {
    return this.keys[i] === other.keys[i];
  }
}

/** Normalise a raw trajectory value; throws BadValue with the message index on bad input. */
export function normaliseTrajectory(value: unknown, tally: NormaliseTally): Message[] {
  if (!Array.isArray(value)) throw new BadValue(value == null ? 'trajectory is null' : 'trajectory is not a list');
  return value.map((m: RawMessage, i) => {
    try {
      return normaliseMessage(m, tally);
    } catch (e) {
      if (e instanceof BadValue) throw new BadValue(`message ${i}: ${e.message}`);
      throw e;
    }
  });
}

export interface MineResult {
  rows: PairRow[];
  counters: Counters;
}

export function mineRows(input: Iterable<InputRow>, options: Partial<MiningOptions> = {}, source = '<rows>'): MineResult {
  const opts = withDefaults(options);
  const reasoning = new Set(opts.reasoningKeys);
  const indexer = new Indexer<InputRow>({ seed: opts.seed, maxPerSide: opts.maxPerSide, skipBadRows: opts.skipBadRows });
  let n = 0;
  for (const row of input) {
    const at = n++;
    indexer.add(
      { trajectoryId: row.trajectory_id, instanceId: row.instance_id, repo: row.repo, resolved: row.resolved, loc: row },
      () => `${source}: row ${at}`,
    );
  }
  const { instances, counters } = indexer.finish();
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const load = (s: Selected<InputRow>): MemoryTrajectory | null => {
    // A local tally: a trajectory skipped as bad contributes nothing to the counters (as in encode.ts).
    const local: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
    try {
      const t = new MemoryTrajectory(s.trajectoryId, normaliseTrajectory(s.loc.trajectory, local), reasoning);
      tally.malformed_arguments += local.malformed_arguments;
      tally.unknown_roles += local.unknown_roles;
      return t;
    } catch (e) {
      if (!(e instanceof BadValue)) throw e;
      if (!opts.skipBadRows) throw new UserError(`${source}: trajectory ${s.trajectoryId}: ${e.message}`, ExitCode.badValue);
      counters.bad_rows++;
      return null;
    }
  };
  const rows: PairRow[] = [];
  for (const inst of instances) {
    const resolved = inst.resolved.map(load).filter((t): t is MemoryTrajectory => t !== null);
    const failed = inst.failed.map(load).filter((t): t is MemoryTrajectory => t !== null);
    const repo = inst.resolved[0]?.repo ?? null;
    const repoOf = new Map(inst.resolved.map((s) => [s.trajectoryId, s.repo]));
    rows.push(
      ...walkInstance(resolved, failed, opts, {
        signature: (t, i) => actionSignature(t.messages[i] as { content: string | null; tool_calls: ToolCall[] | null }, reasoning),
        dedupeKey: (r, f, i) =>
          dedupeKey({ prompt: r.messages.slice(0, i).map(emitMessage), chosen: emitMessage(r.messages[i]!), rejected: emitMessage(f.messages[i]!) }),
        buildRow: (r, f, i, similarity) =>
          makeRow(r.messages.slice(0, i).map(emitMessage), emitMessage(r.messages[i]!), emitMessage(f.messages[i]!), {
            instance_id: inst.instanceId,
            repo: repoOf.get(r.trajectoryId) ?? repo,
            chosen_trajectory_id: r.trajectoryId,
            rejected_trajectory_id: f.trajectoryId,
            divergence_turn: assistantTurn(r, i),
            divergence_msg_index: i,
            action_similarity: similarity,
          }),
      }, counters),
    );
  }
  counters.malformed_arguments += tally.malformed_arguments;
  counters.unknown_roles += tally.unknown_roles;
  assertIdentity(counters);
  return { rows, counters };
}
