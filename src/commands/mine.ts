// `divergence-mine mine`: options, output and the end-of-run report around the pipeline (mine.ts).
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatCounters, type Counters } from '../counters.js';
import { ExitCode, UserError } from '../errors.js';
import { minePairs } from '../mine.js';
import { CONTRACT_VERSION, DEFAULT_OPTIONS, type MiningOptions } from '../options.js';
import { openPublishedSink, outputFormat } from '../output.js';
import { fingerprintInputs, parsePartition, type Partition } from '../partition.js';
import { StderrProgress, silentProgress } from '../progress.js';
import { resolveInputs, type InputFile } from '../read/inputs.js';
import { VERSION } from '../version.js';
import { checkOutputPath, commitTemp, tempPathFor, trackTemp } from '../write/atomic.js';
import { BrokenPipe } from '../write/jsonl.js';

export function intArg(min: number) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v.trim())) throw new InvalidArgumentError(`expected a whole number, got "${v}"`);
    const n = Number(v);
    if (n < min) throw new InvalidArgumentError(`must be at least ${min}, got ${n}`);
    return n;
  };
}

function fractionArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`expected a number from 0 to 1, got "${v}"`);
  return n;
}

function listArg(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

export interface MineCliOptions {
  parquet?: string[];
  jsonl?: string[];
  out: string;
  stats?: string;
  maxPerSide: number;
  maxPairsPerInstance: number;
  minSimilaritySkip: number;
  seed: string;
  reasoningKeys: string[];
  skipBadRows: boolean;
  quiet: boolean;
  workers: number;
  force: boolean;
  partition?: Partition;
}

/** The stats file: counters plus everything `merge` checks before combining partitions. */
export function statsDocument(
  counters: Counters,
  options: MiningOptions,
  inputs: InputFile[],
  run: { partition: Partition | null; badRowsIndexPass: number; fingerprint: string; shape?: string },
) {
  return {
    tool: 'divergence-mine',
    tool_version: VERSION,
    contract_version: CONTRACT_VERSION,
    counters,
    partition: run.partition,
    row_level: { bad_rows_index_pass: run.badRowsIndexPass },
    input_fingerprint: run.fingerprint,
    shape: run.shape ?? 'published',
    options: {
      max_per_side: options.maxPerSide,
      max_pairs_per_instance: options.maxPairsPerInstance,
      min_similarity_skip: options.minSimilaritySkip,
      seed: options.seed,
      reasoning_keys: [...options.reasoningKeys],
      skip_bad_rows: options.skipBadRows,
    },
    inputs: inputs.map((f) => ({ path: f.path, kind: f.kind, bytes: f.bytes })),
  };
}

export function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = tempPathFor(path);
  trackTemp(tmp);
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n');
  commitTemp(tmp, path);
}

export function registerMine(program: Command): void {
  const d = DEFAULT_OPTIONS;
  program
    .command('mine')
    .summary('mine divergence-point DPO pairs from trajectories')
    .description(
      'Group trajectories by instance_id, pair resolved with failed attempts, walk both in lockstep on\n' +
        'canonical action signatures and emit one preference pair at the first diverging assistant action\n' +
        `(mining contract v${CONTRACT_VERSION}). Prints every filter's count when done.`,
    )
    .argument('[inputs...]', 'input files by extension (.parquet, .jsonl, .jsonl.gz), folders or globs')
    .option('--parquet <path>', 'parquet input: a file, a folder (every *.parquet below it, sorted) or a glob; repeatable', collect)
    .option('--jsonl <path>', 'JSONL input (.jsonl or .jsonl.gz, one row per line as `datasets` exports it); repeatable', collect)
    .requiredOption('-o, --out <path>', 'output: *.jsonl, *.parquet, or - for JSONL on stdout')
    .option('--stats <file>', 'also write the counters, options and inputs as JSON')
    .option('--max-per-side <n>', 'trajectories kept per instance and side, by SHA-256 rank', intArg(1), d.maxPerSide)
    .option('--max-pairs-per-instance <n>', 'rows kept per instance', intArg(1), d.maxPairsPerInstance)
    .option('--min-similarity-skip <x>', 'skip pairs whose action similarity is at least this (near duplicates)', fractionArg, d.minSimilaritySkip)
    .option('--seed <s>', 'seed of the SHA-256 rank sampling', d.seed)
    .option('--reasoning-keys <keys>', 'top-level argument keys ignored when comparing actions', listArg, [...d.reasoningKeys])
    .option('--skip-bad-rows', 'count and skip rows with missing required values instead of failing', false)
    .option('-q, --quiet', 'no progress and no counters table on stderr', false)
    .addOption(new Option('--workers <n>', 'decode threads (output is identical for any number)').argParser(intArg(1)).default(availableParallelism(), 'number of cores'))
    .option('-f, --force', 'overwrite existing output and stats files', false)
    .option('--partition <i/N>', 'only instances with uint64(SHA-256(instance_id)[0..8]) mod N = i; combine parts with `merge`', parsePartition)
    .addHelpText(
      'after',
      `
Examples:
  $ divergence-mine mine --parquet trajectories.parquet --out pairs.jsonl --stats stats.json
  $ divergence-mine mine --parquet 'data/*.parquet' --out pairs.parquet --seed 1
  $ divergence-mine mine rows.jsonl.gz --out - | head -n 1

Exit codes: 0 ok, 2 usage, 3 missing input, 4 not parquet, 5 corrupt input, 6 schema, 7 bad value,
8 output path, 130/143 interrupted. See README "Errors and exit codes".`,
    )
    .action(async (positional: string[], o: MineCliOptions) => {
      await runMine(positional, o);
    });
}

export async function runMine(positional: string[], o: MineCliOptions): Promise<void> {
  const inputs = [
    ...resolveInputs(o.parquet ?? [], 'parquet'),
    ...resolveInputs(o.jsonl ?? [], 'jsonl'),
    ...resolveInputs(positional, null),
  ];
  if (inputs.length === 0) throw new UserError('no input: give --parquet <path>, --jsonl <path> or input files', ExitCode.usage);
  outputFormat(o.out);
  if (o.out !== '-') checkOutputPath(o.out, o.force);
  if (o.stats) checkOutputPath(o.stats, o.force, 'stats');
  const options: MiningOptions = {
    maxPerSide: o.maxPerSide,
    maxPairsPerInstance: o.maxPairsPerInstance,
    minSimilaritySkip: o.minSimilaritySkip,
    seed: o.seed,
    reasoningKeys: o.reasoningKeys,
    skipBadRows: o.skipBadRows,
  };
  const progress = o.quiet ? silentProgress : new StderrProgress();
  const sink = openPublishedSink(o.out);
  let summary;
  try {
    summary = await minePairs({ inputs, options, workers: o.workers, progress, partition: o.partition ?? null }, (p) => sink.write(p.row));
    await sink.close();
  } catch (e) {
    sink.abort();
    if (e instanceof BrokenPipe) return;
    throw e;
  }
  for (const w of summary.warnings) process.stderr.write(`divergence-mine: warning: ${w}\n`);
  if (o.stats) {
    const run = { partition: o.partition ?? null, badRowsIndexPass: summary.badRowsIndexPass, fingerprint: fingerprintInputs(inputs) };
    writeJsonAtomic(o.stats, statsDocument(summary.counters, options, inputs, run));
  }
  if (!o.quiet) process.stderr.write(formatCounters(summary.counters));
}
