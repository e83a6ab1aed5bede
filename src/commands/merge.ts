// `divergence-mine merge`: combine the outputs and stats of `mine --partition i/N` runs into exactly
// what a single run would have written. Partitions hold disjoint instances and each part is sorted by
// instance_id, so a k-way merge by instance restores the single run's order.
import { existsSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { writeStderr } from '../io/terminal-text.js';
import { COUNTER_NAMES, assertIdentity, emptyCounters, formatCounters, type Counters } from '../contract/counters.js';
import { PUBLISHED_COUNTERS, comparePublished, publishedVerdict, usesDefaultOptions } from '../contract/published.js';
import { ExitCode, UserError } from '../errors.js';
import { openSink, outputFormat, type OutputLayout } from '../dataset/file-output.js';
import { ROW_LEVEL_COUNTERS, partitionOf } from '../engine/partition.js';
import { jsonlLines, parseJsonLine } from '../io/jsonl-lines.js';
import { pairsFormat, readPairs } from '../io/pairs.js';
import { compareStrings } from '../contract/sample.js';
import { sameRows } from '../contract/options.js';
import type { PairRow } from '../types.js';
import { checkOutputPath } from '../io/atomic.js';
import { JsonlSink } from '../io/jsonl-writer.js';
import type { RowSink } from '../io/sink.js';
import { parseKeepingNumbers } from '../contract/json-numbers.js';
import { readPairsFile } from './check-template.js';
import { statsDocument, writeJsonAtomic } from './mine.js';
import { mergeKtoStats, mergeTreeStats, type KtoStats, type TreeStats } from './merge-tree.js';
import { formatTreeCounters } from './mine-pairing.js';
import { checkCoverage, findParts, type Claim } from './merge-parts.js';

interface PartStats {
  path: string;
  doc: ReturnType<typeof statsDocument>;
}

/** Where a part's stats usually are: `X.stats.json`, else `X.jsonl.stats.json`, beside `X.jsonl` (or .jsonl.gz, .parquet). */
export function statsBeside(part: string): string[] {
  const stem = part.replace(/\.(jsonl\.gz|jsonl|parquet)$/i, '');
  return stem === part ? [`${part}.stats.json`] : [`${stem}.stats.json`, `${part}.stats.json`];
}

function statsPaths(parts: string[], given: string[] | undefined): string[] {
  if (given && given.length > 0) return given;
  return parts.map((part) => {
    const candidates = statsBeside(part);
    const found = candidates.find((p) => existsSync(p));
    if (!found) throw new UserError(`${candidates[0]}: no such file (the stats of part ${part}; name the stats files with --stats FILE...)`, ExitCode.missingInput);
    return found;
  });
}

function readStats(path: string): PartStats {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${path}: no such file`, ExitCode.missingInput);
    throw new UserError(`${path}: not a stats JSON file (${(e as Error).message})`, ExitCode.corrupt);
  }
  const d = doc as ReturnType<typeof statsDocument>;
  if (d?.tool !== 'divergence-mine' || typeof d.counters !== 'object' || !d.options) {
    throw new UserError(`${path}: not a divergence-mine stats file`, ExitCode.schema);
  }
  if (!d.partition) throw new UserError(`${path}: stats of a run without --partition; nothing to merge`, ExitCode.usage);
  const { index, count } = d.partition as { index: unknown; count: unknown };
  if (!Number.isSafeInteger(count) || !Number.isSafeInteger(index) || (count as number) < 1 || (index as number) < 0 || (index as number) >= (count as number)) {
    throw new UserError(`${path}: "partition" is not an index i and a count N with 0 <= i < N (${JSON.stringify(d.partition)})`, ExitCode.schema);
  }
  return { path, doc: d };
}

/** Refuse partitions that do not come from one input, one contract, one set of options. */
export function checkCompatible(parts: PartStats[]): number {
  const first = parts[0]!;
  const same = (what: string, get: (d: PartStats['doc']) => unknown) => {
    const want = JSON.stringify(get(first.doc));
    for (const p of parts) {
      if (JSON.stringify(get(p.doc)) !== want) {
        throw new UserError(`${p.path}: ${what} differs from ${first.path} (${JSON.stringify(get(p.doc))} vs ${want}); refusing to merge`, ExitCode.usage);
      }
    }
  };
  // Keys and filters differ between contract versions (v2 changed norm), and so does the output
  // (v3 writes numbers with their source text): the parts do not add up to any one run. Versions
  // that changed neither (v4: an exit code) merge.
  for (const p of parts) {
    if (!sameRows(p.doc.contract_version, first.doc.contract_version)) {
      throw new UserError(
        `${p.path}: mined under mining contract v${p.doc.contract_version}, but ${first.path} under v${first.doc.contract_version}; ` +
          `partitions of different contract versions cannot be merged (re-mine the v${Math.min(Number(p.doc.contract_version), Number(first.doc.contract_version))} partitions)`,
        ExitCode.usage,
      );
    }
  }
  // Hub inputs: every part must have read the same commit (a branch may move between the parts' starts).
  const hubOf = (d: PartStats['doc']) => d.inputs.map((i) => ('hub' in i && i.hub ? `${i.hub.repo}@${i.hub.commit}/${i.hub.path}` : null));
  for (const p of parts) {
    const a = JSON.stringify(hubOf(p.doc));
    const b = JSON.stringify(hubOf(first.doc));
    if (a !== b)
      throw new UserError(
        `${p.path}: read other Hub files or commits than ${first.path} (${a} vs ${b}); refusing to merge (pin the revision: hf://datasets/OWNER/NAME@SHA)`,
        ExitCode.usage,
      );
  }
  same('input fingerprint', (d) => d.input_fingerprint);
  same('options', (d) => d.options);
  same('shape', (d) => d.shape);
  same('partition count', (d) => d.partition!.count);
  for (const n of ROW_LEVEL_COUNTERS) same(`row-level counter ${n}`, (d) => d.counters[n]);
  same('index-pass bad_rows', (d) => d.row_level.bad_rows_index_pass);
  // The exit-status filters act on rows before partitioning: every part counts the same.
  same('exit-status filter counts', (d) => (d as { exit_status_filter?: unknown }).exit_status_filter ?? null);
  return first.doc.partition!.count;
}

