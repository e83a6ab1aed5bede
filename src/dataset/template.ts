// `check-template`: render pairs with a chat template the way TRL's DPOTrainer does and report the
// rows it cannot use.
//
// Per row (TRL `DPOTrainer` tokenize_fn / `apply_chat_template`): P = render(prompt,
// add_generation_prompt=true), C = render(prompt + chosen), R = render(prompt + rejected), all with
// `tools` = the row's `tools` (JSON-decoded when a string; null when absent, as transformers passes
// `tools=None`) and the tokenizer's special tokens. A row fails when a render throws, when C (R)
// does not start with P — TRL then warns "Mismatch between tokenized prompt and the start of
// tokenized prompt+chosen" and trains on a wrong completion — or when the row is not in the
// conversational shape. The check is on strings: a string prefix mismatch always breaks the token
// prefix; the converse (a tokenizer merging across the boundary) is not checked here.
//
// Templates render with Python Jinja2's semantics (src/templates/python-jinja.ts): a value prints
// as transformers prints it (`None`, `False`, `1.0`), and a row fails where Python's render raises.
import { PythonTemplate as Template, type RenderOptions } from '../templates/python-jinja.js';
import { parsePythonJson } from '../templates/python-json.js';

export interface LoadedTemplate {
  /** Named templates ("default" for a single template). */
  templates: Map<string, Template>;
  /** Special tokens passed to the render, as transformers does (bos_token, eos_token, ...). */
  specialTokens: Record<string, string>;
  /** Forced name (`--template-name`), else chosen per row like transformers. */
  forcedName: string | null;
}

export class TemplateError extends Error {}

const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];

function tokenText(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v !== null && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return null;
}

function compile(source: string, what: string, options: RenderOptions): Template {
  try {
    return new Template(source, options);
  } catch (e) {
    throw new TemplateError(`${what}: the chat template does not parse: ${(e as Error).message}`);
  }
}

/**
 * A template from a file's text: a `.jinja` file, or a JSON file (`tokenizer_config.json`,
 * `chat_template.json`) whose `chat_template` is a string or a list of {name, template}.
 */
export function parseTemplateFile(text: string, fileName: string, name: string | null = null, options: RenderOptions = {}): LoadedTemplate {
  const trimmed = text.trimStart();
  const looksJson = /\.json$/i.test(fileName) || (trimmed.startsWith('{') && !trimmed.startsWith('{%') && !trimmed.startsWith('{{') && !trimmed.startsWith('{#'));
  const templates = new Map<string, Template>();
  const specialTokens: Record<string, string> = {};
  if (!looksJson) {
    templates.set('default', compile(text, fileName, options));
  } else {
    let cfg: unknown;
    try {
      cfg = JSON.parse(text);
    } catch (e) {
      throw new TemplateError(`${fileName}: not valid JSON (${(e as Error).message})`);
    }
    if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) throw new TemplateError(`${fileName}: expected a JSON object`);
    const c = cfg as Record<string, unknown>;
    const ct = c.chat_template;
    if (typeof ct === 'string') templates.set('default', compile(ct, fileName, options));
    else if (Array.isArray(ct)) {
      for (const e of ct) {
        const n = (e as { name?: unknown })?.name;
        const t = (e as { template?: unknown })?.template;
        if (typeof n !== 'string' || typeof t !== 'string')
          throw new TemplateError(`${fileName}: chat_template list entries need string "name" and "template"`);
        templates.set(n, compile(t, `${fileName} (${n})`, options));
      }
    } else throw new TemplateError(`${fileName}: no "chat_template" field (give the model's chat_template.jinja instead)`);
    for (const k of SPECIAL_TOKEN_KEYS) {
      const v = tokenText(c[k]);
      if (v !== null) specialTokens[k] = v;
    }
  }
  if (templates.size === 0) throw new TemplateError(`${fileName}: the chat_template list is empty`);
  if (name !== null && !templates.has(name))
    throw new TemplateError(`${fileName}: no template named "${name}" (have: ${[...templates.keys()].join(', ')})`);
  return { templates, specialTokens, forcedName: name };
}

/** transformers' choice: "tool_use" when tools are passed and it exists, else "default", else the only one. */
function pick(t: LoadedTemplate, hasTools: boolean): Template {
  if (t.forcedName !== null) return t.templates.get(t.forcedName)!;
  if (hasTools && t.templates.has('tool_use')) return t.templates.get('tool_use')!;
  const d = t.templates.get('default');
  if (d) return d;
  if (t.templates.size === 1) return [...t.templates.values()][0]!;
  throw new TemplateError(`several named templates and none is "default" (have: ${[...t.templates.keys()].join(', ')}); pass --template-name`);
}

