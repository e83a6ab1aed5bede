// End-to-end runs of the BUILT CLI with `--pairing tree`, the exit-status filters and `--shape kto`
// (docs/tree-pairing.md) on the parquet / JSONL fixtures (forks of real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius). Expected rows come from the
// references in fixtures/ (reference-tree.mjs, reference-walker.mjs), which import nothing from
// src/; KTO rows are derived here from those rows by TRL's own unpairing rule (chosen -> label
// true, rejected -> label false, same prompt) and the trl message form written out below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: the references are plain ES modules without types
import { referenceTree } from '../fixtures/reference-tree.mjs';
// @ts-expect-error: the references are plain ES modules without types
import { referenceMine } from '../fixtures/reference-walker.mjs';
import { runShow } from '../src/commands/show.js';
import { runReport } from '../src/commands/report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIX = join(ROOT, 'fixtures');
let dir = '';
/** Per test: a few CLI runs, each well under a second on an idle machine. */
const T = 120_000;


async function mine(args: string[]): Promise<void> {
  const r = await cli(['mine', ...args, '--quiet', '--force']);
  expect(r.code, r.stderr).toBe(0);
}

const lines = (p: string): Record<string, unknown>[] => readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const rowsOf = (fixture: string) => lines(join(FIX, `${fixture}.jsonl`));
const stats = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dm-tree-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mine --pairing tree', () => {
  it('forks.parquet: the reference rows and funnel, and the hand-checked values', async () => {
    const out = join(dir, 'forks.jsonl');
    await mine(['--parquet', join(FIX, 'forks.parquet'), '--pairing', 'tree', '--out', out, '--stats', `${out}.stats.json`]);
    const ref = referenceTree(rowsOf('forks'));
    expect(readFileSync(out, 'utf8')).toBe(ref.rows.map((r: unknown) => JSON.stringify(r) + '\n').join(''));
    const st = stats(`${out}.stats.json`);
    for (const [k, v] of Object.entries(ref.counters)) expect(st.tree.counters[k], k).toBe(v);
    // By hand (fixtures/README.md forks): PyPSA has 2 resolved and 3 failed attempts; 4 of them take
    // the same action at message 12 (both resolved among them), fork 702f060a takes another.
    const [pypsa, numpy] = lines(out) as Record<string, number | string>[];
    expect([pypsa!.instance_id, pypsa!.divergence_msg_index, pypsa!.chosen_value, pypsa!.chosen_support, pypsa!.rejected_value, pypsa!.rejected_support]).toEqual(['PyPSA__linopy-79', 12, 0.5, 4, 0, 1]);
    expect(String(pypsa!.rejected_trajectory_id)).toMatch(/^chatcmpl-702f060a/);
    expect(numpy!.instance_id).toBe('numpy__numpydoc-101');
    // Every attempt, no sampling: 14 rows, 14 attempts in the trees.
    expect([st.counters.trajectories_extracted, st.tree.counters.tree_attempts, st.options.pairing, st.options.min_value_gap]).toEqual([14, 14, 'tree', 0.5]);
    expect(st.tree.value_gap_histogram.map((b: { pairs: number }) => b.pairs)).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    // show prints the values; the report draws the tree funnel (both in-process).
    let shown = '';
    await runShow(out, { index: 0, seed: '0', context: 0, lines: 1, layout: 'stacked', color: 'never', full: false, width: 100 }, { write: (t) => void (shown += t), isTTY: false, columns: undefined, env: {} });
    expect(shown).toContain('value gap 0.5 · branch depth 0');
    expect(shown).toContain('value 0.5 (2 of 4 attempts resolved)');
    expect(shown).toContain('value 0 (0 of 1 attempt resolved)');
    const html = join(dir, 'forks.html');
    await runReport(out, { out: html, stats: `${out}.stats.json`, context: 1, maxChars: 200, force: true, quiet: true });
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('child pairs = environment + support + value gap + near duplicate + exact duplicate + node cap + instance cap + emitted (5) ✓');
    expect(page).toContain('id="hist-gap"');
    expect(page).not.toContain('emitted-mismatch');
  }, T);

  it('edges.parquet with --min-value-gap 0.3 --max-pairs-per-node 1: the reference, identical for 1 and 2 workers and partitioned + merged', async () => {
    const args = ['--parquet', join(FIX, 'edges.parquet'), '--pairing', 'tree', '--min-value-gap', '0.3', '--max-pairs-per-node', '1'];
    const one = join(dir, 'edges-1.jsonl');
    const two = join(dir, 'edges-2.jsonl');
    await Promise.all([mine([...args, '--workers', '1', '--out', one, '--stats', `${one}.stats.json`]), mine([...args, '--workers', '2', '--out', two])]);
    const ref = referenceTree(rowsOf('edges'), { minValueGap: 0.3, maxPairsPerNode: 1 });
    expect(ref.rows.length).toBeGreaterThan(5);
    expect(readFileSync(one, 'utf8')).toBe(ref.rows.map((r: unknown) => JSON.stringify(r) + '\n').join(''));
    expect(readFileSync(two, 'utf8')).toBe(readFileSync(one, 'utf8'));
    const parts = [0, 1].map((i) => join(dir, `edges-part-${i}.jsonl`));
    await Promise.all(parts.map((p, i) => mine([...args, '--workers', '1', '--partition', `${i}/2`, '--out', p, '--stats', `${p}.stats.json`])));
    const merged = join(dir, 'edges-merged.jsonl');
    const m = await cli(['merge', ...parts, '--out', merged, '--stats-out', `${merged}.stats.json`, '--quiet']);
    expect(m.code, m.stderr).toBe(0);
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(one, 'utf8'));
    expect(stats(`${merged}.stats.json`).tree).toEqual(stats(`${one}.stats.json`).tree);
  }, T);
});

