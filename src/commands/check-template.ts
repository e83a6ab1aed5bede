// `divergence-mine check-template <pairs...> --template FILE`
// Renders every pair with a chat template (see src/dataset/template.ts for the rule) and reports the
// rows TRL's DPOTrainer cannot use. Exit 0 when every row passes, ExitCode.templateFailures when a
// row fails; bad arguments and unreadable files are UserErrors with their own codes.
import { createReadStream, existsSync, openAsBlob, readFileSync, statSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { basename } from 'node:path';
import type { Data, Field, Schema } from 'apache-arrow';
import type { Command } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { parquetLibs } from '../io/parquet-libs.js';
import { neutralise } from '../io/terminal-text.js';
import {
  TemplateError,
  checkRow,
  emptySummary,
  parseTemplateFile,
  summaryLine,
  tally,
  type CheckSummary,
  type LoadedTemplate,
  type RowRenders,
} from '../dataset/template.js';
import { BUILTIN_TEMPLATE_NAME } from '../tokens/builtin-template.js';
import { parsePythonJson } from '../templates/python-json.js';
import { TokenCounter } from '../tokens/counter.js';
import { loadTokenizer } from '../tokens/load.js';
import { chooseTemplate, loadTemplate } from './token-options.js';
import { tokenPrefixMismatch } from '../tokens/prefix.js';

export interface CheckTemplateOptions {
  /** null: the default template of `tokenizer` (token-options.ts `chooseTemplate`, the rule of mine and report). */
  template: string | null;
  templateName?: string | null;
  /** Problem lines to print; 0 = all. */
  maxReport?: number;
  quiet?: boolean;
  /** `--tokenizer`: also check the prefix on token ids (src/tokens/prefix.ts). */
  tokenizer?: string | null;
}

/** A row with where it came from. `value` is the parsed row, or an Error for an unparsable line. */
export interface SourcedRow {
  file: string;
  index: number;
  value: unknown;
}

export { loadTemplate } from './token-options.js';

async function isParquet(path: string): Promise<boolean> {
  if (/\.parquet$/i.test(path)) return true;
  if (/\.jsonl(\.gz)?$|\.json$|\.ndjson$/i.test(path)) return false;
  const fh = await openFile(path, 'r');
  try {
    const buf = Buffer.alloc(4);
    await fh.read(buf, 0, 4, 0);
    return buf.toString('latin1') === 'PAR1';
  } finally {
    await fh.close();
  }
}

async function* readJsonl(path: string): AsyncGenerator<SourcedRow> {
  const raw = createReadStream(path);
  const input = /\.gz$/i.test(path) ? raw.pipe(createGunzip()) : raw;
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = parsePythonJson(line); // numbers with the types Python's json.loads gives them
    } catch (e) {
      value = new Error(`line is not JSON (${(e as Error).message})`);
    }
    yield { file: path, index: n, value };
  }
}

type Path = (string | 0)[];

/**
 * Paths of JSON-typed values, as `datasets` >= 4.7 stores them: the `arrow.json` extension type on
 * a field, or `{"_type": "Json"}` in the `huggingface` schema metadata. They decode to objects.
 */
export function jsonPaths(schema: Schema): Path[] {
  const paths: Path[] = [];
  const visitField = (f: Field, path: Path): void => {
    if (f.metadata?.get('ARROW:extension:name') === 'arrow.json') {
      paths.push(path);
      return;
    }
    const children = (f.type as unknown as { children?: Field[] }).children ?? [];
    const isList = String(f.type).startsWith('List') || String(f.type).startsWith('LargeList');
    for (const c of children) visitField(c, isList ? [...path, 0] : [...path, c.name]);
  };
  for (const f of schema.fields) visitField(f, [f.name]);

  const hf = schema.metadata?.get('huggingface');
  if (hf) {
    let features: unknown;
    try {
      features = (JSON.parse(hf) as { info?: { features?: unknown } }).info?.features;
    } catch {
      features = undefined;
    }
    const visitFeature = (feat: unknown, path: Path): void => {
      if (Array.isArray(feat)) return feat.length > 0 ? visitFeature(feat[0], [...path, 0]) : undefined;
      if (feat === null || typeof feat !== 'object') return;
      const o = feat as Record<string, unknown>;
      if (o._type === 'Json') paths.push(path);
      else if (o._type === 'List' || o._type === 'Sequence' || o._type === 'LargeList') visitFeature(o.feature, [...path, 0]);
      else if (o._type === undefined) for (const [k, v] of Object.entries(o)) visitFeature(v, [...path, k]);
    };
    if (features && typeof features === 'object') for (const [k, v] of Object.entries(features)) visitFeature(v, [k]);
  }
  return paths;
}

