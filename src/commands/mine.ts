// `divergence-mine mine`: the run around the pipeline (engine/mine-pairs.ts), its output and the
// end-of-run report; the options and their checks are mine-options.ts.
import { dirname, relative, sep } from 'node:path';
import type { Command } from 'commander';
import { formatCounters, type Counters } from '../contract/counters.js';
import { minePairs, type MinedPair, type MineSummary } from '../engine/mine-pairs.js';
import { CONTRACT_VERSION, type MiningOptions } from '../contract/options.js';
import { openSink, outputFormat, plainLayout, type OutputFormat, type OutputLayout } from '../dataset/file-output.js';
import { fingerprintInputs, type Partition } from '../engine/partition.js';
import { StderrProgress, humanBytes, silentProgress } from '../io/progress.js';
import type { InputFile } from '../io/inputs.js';
import { fallbackLine, type EngineFallback } from '../engine/fallback.js';
import { pureJsAdvice, type PureJsDecoder } from '../parquet/inflate.js';
import { mark } from '../io/timeline.js';
import { PUBLISHED_COUNTERS, comparePublished, isPublishedInput, publishedVerdict, usesDefaultOptions, type PublishedComparison, type RecognisePublished } from '../contract/published.js';
import { VERSION } from '../version.js';
import { CardStats, argvForCard, renderCard, splitCountsLine, type DataFilesEntry } from '../dataset/card.js';
import { FolderOutput, prepareFolder, type FolderResult } from '../dataset/folder-output.js';
import { assignSplit, dataFilesPattern, groupKeyOf, type SplitBy, type SplitSpec } from '../dataset/split.js';
import { makeToolsColumnCache, toTrlRow, type ArgumentsMode, type TrlRow, type TrlTally } from '../shapes/trl.js';
import { windowRow } from '../shapes/window.js';
import { behaviorSequence } from '../shapes/behavior.js';
import { preferenceRows, behaviorFields, type RowPlan } from '../shapes/rows.js';
import { SftDeduper } from '../shapes/sft.js';
import { describeDetection, type Detection } from '../sources/schema.js';
import { TEXT_ACTION_SCHEMES, signatureSchemeOf } from '../sources/text-actions.js';
import type { PairRow } from '../types.js';
import { commitHeld, holdCommits, keepMadeFolders, releaseHeld, removeEmptyFolders, writeFileAtomic } from '../io/atomic.js';
import { BrokenPipe, JsonlSink } from '../io/jsonl-writer.js';
import { neutralise, writeStderr } from '../io/terminal-text.js';
import type { RowSink } from '../io/sink.js';
import { mineCommand, mineSettings, type MineCliOptions, type TrainPlan } from './mine-options.js';
import type { PartitionSource } from './partition-options.js';
import type { MineTokens, WithTokens } from '../tokens/mine-tokens.js';
import { OrderedQueue } from '../tokens/ordered.js';
import { KtoDeduper, ktoRows } from '../shapes/kto.js';
import { formatExitStatus, formatTreeCounters, pairingStats } from './mine-pairing.js';
import { formatCount } from '../count-text.js';

/** Training-output settings recorded in the stats file (only those that differ from the contract's output). */
export interface TrainRunInfo {
  shape: 'published' | 'trl' | 'sft' | 'kto';
  arguments?: ArgumentsMode;
  promptWindow?: number | 'auto';
  split?: { by: SplitBy; specs: SplitSpec[] } | null;
  outputs?: FolderResult | null;
  splitCounts?: ReturnType<CardStats['splitCounts']> | null;
  wrappedArguments?: number;
  /** Numbers in argument objects Python `datasets` may read as other numbers from this output's format. */
  pythonNumbers?: number;
  /** `--tokenizer`: the stats file's `tokens` object (tokens/mine-tokens.ts). */
  tokens?: ReturnType<MineTokens['toJSON']> | null;
  /** Source and shape settings, recorded only when they differ from the contract's defaults (see sourceShapeStats). */
  sourceShape?: { options: Record<string, unknown>; extra: Record<string, unknown> };
  /** `--pairing tree`, the exit-status filters and kto rows (mine-pairing.ts), recorded only when used. */
  pairing?: { options: Record<string, unknown>; extra: Record<string, unknown> };
}

