// Every pool task settles, whatever its worker does: a failed task, a result that cannot be sent, a
// worker that throws outside a task, exits or runs out of memory. Input errors (UserError, decoder
// errors, wasm traps) keep their exit code; a bug in our code is an internal error (exit 1) with the
// worker's stack. The workers are test/support/faulty-worker.mjs over the built dist/engine/serve.js.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, UserError, toPayload, type ErrorPayload } from '../src/errors.js';
import { Pool, taskError } from '../src/engine/pool.js';
import type { Task } from '../src/engine/protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-pool-faults-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WORKER = new URL('./support/faulty-worker.mjs', import.meta.url);
const task = (fault: string): Task => ({ kind: 'meta', path: fault, engine: 'wasm', bytes: 0 });

/** Run one faulty task on a fresh pool; the task's error (or null), and whether the pool still answers. */
async function runFault(fault: string, size = 1): Promise<{ error: unknown; after: unknown }> {
  const pool = new Pool(size, dir, { workerUrl: WORKER, resourceLimits: { maxOldGenerationSizeMb: 24 } });
  try {
    let error: unknown = null;
    await pool.run(task(fault)).catch((e: unknown) => (error = e));
    const after = await pool.run(task('ok')).then(
      (r) => r,
      (e: unknown) => e,
    );
    return { error, after };
  } finally {
    await pool.close();
  }
}

describe('taskError: what a failed reply becomes', () => {
  const cases: [string, ErrorPayload, { exit: number | 'bug'; message: RegExp }][] = [
    ['a UserError keeps its code and message', { message: 'x.jsonl:3: bad', exitCode: 7 }, { exit: 7, message: /^x\.jsonl:3: bad$/ }],
    ['a decoder error is corrupt input', { message: 'Corrupt footer', exitCode: null, name: 'DecoderError' }, { exit: ExitCode.corrupt, message: /^f\.parquet \(footer metadata\): cannot decode: Corrupt footer$/ }],
    ['a wasm trap is corrupt input', { message: 'unreachable', exitCode: null, name: 'RuntimeError' }, { exit: ExitCode.corrupt, message: /the parquet decoder stopped: unreachable/ }],
    ['a TypeError is a bug', { message: "Cannot read properties of null (reading 'x')", exitCode: null, name: 'TypeError', stack: 'TypeError: ...\n    at f (worker.js:1:1)' }, { exit: 'bug', message: /TypeError in a worker: Cannot read properties of null/ }],
    ['a RangeError is a bug', { message: 'Invalid array length', exitCode: null, name: 'RangeError' }, { exit: 'bug', message: /RangeError in a worker/ }],
    ['a thrown non-Error is a bug', toPayload('boom'), { exit: 'bug', message: /a non-Error value was thrown: boom/ }],
    ['V8\'s string limit is a bad value, not a crash', { message: 'Invalid string length', exitCode: null, name: 'RangeError' }, { exit: ExitCode.badValue, message: /^f\.parquet \(footer metadata\): a value is longer than the longest JavaScript string/ }],
    ['a Buffer too long for a string too', { message: 'Cannot create a string longer than 0x1fffffe8 characters', exitCode: null, name: 'RangeError' }, { exit: ExitCode.badValue, message: /longest JavaScript string/ }],
  ];
  it.each(cases)('%s', (_name, payload, want) => {
    const e = taskError({ kind: 'meta', path: 'f.parquet', engine: 'wasm', bytes: 0 }, payload);
    expect(e.message).toMatch(want.message);
    if (want.exit === 'bug') {
      expect(e).not.toBeInstanceOf(UserError);
      if (payload.stack) expect(e.stack).toContain(payload.stack);
    } else {
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).exitCode).toBe(want.exit);
    }
  });
});

describe('toPayload of thrown non-Errors names the value', () => {
  it.each([
    ['a string', 'boom', /boom/],
    ['a number', 42, /42/],
    ['an object', { code: 'X' }, /\{"code":"X"\}/],
    ['undefined', undefined, /undefined/],
    ['a cyclic object', (() => { const o: Record<string, unknown> = {}; o.self = o; return o; })(), /\[object Object\]/],
  ])('%s', (_name, value, text) => {
    const p = toPayload(value);
    expect(p.exitCode).toBeNull();
    expect(p.message).toMatch(text);
  });
});

