// `divergence-mine report`: one self-contained HTML file about a pairs file (and its stats).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { pairsFormat, readPairs } from '../io/pairs.js';
import { VERSION } from '../version.js';
import { REPORT_DEFAULTS, ReportBuilder, type StatsDoc } from '../view/report.js';
import { neutralise, writeStderr } from '../io/terminal-text.js';
import { checkOutputPath, writeFileAtomic } from '../io/atomic.js';
import { readPairsFile } from './check-template.js';
import { tokenSetup } from './token-options.js';
import { TokenLengthStats } from '../tokens/lengths.js';
import { RenderFailure, type TokenRow } from '../tokens/row-tokens.js';
import type { ReportTokens } from '../view/report-tokens.js';
import { toTrlRow } from '../shapes/trl.js';
import type { PairRow } from '../types.js';
import { formatCount } from '../count-text.js';

export interface ReportCliOptions {
  out: string;
  stats?: string;
  title?: string;
  context: number;
  maxChars: number;
  force: boolean;
  quiet: boolean;
  tokenizer?: string;
  template?: string;
}

/** `--tokenizer`: count every row of the file (trl rows as they are, published rows in the trl shape). */
async function countTokens(file: string, tokenizer: string, template: string | undefined): Promise<ReportTokens> {
  const setup = tokenSetup(tokenizer, template);
  const lengths = new TokenLengthStats();
  let renderFailures = 0;
  for await (const { value, index } of readPairsFile(file)) {
    if (value instanceof Error || value === null || typeof value !== 'object') throw new UserError(`${file}:${index}: not a pairs row`, ExitCode.badValue);
    const r = value as Record<string, unknown>;
    const row: TokenRow = Array.isArray(r.chosen)
      ? (r as unknown as TokenRow)
      : toTrlRow(r as unknown as PairRow, { tools: r.tools ?? null, arguments: 'object' });
    try {
      lengths.add(setup.rows.count(row));
    } catch (e) {
      if (!(e instanceof RenderFailure)) throw e;
      renderFailures++;
    }
  }
  return { tokenizer, template: setup.templateName, lengths: lengths.toJSON(), renderFailures };
}

function wholeNumber(min: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`expected a whole number, got "${v}"`);
    const n = Number(v);
    if (n < min) throw new InvalidArgumentError(`must be at least ${min}, got ${n}`);
    return n;
  };
}

/** Read and check a `mine --stats` file. */
export function readStats(path: string): StatsDoc {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UserError(`${path}: no such stats file`, ExitCode.missingInput);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: invalid JSON (${(e as Error).message})`, ExitCode.corrupt);
  }
  const counters = (doc as { counters?: unknown } | null)?.counters;
  if (counters === null || typeof counters !== 'object' || Array.isArray(counters)) {
    throw new UserError(`${path}: not a stats file: no "counters" object (write one with \`mine --stats FILE\`)`, ExitCode.schema);
  }
  for (const [k, v] of Object.entries(counters as Record<string, unknown>)) {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new UserError(`${path}: counters.${k} must be a number`, ExitCode.schema);
  }
  return doc as StatsDoc;
}

export async function runReport(file: string, o: ReportCliOptions, log: (line: string) => void = (l) => writeStderr(neutralise(l) + '\n')): Promise<void> {
  if (o.template !== undefined && o.tokenizer === undefined) throw new UserError('--template chooses the chat template of --tokenizer; give --tokenizer too', ExitCode.usage);
  pairsFormat(file); // missing input first
  const stats = o.stats ? readStats(o.stats) : null;
  checkOutputPath(o.out, o.force, 'report');
  const tokens = o.tokenizer ? await countTokens(file, o.tokenizer, o.template) : null;
  const builder = new ReportBuilder({
    source: basename(file),
    title: o.title,
    stats,
    statsSource: o.stats ? basename(o.stats) : null,
    context: o.context,
    maxChars: o.maxChars,
    version: VERSION,
    tokens,
  });
  for await (const r of readPairs(file, { promptTail: o.context })) builder.add(r);
  const html = builder.build();
  writeFileAtomic(o.out, html);
  if (!o.quiet) log(`divergence-mine: wrote ${o.out} (${formatCount(builder.count)} pairs, ${(Buffer.byteLength(html) / 1048576).toFixed(1)} MiB)`);
}

export function registerReport(program: Command): Command {
  return program
    .command('report')
    .summary('write a self-contained HTML report of a pairs file')
    .description(
      'Write one HTML file (no network needed to view it): the mining funnel (with --stats), histograms of ' +
        'divergence turn and action similarity, the tool mix of chosen vs rejected, pairs per repository, and a ' +
        'searchable table of pairs whose rows open the side-by-side diff that `show` prints.',
    )
    .argument('<pairs>', 'pairs file written by `divergence-mine mine` (.jsonl, .jsonl.gz or .parquet)')
    .requiredOption('-o, --out <report.html>', 'the HTML file to write')
    .option('--stats <stats.json>', 'the counters written by `mine --stats`, drawn as a funnel')
    .option('--title <text>', 'page title')
    .option('--context <n>', 'prompt messages embedded per pair (the last n)', wholeNumber(0), REPORT_DEFAULTS.context)
    .option('--max-chars <n>', 'characters embedded per prompt message (the rest is noted, not embedded)', wholeNumber(100), REPORT_DEFAULTS.maxChars)
    .option('--tokenizer <path|qwen3>', 'add token-length histograms and the recommended max_length: a tokenizer.json (or its folder), or qwen3 (bundled)')
    .option('--template <file>', 'chat template for --tokenizer (default: the tokenizer\'s own, else the built-in qwen3-coder-style)')
    .option('-f, --force', 'overwrite an existing report', false)
    .option('-q, --quiet', 'print nothing on success', false)
    .addHelpText(
      'after',
      `
Examples:
  $ divergence-mine report pairs.jsonl --stats stats.json -o report.html
  $ divergence-mine report pairs.parquet -o report.html --context 5
  $ divergence-mine report pairs.jsonl --tokenizer qwen3 -o report.html`,
    )
    .action(async (file: string, o: ReportCliOptions) => {
      await runReport(file, o);
    });
}
