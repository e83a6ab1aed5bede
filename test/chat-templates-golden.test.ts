// Real published chat templates (with tools) rendered by this project, against what transformers
// 5.18 and TRL 1.13 made of the same rows (fixtures/chat-templates/make.py wrote golden.json.gz;
// no Python here). Per template and row: the three renders TRL makes (prompt with the generation
// prompt, prompt+chosen, prompt+rejected) byte for byte, or a failure where Python raised; their
// token ids; the check-template verdict. For the built-in template with the bundled qwen3 tokenizer:
// the token counts of `--tokenizer` (piecewise and whole) and of `mine --tokenizer qwen3` equal the
// lengths TRL's DPOTrainer tokenize step computed.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRow, parseTemplateFile, renderMessages, type LoadedTemplate, type RowRenders } from '../src/dataset/template.js';
import { parsePythonJson } from '../src/templates/python-json.js';
import { BUILTIN_TEMPLATE_SOURCE, BuiltinRenderer } from '../src/tokens/builtin-template.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { loadTokenizer } from '../src/tokens/load.js';
import { tokenPrefixMismatch } from '../src/tokens/prefix.js';
import { RenderFailure, RowTokenCounter, rowTools, type TokenRow } from '../src/tokens/row-tokens.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HERE = join(ROOT, 'fixtures', 'chat-templates');

interface GoldenRender {
  text?: string;
  text_after_prompt?: string;
  ids?: number[];
  ids_after_prompt?: number[];
  error?: string;
}
interface GoldenRow {
  renders: { prompt: GoldenRender; chosen: GoldenRender; rejected: GoldenRender };
  verdict: string[];
}
interface Golden {
  now: string;
  templates: Record<string, { package: string; template: string; rows: GoldenRow[] }>;
  trl_dpo_tokenize: { rows: ({ prompt_ids: number; chosen_ids: number; rejected_ids: number } | { error: string })[] };
}

const golden = JSON.parse(gunzipSync(readFileSync(join(HERE, 'golden.json.gz'))).toString('utf8')) as Golden;
const rowsText = readFileSync(join(HERE, 'rows.jsonl'), 'utf8');
const rows = rowsText
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => parsePythonJson(l) as TokenRow & Record<string, unknown>);
// Python's strftime_now ran on this clock (Llama 3.2 writes the date).
const now = (): Date => new Date(golden.now);

function loadGoldenTemplate(name: string, pkgFolder: string): LoadedTemplate {
  if (name === 'qwen3-coder-style') return parseTemplateFile(BUILTIN_TEMPLATE_SOURCE, 'qwen3-coder-style.jinja', null, { now });
  return parseTemplateFile(readFileSync(join(pkgFolder, 'tokenizer_config.json'), 'utf8'), 'tokenizer_config.json', null, { now });
}

/** Text and ids of a golden render (completions stored after the prompt). */
function full(g: GoldenRender, p: GoldenRender): { text: string; ids: number[] } {
  const text = g.text ?? p.text! + g.text_after_prompt!;
  const ids = g.ids ?? [...p.ids!, ...g.ids_after_prompt!];
  return { text, ids };
}

const table: string[] = [];
afterAll(() => {
  // The table of the README ("Chat templates"); printed so that a run shows it.
  console.log(['| template | rows | renders equal | token counts equal (of the rows that render) |', '|---|---|---|---|', ...table].join('\n'));
});

