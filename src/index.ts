// Library entry: the contract's pure stages and both pipelines.
export { mineRows, MemoryTrajectory, normaliseTrajectory, type InputRow, type MineResult } from './memory.js';
export { minePairs, type MineRequest, type MinedPair, type MineSummary } from './mine.js';
export { norm, normaliseMessage, normaliseToolCall } from './normalise.js';
export { actionSignature, canonArguments, comparisonKey, DEFAULT_REASONING_KEYS } from './sign.js';
export { labelOf, rankKey } from './sample.js';
export { Indexer } from './select.js';
export { walkInstance, findDivergence, assistantTurn, actionSimilarity, type Walkable } from './walk.js';
export { emitMessage, makeRow, dedupeKey } from './emit.js';
export { COUNTER_NAMES, emptyCounters, formatCounters, identityHolds, type Counters } from './counters.js';
export { CONTRACT_VERSION, DEFAULT_OPTIONS, withDefaults, type MiningOptions } from './options.js';
export { partitionOf, parsePartition } from './partition.js';
export { resolveInputs, type InputFile } from './read/inputs.js';
export { UserError, ExitCode } from './errors.js';
export type { Message, EmittedMessage, PairRow, RawMessage, ToolCall } from './types.js';
