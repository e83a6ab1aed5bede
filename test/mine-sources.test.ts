// Other trajectory sources and shapes end to end: the BUILT CLI (`npm run build` first) on fixtures/sources/* for each source
// (Open-SWE-Traces JSONL and parquet, SWE-Gym, text actions) and each shape (published, --behavior,
// --continuation trajectory, --unit groups, --max-continuation-messages, --shape sft).
//
// Fixtures: derived from three real rows of nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0,
// © Nebius; Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius
// blog, 2025), see fixtures/sources/README.md.
//
// Expected values are derived by hand, never copied from the output:
//   - divergence indices from the README's "skips turn at" column (10 PyPSA, 16 numpy, 10 tianocore;
//     SWE-Gym has tianocore and numpy only); the failed run is the real row without the assistant
//     message at that index and its tool result;
//   - trajectory ids, prompts and continuations from the fixture rows themselves, emitted by the
//     contract's section 6 (transcribed below, not imported from src/);
//   - action_similarity = string-similarity compareTwoStrings of the two action signatures, the
//     signatures written by the contract's section 3 (tool calls) or, for text actions, the literal
//     `bash ...` strings of test/sources-text-actions.test.ts;
//   - behaviour labels from the commands (listed per case, rules in src/shapes/behavior.ts header).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import stableStringify from 'fast-json-stable-stringify';
import stringSimilarity from 'string-similarity';
import { DuckDBInstance } from '@duckdb/node-api';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = join(ROOT, 'fixtures', 'sources');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const TIMEOUT = 120_000;

const P = 'PyPSA__linopy-79';
const N = 'numpy__numpydoc-101';
const T = 'tianocore__edk2-pytool-library-372';
/** README: the failed run skips the assistant turn at this message index. */
const SKIP: Record<string, number> = { [P]: 10, [N]: 16, [T]: 10 };

const CONTRACT_FIELDS = [
  'prompt', 'chosen', 'rejected', 'instance_id', 'repo', 'chosen_trajectory_id', 'rejected_trajectory_id',
  'divergence_turn', 'divergence_msg_index', 'action_similarity',
];
const ZERO_COUNTERS = {
  trajectories_read: 0, duplicate_trajectory_ids: 0, unlabelled: 0, bad_rows: 0, malformed_arguments: 0, unknown_roles: 0,
  instances: 0, eligible_instances: 0, trajectories_extracted: 0, pairs_walked: 0, no_divergence: 0,
  environment_divergence: 0, near_duplicate: 0, exact_duplicate: 0, capped: 0, pairs_emitted: 0, divergence_turn_0: 0,
};

type Json = Record<string, unknown>;
interface SourceCall { id: string; type: string; function: { name: string; arguments: unknown } }
interface SourceMessage { role: string; content: string | null; name?: string | null; tool_call_id?: string | null; tool_calls?: SourceCall[] | null }
interface Run { code: number; stdout: string; stderr: string }

let dir = '';
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-sources-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<Run> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, maxBuffer: 64 << 20, timeout: TIMEOUT }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

let runNo = 0;
/** `mine` with --stats; returns the rows (JSONL on stdout), the stats document and stderr. */
async function mine(args: string[]): Promise<{ rows: Json[]; stats: Json & { counters: Record<string, number>; options: Json }; stderr: string }> {
  const stats = join(dir, `stats-${++runNo}.json`);
  const r = await cli(['mine', ...args, '--out', '-', '--stats', stats, '--workers', '2']);
  expect(r.code, r.stderr).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
  return { rows, stats: JSON.parse(readFileSync(stats, 'utf8')), stderr: r.stderr };
}

