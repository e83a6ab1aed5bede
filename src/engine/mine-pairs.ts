// The streaming pipeline behind `divergence-mine mine`, one function per stage (minePairs runs them):
//   1. readMetadata  (workers) the footer of every parquet input
//   2. detectLayout  (sources/schema.ts) the input layout, once per run; column types checked
//   3. indexPass     (workers) read trajectory_id / instance_id / resolved / repo of every row
//   4. select        (contract/select.ts) duplicate ids, labels, groups, eligibility, SHA-256 rank sampling
//   5. decodePass    (workers) only row groups holding extracted trajectories; normalise, hash keys, spill
//   6. walk          (contract/walk.ts) instance by instance in order, rows rebuilt from the spill:
//                    startEarlyWalk (in the workers, the contract's JSONL rows) or walkAndWrite (here)
//   7. counters      the identity asserted; the sink (commands/mine.ts) writes the rows
// Output depends only on the input and options, never on the number of workers or timing.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { assertIdentity, type Counters } from '../contract/counters.js';
import { ExitCode, UserError } from '../errors.js';
import type { MiningOptions } from '../contract/options.js';
import { partitionOf, type Partition } from './partition.js';
import { silentProgress, type ProgressSink } from '../io/progress.js';
import { checkParquetMagic, type InputFile } from '../io/inputs.js';
import { FallbackTally, type EngineFallback } from './fallback.js';
import { Pool } from './pool.js';
import { type ByteRange, type DecodeResult, type Engine, type IndexResult, type MetaResult, type SampleResult, type Task } from './protocol.js';
import { Indexer, type Selected, type SelectedInstance } from '../contract/select.js';
import { MESSAGES_CANDIDATES, SOURCE_NAMES, SchemaError, detectSchema, mappedColumns, type ColumnMapping, type Detection, type SchemaOverrides } from '../sources/schema.js';
import { RowIdentity } from '../sources/identity.js';
import { SpillReader } from './spill.js';
import { SpillTrajectory, hooksFor, type MinedContinuation } from './spill-walk.js';
import { EarlyWalk } from './early-walk.js';
import { planPieces } from './split-decode.js';
import { largestWholePageOf, pageShapeOf } from '../parquet/reader.js';
import type { PureJsDecoder } from '../parquet/inflate.js';
import { compareStrings } from '../contract/sample.js';
import type { PairRow } from '../types.js';
import { makeSpillDir, removeTemp } from '../io/atomic.js';
import { mark } from '../io/timeline.js';
import { walkInstance } from '../contract/walk.js';
import { type ColumnResult } from './protocol.js';
import { assertTreeIdentity, emptyGapHistogram, emptyTreeCounters, type TreeCounters, type TreeFields, type TreeOptions } from '../pairing/tree.js';
import { EXIT_STATUS_COLUMN, admitExitStatus, emptyExitStatusTally, type ExitStatusFilter, type ExitStatusTally } from '../pairing/exit-status.js';
import { SpillAttempt, walkTreeInstance } from './tree-walk.js';
import { SMALL_INPUT_BYTES } from '../io/input-size.js';
import { jsonlRanges, rangeOfLine, type NumberedRange } from './jsonl-ranges.js';
import { isGzipped } from '../io/jsonl-lines.js';

export interface Loc {
  input: number;
  /** Row group (parquet) or -1 (JSONL). */
  rowGroup: number;
  /** Row within the row group (parquet) or 1-based line (JSONL). */
  row: number;
  /** A plain JSONL file's line: its byte offset and length (the decode pass reads just those). */
  offset?: number;
  length?: number;
}

export interface MineRequest {
  inputs: InputFile[];
  options: MiningOptions;
  workers: number;
  /**
   * `workers` is an upper bound (the CLI's default, one per core): inputs under SMALL_INPUT_BYTES in
   * all use one worker, which decodes them sooner than a second one starts.
   */
  fitWorkers?: boolean;
  /** Which reader decodes parquet inputs: js (our reader; parquet-wasm for what it does not build), wasm or duckdb. */
  engine?: Engine;
  /** Read the `tools` column of extracted trajectories (for shapes that carry tool definitions). */
  withTools?: boolean;
  /** Only instances of this partition (see partition.ts); every other rule unchanged. */
  partition?: Partition | null;
  progress?: ProgressSink;
  /** --schema and the column options (sources/schema.ts); without them the layout is detected. */
  overrides?: SchemaOverrides;
  /** Called once the schema is known, before the index pass (the CLI prints it). */
  onSchema?: (d: Detection) => void;
  /** Called once per codec, as soon as a worker first decodes its pages with a pure-JS fallback (the CLI warns). */
  onPureJs?: (d: PureJsDecoder) => void;
  /** `trajectory` also reads each side from the divergence to its end (shapes/continuation.ts). */
  continuation?: 'action' | 'trajectory';
  /**
   * Fast path for the contract's own JSONL rows: when set (and continuation is 'action'), the workers
   * walk and serialise, and the rows arrive here as JSONL bytes (JSON.stringify of each row, one per
   * line), in the same order; the pair callback is not called. The promise resolves once the bytes
   * may be reused (the next batch of rows is read into the same buffer).
   */
  jsonl?: (bytes: Uint8Array) => Promise<void>;
  /** `--max-continuation-messages`: whole turns, at most this many messages (continuation.ts). */
  maxContinuationMessages?: number;
  /** `--pairing tree` (pairing/tree.ts): every labelled attempt of an instance, no sampling, pairs from its prefix tree. */
  tree?: TreeOptions;
  /** `--rejected-exit-status` / `--exclude-exit-status` (pairing/exit-status.ts), on the exit_status column. */
  exitStatus?: ExitStatusFilter;
}

