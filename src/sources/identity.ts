// Which attempt a row is, and of which task: the trajectory id and the instance of one row, for the
// sources whose columns do not hold them as they are (docs/mining-contract.md §10.1). One
// implementation for the streaming pipeline (engine/mine-pairs.ts, rows fed in read order) and for
// mineRows (engine/mine-rows.ts).
//
//   - Synthesised ids (an input without a run id, e.g. nebius/SWE-agent-trajectories): the id of a row
//     is `instance_id + "#" + n`, n = 1, 2, ... the row's position among the rows read with that
//     instance_id, in read order (§1.3: the inputs in command-line order, a folder's files by name,
//     then row order). Every row with a usable instance_id counts, labelled or not; a row whose
//     instance_id is missing counts for none. The id depends only on the input, never on workers,
//     the engine or the partition (every run reads every row). The ids are unique: the part after
//     the last "#" is digits, so the id gives back the instance and n.
//   - `--instance-from-id REGEX` (CoderForge: `^(.+)_run\d+$`): the instance is the first group of
//     REGEX matched on the trajectory id (the whole match when REGEX has no group). An id that does
//     not match gives no instance: the row is a bad row (§1.3), and the message says why.
//   - `--pair-within`: the group key of a row is fast-json-stable-stringify of the list of its values
//     of those columns (a missing value is null); see pairWithinKey.
import stableStringify from 'fast-json-stable-stringify';
import type { ColumnMapping, PairWithinColumn } from './schema.js';
import { instancePattern } from './schema.js';

export interface RowIdentityResult {
  trajectoryId: unknown;
  instanceId: unknown;
  /** Why the instance or id is missing when a rule made it so (for the bad-row message). */
  note?: string;
}

export class RowIdentity {
  private readonly synthesise: boolean;
  private readonly pattern: RegExp | null;
  private readonly seen = new Map<string, number>();

  constructor(private readonly mapping: ColumnMapping) {
    this.synthesise = Array.isArray(mapping.id) && mapping.id.length === 0;
    this.pattern = mapping.instanceFromId != null ? instancePattern(mapping.instanceFromId) : null;
  }

  /** True when the mapping's id and instance columns are used as they are. */
  get plain(): boolean {
    return !this.synthesise && this.pattern === null;
  }

  /** The row's id and instance from its raw id and instance values. Call once per row, in read order. */
  resolve(rawId: unknown, rawInstance: unknown): RowIdentityResult {
    if (this.pattern) {
      if (typeof rawId !== 'string' || rawId === '') return { trajectoryId: rawId, instanceId: null };
      const m = this.pattern.exec(rawId);
      const instance = m ? (m[1] ?? m[0]) : null;
      if (instance === null || instance === '') {
        return { trajectoryId: rawId, instanceId: null, note: `trajectory_id ${JSON.stringify(rawId)} ${m ? 'gives an empty instance' : 'does not match'} --instance-from-id ${this.mapping.instanceFromId}` };
      }
      return { trajectoryId: rawId, instanceId: instance };
    }
    if (this.synthesise) {
      if (typeof rawInstance !== 'string' || rawInstance === '') return { trajectoryId: null, instanceId: rawInstance, note: 'no run id to make without an instance_id' };
      const n = (this.seen.get(rawInstance) ?? 0) + 1;
      this.seen.set(rawInstance, n);
      return { trajectoryId: `${rawInstance}#${n}`, instanceId: rawInstance };
    }
    return { trajectoryId: rawId, instanceId: rawInstance };
  }
}

/** The value of one `--pair-within` column of a row: the column's value, then down the struct path. */
export function pairWithinValue(columnValue: unknown, p: PairWithinColumn): unknown {
  let v = columnValue;
  for (const k of p.path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return null;
    v = (v as Record<string, unknown>)[k];
  }
  return v ?? null;
}

/** The group key of a row under `--pair-within` (undefined without it): stable JSON of its values. */
export function pairWithinKey(mapping: ColumnMapping, value: (column: string) => unknown): string | undefined {
  const cols = mapping.pairWithin;
  if (!cols || cols.length === 0) return undefined;
  return stableStringify(cols.map((p) => jsonSafe(pairWithinValue(value(p.column), p))));
}

/** A BigInt (an int64 from a reader) has no JSON form: as a number (readers give numbers for the same values). */
function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  return v;
}
