// What `divergence-mine mine | merge | report` starts first: a supervisor that runs the real CLI
// (cli.ts) as a child process and outlives it. A V8 fatal error in any thread (`Fatal JavaScript invalid size error`, a heap out
// of memory), a native crash or the OOM killer ends the CLI process with no JS left to run; the
// supervisor then removes the temporary outputs, spill folder and made folders the child listed on
// its manifest (io/supervision.ts) and prints one internal-error line, exit 1. Otherwise it only
// waits: stdin and stdout are the child's own (EPIPE is the child's business, as before), signals are
// passed on, the child's exit code is the exit code. Kept small (no import of the CLI, no work
// before the spawn) because every run pays for it: one more Node start-up (README "How it works").
import { spawn } from 'node:child_process';
import { rmSync, writeSync } from 'node:fs';
import { availableParallelism, constants } from 'node:os';
import type { Readable } from 'node:stream';
import { ExitCode } from './errors.js';
import { CHILD_FD, SUPERVISED_ENV, TIMELINE_ENV, TIMELINE_ORIGIN_ENV, decodeEntry, type ManifestEntry } from './io/supervision.js';
import { neutralise } from './io/terminal-text.js';
import { SMALL_INPUT_BYTES, regularFileSize } from './io/input-size.js';

/**
 * The commands that write files (temporary outputs, spill folders) run supervised; `show`,
 * `check-template`, `--help` and `--version` write none and run in the one process, without the
 * second start-up.
 */
const SUPERVISED_COMMANDS = new Set(['mine', 'merge', 'report']);

export function needsSupervisor(args: readonly string[]): boolean {
  return SUPERVISED_COMMANDS.has(args[0] ?? '');
}

/** Signals passed on to the child; it cleans up and exits 130 / 143 (SIGHUP: the supervisor's own line, 129). */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** What is kept of the child's fd 2 (only native code writes there): enough for V8's report. */
const NATIVE_TEXT_LIMIT = 64 * 1024;

/** The paths a manifest still holds after its last line: temp paths and made folders, in the order made. */
export class Manifest {
  private readonly open = new Map<string, ManifestEntry>();
  private rest = '';

  /** Feed a chunk of manifest text (lines may be split across chunks). */
  add(chunk: string): void {
    const lines = (this.rest + chunk).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) {
      const e = decodeEntry(line);
      if (!e) continue;
      if (e.op === 'drop') this.open.delete(e.path);
      else this.open.set(e.path, e);
    }
  }

  /** Entries not dropped, in the order they were made. */
  pending(): ManifestEntry[] {
    return [...this.open.values()];
  }

  /** Remove them: temporary paths first (newest first), then the folders made for them. */
  async removeAll(): Promise<void> {
    const list = this.pending().reverse();
    for (const e of list) {
      if (e.op !== 'temp') continue;
      try {
        rmSync(e.path, { recursive: true, force: true });
      } catch {
        // Not ours to fix here: a leftover that stays is only disk space (the next run sweeps it).
      }
    }
    // Loaded only now: nothing the supervisor does not need before the CLI starts.
    const { removeEmptyFolders } = list.some((e) => e.op === 'folders') ? await import('./io/atomic.js') : { removeEmptyFolders: null };
    for (const e of list) if (e.op === 'folders') removeEmptyFolders!(e.path, e.top);
    this.open.clear();
  }
}

/** The line of V8's or Node's fatal report that says what happened, if the child's fd 2 holds one. */
export function fatalReason(text: string): string | null {
  const m = /^#? ?(Fatal JavaScript [^\n]*|FATAL ERROR: [^\n]*|Fatal error in [^\n]*\n# [^\n]*|abort: [^\n]*|[^\n]*Assertion failed[^\n]*)/m.exec(text);
  if (!m) return null;
  // "Fatal error in , line 0\n# Fatal JavaScript ...": the second line is the one that says something.
  const line = m[1]!.includes('\n# ') ? m[1]!.split('\n# ')[1]! : m[1]!;
  const one = neutralise(line.trim());
  return one.length > 300 ? `${one.slice(0, 300)}…` : one;
}

/** The one stderr line for a child that died of `signal` (null: it did not). */
export function deathLine(signal: NodeJS.Signals, nativeText: string): { line: string; code: number } {
  if (signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP') {
    return { line: `\ndivergence-mine: interrupted (${signal}); no output written\n`, code: 128 + constants.signals[signal] };
  }
  const reason = fatalReason(nativeText);
  const what = signal === 'SIGKILL' ? 'the process was killed (SIGKILL; the kernel\'s OOM killer sends it when memory runs out)' : `the process died (${signal}${reason ? `: ${reason}` : ''})`;
  return { line: `divergence-mine: internal error (a bug, please report it): ${what}; temporary files removed, no output written\n`, code: ExitCode.bug };
}

/** Our own lines go straight to fd 2: no stream to set up (and no change to its blocking mode). */
function say(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    // stderr closed: nothing to tell
  }
}

/**
 * V8 flags for the child. A `mine` whose decode workers take every core gets up to two, each because
 * V8's background threads would only compete with the workers for the cores:
 * - `--single-threaded-gc`: the GC's work is cheaper on the thread that allocates (67k snappy copy,
 *   two workers on two cores: 16.01-16.11 s against 16.57-17.37 s, interleaved; bench/README.md "One
 *   GC thread per worker");
 * - `--no-concurrent-recompilation`, with our own reader only (`--engine js`, the default): each
 *   isolate compiles its hot functions itself, when they turn hot, instead of running on in slower
 *   code until a busy background thread gets to them (5,000-row files, two workers: 0.93x the wall
 *   and CPU, interleaved; bench/README.md "Optimising compiles on the workers' own threads"). With
 *   `--engine duckdb` the workers wait on DuckDB's own threads, and the flag cost 2-14%; with
 *   `--engine wasm` it neither won nor lost (5,000-row twin, five rounds each).
 * Fewer workers than cores leave the background threads a core of their own (there the second flag
 * costs 13% on the 5,000-row twin), and so does a `mine` without --workers whose inputs are files
 * under SMALL_INPUT_BYTES in all: it runs one worker (engine/mine-pairs.ts poolSize; the writer
 * matrix's zstd file, 2,520 rows in 102 KB: 1.28 s without the flags, 1.54 s with them). An input
 * this cannot size (a folder, a glob, a Hub dataset) counts as large, as before. A flag the user gave
 * in either form is left alone.
 */