export type { MinedContinuation } from './spill-walk.js';

/** What the walk hands to the writer: the row plus what other shapes may need. */
export interface MinedPair {
  /** Always the contract's action-level row (every counter and the dedupe key are computed on it). */
  row: PairRow;
  tools: string | null;
  continuation?: MinedContinuation;
  /** `--pairing tree`: the values and supports of the two branches. */
  tree?: TreeFields;
  /** `--pairing tree`: each branch's identity (hex of its action's key hash), for one KTO row per branch. */
  branches?: [string, string];
}

export interface MineSummary {
  counters: Counters;
  /** Rows refused in the index pass (row level, the same in every partition); the rest of bad_rows are extracted trajectories. */
  badRowsIndexPass: number;
  warnings: string[];
  /** The schema and columns of the first input. */
  detection: Detection;
  /** --engine js: row groups read through parquet-wasm instead. */
  engineFallback?: EngineFallback;
  /** `--pairing tree`: its funnel (identity asserted) and the histogram of emitted value gaps (bins of 0.1 from 0). */
  tree?: { counters: TreeCounters; gaps: number[] };
  /** The exit-status filters: what they left out and the statuses seen (row level). */
  exitStatus?: ExitStatusTally;
  /** Codecs whose pages some worker decoded with a pure-JS fallback (slower, same bytes), by codec. */
  pureJsDecoders: PureJsDecoder[];
}

const REQUIRED = ['trajectory_id', 'instance_id', 'resolved', 'trajectory'] as const;

function inputBytes(req: Pick<MineRequest, 'inputs'>): number {
  return req.inputs.reduce((n, f) => n + f.bytes, 0);
}

/** How many decode workers the run may start (see MineRequest.fitWorkers). */
export function poolSize(req: Pick<MineRequest, 'inputs' | 'workers' | 'fitWorkers'>): number {
  if (req.fitWorkers && inputBytes(req) < SMALL_INPUT_BYTES) return 1;
  return Math.max(1, req.workers);
}

function missingColumns(where: string, missing: readonly string[], found: readonly string[], hint = ''): UserError {
  return new UserError(
    `${where}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (found: ${found.join(', ') || 'none'})${hint}`,
    ExitCode.schema,
  );
}

/** What would map a layout that fits no known source (the end of its one-line error). */
const MAPPING_HINT = `; map other columns with --id-column, --instance-column or --instance-from-id, --messages-column, --resolved-column, or name the corpus with --source (${SOURCE_NAMES.join(', ')})`;

function hasOverrides(o: SchemaOverrides): boolean {
  return Object.values(o).some((v) => v !== undefined);
}

/**
 * Detect the schema of one input (sources/schema.ts). Without any option, an input that fits no
 * known layout keeps the contract's errors: missing upstream columns are listed as before, and a
 * `trajectory` column that detection passed over is kept so that checkSchema reports its type.
 * `legacy` is then true: the messages column must be a list of structs.
 */
function detectInput(where: string, columns: readonly string[], sample: unknown, overrides: SchemaOverrides): Detection & { legacy: boolean } {
  try {
    return { ...detectSchema(columns, sample, overrides), legacy: false };
  } catch (e) {
    if (!(e instanceof SchemaError) || hasOverrides(overrides)) throw e;
    const missing = REQUIRED.filter((c) => !columns.includes(c));
    // Near the contract's layout (its id and instance columns): its own message; else what detection tried.
    if (missing.length > 0 && columns.includes('trajectory_id') && columns.includes('instance_id')) throw missingColumns(where, missing, columns, MAPPING_HINT);
    if (missing.length > 0) throw new UserError(`${where}: ${e.message}`, ExitCode.schema);
    const mapping: ColumnMapping = {
      id: 'trajectory_id',
      instance: 'instance_id',
      messages: 'trajectory',
      resolved: 'resolved',
      tools: columns.includes('tools') ? 'tools' : null,
      repo: columns.includes('repo') ? 'repo' : null,
    };
    return { schema: 'openhands', mapping, auto: true, reason: 'upstream columns', legacy: true };
  }
}

/** Only empty JSONL inputs: the layout the options name, else the upstream one (no row is read anyway). */
function emptyInputDetection(overrides: SchemaOverrides): Detection & { legacy: boolean } {
  try {
    return detectInput('', REQUIRED, undefined, overrides);
  } catch (e) {
    if (!(e instanceof SchemaError)) throw e;
    return detectInput('', REQUIRED, undefined, {});
  }
}

