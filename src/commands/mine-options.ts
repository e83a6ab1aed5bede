// `divergence-mine mine`, the command line: every option, its parser, and the checks that run
// before any work starts. The result is a typed plan; running it is mine.ts.
import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import type { Engine } from '../engine/protocol.js';
import { CONTRACT_VERSION, DEFAULT_OPTIONS, type MiningOptions } from '../contract/options.js';
import { outputFormat, type OutputFormat, type OutputLayout } from '../dataset/file-output.js';
import type { InputFile } from '../io/inputs.js';
import { hasHubInputs, parseInputs, resolveRequest } from '../hub/inputs.js';
import type { HubSource } from '../hub/resolve.js';
import type { Sharding } from '../dataset/folder-output.js';
import { parseByteSize, parseSplitSpecs, type SplitBy, type SplitSpec } from '../dataset/split.js';
import type { ArgumentsMode } from '../shapes/trl.js';
import { SCHEMAS, SOURCE_NAMES, SOURCES, instancePattern, type SchemaName, type SchemaOverrides, type SourceName } from '../sources/schema.js';
import { checkOutputPath } from '../io/atomic.js';
import { neutralise, writeStderr } from '../io/terminal-text.js';
import { DEFAULT_TREE_OPTIONS, type TreeOptions } from '../pairing/tree.js';
import type { ExitStatusFilter } from '../pairing/exit-status.js';
import type { Env, PartitionRequest } from '../cluster/scheduler-env.js';
import { partitionArg, resolvePartitionOptions, type RunPartition } from './partition-options.js';

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

/** A value gap: above 0 (a gap of 0 is no preference) and at most 1. */
function gapArg(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError(`expected a number above 0 and at most 1, got "${v}"`);
  return n;
}

function statusListArg(v: string): string[] {
  const list = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (list.length === 0) throw new InvalidArgumentError(`expected a comma-separated list of exit statuses such as submit, got "${v}"`);
  return list;
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
  /** Set when --workers was not given: `workers` is then the number of cores, an upper bound (MineRequest.fitWorkers). */
  fitWorkers?: boolean;
  force: boolean;
  /** As given: i/N, or auto (resolved by mineSettings into MineSettings.partition). */
  partition?: PartitionRequest;
  /** Training output: see src/shapes/ and src/dataset/. */
  shape?: 'published' | 'trl' | 'sft' | 'kto';
  arguments?: ArgumentsMode;
  promptWindow?: number | 'auto';
  split?: string[];
  splitBy?: SplitBy;
  shards?: number;
  shardBytes?: number;
  format?: OutputFormat;
  card?: string;
  engine: Engine;
  /** Sources (sources/schema.ts) and shapes (shapes/*). */
  schema?: SchemaName;
  idColumn?: string;
  instanceColumn?: string;
  messagesColumn?: string;
  resolvedColumn?: string;
  source?: SourceName;
  instanceFromId?: string;
  pairWithin?: string[];
  continuation?: 'action' | 'trajectory';
  maxContinuationMessages?: number;
  unit?: 'pairs' | 'groups';
  behavior?: boolean;
  /** Token counts (src/tokens/). */
  tokenizer?: string;
  template?: string;
  maxLength?: number;
  /** Pairing beyond the contract's walk (src/pairing/, docs/tree-pairing.md). */
  pairing?: 'contract' | 'tree';
  minValueGap?: number;
  minSupport?: number;
  maxPairsPerNode?: number;
  rejectedExitStatus?: string[];
  excludeExitStatus?: string[];
  ktoThreshold?: number;
  /** Hub datasets (src/hub/): the config and split of a bare OWNER/NAME. */
  hubConfig?: string;
  hubSplit?: string;
}

/** `--prompt-window`: a number of messages, or `auto` (fit --max-length by tokens). */
function promptWindowArg(v: string): number | 'auto' {
  return v.trim() === 'auto' ? 'auto' : intArg(0)(v);
}

