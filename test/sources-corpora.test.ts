// Every public corpus of docs/mining-contract.md §10 end to end: the BUILT CLI (`npm run build` first) on
// its fixture in fixtures/corpora/ with no option (detected) or one --source, rows and counters
// asserted exactly.
//
// Expectations are independent of src/: the fixture rows are read back by DuckDB, turned into
// contract rows by fixtures/reference-sources.mjs and mined by fixtures/reference-walker.mjs (both
// written from the contract text); on top of that the fork points of fixtures/corpora/README.md and
// the counter tables derived there by hand are asserted literally.
//
// Licenses: swe-agent-trajectories rows CC-BY-4.0 © Nebius; swe-smith-trajectories rows MIT
// (SWE-smith); the coderforge, open-swe-traces and swe-gym fixtures hold real nebius
// SWE-rebench-openhands messages (CC-BY-4.0 © Nebius) in those corpora's documented columns.
import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { referenceMine } from '../fixtures/reference-walker.mjs';
import { REFERENCE_SOURCES } from '../fixtures/reference-sources.mjs';

// CLI runs: generous per-test time on a loaded machine (no timed assertion).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CORPORA = join(ROOT, 'fixtures', 'corpora');
const BIN = join(ROOT, 'bin', 'divergence-mine');

type Json = Record<string, unknown>;
interface Run { code: number; stdout: string; stderr: string }

let dir = '';
let db: Awaited<ReturnType<typeof DuckDBInstance.create>>;
beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  dir = mkdtempSync(join(tmpdir(), 'dm-corpora-'));
  db = await DuckDBInstance.create(':memory:');
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<Run> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, maxBuffer: 64 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

let runNo = 0;
async function mine(file: string, extra: string[] = []): Promise<{ rows: Json[]; counters: Record<string, number>; stderr: string }> {
  const stats = join(dir, `stats-${++runNo}.json`);
  const r = await cli(['mine', join(CORPORA, file), ...extra, '--out', '-', '--stats', stats, '--workers', '1']);
  expect(r.code, r.stderr).toBe(0);
  const rows = r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
  return { rows, counters: (JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number> }).counters, stderr: r.stderr };
}

