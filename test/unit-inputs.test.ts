// Unit tests for src/io/inputs.ts (resolveInputs): files, folders (recursive, sorted), globs, and the
// one-line errors of contract section 8 (naming the file, non-zero exit code).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, UserError } from '../src/errors.js';
import { kindByExtension, resolveInputs, type InputKind } from '../src/io/inputs.js';

const root = mkdtempSync(join(tmpdir(), 'dm-unit-inputs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const d = join(root, 'data');
const empty = join(root, 'empty');
const only = join(root, 'only-jsonl');
mkdirSync(join(d, 'a', 'deep'), { recursive: true });
mkdirSync(join(empty, 'sub'), { recursive: true });
mkdirSync(only);
const files: Record<string, string> = {
  'b.parquet': 'bbbb',
  'a.parquet': 'a',
  'a-b.parquet': 'ab',
  'a/c.parquet': 'ccc',
  'a/z.parquet': 'zz',
  'a/deep/x.jsonl': '{}\n',
  'UPPER.PARQUET': 'U',
  'data.jsonl.gz': 'gz',
  'notes.txt': 'not data',
};
for (const [p, body] of Object.entries(files)) writeFileSync(join(d, p), body);
writeFileSync(join(empty, 'sub', 'readme.md'), '#');
writeFileSync(join(only, 'rows.jsonl'), '{}\n');

const p = (rel: string) => join(d, rel);
const brief = (args: string[], forced: InputKind | null) => resolveInputs(args, forced).map((f) => [f.path, f.kind, f.bytes]);

describe('kindByExtension', () => {
  const cases: [string, InputKind | null][] = [
    ['trajectories.parquet', 'parquet'],
    ['TRAJ.PARQUET', 'parquet'],
    ['rows.jsonl', 'jsonl'],
    ['rows.jsonl.gz', 'jsonl'],
    ['rows.JSONL.GZ', 'jsonl'],
    ['rows.json', null],
    ['rows.jsonl.bz2', null],
    ['parquet', null],
    ['notes.txt', null],
  ];
  it.each(cases)('%s -> %s', (name, kind) => {
    expect(kindByExtension(name)).toBe(kind);
  });
});

describe('resolveInputs: files, folders, globs', () => {
  const cases: { name: string; args: string[]; forced: InputKind | null; expected: [string, InputKind, number][] }[] = [
    { name: 'one parquet file, with its size', args: [p('b.parquet')], forced: null, expected: [[p('b.parquet'), 'parquet', 4]] },
    { name: 'arguments keep their order', args: [p('b.parquet'), p('a.parquet')], forced: null, expected: [[p('b.parquet'), 'parquet', 4], [p('a.parquet'), 'parquet', 1]] },
    { name: 'a .jsonl.gz file is jsonl', args: [p('data.jsonl.gz')], forced: null, expected: [[p('data.jsonl.gz'), 'jsonl', 2]] },
    { name: '--jsonl forces the kind of a file with any name', args: [p('notes.txt')], forced: 'jsonl', expected: [[p('notes.txt'), 'jsonl', 8]] },
    {
      name: 'a folder: every known file below it, sorted by path (JavaScript string order)',
      args: [d],
      forced: null,
      expected: [
        [p('UPPER.PARQUET'), 'parquet', 1],
        [p('a-b.parquet'), 'parquet', 2],
        [p('a.parquet'), 'parquet', 1],
        [p('a/c.parquet'), 'parquet', 3],
        [p('a/deep/x.jsonl'), 'jsonl', 3],
        [p('a/z.parquet'), 'parquet', 2],
        [p('b.parquet'), 'parquet', 4],
        [p('data.jsonl.gz'), 'jsonl', 2],
      ],
    },
    {
      name: 'a folder with --parquet: only parquet files',
      args: [d],
      forced: 'parquet',
      expected: [
        [p('UPPER.PARQUET'), 'parquet', 1],
        [p('a-b.parquet'), 'parquet', 2],
        [p('a.parquet'), 'parquet', 1],
        [p('a/c.parquet'), 'parquet', 3],
        [p('a/z.parquet'), 'parquet', 2],
        [p('b.parquet'), 'parquet', 4],
      ],
    },
    { name: 'a folder with --jsonl: only jsonl files', args: [d], forced: 'jsonl', expected: [[p('a/deep/x.jsonl'), 'jsonl', 3], [p('data.jsonl.gz'), 'jsonl', 2]] },
    {
      name: 'glob * stays in its folder (case-sensitive)',
      args: [join(d, '*.parquet')],
      forced: null,
      expected: [[p('a-b.parquet'), 'parquet', 2], [p('a.parquet'), 'parquet', 1], [p('b.parquet'), 'parquet', 4]],
    },
    {
      name: 'glob ** descends, sorted',
      args: [join(d, '**', '*.parquet')],
      forced: null,
      expected: [
        [p('a-b.parquet'), 'parquet', 2],
        [p('a.parquet'), 'parquet', 1],
        [p('a/c.parquet'), 'parquet', 3],
        [p('a/z.parquet'), 'parquet', 2],
        [p('b.parquet'), 'parquet', 4],
      ],
    },
    { name: 'glob ? matches one character', args: [join(d, 'a', '?.parquet')], forced: null, expected: [[p('a/c.parquet'), 'parquet', 3], [p('a/z.parquet'), 'parquet', 2]] },
    { name: 'a file and a glob together', args: [p('data.jsonl.gz'), join(d, 'a', '*.parquet')], forced: null, expected: [[p('data.jsonl.gz'), 'jsonl', 2], [p('a/c.parquet'), 'parquet', 3], [p('a/z.parquet'), 'parquet', 2]] },
  ];
  it.each(cases)('$name', ({ args, forced, expected }) => {
    expect(brief(args, forced)).toStrictEqual(expected);
  });
});

describe('resolveInputs: errors name the file, one line, non-zero exit code', () => {
  const cases: { name: string; args: string[]; forced: InputKind | null; message: string; exitCode: number }[] = [
    { name: 'missing file', args: [p('missing.parquet')], forced: 'parquet', message: `${p('missing.parquet')}: no such file or directory`, exitCode: ExitCode.missingInput },
    { name: 'missing file after a good one', args: [p('a.parquet'), p('nope.jsonl')], forced: null, message: `${p('nope.jsonl')}: no such file or directory`, exitCode: 3 },
    { name: 'glob without a match', args: [join(d, '*.arrow')], forced: null, message: `${join(d, '*.arrow')}: no file matches this pattern`, exitCode: 3 },
    { name: 'folder without data files', args: [empty], forced: null, message: `${empty}: directory holds no *.parquet or *.jsonl file`, exitCode: 3 },
    { name: 'folder without the forced kind', args: [only], forced: 'parquet', message: `${only}: directory holds no *.parquet file`, exitCode: 3 },
    {
      name: 'unknown extension without --parquet / --jsonl',
      args: [p('notes.txt')],
      forced: null,
      message: `${p('notes.txt')}: unknown input format (use --parquet or --jsonl, or a .parquet / .jsonl / .jsonl.gz name)`,
      exitCode: ExitCode.usage,
    },
  ];
  it.each(cases)('$name', ({ args, forced, message, exitCode }) => {
    let err: unknown;
    try {
      resolveInputs(args, forced);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(message);
    expect((err as UserError).exitCode).toBe(exitCode);
    expect(exitCode).not.toBe(0);
  });
});
