// `--tokenizer` and `--template` of mine, check-template and report: load the tokenizer and choose
// the chat template. The template: `--template FILE` when given (a .jinja file or a
// tokenizer_config.json); else the tokenizer's own chat template when its tokenizer_config.json has
// one (a tokenizer.json given by path); else the built-in `qwen3-coder-style` template (always for
// the bundled `qwen3`, whose config carries the base Qwen3 template, not Qwen3-Coder's).
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { TemplateError, parseTemplateFile, renderMessages, type LoadedTemplate } from '../dataset/template.js';
import { BUILTIN_TEMPLATE_NAME, BUILTIN_TEMPLATE_SOURCE, BuiltinRenderer } from '../tokens/builtin-template.js';
import { TokenCounter } from '../tokens/counter.js';
import { BUNDLED_TOKENIZERS, loadTokenizer, type LoadedTokenizer } from '../tokens/load.js';
import { RowTokenCounter } from '../tokens/row-tokens.js';

export interface TokenSetup {
  tokenizer: LoadedTokenizer;
  counter: TokenCounter;
  rows: RowTokenCounter;
  /** The template's name for stats and messages: `qwen3-coder-style`, a file name, or `<tokenizer>/tokenizer_config.json`. */
  templateName: string;
  /** The loaded template (null for the built-in one, rendered piecewise). */
  template: LoadedTemplate | null;
}

export function isBuiltinTemplate(spec: string | undefined | null): boolean {
  return spec === BUILTIN_TEMPLATE_NAME;
}

export function loadTemplate(path: string, name: string | null = null): LoadedTemplate {
  if (path === BUILTIN_TEMPLATE_NAME && !existsSync(path)) return parseTemplateFile(BUILTIN_TEMPLATE_SOURCE, `${BUILTIN_TEMPLATE_NAME}.jinja`, name);
  if (!existsSync(path)) throw new UserError(`${path}: template file not found`, ExitCode.missingInput);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the template (${(e as Error).message})`, ExitCode.missingInput);
  }
  try {
    return parseTemplateFile(text, basename(path), name);
  } catch (e) {
    if (e instanceof TemplateError) throw new UserError(e.message, ExitCode.badValue);
    throw e;
  }
}

/** Whether the rule below gives the built-in template to a bundled tokenizer (known before loading it: mine counts in workers then). */
export function bundledWithBuiltin(tokenizerSpec: string, templateSpec: string | null | undefined): boolean {
  return (BUNDLED_TOKENIZERS as readonly string[]).includes(tokenizerSpec) && (!templateSpec || isBuiltinTemplate(templateSpec));
}

/**
 * The chat template of `--tokenizer` when `--template` may be absent: the one rule of mine, report
 * and check-template (see the top of the file). `template` null: the built-in template.
 */
export function chooseTemplate(tokenizer: LoadedTokenizer, tokenizerSpec: string, templateSpec: string | null | undefined, templateName: string | null = null): { template: LoadedTemplate | null; name: string } {
  if (templateSpec && !isBuiltinTemplate(templateSpec)) return { template: loadTemplate(templateSpec, templateName), name: basename(templateSpec) };
  if (!templateSpec && !tokenizer.bundled && tokenizer.configText !== null) {
    try {
      return { template: parseTemplateFile(tokenizer.configText, 'tokenizer_config.json', templateName), name: `${basename(tokenizerSpec)}/tokenizer_config.json` };
    } catch (e) {
      if (e instanceof TemplateError) throw new UserError(`${tokenizerSpec}: ${e.message}`, ExitCode.badValue);
      throw e;
    }
  }
  return { template: null, name: BUILTIN_TEMPLATE_NAME };
}

/** Load `--tokenizer` and choose the template (see the top of the file). */
export function tokenSetup(tokenizerSpec: string, templateSpec: string | null | undefined, templateName: string | null = null): TokenSetup {
  const tokenizer = loadTokenizer(tokenizerSpec);
  const counter = new TokenCounter(tokenizer.tokenizer);
  const { template, name } = chooseTemplate(tokenizer, tokenizerSpec, templateSpec, templateName);
  const rows = template
    ? new RowTokenCounter(counter, { render: (messages, tools, gen) => renderMessages(template, messages, tools, gen) })
    : new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
  return { tokenizer, counter, rows, templateName: name, template };
}
