// apache-arrow and parquet-wasm, loaded on first use. Loading them is most of a process's (or a
// worker's) start-up, and a run that reads and writes only JSONL, or reads parquet through our own
// reader, never needs them.
export type Arrow = typeof import('apache-arrow');
export type Wasm = typeof import('parquet-wasm');
export type ArrowValues = typeof import('./arrow-values.js');

export interface ParquetLibs {
  arrow: Arrow;
  wasm: Wasm;
  /** arrow-values.ts, which imports apache-arrow */
  values: ArrowValues;
}

let loading: Promise<ParquetLibs> | null = null;

export function parquetLibs(): Promise<ParquetLibs> {
  loading ??= Promise.all([import('apache-arrow'), import('parquet-wasm'), import('./arrow-values.js')]).then(([arrow, wasm, values]) => ({ arrow, wasm, values }));
  return loading;
}
