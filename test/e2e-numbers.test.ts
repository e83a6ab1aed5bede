// Contract v3 §11 end to end: tool-call arguments `{"command": "ls", "timeout": 1.0, "id":
// 12345678901234567890, "f": 1e5}` come out of the BUILT CLI with exactly that number text, in JSONL
// and parquet, every shape, both --arguments modes, while pairs and counters compare by value (the
// by-value twin is an exact duplicate). Fixtures: fixtures/build-numbers.mjs (a real row of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';
import { readRows } from '../src/parquet/reader.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const fixture = (f: string) => join(ROOT, 'fixtures', f);
/** The arguments as the output must write them: compact JSON, every number as in the source. */
const EXPECTED = '{"command":"ls","timeout":1.0,"id":12345678901234567890,"f":1e5}';
let dir = '';
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'dm-numbers-'))));
afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

/** Every `ls` call's arguments in a text, unescaped where the text holds them inside a JSON string. */
function lsArguments(text: string): string[] {
  const plain = [...text.matchAll(/\{"command":"ls"[^}]*\}/g)].map((m) => m[0]);
  const escaped = [...text.matchAll(/\{\\"command\\":\\"ls\\"[^}]*\}/g)].map((m) => JSON.parse(`"${m[0]}"`) as string);
  return [...plain, ...escaped];
}

/** Every string inside a value read back from parquet (arguments and tool_calls are text columns). */
function stringsOf(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(stringsOf);
  if (v !== null && typeof v === 'object') return Object.values(v).flatMap(stringsOf);
  return [];
}

async function duckText(path: string): Promise<string> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  const cols = (await conn.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`)).getRows().map((r) => String(r[0]));
  const r = await conn.runAndReadAll(`SELECT ${cols.map((c) => `"${c}"::VARCHAR`).join(', ')} FROM read_parquet('${path}')`);
  const text = r.getRows().flat().join('\n');
  conn.closeSync();
  return text;
}

const SHAPES: [string, string[]][] = [
  ['published', ['--shape', 'published']],
  ['trl object', ['--shape', 'trl', '--arguments', 'object']],
  ['trl string', ['--shape', 'trl', '--arguments', 'string']],
  ['kto object', ['--shape', 'kto']],
  ['kto string', ['--shape', 'kto', '--arguments', 'string']],
  ['sft', ['--shape', 'sft']],
  ['continuation trajectory', ['--continuation', 'trajectory']],
  ['behavior', ['--behavior']],
  ['prompt window', ['--shape', 'trl', '--prompt-window', '4']],
  ['tree pairing trl', ['--pairing', 'tree', '--shape', 'trl']],
];
const INPUTS: [string, string[]][] = [
  ['parquet', ['--parquet', fixture('numbers.parquet')]],
  ['parquet, duckdb engine', ['--parquet', fixture('numbers.parquet'), '--engine', 'duckdb']],
  ['jsonl (arguments as JSON strings)', ['--jsonl', fixture('numbers.jsonl')]],
  ['jsonl (arguments as objects)', ['--jsonl', fixture('numbers-objects.jsonl')]],
];
// Every shape on the parquet input; the trl shape on every input.
const CASES = [...SHAPES.map(([s, a]) => [INPUTS[0]![0], s, INPUTS[0]![1], a] as const), ...INPUTS.slice(1).flatMap(([i, ia]) => [[i, 'trl object', ia, SHAPES[1]![1]] as const, [i, 'published', ia, SHAPES[0]![1]] as const])];

describe('numbers keep their source text in the output (contract v3 §11)', () => {
  it.each(CASES)('%s, %s: JSONL and parquet carry exactly the source text', async (input, shape, inputArgs, shapeArgs) => {
    const base = join(dir, `${input}-${shape}`.replace(/\W+/g, '-'));
    const jsonl = `${base}.jsonl`;
    const parquet = `${base}.parquet`;
    for (const out of [jsonl, parquet]) {
      const r = await cli(['mine', ...inputArgs, ...shapeArgs, '--out', out, '--stats', `${out}.stats.json`, '--quiet', '--workers', '2']);
      expect(r.code, r.stderr).toBe(0);
    }
    const text = readFileSync(jsonl, 'utf8');
    const fromJsonl = lsArguments(text);
    expect(fromJsonl.length).toBeGreaterThan(0);
    expect(new Set(fromJsonl)).toEqual(new Set([EXPECTED]));
    // No number by value anywhere: not the rounded integer, not 100000.
    expect(text).not.toContain('12345678901234567000');
    // Our reader: every text value of every column.
    const meta = await duckText(parquet);
    const columns = (JSON.parse(readFileSync(`${parquet}.stats.json`, 'utf8')) as { counters: Record<string, number> }).counters;
    const names = (await duckColumns(parquet));
    const ours = [...readRows(parquet, 0, names, null)].flatMap((row) => stringsOf(row)).flatMap(lsArguments);
    expect(ours.length).toBe(fromJsonl.length);
    expect(new Set(ours)).toEqual(new Set([EXPECTED]));
    // DuckDB's reader.
    const duck = lsArguments(meta);
    expect(duck.length).toBe(fromJsonl.length);
    expect(new Set(duck)).toEqual(new Set([EXPECTED]));
    expect(meta).not.toContain('12345678901234567000');
    // Pairs and counters compare by value: the by-value twin's pair is an exact duplicate.
    if (!shapeArgs.includes('tree')) {
      expect(columns.pairs_emitted).toBe(1);
      expect(columns.exact_duplicate).toBe(1);
    }
  });
});

async function duckColumns(path: string): Promise<string[]> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  const names = (await conn.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`)).getRows().map((r) => String(r[0]));
  conn.closeSync();
  return names;
}