/** The column types of a parquet input under its mapping. */
export function checkSchema(path: string, meta: MetaResult, withTools: boolean, d: Detection & { legacy?: boolean }): { hasTools: boolean } {
  const byName = new Map(meta.fields.map((f) => [f.name, f]));
  const m = d.mapping;
  const wrong = (col: string, expected: string) => {
    throw new UserError(`${path}: column ${col} has type ${byName.get(col)!.type}, expected ${expected}`, ExitCode.schema);
  };
  for (const c of Array.isArray(m.id) ? m.id : [m.id as string]) if (!byName.get(c)!.isString) wrong(c, 'a string');
  if (m.instance !== null && !byName.get(m.instance)!.isString) wrong(m.instance, 'a string');
  if (!byName.get(m.resolved)!.isLabel) wrong(m.resolved, 'an integer, float or boolean');
  const msgs = byName.get(m.messages)!;
  // A string column may hold JSON text of the messages, except in the contract's own layout
  // (detected openhands on an upstream `trajectory` column), whose type the contract fixes.
  const strict = d.legacy === true || (d.auto && d.schema === 'openhands' && m.messages === 'trajectory');
  if (!msgs.isTrajectory && (strict || !msgs.isString)) wrong(m.messages, 'a list of message structs with a role field');
  const repo = m.repo ? byName.get(m.repo) : undefined;
  if (repo && !repo.isString && repo.type !== 'Null') wrong(m.repo!, 'a string');
  return { hasTools: withTools && m.tools !== null };
}

/**
 * The first row's `columns` for detection, read by a worker of its own: a corrupt page can kill a
 * worker, and a sample that cannot be read only costs the detection its evidence (the decode pass
 * then reports the page with its row group and column, as without detection).
 */
async function sampleRow(path: string, columns: string[], spillDir: string): Promise<Record<string, unknown> | null> {
  const probe = new Pool(1, spillDir);
  try {
    return (await probe.run<SampleResult>({ kind: 'sample', path, columns })).row;
  } catch {
    return null;
  } finally {
    await probe.close();
  }
}

/** The mapping's columns (but tools and repo, which are optional per input) that `columns` lacks. */
function lacking(m: ColumnMapping, columns: readonly string[]): string[] {
  return mappedColumns(m).filter((c) => c !== m.tools && c !== m.repo && !columns.includes(c));
}

/** What every stage of one run shares: the request, the worker pool and the spill folder. */
interface Run {
  req: MineRequest;
  opts: MiningOptions;
  engine: Engine;
  progress: ProgressSink;
  pool: Pool;
  spillDir: string;
  reader: SpillReader;
  /** Row groups the js engine sent to parquet-wasm, with the reason. */
  fallbacks: FallbackTally;
}

/** Each input's mapping and, for parquet, its metadata with the column types checked. */
interface Layout {
  detection: Detection;
  mapped: ColumnMapping[];
  metas: ({ meta: MetaResult; hasTools: boolean } | null)[];
}

/** The selected trajectories in instance order; a trajectory's key is its index in `selected`. */
interface Extraction {
  instances: SelectedInstance<Loc>[];
  counters: Counters;
  badRowsIndexPass: number;
  selected: Selected<Loc>[];
  keyOf: Map<Selected<Loc>, number>;
}

type Continuations = { maxMessages: number | undefined; rows: Map<PairRow, MinedContinuation> } | null;

/** The walk in the workers, and the instance of each trajectory key (the walk counts by instance). */
interface EarlyRun {
  walk: EarlyWalk;
  instanceOf: Int32Array;
}

/**
 * Run the pipeline and hand every kept pair to `sink` in output order.
 * Returns the counters (identity asserted) and any warnings.
 */