/** Decode the JSON string at `path` inside `v` (datasets' json_decode_field). */
export function decodeJsonAt(v: unknown, path: Path): unknown {
  if (v === null || v === undefined) return v;
  if (path.length === 0) {
    if (typeof v !== 'string') return v;
    try {
      return parsePythonJson(v); // as datasets' Json() decodes it: 1.0 stays a float
    } catch {
      return v;
    }
  }
  const [head, ...rest] = path;
  if (head === 0) return Array.isArray(v) ? v.map((x) => decodeJsonAt(x, rest)) : v;
  if (typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  return head! in o ? { ...o, [head!]: decodeJsonAt(o[head!], rest) } : o;
}

async function* readParquet(path: string): AsyncGenerator<SourcedRow> {
  const { arrow: { tableFromIPC }, wasm: { ParquetFile }, values: { makeGetter } } = await parquetLibs();
  let file: Awaited<ReturnType<typeof ParquetFile.fromFile>>;
  try {
    file = await ParquetFile.fromFile(await openAsBlob(path));
  } catch (e) {
    throw new UserError(`${path}: not a readable parquet file (${(e as Error).message})`, ExitCode.notParquet);
  }
  // Record batches do not carry the file's key-value metadata: read the Json paths from the file schema.
  const paths = jsonPaths(tableFromIPC(file.schema().intoIPCStream()).schema);
  const stream = await file.stream({ batchSize: 256 });
  let n = 0;
  for await (const wasmBatch of stream as unknown as AsyncIterable<{ intoIPCStream(): Uint8Array }>) {
    const table = tableFromIPC(wasmBatch.intoIPCStream());
    for (const batch of table.batches) {
      const names = batch.schema.fields.map((f) => f.name);
      const getters = batch.data.children.map((c) => makeGetter(c as Data));
      for (let i = 0; i < batch.numRows; i++) {
        let row: Record<string, unknown> = {};
        for (let k = 0; k < names.length; k++) row[names[k]!] = getters[k]!(i);
        for (const p of paths) row = decodeJsonAt(row, p) as Record<string, unknown>;
        yield { file: path, index: ++n, value: row };
      }
    }
  }
}

/** Rows of a pairs file: JSONL (optionally .gz) or parquet (by extension, else by magic bytes). */
export async function* readPairsFile(path: string): AsyncGenerator<SourcedRow> {
  if (!existsSync(path) || !statSync(path).isFile()) throw new UserError(`${path}: no such file`, ExitCode.missingInput);
  if (await isParquet(path)) yield* readParquet(path);
  else yield* readJsonl(path);
}

/** Run the check; `out` gets the report lines (problems, then the summary). */
export async function runCheckTemplate(
  files: readonly string[],
  opts: CheckTemplateOptions,
  out: (line: string) => void,
): Promise<CheckSummary> {
  const tokenizer = opts.tokenizer ? loadTokenizer(opts.tokenizer) : null;
  let template: LoadedTemplate;
  if (opts.template !== null) template = loadTemplate(opts.template, opts.templateName ?? null);
  else if (tokenizer && opts.tokenizer) template = chooseTemplate(tokenizer, opts.tokenizer, null, opts.templateName ?? null).template ?? loadTemplate(BUILTIN_TEMPLATE_NAME, opts.templateName ?? null);
  else throw new UserError('check-template: give --template <file>, or --tokenizer to use its default template', ExitCode.usage);
  const counter = tokenizer ? new TokenCounter(tokenizer.tokenizer) : null;
  const summary = emptySummary();
  summary.tokenized = counter !== null;
  const max = opts.maxReport ?? 50;
  let printed = 0;
  let suppressed = 0;
  const report = (line: string): void => {
    if (opts.quiet) return;
    if (max === 0 || printed < max) {
      out(line);
      printed++;
    } else suppressed++;
  };
  for (const f of files) {
    for await (const { file, index, value } of readPairsFile(f)) {
      const renders: RowRenders = {};
      const res =
        value instanceof Error ? { problems: [{ kind: 'shape' as const, message: value.message }], warnings: [] } : checkRow(template, value, renders);
      if (counter && renders.prompt !== undefined) {
        for (const [side, full, kind] of [
          ['chosen', renders.chosen, 'chosen-token-prefix'],
          ['rejected', renders.rejected, 'rejected-token-prefix'],
        ] as const) {
          // A string that is not a prefix is reported already; the token check is for the strings that are.
          if (full === undefined || !full.startsWith(renders.prompt)) continue;
          const m = tokenPrefixMismatch(counter, renders.prompt, full, side);
          if (m) res.problems.push({ kind, message: m.message });
        }
      }
      tally(summary, res);
      const id = (value as { instance_id?: unknown } | null)?.instance_id;
      const where = `${file}:${index}${typeof id === 'string' ? ` (${id})` : ''}`;
      for (const p of res.problems) report(`${where}: ${p.kind}: ${p.message}`);
      for (const w of res.warnings) report(`${where}: warning: ${w}`);
    }
  }
  if (suppressed > 0) out(`... ${suppressed} more problem lines not shown (--max-report 0 shows all)`);
  out(summaryLine(summary));
  return summary;
}

function nonNegativeInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`--max-report must be a non-negative integer, got "${v}"`, ExitCode.usage);
  return n;
}