export function childV8Flags(args: readonly string[], execArgv: readonly string[], cores: number, sizeOf: (path: string) => number | null = regularFileSize): string[] {
  if (args[0] !== 'mine') return [];
  const line = mineLine(args);
  const workers = line.workers ?? cores;
  if (!(Number.isFinite(workers) && workers >= cores)) return [];
  if (line.workers === null && line.inputs !== null && line.inputs.length > 0) {
    let bytes = 0;
    for (const path of line.inputs) bytes += sizeOf(path) ?? Infinity;
    if (bytes < SMALL_INPUT_BYTES) return [];
  }
  const flags = ['--single-threaded-gc', ...(line.engine === 'js' ? ['--no-concurrent-recompilation'] : [])];
  return flags.filter((flag) => !execArgv.some((a) => a.includes(flag.replace(/^--(no-)?/, ''))));
}

/**
 * The options of `mine` that take no value (commander's switches; test/supervisor-flags.test.ts
 * checks this list against the command's definition). Every other option takes the next argument.
 */
export const MINE_SWITCHES: ReadonlySet<string> = new Set(['--skip-bad-rows', '--quiet', '--force', '--behavior', '--help']);
export const MINE_SHORT_SWITCHES: ReadonlySet<string> = new Set(['q', 'f', 'h']);

/**
 * What the supervisor reads of a `mine` command line, as commander will: --workers and --engine (the
 * last one given wins; a bad value is the CLI's to refuse), and the inputs (--parquet, --jsonl and
 * the positional arguments; null when a short option it does not know leaves that unclear).
 */
export function mineLine(args: readonly string[]): { workers: number | null; engine: string; inputs: string[] | null } {
  let workers: number | null = null;
  let engine = 'js';
  let inputs: string[] | null = [];
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      inputs?.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a : a.slice(0, eq);
      if (eq < 0 && MINE_SWITCHES.has(name)) continue;
      const value = eq < 0 ? args[++i] : a.slice(eq + 1);
      if (name === '--workers') workers = Number(value);
      else if (name === '--engine') engine = value ?? '';
      else if ((name === '--parquet' || name === '--jsonl') && value !== undefined) inputs?.push(value);
    } else if (a.startsWith('-') && a.length > 1) {
      // -q, -f, -h, alone or together (-qf); another short option could take the next argument.
      if (![...a.slice(1)].every((c) => MINE_SHORT_SWITCHES.has(c))) inputs = null;
    } else inputs?.push(a);
  }
  return { workers, engine, inputs };
}

/** Run `script` (the CLI) with `args` under supervision; exits this process with the child's code. */
export function supervise(script: string, args: string[]): void {
  const v8Flags = childV8Flags(args, process.execArgv, availableParallelism());
  const child = spawn(process.execPath, [...process.execArgv, ...v8Flags, script, ...args], {
    env: {
      ...process.env,
      [SUPERVISED_ENV]: '1',
      // io/timeline.ts counts from this process's start, the run's first (not imported: kept small).
      ...(process.env[TIMELINE_ENV] === '1' ? { [TIMELINE_ORIGIN_ENV]: String(performance.timeOrigin) } : {}),
    },
    // fd 2: native text; CHILD_FD: 3 our stderr, 4 the manifest, 5 the lifeline (io/supervision.ts).
    stdio: ['inherit', 'inherit', 'pipe', 2, 'pipe', 'pipe'],
  });
  for (const s of FORWARDED) {
    process.on(s, () => {
      // The terminal's Ctrl-C reaches the child too (one process group); a second copy is harmless.
      if (child.exitCode === null && child.signalCode === null) child.kill(s);
    });
  }
  const manifest = new Manifest();
  const pipes = child.stdio as unknown as (Readable | null)[];
  const manifestPipe = pipes[CHILD_FD.manifest]!;
  manifestPipe.setEncoding('utf8');
  manifestPipe.on('data', (chunk: string) => manifest.add(chunk));
  let native = '';
  const nativePipe = child.stderr!;
  nativePipe.setEncoding('utf8');
  nativePipe.on('data', (chunk: string) => {
    // Read on past the limit, so that a writer never blocks on a full pipe.
    if (native.length < NATIVE_TEXT_LIMIT) native += chunk.slice(0, NATIVE_TEXT_LIMIT - native.length);
  });
  pipes[CHILD_FD.lifeline]!.on('error', () => {});
  child.on('error', (e) => {
    say(`divergence-mine: internal error (a bug, please report it): cannot start the CLI process (${neutralise(e.message)})\n`);
    process.exit(ExitCode.bug);
  });
  // 'close': the child has exited and every pipe is read to its end (the whole manifest is in).
  child.on('close', async (code, signal) => {
    await manifest.removeAll();
    if (signal) {
      const d = deathLine(signal, native);
      say(d.line);
      process.exit(d.code);
    }
    // A normal exit: anything native code wrote (rare: a Node warning printed natively) is passed on.
    if (native) say(native);
    process.exit(code ?? ExitCode.bug);
  });
}