export async function minePairs(req: MineRequest, sink: (pair: MinedPair) => Promise<void>): Promise<MineSummary> {
  mark('mine: start');
  const spillDir = makeSpillDir();
  /** The workers' spill files being removed while the rows are copied (releaseSpill), if they are. */
  let released: Promise<void> | undefined;
  mark('mine: spill folder made');
  const run: Run = {
    req,
    opts: req.options,
    engine: req.engine ?? 'js',
    progress: req.progress ?? silentProgress,
    pool: new Pool(poolSize(req), spillDir, {
      drainOnClose: (req.engine ?? 'js') === 'duckdb',
      adoptEarly: true,
      // The early walk releases walked trajectories, whose spill space is then written again.
      placeSpill: earlyWalked(req),
      ...(req.onPureJs ? { onPureJs: req.onPureJs } : {}),
    }),
    spillDir,
    reader: new SpillReader(),
    fallbacks: new FallbackTally(),
  };
  // An input with work for every worker: start them all now (each loads its modules, about 80 ms),
  // beside the footer read, instead of one at a time as tasks queue up.
  if (inputBytes(req) >= SMALL_INPUT_BYTES) run.pool.warm(req.workers);
  const warnings: string[] = [];
  let early: EarlyRun | null = null;
  try {
    const metas = await readMetadata(run);
    mark('mine: footers read');
    const layout = await detectLayout(run, metas);
    mark('mine: layout detected');
    const tally = req.exitStatus ? emptyExitStatusTally() : null;
    // JSONL inputs read in byte ranges: where each range's lines fall (indexPass), for decodePass.
    const ranges = new Map<number, NumberedRange[]>();
    const indexed = await indexPass(run, layout, tally, ranges);
    mark('mine: index pass done');
    const ex = select(run, indexed);
    mark('mine: selection done');
    if (ex.instances.length === 0) warnings.push(noEligibleReason(ex.counters));
    const cont: Continuations = req.continuation === 'trajectory' ? { maxMessages: req.maxContinuationMessages, rows: new Map() } : null;
    const decoded = new Array<SpillTrajectory | null>(ex.selected.length).fill(null);
    const refs = (list: Selected<Loc>[]) => list.map((s) => decoded[ex.keyOf.get(s)!]).filter((t): t is SpillTrajectory => t != null);
    // The contract's JSONL rows: walked in the workers while decoding goes on (early-walk.ts).
    if (earlyWalked(req)) early = startEarlyWalk(run, ex, refs);
    await decodePass(run, layout, ex, decoded, early, ranges);
    mark('mine: decode pass done');
    let tree: MineSummary['tree'];
    if (req.tree) tree = await walkTreeAndWrite(run, req.tree, ex, decoded, sink);
    else if (early) await early.walk.finish(req.jsonl!, () => (released = releaseSpill(run, ROWS_FILE)));
    else await walkAndWrite(run, ex, decoded, refs, cont, sink);
    mark('mine: walk and write done');
    assertIdentity(ex.counters);
    if (tree) assertTreeIdentity(tree.counters);
    return {
      counters: ex.counters,
      badRowsIndexPass: ex.badRowsIndexPass,
      warnings,
      detection: layout.detection,
      engineFallback: run.fallbacks.summary(),
      pureJsDecoders: [...run.pool.pureJs.values()].sort((a, b) => compareStrings(a.codec, b.codec)),
      ...(tree ? { tree } : {}),
      ...(tally ? { exitStatus: tally } : {}),
    };
  } finally {
    await run.pool.close();
    mark('mine: workers closed');
    early?.walk.close();
    run.reader.close();
    mark('mine: spill files closed');
    if (released) {
      await released;
      mark('mine: workers\' spill files removed');
    }
    removeTemp(spillDir);
    mark('mine: spill folder removed');
  }
}

/** The contract's own JSONL rows are walked in the workers while decoding goes on (early-walk.ts). */
function earlyWalked(req: MineRequest): boolean {
  return Boolean(req.jsonl) && req.continuation !== 'trajectory' && !req.tree;
}

/** The early walk's rows file, in the spill folder beside the workers' spill files. */
const ROWS_FILE = 'rows.jsonl';

/**
 * Once every instance is walked nothing reads the workers' spill files: close them (the workers and
 * the main thread's reader) and remove them beside the copy of the rows, on libuv's threads, instead
 * of after it (freeing gigabytes on a file system that discards them takes 0.2-0.9 s). Never fails:
 * what is left is removed with the spill folder.
 */
async function releaseSpill(run: Run, keep: string): Promise<void> {
  try {
    await run.pool.close();
    run.reader.close();
    const names = (await readdir(run.spillDir)).filter((n) => n !== keep);
    await Promise.all(names.map((n) => rm(join(run.spillDir, n), { recursive: true, force: true })));
  } catch {
    // removed with the folder at the end
  }
}

/** Stage 1: the footer of every parquet input (null for JSONL inputs). */
async function readMetadata({ req, pool, engine }: Run): Promise<(MetaResult | null)[]> {
  return Promise.all(
    req.inputs.map(async (f) => {
      if (f.kind !== 'parquet') return null;
      checkParquetMagic(f.path, f.bytes);
      if (engine === 'wasm' && f.bytes >= 2 ** 32) {
        throw new UserError(`${f.path}: parquet-wasm (wasm32) cannot read files of 4 GiB or more; use --engine js or duckdb`, ExitCode.usage);
      }
      const meta = await pool.run<MetaResult>({ kind: 'meta', path: f.path, engine, bytes: f.bytes });
      const total = meta.rowGroupRows.reduce((a, b) => a + b, 0);
      if (total !== meta.numRows) throw new UserError(`${f.path}: corrupt metadata (row groups hold ${total} rows, footer says ${meta.numRows})`, ExitCode.corrupt);
      return meta;
    }),
  );
}

/**
 * Stage 2: the schema, detected on the first input (its first row as the sample), once per
 * run; every other input must hold the same columns (tools and repo may differ per input).
 */