/** The fixture's rows as an independent reader sees them. */
async function fixtureRows(file: string): Promise<Json[]> {
  const path = join(CORPORA, file);
  if (file.endsWith('.jsonl')) return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
  const conn = await db.connect();
  const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet('${path.replaceAll("'", "''")}')`);
  return reader.getRowObjectsJson() as Json[];
}

type SourceName = keyof typeof REFERENCE_SOURCES;
async function reference(file: string, source: SourceName, group?: (r: Json) => unknown): Promise<{ rows: Json[]; counters: Record<string, number> }> {
  const src = REFERENCE_SOURCES[source];
  const rows = src.rows(await fixtureRows(file));
  return referenceMine(rows, { text: src.text, ...(group ? { group } : {}) }) as { rows: Json[]; counters: Record<string, number> };
}

const ZERO = {
  trajectories_read: 0, duplicate_trajectory_ids: 0, unlabelled: 0, bad_rows: 0, malformed_arguments: 0, unknown_roles: 0,
  instances: 0, eligible_instances: 0, trajectories_extracted: 0, pairs_walked: 0, no_divergence: 0,
  environment_divergence: 0, near_duplicate: 0, exact_duplicate: 0, capped: 0, pairs_emitted: 0, divergence_turn_0: 0,
};
const summary = (rows: Json[]) => rows.map((r) => [r.instance_id, r.chosen_trajectory_id, r.rejected_trajectory_id, r.divergence_msg_index]);
const firstLine = (stderr: string) => stderr.split('\n')[0];

describe('nebius/SWE-agent-trajectories (fixtures/corpora/swe-agent-trajectories)', () => {
  it('detected with no option: ai -> assistant, text actions in bare or ```bash fences, ids instance#n, target labels', async () => {
    const { rows, counters, stderr } = await mine('swe-agent-trajectories/swe-agent.parquet');
    expect(firstLine(stderr)).toBe(
      'divergence-mine: schema swe-agent (auto-detected: columns instance_id + trajectory + target, no run id (nebius/SWE-agent-trajectories layout)); columns id=<instance_id>#<n> instance=instance_id messages=trajectory resolved=target',
    );
    // README: per instance the real row (#1), its fork (#2), the fork's twin that narrates differently
    // with a ```bash fence (#3: same actions, so its row repeats #2's) and the real row unlabelled (#4).
    expect(counters).toEqual({
      ...ZERO, trajectories_read: 8, unlabelled: 2, instances: 2, eligible_instances: 2, trajectories_extracted: 6,
      pairs_walked: 4, exact_duplicate: 2, pairs_emitted: 2,
    });
    const P = 'marshmallow-code__apispec-811';
    const T = 'tomerfiliba__plumbum-366';
    // Which failed run is emitted is the one ranked first by SHA-256("0:" + id), checked with sha256sum:
    // apispec-811#3 2dd6cc7e7da8 < #2 38ec623c806c; plumbum-366#2 243661675c45 < #3 fafc4e13ba3d.
    expect(summary(rows)).toEqual([
      [P, `${P}#1`, `${P}#3`, 4],
      [T, `${T}#1`, `${T}#2`, 6],
    ]);
    // #3 retold message 2 (other narration, ```bash): the walk passed it as the same action.
    expect((rows[0]!.rejected as Json).content).toMatch(/^It looks like the `openapi_version` parameter[\s\S]*\n```\nopen src\/apispec\/ext\/marshmallow\/openapi\.py\n```$/);
    expect((rows[1]!.chosen as Json).content).toMatch(/\n```\nopen plumbum\/cli\/image\.py\n```$/);
    expect((rows[1]!.prompt as Json[])[0]).toMatchObject({ role: 'system', content: expect.stringMatching(/^SETTING: You are an autonomous programmer/) });
    const ref = await reference('swe-agent-trajectories/swe-agent.parquet', 'swe-agent');
    expect(rows).toEqual(ref.rows);
    expect(counters).toEqual(ref.counters);
    // Synthesised ids do not depend on the partition: every part reads every row (contract §10.1).
    const parts = await Promise.all(['0/2', '1/2'].map((p) => mine('swe-agent-trajectories/swe-agent.parquet', ['--partition', p])));
    const byInstance = (list: Json[]) => [...list].sort((a, b) => String(a.instance_id).localeCompare(String(b.instance_id)));
    expect(byInstance(parts.flatMap((p) => p.rows))).toEqual(rows);
  });
});

it('fixtures/corpora/build.mjs --check rebuilds every corpus fixture byte for byte', async () => {
  const r = await new Promise<Run>((res) => {
    execFile(process.execPath, [join(CORPORA, 'build.mjs'), '--check'], { cwd: ROOT }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('fixtures/corpora: 9 files up to date\n');
  expect(r.code).toBe(0);
}, 120_000);

describe('SWE-bench/SWE-smith-trajectories (fixtures/corpora/swe-smith-trajectories)', () => {
  const A = 'arrow-py__arrow.1d70d009.lm_rewrite__nuzjfyur';
  const Y = 'pydantic__pydantic.acb0f10f.pr_8316';
  const XML_COUNTERS = { ...ZERO, trajectories_read: 5, instances: 2, eligible_instances: 2, trajectories_extracted: 5, pairs_walked: 3, exact_duplicate: 1, pairs_emitted: 2 };

  it('xml split, parquet (messages as JSON text): <function=...> calls signed NAME canon({K: V}), parameter order ignored', async () => {
    const { rows, counters, stderr } = await mine('swe-smith-trajectories/xml.parquet');
    expect(firstLine(stderr)).toMatch(/^divergence-mine: schema swe-smith \(auto-detected: .*<function=\.\.\.> calls \(SWE-smith xml layout\)\); columns id=traj_id instance=instance_id messages=messages resolved=resolved$/);
    expect(counters).toEqual(XML_COUNTERS);
    expect(rows.map((r) => [r.instance_id, r.divergence_msg_index])).toEqual([[A, 6], [Y, 6]]);
    expect((rows[0]!.chosen as Json).content).toContain('<function=bash>\n<parameter=command>grep -n "__format__" /testbed/arrow/arrow.py</parameter>\n</function>');
    expect(rows[0]!.action_similarity).toBeLessThan(0.95);
    const ref = await reference('swe-smith-trajectories/xml.parquet', 'swe-smith');
    expect(rows).toEqual(ref.rows);
    expect(counters).toEqual(ref.counters);
  });

  it('xml split, JSONL (messages as a list, the older revision) with --source swe-smith: the same rows', async () => {
    const { rows, counters, stderr } = await mine('swe-smith-trajectories/xml.jsonl', ['--source', 'swe-smith']);
    expect(firstLine(stderr)).toBe(
      'divergence-mine: schema swe-smith (given with --source swe-smith (SWE-bench/SWE-smith-trajectories)); columns id=traj_id instance=instance_id messages=messages resolved=resolved',
    );
    expect(counters).toEqual(XML_COUNTERS);
    const ref = await reference('swe-smith-trajectories/xml.jsonl', 'swe-smith');
    expect(rows).toEqual(ref.rows);
  });

  it('tool split (SWE-agent 1.x history: content parts, tool_call_ids) and ticks split (bare fences): one pair at 6 each', async () => {
    for (const [file, signature] of [
      ['swe-smith-trajectories/tool.parquet', /"tool_calls":"\[\{\\"id\\":\\"toolu_/],
      ['swe-smith-trajectories/ticks.parquet', /```\\ncd \/testbed && python reproduce_error.py\\n```/],
    ] as const) {
      const { rows, counters, stderr } = await mine(file);
      expect(firstLine(stderr)).toMatch(/^divergence-mine: schema swe-smith \(auto-detected: columns traj_id \+ messages \(SWE-smith layout\)\)/);
      expect(counters).toEqual({ ...ZERO, trajectories_read: 2, instances: 1, eligible_instances: 1, trajectories_extracted: 2, pairs_walked: 1, pairs_emitted: 1 });
      expect(rows.map((r) => [r.instance_id, r.divergence_msg_index, r.divergence_turn])).toEqual([[Y, 6, 2]]);
      expect(JSON.stringify(rows[0]!.rejected)).toMatch(signature);
      const ref = await reference(file, 'swe-smith');
      expect(rows).toEqual(ref.rows);
      expect(counters).toEqual(ref.counters);
    }
  });
});

describe('togethercomputer/CoderForge-Preview (fixtures/corpora/coderforge-preview)', () => {
  it('detected: instance = trajectory_id minus _run<N>, reward 1.0 / 0.0 / -1.0 (unlabelled), messages and tools JSON text', async () => {
    const { rows, counters, stderr } = await mine('coderforge-preview/coderforge.parquet');
    expect(firstLine(stderr)).toBe(
      'divergence-mine: schema openhands (auto-detected: columns trajectory_id + messages + reward, no instance_id (togethercomputer/CoderForge-Preview layout)); columns id=trajectory_id instance=trajectory_id=~/^(.+)_run\\d+$/ messages=messages resolved=reward tools=tools',
    );
    expect(counters).toEqual({ ...ZERO, trajectories_read: 9, unlabelled: 3, instances: 3, eligible_instances: 3, trajectories_extracted: 6, pairs_walked: 3, pairs_emitted: 3 });
    const P = 'PyPSA__linopy-79';
    const N = 'numpy__numpydoc-101';
    const T = 'tianocore__edk2-pytool-library-372';
    expect(summary(rows)).toEqual([
      [P, `${P}_run1`, `${P}_run2`, 10],
      [N, `${N}_run1`, `${N}_run2`, 16],
      [T, `${T}_run1`, `${T}_run2`, 10],
    ]);
    const ref = await reference('coderforge-preview/coderforge.parquet', 'coderforge');
    expect(rows).toEqual(ref.rows);
    expect(counters).toEqual(ref.counters);
  });
});

describe('nvidia/Open-SWE-Traces with teacher models (fixtures/corpora/open-swe-traces)', () => {
  const teacher = (r: Json) => ((r.source as { metadata: { teacher_model: { name: string } } }).metadata.teacher_model.name);
  it('--pair-within metadata.teacher_model.name: only model A pairs; (instance, model) is the group', async () => {
    const { rows, counters, stderr } = await mine('open-swe-traces/models.parquet', ['--pair-within', 'metadata.teacher_model.name']);
    expect(firstLine(stderr)).toMatch(/ pair-within=metadata\.teacher_model\.name$/);
    // 3 instances x 2 models = 6 groups; model B has no resolved run: 3 eligible, 3 pairs (without the option: 6, see the unit test).
    expect(counters).toEqual({ ...ZERO, trajectories_read: 9, instances: 6, eligible_instances: 3, trajectories_extracted: 6, pairs_walked: 3, pairs_emitted: 3 });
    expect(rows.map((r) => [r.instance_id, r.divergence_msg_index])).toEqual([['PyPSA__linopy-79', 10], ['numpy__numpydoc-101', 16], ['tianocore__edk2-pytool-library-372', 10]]);
    const ref = await reference('open-swe-traces/models.parquet', 'open-swe-traces', teacher);
    expect(rows).toEqual(ref.rows);
    expect(counters).toEqual(ref.counters);
  });
});

describe('a layout that fits no source', () => {
  it('exit 6, one line naming the columns found and the options that would map them', async () => {
    const file = join(dir, 'unknown.jsonl');
    writeFileSync(file, `${JSON.stringify({ uid: 'a', task: 't', conversation: [{ role: 'user', content: 'x' }], success: true })}\n`);
    const r = await cli(['mine', file, '--out', '-']);
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^divergence-mine: error: .*unknown\.jsonl:1: cannot detect the input schema: no id column \(.*--id-column\); no instance column \(.*--instance-column, or --instance-from-id REGEX\); no messages column \(.*--messages-column\); no resolved column \(tried resolved, target, reward; or --resolved-column\); or name the corpus with --source \(nebius-openhands, swe-agent, swe-smith, coderforge, open-swe-traces, swe-gym, text-actions\) \(found columns: uid, task, conversation, success\)$/);
  });
});
