// src/supervisor.ts childV8Flags: which V8 flags the supervised CLI process gets. A `mine` whose
// decode workers take every core runs with one GC thread per isolate (--single-threaded-gc).
import { describe, expect, it } from 'vitest';
import { childV8Flags } from '../src/supervisor.js';

const ONE_GC_THREAD = ['--single-threaded-gc'];

describe('childV8Flags', () => {
  it.each<[string, string[], string[], number, string[]]>([
    ['mine, default workers (one per core)', ['mine', '--parquet', 'x.parquet'], [], 2, ONE_GC_THREAD],
    ['mine, as many workers as cores', ['mine', '--parquet', 'x.parquet', '--workers', '2'], [], 2, ONE_GC_THREAD],
    ['mine, more workers than cores', ['mine', '--workers=8', '--parquet', 'x.parquet'], [], 4, ONE_GC_THREAD],
    ['mine, fewer workers than cores: the background GC keeps a core', ['mine', '--parquet', 'x.parquet', '--workers', '1'], [], 2, []],
    ['mine, --workers=N form, fewer', ['mine', '--workers=3', '--parquet', 'x.parquet'], [], 8, []],
    ['mine, the last --workers wins', ['mine', '--workers', '1', '--workers', '2'], [], 2, ONE_GC_THREAD],
    ['mine, a bad --workers value (the CLI refuses it)', ['mine', '--workers', 'many'], [], 2, []],
    ['mine, a --workers after -- is not an option', ['mine', '--parquet', 'x', '--', '--workers', '1'], [], 2, ONE_GC_THREAD],
    ['mine, the user chose the GC already', ['mine', '--parquet', 'x.parquet'], ['--no-single-threaded-gc'], 2, []],
    ['mine, the user gave the flag already', ['mine', '--parquet', 'x.parquet'], ['--single-threaded-gc'], 2, []],
    ['merge', ['merge', 'a.jsonl', 'b.jsonl'], [], 2, []],
    ['report', ['report', 'stats.json'], [], 2, []],
  ])('%s', (_name, args, execArgv, cores, flags) => {
    expect(childV8Flags(args, execArgv, cores)).toStrictEqual(flags);
  });
});