function readRows(file: string): Json[] {
  return readFileSync(join(SOURCES, file), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
}

// ---- the contract, transcribed (sections 2, 3 and 6)

function norm(s: string | null | undefined): string {
  return (s ?? '').replace(/\r\n/g, '\n').split('\n').map((l) => l.replace(/[ \t]+$/, '')).join('\n').trim();
}
function args(a: unknown): unknown {
  return typeof a === 'string' ? JSON.parse(a) : a;
}
function callsOf(m: SourceMessage): SourceCall[] {
  return Array.isArray(m.tool_calls) && m.tool_calls.length > 0 ? m.tool_calls : [];
}
/** Section 3 actionSignature (reasoning keys thought, reasoning, think). */
function signature(m: SourceMessage): string {
  const calls = callsOf(m);
  if (calls.length === 0) return `text ${norm(m.content)}`;
  return calls
    .map((c) => {
      const a = { ...(args(c.function.arguments) as Json) };
      for (const k of ['thought', 'reasoning', 'think']) delete a[k];
      return `${c.function.name} ${stableStringify(a)}`;
    })
    .join('\n');
}
/** Section 6: only the role's fields, tool_calls a JSON string of the parsed calls or null. */
function emit(m: SourceMessage): Json {
  if (m.role === 'assistant') {
    const calls = callsOf(m);
    const tc = calls.length === 0 ? null : JSON.stringify(calls.map((c) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: args(c.function.arguments) } })));
    return { role: 'assistant', content: m.content, tool_calls: tc };
  }
  if (m.role === 'tool') return { role: 'tool', content: m.content, name: m.name ?? null, tool_call_id: m.tool_call_id ?? null };
  return { role: m.role, content: m.content };
}
function withLoss(m: SourceMessage, loss = m.role === 'assistant'): Json {
  return { ...emit(m), loss };
}
const similarity = (a: string, b: string) => stringSimilarity.compareTwoStrings(a, b);
const assistantsBefore = (msgs: SourceMessage[], i: number) => msgs.slice(0, i).filter((m) => m.role === 'assistant').length;

/** The expected contract row of an instance: chosen = the resolved row, rejected = the failed row. */
interface Side { id: string; messages: SourceMessage[] }
function expectedRow(instance: string, repo: string | null, r: Side, f: Side, sim: number): Json {
  const i = SKIP[instance]!;
  return {
    prompt: r.messages.slice(0, i).map(emit),
    chosen: emit(r.messages[i]!),
    rejected: emit(f.messages[i]!),
    instance_id: instance,
    repo,
    chosen_trajectory_id: r.id,
    rejected_trajectory_id: f.id,
    divergence_turn: assistantsBefore(r.messages, i),
    divergence_msg_index: i,
    action_similarity: sim,
  };
}

// ---- the fixtures, read by hand

const OST = readRows('open-swe-traces.jsonl');
const GYM = readRows('swe-gym.jsonl');
const TXT = readRows('text-actions.jsonl');
const side = (rows: Json[], instance: string, label: unknown, id: (r: Json) => string): Side => {
  const r = rows.find((x) => x.instance_id === instance && x.resolved === label)!;
  return { id: id(r), messages: r.messages as SourceMessage[] };
};
const ostId = (r: Json) => r.trajectory_id as string;
const gymId = (r: Json) => `${r.run_id as string}:${r.instance_id as string}`;
const txtId = (r: Json) => r.traj_id as string;

/** The divergence at the README's index: the real action there against the real action two messages on. */
function checkSkip(r: Side, f: Side, i: number) {
  expect(f.messages.slice(0, i)).toEqual(r.messages.slice(0, i));
  expect(signature(f.messages[i]!)).toBe(signature(r.messages[i + 2]!));
}

function ostExpected(): Json[] {
  // Instances in ascending instance_id order (JavaScript string order): 'P' < 'n' < 't'.
  return [P, N, T].map((inst) => {
    const r = side(OST, inst, 1, ostId);
    const f = side(OST, inst, 0, ostId);
    const i = SKIP[inst]!;
    checkSkip(r, f, i);
    return expectedRow(inst, expectedRepo(inst), r, f, similarity(signature(r.messages[i]!), signature(f.messages[i]!)));
  });
}

const OST_COUNTERS = {
  ...ZERO_COUNTERS,
  trajectories_read: 9,
  unlabelled: 3, // resolved -1 is not a label (contract section 1)
  instances: 3,
  eligible_instances: 3,
  trajectories_extracted: 6,
  pairs_walked: 3,
  pairs_emitted: 3,
};

const OST_LINE =
  'divergence-mine: schema open-swe-traces (auto-detected: columns trajectory_id + messages (Open-SWE-Traces layout)); ' +
  'columns id=trajectory_id instance=instance_id messages=messages resolved=resolved tools=tools repo=repo';

