// End-to-end check of `divergence-mine mine` against hand-derived expectations.
//
// Fixtures (fixtures/*.parquet, fixtures/*.jsonl) are forks of three real rows of
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius), built by
// fixtures/build.mjs; the expected counters and pairs in fixtures/expected/*.json
// were derived from the mining contract independently of src/ (see fixtures/README.md).
// This test runs the BUILT CLI (dist/, `npm test` builds first).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(ROOT, 'fixtures');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const RUN_TIMEOUT = 120_000;

const COUNTER_NAMES = [
  'trajectories_read', 'duplicate_trajectory_ids', 'unlabelled', 'bad_rows', 'malformed_arguments', 'unknown_roles',
  'instances', 'eligible_instances', 'trajectories_extracted', 'pairs_walked', 'no_divergence',
  'environment_divergence', 'near_duplicate', 'exact_duplicate', 'capped', 'pairs_emitted', 'divergence_turn_0',
] as const;

interface ExpectedPair {
  instance_id: string;
  chosen_trajectory_id: string;
  rejected_trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
  action_similarity: number;
  prompt_length: number;
}
interface Expected {
  fixture: string;
  args: string[];
  variants: { file: string; format: 'parquet' | 'jsonl' }[];
  counters: Record<string, number>;
  pairs: ExpectedPair[];
  /** the whole output rows, from the reference walker in fixtures/build.mjs */
  rows: OutRow[];
  /** the counters table as printed at the end of stderr */
  table: string;
  trajectory_labels: Record<string, string>;
}
interface SourceCall { id: string; type: string; function: { name: string; arguments: unknown } }
interface SourceMessage {
  role: string;
  content: string | null;
  name: string | null;
  tool_call_id: string | null;
  tool_calls: SourceCall[] | 'None' | null;
}
interface SourceRow { trajectory_id: string; instance_id: string; repo: string | null; trajectory: SourceMessage[] }
type Emitted = Record<string, unknown>;
interface OutRow {
  prompt: Emitted[];
  chosen: Emitted;
  rejected: Emitted;
  instance_id: string;
  repo: string | null;
  chosen_trajectory_id: string;
  rejected_trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
  action_similarity: number;
}

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd, maxBuffer: 64 << 20, timeout: RUN_TIMEOUT }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      res({ code, stdout, stderr });
    });
  });
}

function readJsonl<T>(path: string): T[] {
  const text = readFileSync(path, 'utf8');
  return text.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as T);
}

/** The first row read per trajectory_id (the contract keeps the first one). */
function sourceRows(exp: Expected): Map<string, SourceRow> {
  const v = exp.variants.find((x) => x.format === 'jsonl');
  if (!v) throw new Error(`${exp.fixture}: no JSONL variant to read the source rows from`);
  const m = new Map<string, SourceRow>();
  for (const r of readJsonl<SourceRow>(join(FIXTURES, v.file))) if (!m.has(r.trajectory_id)) m.set(r.trajectory_id, r);
  return m;
}

// Hand-written normalisation (contract sections 2 and 6): only the role's fields; tool_calls
// null / "None" / [] -> null, else the JSON string of [{id, type, function: {name, arguments}}]
// with arguments JSON-parsed when they parse, the raw string otherwise. Content is verbatim.
function parseOrRaw(a: unknown): unknown {
  if (typeof a !== 'string') return a;
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}
function handEmit(m: SourceMessage): Emitted {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      return { role: 'tool', content: m.content, name: m.name, tool_call_id: m.tool_call_id };
    case 'assistant': {
      const calls = m.tool_calls;
      const none = calls == null || calls === 'None' || (Array.isArray(calls) && calls.length === 0);
      return {
        role: 'assistant',
        content: m.content,
        tool_calls: none
          ? null
          : JSON.stringify(
              (calls as SourceCall[]).map((c) => ({
                id: c.id,
                type: c.type,
                function: { name: c.function.name, arguments: parseOrRaw(c.function.arguments) },
              })),
            ),
      };
    }
    default:
      return { role: m.role, content: m.content };
  }
}
/** Compare tool_calls as parsed JSON (field order inside the string is checked in the spot checks). */
function comparable(m: Emitted): Emitted {
  const out: Emitted = { ...m };
  if (typeof out.tool_calls === 'string') out.tool_calls = JSON.parse(out.tool_calls);
  return out;
}

const expectations: Expected[] = readdirSync(join(FIXTURES, 'expected'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(FIXTURES, 'expected', f), 'utf8')) as Expected);

const MESSAGE_FIELDS = ['role', 'content', 'name', 'tool_call_id', 'tool_calls'] as const;
const ROW_KEYS = [
  'prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id',
  'rejected_trajectory_id', 'divergence_turn', 'divergence_msg_index', 'action_similarity',
];

