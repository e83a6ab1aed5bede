// The contract's tunable rules and their defaults (contract sections 3-5).
import { DEFAULT_REASONING_KEYS } from './sign.js';

/**
 * Mining contract version (v2: norm splits lines on "\n" only; keys compare as UTF-16 strings;
 * v3: numbers in arguments are written with their source text, compared by value as before;
 * v4: a folder the run must write in that is missing or refuses files is exit 3, not 8).
 */
export const CONTRACT_VERSION = 4;

/**
 * For each contract version, the oldest version whose rows and counters it shares. v4 changed only
 * an exit code, so v3 and v4 partitions are parts of one run and `merge` combines them.
 */
const SAME_ROWS_SINCE: Readonly<Record<number, number>> = Object.freeze({ 1: 1, 2: 2, 3: 3, 4: 3 });

/** Whether partitions mined under contract versions `a` and `b` give the rows of one run. */
export function sameRows(a: unknown, b: unknown): boolean {
  const ra = typeof a === 'number' ? SAME_ROWS_SINCE[a] : undefined;
  const rb = typeof b === 'number' ? SAME_ROWS_SINCE[b] : undefined;
  return ra !== undefined ? ra === rb : a === b;
}

export interface MiningOptions {
  maxPerSide: number;
  maxPairsPerInstance: number;
  minSimilaritySkip: number;
  seed: string;
  reasoningKeys: readonly string[];
  skipBadRows: boolean;
}

export const DEFAULT_OPTIONS: Readonly<MiningOptions> = Object.freeze({
  maxPerSide: 3,
  maxPairsPerInstance: 4,
  minSimilaritySkip: 0.95,
  seed: '0',
  reasoningKeys: DEFAULT_REASONING_KEYS,
  skipBadRows: false,
});

export function withDefaults(o: Partial<MiningOptions> = {}): MiningOptions {
  return { ...DEFAULT_OPTIONS, ...o };
}
