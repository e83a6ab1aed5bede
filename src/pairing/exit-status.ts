// Failure-cause filters (`--rejected-exit-status`, `--exclude-exit-status`; docs/tree-pairing.md
// "Failure-cause filters"), for both pairings. They act on labelled rows after the contract's row
// checks (§1.3) and before grouping (§4.1), so eligibility and sampling see only the attempts kept.
// Row level: every partition of a run counts the same values.

export interface ExitStatusFilter {
  /** Failed attempts may be rejected only with one of these exit statuses (null: any). */
  rejected: readonly string[] | null;
  /** Attempts (either label) with one of these exit statuses are left out (null: none). */
  exclude: readonly string[] | null;
}

/** The upstream column the filters read. */
export const EXIT_STATUS_COLUMN = 'exit_status';

export interface ExitStatusTally {
  /** Attempts left out by --exclude-exit-status. */
  excluded: number;
  /** Failed attempts left out by --rejected-exit-status. */
  not_rejectable: number;
  /** Exit statuses of the labelled rows seen (before filtering), by label. */
  observed: Record<string, { resolved: number; failed: number }>;
}

export function emptyExitStatusTally(): ExitStatusTally {
  return { excluded: 0, not_rejectable: 0, observed: Object.create(null) as ExitStatusTally['observed'] };
}

/** A null or non-string exit status is its JSON text (`null`), which no list given on the command line holds unless it names `null`. */
export function statusText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v) ?? String(v);
}

/**
 * Keep this labelled attempt? Counts what it leaves out, and every status it sees, into `tally`.
 * --exclude-exit-status is checked first: an excluded failed attempt counts as excluded only.
 */
export function admitExitStatus(f: ExitStatusFilter, label: 'resolved' | 'failed', status: unknown, tally: ExitStatusTally): boolean {
  const s = statusText(status);
  const o = (tally.observed[s] ??= { resolved: 0, failed: 0 });
  o[label]++;
  if (f.exclude && f.exclude.includes(s)) {
    tally.excluded++;
    return false;
  }
  if (label === 'failed' && f.rejected && !f.rejected.includes(s)) {
    tally.not_rejectable++;
    return false;
  }
  return true;
}
