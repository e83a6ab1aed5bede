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
  rows: PairRow[];
  counters: Counters;
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
): MineResult {
  function* records(): Generator<[IndexRecord<InputRow>, () => string]> {
    let n = 0;
    for (const row of input) {
      const at = n++;
      yield [{ trajectoryId: row.trajectory_id, instanceId: row.instance_id, repo: row.repo, resolved: row.resolved, loc: row }, () => `${source}: row ${at}`];
    }
  }
  return mineRecords(records(), options, source, scheme);
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
      const rec: IndexRecord<InputRow> = { trajectoryId: who.trajectoryId, instanceId: who.instanceId, repo: std.repo, resolved: std.resolved, loc: std };
      const where = `${source}: row ${at++}`;
      yield [group === undefined ? rec : { ...rec, group }, () => (who.note ? `${where} (${who.note})` : where)];
    }
  }
  return { ...mineRecords(records(), options, source, signatureSchemeOf(schema)), detection };
}

function mineRecords(
  input: Iterable<[IndexRecord<InputRow>, () => string]>,
  options: Partial<MiningOptions>,
  source: string,
  scheme: SignatureScheme,
): MineResult {
  const opts = withDefaults(options);
  const reasoning = new Set(opts.reasoningKeys);
  const indexer = new Indexer<InputRow>({ seed: opts.seed, maxPerSide: opts.maxPerSide, skipBadRows: opts.skipBadRows });
  for (const [rec, where] of input) indexer.add(rec, where);
  const { instances, counters } = indexer.finish();
  // Pass 2 as a worker runs it: encode every extracted trajectory into the spill, in selection order.
  const store = new MemorySpillWriter();
  const tally: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  const encode = (s: Selected<InputRow>, key: number): SpillTrajectory | null => {
    const t = encodeTrajectory(key, s.loc.trajectory, reasoning, tally, store, scheme);
    if (t.bad !== undefined) {
      if (!opts.skipBadRows) throw new UserError(`${source}: trajectory ${s.trajectoryId}: ${t.bad}`, ExitCode.badValue);
      counters.bad_rows++;
      return null;
    }
    const block = store.appendIndexBlock(t.offsets, t.roles, t.hashes);
    return new SpillTrajectory(s.trajectoryId, s.repo, { length: t.roles.length, block }, MEMORY_SPILL_PATH);
  };
  let key = 0;
  const sides = instances.map((inst) => {
    const side = (list: Selected<InputRow>[]) => list.map((s) => encode(s, key++)).filter((t): t is SpillTrajectory => t !== null);
    return { inst, resolved: side(inst.resolved), failed: side(inst.failed) };
  });
  // Pass 3: the walk over the spill, instance by instance in order.
  const reader = new MemorySpillReader(store);
  const rows: PairRow[] = [];
  for (const { inst, resolved, failed } of sides) {
    for (const t of [...resolved, ...failed]) t.load(reader);
    rows.push(...walkInstance(resolved, failed, opts, hooksFor(inst, reader, null), counters));
    for (const t of [...resolved, ...failed]) t.unload();
  }
  counters.malformed_arguments += tally.malformed_arguments;
  counters.unknown_roles += tally.unknown_roles;
  assertIdentity(counters);
  return { rows, counters };
}
