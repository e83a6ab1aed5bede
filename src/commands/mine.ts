// `divergence-mine mine`: options, output and the end-of-run report around the pipeline (mine.ts).
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatCounters, type Counters } from '../counters.js';
import { PUBLISHED_COUNTERS, comparePublished, isPublishedInput, publishedVerdict, usesDefaultOptions, type PublishedComparison, type RecognisePublished } from '../contract/published.js';
import { ExitCode, UserError } from '../errors.js';
import { minePairs, type MinedPair, type MineSummary } from '../mine.js';
import type { Engine } from '../read/protocol.js';
import { CONTRACT_VERSION, DEFAULT_OPTIONS, type MiningOptions } from '../options.js';
import { openSink, outputFormat, plainLayout, type OutputFormat, type OutputLayout } from '../output.js';
import { fingerprintInputs, parsePartition, type Partition } from '../partition.js';
import { StderrProgress, silentProgress } from '../progress.js';
import { resolveInputs, type InputFile } from '../read/inputs.js';
import { VERSION } from '../version.js';
import { CardStats, argvForCard, renderCard, splitCountsLine, type DataFilesEntry } from '../train/card.js';
import { FolderOutput, prepareFolder, type FolderResult, type Sharding } from '../train/outputs.js';
import { assignSplit, dataFilesPattern, groupKeyOf, parseByteSize, parseSplitSpecs, type SplitBy, type SplitSpec } from '../train/split.js';
import { makeToolsColumnCache, toTrlRow, type ArgumentsMode, type TrlTally } from '../train/trl.js';
import { windowRow } from '../train/window.js';
import { behaviorSequence } from '../shapes/behavior.js';
import { preferenceRows, behaviorFields, type RowPlan } from '../shapes/rows.js';
import { SftDeduper } from '../shapes/sft.js';
import { SCHEMAS, describeDetection, type Detection, type SchemaName, type SchemaOverrides } from '../sources/schema.js';
import type { PairRow } from '../types.js';
import { checkOutputPath, commitTemp, makeParentFolders, removeEmptyFolders, tempPathFor, trackTemp } from '../write/atomic.js';
import { BrokenPipe, JsonlSink } from '../write/jsonl.js';
import type { RowSink } from '../write/sink.js';

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

