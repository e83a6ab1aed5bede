// Training outputs end to end: the BUILT CLI (`npm run build` first) with the training-output options on the
// fixtures (fixtures/*.parquet, *.jsonl: forks of real rows of nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0, © Nebius; see fixtures/README.md) and on a derived input that clones forks.jsonl over 18
// instances in 9 repositories (same licence and attribution), re-read with DuckDB and apache-arrow.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC, type Field, type Schema } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(ROOT, 'fixtures');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const TEMPLATE = join(ROOT, 'test', 'template', 'qwen3-coder-style.jinja');
const TIMEOUT = 120_000;
// Every test runs the CLI several times (about a second each).
vi.setConfig({ testTimeout: 300_000 });

const VARIANTS: [file: string, kind: 'parquet' | 'jsonl'][] = [
  ['forks.parquet', 'parquet'],
  ['forks.jsonl', 'jsonl'],
  ['forks-parsed.jsonl', 'jsonl'],
  ['sampling.parquet', 'parquet'],
  ['sampling.jsonl', 'jsonl'],
  ['labels.parquet', 'parquet'],
  ['labels.jsonl', 'jsonl'],
  ['labels-float.parquet', 'parquet'],
];

type Json = Record<string, unknown>;
type Msg = { role: string; content: unknown; tool_calls?: unknown; name?: unknown; tool_call_id?: unknown };
interface Row {
  prompt: Msg[];
  chosen: Msg | Msg[];
  rejected: Msg | Msg[];
  instance_id: string;
  repo: string | null;
  chosen_trajectory_id: string;
  rejected_trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
  action_similarity: number;
  prompt_messages_dropped?: number;
  tools?: string | null;
}

let work: string;
let synth: string;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  work = mkdtempSync(join(tmpdir(), 'dm-mine-train-'));
  // Derived input: forks.jsonl cloned 6 times; instance k of a base repo goes to repo variant k % 3,
  // so there are 18 instances in 9 repositories, 2 instances per repository.
  const lines = readFileSync(join(FIXTURES, 'forks.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
  const out: string[] = [];
  for (let k = 0; k < 6; k++)
    for (const l of lines) {
      const r = JSON.parse(l) as Json;
      r.instance_id = `${r.instance_id as string}-k${k}`;
      r.trajectory_id = `${r.trajectory_id as string}-k${k}`;
      r.repo = `${r.repo as string}-${k % 3}`;
      out.push(JSON.stringify(r));
    }
  synth = join(work, 'synth.jsonl');
  writeFileSync(synth, out.join('\n') + '\n');
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd: work, maxBuffer: 64 << 20, timeout: TIMEOUT }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

async function mine(args: string[]): Promise<{ stderr: string; stats: Json }> {
  const stats = join(work, `stats-${Math.random().toString(36).slice(2)}.json`);
  const r = await run(['mine', ...args, '--stats', stats, '--quiet', '--force']);
  expect(r.code, r.stderr).toBe(0);
  return { stderr: r.stderr, stats: JSON.parse(readFileSync(stats, 'utf8')) as Json };
}

/**
 * A run several tests read (the same arguments give the same output): made once, on first use, in a
 * folder of its own that no test writes to, by whichever test needs it first.
 */
const sharedRuns = new Map<string, Promise<{ out: string; stats: Json }>>();
function mineShared(args: string[], outName: string): Promise<{ out: string; stats: Json }> {
  const key = JSON.stringify([args, outName]);
  let p = sharedRuns.get(key);
  if (!p) {
    const dir = join(work, `shared-${sharedRuns.size}`);
    mkdirSync(dir, { recursive: true });
    const out = join(dir, outName);
    p = mine([...args, '--out', out]).then(({ stats }) => ({ out, stats }));
    sharedRuns.set(key, p);
  }
  return p;
}

/** The fixture's expected output of the default (published) run: fixtures/expected, from the reference walker. */
function expectedOf(file: string): { counters: Json; rows: Row[] } {
  return JSON.parse(readFileSync(join(FIXTURES, 'expected', `${file.replace(/(-parsed|-float)?\.(parquet|jsonl)$/, '')}.json`), 'utf8')) as { counters: Json; rows: Row[] };
}

function fresh(name: string): string {
  const d = join(work, name);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d, { recursive: true });
  return d;
}

function readJsonl<T = Row>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

const keyOf = (r: Row) => `${r.instance_id}|${r.chosen_trajectory_id}|${r.rejected_trajectory_id}`;
const counters = (s: Json) => s.counters as Record<string, number>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function hasNullValue(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasNullValue);
  if (isObject(v)) return Object.values(v).some((x) => x === null || hasNullValue(x));
  return false;
}

function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x != null).map(([k, x]) => [k, stripNulls(x)]));
  return v;
}