/** The `mine` command with all its options (the action is set by the caller). */
export function mineCommand(program: Command): Command {
  const d = DEFAULT_OPTIONS;
  return program
    .command('mine')
    .summary('mine divergence-point DPO pairs from trajectories')
    .description(
      'Group trajectories by instance_id, pair resolved with failed attempts, walk both in lockstep on ' +
        'canonical action signatures and emit one preference pair at the first diverging assistant action ' +
        `(mining contract v${CONTRACT_VERSION}). Prints every filter's count when done.`,
    )
    .argument('[inputs...]', 'input files by extension (.parquet, .jsonl, .jsonl.gz), folders, globs, or Hub datasets (OWNER/NAME, hf://datasets/...)')
    .option('--parquet <path>', 'parquet input: a file, a folder (every *.parquet below it, sorted), a glob, or a Hub dataset OWNER/NAME or hf://datasets/OWNER/NAME[@REV][/PATH-OR-GLOB]; repeatable', collect)
    .option('--jsonl <path>', 'JSONL input (.jsonl or .jsonl.gz, one row per line as `datasets` exports it), local or on the Hub; repeatable', collect)
    .requiredOption('-o, --out <path>', 'output: *.jsonl, *.parquet, or - for JSONL on stdout (a folder with --split / --shards)')
    .option('--stats <file>', 'also write the counters, options and inputs as JSON')
    .option('--max-per-side <n>', 'trajectories kept per instance and side, by SHA-256 rank', intArg(1), d.maxPerSide)
    .option('--max-pairs-per-instance <n>', 'rows kept per instance', intArg(1), d.maxPairsPerInstance)
    .option('--min-similarity-skip <x>', 'skip pairs whose action similarity is at least this (near duplicates)', fractionArg, d.minSimilaritySkip)
    .option('--seed <s>', 'seed of the SHA-256 rank sampling', d.seed)
    .option('--reasoning-keys <keys>', 'top-level argument keys ignored when comparing actions', listArg, [...d.reasoningKeys])
    .option('--skip-bad-rows', 'count and skip rows with missing required values instead of failing', false)
    .option('-q, --quiet', 'no progress and no counters table on stderr', false)
    .addOption(new Option('--workers <n>', 'decode threads (output is identical for any number)').argParser(intArg(1)).default(availableParallelism(), 'number of cores, or 1 for inputs under 16 MiB in all'))
    .option('-f, --force', 'overwrite existing output and stats files', false)
    .addOption(
      new Option(
        '--engine <engine>',
        'parquet reader: js (own streaming page reader, zstd via the optional zstd-napi addon or pure JS; falls back to wasm per row group for encodings it lacks), wasm (parquet-wasm) or duckdb (native, needs the optional @duckdb/node-api); before wasm or duckdb reads a row group, our reader checks its page headers and levels',
      )
        .choices(['js', 'wasm', 'duckdb'])
        .default('js'),
    )
    .option(
      '--partition <i/N|auto|auto/N>',
      'only instances with uint64(SHA-256(instance_id)[0..8]) mod N = i; combine parts with `merge`. auto: i and N from the scheduler (Slurm job array, AWS Batch array job), auto/N: i from the scheduler and N given (Kubernetes Indexed Job); --out and --stats may then hold {i} and {N}',
      partitionArg,
    )
    .optionsGroup('Hub datasets (OWNER/NAME, hf://datasets/OWNER/NAME[@REV][/PATH-OR-GLOB]):')
    .option('--hub-config <name>', "the config of a bare dataset name (default: the dataset's default config, as `datasets` picks it)")
    .option('--hub-split <name>', 'the split of a bare dataset name (default: train); not the output --split')
    .optionsGroup('Pairing (docs/tree-pairing.md):')
    .addOption(
      new Option('--pairing <pairing>', "contract: the contract's sampled lockstep walk; tree: a prefix tree over every labelled attempt of an instance, pairs between branches whose values (resolved share) differ")
        .choices(['contract', 'tree'])
        .default('contract'),
    )
    .option('--min-value-gap <x>', `tree: least difference of the two branches' values (default ${DEFAULT_TREE_OPTIONS.minValueGap})`, gapArg)
    .option('--min-support <n>', `tree: least attempts through each branch (default ${DEFAULT_TREE_OPTIONS.minSupport})`, intArg(1))
    .option('--max-pairs-per-node <n>', `tree: rows kept per branch node (default ${DEFAULT_TREE_OPTIONS.maxPairsPerNode}); --max-pairs-per-instance still applies`, intArg(1))
    .option('--rejected-exit-status <list>', 'only failed attempts with one of these exit_status values take part, e.g. submit (attempts that ran out of iterations or errored are left out)', statusListArg)
    .option('--exclude-exit-status <list>', 'leave out attempts (either label) with one of these exit_status values, e.g. error', statusListArg)
    .option('--kto-threshold <x>', 'shape kto with --pairing tree: a branch is desirable when its value is above this (default 0.5)', fractionArg)
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
    .addOption(
      new Option(
        '--source <name>',
        `a known corpus, instead of detection: ${SOURCE_NAMES.map((n) => `${n} (${SOURCES[n].corpus})`).join(', ')}; the column options above still win`,
      ).choices([...SOURCE_NAMES]),
    )
    .option('--instance-from-id <regex>', 'the instance is the first group of this regular expression on the trajectory id (coderforge: ^(.+)_run\\d+$)')
    .option('--pair-within <col[,col]>', 'pair only attempts that also share these columns (a.b reaches into a struct), e.g. a scaffold or model column', listArg)
    .optionsGroup('Training output:')
    .addOption(
      new Option('--shape <shape>', 'published (the contract), trl (TRL DPOTrainer), sft (prompt/completion of the resolved side) or kto (TRL KTOTrainer: prompt/completion/label rows)')
        .choices(['published', 'trl', 'sft', 'kto'])
        .default('published'),
    )
    .addOption(
      new Option('--continuation <mode>', 'action: one message per side (the contract); trajectory: each side from the divergence to its end, with loss flags')
        .choices(['action', 'trajectory'])
        .default('action'),
    )
    .option('--max-continuation-messages <n>', 'with --continuation trajectory: keep whole turns, at most n messages per side (the first turn always)', intArg(1))
    .addOption(new Option('--unit <unit>', 'pairs, or groups: one row per prefix of 1..G turn groups (needs --continuation trajectory)').choices(['pairs', 'groups']).default('pairs'))
    .option('--behavior', 'add chosen_behavior_sequence / rejected_behavior_sequence (always on with --continuation trajectory)', false)
    .addOption(new Option('--arguments <mode>', 'trl shape: tool-call arguments as objects or JSON strings').choices(['object', 'string']).default('object'))
    .option('--prompt-window <n|auto>', 'keep the system message, the first user message and the last n prompt messages; auto (with --max-length): drop the oldest messages until the row fits', promptWindowArg)
    .option('--split <name=fraction>', 'held-out split by hash of the group key, e.g. dev=0.1; repeatable (--out is then a folder)', collect)
    .addOption(new Option('--split-by <key>', 'group key of --split').choices(['instance', 'repo']).default('instance'))
    .option('--shards <n>', 'write train as n shards balanced by bytes, an instance never spans shards (--out is then a folder)', intArg(1))
    .option('--shard-bytes <size>', 'target shard size instead of --shards, e.g. 500MB or 1GiB', byteSizeArg)
    .addOption(new Option('--format <format>', 'file type when --out is a folder').choices(['parquet', 'jsonl']))
    .option('--card <file.md>', 'write a Hugging Face dataset card (YAML front matter, funnel, schema, histograms, length audit)')
    .optionsGroup('Token counts (trl shape):')
    .option('--tokenizer <path|qwen3>', 'count prompt/chosen/rejected tokens as TRL does: a tokenizer.json (or its folder), or qwen3 (bundled)')
    .option('--template <file>', 'chat template to render with: a .jinja file or tokenizer_config.json (default: the tokenizer\'s own, else the built-in qwen3-coder-style)')
    .option('--max-length <n>', 'keep rows whose prompt + longer completion fit in n tokens (TRL DPOConfig.max_length); see --prompt-window auto', intArg(1))
    .addHelpText(
      'after',
      `
Examples:
  $ divergence-mine mine --parquet nebius/SWE-rebench-openhands-trajectories --out pairs.jsonl
        # downloads trajectories.parquet (2.08 GB) once into the Hugging Face cache (HF_HUB_CACHE,
        # else ~/.cache/huggingface/hub), shared with datasets and huggingface-cli
  $ divergence-mine mine --parquet hf://datasets/nebius/SWE-rebench-openhands-trajectories@REV/trajectories.parquet --out pairs.jsonl
  $ HF_HUB_OFFLINE=1 divergence-mine mine --parquet nebius/SWE-rebench-openhands-trajectories --out pairs.jsonl   # from the cache, no request
  $ divergence-mine mine --parquet trajectories.parquet --out pairs.jsonl --stats stats.json
  $ divergence-mine mine --parquet 'data/*.parquet' --out pairs.parquet --seed 1
  $ divergence-mine mine rows.jsonl.gz --out - | head -n 1
  $ divergence-mine mine --parquet trajectories.parquet --shape trl --prompt-window 40 \\
        --split dev=0.05 --shards 4 --out hub/data --card hub/README.md
  $ divergence-mine mine --jsonl open-swe-traces.jsonl --continuation trajectory --unit groups --out groups.jsonl
  $ divergence-mine mine --jsonl swe-smith.jsonl --schema text-actions --shape sft --out sft.jsonl
  $ divergence-mine mine --parquet trajectories.parquet --shape trl --tokenizer qwen3 \\
        --max-length 32768 --prompt-window auto --out pairs.jsonl --card README.md
  $ divergence-mine mine --parquet trajectories.parquet --pairing tree --rejected-exit-status submit --out tree.jsonl
  $ divergence-mine mine --parquet trajectories.parquet --pairing tree --shape kto --out kto.parquet
  $ divergence-mine mine --parquet 'SWE-agent-trajectories/data/*.parquet' --out pairs.jsonl   # detected: swe-agent
  $ divergence-mine mine --parquet open-swe-traces/ --pair-within metadata.teacher_model.name --out pairs.jsonl
  $ mkdir -p parts && sbatch --array=0-7 --wrap 'divergence-mine mine --parquet t.parquet --partition auto \\
        --out parts/part-{i}-of-{N}.jsonl --stats parts/part-{i}-of-{N}.stats.json'   # Slurm: 8 tasks, one command line
  $ divergence-mine mine --parquet t.parquet --partition auto/8 --out parts/part-{i}.jsonl   # a pod of a Kubernetes Indexed Job of 8
  $ divergence-mine merge parts/ --out pairs.jsonl   # after all tasks; README "On a cluster"

Hub: HF_TOKEN (else the token of \`huggingface-cli login\`) is sent to HF_ENDPOINT's host only;
HF_HUB_OFFLINE=1 runs from the cache without any request.

Exit codes: 0 ok, 2 usage, 3 missing input or a folder that cannot be written (the output's, TMPDIR),
4 not parquet, 5 corrupt input, 6 schema, 7 bad value, 8 output file exists, 10 Hub unreachable or
download failed, 130/143 interrupted. See README "Errors and exit codes".

The rules (normalisation, keys, sampling, filters, counters): docs/mining-contract.md,
contract version ${CONTRACT_VERSION}; cite a rule as "docs/mining-contract.md §5.3".`,
    );
}