describe('exit-status filters', () => {
  // forks.jsonl with exit statuses set by hand: two failed PyPSA forks did not submit.
  const NOT_SUBMITTED: Record<string, string> = { 'chatcmpl-f4c3e27': 'max_iterations', 'chatcmpl-702f060': 'error' };
  const withStatus = () =>
    rowsOf('forks').map((r) => ({ ...r, exit_status: NOT_SUBMITTED[String(r.trajectory_id).slice(0, 16)] ?? r.exit_status }));
  const input = () => {
    const p = join(dir, 'forks-status.jsonl');
    writeFileSync(p, withStatus().map((r) => JSON.stringify(r) + '\n').join(''));
    return p;
  };

  it('--rejected-exit-status submit (contract pairing): the failed attempts that did not submit take no part', async () => {
    const out = join(dir, 'status-contract.jsonl');
    await mine(['--jsonl', input(), '--rejected-exit-status', 'submit', '--out', out, '--stats', `${out}.stats.json`]);
    const kept = withStatus().filter((r) => r.resolved === 1 || r.exit_status === 'submit');
    expect(kept.length).toBe(12);
    const ref = referenceMine(kept);
    expect(readFileSync(out, 'utf8')).toBe(ref.rows.map((r: unknown) => JSON.stringify(r) + '\n').join(''));
    const st = stats(`${out}.stats.json`);
    expect(st.exit_status_filter).toEqual({
      excluded: 0,
      not_rejectable: 2,
      observed: { submit: { resolved: 5, failed: 7 }, max_iterations: { resolved: 0, failed: 1 }, error: { resolved: 0, failed: 1 } },
    });
    expect(st.options.rejected_exit_status).toEqual(['submit']);
    expect(st.published_comparison).toBeUndefined();
  }, T);

  it('--exclude-exit-status error with the tree pairing', async () => {
    const out = join(dir, 'status-tree.jsonl');
    await mine(['--jsonl', input(), '--pairing', 'tree', '--exclude-exit-status', 'error', '--min-value-gap', '0.2', '--out', out, '--stats', `${out}.stats.json`]);
    const ref = referenceTree(withStatus(), { minValueGap: 0.2 }, { rejected: null, exclude: ['error'] });
    expect(readFileSync(out, 'utf8')).toBe(ref.rows.map((r: unknown) => JSON.stringify(r) + '\n').join(''));
    expect(lines(out).some((r) => String(r.rejected_trajectory_id).startsWith('chatcmpl-702f060'))).toBe(false);
    expect(stats(`${out}.stats.json`).exit_status_filter.excluded).toBe(1);
  }, T);

  it('an input without exit_status: one line, exit 6, nothing written', async () => {
    const out = join(dir, 'none.jsonl');
    const r = await cli(['mine', '--parquet', join(FIX, 'sources', 'open-swe-traces.parquet'), '--rejected-exit-status', 'submit', '--out', out, '--quiet']);
    expect(r.code).toBe(6);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/open-swe-traces\.parquet: --rejected-exit-status and --exclude-exit-status read the column exit_status, which this input lacks \(found: .*\)$/),
    ]);
    expect(() => readFileSync(out)).toThrow();
  }, T);
});

