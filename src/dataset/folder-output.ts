// Where `mine` writes when the output is a folder (`--split` and/or `--shards` / `--shard-bytes`):
//
//   DIR/train.EXT                          no sharding
//   DIR/train-00000-of-0000N.EXT ...       --shards N / --shard-bytes SIZE (balanced by bytes, see split.ts)
//   DIR/dev.EXT                            one file per `--split` name (never sharded)
//
// Held-out splits (and an unsharded train) stream straight into their files. A sharded train is
// spooled first, as JSONL lines of the output row, because a shard plan needs every instance's total
// bytes: the spool is then distributed over the shards in one pass (row order inside a shard is the
// output order). Parquet shards are written one at a time from per-shard spools, so only one parquet
// encoder is open at any time.
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { openSink, type OutputFormat, type OutputLayout } from './file-output.js';
import { makeFolders, removeStale, removeTemp, trackTemp, writtenPath } from '../io/atomic.js';
import { JsonlSink } from '../io/jsonl-writer.js';
import type { RowSink } from '../io/sink.js';
import { parseKeepingNumbers, stringifyKeepingNumbers } from '../contract/json-numbers.js';
import { planShards, shardCountForBytes, shardFileName, splitFileName, type ShardPlan } from './split.js';

export type Sharding = { count: number } | { bytes: number } | null;

export interface FolderSpec {
  dir: string;
  format: OutputFormat;
  layout: OutputLayout;
  /** Split names in report order; always starts with `train`. */
  splits: readonly string[];
  sharding: Sharding;
  force: boolean;
}

export interface WrittenFile {
  split: string;
  /** Path as written (DIR joined with the file name). */
  path: string;
  name: string;
  rows: number;
  bytes: number;
  /** For shards: the JSON bytes of their rows that the plan balanced. */
  planBytes?: number;
}

export interface FolderResult {
  files: WrittenFile[];
  /** Number of train shards, or null when train is one file. */
  trainShards: number | null;
}

/** Files of a previous run this run could collide with: `<split>.<ext>` and `<split>-NNNNN-of-NNNNN.<ext>`. */
export function ownedFiles(dir: string, splits: readonly string[], ext: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`^(?:${splits.map(esc).join('|')})(?:-\\d{5}-of-\\d{5})?\\.${esc(ext)}$`);
  return names.filter((n) => re.test(n)).sort();
}

/**
 * Check (and create) the output folder before any work: its parent exists; it is a folder; it holds
 * no file this run would write, unless --force (then those files are replaced and stale shards of
 * an earlier run with another shard count are removed at the end).
 */