async function detectLayout({ req, pool, spillDir }: Run, rawMetas: (MetaResult | null)[]): Promise<Layout> {
  const overrides = req.overrides ?? {};
  // The contract's own layout is never classified by a sample: text-only replies there stay
  // `text ...` actions, and a parquet sample costs seconds on a large row group. Text actions in
  // an upstream `trajectory` column need --schema text-actions.
  const upstreamLayout = (columns: readonly string[]) =>
    REQUIRED.every((c) => columns.includes(c)) && !columns.includes('messages') && overrides.messagesColumn === undefined;
  let first: (Detection & { legacy: boolean; path: string }) | null = null;
  const mappings: (ColumnMapping | null)[] = [];
  for (let k = 0; k < req.inputs.length; k++) {
    const f = req.inputs[k]!;
    const meta = rawMetas[k];
    let columns: string[];
    let sample: Record<string, unknown> | null = null;
    let where = f.path;
    if (meta) {
      columns = meta.fields.map((fl) => fl.name);
      if (!first && overrides.schema === undefined && meta.numRows > 0 && !upstreamLayout(columns)) {
        const cands = [...new Set([...(overrides.messagesColumn ? [overrides.messagesColumn] : []), ...MESSAGES_CANDIDATES])].filter((c) => columns.includes(c));
        if (cands.length > 0) sample = await sampleRow(f.path, cands, spillDir);
      }
    } else {
      const r = await pool.run<SampleResult>({ kind: 'sample-jsonl', path: f.path });
      if (!r.row) {
        mappings.push(null); // an empty file: nothing to detect, nothing to read
        continue;
      }
      columns = Object.keys(r.row);
      if (!upstreamLayout(columns)) sample = r.row;
      where = `${f.path}:${r.line ?? 1}`;
    }
    if (!first) {
      first = { ...detectInput(where, columns, sample ?? undefined, overrides), path: f.path };
      mappings.push(first.mapping);
      continue;
    }
    const missing = lacking(first.mapping, columns);
    if (missing.length > 0) {
      const e = missingColumns(where, missing, columns);
      throw new UserError(`${e.message}; schema ${first.schema} was detected on ${first.path}`, ExitCode.schema);
    }
    mappings.push({ ...first.mapping, tools: first.mapping.tools && columns.includes(first.mapping.tools) ? first.mapping.tools : null, repo: first.mapping.repo && columns.includes(first.mapping.repo) ? first.mapping.repo : null });
  }
  // Only empty JSONL inputs: the upstream layout (no row is read anyway).
  // (A --source whose columns are not the upstream ones: its mapping, as there is nothing to check.)
  first ??= { ...emptyInputDetection(overrides), path: '' };
  const mapped = mappings.map((m) => m ?? first.mapping);
  const detection: Detection = { schema: first.schema, mapping: first.mapping, auto: first.auto, reason: first.reason };
  req.onSchema?.(detection);
  const metas = rawMetas.map((meta, k) =>
    meta ? { meta, ...checkSchema(req.inputs[k]!.path, meta, Boolean(req.withTools), { ...detection, mapping: mapped[k]!, legacy: first.legacy }) } : null,
  );
  return { detection, mapped, metas };
}

/** Stage 3: the index pass over the small columns; tasks run in parallel but are fed in file order. */
async function indexPass(
  { req, opts, engine, pool, progress, fallbacks }: Run,
  { detection, mapped, metas }: Layout,
  tally: ExitStatusTally | null,
  ranges: Map<number, NumberedRange[]>,
): Promise<Indexer<Loc>> {
  const indexTasks: { input: number; rowGroup: number; task: Task; rows: number; range?: ByteRange }[] = [];
  req.inputs.forEach((f, input) => {
    const m = metas[input];
    const mapping = mapped[input]!;
    let rowOffset = 0;
    if (m) {
      m.meta.rowGroupRows.forEach((rows, rowGroup) => {
        const task: Task = { kind: 'index', path: f.path, rowGroup, hasRepo: mapping.repo !== null, mapping, engine, rowOffset, rows };
        indexTasks.push({ input, rowGroup, rows, task });
        rowOffset += rows;
      });
    }
    else {
      const cut = jsonlRanges(f.bytes, isGzipped(f.path), pool.capacity);
      if (!cut) indexTasks.push({ input, rowGroup: -1, rows: 0, task: { kind: 'index-jsonl', path: f.path, mapping, schema: detection.schema } });
      else for (const range of cut) indexTasks.push({ input, rowGroup: -1, rows: 0, range, task: { kind: 'index-jsonl', path: f.path, mapping, schema: detection.schema, range } });
    }
  });
  if (req.exitStatus) checkExitStatusColumn(req.inputs, metas);
  const totalRows = indexTasks.reduce((a, t) => a + t.rows, 0);
  progress.phase('index', indexTasks.length, totalRows);
  const indexResults = indexTasks.map((t) =>
    pool.run<IndexResult>(t.task).then((r) => {
      progress.advance(1, r.ids.length);
      return r;
    }),
  );
  indexResults.forEach((p) => p.catch(() => {}));
  // The exit-status filters read one more small column per row group (or JSONL input), in row order.
  const filter = req.exitStatus;
  const statusResults = filter ? indexTasks.map((t) => pool.run<ColumnResult>(exitStatusTask(t.task))) : null;
  statusResults?.forEach((p) => p.catch(() => {}));
  const indexer = new Indexer<Loc>({
    seed: opts.seed,
    // The tree pairing takes every labelled attempt: no rank sampling (ranks still order them).
    maxPerSide: req.tree ? Number.MAX_SAFE_INTEGER : opts.maxPerSide,
    skipBadRows: opts.skipBadRows,
    ...(filter && tally ? { admit: (rec, label) => admitExitStatus(filter, label, rec.extra, tally) } : {}),
  });
  // Synthesised ids and --instance-from-id (sources/identity.ts): here, where rows arrive in read order.
  const identity = new RowIdentity(detection.mapping);
  for (let k = 0; k < indexTasks.length; k++) {
    const t = indexTasks[k]!;
    const r = await indexResults[k]!;
    const status = statusResults ? (await statusResults[k]!).values : null;
    const path = req.inputs[t.input]!.path;
    if (status && status.length !== r.ids.length) throw new UserError(`${path}: column ${EXIT_STATUS_COLUMN} has ${status.length} values for ${r.ids.length} rows`, ExitCode.corrupt);
    fallbacks.add(path, t.rowGroup, r.fallback);
    // A range's lines are numbered from its first: the ranges before it (read in order) hold the rest.
    let linesBefore = 0;
    if (t.range) {
      const done = ranges.get(t.input) ?? [];
      const last = done[done.length - 1];
      linesBefore = last ? last.linesBefore + last.lineCount : 0;
      if (r.lineCount === undefined) throw new Error(`internal error: ${path}: a range's index task did not count its lines`);
      done.push({ linesBefore, lineCount: r.lineCount });
      ranges.set(t.input, done);
    }
    for (let i = 0; i < r.ids.length; i++) {
      const row = r.lines ? linesBefore + r.lines[i]! : i;
      const who = identity.resolve(r.ids[i], r.instances[i]);
      const loc: Loc = r.offsets ? { input: t.input, rowGroup: t.rowGroup, row, offset: r.offsets[i]!, length: r.lengths![i]! } : { input: t.input, rowGroup: t.rowGroup, row };
      const rec = { trajectoryId: who.trajectoryId, instanceId: who.instanceId, repo: r.repos[i], resolved: r.resolved[i], loc, ...(status ? { extra: status[i] } : {}) };
      indexer.add(r.groups ? { ...rec, group: r.groups[i]! } : rec, () => {
        const at = r.lines ? `${path}:${row}` : `${path}: row group ${t.rowGroup}, row ${row}`;
        return who.note ? `${at} (${who.note})` : at;
      });
    }
  }
  progress.done();
  return indexer;
}