async function withDb<T>(f: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return await f(c);
  } finally {
    c.closeSync?.();
    db.closeSync?.();
  }
}

async function query(c: DuckDBConnection, sql: string): Promise<Json[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJson() as Json[];
}

/** Rows of a parquet file through parquet-wasm -> Arrow IPC -> apache-arrow, as plain JSON. */
function arrowRead(path: string): { schema: Schema; rows: Json[] } {
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  const rows = table.toArray().map((r) => JSON.parse(JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))) as Json);
  return { schema: table.schema, rows };
}

async function checkTemplate(...files: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(['check-template', ...files, '--template', TEMPLATE, '--max-report', '0']);
}

/** The published message a trl message came from: same role and content, calls parsed. */
function expectTrlMatchesPublished(t: Msg, p: Msg): void {
  expect(t.role).toBe(p.role);
  expect(t.content).toBe(p.content ?? '');
  if (p.role === 'assistant') {
    const calls = typeof p.tool_calls === 'string' ? (JSON.parse(p.tool_calls) as { function: { arguments: unknown } }[]) : [];
    if (calls.length === 0) expect(t.tool_calls).toBeUndefined();
    else {
      expect(Array.isArray(t.tool_calls)).toBe(true);
      const tc = t.tool_calls as { id: unknown; type: unknown; function: { name: unknown; arguments: unknown } }[];
      expect(tc).toHaveLength(calls.length);
      tc.forEach((c, i) => {
        const want = calls[i]!.function.arguments;
        expect(isObject(c.function.arguments)).toBe(true);
        // malformed (unparsed) arguments are kept as raw text under one key
        expect(c.function.arguments).toEqual(isObject(want) ? want : { malformed_arguments: want });
      });
    }
  }
  if (p.role === 'tool') {
    expect(t.name).toBe(p.name);
    expect(t.tool_call_id).toBe(p.tool_call_id);
  }
}

