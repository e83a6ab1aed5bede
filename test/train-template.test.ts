import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { ExitCode, UserError } from '../src/errors.js';
import { loadTemplate, readPairsFile, registerCheckTemplate, runCheckTemplate } from '../src/commands/check-template.js';
import { checkRow, parseTemplateFile, type RowCheck } from '../src/dataset/template.js';
import { toTrlRow, type TrlRow } from '../src/shapes/trl.js';
import { windowRow } from '../src/shapes/window.js';
import { TEMPLATE_PATH, samplePairs } from './template/pairs.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-template-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SOURCE = readFileSync(TEMPLATE_PATH, 'utf8');
const QWEN = loadTemplate(TEMPLATE_PATH);

function trlRows(mode: 'object' | 'string' = 'object'): TrlRow[] {
  return samplePairs().map(({ row, tools }) => toTrlRow(row, { tools, arguments: mode }));
}

function writeJsonl(name: string, rows: unknown[], extra = ''): string {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n' + extra);
  return p;
}

function kinds(r: RowCheck): string[] {
  return r.problems.map((p) => p.kind);
}

async function run(files: string[], template = TEMPLATE_PATH, extra: Record<string, unknown> = {}) {
  const lines: string[] = [];
  const summary = await runCheckTemplate(files, { template, maxReport: 0, ...extra }, (l) => lines.push(l));
  return { summary, lines };
}

describe('the qwen3-coder-style template on trl rows', () => {
  it('every sample pair in the trl shape renders, and the prompt is a prefix of both completions', async () => {
    const rows = trlRows();
    expect(rows.length).toBe(12);
    for (const r of rows) expect(checkRow(QWEN, r)).toEqual({ problems: [], warnings: [] });
    const { summary, lines } = await run([writeJsonl('ok.jsonl', rows)]);
    expect(summary).toMatchObject({ rows: 12, ok: 12, failed: 0, warnings: 0 });
    expect(lines).toEqual([expect.stringMatching(/^check-template: 12 rows, 12 ok, 0 failed/)]);
  });

  it('renders tool definitions and grouped tool results the way the style expects', () => {
    const r = trlRows()[3]!;
    const tpl = [...QWEN.templates.values()][0]!;
    const out = tpl.render({ messages: [...r.prompt, ...r.chosen], tools: JSON.parse(r.tools!), add_generation_prompt: false });
    expect(out).toContain('<parameter>\n<name>is_input</name>\n<type>string</type>');
    expect(out).toContain('<enum>["true", "false"]</enum>');
    expect(out).not.toContain('<name>file_text</name>\n</parameter>'); // no phantom parameters
    expect(out).toContain('<|im_start|>user\n<tool_response>\n');
    expect(out).toMatch(/<function=\w+>\n<parameter=\w+>\n/);
  });

  it('catches the deliberately broken row: string arguments', async () => {
    const good = trlRows();
    const bad = trlRows('string')[1]!;
    const res = checkRow(QWEN, bad);
    expect(kinds(res)).toEqual(['render']);
    expect(res.problems[0]!.message).toMatch(/^prompt, prompt\+chosen and prompt\+rejected fail to render: .*items/);
    const file = writeJsonl('broken.jsonl', [good[0], bad, good[2]]);
    const { summary, lines } = await run([file]);
    expect(summary).toMatchObject({ rows: 3, ok: 2, failed: 1, renderFailures: 1 });
    expect(lines[0]).toContain(`${file}:2 (${bad.instance_id}): render: prompt, prompt+chosen and prompt+rejected fail to render`);
    expect(lines.at(-1)).toMatch(/3 rows, 2 ok, 1 failed \(1 render errors/);
  });

  it('the command exits with ExitCode.templateFailures when a row fails, 0 otherwise', async () => {
    const write = process.stdout.write;
    const out: string[] = [];
    process.stdout.write = ((s: string) => (out.push(s), true)) as typeof process.stdout.write;
    try {
      const program = (): Command => {
        const p = new Command().exitOverride();
        registerCheckTemplate(p);
        return p;
      };
      const bad = writeJsonl('cmd-bad.jsonl', [trlRows('string')[0]]);
      const err = await program()
        .parseAsync(['check-template', bad, '--template', TEMPLATE_PATH], { from: 'user' })
        .then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).exitCode).toBe(ExitCode.templateFailures);
      const ok = writeJsonl('cmd-ok.jsonl', trlRows().slice(0, 2));
      await program().parseAsync(['check-template', ok, '--template', TEMPLATE_PATH, '--quiet'], { from: 'user' });
      expect(out.join('')).toMatch(/check-template: 2 rows, 2 ok, 0 failed/);
      const missing = await program()
        .parseAsync(['check-template', join(dir, 'nope.jsonl'), '--template', TEMPLATE_PATH], { from: 'user' })
        .then(() => null, (e: unknown) => e);
      expect((missing as UserError).exitCode).toBe(ExitCode.missingInput);
    } finally {
      process.stdout.write = write;
    }
  });

  it('uncleaned upstream tools fail to render and are warned about', () => {
    const { row, tools } = samplePairs()[0]!;
    const t = toTrlRow(row, { tools: null, toolsJson: JSON.stringify(tools), arguments: 'object' });
    const res = checkRow(QWEN, t);
    expect(kinds(res)).toContain('render');
    expect(res.problems[0]!.message).toMatch(/NullValue/);
    expect(res.warnings[0]).toMatch(/null value at tools\[0\]\.function\.parameters\.additionalProperties/);
  });

  it('reports shape problems instead of crashing', async () => {
    const { row } = samplePairs()[0]!;
    expect(kinds(checkRow(QWEN, row))).toEqual(['shape', 'shape']);
    expect(checkRow(QWEN, row).problems[0]!.message).toMatch(/published shape/);
    expect(kinds(checkRow(QWEN, { ...trlRows()[0], tools: '{oops' }))).toEqual(['shape']);
    expect(kinds(checkRow(QWEN, { ...trlRows()[0], prompt: [] }))).toEqual(['shape']);
    expect(kinds(checkRow(QWEN, 'x'))).toEqual(['shape']);
    const { summary, lines } = await run([writeJsonl('shape.jsonl', [trlRows()[0]], '{not json\n\n')]);
    expect(summary).toMatchObject({ rows: 2, ok: 1, shapeFailures: 1 });
    expect(lines[0]).toMatch(/shape\.jsonl:2: shape: line is not JSON/);
  });

  it('reads gzipped JSONL', async () => {
    const { gzipSync } = await import('node:zlib');
    const p = join(dir, 'rows.jsonl.gz');
    writeFileSync(p, gzipSync(trlRows().map((r) => JSON.stringify(r)).join('\n') + '\n'));
    expect((await run([p])).summary).toMatchObject({ rows: 12, ok: 12 });
  });

  it('an empty tools list is passed as no tools (TRL: tools or None)', () => {
    const r = { ...trlRows()[0]!, tools: '[]' };
    expect(checkRow(QWEN, r).problems).toEqual([]);
  });

  it('windowed rows still pass', () => {
    for (const { row, tools } of samplePairs()) {
      expect(checkRow(QWEN, toTrlRow(windowRow(row, 3), { tools, arguments: 'object' })).problems).toEqual([]);
    }
  });
});

