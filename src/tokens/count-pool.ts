// Worker threads that count tokens with the built-in template (count-worker.ts). Rows of one
// instance go to the same worker (their prompts share messages, which its caches then count
// once). Counts are exact whichever worker counts a row, so the output does not depend on the
// number of workers. The workers are unref'd: they never keep the process alive.
import { Worker } from 'node:worker_threads';
import type { RowTokens } from './row-tokens.js';

export interface CountRequest {
  id: number;
  row: unknown;
  maxLength: number | null;
  window: boolean;
}

export type CountReply = (
  | { id: number; kind: 'counted'; tokens: RowTokens; groupsDropped: number }
  | { id: number; kind: 'too-long' }
  | { id: number; kind: 'render-failure' }
  | { id: number; kind: 'error'; message: string }
) & { warnings?: string[] };

/** FNV-1a of the instance id: the worker of an instance. */
function slot(key: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
}

export class CountPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, { resolve: (r: CountReply) => void; reject: (e: Error) => void }>();
  private next = 0;
  private failed: Error | null = null;
  readonly warnings: string[] = [];

  constructor(tokenizer: string, size: number, url: URL = new URL('./count-worker.js', import.meta.url)) {
    for (let i = 0; i < size; i++) {
      const w = new Worker(url, { workerData: { tokenizer } });
      w.unref();
      w.on('message', (r: CountReply) => {
        if (r.warnings) this.warnings.push(...r.warnings);
        const p = this.pending.get(r.id);
        this.pending.delete(r.id);
        p?.resolve(r);
      });
      w.on('error', (e) => this.fail(e));
      w.on('exit', (code) => {
        if (code !== 0 && !this.closed) this.fail(new Error(`token-count worker exited with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  private closed = false;

  private fail(e: Error): void {
    this.failed = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  count(instance: string, req: Omit<CountRequest, 'id'>): Promise<CountReply> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.workers[slot(instance, this.workers.length)]!.postMessage({ id, ...req });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