/** The exit-status filters need the column in every parquet input (JSONL lines are checked as they are read). */
function checkExitStatusColumn(inputs: InputFile[], metas: Layout['metas']): void {
  inputs.forEach((f, k) => {
    const m = metas[k];
    if (!m) return;
    const field = m.meta.fields.find((fl) => fl.name === EXIT_STATUS_COLUMN);
    if (!field) {
      throw new UserError(
        `${f.path}: --rejected-exit-status and --exclude-exit-status read the column ${EXIT_STATUS_COLUMN}, which this input lacks (found: ${m.meta.fields.map((fl) => fl.name).join(', ')})`,
        ExitCode.schema,
      );
    }
    if (!field.isString && field.type !== 'Null') throw new UserError(`${f.path}: column ${EXIT_STATUS_COLUMN} has type ${field.type}, expected a string`, ExitCode.schema);
  });
}

function exitStatusTask(t: Task): Task {
  if (t.kind === 'index') return { kind: 'column', path: t.path, rowGroup: t.rowGroup, column: EXIT_STATUS_COLUMN, engine: t.engine, rowOffset: t.rowOffset, rows: t.rows };
  if (t.kind === 'index-jsonl') return { kind: 'column-jsonl', path: t.path, column: EXIT_STATUS_COLUMN, purpose: '--rejected-exit-status and --exclude-exit-status', ...(t.range ? { range: t.range } : {}) };
  throw new Error(`internal error: no exit-status task for a ${t.kind} task`);
}

/** Stage 4: groups, eligibility and sampling (select.ts), then the partition's instances. */
function select({ req }: Run, indexer: Indexer<Loc>): Extraction {
  const part = req.partition;
  const { instances, counters } = indexer.finish(part ? (id) => partitionOf(id, part.count) === part.index : undefined);
  const selected: Selected<Loc>[] = [];
  for (const inst of instances) selected.push(...inst.resolved, ...inst.failed);
  const keyOf = new Map<Selected<Loc>, number>(selected.map((s, k) => [s, k]));
  return { instances, counters, badRowsIndexPass: counters.bad_rows, selected, keyOf };
}

/** The walk of stage 6 for the contract's JSONL rows, run by the workers as instances are decoded. */
function startEarlyWalk({ opts, pool, spillDir }: Run, ex: Extraction, refs: (list: Selected<Loc>[]) => SpillTrajectory[]): EarlyRun {
  const { instances, keyOf, counters } = ex;
  const instanceOf = new Int32Array(ex.selected.length);
  instances.forEach((inst, i) => {
    for (const s of [...inst.resolved, ...inst.failed]) instanceOf[keyOf.get(s)!] = i;
  });
  const walk = new EarlyWalk(
    pool,
    instances.map((inst) => inst.resolved.length + inst.failed.length),
    (i) => {
      const inst = instances[i]!;
      return { instanceId: inst.instanceId, resolved: refs(inst.resolved).map((t) => t.ref()), failed: refs(inst.failed).map((t) => t.ref()) };
    },
    { minSimilaritySkip: opts.minSimilaritySkip, maxPairsPerInstance: opts.maxPairsPerInstance },
    counters,
    join(spillDir, ROWS_FILE),
  );
  return { walk, instanceOf };
}