describe('prefix check', () => {
  const variants: [string, string, string, string[]][] = [
    [
      'generation prompt opens a think block the turn does not have',
      "{{- '<|im_start|>assistant\\n' -}}\n{%- endif -%}",
      "{{- '<|im_start|>assistant\\n<think>\\n' -}}\n{%- endif -%}",
      ['chosen-prefix', 'rejected-prefix'],
    ],
    [
      'the last tool result is left open',
      "{%- if loop.last or loop.nextitem.role != 'tool' -%}",
      "{%- if not loop.last and loop.nextitem.role != 'tool' -%}",
      ['chosen-prefix', 'rejected-prefix'],
    ],
    [
      'the final assistant turn is not rendered',
      "{%- if m.role == 'assistant' -%}",
      "{%- if m.role == 'assistant' and loop.last -%}{%- elif m.role == 'assistant' -%}",
      ['chosen-prefix', 'rejected-prefix'],
    ],
  ];
  it.each(variants)('%s', (_name, from, to, expected) => {
    expect(SOURCE).toContain(from);
    const tpl = parseTemplateFile(SOURCE.replace(from, to), 'variant.jinja');
    const res = checkRow(tpl, trlRows()[5]!);
    expect(trlRows()[5]!.prompt.at(-1)!.role).toBe('tool');
    expect(kinds(res)).toEqual(expected);
    expect(res.problems[0]!.message).toMatch(/not a prefix|renders nothing after the prompt/);
  });
});

