// The whole contract over rows already in memory, the library entry for small inputs. It runs the
// streaming pipeline's own stages (select.ts, encode.ts, spill-walk.ts, walk.ts) over a spill store
// kept in memory (memory-spill.ts): only the reading of rows differs from `minePairs`, so the
// contract has one implementation.
import { assertIdentity, type Counters } from '../contract/counters.js';
import { encodeTrajectory, type SignatureScheme } from './encode.js';
import { UserError, ExitCode } from '../errors.js';
import { MEMORY_SPILL_PATH, MemorySpillReader, MemorySpillWriter } from './memory-spill.js';
import type { NormaliseTally } from '../contract/normalise.js';
import { withDefaults, type MiningOptions } from '../contract/options.js';
import { Indexer, type IndexRecord, type Selected } from '../contract/select.js';
import { detectSchema, toStandardRow, type Detection, type SchemaOverrides } from '../sources/schema.js';
import { RowIdentity, pairWithinKey } from '../sources/identity.js';
import { signatureSchemeOf } from '../sources/text-actions.js';
import { SpillTrajectory, hooksFor } from './spill-walk.js';
import type { PairRow } from '../types.js';
import { walkInstance } from '../contract/walk.js';
import { assertTreeIdentity, emptyGapHistogram, emptyTreeCounters, type TreeCounters, type TreeFields, type TreeOptions } from '../pairing/tree.js';
import { admitExitStatus, emptyExitStatusTally, type ExitStatusFilter, type ExitStatusTally } from '../pairing/exit-status.js';
import { SpillAttempt, walkTreeInstance } from './tree-walk.js';

export { normaliseTrajectory } from '../contract/normalise.js';

/** An input row as `datasets` returns it (extra columns are ignored). */
export interface InputRow {
  trajectory_id?: unknown;
  instance_id?: unknown;
  repo?: unknown;
  resolved?: unknown;
  trajectory?: unknown;
  [other: string]: unknown;
}

export interface MineResult {
  /** With `tree`: each row also carries its TreeFields after the contract's fields. */
  rows: PairRow[];
  counters: Counters;
  /** `tree`: the tree funnel and the histogram of emitted value gaps. */
  tree?: { counters: TreeCounters; gaps: number[] };
  exitStatus?: ExitStatusTally;
}

/** Beyond the contract: the tree pairing and the exit-status filters (on each row's `exit_status`). */
export interface MineRowsExtra {
  tree?: TreeOptions;
  exitStatus?: ExitStatusFilter;
}

/**
 * Mine `input` by the contract. `scheme` 'text-actions' signs text-only replies as the
 * `text-actions` source schema does (sources/text-actions.ts).
 */
export function mineRows(
  input: Iterable<InputRow>,
  options: Partial<MiningOptions> = {},
  source = '<rows>',
  scheme: SignatureScheme = 'contract',
  extra: MineRowsExtra = {},
): MineResult {
  function* records(): Generator<[IndexRecord<InputRow>, () => string]> {
    let n = 0;
    for (const row of input) {
      const at = n++;
      yield [{ trajectoryId: row.trajectory_id, instanceId: row.instance_id, repo: row.repo, resolved: row.resolved, loc: row, extra: row.exit_status }, () => `${source}: row ${at}`];
    }
  }
  return mineRecords(records(), options, source, scheme, extra);
}

/**
 * Mine rows of any known source as `mine` does: the layout detected from the first row (or given by
 * `overrides`, the CLI's --source / --schema / column options), then the same source rules as the
 * streaming pipeline (sources/: messages, ids, --instance-from-id, --pair-within) and the contract.
 */
export function mineSourceRows(
  input: readonly Record<string, unknown>[],
  options: Partial<MiningOptions> = {},
  overrides: SchemaOverrides = {},
  source = '<rows>',
  extra: MineRowsExtra = {},
): MineResult & { detection: Detection } {
  const first = input[0] ?? {};
  const detection = detectSchema(Object.keys(first), input.length > 0 ? first : undefined, overrides);
  const { mapping, schema } = detection;
  const identity = new RowIdentity(mapping);
  function* records(): Generator<[IndexRecord<InputRow>, () => string]> {
    let at = 0;
    for (const row of input) {
      const std = toStandardRow(row, mapping, schema);
      const who = identity.resolve(std.trajectory_id, std.instance_id);
      const group = pairWithinKey(mapping, (c) => row[c]);
      const rec: IndexRecord<InputRow> = { trajectoryId: who.trajectoryId, instanceId: who.instanceId, repo: std.repo, resolved: std.resolved, loc: std, extra: row.exit_status };
      const where = `${source}: row ${at++}`;
      yield [group === undefined ? rec : { ...rec, group }, () => (who.note ? `${where} (${who.note})` : where)];
    }
  }
  return { ...mineRecords(records(), options, source, signatureSchemeOf(schema), extra), detection };
}