// The trl message form (shapes/trl.ts, docs: README "trl"), written out for the expectation.
type Msg = { role: string; content: string | null; tool_calls?: string | null; name?: string | null; tool_call_id?: string | null };
function trlMessage(m: Msg): Record<string, unknown> {
  const content = m.content ?? '';
  if (m.role === 'assistant') {
    const calls = m.tool_calls ? (JSON.parse(m.tool_calls) as { id: string; type: string; function: { name: string; arguments: unknown } }[]) : [];
    if (calls.length === 0) return { role: m.role, content };
    return { role: m.role, content, tool_calls: calls.map((c) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } })) };
  }
  if (m.role === 'tool') return { role: m.role, content, name: m.name, tool_call_id: m.tool_call_id };
  return { role: m.role, content };
}

/** TRL's unpairing of a published row, with repeats of (instance, prompt, completion) dropped. */
function unpair(rows: Record<string, unknown>[], label: (row: Record<string, unknown>, chosen: boolean) => boolean, tree: boolean): Record<string, unknown>[] {
  const seen = new Set<string>();
  const out: Record<string, unknown>[] = [];
  for (const r of rows) {
    for (const chosen of [true, false]) {
      const k = {
        prompt: (r.prompt as Msg[]).map(trlMessage),
        completion: [trlMessage((chosen ? r.chosen : r.rejected) as Msg)],
        label: label(r, chosen),
        instance_id: r.instance_id,
        repo: r.repo,
        trajectory_id: chosen ? r.chosen_trajectory_id : r.rejected_trajectory_id,
        divergence_turn: r.divergence_turn,
        divergence_msg_index: r.divergence_msg_index,
        ...(tree ? { value: chosen ? r.chosen_value : r.rejected_value, support: chosen ? r.chosen_support : r.rejected_support, branch_depth: r.branch_depth } : {}),
      };
      const key = JSON.stringify([k.instance_id, k.prompt, k.completion]);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(k);
    }
  }
  return out;
}

describe('mine --shape kto', () => {
  it('contract pairing: a desirable and an undesirable row per kept pair, in the trl message form, with tools', async () => {
    const out = join(dir, 'kto.jsonl');
    await mine(['--parquet', join(FIX, 'forks.parquet'), '--shape', 'kto', '--out', out, '--stats', `${out}.stats.json`]);
    const got = lines(out);
    const want = unpair(referenceMine(rowsOf('forks')).rows, (_, chosen) => chosen, false);
    expect(got.map(({ tools: _t, ...rest }) => rest)).toEqual(want);
    expect(got.map((r) => r.label)).toEqual([true, false, true, false, true, false, true, false]);
    const tools = JSON.parse(String(got[0]!.tools)) as { function: { name: string } }[];
    expect(tools.map((t) => t.function.name)).toContain('execute_bash');
    expect(stats(`${out}.stats.json`).kto).toEqual({ rows: 8, desirable: 4, undesirable: 4, repeats_dropped: 0 });
  }, T);

  it('tree pairing: each valued branch labelled by its value against --kto-threshold', async () => {
    const out = join(dir, 'kto-tree.jsonl');
    await mine(['--parquet', join(FIX, 'forks.parquet'), '--shape', 'kto', '--pairing', 'tree', '--min-value-gap', '0.2', '--kto-threshold', '0.4', '--out', out]);
    const ref = referenceTree(rowsOf('forks'), { minValueGap: 0.2 }).rows;
    const want = unpair(ref, (r, chosen) => Number(chosen ? r.chosen_value : r.rejected_value) > 0.4, true);
    expect(lines(out).map(({ tools: _t, ...rest }) => rest)).toEqual(want);
    // The PyPSA branch of value 0.5 is desirable above 0.4 (it is not under the default 0.5).
    expect(lines(out).map((r) => [r.value, r.label])).toEqual(want.map((r) => [r.value, Number(r.value) > 0.4]));
    expect(want.some((r) => r.value === 0.5 && r.label === true)).toBe(true);
    // Partitioned and merged: the same rows (repeats are found within an instance).
    const args = ['--parquet', join(FIX, 'forks.parquet'), '--shape', 'kto', '--pairing', 'tree', '--min-value-gap', '0.2', '--kto-threshold', '0.4'];
    const parts = [0, 1].map((i) => join(dir, `kto-part-${i}.jsonl`));
    await Promise.all(parts.map((p, i) => mine([...args, '--partition', `${i}/2`, '--out', p, '--stats', `${p}.stats.json`])));
    const merged = join(dir, 'kto-merged.jsonl');
    const m = await cli(['merge', ...parts, '--out', merged, '--quiet']);
    expect(m.code, m.stderr).toBe(0);
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(out, 'utf8'));
  }, T);
});