describe('template files', () => {
  it('reads the chat_template of a tokenizer_config.json, with its special tokens', async () => {
    const cfg = join(dir, 'tokenizer_config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        chat_template: SOURCE.replace("{{- '<|im_end|>\\n' -}}\n    {%- elif m.role == 'tool'", "{{- eos_token ~ '\\n' -}}\n    {%- elif m.role == 'tool'"),
        eos_token: { content: '<|im_end|>', lstrip: false },
        bos_token: null,
      }),
    );
    const t = loadTemplate(cfg);
    expect(t.specialTokens).toEqual({ eos_token: '<|im_end|>' });
    const { summary } = await run([writeJsonl('cfg.jsonl', trlRows())], cfg);
    expect(summary.failed).toBe(0);
  });

  it('picks tool_use for rows with tools from a list of named templates', () => {
    const cfg = JSON.stringify({
      chat_template: [
        { name: 'default', template: "{% for m in messages %}{{ m.role }}:{{ m.tool_calls[0].function.arguments | items | length }};{% endfor %}" },
        { name: 'tool_use', template: SOURCE },
      ],
    });
    const t = parseTemplateFile(cfg, 'tokenizer_config.json');
    expect(checkRow(t, trlRows()[0]!).problems).toEqual([]);
    const forced = parseTemplateFile(cfg, 'tokenizer_config.json', 'default');
    expect(kinds(checkRow(forced, trlRows()[0]!))).toContain('render');
  });

  it.each([
    ['no chat_template', JSON.stringify({ eos_token: 'x' }), 'tokenizer_config.json', null, /no "chat_template"/],
    ['not JSON', '{"chat_template": ', 'tokenizer_config.json', null, /not valid JSON/],
    ['syntax error', '{% for m in messages %}', 'bad.jinja', null, /does not parse/],
    ['unknown name', JSON.stringify({ chat_template: [{ name: 'default', template: 'x' }] }), 'tokenizer_config.json', 'rag', /no template named "rag"/],
  ])('refuses a template file: %s', (_n, text, file, name, re) => {
    const p = join(dir, `t-${Math.random().toString(36).slice(2)}-${file}`);
    writeFileSync(p, text);
    let err: unknown;
    try {
      loadTemplate(p, name);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(ExitCode.badValue);
    expect((err as Error).message).toMatch(re);
  });

  it('a missing template file is a missing-input error', () => {
    expect(() => loadTemplate(join(dir, 'none.jinja'))).toThrow(expect.objectContaining({ exitCode: ExitCode.missingInput }));
  });
});

describe('parquet input (written by DuckDB, read with parquet-wasm + apache-arrow)', () => {
  const MSG =
    'STRUCT(role VARCHAR, content VARCHAR, tool_calls STRUCT(id VARCHAR, "type" VARCHAR, "function" STRUCT("name" VARCHAR, arguments VARCHAR))[], "name" VARCHAR, tool_call_id VARCHAR)';
  const COLS = `{prompt: '${MSG}[]', chosen: '${MSG}[]', rejected: '${MSG}[]', instance_id: 'VARCHAR', repo: 'VARCHAR', tools: 'VARCHAR'}`;
  const JSON_FEATURE = (() => {
    const msg = {
      role: { dtype: 'string', _type: 'Value' },
      content: { dtype: 'string', _type: 'Value' },
      tool_calls: { _type: 'List', feature: { id: { dtype: 'string', _type: 'Value' }, function: { name: { dtype: 'string', _type: 'Value' }, arguments: { _type: 'Json' } } } },
    };
    const list = { _type: 'List', feature: msg };
    return JSON.stringify({ info: { features: { prompt: list, chosen: list, rejected: list } } });
  })();

  async function toParquet(name: string, jsonl: string, kv: string | null): Promise<string> {
    const out = join(dir, name);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const meta = kv === null ? '' : `, KV_METADATA {huggingface: '${kv.replaceAll("'", "''")}'}`;
    await conn.run(`COPY (SELECT * FROM read_json('${jsonl}', format='newline_delimited', columns=${COLS}, maximum_object_size=100000000)) TO '${out}' (FORMAT parquet${meta})`);
    conn.closeSync?.();
    db.closeSync?.();
    return out;
  }

  it('string arguments in parquet fail the qwen3-coder-style template; Json-typed ones (datasets metadata) pass', async () => {
    const jsonl = writeJsonl('for-parquet.jsonl', trlRows('string'));
    const plain = await toParquet('plain.parquet', jsonl, null);
    const typed = await toParquet('typed.parquet', jsonl, JSON_FEATURE);

    const rows: unknown[] = [];
    for await (const r of readPairsFile(typed)) rows.push(r.value);
    expect(rows).toHaveLength(12);
    const typedRows = rows as TrlRow[];
    for (const r of typedRows) expect(r.chosen).toHaveLength(1);
    const calls = typedRows.flatMap((r) => [...r.prompt, ...r.chosen, ...r.rejected]).flatMap((m) => m.tool_calls ?? []);
    expect(calls.length).toBeGreaterThan(20);
    for (const c of calls) expect(c.function.arguments).toBeTypeOf('object');

    const a = await run([plain]);
    expect(a.summary).toMatchObject({ rows: 12, failed: 12, renderFailures: 12 });
    const b = await run([typed]);
    expect(b.summary).toMatchObject({ rows: 12, ok: 12, failed: 0 });
  });
});