/**
 * Stage 5: decode only what was extracted, grouped by (input, row group), rows ascending; the
 * workers normalise, hash the keys and spill the messages. Fills `decoded` by key.
 */
async function decodePass(
  { req, opts, engine, pool, progress, fallbacks }: Run,
  { mapped, metas, detection }: Layout,
  ex: Extraction,
  decoded: (SpillTrajectory | null)[],
  early: EarlyRun | null,
  ranges: Map<number, NumberedRange[]>,
): Promise<void> {
  const { selected, counters } = ex;
  const schema = detection.schema;
  const groups = new Map<string, { loc: Loc; items: { row: number; key: number; offset?: number; length?: number }[] }>();
  selected.forEach((s, key) => {
    const g = `${s.loc.input}:${s.loc.rowGroup}`;
    if (!groups.has(g)) groups.set(g, { loc: s.loc, items: [] });
    groups.get(g)!.items.push(s.loc.offset !== undefined ? { row: s.loc.row, key, offset: s.loc.offset, length: s.loc.length! } : { row: s.loc.row, key });
  });
  const ordered = [...groups.values()].sort((a, b) => a.loc.input - b.loc.input || a.loc.rowGroup - b.loc.rowGroup);
  for (const g of ordered) g.items.sort((a, b) => a.row - b.row);
  const columnsOf = (input: number): string[] => {
    const m = mapped[input]!;
    return [m.messages, ...(metas[input]?.hasTools && m.tools ? [m.tools] : [])];
  };
  // Large row groups may be read by several workers, each for a run of its rows (split-decode.ts).
  const workers = pool.size;
  const pieces = planPieces(
    ordered.map(({ loc, items }) => {
      const f = req.inputs[loc.input]!;
      const parquet = f.kind === 'parquet';
      const groupRows = parquet ? metas[loc.input]!.meta.rowGroupRows[loc.rowGroup]! : items.length;
      // Our reader skips the pages without a wanted row; the others read the group as one stream. One
      // worker never cuts a group: its headers are not read.
      const shape = parquet && engine === 'js' && workers > 1 ? pageShapeOf(f.path, loc.rowGroup, columnsOf(loc.input)) : null;
      return {
        groupRows,
        rows: parquet ? items.map((x) => x.row) : items.map((_, k) => k),
        pageRows: shape?.rowsPerPage ?? groupRows,
        wholePages: shape?.wholePages ?? false,
        // Our reader only (parquet-wasm and DuckDB hold whole row groups), and never two readers of
        // pages decoded whole of SPLIT_PAGE_LIMIT or more (DuckDB's 380 MB snappy pages).
        splittable: once(() => {
          if (!parquet || engine !== 'js') return false;
          const largest = largestWholePageOf(f.path, loc.rowGroup, columnsOf(loc.input));
          return largest !== null && largest < SPLIT_PAGE_LIMIT;
        }),
      };
    }),
    workers,
  );
  // A JSONL input read in ranges is decoded in them too: one task per range with wanted lines, so that
  // every worker decodes (planPieces never cuts a JSONL input; each task reads its lines by offset).
  const placed = pieces.flatMap((p) => {
    const { loc, items } = ordered[p.group]!;
    const cut = req.inputs[loc.input]!.kind === 'parquet' ? undefined : ranges.get(loc.input);
    if (!cut) return [p];
    const out: typeof pieces = [];
    for (let i = p.from; i < p.to; ) {
      const range = cut[rangeOfLine(cut, items[i]!.row)]!;
      let j = i + 1;
      while (j < p.to && items[j]!.row <= range.linesBefore + range.lineCount) j++;
      out.push({ group: p.group, from: i, to: j });
      i = j;
    }
    return out;
  });
  const decodeTasks: { task: Task; rows: number }[] = placed.map(({ group, from, to }) => {
    const { loc, items: all } = ordered[group]!;
    const items = all.slice(from, to);
    const f = req.inputs[loc.input]!;
    const rows = items.map((x) => x.row);
    const keys = items.map((x) => x.key);
    const reasoningKeys = [...opts.reasoningKeys];
    const withTools = Boolean(metas[loc.input]?.hasTools ?? req.withTools);
    const task: Task =
      f.kind === 'parquet'
        ? {
            kind: 'decode',
            path: f.path,
            rowGroup: loc.rowGroup,
            rows,
            keys,
            reasoningKeys,
            withTools,
            engine,
            rowOffset: metas[loc.input]!.meta.rowGroupRows.slice(0, loc.rowGroup).reduce((a, b) => a + b, 0),
            mapping: mapped[loc.input]!,
            schema,
          }
        : {
            kind: 'decode-jsonl',
            path: f.path,
            lines: rows,
            keys,
            reasoningKeys,
            withTools,
            mapping: mapped[loc.input]!,
            schema,
            ...(items.every((x) => x.offset !== undefined) ? { spans: { offsets: items.map((x) => x.offset!), lengths: items.map((x) => x.length!) } } : {}),
          };
    // Progress counts the group's rows once, shared by its pieces in proportion to their wanted rows.
    const groupRows = f.kind === 'parquet' ? metas[loc.input]!.meta.rowGroupRows[loc.rowGroup]! : all.length;
    return { task, rows: Math.round((groupRows * to) / all.length) - Math.round((groupRows * from) / all.length) };
  });
  progress.phase('decode', decodeTasks.length, decodeTasks.reduce((a, t) => a + t.rows, 0));
  const bad = new Map<number, string>();
  await Promise.all(
    decodeTasks.map(async ({ task, rows }) => {
      const r = await pool.run<DecodeResult>(task);
      if (task.kind === 'decode') fallbacks.add(task.path, task.rowGroup, r.fallback);
      counters.malformed_arguments += r.malformed_arguments;
      counters.unknown_roles += r.unknown_roles;
      for (const t of r.trajectories) {
        const s = selected[t.key]!;
        if (t.bad !== undefined) bad.set(t.key, t.bad);
        else decoded[t.key] = new SpillTrajectory(s.trajectoryId, s.repo, t, pool.spillPath(r.spill));
        early?.walk.done(early.instanceOf[t.key]!);
      }
      early?.walk.dispatch();
      progress.advance(1, rows);
    }),
  );
  progress.done();
  for (const [key, why] of [...bad].sort((a, b) => a[0] - b[0])) {
    const s = selected[key]!;
    const f = req.inputs[s.loc.input]!;
    const where = f.kind === 'parquet' ? `${f.path}: row group ${s.loc.rowGroup}, row ${s.loc.row}` : `${f.path}:${s.loc.row}`;
    if (!opts.skipBadRows) throw new UserError(`${where}: trajectory ${s.trajectoryId}: ${why} (use --skip-bad-rows to count and skip such rows)`, ExitCode.badValue);
    counters.bad_rows++;
  }
}