/** `created`: the first folder this made (the output folder or one of its parents), tracked to be removed on failure. */
export function prepareFolder(spec: FolderSpec): { created: string | null } {
  let st;
  try {
    st = statSync(spec.dir);
  } catch {
    st = null;
  }
  if (st && !st.isDirectory())
    throw new UserError(`${spec.dir}: with --split or --shards, --out names a folder; this is a file`, ExitCode.output);
  if (!st) {
    const created = makeFolders(spec.dir, (e) => new UserError(`${spec.dir}: cannot create the output folder (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, ExitCode.folder));
    return { created: created ?? null };
  }
  const existing = ownedFiles(spec.dir, spec.splits, spec.format);
  if (existing.length > 0 && !spec.force)
    throw new UserError(
      `${spec.dir}: already holds ${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', ...' : ''} (use --force to overwrite)`,
      ExitCode.output,
    );
  return { created: null };
}

interface SplitTarget {
  split: string;
  name: string | null;
  sink: RowSink<unknown>;
  rows: number;
  /** Only for the sharded train split: group key and JSON bytes of every spooled row. */
  keys?: string[];
  sizes?: number[];
  spoolPath?: string;
}

export class FolderOutput {
  private readonly targets = new Map<string, SplitTarget>();
  private readonly temps = new Set<string>();
  private readonly open = new Set<RowSink<unknown>>();
  private readonly ext: string;

  constructor(private readonly spec: FolderSpec) {
    this.ext = spec.format;
    for (const split of spec.splits) {
      if (split === 'train' && spec.sharding) {
        const spoolPath = this.temp(`.train.spool-${process.pid}.jsonl`);
        const sink = this.track(new JsonlSink<unknown>(spoolPath));
        this.targets.set(split, { split, name: null, sink, rows: 0, keys: [], sizes: [], spoolPath });
      } else {
        const name = splitFileName(split, this.ext);
        this.targets.set(split, { split, name, sink: this.track(openSink(join(spec.dir, name), spec.layout, spec.format)), rows: 0 });
      }
    }
  }

  private temp(name: string): string {
    const p = join(this.spec.dir, name);
    trackTemp(p);
    this.temps.add(p);
    return p;
  }

  private dropTemp(p: string): void {
    removeTemp(p);
    this.temps.delete(p);
  }

  private track<S extends RowSink<unknown>>(s: S): S {
    this.open.add(s);
    return s;
  }

  private async closeSink(s: RowSink<unknown>): Promise<void> {
    await s.close();
    this.open.delete(s);
  }

  /** Write one output row to its split; `groupKey` is the instance (the shard unit). */
  async write(split: string, row: unknown, groupKey: string): Promise<void> {
    const t = this.targets.get(split);
    if (!t) throw new Error(`unknown split ${split}`);
    t.rows++;
    if (t.keys) {
      const line = stringifyKeepingNumbers(row)!;
      t.keys.push(groupKey);
      t.sizes!.push(Buffer.byteLength(line) + 1);
      await (t.sink as JsonlSink<unknown>).writeLine(line);
    } else await t.sink.write(row);
  }

  async close(): Promise<FolderResult> {
    const files: WrittenFile[] = [];
    let trainShards: number | null = null;
    for (const t of this.targets.values()) {
      await this.closeSink(t.sink);
      if (!t.keys) {
        const path = join(this.spec.dir, t.name!);
        files.push({ split: t.split, path, name: t.name!, rows: t.rows, bytes: statSync(writtenPath(path)).size });
        continue;
      }
      const shards = await this.writeShards(t);
      trainShards = shards.length;
      files.push(...shards);
    }
    // Stale files of an earlier run (e.g. train-00003-of-00004 after a run with 2 shards).
    const written = new Set(files.map((f) => f.name));
    for (const n of ownedFiles(this.spec.dir, this.spec.splits, this.ext)) if (!written.has(n)) removeStale(join(this.spec.dir, n));
    const order = new Map(this.spec.splits.map((s, i) => [s, i]));
    files.sort((a, b) => order.get(a.split)! - order.get(b.split)! || (a.name < b.name ? -1 : 1));
    return { files, trainShards };
  }

  private async writeShards(t: SplitTarget): Promise<WrittenFile[]> {
    const sizes = t.sizes!;
    const keys = t.keys!;
    const total = sizes.reduce((a, b) => a + b, 0);
    const sh = this.spec.sharding!;
    const n = 'count' in sh ? sh.count : shardCountForBytes(total, sh.bytes);
    const plan: ShardPlan = planShards(
      keys.map((groupKey, i) => ({ groupKey, bytes: sizes[i]! })),
      n,
    );
    const names = Array.from({ length: plan.count }, (_, k) => shardFileName(t.split, k, plan.count, this.ext));
    const shardOfRow = (i: number): number => plan.shardOf.get(keys[i]!) ?? 0;
    const rowsPer = new Array<number>(plan.count).fill(0);
    const bytesPer = new Array<number>(plan.count).fill(0);
    keys.forEach((_, i) => {
      rowsPer[shardOfRow(i)]!++;
      bytesPer[shardOfRow(i)]! += sizes[i]!;
    });
    const spool = t.spoolPath!;
    const parquet = this.spec.format === 'parquet';

    if (!parquet || plan.count === 1) {
      // One pass: JSONL shards take the spooled lines verbatim; a single parquet shard parses them.
      const sinks = names.map((name) => this.track(openSink(join(this.spec.dir, name), this.spec.layout, this.spec.format)));
      await eachLine(spool, async (line, i) => {
        const s = sinks[shardOfRow(i)]!;
        if (s instanceof JsonlSink) await s.writeLine(line);
        else await s.write(parseKeepingNumbers(line));
      });
      for (const s of sinks) await this.closeSink(s);
    } else {
      // Parquet: spool per shard, then encode the shards one after another.
      const parts = names.map((_, k) => this.temp(`.train-${k}.spool-${process.pid}.jsonl`));
      const partSinks = parts.map((p) => this.track(new JsonlSink<unknown>(p)));
      await eachLine(spool, (line, i) => partSinks[shardOfRow(i)]!.writeLine(line));
      for (const s of partSinks) await this.closeSink(s);
      this.dropTemp(spool);
      for (let k = 0; k < plan.count; k++) {
        const sink = this.track(openSink(join(this.spec.dir, names[k]!), this.spec.layout, this.spec.format));
        await eachLine(parts[k]!, (line) => sink.write(parseKeepingNumbers(line)));
        await this.closeSink(sink);
        this.dropTemp(parts[k]!);
      }
    }
    if (this.temps.has(spool)) this.dropTemp(spool);
    return names.map((name, k) => {
      const path = join(this.spec.dir, name);
      return { split: t.split, path, name, rows: rowsPer[k]!, bytes: statSync(writtenPath(path)).size, planBytes: bytesPer[k]! };
    });
  }

  abort(): void {
    for (const s of this.open) s.abort();
    this.open.clear();
    for (const p of [...this.temps]) this.dropTemp(p);
  }
}

async function eachLine(path: string, f: (line: string, index: number) => Promise<void>): Promise<void> {
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let i = 0;
  for await (const line of rl) {
    if (line === '') continue;
    await f(line, i++);
  }
}