/** The stats file: counters plus everything `merge` checks before combining partitions. */
export function statsDocument(
  counters: Counters,
  options: MiningOptions,
  inputs: InputFile[],
  run: {
    partition: (Partition & { source?: PartitionSource }) | null;
    badRowsIndexPass: number;
    fingerprint: string;
    shape?: string;
    train?: TrainRunInfo;
    engineFallback?: EngineFallback;
    pureJsDecoders?: PureJsDecoder[];
    published?: PublishedComparison | null;
  },
) {
  const t = run.train;
  // Output-shaping options go into `options` (merge refuses parts whose options differ); a run
  // without them writes exactly the document it always did.
  const shapeOptions = {
    ...(t?.shape === 'trl' ? { arguments: t.arguments ?? 'object' } : {}),
    ...(t?.promptWindow !== undefined ? { prompt_window: t.promptWindow } : {}),
    ...(t?.split ? { split: t.split.specs.map((s) => `${s.name}=${s.fraction}`), split_by: t.split.by } : {}),
    ...(t?.sourceShape?.options ?? {}),
    ...(t?.tokens ? { tokenizer: t.tokens.tokenizer, template: t.tokens.template, max_length: t.tokens.max_length } : {}),
    ...(t?.pairing?.options ?? {}),
  };
  const extra = {
    ...(t?.splitCounts ? { splits: t.splitCounts } : {}),
    ...(t?.outputs ? { files: t.outputs.files.map((f) => ({ split: f.split, path: f.path, rows: f.rows, bytes: f.bytes })) } : {}),
    ...(t?.wrappedArguments || t?.pythonNumbers ? { trl: { ...(t.wrappedArguments ? { wrapped_arguments: t.wrappedArguments } : {}), ...(t.pythonNumbers ? { numbers_python_may_change: t.pythonNumbers } : {}) } } : {}),
    ...(t?.sourceShape?.extra ?? {}),
    ...(t?.tokens ? { tokens: t.tokens } : {}),
    ...(t?.pairing?.extra ?? {}),
    ...(run.published ? { published_comparison: run.published } : {}),
  };
  return {
    tool: 'divergence-mine',
    tool_version: VERSION,
    contract_version: CONTRACT_VERSION,
    counters,
    partition: run.partition ? { index: run.partition.index, count: run.partition.count } : null,
    // Where the partition came from (i/N given, or which scheduler's variables): not compared by merge.
    ...(run.partition?.source ? { partition_source: run.partition.source } : {}),
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
    // A Hub file also records its repo, the revision asked, the commit read and its path and etag.
    inputs: inputs.map((f) => ({ path: f.path, kind: f.kind, bytes: f.bytes, ...(f.source ? { hub: f.source } : {}) })),
    // Only when some row group fell back: other runs write the document they always did.
    ...(run.engineFallback && run.engineFallback.row_groups > 0 ? { engine_fallback: run.engineFallback } : {}),
    // Only when a pure-JS decoder stood in for a native one (slower, same bytes).
    ...(run.pureJsDecoders && run.pureJsDecoders.length > 0 ? { pure_js_decoders: run.pureJsDecoders } : {}),
    ...extra,
  };
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
}