/** A checked command line: the inputs, the contract's options, the output plan and the schema overrides. */
export interface MineSettings {
  inputs: InputFile[];
  /** The Hub datasets among the inputs (empty for local files only). */
  hubSources: HubSource[];
  plan: TrainPlan;
  options: MiningOptions;
  overrides: SchemaOverrides;
  /** `--pairing tree` and the exit-status filters (null: the contract's walk, no filter). */
  pairing: PairingPlan;
  /** `--partition`, resolved (auto: from the scheduler's environment); null for a whole run. */
  partition: RunPartition | null;
  /** The options with `{i}` and `{N}` of --out and --stats replaced: the paths this run writes. */
  cli: MineCliOptions;
  /** Where --partition auto found the partition, and warnings about it, for stderr. */
  partitionNote: string | null;
  partitionWarnings: string[];
}

export interface PairingPlan {
  tree: TreeOptions | null;
  exitStatus: ExitStatusFilter | null;
  /** `--shape kto` under the tree pairing. */
  ktoThreshold: number;
}

/** The pairing options, checked: tree options need --pairing tree, --kto-threshold needs --shape kto. */
function pairingPlan(o: MineCliOptions): PairingPlan {
  const tree = o.pairing === 'tree';
  const treeOnly = (['minValueGap', 'minSupport', 'maxPairsPerNode'] as const).filter((k) => o[k] !== undefined);
  if (!tree && treeOnly.length > 0) {
    const flag = { minValueGap: '--min-value-gap', minSupport: '--min-support', maxPairsPerNode: '--max-pairs-per-node' }[treeOnly[0]!];
    throw new UserError(`${flag} applies to the tree pairing: add --pairing tree`, ExitCode.usage);
  }
  if (o.ktoThreshold !== undefined && o.shape !== 'kto') throw new UserError('--kto-threshold applies to --shape kto', ExitCode.usage);
  if (tree && o.continuation === 'trajectory') throw new UserError('--continuation trajectory is not available with --pairing tree; use --continuation action', ExitCode.usage);
  const exitStatus = o.rejectedExitStatus || o.excludeExitStatus ? { rejected: o.rejectedExitStatus ?? null, exclude: o.excludeExitStatus ?? null } : null;
  return {
    tree: tree
      ? {
          minValueGap: o.minValueGap ?? DEFAULT_TREE_OPTIONS.minValueGap,
          minSupport: o.minSupport ?? DEFAULT_TREE_OPTIONS.minSupport,
          maxPairsPerNode: o.maxPairsPerNode ?? DEFAULT_TREE_OPTIONS.maxPairsPerNode,
          minSimilaritySkip: o.minSimilaritySkip,
          maxPairsPerInstance: o.maxPairsPerInstance,
        }
      : null,
    exitStatus,
    ktoThreshold: o.ktoThreshold ?? 0.5,
  };
}