describe('--shape trl on every fixture', () => {
  for (const [file, kind] of VARIANTS) {
    it(`${file}: trl JSONL and parquet pass check-template with zero failures`, async () => {
      const trl = await mineShared([`--${kind}`, join(FIXTURES, file), '--shape', 'trl'], 'trl.jsonl');
      const trlPq = await mineShared([`--${kind}`, join(FIXTURES, file), '--shape', 'trl'], 'trl.parquet');
      expect(trl.stats.shape).toBe('trl');
      // The published run of the fixture is its expected output (fixtures/expected, from the reference
      // walker; e2e-mine.test.ts pins the CLI's published run to it): the same funnel in the trl shape.
      const expected = expectedOf(file);
      expect(counters(trl.stats)).toEqual(expected.counters);
      expect(counters(trlPq.stats)).toEqual(expected.counters);
      const n = expected.rows.length;

      // Both files in one check: every row of each renders and passes (the parquet file holds the n rows).
      const r = await checkTemplate(trl.out, trlPq.out);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(`check-template: ${2 * n} rows, ${2 * n} ok, 0 failed`);
      expect(arrowRead(trlPq.out).rows.map((x) => keyOf(x as unknown as Row))).toEqual(expected.rows.map(keyOf));

      // The trl rows are the published rows reshaped.
      const pubRows = expected.rows;
      const trlRows = readJsonl(trl.out);
      expect(trlRows.map(keyOf)).toEqual(pubRows.map(keyOf));
      const source = new Map<string, Json>();
      if (kind === 'jsonl') for (const s of readJsonl<Json>(join(FIXTURES, file))) if (!source.has(s.trajectory_id as string)) source.set(s.trajectory_id as string, s);
      trlRows.forEach((t, i) => {
        const p = pubRows[i]!;
        expect(Object.keys(t)).toEqual([...Object.keys(p), 'tools']);
        expect(Array.isArray(t.chosen) && t.chosen.length === 1).toBe(true);
        expect(Array.isArray(t.rejected) && t.rejected.length === 1).toBe(true);
        expectTrlMatchesPublished((t.chosen as Msg[])[0]!, p.chosen as Msg);
        expectTrlMatchesPublished((t.rejected as Msg[])[0]!, p.rejected as Msg);
        expect(t.prompt).toHaveLength(p.prompt.length);
        t.prompt.forEach((m, j) => expectTrlMatchesPublished(m, p.prompt[j]!));
        if (kind === 'jsonl') {
          // tools: the chosen trajectory's definitions, null placeholders removed
          const raw = source.get(t.chosen_trajectory_id)!.tools;
          if (raw == null) expect(t.tools).toBeNull();
          else {
            expect(typeof t.tools).toBe('string');
            expect(JSON.parse(t.tools!)).toEqual(stripNulls(typeof raw === 'string' ? JSON.parse(raw) : raw));
          }
        }
        if (t.tools != null) {
          const tools = JSON.parse(t.tools) as unknown[];
          expect(Array.isArray(tools) && tools.length > 0).toBe(true);
          expect(hasNullValue(tools)).toBe(false);
        }
      });
      if (kind === 'parquet') expect(trlRows.every((t) => typeof t.tools === 'string')).toBe(true);
    });
  }

  it('--arguments string keeps JSON text; the template check catches it and deliberately broken rows', async () => {
    const dir = fresh('trl-broken');
    const src = join(FIXTURES, 'forks.parquet');
    const objRun = await mineShared(['--parquet', src, '--shape', 'trl'], 'trl.jsonl');
    await mine(['--parquet', src, '--shape', 'trl', '--arguments', 'string', '--out', join(dir, 'str.jsonl')]);
    const obj = readJsonl(objRun.out);
    const str = readJsonl(join(dir, 'str.jsonl'));
    const calls = (r: Row) => [...r.prompt, ...(r.chosen as Msg[]), ...(r.rejected as Msg[])].flatMap((m) => (m.tool_calls ?? []) as { function: { arguments: unknown } }[]);
    obj.forEach((o, i) => {
      const a = calls(o).map((c) => c.function.arguments);
      const b = calls(str[i]!).map((c) => c.function.arguments);
      expect(b.every((x) => typeof x === 'string')).toBe(true);
      b.forEach((s, k) => {
        const want = a[k] as Json;
        if ('malformed_arguments' in want && Object.keys(want).length === 1) expect(s).toBe(want.malformed_arguments);
        else expect(JSON.parse(s as string)).toEqual(want);
      });
    });
    // String arguments cannot render with `arguments | items`.
    const s = await checkTemplate(join(dir, 'str.jsonl'));
    expect(s.code).toBe(9);
    expect(s.stdout).toMatch(/render/);

    // Two broken rows among good ones: one in the published shape, one whose chosen is not an assistant turn.
    const broken = obj.map((r) => structuredClone(r));
    broken[1]!.chosen = (broken[1]!.chosen as Msg[])[0]!;
    (broken[2]!.chosen as Msg[])[0]!.role = 'system';
    const bad = join(dir, 'broken.jsonl');
    writeFileSync(bad, broken.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const b = await checkTemplate(bad);
    expect(b.code).toBe(9);
    expect(b.stdout).toContain(`${bad}:2 (${broken[1]!.instance_id}): shape:`);
    expect(b.stdout).toContain(`${bad}:3 (${broken[2]!.instance_id}): chosen-prefix:`);
    expect(b.stdout).toContain(`check-template: ${obj.length} rows, ${obj.length - 2} ok, 2 failed`);
    expect(b.stderr).toMatch(/2 of \d+ rows fail/);
  });

  it('trl parquet re-reads with DuckDB and apache-arrow as the JSONL rows, arguments tagged arrow.json', async () => {
    const dir = fresh('trl-readback');
    const src = join(FIXTURES, 'forks.parquet');
    const o = { jsonl: (await mineShared(['--parquet', src, '--shape', 'trl'], 'trl.jsonl')).out, parquet: (await mineShared(['--parquet', src, '--shape', 'trl'], 'trl.parquet')).out };
    await mine(['--parquet', src, '--shape', 'trl', '--arguments', 'string', '--out', join(dir, 's.parquet')]);
    const jsonl = readJsonl(o.jsonl);

    const argsField = (schema: Schema): Field => {
      const prompt = schema.fields.find((f) => f.name === 'prompt')!;
      const msg = prompt.type.children[0]!;
      const calls = msg.type.children.find((f: Field) => f.name === 'tool_calls')!;
      const fn = calls.type.children[0]!.type.children.find((f: Field) => f.name === 'function')!;
      return fn.type.children.find((f: Field) => f.name === 'arguments')!;
    };
    const { schema, rows } = arrowRead(o.parquet);
    expect(schema.fields.map((f) => f.name)).toEqual(Object.keys(jsonl[0]!));
    expect(argsField(schema).metadata.get('ARROW:extension:name')).toBe('arrow.json');
    expect(argsField(arrowRead(join(dir, 's.parquet')).schema).metadata.has('ARROW:extension:name')).toBe(false);
    // Same rows: parquet structs carry every field (absent ones null) and arguments as JSON text.
    const full = (m: Msg) => ({
      role: m.role,
      content: m.content,
      tool_calls: m.tool_calls ?? null,
      name: m.name ?? null,
      tool_call_id: m.tool_call_id ?? null,
    });
    const decode = (m: Json) => ({
      ...m,
      tool_calls: (m.tool_calls as { function: { arguments: string } }[] | null)?.map((c) => ({ ...c, function: { ...c.function, arguments: JSON.parse(c.function.arguments) } })) ?? null,
    });
    expect(rows).toHaveLength(jsonl.length);
    rows.forEach((r, i) => {
      const j = jsonl[i]!;
      for (const k of ['prompt', 'chosen', 'rejected'] as const) expect((r[k] as Json[]).map(decode)).toEqual((j[k] as Msg[]).map(full));
      for (const k of ['instance_id', 'repo', 'chosen_trajectory_id', 'rejected_trajectory_id', 'divergence_turn', 'divergence_msg_index', 'action_similarity', 'tools'] as const)
        expect(r[k]).toEqual(j[k]);
    });

    await withDb(async (c) => {
      const f = o.parquet;
      const types = Object.fromEntries((await query(c, `DESCRIBE SELECT * FROM read_parquet('${f}')`)).map((x) => [x.column_name, x.column_type]));
      expect(types.chosen).toMatch(/^STRUCT\(.*tool_calls STRUCT\(id VARCHAR, "type" VARCHAR, "function" STRUCT\("name" VARCHAR, arguments VARCHAR\)\)\[\].*\)\[\]$/);
      expect(types.tools).toBe('VARCHAR');
      expect(types.divergence_turn).toBe('BIGINT');
      const got = await query(
        c,
        `SELECT instance_id, len(chosen) AS n, chosen[1].role AS role, chosen[1].tool_calls[1].function.arguments AS args,
                json_array_length(tools) AS ntools, strpos(tools, ':null') AS nullpos
         FROM read_parquet('${f}')`,
      );
      expect(got).toHaveLength(jsonl.length);
      got.forEach((g, i) => {
        const ch = (jsonl[i]!.chosen as Msg[])[0]!;
        expect(g.instance_id).toBe(jsonl[i]!.instance_id);
        expect(Number(g.n)).toBe(1);
        expect(g.role).toBe('assistant');
        const firstCall = (ch.tool_calls as { function: { arguments: unknown } }[] | undefined)?.[0];
        if (firstCall) expect(JSON.parse(g.args as string)).toEqual(firstCall.function.arguments);
        expect(Number(g.ntools)).toBe((JSON.parse(jsonl[i]!.tools!) as unknown[]).length);
        expect(Number(g.nullpos)).toBe(0);
      });
    });
  });
});

describe('--prompt-window', () => {
  /** A kept tool message must follow the assistant message that made its call. */
  function expectCallsKept(prompt: Msg[]): void {
    prompt.forEach((m, j) => {
      if (m.role !== 'tool') return;
      let k = j - 1;
      while (k >= 0 && prompt[k]!.role === 'tool') k--;
      expect(k, 'a tool message starts the kept prompt').toBeGreaterThanOrEqual(0);
      const a = prompt[k]!;
      expect(a.role).toBe('assistant');
      const calls = (typeof a.tool_calls === 'string' ? JSON.parse(a.tool_calls) : a.tool_calls) as { id: string }[];
      expect(calls.map((c) => c.id)).toContain(m.tool_call_id);
    });
  }

  for (const n of [0, 3, 6]) {
    it(`--prompt-window ${n} (published and trl): system, first user, last messages; calls kept with results`, async () => {
      const dir = fresh(`window-${n}`);
      const src = join(FIXTURES, 'forks.parquet');
      await mine(['--parquet', src, '--prompt-window', String(n), '--out', join(dir, 'pub.jsonl')]);
      await mine(['--parquet', src, '--prompt-window', String(n), '--out', join(dir, 'pub.parquet')]);
      await mine(['--parquet', src, '--prompt-window', String(n), '--shape', 'trl', '--out', join(dir, 'trl.jsonl')]);
      // The full rows: the fixture's expected output (e2e-mine.test.ts pins the CLI's unwindowed run to it).
      const full = expectedOf('forks.parquet').rows;
      const pub = readJsonl(join(dir, 'pub.jsonl'));
      const trl = readJsonl(join(dir, 'trl.jsonl'));
      expect(pub.map(keyOf)).toEqual(full.map(keyOf));
      let dropped = 0;
      pub.forEach((r, i) => {
        const f = full[i]!;
        expect(Object.keys(r)).toEqual([...Object.keys(f), 'prompt_messages_dropped']);
        expect(r.prompt.length + r.prompt_messages_dropped!).toBe(r.divergence_msg_index);
        expect(r.chosen).toEqual(f.chosen);
        expect(r.prompt[0]).toEqual(f.prompt[0]);
        expect(f.prompt[0]!.role).toBe('system');
        expect(r.prompt[1]).toEqual(f.prompt.find((m) => m.role === 'user'));
        // the rest is a suffix of the full prompt, at least n messages long (or all of it)
        const tail = r.prompt.slice(2);
        expect(f.prompt.slice(f.prompt.length - tail.length)).toEqual(tail);
        expect(tail.length).toBeGreaterThanOrEqual(Math.min(n, f.prompt.length - 2));
        expectCallsKept(r.prompt);
        dropped += r.prompt_messages_dropped!;
        expect(trl[i]!.prompt_messages_dropped).toBe(r.prompt_messages_dropped);
        expect(trl[i]!.prompt.map((m) => m.role)).toEqual(r.prompt.map((m) => m.role));
        expect(Object.keys(trl[i]!).slice(-2)).toEqual(['prompt_messages_dropped', 'tools']);
        expectCallsKept(trl[i]!.prompt);
      });
      if (n < 6) expect(dropped).toBeGreaterThan(0);
      const ct = await checkTemplate(join(dir, 'trl.jsonl'));
      expect(ct.code, ct.stdout).toBe(0);
      await withDb(async (c) => {
        const got = await query(c, `SELECT typeof(prompt_messages_dropped) AS t, prompt_messages_dropped AS d, len(prompt) AS n FROM read_parquet('${join(dir, 'pub.parquet')}')`);
        expect(got.map((g) => [g.t, Number(g.d), Number(g.n)])).toEqual(pub.map((r) => ['BIGINT', r.prompt_messages_dropped, r.prompt.length]));
      });
    });
  }
});

/** Independent statement of the split rule: SHA-256 of the key, first 8 bytes big-endian, < floor(f * 2^64) -> dev. */
function expectedSplit(key: string, fraction: number): 'dev' | 'train' {
  const u = createHash('sha256').update(key, 'utf8').digest().readBigUInt64BE(0);
  return u < BigInt(Math.floor(fraction * 2 ** 64)) ? 'dev' : 'train';
}

describe('--split', () => {
  for (const by of ['instance', 'repo'] as const) {
    it(`--split dev=0.3 --split-by ${by}: group-disjoint by hash, counts reported (DuckDB)`, async () => {
      const dir = fresh(`split-${by}`);
      const allRun = await mineShared(['--jsonl', synth], 'all.jsonl');
      const { stats } = await mine(['--jsonl', synth, '--shape', 'trl', '--split', 'dev=0.3', '--split-by', by, '--out', join(dir, 'data')]);
      expect(readdirSync(join(dir, 'data')).sort()).toEqual(['dev.parquet', 'train.parquet']);
      const all = readJsonl(allRun.out);
      const n = all.length;
      expect(counters(stats).pairs_emitted).toBe(n);
      await withDb(async (c) => {
        const t = `read_parquet('${join(dir, 'data', 'train.parquet')}')`;
        const d = `read_parquet('${join(dir, 'data', 'dev.parquet')}')`;
        const col = by === 'instance' ? 'instance_id' : 'repo';
        const overlap = await query(c, `SELECT count(*) AS n FROM (SELECT DISTINCT ${col} FROM ${t}) JOIN (SELECT DISTINCT ${col} FROM ${d}) USING (${col})`);
        expect(Number(overlap[0]!.n)).toBe(0);
        const inst = await query(c, `SELECT count(*) AS n FROM (SELECT DISTINCT instance_id FROM ${t}) JOIN (SELECT DISTINCT instance_id FROM ${d}) USING (instance_id)`);
        expect(Number(inst[0]!.n)).toBe(0);
        const counts = await query(
          c,
          `SELECT s, count(*) AS rows, count(DISTINCT instance_id) AS instances, count(DISTINCT repo) AS repos FROM
             (SELECT 'train' AS s, * FROM ${t} UNION ALL SELECT 'dev' AS s, * FROM ${d}) GROUP BY s ORDER BY s DESC`,
        );
        expect(stats.splits).toEqual(counts.map((x) => ({ split: x.s, rows: Number(x.rows), instances: Number(x.instances), repos: Number(x.repos) })));
        expect(counts.every((x) => Number(x.rows) > 0)).toBe(true);
        // every row is where the hash rule puts its group, and nothing is lost
        const rows = await query(c, `SELECT 'train' AS s, instance_id, repo, chosen_trajectory_id, rejected_trajectory_id FROM ${t} UNION ALL SELECT 'dev', instance_id, repo, chosen_trajectory_id, rejected_trajectory_id FROM ${d}`);
        for (const r of rows) expect(r.s).toBe(expectedSplit((by === 'repo' ? r.repo : r.instance_id) as string, 0.3));
        expect(rows.map((r) => keyOf(r as unknown as Row)).sort()).toEqual(all.map(keyOf).sort());
      });
      if (by === 'repo') {
        // the derived input has 2 instances per repository: both always land together
        const perRepo = new Map<string, Set<string>>();
        for (const r of all) perRepo.set(r.repo!, (perRepo.get(r.repo!) ?? new Set()).add(r.instance_id));
        expect([...perRepo.values()].some((s) => s.size > 1)).toBe(true);
      }
      // the counts on stderr
      const r = await run(['mine', '--jsonl', synth, '--split', 'dev=0.3', '--split-by', by, '--out', join(dir, 'again'), '--format', 'jsonl']);
      expect(r.code, r.stderr).toBe(0);
      const line = (stats.splits as { split: string; rows: number; instances: number }[]).map((s) => `${s.split} ${s.rows} rows, ${s.instances} instances`);
      expect(r.stderr).toContain(`splits (by ${by}): ${line[0]}`);
      expect(r.stderr).toContain(`; ${line[1]}`);
    });
  }

  it('refuses --split with --partition, a file --out, and an occupied folder without --force', async () => {
    const dir = fresh('split-refuse');
    const src = join(FIXTURES, 'forks.parquet');
    expect((await run(['mine', '--parquet', src, '--split', 'dev=0.3', '--partition', '0/2', '--out', join(dir, 'a')])).code).toBe(2);
    expect((await run(['mine', '--parquet', src, '--shards', '2', '--out', join(dir, 'a.parquet')])).code).toBe(2);
    expect((await run(['mine', '--parquet', src, '--split', 'train=0.3', '--out', join(dir, 'a')])).code).toBe(2);
    expect((await run(['mine', '--parquet', src, '--shards', '2', '--shard-bytes', '1MB', '--out', join(dir, 'a')])).code).toBe(2);
    expect((await run(['mine', '--parquet', src, '--split', 'dev=0.3', '--out', join(dir, 'b'), '-q'])).code).toBe(0);
    const again = await run(['mine', '--parquet', src, '--split', 'dev=0.3', '--out', join(dir, 'b'), '-q']);
    expect(again.code).toBe(8);
    expect(again.stderr).toMatch(/--force/);
    expect(readdirSync(join(dir, 'b')).sort()).toEqual(['dev.parquet', 'train.parquet']);
  });
});

/** The shard rule, restated: groups by total bytes descending (ties: key ascending), each to the lightest shard (ties: lowest index). */
function lpt(groups: Map<string, number>, n: number): Map<string, number> {
  const count = Math.max(1, Math.min(n, groups.size));
  const loads = new Array<number>(count).fill(0);
  const out = new Map<string, number>();
  for (const [k, b] of [...groups].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))) {
    const s = loads.indexOf(Math.min(...loads));
    out.set(k, s);
    loads[s]! += b;
  }
  return out;
}

