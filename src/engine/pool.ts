// A fixed pool of decode workers with a FIFO task queue. Every task settles: a worker that dies (wasm
// trap, out of memory, an uncaught throw), a reply that cannot be deserialised, or a failed task fails
// it with an error naming what it was reading. Bad bytes (UserError, decoder errors, wasm traps) are
// one-line input errors; anything else is a bug in our code: exit 1 with the worker's stack.
import { join } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { ExitCode, UserError, isStringLimit, stringLimitMessage, type ErrorPayload } from '../errors.js';
import type { Task, WalkTrajectory, WorkerMessage, WorkerReply } from './protocol.js';
import { SpillSpace } from './spill-space.js';
import type { PureJsDecoder } from '../parquet/inflate.js';
import { mark } from '../io/timeline.js';

interface Pending {
  id: number;
  task: Task;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** Queued with `front` (a short task others wait on). */
  front: boolean;
}

/** The file and the part of it a task reads, for error messages. */
function describe(task: Task): string {
  switch (task.kind) {
    case 'meta':
      return `${task.path} (footer metadata)`;
    case 'index':
      return `${task.path} (row group ${task.rowGroup}, columns trajectory_id, instance_id, resolved${task.hasRepo ? ', repo' : ''})`;
    case 'decode':
      return `${task.path} (row group ${task.rowGroup}, column trajectory${task.withTools ? ', tools' : ''})`;
    case 'walk':
      return `spill files (walk of ${task.instances.length} instances from ${task.instances[0]?.instanceId ?? '-'})`;
    default:
      return task.path;
  }
}

/** A decoder failure in words: a wasm trap (RuntimeError) means the decoder gave up on bad bytes. */
function explain(err: { name?: string; message: string }): string {
  if (err.name === 'RuntimeError') return `corrupt or unsupported data (the parquet decoder stopped: ${err.message})`;
  return err.message;
}

/** Errors about the input's bytes: a third-party decoder's error (errors.ts DecoderError) or a wasm trap. */
const INPUT_ERRORS = new Set(['DecoderError', 'RuntimeError']);

/** A bug in a worker (ours, not the input's): the CLI prints the stack and exits 1. */
function internalError(task: Task | undefined, err: ErrorPayload): Error {
  const e = new Error(`${task ? describe(task) : 'worker'}: ${err.name ?? 'error'} in a worker: ${err.message}`);
  e.name = 'WorkerBug';
  e.stack = `${e.name}: ${e.message}\n${err.stack ? `worker stack:\n${err.stack}` : '(no stack: the worker threw a non-Error value)'}`;
  return e;
}

/** The error a failed task's reply (or a worker's death) stands for. */
export function taskError(task: Task | undefined, err: ErrorPayload): Error {
  if (err.exitCode !== null) return new UserError(err.message, err.exitCode);
  if (isStringLimit(err)) return new UserError(stringLimitMessage(task ? describe(task) : 'worker', err), ExitCode.badValue);
  if (INPUT_ERRORS.has(err.name ?? '')) return new UserError(`${task ? describe(task) : 'decoder'}: cannot decode: ${explain(err)}`, ExitCode.corrupt);
  return internalError(task, err);
}

/** What a worker's 'error' event carries, as a payload: any value can be thrown. */
function deathPayload(err: unknown): ErrorPayload {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return { message: `a worker ran out of memory (${err.message}); try fewer --workers or more memory`, exitCode: ExitCode.bug };
    }
    return { message: err.message, exitCode: null, name: err.name, stack: err.stack };
  }
  return { message: `a worker died throwing a non-Error value: ${String(err)}`, exitCode: null, name: 'NonError' };
}

export interface PoolOptions {
  /** The worker script (tests give their own); default read/worker.js. */
  workerUrl?: URL;
  resourceLimits?: ResourceLimits;
  /**
   * For workers that run native async work (DuckDB): after the first failed task no new task starts,
   * and close() lets the tasks in flight settle (at most DRAIN_MS) before it terminates the workers.
   * Terminating a worker while a DuckDB query runs aborts the whole process in native code
   * (Napi::AsyncWorker completing during the worker's teardown).
   */
  drainOnClose?: boolean;
  /** Called once per codec, the first time a worker reports decoding it with a pure-JS fallback. */
  onPureJs?: (d: PureJsDecoder) => void;
  /** Take the worker startEarlyWorker started, if it is alive, as worker 0 (the default worker script only). */
  adoptEarly?: boolean;
  /**
   * The workers place each trajectory in their spill files where spill-space.ts says, and the space
   * of trajectories released with `release` is written again (the early walk's runs).
   */
  placeSpill?: boolean;
}