/** `f`'s answer, computed on the first call (reading page headers costs I/O). */
function once(f: () => boolean): () => boolean {
  let v: boolean | undefined;
  return () => (v ??= f());
}

/** A row group with a page decoded whole of this size or more is read by one worker only (memory). */
const SPLIT_PAGE_LIMIT = 32 * 2 ** 20;

/** Stage 6 for every other layout: walk in this thread, in instance order, and hand rows to the sink. */
async function walkAndWrite(
  { opts, pool, reader }: Run,
  { instances, keyOf, counters }: Extraction,
  decoded: (SpillTrajectory | null)[],
  refs: (list: Selected<Loc>[]) => SpillTrajectory[],
  cont: Continuations,
  sink: (pair: MinedPair) => Promise<void>,
): Promise<void> {
  // The pair objects are needed here: free the workers' memory first.
  await pool.close();
  for (const inst of instances) {
    const [resolved, failed] = [refs(inst.resolved).map((t) => t.load(reader)), refs(inst.failed).map((t) => t.load(reader))];
    const rows = walkInstance(resolved, failed, opts, hooksFor(inst, reader, cont), counters);
    for (const row of rows) {
      const chosen = decoded[keyOf.get(inst.resolved.find((s) => s.trajectoryId === row.chosen_trajectory_id)!)!]!;
      const c = cont?.rows.get(row);
      await sink({ row, tools: chosen.tools, ...(c ? { continuation: c } : {}) });
    }
    cont?.rows.clear();
    for (const t of [...resolved, ...failed]) t.unload();
  }
}

/**
 * Stage 6 of `--pairing tree`: instance by instance in order, every decoded attempt of both sides,
 * the tree built from the messages' comparison-key hashes (tree-walk.ts), rows read back for the kept pairs.
 */
async function walkTreeAndWrite(
  { pool, reader }: Run,
  tree: TreeOptions,
  { instances, keyOf }: Extraction,
  decoded: (SpillTrajectory | null)[],
  sink: (pair: MinedPair) => Promise<void>,
): Promise<{ counters: TreeCounters; gaps: number[] }> {
  await pool.close();
  const counters = emptyTreeCounters();
  const gaps = emptyGapHistogram();
  for (const inst of instances) {
    const attempts: SpillAttempt[] = [];
    for (const [list, resolved] of [[inst.resolved, true], [inst.failed, false]] as const) {
      for (const s of list) {
        const t = decoded[keyOf.get(s)!];
        if (t) attempts.push(new SpillAttempt(t.load(reader), resolved, s.rank));
      }
    }
    const pairs = walkTreeInstance(inst.instanceId, attempts, tree, reader, counters, gaps);
    const hex = (k: string) => Buffer.from(k, 'latin1').toString('hex');
    for (const p of pairs) await sink({ row: p.row, tools: p.promptAttempt.t.tools, tree: p.tree, branches: [hex(p.branches[0]), hex(p.branches[1])] });
    for (const a of attempts) a.t.unload();
  }
  return { counters, gaps };
}

function noEligibleReason(c: Counters): string {
  const labelled = c.trajectories_read - c.duplicate_trajectory_ids - c.unlabelled - c.bad_rows;
  if (c.trajectories_read === 0) return 'no eligible instances: the input has no rows';
  if (labelled === 0) return `no eligible instances: none of the ${c.trajectories_read} rows has a resolved label of 0 or 1`;
  return `no eligible instances: no instance has both a resolved and a failed trajectory (${c.instances} instances)`;
}
