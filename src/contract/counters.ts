// Contract section 7: the funnel counters, their identity, and the table printed at the end of a run.
import { formatCount } from '../count-text.js';

export const COUNTER_NAMES = [
  'trajectories_read',
  'duplicate_trajectory_ids',
  'unlabelled',
  'bad_rows',
  'malformed_arguments',
  'unknown_roles',
  'instances',
  'eligible_instances',
  'trajectories_extracted',
  'pairs_walked',
  'no_divergence',
  'environment_divergence',
  'near_duplicate',
  'exact_duplicate',
  'capped',
  'pairs_emitted',
  'divergence_turn_0',
] as const;

export type CounterName = (typeof COUNTER_NAMES)[number];
export type Counters = Record<CounterName, number>;

/** A funnel of named counters, all zero (this section's, and the tree pairing's). */
export function zeroCounts<N extends string>(names: readonly N[]): Record<N, number> {
  return Object.fromEntries(names.map((n) => [n, 0])) as Record<N, number>;
}

/** Add `from` into `into`, name by name; a name `from` lacks adds nothing. */
export function addCounts<N extends string>(names: readonly N[], into: Record<N, number>, from: Partial<Record<N, number>>): Record<N, number> {
  for (const n of names) into[n] += from[n] ?? 0;
  return into;
}

export function emptyCounters(): Counters {
  return zeroCounts(COUNTER_NAMES);
}

export function addCounters(into: Counters, from: Partial<Counters>): Counters {
  return addCounts(COUNTER_NAMES, into, from);
}

/** pairs_walked = no_divergence + environment + near_duplicate + exact_duplicate + capped + emitted. */
export function identityHolds(c: Counters): boolean {
  return (
    c.pairs_walked ===
    c.no_divergence + c.environment_divergence + c.near_duplicate + c.exact_duplicate + c.capped + c.pairs_emitted
  );
}

/** A violated identity is a bug in the miner, never a property of the input. */
export function assertIdentity(c: Counters): void {
  if (!identityHolds(c)) {
    throw new Error(
      `internal error: counter identity violated (pairs_walked=${c.pairs_walked}, ` +
        `sum of outcomes=${c.no_divergence + c.environment_divergence + c.near_duplicate + c.exact_duplicate + c.capped + c.pairs_emitted})`,
    );
  }
}

/**
 * Aligned two-column table with thousands separators, one counter per line. With `published` (the
 * figures of the published run, for a run over its input), a third column shows each published figure
 * beside the counter, marked when it differs.
 */
export function formatCounters(c: Counters, published?: Readonly<Partial<Counters>>): string {
  const width = Math.max(...COUNTER_NAMES.map((n) => n.length));
  const values = COUNTER_NAMES.map((n) => formatCount(c[n]));
  const vwidth = Math.max(...values.map((v) => v.length));
  const pwidth = Math.max(0, ...COUNTER_NAMES.map((n) => (published?.[n] === undefined ? 0 : formatCount(published[n]!).length)));
  const line = (n: CounterName, i: number): string => {
    const row = `${n.padEnd(width)}  ${values[i]!.padStart(vwidth)}`;
    const p = published?.[n];
    if (p === undefined) return row;
    return `${row}  published ${formatCount(p).padStart(pwidth)}${p === c[n] ? '' : '  differs'}`;
  };
  return COUNTER_NAMES.map(line).join('\n') + '\n';
}