export function registerCheckTemplate(program: Command): Command {
  return program
    .command('check-template')
    .description(
      "render every pair with a chat template as TRL's DPOTrainer does and report rows that fail to render " +
        'or whose rendered prompt is not a prefix of prompt+chosen / prompt+rejected',
    )
    .argument('<pairs...>', 'pairs files in the trl shape (.jsonl, .jsonl.gz or .parquet)')
    .option('--template <file>', `a .jinja chat template, a tokenizer_config.json with a chat_template field, or ${BUILTIN_TEMPLATE_NAME} (the built-in one); default with --tokenizer: the template mine --tokenizer renders with`)
    .option('--tokenizer <path|qwen3>', 'also check the prefix on token ids, as TRL does: a tokenizer.json (or its folder), or qwen3 (bundled)')
    .option('--template-name <name>', 'which named template of a tokenizer_config.json to use (default: tool_use for rows with tools, else default)')
    .option('--max-report <n>', 'print at most n problem lines (0 = all)', nonNegativeInt, 50)
    .option('--quiet', 'print only the summary line')
    .action(async (pairs: string[], o: { template?: string; templateName?: string; maxReport: number; quiet?: boolean; tokenizer?: string }) => {
      const summary = await runCheckTemplate(
        pairs,
        { template: o.template ?? null, templateName: o.templateName ?? null, maxReport: o.maxReport, quiet: o.quiet ?? false, tokenizer: o.tokenizer ?? null },
        // Problem lines quote ids and values of the rows: neutralised, one line each.
        (line) => process.stdout.write(neutralise(line) + '\n'),
      );
      if (summary.failed > 0)
        throw new UserError(
          `check-template: ${summary.failed} of ${summary.rows} rows fail with ${o.template ?? `the default template of --tokenizer ${o.tokenizer}`}`,
          ExitCode.templateFailures,
        );
    });
}
