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
import { execFile } from 'node:child_process';
import { BIN, cli } from './support/cli.js';
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
  ['parquet, wasm engine', ['--parquet', fixture('numbers.parquet'), '--engine', 'wasm']],
  ['parquet, js engine, 1 worker', ['--parquet', fixture('numbers.parquet'), '--engine', 'js', '--workers', '1']],
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
      const workers = inputArgs.includes('--workers') ? [] : ['--workers', '2'];
      const r = await cli(['mine', ...inputArgs, ...shapeArgs, '--out', out, '--stats', `${out}.stats.json`, '--quiet', ...workers]);
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

describe('merge, show and the Python loader warning keep to the source text', () => {
  it('merge of two partitions into JSONL and into parquet keeps the text', async () => {
    const parts = [0, 1].map((i) => join(dir, `part-${i}.jsonl`));
    for (const [i, part] of parts.entries()) {
      const r = await cli(['mine', '--parquet', fixture('numbers.parquet'), '--shape', 'trl', '--partition', `${i}/2`, '--out', part, '--stats', `${part}.json`, '--quiet']);
      expect(r.code, r.stderr).toBe(0);
    }
    for (const out of [join(dir, 'merged.jsonl'), join(dir, 'merged.parquet')]) {
      const r = await cli(['merge', ...parts, '--stats', `${parts[0]}.json`, '--stats', `${parts[1]}.json`, '--out', out, '--quiet']);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(new Set(lsArguments(readFileSync(join(dir, 'merged.jsonl'), 'utf8')))).toEqual(new Set([EXPECTED]));
    const duck = lsArguments(await duckText(join(dir, 'merged.parquet')));
    expect(duck.length).toBe(2);
    expect(new Set(duck)).toEqual(new Set([EXPECTED]));
  });

  it('show writes the numbers as in the source', async () => {
    const out = join(dir, 'show.jsonl');
    expect((await cli(['mine', '--parquet', fixture('numbers.parquet'), '--out', out, '--quiet'])).code).toBe(0);
    const r = await new Promise<{ code: number; stdout: string }>((res) =>
      execFile(BIN, ['show', out], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout) => res({ code: err ? 1 : 0, stdout })),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('→ execute_bash command="ls" timeout=1.0 id=12345678901234567890 f=1e5');
  });

  // Measured (fixtures/python-numbers/roundtrip.json): datasets' JSON loader may turn
  // 12345678901234567890 into a double; its parquet loader and json.loads of text keep it.
  it.each([
    ['trl object, JSONL', ['--shape', 'trl'], 'jsonl', 2],
    // The two kto rows of a pair share one converted prompt: its numbers count once.
    ['kto object, JSONL', ['--shape', 'kto'], 'jsonl', 2],
    ['trl object, parquet', ['--shape', 'trl'], 'parquet', 0],
    ['trl string, JSONL', ['--shape', 'trl', '--arguments', 'string'], 'jsonl', 0],
    ['published, JSONL', [], 'jsonl', 0],
  ] as const)('%s: %s numbers Python may change, one warning line when any', async (_name, args, ext, count) => {
    const out = join(dir, `warn-${_name.replace(/\W+/g, '-')}.${ext}`);
    const r = await cli(['mine', '--parquet', fixture('numbers.parquet'), ...args, '--out', out, '--stats', `${out}.json`, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('may be read as other numbers'));
    const stats = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as { trl?: { numbers_python_may_change?: number } };
    if (count === 0) {
      expect(warnings).toEqual([]);
      expect(stats.trl?.numbers_python_may_change).toBeUndefined();
    } else {
      expect(warnings).toEqual([
        `divergence-mine: warning: ${count} numbers in tool-call arguments (e.g. 12345678901234567890) may be read as other numbers by Python datasets' JSON loader; the file keeps their text, and parquet or --arguments string hands them over exactly (README "Numbers in arguments")`,
      ]);
      expect(stats.trl?.numbers_python_may_change).toBe(count);
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
