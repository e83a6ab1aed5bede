// src/supervisor.ts childV8Flags: which V8 flags the supervised CLI process gets. A `mine` whose
// decode workers take every core runs with one GC thread per isolate (--single-threaded-gc) and
// compiles its hot functions on the thread that runs them (--no-concurrent-recompilation).
import { describe, expect, it } from 'vitest';
import { childV8Flags } from '../src/supervisor.js';

const BUSY = ['--single-threaded-gc', '--no-concurrent-recompilation'];

describe('childV8Flags', () => {
  it.each<[string, string[], string[], number, string[]]>([
    ['mine, default workers (one per core)', ['mine', '--parquet', 'x.parquet'], [], 2, BUSY],
    ['mine, as many workers as cores', ['mine', '--parquet', 'x.parquet', '--workers', '2'], [], 2, BUSY],
    ['mine, more workers than cores', ['mine', '--workers=8', '--parquet', 'x.parquet'], [], 4, BUSY],
    ['mine, fewer workers than cores: the background threads keep a core', ['mine', '--parquet', 'x.parquet', '--workers', '1'], [], 2, []],
    ['mine, --workers=N form, fewer', ['mine', '--workers=3', '--parquet', 'x.parquet'], [], 8, []],
    ['mine, the last --workers wins', ['mine', '--workers', '1', '--workers', '2'], [], 2, BUSY],
    ['mine, a bad --workers value (the CLI refuses it)', ['mine', '--workers', 'many'], [], 2, []],
    ['mine, a --workers after -- is not an option', ['mine', '--parquet', 'x', '--', '--workers', '1'], [], 2, BUSY],
    ['mine, the user chose the GC already', ['mine', '--parquet', 'x.parquet'], ['--no-single-threaded-gc'], 2, ['--no-concurrent-recompilation']],
    ['mine, the user gave the GC flag already', ['mine', '--parquet', 'x.parquet'], ['--single-threaded-gc'], 2, ['--no-concurrent-recompilation']],
    ['mine, the user chose concurrent compiles', ['mine', '--parquet', 'x.parquet'], ['--concurrent-recompilation'], 2, ['--single-threaded-gc']],
    ['mine, the user gave the compile flag already', ['mine', '--parquet', 'x.parquet'], ['--no-concurrent-recompilation'], 2, ['--single-threaded-gc']],
    ['mine, the user gave both', ['mine'], ['--max-old-space-size=4096', '--no-concurrent-recompilation', '--single-threaded-gc'], 2, []],
    ['mine, other flags of the user are no reason to leave ours out', ['mine', '--parquet', 'x.parquet'], ['--max-old-space-size=4096'], 2, BUSY],
    ['mine --engine js', ['mine', '--parquet', 'x.parquet', '--engine', 'js'], [], 2, BUSY],
    ['mine --engine duckdb: its workers wait on DuckDB\'s threads, so no compile flag', ['mine', '--parquet', 'x.parquet', '--engine', 'duckdb'], [], 2, ['--single-threaded-gc']],
    ['mine --engine=wasm', ['mine', '--engine=wasm', '--parquet', 'x.parquet'], [], 2, ['--single-threaded-gc']],
    ['mine, the last --engine wins', ['mine', '--engine', 'duckdb', '--engine=js'], [], 2, BUSY],
    ['mine, --engine after -- is not an option', ['mine', '--parquet', 'x', '--', '--engine', 'duckdb'], [], 2, BUSY],
    ['mine --engine duckdb, fewer workers than cores', ['mine', '--engine', 'duckdb', '--workers', '1'], [], 2, []],
    ['merge', ['merge', 'a.jsonl', 'b.jsonl'], [], 2, []],
    ['report', ['report', 'stats.json'], [], 2, []],
  ])('%s', (_name, args, execArgv, cores, flags) => {
    expect(childV8Flags(args, execArgv, cores)).toStrictEqual(flags);
  });
});
