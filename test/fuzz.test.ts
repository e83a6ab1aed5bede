// Seeded corruption fuzzing of the built CLI: bit flips in pages, page headers and the footer,
// truncation at random offsets and zeroed ranges of a small parquet fixture, and the same of a JSONL
// (and gzipped JSONL) fixture. Every case must end (HANG_GUARD only stops a case that never ends: it is a
// hang detector, far above any real run time, not a speed requirement) with either
//   - exit 0 and output byte-identical to the clean run's, or
//   - a clean error: one `divergence-mine: error: <file>...` line, a documented input exit code,
//     no output file, no temporary file, no spill folder; never a stack trace,
// and, only where the damage hit bytes the miner reads and that carry no checksum (parquet pages of
// the used columns, JSONL values of the used fields), exit 0 with a different but well-formed output.
// Damage that only hits columns the miner does not read must give the identical output.
//
// DM_FUZZ_SEED, DM_FUZZ_CASES (default 200), DM_FUZZ_CONCURRENCY (default 3) and DM_FUZZ_ENGINE (the
// parquet cases' --engine: js, the default, wasm or duckdb; a native crash of DuckDB is the
// supervisor's to contain, and fails the case as an internal error) change the run; a failing case
// keeps its folder and is printed with its seed. Fixtures derive from real rows of
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius; see test/support/robust-fixtures.mjs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { ROOT, forkedRows, mapLimit, parquetLayout, rng, runCli, tempDir, tempLeftovers, toJsonl, writeUpstreamParquet } from './support/robust-fixtures.mjs';

const SEED = Number(process.env.DM_FUZZ_SEED ?? 20261130);
const CASES = Math.max(200, Number(process.env.DM_FUZZ_CASES ?? 200));
const CONCURRENCY = Math.max(1, Number(process.env.DM_FUZZ_CONCURRENCY ?? 3));
const HANG_GUARD = 600_000;
const ENGINE = process.env.DM_FUZZ_ENGINE ?? 'js';
if (!['js', 'wasm', 'duckdb'].includes(ENGINE)) throw new Error(`DM_FUZZ_ENGINE=${ENGINE}: expected js, wasm or duckdb`);
/** The options of a run on `input` (parquet: the engine under test). */
const engineArgs = (input: string): string[] => (input === 'parquet' ? ['--engine', ENGINE] : []);
/** Exit codes a damaged input may legitimately produce (not parquet, corrupt, schema, bad value). */
const INPUT_ERRORS = new Set([4, 5, 6, 7]);
const USED_COLUMNS = ['trajectory_id', 'instance_id', 'resolved', 'repo', 'trajectory'];
const ROW_KEYS = ['prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id', 'rejected_trajectory_id', 'divergence_turn', 'divergence_msg_index', 'action_similarity'];

type Input = 'parquet' | 'jsonl' | 'jsonl.gz';
type Expect =
  /** exit 0 and the clean output, nothing else */
  | { kind: 'same' }
  /** a clean error with this code (line: the JSONL line it must name) */
  | { kind: 'error'; codes: number[]; line?: number }
  /** used, unchecksummed bytes changed: identical, changed or a clean input error */
  | { kind: 'any' };

interface Case {
  id: number;
  input: Input;
  damage: string;
  where: string;
  bytes: Buffer;
  out: 'jsonl' | 'parquet';
  expect: Expect;
}

interface Layout {
  size: number;
  chunks: { column: string; start: number; end: number; pageHeaders: number[] }[];
  footer: { start: number; end: number };
}

let root = '';
let keep = Boolean(process.env.DM_KEEP_TMP);
let cleanParquet: Buffer;
let cleanJsonl: Buffer;
let layout: Layout;
const reference: Record<string, Buffer> = {};

function isUsed(column: string): boolean {
  const top = column.split(', ')[0]!;
  return USED_COLUMNS.includes(top);
}

/** Where a byte of the parquet fixture lies: magic, a used / unused column chunk, the footer, or other (bloom filters). */
function region(offset: number): 'magic' | 'used' | 'unused' | 'footer' | 'other' {
  if (offset < 4) return 'magic';
  if (offset >= layout.footer.start) return 'footer';
  const c = layout.chunks.find((x) => offset >= x.start && offset < x.end);
  if (!c) return 'other';
  return isUsed(c.column) ? 'used' : 'unused';
}

function parquetExpect(touched: number[], truncated: boolean): { expect: Expect; where: string } {
  const regions = new Set(touched.map(region));
  const where = [...regions].sort().join('+');
  if (truncated) return { expect: { kind: 'error', codes: [4, 5] }, where };
  if ([...regions].every((r) => r === 'unused')) return { expect: { kind: 'same' }, where };
  if (regions.has('magic')) return { expect: { kind: 'error', codes: [4] }, where };
  return { expect: { kind: 'any' }, where };
}

