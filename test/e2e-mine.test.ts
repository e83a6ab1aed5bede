// End-to-end check of `divergence-mine mine` against hand-derived expectations.
//
// Fixtures (fixtures/*.parquet, fixtures/*.jsonl) are forks of three real rows of
// nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius), built by
// fixtures/build.mjs; the expected counters and pairs in fixtures/expected/*.json
// were derived from the mining contract independently of src/ (see fixtures/README.md).
// This test runs the BUILT CLI (dist/, `npm test` builds first).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
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

let work: string;
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  work = mkdtempSync(join(tmpdir(), 'dm-e2e-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

it('has the expected fixture set', () => {
  expect(expectations.map((e) => e.fixture)).toEqual(['forks', 'labels', 'sampling', 'sampling.seed1']);
});

for (const exp of expectations) {
  describe(`fixture ${exp.fixture}`, () => {
    const outputs = new Map<string, Buffer>();
    const dirOf = (file: string, tag = 'run') => join(work, `${exp.fixture}--${file}--${tag}`);

    async function mine(file: string, format: string, tag = 'run', out = 'pairs.jsonl') {
      const dir = dirOf(file, tag);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      const args = ['mine', `--${format}`, join(FIXTURES, file), '--out', join(dir, out), '--stats', join(dir, 'stats.json'), '--quiet', ...exp.args];
      const r = await run(args, dir);
      return { ...r, dir };
    }

    for (const v of exp.variants) {
      it(`mines ${v.file} ${exp.args.join(' ')}`.trim(), async () => {
        const r = await mine(v.file, v.format);
        expect(r.code, r.stderr).toBe(0);

        const stats = JSON.parse(readFileSync(join(r.dir, 'stats.json'), 'utf8'));
        expect(Object.keys(stats.counters).sort()).toEqual([...COUNTER_NAMES].sort());
        expect(stats.counters).toEqual(exp.counters);
        const c = stats.counters as Record<string, number>;
        expect(c.pairs_walked).toBe(
          (c.no_divergence ?? 0) + (c.environment_divergence ?? 0) + (c.near_duplicate ?? 0) +
            (c.exact_duplicate ?? 0) + (c.capped ?? 0) + (c.pairs_emitted ?? 0),
        );

        const bytes = readFileSync(join(r.dir, 'pairs.jsonl'));
        outputs.set(v.file, bytes);
        const rows = readJsonl<OutRow>(join(r.dir, 'pairs.jsonl'));
        expect(rows.length).toBe(exp.pairs.length);
        const label = (id: string) => exp.trajectory_labels[id] ?? id;
        rows.forEach((row, k) => {
          const e = exp.pairs[k]!;
          const where = `row ${k} (${label(e.chosen_trajectory_id)} x ${label(e.rejected_trajectory_id)})`;
          expect(Object.keys(row), where).toEqual([
            'prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id',
            'rejected_trajectory_id', 'divergence_turn', 'divergence_msg_index', 'action_similarity',
          ]);
          expect(row.instance_id, where).toBe(e.instance_id);
          expect(row.chosen_trajectory_id, where).toBe(e.chosen_trajectory_id);
          expect(row.rejected_trajectory_id, where).toBe(e.rejected_trajectory_id);
          expect(row.divergence_turn, where).toBe(e.divergence_turn);
          expect(row.divergence_msg_index, where).toBe(e.divergence_msg_index);
          expect(Math.abs(row.action_similarity - e.action_similarity), where).toBeLessThanOrEqual(1e-12);
          expect(row.prompt.length, where).toBe(e.prompt_length);
        });

        // prompt / chosen / rejected of every row against the hand normalisation of the source rows
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

    it('gives byte-identical output for every twin input', () => {
      const first = outputs.get(exp.variants[0]!.file);
      expect(first, 'first variant did not run').toBeDefined();
      for (const v of exp.variants.slice(1)) {
        const b = outputs.get(v.file);
        expect(b, `${v.file} did not run`).toBeDefined();
        expect(b!.equals(first!), `${v.file} vs ${exp.variants[0]!.file}`).toBe(true);
      }
    });

    it('gives byte-identical output across two runs', async () => {
      const v = exp.variants[0]!;
      const r = await mine(v.file, v.format, 'again');
      expect(r.code, r.stderr).toBe(0);
      const first = outputs.get(v.file);
      expect(first).toBeDefined();
      expect(readFileSync(join(r.dir, 'pairs.jsonl')).equals(first!)).toBe(true);
    }, RUN_TIMEOUT);

    it('writes parquet output that DuckDB reads with the same rows', async () => {
      const v = exp.variants[0]!;
      const r = await mine(v.file, v.format, 'parquet', 'pairs.parquet');
      expect(r.code, r.stderr).toBe(0);
      const instance = await DuckDBInstance.create(':memory:');
      const conn = await instance.connect();
      try {
        const path = join(r.dir, 'pairs.parquet').replaceAll("'", "''");
        const res = await conn.runAndReadAll(
          `SELECT chosen_trajectory_id, rejected_trajectory_id, divergence_msg_index FROM read_parquet('${path}')`,
        );
        const got = res.getRows().map((x) => [String(x[0]), String(x[1]), Number(x[2])]);
        expect(got).toEqual(exp.pairs.map((p) => [p.chosen_trajectory_id, p.rejected_trajectory_id, p.divergence_msg_index]));
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
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