function mineRecords(
  input: Iterable<[IndexRecord<InputRow>, () => string]>,
  options: Partial<MiningOptions>,
  source: string,
  scheme: SignatureScheme,
  extra: MineRowsExtra,
): MineResult {
  const opts = withDefaults(options);
  const reasoning = new Set(opts.reasoningKeys);
  const tally = extra.exitStatus ? emptyExitStatusTally() : null;
  const filter = extra.exitStatus;
  const indexer = new Indexer<InputRow>({
    seed: opts.seed,
    maxPerSide: extra.tree ? Number.MAX_SAFE_INTEGER : opts.maxPerSide,
    skipBadRows: opts.skipBadRows,
    ...(filter && tally ? { admit: (rec, label) => admitExitStatus(filter, label, rec.extra, tally) } : {}),
  });
  for (const [rec, where] of input) indexer.add(rec, where);
  const { instances, counters } = indexer.finish();
  // Pass 2 as a worker runs it: encode every extracted trajectory into the spill, in selection order.
  const store = new MemorySpillWriter();
  const normTally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const encode = (s: Selected<InputRow>, key: number): SpillTrajectory | null => {
    const t = encodeTrajectory(key, s.loc.trajectory, reasoning, normTally, store, scheme);
    if (t.bad !== undefined) {
      if (!opts.skipBadRows) throw new UserError(`${source}: trajectory ${s.trajectoryId}: ${t.bad}`, ExitCode.badValue);
      counters.bad_rows++;
      return null;
    }
    const block = store.appendIndexBlock(t.offsets, t.roles);
    return new SpillTrajectory(s.trajectoryId, s.repo, { length: t.roles.length, block }, MEMORY_SPILL_PATH);
  };
  let key = 0;
  const ranks = new Map<SpillTrajectory, string>();
  const sides = instances.map((inst) => {
    const side = (list: Selected<InputRow>[]) =>
      list
        .map((s) => {
          const t = encode(s, key++);
          if (t) ranks.set(t, s.rank);
          return t;
        })
        .filter((t): t is SpillTrajectory => t !== null);
    return { inst, resolved: side(inst.resolved), failed: side(inst.failed) };
  });
  // Pass 3: the walk over the spill, instance by instance in order.
  const reader = new MemorySpillReader(store);
  const rows: PairRow[] = [];
  const done = (): MineResult => {
    counters.malformed_arguments += normTally.malformed_arguments;
    counters.unknown_roles += normTally.unknown_roles;
    assertIdentity(counters);
    return { rows, counters, ...(tally ? { exitStatus: tally } : {}) };
  };
  if (extra.tree) {
    const tc = emptyTreeCounters();
    const gaps = emptyGapHistogram();
    for (const { inst, resolved, failed } of sides) {
      const attempts = [...resolved.map((t) => new SpillAttempt(t.load(reader), true, ranks.get(t)!)), ...failed.map((t) => new SpillAttempt(t.load(reader), false, ranks.get(t)!))];
      for (const p of walkTreeInstance(inst.instanceId, attempts, extra.tree, reader, tc, gaps)) rows.push({ ...p.row, ...p.tree } as PairRow & TreeFields);
      for (const a of attempts) a.t.unload();
    }
    assertTreeIdentity(tc);
    return { ...done(), tree: { counters: tc, gaps } };
  }
  for (const { inst, resolved, failed } of sides) {
    for (const t of [...resolved, ...failed]) t.load(reader);
    rows.push(...walkInstance(resolved, failed, opts, hooksFor(inst, reader, null), counters));
    for (const t of [...resolved, ...failed]) t.unload();
  }
  return done();
}
