// Messages between the main thread and the decode workers (worker.ts).
import type { ErrorPayload } from '../errors.js';
import type { ColumnMapping, SchemaName } from '../sources/schema.js';
import type { MetaResult } from '../parquet/file-summary.js';
import type { PureJsDecoder } from '../parquet/inflate.js';
// The reader's summary of a file is the parquet layer's type; the protocol carries it as is.
export type { FieldInfo, MetaResult } from '../parquet/file-summary.js';

/**
 * `js`: our own streaming page reader (src/parquet/), zstd through the optional zstd-napi addon or pure-JS
 * fzstd; row groups it cannot decode fall back to parquet-wasm. `wasm`: parquet-wasm. `duckdb`: DuckDB's
 * native reader through @duckdb/node-api. Both get a row group only once our reader has checked its
 * page headers and levels (worker.ts PAGE_CHECKS).
 */
export type Engine = 'js' | 'wasm' | 'duckdb';

export type Task =
  | { kind: 'meta'; path: string; engine: Engine; bytes: number }
  /** Schema detection: the first value of each of `columns` in row group 0 (the sample row of schema detection). */
  | { kind: 'sample'; path: string; columns: string[] }
  /** Schema detection: the first non-empty line of a JSONL input, parsed. */
  | { kind: 'sample-jsonl'; path: string }
  /** `hasRepo` (= mapping.repo !== null) only names the columns in pool.ts error messages. */
  | { kind: 'index'; path: string; rowGroup: number; hasRepo: boolean; mapping: ColumnMapping; engine: Engine; rowOffset: number; rows: number }
  /** A JSONL input, or with `range` the lines that start in a byte range of a plain one (numbered from 1 at its first line). */
  | { kind: 'index-jsonl'; path: string; mapping: ColumnMapping; schema: SchemaName; range?: ByteRange }
  | {
      kind: 'decode';
      path: string;
      rowGroup: number;
      /** Rows within the row group, ascending, and the caller's key for each. */
      rows: number[];
      keys: number[];
      reasoningKeys: string[];
      withTools: boolean;
      /** Which decoder reads the trajectory column; `rowOffset` is the file row of the group's first row. */
      engine: Engine;
      rowOffset: number;
      mapping: ColumnMapping;
      schema: SchemaName;
    }
  /**
   * `lines`: the file's line numbers. With `spans` (a plain file: each line's offset and length, as
   * the index pass found them) the task reads just those bytes; without (a gzipped file) it reads the
   * stream up to its last line.
   */
  | {
      kind: 'decode-jsonl';
      path: string;
      lines: number[];
      keys: number[];
      reasoningKeys: string[];
      withTools: boolean;
      mapping: ColumnMapping;
      schema: SchemaName;
      spans?: { offsets: number[]; lengths: number[] };
    }
  /** Pass 3 in the workers (the contract's JSONL rows): walk these instances, in order, and serialise their rows. */
  | { kind: 'walk'; instances: WalkInstance[]; minSimilaritySkip: number; maxPairsPerInstance: number }
  /** One extra small column of every row of a row group (e.g. exit_status for the exit-status filters), in row order. */
  | { kind: 'column'; path: string; rowGroup: number; column: string; engine: Engine; rowOffset: number; rows: number }
  /** The same over every line of a JSONL input, in line order (as index-jsonl). */
  | { kind: 'column-jsonl'; path: string; column: string; /** What reads it, for the error naming a missing column. */ purpose: string; range?: ByteRange };

/** Bytes [start, end) of a plain JSONL file (io/jsonl-lines.ts LineRange). */
export interface ByteRange {
  start: number;
  end: number;
}

/** Values of a `column` / `column-jsonl` task, one per row. */
export interface ColumnResult {
  values: unknown[];
}

/** A decoded trajectory by reference: its index block in a spill file. */
export interface WalkTrajectory {
  trajectoryId: string;
  repo: string | null;
  length: number;
  block: number;
  spill: string;
}

export interface WalkInstance {
  instanceId: string;
  resolved: WalkTrajectory[];
  failed: WalkTrajectory[];
}

export interface WalkResult {
  /** JSONL of the kept rows (UTF-8, one line per row, each ending in \n), in walk order; encoded here so the main thread only writes bytes. */
  jsonl: Uint8Array;
  /** Bytes of `jsonl` per instance of the task, in order. */
  sizes: number[];
  /** The walk's counters for these instances (the other counters are 0). */
  counters: Record<string, number>;
}

/** The sample row: column -> first value (absent when the row group is empty). */
export interface SampleResult {
  row: Record<string, unknown> | null;
  /** JSONL: the row's 1-based line. */
  line?: number;
}

export interface IndexResult {
  ids: unknown[];
  instances: unknown[];
  repos: unknown[];
  resolved: unknown[];
  /** JSONL only: the 1-based line of each row (of the task's range, with one). */
  lines?: number[];
  /** JSONL with a range: how many lines start in it, blank ones included. */
  lineCount?: number;
  /** Plain JSONL only: the byte offset of each row's line, and its length (without a final "\r"). */
  offsets?: number[];
  lengths?: number[];
  /** `--pair-within` only: each row's group key (sources/identity.ts pairWithinKey). */
  groups?: string[];
  /** --engine js: why this row group was read through parquet-wasm instead. */
  fallback?: string;
}

/** Role codes kept per message in the main thread. */
export const ROLE_CODES = { system: 0, user: 1, assistant: 2, tool: 3, other: 4 } as const;
/** Role code -> name (`other` stands for any role outside the contract's four). */
export const ROLE_NAMES: readonly string[] = Object.keys(ROLE_CODES);

/** What encodeTrajectory (encode.ts) computes for one trajectory, in the worker. */
export interface EncodedTrajectory {
  key: number;
  /** Set when the trajectory value is unusable (null, not a list, a bad message). */
  bad?: string;
  roles: Uint8Array;
  /** n+1 absolute offsets in the worker's spill file: message i's record (spill.ts) is [i, i+1). */
  offsets: Float64Array;
  tools?: string | null;
}

/**
 * What the main thread keeps of a trajectory: its arrays go to the spill as one block (spill.ts
 * `appendIndexBlock`) and are read back only while its instance is walked, so memory does not
 * grow with the number of messages.
 */
export interface DecodedTrajectory {
  key: number;
  bad?: string;
  /** Number of messages. */
  length: number;
  /** Offset of the trajectory's index block in the worker's spill file. */
  block: number;
  tools?: string | null;
}

export interface DecodeResult {
  spill: number;
  trajectories: DecodedTrajectory[];
  malformed_arguments: number;
  unknown_roles: number;
  rowsDecoded: number;
  /** --engine js: why this row group was read through parquet-wasm instead. */
  fallback?: string;
}

/**
 * What the main thread sends a worker: a task, or (once, before its first task) the spill file of a
 * worker started before its pool existed (pool.ts startEarlyWorker), with its shared spill space
 * (spill-space.ts) when the pool places trajectories.
 */
export type WorkerMessage = { id: number; task: Task } | { spillPath: string; spillSpace: SharedArrayBuffer | null };

export type WorkerReply =
  | { id: number; ok: true; result: MetaResult | IndexResult | DecodeResult | SampleResult | WalkResult | ColumnResult; pureJs?: PureJsDecoder[] }
  | { id: number; ok: false; error: ErrorPayload; pureJs?: PureJsDecoder[] };