export function mergeCounters(parts: PartStats[]): Counters {
  const c = emptyCounters();
  const first = parts[0]!.doc;
  for (const n of COUNTER_NAMES) {
    if ((ROW_LEVEL_COUNTERS as readonly string[]).includes(n)) c[n] = first.counters[n];
    else for (const p of parts) c[n] += p.doc.counters[n];
  }
  // bad_rows: the index pass is counted by every partition, extracted trajectories by their own.
  c.bad_rows -= (parts.length - 1) * first.row_level.bad_rows_index_pass;
  assertIdentity(c);
  return c;
}

/** One part, instance by instance: every item is one row (JSONL: its raw line; parquet: a PairRow). */
interface PartCursor {
  path: string;
  next(): Promise<{ instance: string; item: string | PairRow } | null>;
  partition: number | null;
  /** The partition its stats claim, when the stats were found beside the part. */
  claimed?: number;
}

function jsonlCursor(path: string): PartCursor {
  const it = jsonlLines(path);
  return {
    path,
    partition: null,
    async next() {
      const r = await it.next();
      if (r.done) return null;
      const [line, text] = r.value;
      const id = parseJsonLine(path, line, text).instance_id;
      if (typeof id !== 'string') throw new UserError(`${path}:${line}: row has no instance_id`, ExitCode.schema);
      // The raw line is copied, so the merged bytes are the parts' bytes.
      return { instance: id, item: text };
    },
  };
}

function parquetCursor(path: string, plain: boolean): PartCursor {
  // The published shape reads through the typed pairs reader; other layouts (trl, windowed) as the
  // generic rows check-template reads, JSON columns decoded.
  const typed = plain ? readPairs(path) : null;
  const generic = plain ? null : readPairsFile(path);
  return {
    path,
    partition: null,
    async next() {
      if (typed) {
        const r = await typed.next();
        return r.done ? null : { instance: r.value.pair.instance_id, item: r.value.pair };
      }
      const r = await generic!.next();
      if (r.done) return null;
      const row = r.value.value as { instance_id?: unknown };
      if (typeof row?.instance_id !== 'string') throw new UserError(`${path}: row ${r.value.index} has no instance_id`, ExitCode.schema);
      return { instance: row.instance_id, item: row as PairRow };
    },
  };
}