describe('sources: one run per source, the contract rows and counters (CC-BY-4.0 © Nebius fixtures)', () => {
  it('the fixture repos are the ones the rows name', () => {
    for (const inst of [P, N, T]) expect(OST.filter((r) => r.instance_id === inst).map((r) => r.repo)).toEqual(Array(3).fill(expectedRepo(inst)));
  });

  it.each([
    ['open-swe-traces.jsonl', []],
    ['open-swe-traces.parquet', []],
    ['open-swe-traces.parquet', ['--engine', 'duckdb']],
  ])('%s %j: detected, 3 pairs at 10, 16, 10 with 3 unlabelled', async (file, extra) => {
    const { rows, stats, stderr } = await mine([join(SOURCES, file), ...extra]);
    expect(stderr.split('\n')[0]).toBe(OST_LINE);
    expect(stats.counters).toEqual(OST_COUNTERS);
    expect(rows).toEqual(ostExpected());
    for (const r of rows) expect(Object.keys(r)).toEqual(CONTRACT_FIELDS);
    expect(stats.options).toMatchObject({ schema: 'open-swe-traces', columns: { id: 'trajectory_id', messages: 'messages', tools: 'tools', repo: 'repo' } });
  }, TIMEOUT);

  it('--quiet prints no detection line', async () => {
    const r = await cli(['mine', join(SOURCES, 'open-swe-traces.jsonl'), '--out', '-', '-q']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  }, TIMEOUT);

  it('swe-gym.jsonl: composite ids run_id:instance_id, boolean labels, 2 pairs at 16 and 10', async () => {
    const { rows, stats, stderr } = await mine(['--jsonl', join(SOURCES, 'swe-gym.jsonl')]);
    expect(stderr.split('\n')[0]).toBe(
      'divergence-mine: schema openhands (auto-detected: columns run_id+instance_id + messages, tool calls in the sample row); ' +
        'columns id=run_id+instance_id instance=instance_id messages=messages resolved=resolved tools=tools',
    );
    expect(stats.counters).toEqual({ ...ZERO_COUNTERS, trajectories_read: 4, instances: 2, eligible_instances: 2, trajectories_extracted: 4, pairs_walked: 2, pairs_emitted: 2 });
    const expected = [N, T].map((inst) => {
      const r = side(GYM, inst, true, gymId);
      const f = side(GYM, inst, false, gymId);
      checkSkip(r, f, SKIP[inst]!);
      return expectedRow(inst, null, r, f, similarity(signature(r.messages[SKIP[inst]!]!), signature(f.messages[SKIP[inst]!]!)));
    });
    expect(expected.map((e) => e.chosen_trajectory_id)).toEqual([`fixture-run_1:${N}`, `fixture-run_1:${T}`]);
    expect(expected.map((e) => e.rejected_trajectory_id)).toEqual([`fixture-run_2:${N}`, `fixture-run_2:${T}`]);
    expect(rows).toEqual(expected);
  }, TIMEOUT);

  // The last bash block of each side's reply at the divergence (as in test/sources-text-actions.test.ts).
  const BASH: Record<string, [string, string]> = {
    [P]: ['bash cd /workspace/PyPSA__linopy__0.0 && find . -name "*.md" -o -name "*.rst" | head -10', 'bash cd /workspace/PyPSA__linopy__0.0 && ls -la'],
    [N]: ['bash cd /workspace/numpy__numpydoc__0.7 && grep -r "Unknown section" .', 'bash nl -ba /workspace/numpy__numpydoc__0.7/numpydoc/docscrape.py'],
    [T]: [
      'bash cd /workspace/tianocore__edk2-pytool-library__0.15 && find . -name "*.py" -path "./tests*" | head -10',
      'bash cd /workspace/tianocore__edk2-pytool-library__0.15 && python -m pytest --help | head -20',
    ],
  };

  it('text-actions.jsonl: detected from the first row, similarity on the bash signatures', async () => {
    const { rows, stats, stderr } = await mine(['--jsonl', join(SOURCES, 'text-actions.jsonl')]);
    expect(stderr.split('\n')[0]).toBe(
      "divergence-mine: schema text-actions (auto-detected: the sample row's assistant messages have no tool calls and hold fenced bash blocks); " +
        'columns id=traj_id instance=instance_id messages=messages resolved=resolved',
    );
    expect(stats.counters).toEqual({ ...ZERO_COUNTERS, trajectories_read: 6, instances: 3, eligible_instances: 3, trajectories_extracted: 6, pairs_walked: 3, pairs_emitted: 3 });
    const expected = [P, N, T].map((inst) => {
      const r = side(TXT, inst, true, txtId);
      const f = side(TXT, inst, false, txtId);
      return expectedRow(inst, null, r, f, similarity(...BASH[inst]!));
    });
    expect(rows).toEqual(expected);
    expect(stats.options).toMatchObject({ schema: 'text-actions' });
  }, TIMEOUT);

  it('text-actions.jsonl with --schema openhands: the whole reply is the signature (text ...)', async () => {
    const { rows, stderr } = await mine([join(SOURCES, 'text-actions.jsonl'), '--schema', 'openhands']);
    expect(stderr.split('\n')[0]).toMatch(/^divergence-mine: schema openhands \(given with --schema\)/);
    expect(rows.map((r) => r.divergence_msg_index)).toEqual([10, 16, 10]);
    for (const [k, inst] of [P, N, T].entries()) {
      const r = side(TXT, inst, true, txtId).messages[SKIP[inst]!]!;
      const f = side(TXT, inst, false, txtId).messages[SKIP[inst]!]!;
      expect(rows[k]!.action_similarity).toBe(similarity(`text ${norm(r.content)}`, `text ${norm(f.content)}`));
    }
  }, TIMEOUT);

  it("the contract's layout (trajectory_id + trajectory) is never sampled: text replies stay text unless --schema text-actions", async () => {
    const input = join(dir, 'text-actions-upstream.jsonl');
    const up = TXT.map((r) => ({ trajectory_id: r.traj_id, instance_id: r.instance_id, resolved: r.resolved ? 1 : 0, trajectory: r.messages }));
    writeFileSync(input, up.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const plain = await mine([input]);
    expect(plain.stderr.split('\n')[0]).toBe(
      'divergence-mine: schema openhands (auto-detected: columns trajectory_id + trajectory); columns id=trajectory_id instance=instance_id messages=trajectory resolved=resolved',
    );
    expect(plain.stats.options.schema).toBeUndefined(); // the upstream layout: the stats document has no source or shape fields
    const asText = await mine([input, '--schema', 'text-actions']);
    [P, N, T].forEach((inst, k) => {
      const r = side(TXT, inst, true, txtId).messages[SKIP[inst]!]!;
      const f = side(TXT, inst, false, txtId).messages[SKIP[inst]!]!;
      expect(plain.rows[k]!.action_similarity).toBe(similarity(`text ${norm(r.content)}`, `text ${norm(f.content)}`));
      expect(asText.rows[k]!.action_similarity).toBe(similarity(...BASH[inst]!));
    });
  }, TIMEOUT);

  it('column options: --id-column / --instance-column / --messages-column / --resolved-column', async () => {
    // Open-SWE-Traces read as SWE-Gym-like: id from two columns, the same pairs under other ids.
    const { rows, stderr } = await mine([join(SOURCES, 'open-swe-traces.jsonl'), '--id-column', 'instance_id,trajectory_id', '--messages-column', 'messages', '--resolved-column', 'resolved', '--instance-column', 'instance_id']);
    expect(stderr.split('\n')[0]).toMatch(/columns id=instance_id\+trajectory_id instance=instance_id messages=messages resolved=resolved/);
    expect(rows.map((r) => r.chosen_trajectory_id)).toEqual(ostExpected().map((e) => `${e.instance_id as string}:${e.chosen_trajectory_id as string}`));
  }, TIMEOUT);
});

function expectedRepo(inst: string): string {
  return inst === P ? 'PyPSA/linopy' : inst === N ? 'numpy/numpydoc' : 'tianocore/edk2-pytool-library';
}

describe('schema and option errors', () => {
  it('a named column that does not exist: exit 6 with the columns found', async () => {
    const r = await cli(['mine', join(SOURCES, 'swe-gym.jsonl'), '--out', '-', '-q', '--id-column', 'trajectory_id']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/--id-column trajectory_id: no such column \(found columns: instance_id, run_id, resolved, messages, tools, test_result\)/);
    const m = await cli(['mine', join(SOURCES, 'open-swe-traces.parquet'), '--out', '-', '-q', '--messages-column', 'trajectory']);
    expect(m.code).toBe(6);
    expect(m.stderr).toMatch(/--messages-column trajectory: no such column \(found columns: instance_id, repo, /);
  }, TIMEOUT);

  it('no layout fits: exit 6 listing what was tried and found', async () => {
    const bad = join(dir, 'no-instance.jsonl');
    writeFileSync(bad, readFileSync(join(SOURCES, 'swe-gym.jsonl'), 'utf8').replaceAll('"instance_id"', '"task"'));
    const r = await cli(['mine', bad, '--out', '-', '-q', '--schema', 'openhands']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/cannot map the columns for --schema openhands: no id column .*; no instance column .*\(found columns: task, run_id, resolved, messages, tools, test_result\)/);
  }, TIMEOUT);

  it.each([
    [['--schema', 'sweagent'], /argument 'sweagent' is invalid/],
    [['--unit', 'groups'], /--unit groups needs --continuation trajectory/],
    [['--max-continuation-messages', '4'], /--max-continuation-messages needs --continuation trajectory/],
    [['--continuation', 'trajectory', '--shape', 'trl'], /not available with --shape trl/],
    [['--continuation', 'trajectory', '--unit', 'groups', '--shape', 'sft'], /--unit groups is a preference layout/],
  ])('%j: usage error (exit 2)', async (extra, message) => {
    const r = await cli(['mine', join(SOURCES, 'swe-gym.jsonl'), '--out', '-', '-q', ...extra]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  }, TIMEOUT);
});

describe('shapes on Open-SWE-Traces (and text actions)', () => {
  it('--behavior adds one label per side after action_similarity; everything else as the contract', async () => {
    // At the divergence (hand-labelled from the commands, no edit before in any prompt):
    //   P: find ... (inspect) vs ls -la (inspect); N: grep -r (inspect) vs str_replace_editor view (inspect);
    //   T: find ... (inspect) vs pytest --help (inspect: a help run).
    for (const file of ['open-swe-traces.jsonl', 'text-actions.jsonl']) {
      const { rows, stats } = await mine([join(SOURCES, file), '--behavior']);
      expect(stats.counters.pairs_emitted).toBe(3);
      expect(rows.map((r) => Object.keys(r))).toEqual(Array(3).fill([...CONTRACT_FIELDS, 'chosen_behavior_sequence', 'rejected_behavior_sequence']));
      for (const r of rows) {
        expect(r.chosen_behavior_sequence).toEqual(['inspect_diagnose']);
        expect(r.rejected_behavior_sequence).toEqual(['inspect_diagnose']);
      }
      expect(rows.map((r) => r.divergence_msg_index)).toEqual([10, 16, 10]);
    }
  }, TIMEOUT);

  it('--continuation trajectory: each side from the divergence to its end, loss on assistant messages; counters unchanged', async () => {
    const { rows, stats } = await mine([join(SOURCES, 'open-swe-traces.jsonl'), '--continuation', 'trajectory']);
    expect(stats.counters).toEqual(OST_COUNTERS);
    expect(stats.options).toMatchObject({ continuation: 'trajectory', behavior: true });
    const base = ostExpected();
    // Behaviour of every turn from the divergence on (the commands of the fixture rows):
    //   P chosen 10 find, 12 ls, 14 view pyproject, 16 pytest --version (inspect), 18/20 python -c (test),
    //     22/24 pytest (test) -> inspect_diagnose, reproduce_test; the failed side is the same from 12 on.
    //   N chosen 16 grep, 18 view, 20 grep, 22-26 view, 28-32 grep, 34 view: all inspect.
    //   T chosen 10 find, 12 pytest --help (inspect), 14 pytest -v (test), 16 find -exec grep, 18-24 view,
    //     26 grep, 28 view (inspect) -> inspect, reproduce, inspect; the failed side the same from 12.
    const seq: Record<string, string[]> = {
      [P]: ['inspect_diagnose', 'reproduce_test'],
      [N]: ['inspect_diagnose'],
      [T]: ['inspect_diagnose', 'reproduce_test', 'inspect_diagnose'],
    };
    rows.forEach((row, k) => {
      const e = base[k]!;
      const inst = e.instance_id as string;
      const i = SKIP[inst]!;
      const r = side(OST, inst, 1, ostId).messages;
      const f = side(OST, inst, 0, ostId).messages;
      expect(row).toEqual({
        ...e,
        chosen: r.slice(i).map((m) => withLoss(m)),
        rejected: f.slice(i).map((m) => withLoss(m)),
        chosen_behavior_sequence: seq[inst],
        rejected_behavior_sequence: seq[inst],
      });
      expect(Object.keys(row)).toEqual([...CONTRACT_FIELDS, 'chosen_behavior_sequence', 'rejected_behavior_sequence']);
    });
  }, TIMEOUT);

  it('--max-continuation-messages 5: whole turns (2 messages each here), so 4 messages per side', async () => {
    const { rows, stats } = await mine([join(SOURCES, 'open-swe-traces.jsonl'), '--continuation', 'trajectory', '--max-continuation-messages', '5']);
    expect(stats.counters).toEqual(OST_COUNTERS);
    for (const row of rows) {
      const inst = row.instance_id as string;
      const i = SKIP[inst]!;
      expect(row.chosen).toEqual(side(OST, inst, 1, ostId).messages.slice(i, i + 4).map((m) => withLoss(m)));
      expect(row.rejected).toEqual(side(OST, inst, 0, ostId).messages.slice(i, i + 4).map((m) => withLoss(m)));
    }
  }, TIMEOUT);

  /** Every assistant message of each side supervised in exactly one row of its pair. */
  function checkGroups(rows: Json[], pair: Json, chosen: Json[], rejected: Json[], g: number, complete: boolean) {
    const uid = `${pair.chosen_trajectory_id as string}~${pair.rejected_trajectory_id as string}`;
    expect(rows.map((r) => r.sample_uid)).toEqual(Array.from({ length: g }, (_, k) => `${uid}#k${k + 1}`));
    for (const [name, full] of [['chosen', chosen], ['rejected', rejected]] as const) {
      const supervised = new Array<number>(full.length).fill(0);
      let prev = 0;
      rows.forEach((row, k) => {
        expect(row).toMatchObject({ prefix_groups: k + 1, group_count: g, is_full_trajectory: complete && k + 1 === g });
        const part = row[name] as Json[];
        expect(part.map(({ loss: _l, ...m }) => m)).toEqual(full.slice(0, part.length).map(({ loss: _l, ...m }) => m));
        expect(part.length).toBeGreaterThan(prev);
        part.forEach((m, j) => {
          expect(m.loss).toBe(m.role === 'assistant' && j >= prev);
          if (m.loss) supervised[j]!++;
        });
        prev = part.length;
      });
      expect(prev).toBe(full.length);
      full.forEach((m, j) => expect(supervised[j]).toBe(m.role === 'assistant' ? 1 : 0));
    }
  }

  it('--unit groups: G = min(6, turns) rows per pair, each assistant turn supervised once', async () => {
    const { rows, stats } = await mine([join(SOURCES, 'open-swe-traces.jsonl'), '--continuation', 'trajectory', '--unit', 'groups']);
    expect(stats.counters).toEqual(OST_COUNTERS); // pairs_emitted stays the number of pairs
    // Turns (one assistant + one tool message each) from the divergence: P 8 vs 7, N 10 vs 9, T 10 vs 9: G = 6 each.
    expect(stats.group_rows).toBe(18);
    expect(rows).toHaveLength(18);
    ostExpected().forEach((pair, p) => {
      const inst = pair.instance_id as string;
      const i = SKIP[inst]!;
      const chosen = side(OST, inst, 1, ostId).messages.slice(i).map((m) => withLoss(m));
      const rejected = side(OST, inst, 0, ostId).messages.slice(i).map((m) => withLoss(m));
      const mine = rows.slice(6 * p, 6 * p + 6);
      for (const r of mine) for (const f of CONTRACT_FIELDS.filter((x) => x !== 'chosen' && x !== 'rejected')) expect(r[f]).toEqual(pair[f]);
      checkGroups(mine, pair, chosen, rejected, 6, true);
      expect(Object.keys(mine[0]!)).toEqual([...CONTRACT_FIELDS, 'chosen_behavior_sequence', 'rejected_behavior_sequence', 'sample_uid', 'prefix_groups', 'group_count', 'is_full_trajectory']);
      // The first group is the divergence turn alone: inspect on both sides (see --behavior above).
      expect(mine[0]!.chosen_behavior_sequence).toEqual(['inspect_diagnose']);
    });
  }, TIMEOUT);

  it('--unit groups with --max-continuation-messages 5: 2 turns per side, G = 2, never the full trajectory', async () => {
    const { rows, stats } = await mine([join(SOURCES, 'text-actions.jsonl'), '--continuation', 'trajectory', '--unit', 'groups', '--max-continuation-messages', '5']);
    expect(stats.group_rows).toBe(6);
    [P, N, T].forEach((inst, p) => {
      const i = SKIP[inst]!;
      const r = side(TXT, inst, true, txtId);
      const f = side(TXT, inst, false, txtId);
      const pair = { chosen_trajectory_id: r.id, rejected_trajectory_id: f.id };
      checkGroups(rows.slice(2 * p, 2 * p + 2), pair, r.messages.slice(i, i + 4).map((m) => withLoss(m)), f.messages.slice(i, i + 4).map((m) => withLoss(m)), 2, false);
    });
  }, TIMEOUT);

  it('--shape sft: the resolved side only, one row per pair', async () => {
    const { rows, stats } = await mine([join(SOURCES, 'swe-gym.jsonl'), '--shape', 'sft']);
    expect(stats.counters.pairs_emitted).toBe(2);
    expect(stats).toMatchObject({ shape: 'sft', sft_rows: 2, sft_duplicates: 0 });
    expect(rows).toEqual(
      [N, T].map((inst) => {
        const r = side(GYM, inst, true, gymId);
        const i = SKIP[inst]!;
        return {
          prompt: r.messages.slice(0, i).map(emit),
          completion: [emit(r.messages[i]!)],
          instance_id: inst,
          repo: null,
          trajectory_id: r.id,
          divergence_turn: assistantsBefore(r.messages, i),
          divergence_msg_index: i,
        };
      }),
    );
  }, TIMEOUT);

  it('--shape sft dedupes (instance, prompt, completion): two failed runs diverging at the same action give one row', async () => {
    // A second failed PyPSA run: the first failed run with another command at its message 10.
    const f = OST.find((x) => x.instance_id === P && x.resolved === 0)!;
    const msgs = structuredClone(f.messages) as SourceMessage[];
    const call = msgs[10]!.tool_calls![0]!;
    call.function.arguments = JSON.stringify({ command: 'cd /workspace/PyPSA__linopy__0.0 && git log --oneline | head -5' });
    const extra = { ...f, trajectory_id: '00000000-0000-0000-0000-00000000f2f2', messages: msgs };
    const input = join(dir, 'ost-two-failed.jsonl');
    writeFileSync(input, [...OST, extra].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const pairs = await mine([input]);
    expect(pairs.stats.counters).toMatchObject({ trajectories_read: 10, pairs_walked: 4, pairs_emitted: 4 });
    const { rows, stats } = await mine([input, '--shape', 'sft', '--continuation', 'trajectory']);
    expect(stats.counters).toEqual(pairs.stats.counters);
    expect(stats).toMatchObject({ sft_rows: 3, sft_duplicates: 1 });
    const r = side(OST, P, 1, ostId);
    expect(rows).toHaveLength(3);
    // --continuation trajectory: the completion is the resolved continuation, and the behaviour of
    // its turns (P from 10: inspect x4, then python -c / pytest runs) comes along.
    expect(rows[0]).toEqual({
      prompt: r.messages.slice(0, 10).map(emit),
      completion: r.messages.slice(10).map((m) => withLoss(m)),
      instance_id: P,
      repo: 'PyPSA/linopy',
      trajectory_id: r.id,
      divergence_turn: assistantsBefore(r.messages, 10),
      divergence_msg_index: 10,
      behavior_sequence: ['inspect_diagnose', 'reproduce_test'],
    });
  }, TIMEOUT);

  it('parquet output of a continuation: lists of messages with a loss flag, behaviour lists, group columns', async () => {
    const out = join(dir, 'groups.parquet');
    const r = await cli(['mine', join(SOURCES, 'open-swe-traces.parquet'), '--out', out, '-q', '--continuation', 'trajectory', '--unit', 'groups']);
    expect(r.code, r.stderr).toBe(0);
    const con = await (await DuckDBInstance.create()).connect();
    const q = await con.runAndReadAll(
      `SELECT sample_uid, len(chosen) AS n, chosen[1].loss AS first_loss, chosen[2].loss AS second_loss, chosen[1].role AS role, chosen_behavior_sequence AS seq, is_full_trajectory AS full
       FROM read_parquet('${out}') ORDER BY sample_uid`,
    );
    const rows = q.getRowObjectsJson();
    expect(rows).toHaveLength(18);
    for (const row of rows) expect(row).toMatchObject({ first_loss: expect.any(Boolean), role: 'assistant', second_loss: false });
    expect(rows.filter((x) => x.full === true)).toHaveLength(3);
  }, TIMEOUT);
});