describe('Json-typed values in parquet schemas', () => {
  it('finds arrow.json extension fields and datasets Json features, and decodes them', async () => {
    const { Field, List, Schema, Struct, Utf8 } = await import('apache-arrow');
    const { jsonPaths, decodeJsonAt } = await import('../src/commands/check-template.js');
    const args = new Field('arguments', new Utf8(), true, new Map([['ARROW:extension:name', 'arrow.json']]));
    const call = new Struct([new Field('function', new Struct([new Field('name', new Utf8()), args]))]);
    const msg = new Struct([new Field('role', new Utf8()), new Field('tool_calls', new List(new Field('item', call)))]);
    const schema = new Schema(
      [new Field('prompt', new List(new Field('item', msg))), new Field('meta', new Utf8())],
      new Map([['huggingface', JSON.stringify({ info: { features: { meta: { _type: 'Json' }, x: [{ y: { _type: 'Json' } }] } } })]]),
    );
    const paths = jsonPaths(schema);
    expect(paths).toEqual([['prompt', 0, 'tool_calls', 0, 'function', 'arguments'], ['meta'], ['x', 0, 'y']]);
    const row = { prompt: [{ role: 'assistant', tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] }, { role: 'user', tool_calls: null }], meta: 'not json' };
    const decoded = paths.reduce((r, p) => decodeJsonAt(r, p), row as unknown) as typeof row;
    expect(decoded.prompt[0]!.tool_calls![0]!.function.arguments).toEqual({ a: 1 });
    expect(decoded.prompt[1]!.tool_calls).toBeNull();
    expect(decoded.meta).toBe('not json');
  });
});

describe('mine output on every fixture, reshaped with --shape trl, passes the template check', () => {
  // Runs the built pipeline (dist/, `npm test` builds first) on fixtures/*: forks of real rows of
  // nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0, © Nebius; see fixtures/README.md).
  const FIXTURES = ['forks.parquet', 'forks.jsonl', 'labels.parquet', 'labels.jsonl', 'labels-float.parquet', 'sampling.parquet', 'sampling.jsonl'];
  it.each(FIXTURES)('%s', async (name) => {
    const { minePairs } = await import('../dist/engine/mine-pairs.js');
    const { resolveInputs } = await import('../dist/io/inputs.js');
    const { withDefaults } = await import('../dist/contract/options.js');
    const path = join(fileURLToPath(new URL('../fixtures/', import.meta.url)), name);
    const mined: { row: import('../src/types.js').PairRow; tools: string | null }[] = [];
    await minePairs({ inputs: resolveInputs([path], null), options: withDefaults(), workers: 1, withTools: true }, async (p) => {
      mined.push(p);
    });
    expect(mined.length).toBeGreaterThan(0);
    for (const window of [null, 0, 3]) {
      for (const { row, tools } of mined) {
        const r = window === null ? row : windowRow(row, window);
        const t = toTrlRow(r, { tools, arguments: 'object' });
        expect(checkRow(QWEN, t), `${name} ${row.instance_id} @${row.divergence_msg_index} window=${window}`).toEqual({ problems: [], warnings: [] });
        if (name.endsWith('.parquet')) expect(t.tools).not.toBeNull();
      }
    }
  });
});