/** Render `messages` as transformers does (the template `pick` chooses, the special tokens, `tools`). */
export function renderMessages(t: LoadedTemplate, messages: readonly unknown[], tools: unknown[] | null, addGenerationPrompt: boolean): string {
  return renderWith(pick(t, tools !== null), t, messages, tools, addGenerationPrompt);
}

/** transformers' `render(messages=, tools=, documents=None, add_generation_prompt=, **special_tokens)`. */
function renderWith(template: Template, t: LoadedTemplate, messages: readonly unknown[], tools: unknown[] | null, addGenerationPrompt: boolean): string {
  return template.render({ ...t.specialTokens, messages: messages as unknown[], tools, documents: null, add_generation_prompt: addGenerationPrompt });
}

export type ProblemKind = 'shape' | 'render' | 'chosen-prefix' | 'rejected-prefix' | 'chosen-token-prefix' | 'rejected-token-prefix';

export interface Problem {
  kind: ProblemKind;
  message: string;
}

export interface RowCheck {
  problems: Problem[];
  /** Not failures: e.g. null values inside `tools` (Python renders them as "None"). */
  warnings: string[];
}

function isMessageList(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.length > 0 && v.every((m) => m !== null && typeof m === 'object' && typeof (m as { role?: unknown }).role === 'string');
}

/** The first path holding a null value (object keys only), or null. */
export function firstNullPath(v: unknown, path = ''): string | null {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = firstNullPath(v[i], `${path}[${i}]`);
      if (p !== null) return p;
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (x === null) return `${path}.${k}`;
      const p = firstNullPath(x, `${path}.${k}`);
      if (p !== null) return p;
    }
  }
  return null;
}

function snippet(s: string, at: number): string {
  return JSON.stringify(s.slice(Math.max(0, at - 20), at + 40));
}

function prefixProblem(kind: 'chosen-prefix' | 'rejected-prefix', p: string, full: string): Problem | null {
  const side = kind === 'chosen-prefix' ? 'chosen' : 'rejected';
  if (full.startsWith(p)) {
    if (full.length === p.length) return { kind, message: `prompt+${side} renders nothing after the prompt` };
    return null;
  }
  let i = 0;
  while (i < p.length && i < full.length && p.charCodeAt(i) === full.charCodeAt(i)) i++;
  return {
    kind,
    message: `render(prompt, add_generation_prompt=true) is not a prefix of render(prompt+${side}): first difference at character ${i}: prompt has ${snippet(p, i)}, prompt+${side} has ${snippet(full, i)}`,
  };
}

/** The three renders of a row, when they succeed (for the token check of check-template --tokenizer). */
export interface RowRenders {
  prompt?: string;
  chosen?: string;
  rejected?: string;
}

