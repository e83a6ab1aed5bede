// A short seeded run of the structure-aware parquet fuzzer (test/support/parquet-fuzz.mjs): field-level
// mutations of real files, read by our reader and by parquet-wasm, each in a child process under a
// watchdog, and by DuckDB where those two differ. Every case must agree with parquet-wasm or DuckDB,
// end in a clean corrupt-file error, be declined as Unsupported, or fall under a named ignored-field rule.
// Then a few of the corrupt cases through the built CLI (exit 5, one line, no output file), and tool
// call arguments nested 100,000 deep through the miner. The long run: `npm run fuzz -- --cases N --seed S`.
// Inputs derive from real rows of nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM test support without types
import { baseFiles, judge, makeCase, runFuzz } from './support/parquet-fuzz.mjs';
// @ts-expect-error -- plain ESM test support without types
import { ROOT, runCli } from './support/robust-fixtures.mjs';

interface Summary {
  counts: Record<string, number>;
  failures: { id: number; what: string; outcome: string; why: string }[];
  baseline: Record<string, string>;
}

const SEED = 20261201;
const CASES = 300;
let dir = '';

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/parquet/reader.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-pq-fuzz-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('structure-aware parquet fuzzing, our reader against parquet-wasm and DuckDB', () => {
  it(`${CASES} cases of seed ${SEED}: agreed, clean error or Unsupported; never another exception, a hang, an abort or rows no other reader gives`, async () => {
    const res = (await runFuzz({ cases: CASES, seed: SEED, timeoutMs: 20_000 })) as Summary;
    expect(res.failures.map((f) => `case ${f.id}: ${f.what}: ${f.outcome} ${f.why.split('\n')[0]}`)).toEqual([]);
    // The run exercised both sides: files both readers read alike, and files ours refused.
    expect(res.counts.agreed ?? 0).toBeGreaterThan(CASES / 10);
    expect(res.counts['clean-error'] ?? 0).toBeGreaterThan(CASES / 10);
    // DuckDB settled cases parquet-wasm refused (footer fields parquet-rs reads and ours does not need).
    expect(res.counts['agreed-duckdb-wasm-refused'] ?? 0).toBeGreaterThan(0);
    expect(Object.values(res.baseline).every((b) => b === 'agreed' || b.startsWith('unsupported'))).toBe(true);
  }, 240_000);

  describe('the verdict on a case ours read', () => {
    const rows = (v: string) => ({ groups: [1], full: [{ c: [v] }], part: [{ c: [] }] });
    const ok = (v: string) => ({ kind: 'ok', value: rows(v) });
    const refused = { kind: 'exception', message: 'Error: Parquet error: bad' };
    const plain = { rule: null };
    const ignorable = { rule: 'index-section-of-a-page-without-values' };
    it.each([
      { name: 'parquet-wasm gives the same rows', c: plain, ref: ok('a'), duck: null, base: null, outcome: 'agreed' },
      { name: 'parquet-wasm refuses, DuckDB not asked yet', c: plain, ref: refused, duck: null, base: null, outcome: 'needs-duckdb' },
      { name: 'parquet-wasm refuses, DuckDB gives the same rows', c: plain, ref: refused, duck: ok('a'), base: null, outcome: 'agreed-duckdb-wasm-refused' },
      { name: 'parquet-wasm differs, DuckDB gives the same rows', c: plain, ref: ok('b'), duck: ok('a'), base: null, outcome: 'agreed-duckdb-wasm-differed' },
      { name: 'both refuse', c: plain, ref: refused, duck: refused, base: rows('a'), outcome: 'FAIL:accepted-both-refused' },
      { name: 'both give other rows', c: plain, ref: ok('b'), duck: ok('b'), base: rows('a'), outcome: 'FAIL:differ' },
      { name: 'both refuse, an ignored field, the unmutated rows', c: ignorable, ref: refused, duck: refused, base: rows('a'), outcome: 'ignored-field:index bit width of a page without values' },
      { name: 'both refuse, an ignored field, but other rows than the unmutated file', c: ignorable, ref: refused, duck: refused, base: rows('z'), outcome: 'FAIL:accepted-both-refused' },
      // Seed 20261207 case 973: size_statistics (16) given the id of geospatial_statistics (17).
      { name: 'both refuse, geospatial statistics made from another field', c: { rule: null, what: 'footer field 4.0.1.44.3.16 id -> 17' }, ref: refused, duck: refused, base: rows('a'), outcome: 'ignored-field:geospatial statistics of a column chunk' },
      { name: 'both refuse, inside the geospatial statistics', c: { rule: null, what: 'footer field 4.2.1.3.3.17.2 replaced by an i64 1' }, ref: refused, duck: refused, base: rows('a'), outcome: 'ignored-field:geospatial statistics of a column chunk' },
      { name: 'both refuse, the geospatial statistics made another field', c: { rule: null, what: 'footer field 4.0.1.44.3.17 id -> 3' }, ref: refused, duck: refused, base: rows('a'), outcome: 'FAIL:accepted-both-refused' },
      { name: 'both refuse, field 171', c: { rule: null, what: 'footer field 4.0.1.44.3.171 removed' }, ref: refused, duck: refused, base: rows('a'), outcome: 'FAIL:accepted-both-refused' },
      { name: 'both refuse, geospatial statistics, other rows', c: { rule: null, what: 'footer field 4.0.1.44.3.16 id -> 17' }, ref: refused, duck: refused, base: rows('z'), outcome: 'FAIL:accepted-both-refused' },
    ])('$name: $outcome', ({ c, ref, duck, base, outcome }) => {
      expect(judge(c, '/x.parquet', ok('a'), ref, duck, base).outcome).toBe(outcome);
    });
  });

  it('a case is the same file for the same seed', async () => {
    const bases = await baseFiles(dir);
    for (const id of [3, 41]) expect(makeCase(bases, SEED, id).bytes.equals(makeCase(bases, SEED, id).bytes)).toBe(true);
  }, 60_000);
});