describe('--shards / --shard-bytes', () => {
  it('--shards 2 (JSONL): byte-balanced, one shard per instance, rows in order, nothing lost', async () => {
    const dir = fresh('shards-jsonl');
    await mine(['--jsonl', synth, '--shape', 'trl', '--out', join(dir, 'all.jsonl')]);
    const { stats } = await mine(['--jsonl', synth, '--shape', 'trl', '--shards', '2', '--format', 'jsonl', '--out', join(dir, 'data')]);
    const names = readdirSync(join(dir, 'data')).sort();
    expect(names).toEqual(['train-00000-of-00002.jsonl', 'train-00001-of-00002.jsonl']);
    const allLines = readFileSync(join(dir, 'all.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const groups = new Map<string, number>();
    for (const l of allLines) {
      const id = (JSON.parse(l) as Row).instance_id;
      groups.set(id, (groups.get(id) ?? 0) + Buffer.byteLength(l) + 1);
    }
    const want = lpt(groups, 2);
    const sizes: number[] = [];
    names.forEach((name, k) => {
      const text = readFileSync(join(dir, 'data', name), 'utf8');
      sizes.push(Buffer.byteLength(text));
      const lines = text.split('\n').filter((l) => l !== '');
      // exactly the instances the rule puts here, in the unsharded order
      expect(lines).toEqual(allLines.filter((l) => want.get((JSON.parse(l) as Row).instance_id) === k));
    });
    const biggest = Math.max(...groups.values());
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(biggest);
    expect((stats.files as { rows: number; bytes: number }[]).map((f) => f.bytes)).toEqual(sizes);
    await withDb(async (c) => {
      const spread = await query(
        c,
        `SELECT instance_id, count(DISTINCT filename) AS files FROM read_json('${join(dir, 'data')}/train-*.jsonl', filename=true, columns={instance_id: 'VARCHAR'}) GROUP BY instance_id HAVING files > 1`,
      );
      expect(spread).toEqual([]);
    });
  });

  it('--shards 3 and --shard-bytes (parquet, with a dev split): shard files by name, instances local (DuckDB)', async () => {
    const dir = fresh('shards-parquet');
    const allLines = readFileSync((await mineShared(['--jsonl', synth], 'all.jsonl')).out, 'utf8').split('\n').filter((l) => l !== '');
    const train = allLines.filter((l) => expectedSplit((JSON.parse(l) as Row).instance_id, 0.2) === 'train');
    const total = train.reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);

    const runs: [string[], number][] = [
      [['--shards', '3'], 3],
      [['--shard-bytes', String(Math.ceil(total / 4))], 4],
    ];
    for (const [opt, count] of runs) {
      const out = join(dir, `data${count}`);
      const { stats } = await mine(['--jsonl', synth, '--split', 'dev=0.2', ...opt, '--out', out]);
      const names = readdirSync(out).sort();
      expect(names).toEqual(['dev.parquet', ...Array.from({ length: count }, (_, k) => `train-0000${k}-of-0000${count}.parquet`)]);
      const groups = new Map<string, number>();
      for (const l of train) {
        const id = (JSON.parse(l) as Row).instance_id;
        groups.set(id, (groups.get(id) ?? 0) + Buffer.byteLength(l) + 1);
      }
      const want = lpt(groups, count);
      await withDb(async (c) => {
        const rows = await query(
          c,
          `SELECT filename, instance_id, chosen_trajectory_id, rejected_trajectory_id FROM read_parquet('${out}/train-*.parquet', filename=true)`,
        );
        expect(rows).toHaveLength(train.length);
        const fileOf = new Map<string, string>();
        for (const r of rows) {
          const f = (r.filename as string).split('/').pop()!;
          expect(fileOf.get(r.instance_id as string) ?? f).toBe(f); // one file per instance
          fileOf.set(r.instance_id as string, f);
          expect(f).toBe(`train-0000${want.get(r.instance_id as string)}-of-0000${count}.parquet`);
        }
        const dev = await query(c, `SELECT DISTINCT instance_id FROM read_parquet('${out}/dev.parquet')`);
        for (const d of dev) expect(fileOf.has(d.instance_id as string)).toBe(false);
      });
      // balance of what the plan balanced (the rows' JSON bytes): within one instance of each other
      const loads = new Array<number>(count).fill(0);
      for (const [k, s] of want) loads[s]! += groups.get(k)!;
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(Math.max(...groups.values()));
      expect((stats.files as { split: string }[]).map((f) => f.split)).toEqual(['train', ...Array(count - 1).fill('train'), 'dev']);
    }
  });

  it('a --force rerun with fewer shards leaves no stale shard behind', async () => {
    const dir = fresh('shards-stale');
    await mine(['--jsonl', synth, '--shards', '4', '--format', 'jsonl', '--out', dir]);
    expect(readdirSync(dir)).toHaveLength(4);
    await mine(['--jsonl', synth, '--shards', '2', '--format', 'jsonl', '--out', dir]);
    expect(readdirSync(dir).sort()).toEqual(['train-00000-of-00002.jsonl', 'train-00001-of-00002.jsonl']);
  });
});

describe('--card', () => {
  it('writes a dataset card: front matter with data_files, command line, funnel, schema, histogram, tool mix, length audit', async () => {
    const dir = fresh('card');
    const card = join(dir, 'README.md');
    const args = ['--jsonl', synth, '--shape', 'trl', '--prompt-window', '4', '--split', 'dev=0.3', '--shards', '2', '--out', join(dir, 'data'), '--card', card];
    const { stats } = await mine(args);
    const all = (await mineShared(['--jsonl', synth, '--shape', 'trl', '--prompt-window', '4'], 'all.jsonl')).out;
    const rows = readJsonl(all);
    const text = readFileSync(card, 'utf8');
    const c = counters(stats);

    expect(text.startsWith('---\n')).toBe(true);
    const front = text.slice(4, text.indexOf('\n---\n', 4));
    expect(front).toContain('license: cc-by-4.0');
    expect(front).toContain(
      ['configs:', '- config_name: default', '  data_files:', '  - split: train', '    path: "data/train-*.parquet"', '  - split: dev', '    path: "data/dev.parquet"'].join('\n'),
    );
    // the data_files globs match exactly the files written
    const files = readdirSync(join(dir, 'data')).sort();
    expect(files.filter((f) => /^train-.*\.parquet$/.test(f))).toHaveLength(2);
    expect(files).toContain('dev.parquet');

    // The input is shown by its file name: the miner's own folders mean nothing to a reader of the card.
    expect(text).toContain(`divergence-mine mine ${args.map((a) => (a === synth ? 'synth.jsonl' : a)).join(' ')}`);
    expect(text).not.toContain(synth);
    expect(text).toContain('Mining contract version: **4**');
    expect(text).toContain('Shape: **trl**');
    expect(text).toContain(`| trajectories read |  | ${c.trajectories_read} |`);
    expect(text).toContain(`| **pairs emitted** | = | ${c.pairs_emitted} |`);
    expect(text).toContain('Identity check: pairs walked');
    expect(text).toContain('| `tools` | string \\| null |');
    expect(text).toContain('| `prompt_messages_dropped` | int |');
    const splits = stats.splits as { split: string; rows: number }[];
    for (const s of splits) expect(text).toMatch(new RegExp(`\\| ${s.split} \\| ${s.rows} \\|`));
    // histogram rows add up to the rows written
    const hist = text.slice(text.indexOf('## Divergence turn'), text.indexOf('## Tool mix'));
    const histRows = [...hist.matchAll(/^\| [\d–+]+ \| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(histRows.reduce((a, b) => a + b, 0)).toBe(c.pairs_emitted);
    // tool mix: chosen execute_bash count from the rows
    const bash = rows.filter((r) => ((r.chosen as Msg[])[0]!.tool_calls as { function: { name: string } }[] | undefined)?.some((x) => x.function.name === 'execute_bash')).length;
    expect(text).toMatch(new RegExp(`\\| \`execute_bash\` \\| ${bash} \\|`));
    expect(text).toContain('## Length audit');
    expect(text).toMatch(/median action characters \| \d+/);
    expect(text).toContain('CC-BY-4.0, © Nebius');
  });

  it('--out, --card and --stats in folders that do not exist yet: all made, nothing made when the run fails', async () => {
    const hub = `hub-${Math.random().toString(36).slice(2)}`; // relative to the CLI's cwd, `work`
    const args = ['mine', '--parquet', join(FIXTURES, 'forks.parquet'), '--shape', 'trl', '--shards', '2', '--out', `${hub}/data`, '--quiet'];
    const missingInput = await run([...args.map((a) => (a.endsWith('forks.parquet') ? join(FIXTURES, 'none.parquet') : a)), '--card', `${hub}/README.md`, '--stats', `${hub}/s/stats.json`]);
    expect(missingInput.code).toBe(3);
    expect(existsSync(join(work, hub))).toBe(false);
    const r = await run([...args, '--card', `${hub}/README.md`, '--stats', `${hub}/s/stats.json`]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(work, hub)).sort()).toStrictEqual(['README.md', 'data', 's']);
    expect(readdirSync(join(work, hub, 'data')).sort()).toStrictEqual(['train-00000-of-00002.parquet', 'train-00001-of-00002.parquet']);
    expect(JSON.parse(readFileSync(join(work, hub, 's', 'stats.json'), 'utf8')).counters.pairs_emitted).toBe(4);
    // A card or stats path under a file is refused before any work.
    writeFileSync(join(work, `${hub}-file`), '');
    const underFile = await run([...args.slice(0, -3), '--out', `${hub}-2/data`, '--quiet', '--stats', `${hub}-file/x/stats.json`]);
    expect(underFile.code).toBe(3);
    expect(underFile.stderr).toContain('is not a folder');
    expect(existsSync(join(work, `${hub}-2`))).toBe(false);
  });

  it('a single-file run gets data_files relative to the card; --card with --out - is refused', async () => {
    const dir = fresh('card-single');
    mkdirSync(join(dir, 'data'));
    await mine(['--parquet', join(FIXTURES, 'forks.parquet'), '--out', join(dir, 'data', 'pairs.jsonl'), '--card', join(dir, 'README.md')]);
    const text = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(text).toContain('  - split: train\n    path: "data/pairs.jsonl"');
    expect(text).toContain('Shape: **published**');
    expect((await run(['mine', '--parquet', join(FIXTURES, 'forks.parquet'), '--out', '-', '--card', join(dir, 'c.md')])).code).toBe(2);
  });
});

describe('merge with the trl shape', () => {
  it('JSONL partitions of a trl run merge into the single run; mixing shapes is refused', async () => {
    const dir = fresh('merge');
    const base = ['--jsonl', synth, '--shape', 'trl', '--prompt-window', '4'];
    const all = (await mineShared(base, 'all.jsonl')).out;
    const parts: string[] = [];
    const stats: string[] = [];
    for (const i of [0, 1]) {
      parts.push(join(dir, `p${i}.jsonl`));
      stats.push(join(dir, `p${i}.json`));
      const r = await run(['mine', ...base, '--partition', `${i}/2`, '--out', parts[i]!, '--stats', stats[i]!, '-q']);
      expect(r.code, r.stderr).toBe(0);
    }
    const m = await run(['merge', ...parts, '--stats', stats[0]!, '--stats', stats[1]!, '--out', join(dir, 'merged.jsonl'), '-q']);
    expect(m.code, m.stderr).toBe(0);
    expect(readFileSync(join(dir, 'merged.jsonl'))).toEqual(readFileSync(all));

    const pub = await run(['mine', '--jsonl', synth, '--partition', '1/2', '--out', join(dir, 'q1.jsonl'), '--stats', join(dir, 'q1.json'), '-q']);
    expect(pub.code).toBe(0);
    const mixed = await run(['merge', parts[0]!, join(dir, 'q1.jsonl'), '--stats', stats[0]!, '--stats', join(dir, 'q1.json'), '--out', join(dir, 'mixed.jsonl'), '-q']);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/refusing to merge/);
    expect(existsSync(join(dir, 'mixed.jsonl'))).toBe(false);
  });
});