/**
 * Resolve --partition and the output paths' placeholders, the inputs, and check every option and
 * output path, in this order, before any work starts; Hub datasets are fetched last, once everything
 * else is known to be right. `env` is where --partition auto looks.
 */
export async function mineSettings(positional: string[], given: MineCliOptions, env: Env = process.env): Promise<MineSettings> {
  const { cli: o, partition, note, warnings } = resolvePartitionOptions(given, env);
  const request = parseInputs([
    { args: o.parquet ?? [], forced: 'parquet' },
    { args: o.jsonl ?? [], forced: 'jsonl' },
    { args: positional, forced: null },
  ]);
  if (request.items.length === 0) throw new UserError('no input: give --parquet <path>, --jsonl <path> or input files', ExitCode.usage);
  if ((o.hubConfig !== undefined || o.hubSplit !== undefined) && !hasHubInputs(request))
    throw new UserError('--hub-config and --hub-split choose the files of a Hub dataset: give OWNER/NAME or hf://datasets/OWNER/NAME', ExitCode.usage);
  const plan = trainPlan(o);
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
  const overrides: SchemaOverrides = {
    ...(o.schema !== undefined ? { schema: o.schema } : {}),
    ...(o.idColumn !== undefined ? { idColumn: o.idColumn } : {}),
    ...(o.instanceColumn !== undefined ? { instanceColumn: o.instanceColumn } : {}),
    ...(o.messagesColumn !== undefined ? { messagesColumn: o.messagesColumn } : {}),
    ...(o.resolvedColumn !== undefined ? { resolvedColumn: o.resolvedColumn } : {}),
    ...(o.source !== undefined ? { source: o.source } : {}),
    ...(o.instanceFromId !== undefined ? { instanceFromId: o.instanceFromId } : {}),
    ...(o.pairWithin !== undefined ? { pairWithin: o.pairWithin } : {}),
  };
  if (o.instanceFromId !== undefined) instancePattern(o.instanceFromId);
  if (o.pairWithin !== undefined && o.pairWithin.length === 0) throw new UserError('--pair-within: no column named', ExitCode.usage);
  const pairing = pairingPlan(o);
  // Notes of Hub inputs name datasets and files: data, neutralised for the terminal.
  if (!o.quiet) for (const n of request.notes) writeStderr(`divergence-mine: ${neutralise(n)}\n`);
  const { inputs, sources } = await resolveRequest(request, { config: o.hubConfig ?? null, split: o.hubSplit ?? null, quiet: o.quiet });
  return { inputs, hubSources: sources, plan, options, overrides, pairing, partition, cli: o, partitionNote: note, partitionWarnings: warnings };
}