/** The decode worker's script. */
const WORKER_URL = new URL('./worker.js', import.meta.url);

/** The worker startEarlyWorker started, until a pool adopts it; `dead` once it has died unadopted. */
let early: { worker: Worker; dead: boolean; onDeath: () => void } | null = null;
/** Set once a pool took the early worker: one per process. */
let earlyTaken = false;

/**
 * Start one decode worker before any pool exists. The CLI calls this as soon as it knows the command
 * mines: a worker's start-up (Node's worker bootstrap and the worker's modules, 150-180 ms here) then
 * runs beside the main thread's own module loading and option checks instead of after them. The first
 * pool that opts in (`adoptEarly`) takes it as worker 0 and sends it its spill path before its first
 * task. Unreferenced until then: a run that ends before any pool (a usage error) does not wait for it.
 * Returns the worker waiting for a pool (one started before and still alive, if any), or null once a
 * pool has taken one.
 */
export function startEarlyWorker(): Worker | null {
  if (early && !early.dead) return early.worker;
  if (earlyTaken) return null;
  mark('pool: worker 0 starting early');
  const worker = new Worker(WORKER_URL, { workerData: { spillPath: null, spillIndex: 0 } });
  worker.unref();
  // Dead before adoption (it failed to load): the pool starts its own worker 0, which will say why.
  const e = { worker, dead: false, onDeath: () => (e.dead = true) };
  worker.on('error', e.onDeath);
  worker.on('exit', e.onDeath);
  early = e;
  return worker;
}

/** The early worker, once, if it is still alive. */
function takeEarlyWorker(): Worker | null {
  const e = early;
  if (!e || e.dead) return null;
  early = null;
  earlyTaken = true;
  e.worker.off('error', e.onDeath);
  e.worker.off('exit', e.onDeath);
  e.worker.ref();
  return e.worker;
}

/** The longest close() waits for tasks in flight, with drainOnClose. */
export const DRAIN_MS = 10_000;

export class Pool {
  private readonly workers: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;
  /** Set when the last worker died: later tasks fail with it instead of waiting forever. */
  private dead: Error | null = null;
  /** With drainOnClose: a task failed, so nothing new starts (the run is ending). */
  private failed = false;
  /** Called whenever a busy worker settles (close() waits on it with drainOnClose). */
  private onSettled: (() => void) | null = null;

  /** Workers started so far; worker k writes spill file k (spillPath). */
  private spawned = 0;
  /** Spill file -> its shared space, with placeSpill. */
  private readonly spaces = new Map<string, SpillSpace>();
  private readonly url: URL;

  // Workers start on demand, up to `limit`: a small input whose tasks come one at a time pays for one
  // worker's start-up (its module loading) instead of one per core. Output never depends on how many run.
  constructor(
    private readonly limit: number,
    private readonly spillDir: string,
    private readonly options: PoolOptions = {},
  ) {
    this.url = options.workerUrl ?? WORKER_URL;
  }

  private spawn(): Worker {
    const k = this.spawned++;
    const { resourceLimits } = this.options;
    const adopted = k === 0 && this.options.adoptEarly && !this.options.workerUrl && !resourceLimits ? takeEarlyWorker() : null;
    mark(adopted ? 'pool: worker 0 adopted (started early)' : `pool: worker ${k} starting`);
    const space = this.options.placeSpill ? new SpillSpace() : null;
    if (space) this.spaces.set(this.spillPath(k), space);
    const spillSpace = space?.shared ?? null;
    if (adopted) adopted.postMessage({ spillPath: this.spillPath(0), spillSpace } satisfies WorkerMessage);
    const w = adopted ?? new Worker(this.url, { workerData: { spillPath: this.spillPath(k), spillIndex: k, spillSpace }, ...(resourceLimits ? { resourceLimits } : {}) });
    w.on('message', (reply: WorkerReply) => this.onReply(w, reply));
    // A reply that cannot be deserialised here: its task would otherwise wait forever.
    w.on('messageerror', (err) => this.onUnreadable(w, err));
    w.on('error', (err) => this.onDeath(w, deathPayload(err)));
    w.on('exit', (code) => {
      if (!this.closed) this.onDeath(w, { message: `a worker exited unexpectedly with code ${code}`, exitCode: null, name: 'WorkerExit' });
    });
    this.workers.push(w);
    return w;
  }

