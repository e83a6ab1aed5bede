// src/supervisor.ts childV8Flags: which V8 flags the supervised CLI process gets. A `mine` whose
// decode workers take every core runs with one GC thread per isolate (--single-threaded-gc) and
// compiles its hot functions on the thread that runs them (--no-concurrent-recompilation).
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { mineCommand } from '../src/commands/mine-options.js';
import { MINE_SHORT_SWITCHES, MINE_SWITCHES, childV8Flags } from '../src/supervisor.js';

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

describe('childV8Flags: a mine without --workers on small input files runs one worker, without the flags', () => {
  const MiB = 2 ** 20;
  // The sizes the supervisor would stat; anything else is no regular file (a folder, a glob, a Hub name).
  const SIZES: Record<string, number> = { 'small.parquet': 100_000, 'small.jsonl': 2 * MiB, 'half.parquet': 8 * MiB, 'big.parquet': 20 * MiB };
  const sizeOf = (path: string) => SIZES[path] ?? null;
  it.each<[string, string[], string[]]>([
    ['one small file', ['mine', '--parquet', 'small.parquet'], []],
    ['a small positional input', ['mine', 'small.parquet', '--out', 'x.jsonl'], []],
    ['--parquet=FILE and --jsonl FILE, under 16 MiB in all', ['mine', '--parquet=small.parquet', '--jsonl', 'small.jsonl'], []],
    ['switches take no value: the file after -q is an input', ['mine', '-q', 'small.parquet', '--force', '--skip-bad-rows'], []],
    ['short switches together', ['mine', '-qf', 'small.parquet'], []],
    ['an option\'s value is not an input', ['mine', '--out', 'big.parquet', '--stats', 'big.parquet', 'small.jsonl'], []],
    ['inputs after --', ['mine', '--out', 'x.jsonl', '--', 'small.parquet'], []],
    ['16 MiB in all', ['mine', 'half.parquet', 'half.parquet'], BUSY],
    ['a large file', ['mine', '--parquet', 'big.parquet'], BUSY],
    ['a small file and one it cannot size (a folder, a glob, a Hub name)', ['mine', 'small.parquet', 'nebius/SWE-rebench-openhands-trajectories'], BUSY],
    ['an unknown short option (it might take the next argument)', ['mine', '-x', 'small.parquet'], BUSY],
    ['--workers given: as many as asked', ['mine', '--parquet', 'small.parquet', '--workers', '2'], BUSY],
    ['no input named (the CLI refuses the line)', ['mine', '--out', 'x.jsonl'], BUSY],
    ['--engine duckdb, a small file', ['mine', '--engine', 'duckdb', 'small.parquet'], []],
  ])('%s', (_name, args, flags) => {
    expect(childV8Flags(args, [], 2, sizeOf)).toStrictEqual(flags);
  });

  it('knows every switch of mine (an option taken for one would swallow the next argument)', () => {
    const mine = mineCommand(new Command());
    const switches = mine.options.filter((o) => !o.required && !o.optional);
    expect(new Set([...switches.map((o) => o.long!), '--help'])).toStrictEqual(MINE_SWITCHES);
    expect(new Set([...switches.flatMap((o) => (o.short ? [o.short.slice(1)] : [])), 'h'])).toStrictEqual(MINE_SHORT_SWITCHES);
    // Every other option takes exactly one value, always (commander: `required` is checked first).
    for (const o of mine.options) if (o.required || o.optional) expect(o.required && !o.variadic, o.flags).toBe(true);
  });
});