/** The training-output part of the command line, checked before any work starts. */
export interface TrainPlan {
  layout: OutputLayout;
  /** A number of messages (shapes/window.ts), or `auto` (by tokens, tokens/fit.ts). */
  promptWindow: number | 'auto' | undefined;
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
  if (trajectory && shape === 'kto') throw new UserError('--continuation trajectory is not available with --shape kto; KTO rows hold the action at the divergence', ExitCode.usage);
  if (shape === 'kto' && o.card) throw new UserError('--card describes published and trl rows only; leave out --card with --shape kto', ExitCode.usage);
  const beyondContractRow = shape === 'sft' || trajectory || Boolean(o.behavior);
  // The card and `merge` know only the contract's and the trl row layouts.
  if (beyondContractRow && o.card) throw new UserError('--card describes published and trl rows only; leave out --card with --shape sft, --continuation trajectory or --behavior', ExitCode.usage);
  if (beyondContractRow && o.partition) throw new UserError('merge does not combine --shape sft, --continuation trajectory or --behavior parts yet; mine without --partition', ExitCode.usage);
  if (o.tokenizer !== undefined && shape !== 'trl') throw new UserError(`--tokenizer counts tokens of trl rows: add --shape trl (not ${shape})`, ExitCode.usage);
  if (o.tokenizer !== undefined && o.partition) throw new UserError('merge does not combine token-counted parts yet; mine with --tokenizer without --partition', ExitCode.usage);
  if (o.template !== undefined && o.tokenizer === undefined) throw new UserError('--template chooses the chat template of --tokenizer; give --tokenizer too', ExitCode.usage);
  if (o.maxLength !== undefined && o.tokenizer === undefined) throw new UserError('--max-length counts tokens: give --tokenizer (e.g. --tokenizer qwen3)', ExitCode.usage);
  if (o.promptWindow === 'auto' && o.maxLength === undefined) throw new UserError('--prompt-window auto fits rows into --max-length: give --max-length N', ExitCode.usage);
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
      ...(o.pairing === 'tree' ? { tree: true } : {}),
      // Only set when used: the default layout object stays exactly the contract's.
      ...(trajectory ? { continuation: true } : {}),
      ...(behavior ? { behavior: true } : {}),
      ...(groups ? { groups: true } : {}),
      ...(o.tokenizer !== undefined ? { tokens: true } : {}),
    },
    promptWindow: o.promptWindow,
    specs,
    splitBy: o.splitBy ?? 'instance',
    folder,
  };
}
