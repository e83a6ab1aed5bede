// The contract's tunable rules and their defaults (contract sections 3-5).
import { DEFAULT_REASONING_KEYS } from './sign.js';

/**
 * Mining contract version (v2: norm splits lines on "\n" only; keys compare as UTF-16 strings;
 * v3: numbers in arguments are written with their source text, compared by value as before).
 */
export const CONTRACT_VERSION = 3;

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