function byteSizeArg(v: string): number {
  try {
    return parseByteSize(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
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
  /** Training output: see src/train/*. */
  shape?: 'published' | 'trl' | 'sft';
  arguments?: ArgumentsMode;
  promptWindow?: number;
  split?: string[];
  splitBy?: SplitBy;
  shards?: number;
  shardBytes?: number;
  format?: OutputFormat;
  card?: string;
  engine: Engine;
  /** Other sources (sources/schema.ts) and shapes (shapes/*). */
  schema?: SchemaName;
  idColumn?: string;
  instanceColumn?: string;
  messagesColumn?: string;
  resolvedColumn?: string;
  continuation?: 'action' | 'trajectory';
  maxContinuationMessages?: number;
  unit?: 'pairs' | 'groups';
  behavior?: boolean;
}

/** Training-output settings recorded in the stats file (only those that differ from the contract's output). */
export interface TrainRunInfo {
  shape: 'published' | 'trl' | 'sft';
  arguments?: ArgumentsMode;
  promptWindow?: number;
  split?: { by: SplitBy; specs: SplitSpec[] } | null;
  outputs?: FolderResult | null;
  splitCounts?: ReturnType<CardStats['splitCounts']> | null;
  wrappedArguments?: number;
  /** Source and shape settings, recorded only when they differ from the contract's defaults (see sourceShapeStats). */
  sourceShape?: { options: Record<string, unknown>; extra: Record<string, unknown> };
}

/** The stats file: counters plus everything `merge` checks before combining partitions. */
export function statsDocument(
  counters: Counters,
  options: MiningOptions,
  inputs: InputFile[],
  run: { partition: Partition | null; badRowsIndexPass: number; fingerprint: string; shape?: string; train?: TrainRunInfo; published?: PublishedComparison | null },
) {
  const t = run.train;
  // Output-shaping options go into `options` (merge refuses parts whose options differ); a run
  // without them writes exactly the document it always did.
  const shapeOptions = {
    ...(t?.shape === 'trl' ? { arguments: t.arguments ?? 'object' } : {}),
    ...(t?.promptWindow !== undefined ? { prompt_window: t.promptWindow } : {}),
    ...(t?.split ? { split: t.split.specs.map((s) => `${s.name}=${s.fraction}`), split_by: t.split.by } : {}),
    ...(t?.sourceShape?.options ?? {}),
  };
  const extra = {
    ...(t?.splitCounts ? { splits: t.splitCounts } : {}),
    ...(t?.outputs ? { files: t.outputs.files.map((f) => ({ split: f.split, path: f.path, rows: f.rows, bytes: f.bytes })) } : {}),
    ...(t?.wrappedArguments ? { trl: { wrapped_arguments: t.wrappedArguments } } : {}),
    ...(t?.sourceShape?.extra ?? {}),
    ...(run.published ? { published_comparison: run.published } : {}),
  };
  return {
    tool: 'divergence-mine',
    tool_version: VERSION,
    contract_version: CONTRACT_VERSION,
    counters,
    partition: run.partition,
    row_level: { bad_rows_index_pass: run.badRowsIndexPass },
    input_fingerprint: run.fingerprint,
    shape: t?.shape ?? run.shape ?? 'published',
    options: {
      max_per_side: options.maxPerSide,
      max_pairs_per_instance: options.maxPairsPerInstance,
      min_similarity_skip: options.minSimilaritySkip,
      seed: options.seed,
      reasoning_keys: [...options.reasoningKeys],
      skip_bad_rows: options.skipBadRows,
      ...shapeOptions,
    },
    inputs: inputs.map((f) => ({ path: f.path, kind: f.kind, bytes: f.bytes })),
    ...extra,
  };
}

export function writeJsonAtomic(path: string, value: unknown): void {
  makeParentFolders(path);
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
      'Group trajectories by instance_id, pair resolved with failed attempts, walk both in lockstep on ' +
        'canonical action signatures and emit one preference pair at the first diverging assistant action ' +
        `(mining contract v${CONTRACT_VERSION}). Prints every filter's count when done.`,
    )
    .argument('[inputs...]', 'input files by extension (.parquet, .jsonl, .jsonl.gz), folders or globs')
    .option('--parquet <path>', 'parquet input: a file, a folder (every *.parquet below it, sorted) or a glob; repeatable', collect)
    .option('--jsonl <path>', 'JSONL input (.jsonl or .jsonl.gz, one row per line as `datasets` exports it); repeatable', collect)
    .requiredOption('-o, --out <path>', 'output: *.jsonl, *.parquet, or - for JSONL on stdout (a folder with --split / --shards)')
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
    .addOption(
      new Option(
        '--engine <engine>',
        'parquet reader: js (own streaming page reader, zstd via the optional zstd-napi addon or pure JS; falls back to wasm per row group for encodings it lacks), wasm (parquet-wasm, no native code) or duckdb (native, needs the optional @duckdb/node-api)',
      )
        .choices(['js', 'wasm', 'duckdb'])
        .default('js'),
    )
    .option('--partition <i/N>', 'only instances with uint64(SHA-256(instance_id)[0..8]) mod N = i; combine parts with `merge`', parsePartition)
    .optionsGroup('Input layout:')
    .addOption(
      new Option('--schema <schema>', 'input layout: openhands, open-swe-traces or text-actions (default: detected from the columns and the first row)').choices([
        ...SCHEMAS,
      ]),
    )
    .option('--id-column <name[,name]>', 'trajectory id column (several: values joined by ":")')
    .option('--instance-column <name>', 'instance column (grouping key)')
    .option('--messages-column <name>', 'messages column (a list of messages, or JSON text of one)')
    .option('--resolved-column <name>', 'label column (1/true resolved, 0/false failed, anything else unlabelled)')
    .optionsGroup('Training output:')
    .addOption(new Option('--shape <shape>', 'published (the contract), trl (TRL DPOTrainer) or sft (prompt/completion of the resolved side)').choices(['published', 'trl', 'sft']).default('published'))
    .addOption(
      new Option('--continuation <mode>', 'action: one message per side (the contract); trajectory: each side from the divergence to its end, with loss flags')
        .choices(['action', 'trajectory'])
        .default('action'),
    )
    .option('--max-continuation-messages <n>', 'with --continuation trajectory: keep whole turns, at most n messages per side (the first turn always)', intArg(1))
    .addOption(new Option('--unit <unit>', 'pairs, or groups: one row per prefix of 1..G turn groups (needs --continuation trajectory)').choices(['pairs', 'groups']).default('pairs'))
    .option('--behavior', 'add chosen_behavior_sequence / rejected_behavior_sequence (always on with --continuation trajectory)', false)
    .addOption(new Option('--arguments <mode>', 'trl shape: tool-call arguments as objects or JSON strings').choices(['object', 'string']).default('object'))
    .option('--prompt-window <n>', 'keep the system message, the first user message and the last n prompt messages', intArg(0))
    .option('--split <name=fraction>', 'held-out split by hash of the group key, e.g. dev=0.1; repeatable (--out is then a folder)', collect)
    .addOption(new Option('--split-by <key>', 'group key of --split').choices(['instance', 'repo']).default('instance'))
    .option('--shards <n>', 'write train as n shards balanced by bytes, an instance never spans shards (--out is then a folder)', intArg(1))
    .option('--shard-bytes <size>', 'target shard size instead of --shards, e.g. 500MB or 1GiB', byteSizeArg)
    .addOption(new Option('--format <format>', 'file type when --out is a folder').choices(['parquet', 'jsonl']))
    .option('--card <file.md>', 'write a Hugging Face dataset card (YAML front matter, funnel, schema, histograms, length audit)')
    .addHelpText(
      'after',
      `
Examples:
  $ divergence-mine mine --parquet trajectories.parquet --out pairs.jsonl --stats stats.json
  $ divergence-mine mine --parquet 'data/*.parquet' --out pairs.parquet --seed 1
  $ divergence-mine mine rows.jsonl.gz --out - | head -n 1
  $ divergence-mine mine --parquet trajectories.parquet --shape trl --prompt-window 40 \\
        --split dev=0.05 --shards 4 --out hub/data --card hub/README.md
  $ divergence-mine mine --jsonl open-swe-traces.jsonl --continuation trajectory --unit groups --out groups.jsonl
  $ divergence-mine mine --jsonl swe-smith.jsonl --schema text-actions --shape sft --out sft.jsonl

Exit codes: 0 ok, 2 usage, 3 missing input, 4 not parquet, 5 corrupt input, 6 schema, 7 bad value,
8 output path, 130/143 interrupted. See README "Errors and exit codes".

The rules (normalisation, keys, sampling, filters, counters): docs/mining-contract.md,
contract version ${CONTRACT_VERSION}; cite a rule as "docs/mining-contract.md §5.3".`,
    )
    .action(async (positional: string[], o: MineCliOptions) => {
      await runMine(positional, o);
    });
}

/** The training-output part of the command line, checked before any work starts. */
interface TrainPlan {
  layout: OutputLayout;
  promptWindow: number | undefined;
  specs: SplitSpec[];
  splitBy: SplitBy;
  /** Set when --out is a folder (--split, --shards or --shard-bytes). */
  folder: { dir: string; format: OutputFormat; sharding: Sharding } | null;
}

function trainPlan(o: MineCliOptions): TrainPlan {
  const shape = o.shape ?? 'published';
  let specs: SplitSpec[];
  try {
    specs = parseSplitSpecs(o.split ?? []);
  } catch (e) {
    throw new UserError((e as Error).message, ExitCode.usage);
  }
  if (o.shards !== undefined && o.shardBytes !== undefined) throw new UserError('give --shards or --shard-bytes, not both', ExitCode.usage);
  const sharding: Sharding = o.shards !== undefined ? { count: o.shards } : o.shardBytes !== undefined ? { bytes: o.shardBytes } : null;
  const toFolder = specs.length > 0 || sharding !== null;
  if (toFolder && o.partition)
    throw new UserError('--split and --shards need the whole run; mine without --partition (or split the merged output)', ExitCode.usage);
  if (o.card && o.partition) throw new UserError('--card describes a whole run; write it without --partition', ExitCode.usage);
  if (o.card && o.out === '-') throw new UserError('--card needs output files to describe; --out - writes to stdout', ExitCode.usage);
  const trajectory = o.continuation === 'trajectory';
  const groups = o.unit === 'groups';
  if (o.maxContinuationMessages !== undefined && !trajectory) throw new UserError('--max-continuation-messages needs --continuation trajectory', ExitCode.usage);
  if (groups && !trajectory) throw new UserError('--unit groups needs --continuation trajectory (groups are cut from the continuations)', ExitCode.usage);
  if (groups && shape !== 'published') throw new UserError(`--unit groups is a preference layout: use it with --shape published, not ${shape}`, ExitCode.usage);
  if (trajectory && shape === 'trl') throw new UserError('--continuation trajectory is not available with --shape trl yet; use --shape published or sft', ExitCode.usage);
  const beyondContractRow = shape === 'sft' || trajectory || Boolean(o.behavior);
  // The card and `merge` know only the contract's and the trl row layouts.
  if (beyondContractRow && o.card) throw new UserError('--card describes published and trl rows only; leave out --card with --shape sft, --continuation trajectory or --behavior', ExitCode.usage);
  if (beyondContractRow && o.partition) throw new UserError('merge does not combine --shape sft, --continuation trajectory or --behavior parts yet; mine without --partition', ExitCode.usage);
  let folder: TrainPlan['folder'] = null;
  if (toFolder) {
    if (o.out === '-') throw new UserError('--split and --shards write several files: give --out a folder, not -', ExitCode.usage);
    if (/\.(jsonl|parquet)$/i.test(o.out))
      throw new UserError(
        `--split and --shards write several files: --out names a folder (e.g. --out data), not ${o.out}; choose the file type with --format`,
        ExitCode.usage,
      );
    folder = { dir: o.out.replace(/[\\/]+$/, '') || o.out, format: o.format ?? 'parquet', sharding };
  } else {
    const f = outputFormat(o.out);
    if (o.format !== undefined && o.format !== f) throw new UserError(`--format ${o.format} does not match --out ${o.out}`, ExitCode.usage);
  }
  const behavior = Boolean(o.behavior) || trajectory;
  return {
    layout: {
      shape,
      arguments: o.arguments ?? 'object',
      windowed: o.promptWindow !== undefined && shape !== 'sft',
      // Only set when used: the default layout object stays exactly the contract's.
      ...(trajectory ? { continuation: true } : {}),
      ...(behavior ? { behavior: true } : {}),
      ...(groups ? { groups: true } : {}),
    },
    promptWindow: o.promptWindow,
    specs,
    splitBy: o.splitBy ?? 'instance',
    folder,
  };
}

/** data_files of the card: paths relative to the card's folder, with forward slashes (the Hub's view). */
function cardDataFiles(card: string, out: string, plan: TrainPlan, result: FolderResult | null): DataFilesEntry[] {
  const rel = (p: string) => relative(dirname(card), p).split(sep).join('/');
  if (!plan.folder || !result) return [{ split: 'train', path: rel(out) }];
  const dir = rel(plan.folder.dir);
  const ext = plan.folder.format;
  return ['train', ...plan.specs.map((s) => s.name)].map((split) => ({
    split,
    path: dataFilesPattern(split, split === 'train' ? result.trainShards : null, ext, dir === '' ? '' : dir),
  }));
}

function humanBytes(n: number): string {
  if (n < 1e3) return `${n} B`;
  if (n < 1e6) return `${(n / 1e3).toFixed(1)} kB`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e9).toFixed(2)} GB`;
}

/** `recognise` tells the published run's input (docs/mining-contract.md §7.3); tests inject their own. */
export async function runMine(positional: string[], o: MineCliOptions, recognise: RecognisePublished = isPublishedInput): Promise<void> {
  const inputs = [
    ...resolveInputs(o.parquet ?? [], 'parquet'),
    ...resolveInputs(o.jsonl ?? [], 'jsonl'),
    ...resolveInputs(positional, null),
  ];
  if (inputs.length === 0) throw new UserError('no input: give --parquet <path>, --jsonl <path> or input files', ExitCode.usage);
  const plan = trainPlan(o);
  const { layout } = plan;
  const splitNames = ['train', ...plan.specs.map((s) => s.name)];
  if (!plan.folder && o.out !== '-') checkOutputPath(o.out, o.force);
  // Like a folder --out, --stats and --card may name folders that do not exist yet (made at the end).
  if (o.stats) checkOutputPath(o.stats, o.force, 'stats', { createParents: true });
  if (o.card) checkOutputPath(o.card, o.force, 'card', { createParents: true });
  const options: MiningOptions = {
    maxPerSide: o.maxPerSide,
    maxPairsPerInstance: o.maxPairsPerInstance,
    minSimilaritySkip: o.minSimilaritySkip,
    seed: o.seed,
    reasoningKeys: o.reasoningKeys,
    skipBadRows: o.skipBadRows,
  };
  const progress = o.quiet ? silentProgress : new StderrProgress();

  let folderCreated: string | null = null;
  let folder: FolderOutput | null = null;
  let sink: RowSink<unknown> | null = null;
  if (plan.folder) {
    const spec = { ...plan.folder, layout, splits: splitNames, force: o.force };
    folderCreated = prepareFolder(spec).created;
    folder = new FolderOutput(spec);
  } else sink = openSink(o.out, layout);

  // Row by row: window, reshape, split, count for the card, write.
  const toolsCol = makeToolsColumnCache();
  const tally: TrlTally = { wrapped_arguments: 0 };
  const cardStats = new CardStats();
  cardStats.declareSplits(splitNames);
  const trl = layout.shape === 'trl';
  // The schema (for text-action behaviour labels) is known before the first pair.
  let detection: Detection | null = null;
  const rowPlan = (): RowPlan => ({
    continuation: Boolean(layout.continuation),
    groups: Boolean(layout.groups),
    behavior: Boolean(layout.behavior),
    labels: { textActions: detection?.schema === 'text-actions' },
  });
  const sftDedup = layout.shape === 'sft' ? new SftDeduper() : null;
  let groupRowCount = 0;
  // `card` is what the card statistics see: the written row, or for issue-7 rows (which --card
  // refuses) the pair row, which is enough for the split counts.
  const emit = async (out: unknown, card: Parameters<CardStats['add']>[0], row: PairRow): Promise<void> => {
    const split = plan.specs.length > 0 ? assignSplit(groupKeyOf(row, plan.splitBy), plan.specs) : 'train';
    cardStats.add(card, split);
    if (folder) await folder.write(split, out, row.instance_id);
    else await sink!.write(out);
  };
  const onPair = async (p: MinedPair): Promise<void> => {
    let row: PairRow & { prompt_messages_dropped?: number } = p.row;
    if (sftDedup) {
      // The resolved side only; --prompt-window shortens the prompt as in the other shapes.
      if (plan.promptWindow !== undefined) row = windowRow(row, plan.promptWindow);
      const completion = p.continuation?.chosen ?? p.row.chosen;
      const s = sftDedup.add({ ...row, chosen: completion });
      if (!s) return; // a repeat of (instance_id, prompt, completion)
      const out = layout.behavior ? { ...s, behavior_sequence: behaviorSequence(p.row.prompt, completion, rowPlan().labels) } : s;
      await emit(out, row, row);
      return;
    }
    if (plan.promptWindow !== undefined) row = windowRow(row, plan.promptWindow);
    if (trl) {
      const t = toTrlRow(row, { tools: null, toolsJson: toolsCol(p.tools), arguments: layout.arguments, tally });
      await emit(layout.behavior ? { ...t, ...behaviorFields(p.row.prompt, p.row.chosen, p.row.rejected, rowPlan()) } : t, t, row);
      return;
    }
    if (!layout.behavior && !layout.continuation) {
      await emit(row, row, row); // the contract's row, untouched
      return;
    }
    const rows = preferenceRows(row, p.row.prompt, p.continuation, rowPlan());
    if (layout.groups) groupRowCount += rows.length;
    for (const r of rows) await emit(r, row, row);
  };

  let summary: MineSummary;
  let result: FolderResult | null = null;
  try {
    const overrides: SchemaOverrides = {
      ...(o.schema !== undefined ? { schema: o.schema } : {}),
      ...(o.idColumn !== undefined ? { idColumn: o.idColumn } : {}),
      ...(o.instanceColumn !== undefined ? { instanceColumn: o.instanceColumn } : {}),
      ...(o.messagesColumn !== undefined ? { messagesColumn: o.messagesColumn } : {}),
      ...(o.resolvedColumn !== undefined ? { resolvedColumn: o.resolvedColumn } : {}),
    };
    const onSchema = (d: Detection) => {
      detection = d;
      if (!o.quiet) process.stderr.write(`divergence-mine: ${describeDetection(d)}\n`);
    };
    summary = await minePairs(
      {
        inputs,
        options,
        workers: o.workers,
        engine: o.engine,
        progress,
        partition: o.partition ?? null,
        withTools: trl,
        overrides,
        onSchema,
        continuation: layout.continuation ? 'trajectory' : 'action',
        // The contract's row to a JSONL file or stdout, with nothing that looks at each row here
        // (split, card, window, reshaping): serialised in the workers.
        ...(sink instanceof JsonlSink && layout.shape === 'published' && !layout.windowed && plainLayout(layout) && plan.specs.length === 0 && !o.card
          ? { jsonl: (bytes: Uint8Array) => (sink as JsonlSink).writeBytes(bytes) }
          : {}),
        ...(o.maxContinuationMessages !== undefined ? { maxContinuationMessages: o.maxContinuationMessages } : {}),
      },
      onPair,
    );
    if (folder) result = await folder.close();
    else await sink!.close();
  } catch (e) {
    sink?.abort();
    folder?.abort();
    if (folderCreated) removeEmptyFolders(plan.folder!.dir, folderCreated);
    if (e instanceof BrokenPipe) return;
    throw e;
  }
  for (const w of summary.warnings) process.stderr.write(`divergence-mine: warning: ${w}\n`);
  if (tally.wrapped_arguments > 0)
    process.stderr.write(
      `divergence-mine: warning: ${tally.wrapped_arguments} tool calls have arguments that are not a JSON object; ` +
        'written as {"malformed_arguments": "<raw text>"} (--arguments object)\n',
    );
  const splitCounts = plan.specs.length > 0 ? cardStats.splitCounts() : null;
  const train: TrainRunInfo = {
    shape: layout.shape,
    arguments: layout.arguments,
    ...(plan.promptWindow !== undefined ? { promptWindow: plan.promptWindow } : {}),
    split: plan.specs.length > 0 ? { by: plan.splitBy, specs: plan.specs } : null,
    outputs: result,
    splitCounts,
    wrappedArguments: tally.wrapped_arguments,
    sourceShape: sourceShapeStats(summary.detection, o, layout, { groupRows: groupRowCount, sft: sftDedup }),
  };
  // A partition holds only some instances: only a whole run compares with the published one.
  const published = o.partition ? null : comparePublished(summary.counters, { files: inputs, rows: summary.counters.trajectories_read }, usesDefaultOptions(options), recognise);
  if (o.stats) {
    const run = { partition: o.partition ?? null, badRowsIndexPass: summary.badRowsIndexPass, fingerprint: fingerprintInputs(inputs), train, published };
    writeJsonAtomic(o.stats, statsDocument(summary.counters, options, inputs, run));
  }
  if (o.card) {
    const text = renderCard({
      argv: argvForCard(['divergence-mine', ...process.argv.slice(2)], [...positional, ...(o.parquet ?? []), ...(o.jsonl ?? [])]),
      contractVersion: CONTRACT_VERSION,
      counters: summary.counters,
      stats: cardStats,
      dataFiles: cardDataFiles(o.card, o.out, plan, result),
      shape: layout.shape as 'published' | 'trl', // --card refuses sft (trainPlan)
      arguments: layout.arguments,
      promptWindow: plan.promptWindow ?? null,
      split: plan.specs.length > 0 ? { by: plan.splitBy, specs: plan.specs } : null,
      generator: `divergence-mine ${VERSION}`,
    });
    makeParentFolders(o.card);
    const tmp = tempPathFor(o.card);
    trackTemp(tmp);
    writeFileSync(tmp, text);
    commitTemp(tmp, o.card);
  }
  if (!o.quiet) {
    process.stderr.write(formatCounters(summary.counters, published ? PUBLISHED_COUNTERS : undefined));
    if (published) process.stderr.write(publishedVerdict(published));
    if (plan.specs.length > 0) process.stderr.write(splitCountsLine(cardStats, plan.splitBy) + '\n');
    if (result)
      for (const f of result.files) process.stderr.write(`  ${f.path}: ${f.rows.toLocaleString('en-US')} rows, ${humanBytes(f.bytes)}\n`);
  }
}

/** The upstream layout: a run on it without source or shape options writes exactly the stats it always did. */
function isUpstream(d: Detection): boolean {
  const m = d.mapping;
  return d.schema === 'openhands' && m.id === 'trajectory_id' && m.instance === 'instance_id' && m.messages === 'trajectory' && m.resolved === 'resolved';
}

/** Issue-7 options (in `options`, so merge compares them) and outputs (outside `counters`). */
function sourceShapeStats(d: Detection, o: MineCliOptions, layout: OutputLayout, out: { groupRows: number; sft: SftDeduper | null }): TrainRunInfo['sourceShape'] {
  const m = d.mapping;
  const options: Record<string, unknown> = {
    ...(!isUpstream(d)
      ? { schema: d.schema, columns: { id: m.id, instance: m.instance, messages: m.messages, resolved: m.resolved, tools: m.tools, repo: m.repo } }
      : {}),
    ...(layout.continuation ? { continuation: 'trajectory' } : {}),
    ...(o.maxContinuationMessages !== undefined ? { max_continuation_messages: o.maxContinuationMessages } : {}),
    ...(layout.groups ? { unit: 'groups' } : {}),
    ...(layout.behavior ? { behavior: true } : {}),
  };
  const extra: Record<string, unknown> = {
    ...(layout.groups ? { group_rows: out.groupRows } : {}),
    ...(out.sft ? { sft_rows: out.sft.emitted, sft_duplicates: out.sft.duplicates } : {}),
  };
  return Object.keys(options).length + Object.keys(extra).length > 0 ? { options, extra } : undefined;
}