/** Mirror of the JSONL reader (readline line breaks, blank lines skipped, required keys). */
function jsonlExpect(text: string): Expect {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.at(-1) === '') lines.pop();
  const used: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return { kind: 'error', codes: [5], line: i + 1 };
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { kind: 'error', codes: [5], line: i + 1 };
    const o = v as Record<string, unknown>;
    if (!['trajectory_id', 'instance_id', 'resolved', 'trajectory'].every((k) => k in o)) return { kind: 'error', codes: [6], line: i + 1 };
    used.push(JSON.stringify([o.trajectory_id, o.instance_id, o.repo ?? null, o.resolved, o.trajectory]));
  }
  return used.join('\n') === cleanUsed ? { kind: 'same' } : { kind: 'any' };
}
let cleanUsed = '';

function makeCases(): Case[] {
  const cases: Case[] = [];
  const parquetKinds = ['flip-page', 'flip-page', 'flip-header', 'flip-footer', 'flip-footer', 'truncate', 'zero', 'zero-unused'];
  const jsonlKinds = ['flip', 'flip', 'truncate', 'zero', 'gz-flip', 'gz-truncate'];
  const nParquet = Math.round(CASES * 0.7);
  for (let id = 0; id < CASES; id++) {
    const r = rng(SEED + id * 7919);
    const int = (n: number) => Math.floor(r() * n);
    const out = id % 4 === 3 ? 'parquet' : 'jsonl';
    if (id < nParquet) {
      const damage = parquetKinds[id % parquetKinds.length]!;
      const b = Buffer.from(cleanParquet);
      const touched: number[] = [];
      let bytes = b;
      const flip = (o: number) => {
        b[o]! ^= 1 << int(8);
        touched.push(o);
      };
      if (damage === 'flip-page') for (let k = 1 + int(3); k > 0; k--) flip(4 + int(layout.footer.start - 4));
      else if (damage === 'flip-header') {
        const c = layout.chunks[int(layout.chunks.length)]!;
        const h = c.pageHeaders[int(c.pageHeaders.length)]!;
        flip(h + int(24));
      } else if (damage === 'flip-footer') flip(layout.footer.start + int(layout.footer.end - layout.footer.start));
      else if (damage === 'truncate') {
        const n = int(b.length);
        bytes = b.subarray(0, n);
        for (let o = n; o < b.length; o++) touched.push(o);
      } else {
        // zero a range anywhere, or (zero-unused) inside a chunk of a column the miner never reads
        let o: number;
        let n: number;
        if (damage === 'zero-unused') {
          const unused = layout.chunks.filter((c) => !isUsed(c.column));
          const c = unused[int(unused.length)]!;
          o = c.start + int(c.end - c.start);
          n = Math.min(1 + int(64), c.end - o);
        } else {
          o = int(b.length);
          n = Math.min(1 + int(256), b.length - o);
        }
        b.fill(0, o, o + n);
        for (let k = o; k < o + n; k++) touched.push(k);
      }
      const { expect: e, where } = parquetExpect(touched, damage === 'truncate');
      const detail = damage === 'truncate' ? `at ${bytes.length}` : `${touched.length} byte(s) from ${Math.min(...touched)}`;
      cases.push({ id, input: 'parquet', damage: `${damage} ${detail}`, where, bytes, out, expect: e });
    } else {
      const damage = jsonlKinds[id % jsonlKinds.length]!;
      const gz = damage.startsWith('gz-');
      const src = gz ? gzipSync(cleanJsonl, { level: 6 }) : cleanJsonl;
      const b = Buffer.from(src);
      let bytes = b;
      let detail: string;
      if (damage.endsWith('flip')) {
        const o = int(b.length);
        b[o]! ^= 1 << int(8);
        detail = `byte ${o}`;
      } else if (damage.endsWith('truncate')) {
        bytes = b.subarray(0, int(b.length));
        detail = `at ${bytes.length}`;
      } else {
        const o = int(b.length);
        const n = Math.min(1 + int(256), b.length - o);
        b.fill(0, o, o + n);
        detail = `${n} byte(s) from ${o}`;
      }
      let e: Expect;
      if (gz) {
        let text: string | null = null;
        try {
          text = gunzipSync(bytes).toString('utf8');
        } catch {
          text = null;
        }
        e = text === null ? { kind: 'error', codes: [5] } : jsonlExpect(text);
      } else e = jsonlExpect(bytes.toString('utf8'));
      cases.push({ id, input: gz ? 'jsonl.gz' : 'jsonl', damage: `${damage} ${detail}`, where: 'jsonl', bytes, out, expect: e });
    }
  }
  return cases;
}

type Outcome = 'identical' | 'changed' | 'error' | 'FAIL';