describe('corrupt parquet through the CLI', () => {
  it('field mutations of forks.parquet end with exit 0, or a documented input error on one line naming the file and no output', async () => {
    const bases = await baseFiles(dir);
    const codes: number[] = [];
    for (let id = 0; codes.length < 8 && id < 400; id++) {
      const c = makeCase(bases, SEED + 1, id);
      if (c.base !== 'forks.parquet' || c.kind === 'frame') continue;
      const input = join(dir, `cli-${id}.parquet`);
      writeFileSync(input, c.bytes);
      const out = join(dir, `cli-${id}.jsonl`);
      const r = await runCli(['mine', '--parquet', input, '--out', out, '--workers', '1', '-q'], { timeoutMs: 60_000 });
      expect(r.timedOut, c.what).toBe(false);
      codes.push(r.code);
      if (r.code === 0) continue; // a field the miner does not need
      expect([5, 6, 7], `${c.what}: ${r.stderr}`).toContain(r.code);
      const lines = r.stderr.split('\n').filter((l: string) => l !== '');
      expect(lines, c.what).toHaveLength(1);
      expect(lines[0]).toContain(input);
      expect(existsSync(out)).toBe(false);
    }
    expect(codes).toContain(5);
  }, 240_000);

  it('tool call arguments nested 100,000 deep: the miner ends normally or with a clean error, never a crash', async () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const lines = readFileSync(join(ROOT, 'fixtures/forks.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    let changed = 0;
    const rows = lines.map((l) => {
      const row = JSON.parse(l) as { trajectory: { tool_calls?: { function: { arguments: string } }[] | null }[] };
      for (const m of row.trajectory) for (const tc of m.tool_calls ?? []) if (changed++ % 3 === 0) tc.function.arguments = deep;
      return JSON.stringify(row);
    });
    expect(changed).toBeGreaterThan(0);
    const input = join(dir, 'deep.jsonl');
    writeFileSync(input, rows.join('\n') + '\n');
    const out = join(dir, 'deep-out.jsonl');
    const r = await runCli(['mine', '--jsonl', input, '--out', out, '--workers', '1', '-q'], { timeoutMs: 120_000 });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).not.toMatch(/\n\s+at |RangeError|Maximum call stack/);
    expect([0, 5, 7]).toContain(r.code);
    expect(existsSync(out)).toBe(r.code === 0);
  }, 180_000);
});