describe.each(Object.entries(golden.templates))('%s', (name, g) => {
  const folder = join(ROOT, 'node_modules', g.package, 'models');
  const template = loadGoldenTemplate(name, folder);
  const counter = new TokenCounter(loadTokenizer(folder).tokenizer);
  let rendersEqual = 0;
  let bothRaise = 0;
  let countsEqual = 0;

  it.each(g.rows.map((r, i) => [i + 1, r] as const))('row %i: renders, token ids and verdict as transformers', (i, want) => {
    const row = rows[i - 1]!;
    const { tools } = rowTools(row);
    const sides = [
      ['prompt', row.prompt, true],
      ['chosen', [...row.prompt, ...row.chosen], false],
      ['rejected', [...row.prompt, ...row.rejected], false],
    ] as const;
    let same = true;
    let sameCounts = true;
    let raised = false;
    for (const [side, messages, gen] of sides) {
      const w = want.renders[side];
      if (w.error !== undefined || (side !== 'prompt' && want.renders.prompt.error !== undefined && w.text === undefined)) {
        if (w.error !== undefined) expect(() => renderMessages(template, messages, tools, gen), `${side}: Python raised ${w.error}`).toThrow();
        raised = true;
        continue;
      }
      const { text, ids } = full(w, want.renders.prompt);
      const got = renderMessages(template, messages, tools, gen);
      expect(got, `${side} render`).toBe(text);
      expect(counter.encode(got), `${side} token ids`).toEqual(ids);
      same &&= got === text;
      sameCounts &&= counter.encode(got).length === ids.length;
    }
    const renders: RowRenders = {};
    const res = checkRow(template, row, renders);
    for (const [side, kind] of [['chosen', 'chosen-token-prefix'], ['rejected', 'rejected-token-prefix']] as const) {
      const f = renders[side];
      if (renders.prompt === undefined || f === undefined || !f.startsWith(renders.prompt)) continue;
      if (tokenPrefixMismatch(counter, renders.prompt, f, side)) res.problems.push({ kind, message: '' });
    }
    expect([...new Set(res.problems.map((p) => p.kind))].sort(), 'check-template verdict').toEqual(want.verdict);
    if (same) rendersEqual++;
    if (raised) bothRaise++;
    if (sameCounts) countsEqual++;
    if (i === g.rows.length) table.push(`| ${name} | ${g.rows.length} | ${rendersEqual} (${bothRaise} raise in both) | ${countsEqual} |`);
  });
});

describe("TRL's DPOTrainer tokenize step (qwen3 tokenizer, qwen3-coder-style)", () => {
  const counter = new TokenCounter(loadTokenizer('qwen3').tokenizer);
  const trl = golden.trl_dpo_tokenize.rows;

  it.each(trl.map((t, i) => [i + 1, t] as const))('row %i: --tokenizer counts = prompt_ids / chosen_ids / rejected_ids lengths', (i, t) => {
    const row = rows[i - 1]!;
    for (const rc of [new RowTokenCounter(counter, { builtin: new BuiltinRenderer() }), new RowTokenCounter(counter, { render: (m, tools, gen) => new BuiltinRenderer().template.render({ messages: m, tools, documents: null, add_generation_prompt: gen }) })]) {
      if ('error' in t) {
        expect(() => rc.count(row)).toThrow(RenderFailure);
        continue;
      }
      expect(rc.count(row)).toEqual({ prompt_tokens: t.prompt_ids, chosen_tokens: t.chosen_ids, rejected_tokens: t.rejected_ids });
    }
  });

  it('the built-in template rendered piece by piece equals the golden renders (the fast path is taken)', () => {
    const g = golden.templates['qwen3-coder-style']!;
    const r = new BuiltinRenderer();
    g.rows.forEach((want, i) => {
      const row = rows[i]!;
      const { tools, key } = rowTools(row);
      if (want.renders.prompt.error !== undefined) return;
      expect(r.render(row.prompt, tools, key, true), `row ${i + 1} prompt`).toBe(want.renders.prompt.text);
      for (const side of ['chosen', 'rejected'] as const) {
        const w = want.renders[side];
        const got = r.render([...row.prompt, ...row[side]], tools, key, false);
        expect(got, `row ${i + 1} ${side}`).toBe(full(w, want.renders.prompt).text);
      }
    });
  });

  it('mine --shape trl --tokenizer qwen3 writes the counts TRL computes for the rows it mines', () => {
    const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), 'mine', '--jsonl', join(ROOT, 'fixtures', 'forks.jsonl'), '--shape', 'trl', '--tokenizer', 'qwen3', '--out', '-'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const mined = out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { prompt_tokens: number; chosen_tokens: number; rejected_tokens: number });
    expect(mined.length).toBeGreaterThan(0);
    expect(mined.map((r) => [r.prompt_tokens, r.chosen_tokens, r.rejected_tokens])).toEqual(
      trl.slice(0, mined.length).map((t) => ('error' in t ? null : [t.prompt_ids, t.chosen_ids, t.rejected_ids])),
    );
  });
});