  get size(): number {
    return this.workers.length;
  }

  /** The most workers this pool starts (the run's --workers, fitted to its input). */
  get capacity(): number {
    return this.limit;
  }

  /** Start workers up to `n` (at most the limit) now, so that their start-up overlaps the first tasks. */
  warm(n: number): void {
    if (this.closed || this.failed || this.dead) return;
    while (this.spawned < Math.min(n, this.limit)) this.spawn();
  }

  /**
   * A walked trajectory's spill space may be written again (placeSpill; nothing reads the trajectory
   * after this). Without placeSpill there is nothing to release.
   */
  release(t: Pick<WalkTrajectory, 'spill' | 'block'>): void {
    this.spaces.get(t.spill)?.release(t.block);
  }

  /** The spill file of worker `index`. */
  spillPath(index: number): string {
    return join(this.spillDir, `spill-${index}.bin`);
  }

  /**
   * Queue `task`. `front` marks a short task others wait on (a walk): it goes ahead of everything
   * queued while more long tasks wait than there are workers, and behind them once the last long
   * tasks remain. Long tasks first at the end lets every worker start its last one as early as it
   * can, and the short ones then fill the gap between the workers' ends (on DuckDB's 4,096-row
   * groups a worker taking its walks first started its last 1.6 s decode 1 s after the other).
   */
  run<T>(task: Task, front = false): Promise<T> {
    if (this.closed) return Promise.reject(new Error('pool is closed'));
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<T>((resolve, reject) => {
      const p = { id: this.nextId++, task, resolve: resolve as (v: unknown) => void, reject, front };
      const long = front ? this.queue.reduce((n, q) => n + (q.front ? 0 : 1), 0) : 0;
      if (front && long > this.limit) this.queue.unshift(p);
      else this.queue.push(p);
      this.pump();
    });
  }

  private pump(): void {
    this.onSettled?.();
    if (this.closed || this.failed) return;
    while (this.queue.length > 0) {
      let w = this.workers.find((x) => !this.busy.has(x));
      if (!w) {
        if (this.spawned >= this.limit) return;
        w = this.spawn();
      }
      const p = this.queue.shift()!;
      this.busy.set(w, p);
      w.postMessage({ id: p.id, task: p.task } satisfies WorkerMessage);
    }
  }

  /** The pure-JS fallback decoders the workers used, by codec (the first report of each). */
  readonly pureJs = new Map<string, PureJsDecoder>();

  private onReply(w: Worker, reply: WorkerReply): void {
    for (const d of reply.pureJs ?? []) {
      if (this.pureJs.has(d.codec)) continue;
      this.pureJs.set(d.codec, d);
      this.options.onPureJs?.(d);
    }
    const p = this.busy.get(w);
    if (!p || p.id !== reply.id) return;
    this.busy.delete(w);
    if (reply.ok) p.resolve(reply.result);
    else {
      if (this.options.drainOnClose) this.failed = true;
      p.reject(taskError(p.task, reply.error));
    }
    this.pump();
  }

  private onUnreadable(w: Worker, err: Error): void {
    const p = this.busy.get(w);
    this.busy.delete(w);
    p?.reject(internalError(p.task, { message: `its reply could not be deserialised (${err.message})`, exitCode: null, name: err.name, stack: err.stack }));
    this.pump();
  }

  private onDeath(w: Worker, err: ErrorPayload): void {
    const p = this.busy.get(w);
    this.busy.delete(w);
    const idx = this.workers.indexOf(w);
    if (idx >= 0) this.workers.splice(idx, 1);
    const error = taskError(p?.task, err);
    p?.reject(error);
    this.onSettled?.();
    // Without a live worker and none left to start, nothing queued can run: fail it all with the same cause.
    if (this.workers.length === 0 && this.spawned >= this.limit) {
      this.dead ??= error;
      for (const q of this.queue.splice(0)) q.reject(error);
    } else this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.options.drainOnClose && this.busy.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DRAIN_MS);
        this.onSettled = () => {
          if (this.busy.size > 0) return;
          clearTimeout(timer);
          resolve();
        };
      });
      this.onSettled = null;
    }
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
