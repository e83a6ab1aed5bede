// A fixed pool of decode workers with a FIFO task queue. A worker that dies (wasm trap, OOM) fails
// its task with an error naming what it was reading; the caller turns that into a one-line message.
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ExitCode, UserError } from '../errors.js';
import type { Task, WorkerReply } from './protocol.js';

interface Pending {
  id: number;
  task: Task;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
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

export class Pool {
  private readonly workers: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private nextId = 0;
  private closed = false;
  /** Set when the last worker died: later tasks fail with it instead of waiting forever. */
  private dead: UserError | null = null;

  constructor(
    size: number,
    private readonly spillDir: string,
  ) {
    const url = new URL('./worker.js', import.meta.url);
    for (let k = 0; k < size; k++) {
      const w = new Worker(url, { workerData: { spillPath: this.spillPath(k), spillIndex: k } });
      w.on('message', (reply: WorkerReply) => this.onReply(w, reply));
      w.on('error', (err) => this.onDeath(w, err));
      w.on('exit', (code) => {
        if (!this.closed) this.onDeath(w, new Error(`decoder exited with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** The spill file of worker `index`. */
  spillPath(index: number): string {
    return join(this.spillDir, `spill-${index}.bin`);
  }

  /** Queue `task`; `front` puts it ahead of everything queued (short tasks that others wait on). */
  run<T>(task: Task, front = false): Promise<T> {
    if (this.closed) return Promise.reject(new Error('pool is closed'));
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<T>((resolve, reject) => {
      const p = { id: this.nextId++, task, resolve: resolve as (v: unknown) => void, reject };
      if (front) this.queue.unshift(p);
      else this.queue.push(p);
      this.pump();
    });
  }

  private pump(): void {
    for (const w of this.workers) {
      if (this.queue.length === 0) return;
      if (this.busy.has(w)) continue;
      const p = this.queue.shift()!;
      this.busy.set(w, p);
      w.postMessage({ id: p.id, task: p.task });
    }
  }

  private onReply(w: Worker, reply: WorkerReply): void {
    const p = this.busy.get(w);
    if (!p || p.id !== reply.id) return;
    this.busy.delete(w);
    if (reply.ok) p.resolve(reply.result);
    else if (reply.error.exitCode !== null) p.reject(new UserError(reply.error.message, reply.error.exitCode));
    else p.reject(new UserError(`${describe(p.task)}: cannot decode: ${explain(reply.error)}`, ExitCode.corrupt));
    this.pump();
  }

  private onDeath(w: Worker, err: Error): void {
    const p = this.busy.get(w);
    this.busy.delete(w);
    const idx = this.workers.indexOf(w);
    if (idx >= 0) this.workers.splice(idx, 1);
    const error = new UserError(`${p ? describe(p.task) : 'decoder'}: cannot decode: ${explain(err)}`, ExitCode.corrupt);
    p?.reject(error);
    // Without a live worker, nothing queued can run: fail it all with the same cause.
    if (this.workers.length === 0) {
      this.dead ??= error;
      for (const q of this.queue.splice(0)) q.reject(error);
    } else this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