export function registerMine(program: Command): void {
  mineCommand(program)
    .action(async (positional: string[], o: MineCliOptions, cmd: Command) => {
      // No --workers: the number of cores, and one for a small input (engine/mine-pairs.ts).
      await runMine(positional, { ...o, fitWorkers: cmd.getOptionValueSource('workers') === 'default' });
    });
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

/**
 * `--tokenizer`'s counter. The tokenizer and template libraries (about 50 ms of module loading) load
 * only for a run that counts tokens.
 */
async function tokenCounts(tokenizer: string, o: MineCliOptions, plan: TrainPlan): Promise<MineTokens> {
  const [{ MineTokens }, { CountPool }, { BUILTIN_TEMPLATE_NAME }, { bundledWithBuiltin, tokenSetup }] = await Promise.all([
    import('../tokens/mine-tokens.js'),
    import('../tokens/count-pool.js'),
    import('../tokens/builtin-template.js'),
    import('./token-options.js'),
  ]);
  const tokenOptions = { tokenizer, maxLength: o.maxLength ?? null, window: plan.promptWindow === 'auto' };
  if (bundledWithBuiltin(tokenizer, o.template))
    return new MineTokens(null, { ...tokenOptions, template: BUILTIN_TEMPLATE_NAME }, new CountPool(tokenizer, Math.max(1, Math.min(2, o.workers))));
  const setup = tokenSetup(tokenizer, o.template);
  return new MineTokens(setup.rows, { ...tokenOptions, template: setup.templateName });
}

/** `recognise` tells the published run's input (docs/mining-contract.md §7.3); tests inject their own. */
export async function runMine(positional: string[], given: MineCliOptions, recognise: RecognisePublished = isPublishedInput): Promise<void> {
  try {
    await mine(positional, given, recognise);
  } finally {
    releaseHeld(); // committed already, or failed: nothing held outlives the run
  }
}

async function mine(positional: string[], given: MineCliOptions, recognise: RecognisePublished): Promise<void> {
  mark('mine: command parsed');
  const settings = await mineSettings(positional, given);
  mark('mine: options and inputs checked');
  // From here on the options name the paths this run writes ({i} and {N} replaced).
  const { inputs, hubSources, plan, options, overrides, pairing, partition, cli: o } = settings;
  for (const w of settings.partitionWarnings) writeStderr(`divergence-mine: warning: ${neutralise(w)}\n`);
  if (settings.partitionNote && !o.quiet) writeStderr(`divergence-mine: ${neutralise(settings.partitionNote)}\n`);
  const { layout } = plan;
  const splitNames = ['train', ...plan.specs.map((s) => s.name)];
  const progress = o.quiet ? silentProgress : new StderrProgress();
  // --tokenizer: loaded before any output is opened, so a bad tokenizer or template fails first.
  // The bundled tokenizer with the built-in template counts in worker threads beside the decode
  // workers; any other tokenizer or template counts on this thread.
  const tokens = o.tokenizer ? await tokenCounts(o.tokenizer, o, plan) : null;
  const tokenQueue = tokens ? new OrderedQueue<WithTokens<TrlRow> | null>() : null;

  // Every output (pairs, split files, stats, card) is committed at the end, together: a run that
  // fails or dies before then leaves none of them, not the first few.
  holdCommits();
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
  // Argument objects reach Python as typed values: count the numbers its loaders may change (contract v3 §11).
  const format: OutputFormat = plan.folder ? plan.folder.format : outputFormat(o.out);
  const tally: TrlTally = { wrapped_arguments: 0, ...(layout.arguments !== 'string' ? { python_numbers: { jsonl: 0, parquet: 0 } } : {}) };
  const cardStats = new CardStats();
  cardStats.declareSplits(splitNames);
  const trl = layout.shape === 'trl';
  const messageWindow = typeof plan.promptWindow === 'number' ? plan.promptWindow : undefined;
  // The schema (for text-action behaviour labels) is known before the first pair.
  let detection: Detection | null = null;
  const rowPlan = (): RowPlan => ({
    continuation: Boolean(layout.continuation),
    groups: Boolean(layout.groups),
    behavior: Boolean(layout.behavior),
    labels: textActionLabels(detection),
  });
  const sftDedup = layout.shape === 'sft' ? new SftDeduper() : null;
  const ktoDedup = layout.shape === 'kto' ? new KtoDeduper() : null;
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
    if (ktoDedup) {
      if (messageWindow !== undefined) row = windowRow(row, messageWindow);
      const sides = ktoRows(row, p.tree, { arguments: layout.arguments, toolsJson: toolsCol(p.tools), threshold: pairing.ktoThreshold, tally });
      for (let k = 0; k < 2; k++) {
        const r = ktoDedup.add(sides[k]!, p.branches?.[k]);
        if (r) await emit(r, row, row);
      }
      return;
    }
    if (sftDedup) {
      // The resolved side only; --prompt-window shortens the prompt as in the other shapes.
      if (messageWindow !== undefined) row = windowRow(row, messageWindow);
      const completion = p.continuation?.chosen ?? p.row.chosen;
      const s = sftDedup.add({ ...row, chosen: completion });
      if (!s) return; // a repeat of (instance_id, prompt, completion)
      const out = layout.behavior ? { ...s, behavior_sequence: behaviorSequence(p.row.prompt, completion, rowPlan().labels) } : s;
      await emit(out, row, row);
      return;
    }
    if (messageWindow !== undefined) row = windowRow(row, messageWindow);
    if (trl) {
      const t0 = toTrlRow(row, { tools: null, toolsJson: toolsCol(p.tools), arguments: layout.arguments, tally });
      const t = p.tree ? { ...t0, ...p.tree } : t0;
      const behavior = layout.behavior ? behaviorFields(p.row.prompt, p.row.chosen, p.row.rejected, rowPlan()) : null;
      if (tokens && tokenQueue) {
        // Counted in the background, written in order; null: dropped by --max-length (counted in the tallies).
        const pairRow = row;
        await tokenQueue.push(tokens.applyAsync(t, row.instance_id), async (c) => {
          if (c !== null) await emit(behavior ? { ...c, ...behavior } : c, c, pairRow);
        });
        return;
      }
      await emit(behavior ? { ...t, ...behavior } : t, t, row);
      return;
    }
    if (!layout.behavior && !layout.continuation) {
      await emit(p.tree ? { ...row, ...p.tree } : row, row, row); // the contract's row, untouched (tree: its fields appended)
      return;
    }
    const rows = preferenceRows(p.tree ? { ...row, ...p.tree } : row, p.row.prompt, p.continuation, rowPlan());
    if (layout.groups) groupRowCount += rows.length;
    for (const r of rows) await emit(r, row, row);
  };

  let summary: MineSummary;
  let result: FolderResult | null = null;
  try {
    const onSchema = (d: Detection) => {
      detection = d;
      if (!o.quiet) writeStderr(`divergence-mine: ${neutralise(describeDetection(d))}\n`);
    };
    // Once per codec, as soon as a worker first falls back (also with --quiet: it costs the user time).
    const onPureJs = (d: PureJsDecoder) => progress.note(`divergence-mine: warning: ${pureJsAdvice(d)}\n`); // note() neutralises
    summary = await minePairs(
      {
        inputs,
        options,
        workers: o.workers,
        ...(o.fitWorkers ? { fitWorkers: true } : {}),
        engine: o.engine,
        progress,
        onPureJs,
        partition,
        withTools: trl || layout.shape === 'kto',
        ...(pairing.tree ? { tree: pairing.tree } : {}),
        ...(pairing.exitStatus ? { exitStatus: pairing.exitStatus } : {}),
        overrides,
        onSchema,
        continuation: layout.continuation ? 'trajectory' : 'action',
        // The contract's row to a JSONL file or stdout, with nothing that looks at each row here
        // (split, card, window, reshaping): serialised in the workers.
        ...(sink instanceof JsonlSink && layout.shape === 'published' && !layout.windowed && plainLayout(layout) && plan.specs.length === 0 && !o.card
          ? { jsonl: (bytes: Uint8Array) => (sink as JsonlSink).writeBytesReusing(bytes) }
          : {}),
        ...(o.maxContinuationMessages !== undefined ? { maxContinuationMessages: o.maxContinuationMessages } : {}),
      },
      onPair,
    );
    await tokenQueue?.drain();
    await tokens?.close();
    if (folder) result = await folder.close();
    else await sink!.close();
    mark('mine: output committed');
  } catch (e) {
    releaseHeld(); // nothing of a failed run is committed
    await tokens?.close();
    sink?.abort();
    folder?.abort();
    if (folderCreated) {
      removeEmptyFolders(plan.folder!.dir, folderCreated);
      keepMadeFolders(plan.folder!.dir);
    }
    // stdout's reader is gone (`| head`): not an error, and a run that writes to stdout commits no file.
    if (e instanceof BrokenPipe) return;
    throw e;
  }
  if (folderCreated) keepMadeFolders(plan.folder!.dir);
  for (const w of summary.warnings) writeStderr(`divergence-mine: warning: ${neutralise(w)}\n`);
  if (tally.wrapped_arguments > 0)
    writeStderr(
      `divergence-mine: warning: ${tally.wrapped_arguments} tool calls have arguments that are not a JSON object; ` +
        'written as {"malformed_arguments": "<raw text>"} (--arguments object)\n',
    );
  const pythonNumbers = tally.python_numbers?.[format] ?? 0;
  if (pythonNumbers > 0)
    writeStderr(
      `divergence-mine: warning: ${pythonNumbers} numbers in tool-call arguments (e.g. ${tally.python_numbers!.example}) may be read as other numbers by Python datasets' ${format === 'jsonl' ? 'JSON' : 'parquet'} loader; ` +
        `the file keeps their text, and ${format === 'jsonl' ? 'parquet or ' : ''}--arguments string hands them over exactly (README "Numbers in arguments")\n`,
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
    pythonNumbers,
    sourceShape: sourceShapeStats(summary.detection, o, layout, { groupRows: groupRowCount, sft: sftDedup }),
    tokens: tokens ? tokens.toJSON() : null,
    pairing: pairingStats(pairing, layout.shape === 'kto', summary, ktoDedup),
  };
  if (tokens) for (const w of tokens.warnings) writeStderr(`divergence-mine: warning: ${neutralise(w)}\n`);
  // A partition holds only some instances: only a whole run compares with the published one.
  // The published run is the contract's walk without filters: other pairings never compare with it.
  const published = o.partition || pairing.tree || pairing.exitStatus ? null : comparePublished(summary.counters, { files: inputs, rows: summary.counters.trajectories_read }, usesDefaultOptions(options), recognise);
  if (o.stats) {
    const run = { partition, badRowsIndexPass: summary.badRowsIndexPass, fingerprint: fingerprintInputs(inputs), train, engineFallback: summary.engineFallback, pureJsDecoders: summary.pureJsDecoders, published };
    writeJsonAtomic(o.stats, statsDocument(summary.counters, options, inputs, run));
  }
  if (o.card) {
    const text = renderCard({
      argv: argvForCard(['divergence-mine', ...process.argv.slice(2)], [...positional, ...(o.parquet ?? []), ...(o.jsonl ?? [])], hubSources),
      ...(hubSources.length > 0 ? { sources: hubSources } : {}),
      contractVersion: CONTRACT_VERSION,
      counters: summary.counters,
      stats: cardStats,
      dataFiles: cardDataFiles(o.card, o.out, plan, result),
      shape: layout.shape as 'published' | 'trl', // --card refuses sft (trainPlan)
      arguments: layout.arguments,
      promptWindow: plan.promptWindow ?? null,
      split: plan.specs.length > 0 ? { by: plan.splitBy, specs: plan.specs } : null,
      generator: `divergence-mine ${VERSION}`,
      tokens: train.tokens ?? null,
      ...(pairing.tree && summary.tree
        ? { tree: { counters: summary.tree.counters, gaps: summary.tree.gaps, minValueGap: pairing.tree.minValueGap, minSupport: pairing.tree.minSupport, maxPairsPerNode: pairing.tree.maxPairsPerNode } }
        : {}),
    });
    writeFileAtomic(o.card, text);
  }
  commitHeld();
  if (!o.quiet) {
    if (pairing.tree) writeStderr(formatTreeCounters(summary.counters, summary.tree!));
    else writeStderr(formatCounters(summary.counters, published ? PUBLISHED_COUNTERS : undefined));
    if (summary.exitStatus) writeStderr(formatExitStatus(summary.exitStatus));
    if (ktoDedup) writeStderr(`kto rows ${ktoDedup.emitted} (${ktoDedup.desirable} desirable, ${ktoDedup.undesirable} undesirable), ${ktoDedup.duplicates} repeats dropped\n`);
    if (published) writeStderr(publishedVerdict(published));
    writeStderr(fallbackLine(summary.engineFallback));
    if (tokens) writeStderr(tokens.summaryLines().join('\n') + '\n');
    if (plan.specs.length > 0) writeStderr(splitCountsLine(cardStats, plan.splitBy) + '\n');
    if (result)
      for (const f of result.files) writeStderr(`  ${neutralise(f.path)}: ${formatCount(f.rows)} rows, ${humanBytes(f.bytes)}\n`);
  }
}

