// `--tokenizer` and `--template` of mine, check-template and report: load the tokenizer and choose
// the chat template. The template: `--template FILE` when given (a .jinja file or a
// tokenizer_config.json); else the tokenizer's own chat template when its tokenizer_config.json has
// one (a tokenizer.json given by path); else the built-in `qwen3-coder-style` template (always for
// the bundled `qwen3`, whose config carries the base Qwen3 template, not Qwen3-Coder's).
import { basename } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { TemplateError, parseTemplateFile, renderMessages, type LoadedTemplate } from '../dataset/template.js';
import { BUILTIN_TEMPLATE_NAME, BuiltinRenderer } from '../tokens/builtin-template.js';
import { TokenCounter } from '../tokens/counter.js';
import { loadTokenizer, type LoadedTokenizer } from '../tokens/load.js';
import { RowTokenCounter } from '../tokens/row-tokens.js';
import { loadTemplate } from './check-template.js';

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

/** Load `--tokenizer` and choose the template (see the top of the file). */
export function tokenSetup(tokenizerSpec: string, templateSpec: string | null | undefined, templateName: string | null = null): TokenSetup {
  const tokenizer = loadTokenizer(tokenizerSpec);
  const counter = new TokenCounter(tokenizer.tokenizer);
  let template: LoadedTemplate | null = null;
  let name = BUILTIN_TEMPLATE_NAME;
  if (templateSpec && !isBuiltinTemplate(templateSpec)) {
    template = loadTemplate(templateSpec, templateName);
    name = basename(templateSpec);
  } else if (!templateSpec && !tokenizer.bundled && tokenizer.configText !== null) {
    try {
      template = parseTemplateFile(tokenizer.configText, 'tokenizer_config.json', templateName);
    } catch (e) {
      if (e instanceof TemplateError) throw new UserError(`${tokenizerSpec}: ${e.message}`, ExitCode.badValue);
      throw e;
    }
    name = `${basename(tokenizerSpec)}/tokenizer_config.json`;
  }
  const rows = template
    ? new RowTokenCounter(counter, { render: (messages, tools, gen) => renderMessages(template, messages, tools, gen) })
    : new RowTokenCounter(counter, { builtin: new BuiltinRenderer() });
  return { tokenizer, counter, rows, templateName: name, template };
}