let work: string;
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  work = mkdtempSync(join(tmpdir(), 'dm-e2e-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

it('has the expected fixture set', () => {
  expect(expectations.map((e) => e.fixture)).toEqual([
    'edges', 'edges.reasoning-note', 'edges.reasoning-think', 'edges.similarity',
    'forks', 'labels', 'sampling', 'sampling.k2-cap2', 'sampling.k6-cap5', 'sampling.seed1', 'surrogates',
  ]);
});

it('runs every option of `mine` that changes the contract output in some fixture', () => {
  const used = new Set(expectations.flatMap((e) => e.args.filter((a) => a.startsWith('--'))));
  expect([...used].sort()).toEqual(['--max-pairs-per-instance', '--max-per-side', '--min-similarity-skip', '--reasoning-keys', '--seed']);
});

/** Each call gets its own folder, so no test reads what another one wrote. */
let runNo = 0;
async function mine(exp: Expected, file: string, format: string, out: string, extra: string[] = []) {
  const dir = join(work, `${exp.fixture}--${file}--${++runNo}`);
  mkdirSync(dir, { recursive: true });
  const args = ['mine', `--${format}`, join(FIXTURES, file), '--out', join(dir, out), '--stats', join(dir, 'stats.json'), ...extra, ...exp.args];
  const r = await run(args, dir);
  return { ...r, dir, out: join(dir, out) };
}

async function readParquetRows(path: string): Promise<{ types: Record<string, string>; rows: Record<string, unknown>[] }> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const p = path.replaceAll("'", "''");
    const d = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${p}')`);
    const types = Object.fromEntries(d.getRowObjectsJS().map((x) => [String(x.column_name), String(x.column_type)]));
    const res = await conn.runAndReadAll(`SELECT * FROM read_parquet('${p}')`);
    const rows = res.getRowObjectsJS().map((x) =>
      Object.fromEntries(Object.entries(x).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
    );
    return { types, rows };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** A JSONL message as a parquet struct: all five fields, absent ones null. */
function asStruct(m: Emitted): Record<string, unknown> {
  return Object.fromEntries(MESSAGE_FIELDS.map((f) => [f, m[f] ?? null]));
}

for (const exp of expectations) {
  describe(`fixture ${exp.fixture}`, () => {
    const label = (id: string) => exp.trajectory_labels[id] ?? id;
    const expectedBytes = exp.rows.map((r) => JSON.stringify(r) + '\n').join('');

    for (const v of exp.variants) {
      it(`mines ${v.file} ${exp.args.join(' ')}`.trim(), async () => {
        const r = await mine(exp, v.file, v.format, 'pairs.jsonl');
        expect(r.code, r.stderr).toBe(0);

        const stats = JSON.parse(readFileSync(join(r.dir, 'stats.json'), 'utf8'));
        expect(stats.shape).toBe('published');
        expect(Object.keys(stats.counters).sort()).toEqual([...COUNTER_NAMES].sort());
        expect(stats.counters).toEqual(exp.counters);
        // the table as printed: the last lines of stderr, exactly
        expect(r.stderr.endsWith('\n' + exp.table), r.stderr).toBe(true);

        // whole rows, as parsed values and as bytes (same bytes for every twin input and every run)
        const rows = readJsonl<OutRow>(r.out);
        rows.forEach((row) => expect(Object.keys(row)).toEqual(ROW_KEYS));
        expect(rows.map((x) => [label(x.chosen_trajectory_id), label(x.rejected_trajectory_id)])).toEqual(
          exp.rows.map((x) => [label(x.chosen_trajectory_id), label(x.rejected_trajectory_id)]),
        );
        expect(rows).toStrictEqual(exp.rows);
        expect(readFileSync(r.out, 'utf8')).toBe(expectedBytes);
        expect(rows.map((x) => x.prompt.length)).toEqual(exp.pairs.map((p) => p.prompt_length));

        // second derivation: prompt / chosen / rejected by hand from the source rows
        const src = sourceRows(exp);
        rows.forEach((row, k) => {
          const R = src.get(row.chosen_trajectory_id)!;
          const F = src.get(row.rejected_trajectory_id)!;
          const i = row.divergence_msg_index;
          const where = `row ${k} (${label(row.chosen_trajectory_id)} x ${label(row.rejected_trajectory_id)})`;
          expect(row.repo, where).toBe(R.repo);
          expect(row.prompt.map(comparable), where).toStrictEqual(R.trajectory.slice(0, i).map(handEmit).map(comparable));
          expect(comparable(row.chosen), where).toStrictEqual(comparable(handEmit(R.trajectory[i]!)));
          expect(comparable(row.rejected), where).toStrictEqual(comparable(handEmit(F.trajectory[i]!)));
        });

        spotChecks(exp, rows, src);
      }, RUN_TIMEOUT);
    }

    it('writes published-shape parquet that DuckDB reads back field by field as the JSONL rows', async () => {
      const v = exp.variants[0]!;
      const pq = await mine(exp, v.file, v.format, 'pairs.parquet', ['--quiet']);
      expect(pq.code, pq.stderr).toBe(0);
      // The JSONL rows of this input are exp.rows (the test above pins the CLI's JSONL run to them).
      const jsonl = exp.rows;
      const { types, rows } = await readParquetRows(pq.out);
      const msg = 'STRUCT("role" VARCHAR, "content" VARCHAR, "name" VARCHAR, tool_call_id VARCHAR, tool_calls VARCHAR)';
      expect(types).toEqual({
        prompt: `${msg}[]`,
        chosen: msg,
        rejected: msg,
        instance_id: 'VARCHAR',
        repo: 'VARCHAR',
        chosen_trajectory_id: 'VARCHAR',
        rejected_trajectory_id: 'VARCHAR',
        divergence_turn: 'BIGINT',
        divergence_msg_index: 'BIGINT',
        action_similarity: 'DOUBLE',
      });
      expect(rows.length).toBe(jsonl.length);
      rows.forEach((row, k) => {
        const j = jsonl[k]!;
        const where = `row ${k} (${label(j.chosen_trajectory_id)} x ${label(j.rejected_trajectory_id)})`;
        expect(row.prompt, where).toStrictEqual(j.prompt.map(asStruct));
        expect(row.chosen, where).toStrictEqual(asStruct(j.chosen));
        expect(row.rejected, where).toStrictEqual(asStruct(j.rejected));
        for (const c of ROW_KEYS.slice(3)) expect(row[c], `${where} ${c}`).toStrictEqual(j[c as keyof OutRow]);
      });
    }, RUN_TIMEOUT);
  });
}

// ---------------------------------------------------------------------------
// Spot checks written out literally (the normalisation expectation by hand)
// ---------------------------------------------------------------------------
function byLabels(exp: Expected, rows: OutRow[], chosen: string, rejected: string): OutRow {
  const l = exp.trajectory_labels;
  const row = rows.find((r) => l[r.chosen_trajectory_id] === chosen && l[r.rejected_trajectory_id] === rejected);
  if (!row) throw new Error(`${exp.fixture}: no emitted row ${chosen} x ${rejected}`);
  return row;
}

const T_CWD = '/workspace/tianocore__edk2-pytool-library__0.15';

function spotChecks(exp: Expected, rows: OutRow[], src: Map<string, SourceRow>): void {
  if (exp.fixture === 'sampling') {
    // R-thought-crlf x F-pwd: prompt = messages 0..5 of the resolved fork, verbatim (CRLF and thought kept).
    const row = byLabels(exp, rows, 'R-thought-crlf', 'F-pwd');
    const R = src.get(row.chosen_trajectory_id)!.trajectory;
    const F = src.get(row.rejected_trajectory_id)!.trajectory;
    expect(row.divergence_msg_index).toBe(6);
    expect(row.divergence_turn).toBe(2);
    expect(row.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(row.prompt[0]).toStrictEqual({ role: 'system', content: R[0]!.content });
    expect(row.prompt[1]).toStrictEqual({ role: 'user', content: R[1]!.content });
    const think = (R[2]!.tool_calls as SourceCall[])[0]!;
    expect(row.prompt[2]).toStrictEqual({
      role: 'assistant',
      content: R[2]!.content,
      tool_calls: JSON.stringify([
        { id: think.id, type: 'function', function: { name: 'think', arguments: JSON.parse(think.function.arguments as string) } },
      ]),
    });
    expect(JSON.parse(row.prompt[2]!.tool_calls as string)[0].function.arguments.thought).toMatch(
      /^The bug: GetEdk2RelativePathFromAbsolutePath\(\) can return a path with backslashes/,
    );
    expect(row.prompt[3]).toStrictEqual({ role: 'tool', content: 'Your thought has been logged.', name: 'think', tool_call_id: think.id });
    const view = (R[4]!.tool_calls as SourceCall[])[0]!;
    expect(row.prompt[4]).toStrictEqual({
      role: 'assistant',
      content: '## Phase 2. RUNNING: Setting up and Running Tests\n\n',
      tool_calls: JSON.stringify([{ id: view.id, type: 'function', function: { name: 'str_replace_editor', arguments: { command: 'view', path: '/workspace' } } }]),
    });
    expect(row.prompt[5]).toStrictEqual({ role: 'tool', content: R[5]!.content, name: 'str_replace_editor', tool_call_id: view.id });
    expect(row.prompt[5]!.content as string).toContain('\r\n');
    expect((row.prompt[5]!.content as string).endsWith(' \r\n')).toBe(true);
    const pwd = (R[6]!.tool_calls as SourceCall[])[0]!;
    expect(row.chosen).toStrictEqual({
      role: 'assistant',
      content: '',
      tool_calls: JSON.stringify([{ id: pwd.id, type: 'function', function: { name: 'execute_bash', arguments: { command: `cd ${T_CWD} && pwd` } } }]),
    });
    const ls = (F[6]!.tool_calls as SourceCall[])[0]!;
    expect(row.rejected).toStrictEqual({
      role: 'assistant',
      content: '',
      tool_calls: JSON.stringify([{ id: ls.id, type: 'function', function: { name: 'execute_bash', arguments: { command: `cd ${T_CWD} && ls -la` } } }]),
    });
    expect(row.repo).toBe('tianocore/edk2-pytool-library');
  }
  if (exp.fixture === 'forks') {
    // N-res x N-text: a text action (tool_calls [] / "None") is emitted with tool_calls null.
    const row = byLabels(exp, rows, 'N-res', 'N-text');
    expect(row.rejected).toStrictEqual({
      role: 'assistant',
      content:
        'The tests live in numpydoc/tests and there is a single file, test_docscrape.py. I will run them next and then look for the "Unknown section" warning.',
      tool_calls: null,
    });
    // N-res x N-emoji-a: non-ASCII and emoji survive in the arguments.
    const emoji = byLabels(exp, rows, 'N-res', 'N-emoji-a');
    const calls = JSON.parse(emoji.rejected.tool_calls as string);
    expect(calls[0].function.arguments.command).toBe(
      'cd /workspace/numpy__numpydoc__0.7 && echo "Prüfung der Abschnitte — ✅ 🚀 节" && python -m pytest numpydoc/tests/ -q -k "Überschrift or section"',
    );
    // P-res-narr x P-cmd: the narration of the chosen message is kept verbatim.
    const narr = byLabels(exp, rows, 'P-res-narr', 'P-cmd');
    expect(narr.chosen.content).toBe('Let me list the repository root:\n\n');
    expect(narr.prompt[2]!.content).toMatch(/^I'll add `diff` support to `linopy.variables.Variable`/);
  }
  if (exp.fixture === 'labels') {
    // T-res x T-mal: malformed arguments stay the raw string inside the emitted tool_calls.
    const row = byLabels(exp, rows, 'T-res', 'T-mal');
    const id = (src.get(row.rejected_trajectory_id)!.trajectory[6]!.tool_calls as SourceCall[])[0]!.id;
    expect(row.rejected).toStrictEqual({
      role: 'assistant',
      content: '',
      tool_calls: `[{"id":"${id}","type":"function","function":{"name":"execute_bash","arguments":"{'command': 'cd ${T_CWD} && git status'}"}}]`,
    });
    // the repeated trajectory_id kept its first row (resolved, original messages)
    expect(row.chosen_trajectory_id).toBe('chatcmpl-eb27c5fe3baa10d5272928b4e016d84f');
    expect(row.prompt.length).toBe(6);
  }
}

// --partition i/N keeps the instances with uint64_be(SHA-256(instance_id)[0..8]) mod N = i, every other rule
// unchanged: each part's rows are the whole run's rows of its instances, in the same order, computed here
// from the rule itself (node:crypto), not from src/.
describe('--partition i/N through the CLI', () => {
  const partOf = (instance: string, n: number) => Number(createHash('sha256').update(instance, 'utf8').digest().readBigUInt64BE(0) % BigInt(n));
  for (const fixture of ['sampling', 'forks']) {
    const exp = expectations.find((e) => e.fixture === fixture)!;
    it(`${fixture}: parts 0/3, 1/3, 2/3 hold exactly the expected rows of their instances`, async () => {
      const v = exp.variants.find((x) => x.format === 'parquet') ?? exp.variants[0]!;
      const seen: OutRow[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await mine(exp, v.file, v.format, 'part.jsonl', ['--partition', `${i}/3`]);
        expect(r.code, r.stderr).toBe(0);
        const rows = readJsonl<OutRow>(r.out);
        expect(rows).toStrictEqual(exp.rows.filter((row) => partOf(row.instance_id, 3) === i));
        const stats = JSON.parse(readFileSync(join(r.dir, 'stats.json'), 'utf8'));
        expect(stats.counters.pairs_emitted).toBe(rows.length);
        expect(stats.partition).toEqual({ index: i, count: 3 });
        seen.push(...rows);
      }
      expect(seen.length).toBe(exp.rows.length);
    }, RUN_TIMEOUT);
  }
});