function wellFormed(out: Buffer, format: 'jsonl' | 'parquet'): boolean {
  try {
    if (format === 'parquet') {
      tableFromIPC(readParquet(new Uint8Array(out)).intoIPCStream());
      return true;
    }
    const text = out.toString('utf8');
    if (text !== '' && !text.endsWith('\n')) return false;
    return text
      .split('\n')
      .filter((l) => l !== '')
      .every((l) => JSON.stringify(Object.keys(JSON.parse(l) as object)) === JSON.stringify(ROW_KEYS));
  } catch {
    return false;
  }
}

async function runCase(c: Case): Promise<{ outcome: Outcome; why: string; code: number | null; stderr: string; ms: number }> {
  const dir = join(root, `case-${c.id}`);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const input = join(dir, `in.${c.input}`);
  writeFileSync(input, c.bytes);
  const out = join(dir, `out.${c.out}`);
  const flag = c.input === 'parquet' ? '--parquet' : '--jsonl';
  const r = await runCli(['mine', flag, input, '--out', out, '--workers', '1', '-q', ...engineArgs(c.input)], { timeoutMs: HANG_GUARD, env: { TMPDIR: tmp } });
  const res = (outcome: Outcome, why = '') => ({ outcome, why, code: r.code, stderr: r.stderr.trim(), ms: r.ms });
  if (r.timedOut) return res('FAIL', `no end within ${HANG_GUARD} ms (hang)`);
  if (/\n\s+at |internal error|Warning/.test(r.stderr)) return res('FAIL', 'stack trace or warning on stderr');
  const leftovers = [...tempLeftovers(dir), ...readdirSync(tmp)];
  if (leftovers.length > 0) return res('FAIL', `left behind: ${leftovers.join(', ')}`);
  const ref = reference[`${c.input === 'parquet' ? 'parquet' : 'jsonl'}->${c.out}`]!;
  let outcome: Outcome;
  if (r.code === 0) {
    if (!existsSync(out)) return res('FAIL', 'exit 0 without an output file');
    if (/error:/.test(r.stderr)) return res('FAIL', 'exit 0 with an error line');
    const got = readFileSync(out);
    if (got.equals(ref)) outcome = 'identical';
    else if (!wellFormed(got, c.out)) return res('FAIL', 'exit 0 with a malformed output');
    else outcome = 'changed';
  } else {
    if (existsSync(out)) return res('FAIL', `exit ${r.code} but an output file exists`);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    if (lines.length !== 1 || !lines[0]!.startsWith('divergence-mine: error: ')) return res('FAIL', 'not exactly one error line');
    if (!lines[0]!.includes(input)) return res('FAIL', 'the error does not name the file');
    if (!INPUT_ERRORS.has(r.code ?? -1)) return res('FAIL', `exit code ${r.code} is not an input error`);
    outcome = 'error';
  }
  const e = c.expect;
  if (e.kind === 'same' && outcome !== 'identical') return res('FAIL', `expected the clean output, got ${outcome}`);
  if (e.kind === 'error') {
    if (outcome !== 'error') return res('FAIL', `expected exit ${e.codes.join('/')}, got exit 0 (${outcome})`);
    if (!e.codes.includes(r.code!)) return res('FAIL', `expected exit ${e.codes.join('/')}, got ${r.code}`);
    if (e.line !== undefined && !r.stderr.includes(`${input}:${e.line}:`)) return res('FAIL', `the error does not name line ${e.line}`);
  }
  // `where` joins region names with '+': match whole names (a substring test lets "unused" pass as "used").
  if (outcome === 'changed' && c.where !== 'jsonl' && !c.where.split('+').some((r) => r === 'used' || r === 'footer' || r === 'other')) {
    return res('FAIL', 'changed output but no used bytes touched');
  }
  return res(outcome);
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  root = tempDir('dm-fuzz-');
  // Small on purpose (20 messages, contents capped): damage often lands in structure, runs are quick.
  const rows = forkedRows({ messages: 20, maxContent: 400 });
  await writeUpstreamParquet(join(root, 'clean.parquet'), rows);
  cleanParquet = readFileSync(join(root, 'clean.parquet'));
  cleanJsonl = Buffer.from(toJsonl(rows));
  writeFileSync(join(root, 'clean.jsonl'), cleanJsonl);
  layout = (await parquetLayout(join(root, 'clean.parquet'))) as Layout;
  cleanUsed = '';
  const parsed = rows.map((o: Record<string, unknown>) => JSON.stringify([o.trajectory_id, o.instance_id, o.repo ?? null, o.resolved, o.trajectory]));
  cleanUsed = parsed.join('\n');
  await mapLimit(
    [
      ['parquet', 'jsonl'],
      ['parquet', 'parquet'],
      ['jsonl', 'jsonl'],
      ['jsonl', 'parquet'],
    ] as const,
    2,
    async ([input, out]) => {
      const o = join(root, `reference-${input}.${out}`);
      const r = await runCli(['mine', `--${input}`, join(root, `clean.${input}`), '--out', o, '--workers', '1', '-q', ...engineArgs(input)], { timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`clean run ${input}->${out} failed: ${r.stderr}`);
      reference[`${input}->${out}`] = readFileSync(o);
    },
  );
  expect(reference['parquet->jsonl']!.equals(reference['jsonl->jsonl']!)).toBe(true);
  expect(reference['parquet->jsonl']!.toString('utf8').split('\n').filter(Boolean).length).toBeGreaterThan(0);
}, 180_000);

