// The pool's queue order (src/engine/pool.ts run): a `front` task (a walk) goes ahead of the queued
// long tasks while more of them wait than there are workers, and behind them once only the last ones
// remain, so that every worker starts its last long task as early as it can. One worker runs its tasks
// in turn, so the order the promises settle in is the order the tasks ran in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../src/engine/pool.js';
import type { Task } from '../src/engine/protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-pool-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WORKER = new URL('./support/faulty-worker.mjs', import.meta.url);
const task = (fault: string): Task => ({ kind: 'meta', path: fault, engine: 'wasm', bytes: 0 });

/** Queue `slow` (to hold the worker), then `plan` in order (`w…` front, others not); the order they ran in. */
async function order(plan: string[]): Promise<string[]> {
  const pool = new Pool(1, dir, { workerUrl: WORKER });
  const ran: string[] = [];
  try {
    const first = pool.run(task('slow'));
    const rest = plan.map((name) => pool.run(task('ok'), name.startsWith('w')).then(() => ran.push(name)));
    await first;
    await Promise.all(rest);
    return ran;
  } finally {
    await pool.close();
  }
}

describe('pool queue: short front tasks and the last long ones', () => {
  const cases: [string, string[], string[]][] = [
    ['no front task: first in, first out', ['d1', 'd2', 'd3'], ['d1', 'd2', 'd3']],
    ['more long tasks queued than workers: a front task jumps them, the latest first', ['d1', 'd2', 'w1', 'w2'], ['w2', 'w1', 'd1', 'd2']],
    ['only the last long task queued: front tasks wait behind it, in order', ['d1', 'w1', 'w2'], ['d1', 'w1', 'w2']],
    ['nothing long queued: front tasks in order', ['w1', 'w2', 'w3'], ['w1', 'w2', 'w3']],
    ['the count is of long tasks only: front tasks already queued do not make a backlog', ['d1', 'd2', 'w1', 'd3', 'w2'], ['w2', 'w1', 'd1', 'd2', 'd3']],
  ];
  it.each(cases)('%s', async (_name, plan, want) => {
    expect(await order(plan)).toEqual(want);
  });
});