/** The output layout recorded in a partition's stats (shape, trl arguments, prompt window). */
export function layoutOf(doc: PartStats['doc']): OutputLayout {
  const opts = doc.options as { arguments?: 'object' | 'string'; prompt_window?: number; pairing?: string };
  return {
    shape: doc.shape === 'trl' || doc.shape === 'kto' ? doc.shape : 'published',
    arguments: opts.arguments ?? 'object',
    windowed: opts.prompt_window !== undefined,
    ...(opts.pairing === 'tree' ? { tree: true } : {}),
  };
}

export async function mergeParts(
  partPaths: string[],
  count: number,
  sink: RowSink<unknown>,
  rawSink: ((line: string) => Promise<void>) | null,
  plain = true,
  claimed: readonly number[] | null = null,
): Promise<number> {
  const cursors = partPaths.map((p, k) => {
    const c = pairsFormat(p) === 'parquet' ? parquetCursor(p, plain) : jsonlCursor(p);
    return claimed ? { ...c, claimed: claimed[k]! } : c;
  });
  const heads = await Promise.all(cursors.map((c) => c.next()));
  let rows = 0;
  let last: string | null = null;
  for (;;) {
    let best = -1;
    for (let k = 0; k < heads.length; k++) {
      const h = heads[k];
      if (h && (best < 0 || compareStrings(h.instance, heads[best]!.instance) < 0)) best = k;
    }
    if (best < 0) break;
    const cur = cursors[best]!;
    const instance = heads[best]!.instance;
    if (last !== null && compareStrings(instance, last) <= 0) {
      throw new UserError(`${cur.path}: instance ${instance} is out of order or appears in two parts; not a mine --partition output`, ExitCode.corrupt);
    }
    const p = partitionOf(instance, count);
    if (cur.claimed !== undefined && p !== cur.claimed) {
      throw new UserError(`${cur.path}: holds instance ${instance} of partition ${p}/${count}, but its stats are of partition ${cur.claimed}/${count}`, ExitCode.corrupt);
    }
    if (cur.partition === null) cur.partition = p;
    else if (cur.partition !== p) throw new UserError(`${cur.path}: holds instances of partitions ${cur.partition} and ${p}; not one partition's output`, ExitCode.corrupt);
    while (heads[best] && heads[best]!.instance === instance) {
      const item = heads[best]!.item;
      if (typeof item === 'string' && rawSink) await rawSink(item);
      // A row re-encoded (JSONL into parquet) keeps its numbers' source text (contract v3, 11).
      else await sink.write(typeof item === 'string' ? parseKeepingNumbers(item) : item);
      rows++;
      heads[best] = await cur.next();
    }
    last = instance;
  }
  const owners = new Map<number, string>();
  for (const c of cursors) {
    if (c.partition === null) continue;
    if (owners.has(c.partition)) throw new UserError(`${c.path}: partition ${c.partition} given twice (also ${owners.get(c.partition)})`, ExitCode.usage);
    owners.set(c.partition, c.path);
  }
  return rows;
}

interface MergeOptions {
  stats?: string[];
  out: string;
  statsOut?: string;
  force: boolean;
  quiet: boolean;
}