afterAll(() => {
  if (root && !keep) rmSync(root, { recursive: true, force: true });
});

describe('fuzz: damaged inputs never crash, hang or leave output behind', () => {
  it(`${CASES} seeded corruptions (seed ${SEED}${ENGINE === 'js' ? '' : `, --engine ${ENGINE}`})`, async () => {
    const cases = makeCases();
    const started = Date.now();
    const results = await mapLimit(cases, CONCURRENCY, async (c) => {
      const r = await runCase(c);
      if (r.outcome !== 'FAIL') rmSync(join(root, `case-${c.id}`), { recursive: true, force: true });
      return { c, ...r };
    });
    const secs = (Date.now() - started) / 1000;

    // How many cases took each path, by damage kind.
    const table = new Map<string, Record<Outcome, number>>();
    for (const { c, outcome } of results) {
      const key = `${c.input.padEnd(8)} ${c.damage.split(' ')[0]!}`;
      const row = table.get(key) ?? { identical: 0, changed: 0, error: 0, FAIL: 0 };
      row[outcome]++;
      table.set(key, row);
    }
    // Parquet cases by the region the damage touched (magic, used / unused column chunks, footer,
    // other = bytes outside every chunk, e.g. bloom filters).
    const regions = new Map<string, Record<Outcome, number>>();
    for (const { c, outcome } of results) {
      if (c.input !== 'parquet' || c.damage.startsWith('truncate')) continue;
      const row = regions.get(c.where) ?? { identical: 0, changed: 0, error: 0, FAIL: 0 };
      row[outcome]++;
      regions.set(c.where, row);
    }
    const codes = new Map<string, number>();
    for (const { outcome, code, stderr } of results) {
      if (outcome !== 'error') continue;
      const k = `exit ${code}${/decoder stopped/.test(stderr) ? ' (wasm trap contained)' : ''}`;
      codes.set(k, (codes.get(k) ?? 0) + 1);
    }
    const total = (o: Outcome) => results.filter((x) => x.outcome === o).length;
    const lines = [
      `fuzz: ${results.length} cases, seed ${SEED}, concurrency ${CONCURRENCY}, ${secs.toFixed(1)} s (slowest case ${Math.max(...results.map((x) => x.ms))} ms)`,
      `  ${'input    damage'.padEnd(24)} identical  changed  error  FAIL`,
      ...[...table].sort().map(([k, v]) => `  ${k.padEnd(24)} ${String(v.identical).padStart(9)} ${String(v.changed).padStart(8)} ${String(v.error).padStart(6)} ${String(v.FAIL).padStart(5)}`),
      `  ${'total'.padEnd(24)} ${String(total('identical')).padStart(9)} ${String(total('changed')).padStart(8)} ${String(total('error')).padStart(6)} ${String(total('FAIL')).padStart(5)}`,
      `  parquet damage by region (truncations aside):`,
      ...[...regions].sort().map(([k, v]) => `    ${k.padEnd(22)} ${String(v.identical).padStart(9)} ${String(v.changed).padStart(8)} ${String(v.error).padStart(6)} ${String(v.FAIL).padStart(5)}`),
      `  clean errors: ${[...codes].sort().map(([k, v]) => `${k}: ${v}`).join(', ')}`,
    ];
    console.log(lines.join('\n'));

    const failures = results.filter((x) => x.outcome === 'FAIL');
    if (failures.length > 0) keep = true;
    for (const f of failures.slice(0, 20)) {
      console.log(`FAIL case ${f.c.id} (${f.c.input}, ${f.c.damage}, ${f.c.where}, expected ${f.c.expect.kind}): ${f.why}; exit ${f.code}; kept in ${join(root, `case-${f.c.id}`)}\n  ${f.stderr.slice(0, 600)}`);
    }
    expect(failures.map((f) => `case ${f.c.id}: ${f.why}`)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(200);
    // Both kinds of outcome must actually occur, or the fixture / damage mix is not testing anything.
    expect(total('identical')).toBeGreaterThan(0);
    expect(total('error')).toBeGreaterThan(0);
  }, 900_000);
});
