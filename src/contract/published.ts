// The published reference run (docs/mining-contract.md §7.3): the one place its figures live, how its
// input is recognised, and the comparison a run over that input prints and records.
import { COUNTER_NAMES, type CounterName, type Counters } from './counters.js';
import { DEFAULT_OPTIONS, type MiningOptions } from './options.js';

/** The input of the published run: nebius/SWE-rebench-openhands-trajectories, `trajectories.parquet`. */
export const PUBLISHED_INPUT = {
  dataset: 'nebius/SWE-rebench-openhands-trajectories',
  file: 'trajectories.parquet',
  bytes: 2_079_503_354,
  rows: 67_074,
} as const;

/** The counters the published run reports (the others were not published). */
export const PUBLISHED_COUNTERS: Readonly<Partial<Counters>> = {
  trajectories_read: 67_074,
  instances: 6_306,
  eligible_instances: 1_741,
  trajectories_extracted: 8_757,
  environment_divergence: 493,
  near_duplicate: 726,
  exact_duplicate: 1_670,
  pairs_emitted: 5_420,
  divergence_turn_0: 673,
};

/** What a run knows about its input when it ends. */
export interface RunInput {
  /** Size of each input file, in input order. */
  files: readonly { bytes: number }[];
  /** Rows read over all inputs (the `trajectories_read` counter). */
  rows: number;
}

export type RecognisePublished = (input: RunInput) => boolean;

/** Exactly one input file with the upstream file's size and row count. */
export const isPublishedInput: RecognisePublished = (input) =>
  input.files.length === 1 && input.files[0]!.bytes === PUBLISHED_INPUT.bytes && input.rows === PUBLISHED_INPUT.rows;

export interface PublishedComparison {
  dataset: string;
  /** One entry per published counter, in counter order. */
  counters: { counter: CounterName; published: number; actual: number; differs: boolean }[];
  /** The names of the counters that differ (empty when the run reproduces the published figures). */
  differs: CounterName[];
  /** The run used the contract's default options (the published run did). */
  default_options: boolean;
}

/** The comparison with the published run, or null when the input is not the published input. */
export function comparePublished(
  counters: Counters,
  input: RunInput,
  defaultOptions: boolean,
  recognise: RecognisePublished = isPublishedInput,
): PublishedComparison | null {
  if (!recognise(input)) return null;
  const rows = COUNTER_NAMES.filter((n) => PUBLISHED_COUNTERS[n] !== undefined).map((n) => {
    const published = PUBLISHED_COUNTERS[n]!;
    return { counter: n, published, actual: counters[n], differs: counters[n] !== published };
  });
  return { dataset: PUBLISHED_INPUT.dataset, counters: rows, differs: rows.filter((r) => r.differs).map((r) => r.counter), default_options: defaultOptions };
}

/** The line after the counters table that says whether the run reproduces the published figures. */
export function publishedVerdict(c: PublishedComparison): string {
  const opts = c.default_options ? '' : ' (this run does not use the default options, the published run did)';
  if (c.differs.length === 0) return `published run (${c.dataset}): all ${c.counters.length} published counters reproduced${opts}\n`;
  return `published run (${c.dataset}): ${c.differs.length} of ${c.counters.length} published counters differ: ${c.differs.join(', ')}${opts}\n`;
}

/** The options that change which pairs are kept are the contract's defaults (as in the published run). */
export function usesDefaultOptions(o: MiningOptions): boolean {
  const d = DEFAULT_OPTIONS;
  return (
    o.maxPerSide === d.maxPerSide &&
    o.maxPairsPerInstance === d.maxPairsPerInstance &&
    o.minSimilaritySkip === d.minSimilaritySkip &&
    o.seed === d.seed &&
    o.reasoningKeys.length === d.reasoningKeys.length &&
    o.reasoningKeys.every((k, i) => k === d.reasoningKeys[i])
  );
}