/** The upstream layout: a run on it without source or shape options writes exactly the stats it always did. */
/** Behaviour labels read text actions as the source signs them (sources/text-actions.ts schemes). */
function textActionLabels(d: Detection | null): RowPlan['labels'] {
  const scheme = d ? signatureSchemeOf(d.schema) : 'contract';
  return scheme === 'contract' ? { textActions: false } : { textActions: true, ...TEXT_ACTION_SCHEMES[scheme] };
}

function isUpstream(d: Detection): boolean {
  const m = d.mapping;
  return d.schema === 'openhands' && m.id === 'trajectory_id' && m.instance === 'instance_id' && m.messages === 'trajectory' && m.resolved === 'resolved' && !m.pairWithin?.length;
}

/** Issue-7 options (in `options`, so merge compares them) and outputs (outside `counters`). */
function sourceShapeStats(d: Detection, o: MineCliOptions, layout: OutputLayout, out: { groupRows: number; sft: SftDeduper | null }): TrainRunInfo['sourceShape'] {
  const m = d.mapping;
  const options: Record<string, unknown> = {
    ...(!isUpstream(d)
      ? {
          schema: d.schema,
          columns: { id: m.id, instance: m.instance, messages: m.messages, resolved: m.resolved, tools: m.tools, repo: m.repo },
          ...(m.instanceFromId != null ? { instance_from_id: m.instanceFromId } : {}),
          ...(m.pairWithin && m.pairWithin.length > 0 ? { pair_within: m.pairWithin.map((p) => p.name) } : {}),
        }
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