describe('Pool with a misbehaving worker: every task settles', () => {
  const cases: [string, { bug: boolean; exit?: number; message: RegExp; workerSurvives: boolean }][] = [
    ['type-error', { bug: true, message: /TypeError in a worker: Cannot read properties of null/, workerSurvives: true }],
    ['user-error', { bug: false, exit: 7, message: /instance_id is null or empty/, workerSurvives: true }],
    ['decoder-error', { bug: false, exit: ExitCode.corrupt, message: /decoder-error \(footer metadata\): cannot decode: Parquet error/, workerSurvives: true }],
    ['trap', { bug: false, exit: ExitCode.corrupt, message: /the parquet decoder stopped: unreachable/, workerSurvives: true }],
    ['throw-string', { bug: true, message: /a non-Error value was thrown: a string, not an Error/, workerSurvives: true }],
    ['uncloneable', { bug: true, message: /cannot send the result to the main thread \(DataCloneError/, workerSurvives: true }],
    ['uncaught-string', { bug: true, message: /a worker died throwing a non-Error value: thrown outside any task/, workerSurvives: false }],
    ['uncaught-type-error', { bug: true, message: /TypeError in a worker/, workerSurvives: false }],
    ['exit', { bug: true, message: /a worker exited unexpectedly with code 3/, workerSurvives: false }],
    ['out-of-memory', { bug: false, exit: ExitCode.bug, message: /a worker ran out of memory/, workerSurvives: false }],
  ];
  it.each(cases)('%s', async (fault, want) => {
    const { error, after } = await runFault(fault);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(want.message);
    if (want.bug) expect(error).not.toBeInstanceOf(UserError);
    else expect((error as UserError).exitCode).toBe(want.exit);
    // The pool answers the next task: from the surviving worker, or at once with the death's error.
    if (want.workerSurvives) expect(after).toStrictEqual({ numRows: 1, rowGroupRows: [1], fields: [] });
    else expect(after).toBe(error);
  }, 60_000);

  it('drainOnClose (DuckDB workers): after a failed task nothing new starts, and close() lets the task in flight settle', async () => {
    const pool = new Pool(2, dir, { workerUrl: WORKER, drainOnClose: true });
    let slowSettled = false;
    const slow = pool.run(task('slow')).then(() => (slowSettled = true));
    const failed = pool.run(task('decoder-error')).catch((e: unknown) => e);
    // Queued behind the failure: with drainOnClose it never starts (the run is ending).
    const later = pool.run(task('ok'));
    let laterStarted = false;
    later.then(() => (laterStarted = true), () => {});
    expect(await failed).toBeInstanceOf(UserError);
    await pool.close();
    // close() waited for the slow task instead of terminating its worker in the middle of it.
    expect(slowSettled).toBe(true);
    await slow;
    expect(laterStarted).toBe(false);
  }, 60_000);

  it('without drainOnClose, a failed task does not stop the queue', async () => {
    const pool = new Pool(1, dir, { workerUrl: WORKER });
    try {
      const failed = pool.run(task('decoder-error')).catch((e: unknown) => e);
      const after = await pool.run(task('ok'));
      expect(await failed).toBeInstanceOf(UserError);
      expect(after).toStrictEqual({ numRows: 1, rowGroupRows: [1], fields: [] });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a dead worker among live ones: its task fails, the others go on', async () => {
    const pool = new Pool(2, dir, { workerUrl: WORKER });
    try {
      const results = await Promise.allSettled([pool.run(task('exit')), pool.run(task('ok')), pool.run(task('ok')), pool.run(task('ok'))]);
      expect(results.map((r) => r.status)).toStrictEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a reply the main thread cannot deserialise fails its task (no wait forever)', async () => {
    const pool = new Pool(1, dir, { workerUrl: WORKER });
    try {
      // 'messageerror' cannot be provoked from plain data: emit what Node emits when deserialising fails.
      const pending = pool.run(task('never-answers')).catch((e: unknown) => e);
      const worker = (pool as unknown as { workers: import('node:worker_threads').Worker[] }).workers[0]!;
      worker.emit('messageerror', new Error('Unable to deserialize cloned data.'));
      const e = await pending;
      expect((e as Error).message).toMatch(/its reply could not be deserialised \(Unable to deserialize cloned data\.\)/);
      expect(e).not.toBeInstanceOf(UserError);
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('the decode worker started early (engine/pool.ts startEarlyWorker, built dist/)', () => {
  // The built module: its worker script is dist/engine/worker.js, and the early worker is module state.
  const load = async () => (await import(new URL('../dist/engine/pool.js', import.meta.url).href)) as typeof import('../src/engine/pool.js');
  const meta: Task = { kind: 'meta', path: fileURLToPath(new URL('../fixtures/forks.parquet', import.meta.url)), engine: 'js', bytes: 1 };

  it('a worker that died before any pool is not adopted: the pool starts its own worker 0', async () => {
    const { Pool, startEarlyWorker } = await load();
    const early = startEarlyWorker()!;
    await early.terminate();
    const pool = new Pool(1, dir, { adoptEarly: true });
    try {
      expect(((await pool.run(meta)) as { numRows: number }).numRows).toBe(14);
      expect((pool as unknown as { workers: unknown[] }).workers[0]).not.toBe(early);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('the first pool that opts in adopts a live one as worker 0, once; a pool that does not opt in never does', async () => {
    const { Pool, startEarlyWorker } = await load();
    const early = startEarlyWorker()!;
    expect(startEarlyWorker()).toBe(early); // one per process
    const other = new Pool(1, dir);
    const first = new Pool(2, dir, { adoptEarly: true });
    const second = new Pool(1, dir, { adoptEarly: true });
    try {
      await other.run(meta);
      expect((other as unknown as { workers: unknown[] }).workers[0]).not.toBe(early);
      first.warm(2);
      const r = await Promise.all([first.run(meta), first.run(meta)]);
      expect(r.map((x) => (x as { numRows: number }).numRows)).toStrictEqual([14, 14]);
      expect((first as unknown as { workers: unknown[] }).workers[0]).toBe(early);
      await second.run(meta);
      expect((second as unknown as { workers: unknown[] }).workers[0]).not.toBe(early);
      expect(startEarlyWorker()).toBeNull(); // taken: no second early worker
    } finally {
      await Promise.all([other.close(), first.close(), second.close()]);
    }
  }, 60_000);
});