export function registerMerge(program: Command): void {
  program
    .command('merge')
    .summary('combine `mine --partition i/N` outputs into the single-run result')
    .description(
      'Combine partition outputs and their stats into output byte-identical to one unpartitioned run, with ' +
        'identical counters. Refuses parts from different inputs, seeds, options, shapes or contract versions.',
    )
    .argument('<parts...>', 'partition outputs (.jsonl or .parquet) in any order, a folder holding them, or a glob (quoted, e.g. \'parts/*.jsonl\')')
    .option('--stats <files...>', 'stats JSON of each partition, several after one --stats placed after the parts (default: X.stats.json beside each part X.jsonl)')
    .requiredOption('-o, --out <path>', 'merged output: *.jsonl, *.parquet, or - for JSONL on stdout')
    .option('--stats-out <file>', 'write the merged stats JSON here')
    .option('-f, --force', 'overwrite existing output files', false)
    .option('-q, --quiet', 'no counters table on stderr', false)
    .addHelpText(
      'after',
      `
Example:
  $ for i in 0 1 2; do divergence-mine mine --parquet t.parquet --partition $i/3 \\
        --out part-$i.jsonl --stats part-$i.stats.json; done
  $ divergence-mine merge part-*.jsonl --out pairs.jsonl --stats-out stats.json
  $ divergence-mine merge part-*.jsonl --stats stats/part-*.json --out pairs.jsonl
  $ divergence-mine merge parts/ --out pairs.jsonl      # every part in parts/, with its stats beside it
  $ divergence-mine merge 'parts/part-*-of-8.jsonl' --out pairs.jsonl

Each part's stats say which partition i/N it is: merge names every partition that is missing
(exit 3) or given twice (exit 2) before it writes anything.`,
    )
    .action(async (args: string[], o: MergeOptions) => {
      const parts = findParts(args, o.out);
      const stats = statsPaths(parts, o.stats).map(readStats);
      const count = checkCompatible(stats);
      // Stats found beside the parts say which partition each part is; stats given with --stats only which partitions there are.
      const paired = !(o.stats && o.stats.length > 0);
      checkCoverage(stats.map((s, k): Claim => ({ index: s.doc.partition!.index, count, file: paired ? parts[k]! : s.path })));
      if (parts.length !== count) throw new UserError(`expected ${count} part files (one per partition), got ${parts.length}`, ExitCode.usage);
      const counters = mergeCounters(stats);
      // --pairing tree: its funnel adds up across parts (identity asserted); rows are its pairs.
      const tree: TreeStats | null = mergeTreeStats(stats.map((p) => p.doc as { tree?: TreeStats }));
      // --shape kto: rows are the KTO rows (two per pair, repeats dropped), summed over the parts.
      const kto = mergeKtoStats(stats.map((p) => p.doc as { kto?: KtoStats }));
      const emitted = kto ? kto.rows : tree ? tree.counters.pairs_emitted : counters.pairs_emitted;
      outputFormat(o.out);
      if (o.out !== '-') checkOutputPath(o.out, o.force);
      if (o.statsOut) checkOutputPath(o.statsOut, o.force, 'stats');
      const layout = layoutOf(stats[0]!.doc);
      const plain = layout.shape === 'published' && !layout.windowed && !layout.tree;
      if (!plain && outputFormat(o.out) === 'jsonl' && parts.some((p) => pairsFormat(p) === 'parquet')) {
        // Parquet rows of these layouts carry every struct field; JSONL ones only the role's fields.
        throw new UserError(`${o.out}: merging ${layout.shape}${layout.windowed ? ' windowed' : ''} parquet parts into JSONL is not supported; merge into .parquet, or mine JSONL parts`, ExitCode.usage);
      }
      const sink = openSink(o.out, layout);
      const raw = sink instanceof JsonlSink ? (line: string) => sink.writeLine(line) : null;
      let rows: number;
      try {
        rows = await mergeParts(parts, count, sink, raw, plain, paired ? stats.map((s) => s.doc.partition!.index) : null);
        if (rows !== emitted) {
          throw new UserError(`the parts hold ${rows} rows but their stats say ${emitted}; a part file is missing, extra or from another run`, ExitCode.usage);
        }
        await sink.close();
      } catch (e) {
        sink.abort();
        throw e;
      }
      // The merged run is no partition: the parts' partition_source does not describe it.
      const { partition_source: _source, ...first } = stats[0]!.doc as PartStats['doc'] & { partition_source?: unknown };
      // The merged run is a whole run: it compares with the published one like a single `mine` does.
      const opt = first.options;
      const published = tree || (first as { exit_status_filter?: unknown }).exit_status_filter ? null : comparePublished(counters, { files: first.inputs, rows: counters.trajectories_read }, usesDefaultOptions({
        maxPerSide: opt.max_per_side, maxPairsPerInstance: opt.max_pairs_per_instance, minSimilaritySkip: opt.min_similarity_skip,
        seed: opt.seed, reasoningKeys: opt.reasoning_keys, skipBadRows: opt.skip_bad_rows,
      }));
      if (o.statsOut) {
        writeJsonAtomic(o.statsOut, { ...first, counters, partition: null, row_level: first.row_level, merged_from: stats.length, ...(tree ? { tree } : {}), ...(kto ? { kto } : {}), ...(published ? { published_comparison: published } : {}) });
      }
      if (!o.quiet) {
        if (tree) writeStderr(formatTreeCounters(counters, { counters: tree.counters, gaps: tree.value_gap_histogram.map((b) => b.pairs) }));
        else writeStderr(formatCounters(counters, published ? PUBLISHED_COUNTERS : undefined));
        if (published) writeStderr(publishedVerdict(published));
      }
    });
}