/** Check one row (any JSON value; shape problems are reported, never thrown). `renders` receives the renders. */
export function checkRow(t: LoadedTemplate, row: unknown, renders?: RowRenders): RowCheck {
  const problems: Problem[] = [];
  const warnings: string[] = [];
  if (row === null || typeof row !== 'object' || Array.isArray(row)) {
    return { problems: [{ kind: 'shape', message: 'row is not a JSON object' }], warnings };
  }
  const r = row as Record<string, unknown>;
  for (const k of ['prompt', 'chosen', 'rejected'] as const) {
    if (!isMessageList(r[k])) {
      const hint =
        k !== 'prompt' && r[k] !== null && typeof r[k] === 'object' && !Array.isArray(r[k])
          ? ' (one message object: the published shape; write the pairs with --shape trl)'
          : '';
      problems.push({ kind: 'shape', message: `"${k}" is not a non-empty list of messages with a role${hint}` });
    }
  }
  let tools: unknown = r.tools ?? null;
  if (typeof tools === 'string') {
    try {
      tools = parsePythonJson(tools);
    } catch {
      problems.push({ kind: 'shape', message: '"tools" is a string that is not JSON' });
      tools = null;
    }
  }
  if (tools !== null && !Array.isArray(tools)) {
    problems.push({ kind: 'shape', message: '"tools" is not a list' });
    tools = null;
  }
  if (Array.isArray(tools) && tools.length === 0) tools = null; // TRL: `tools or None`
  if (tools !== null) {
    const p = firstNullPath(tools, 'tools');
    if (p !== null) warnings.push(`null value at ${p} (Python's Jinja renders it as "None")`);
  }
  if (problems.length > 0) return { problems, warnings };

  let template: Template;
  try {
    template = pick(t, tools !== null);
  } catch (e) {
    return { problems: [{ kind: 'render', message: (e as Error).message }], warnings };
  }
  const prompt = r.prompt as unknown[];
  const render = (messages: unknown[], addGenerationPrompt: boolean): string => renderWith(template, t, messages, tools as unknown[] | null, addGenerationPrompt);

  const failures: { what: string; reason: string }[] = [];
  const attempt = (what: string, messages: unknown[], gen: boolean): string | null => {
    try {
      return render(messages, gen);
    } catch (e) {
      failures.push({ what, reason: (e as Error).message });
      return null;
    }
  };
  const p = attempt('prompt', prompt, true);
  const c = attempt('prompt+chosen', [...prompt, ...(r.chosen as unknown[])], false);
  const rj = attempt('prompt+rejected', [...prompt, ...(r.rejected as unknown[])], false);
  if (renders) {
    if (p !== null) renders.prompt = p;
    if (c !== null) renders.chosen = c;
    if (rj !== null) renders.rejected = rj;
  }
  // One line per distinct reason: "prompt, prompt+chosen and prompt+rejected fail to render: ..."
  for (const reason of new Set(failures.map((f) => f.reason))) {
    const whats = failures.filter((f) => f.reason === reason).map((f) => f.what);
    const list = whats.length === 1 ? whats[0]! : `${whats.slice(0, -1).join(', ')} and ${whats.at(-1)!}`;
    problems.push({ kind: 'render', message: `${list} ${whats.length === 1 ? 'fails' : 'fail'} to render: ${reason}` });
  }
  if (p !== null && c !== null) {
    const pr = prefixProblem('chosen-prefix', p, c);
    if (pr) problems.push(pr);
  }
  if (p !== null && rj !== null) {
    const pr = prefixProblem('rejected-prefix', p, rj);
    if (pr) problems.push(pr);
  }
  return { problems, warnings };
}

export interface CheckSummary {
  rows: number;
  ok: number;
  failed: number;
  renderFailures: number;
  shapeFailures: number;
  chosenPrefix: number;
  rejectedPrefix: number;
  /** With --tokenizer: rows whose tokenized prompt is not a prefix of tokenized prompt+chosen / +rejected. */
  chosenTokenPrefix: number;
  rejectedTokenPrefix: number;
  tokenized: boolean;
  warnings: number;
}

export function emptySummary(): CheckSummary {
  return { rows: 0, ok: 0, failed: 0, renderFailures: 0, shapeFailures: 0, chosenPrefix: 0, rejectedPrefix: 0, chosenTokenPrefix: 0, rejectedTokenPrefix: 0, tokenized: false, warnings: 0 };
}

/** Count one row's result into the summary. */
export function tally(s: CheckSummary, res: RowCheck): void {
  s.rows++;
  if (res.warnings.length > 0) s.warnings++;
  if (res.problems.length === 0) {
    s.ok++;
    return;
  }
  s.failed++;
  const kinds = new Set(res.problems.map((p) => p.kind));
  if (kinds.has('render')) s.renderFailures++;
  if (kinds.has('shape')) s.shapeFailures++;
  if (kinds.has('chosen-prefix')) s.chosenPrefix++;
  if (kinds.has('rejected-prefix')) s.rejectedPrefix++;
  if (kinds.has('chosen-token-prefix')) s.chosenTokenPrefix++;
  if (kinds.has('rejected-token-prefix')) s.rejectedTokenPrefix++;
}

export function summaryLine(s: CheckSummary): string {
  return (
    `check-template: ${s.rows} rows, ${s.ok} ok, ${s.failed} failed ` +
    `(${s.renderFailures} render errors, ${s.shapeFailures} not in the trl shape, ` +
    `${s.chosenPrefix} prompt not a prefix of prompt+chosen, ${s.rejectedPrefix} prompt not a prefix of prompt+rejected` +
    (s.tokenized ? `; tokens: ${s.chosenTokenPrefix} prompt not a prefix of prompt+chosen, ${s.rejectedTokenPrefix} of prompt+rejected` : '') +
    ')' +
    (s.warnings > 0 ? `, ${s.warnings} rows with warnings` : '')
  );
}
