// The worker side of the pool protocol (protocol.ts): one reply per task, whatever happens. A result
// that cannot be sent (structured clone fails) and a task that fails become error replies, so the
// main thread never waits for a reply that will not come.
import type { MessagePort } from 'node:worker_threads';
import { toPayload, type ErrorPayload } from '../errors.js';
import type { PureJsDecoder } from '../parquet/inflate.js';
import type { Task, WorkerMessage, WorkerReply } from './protocol.js';

type Result = Extract<WorkerReply, { ok: true }>['result'];

/** ArrayBuffers of `result` that can move to the main thread without a copy (a walk's JSONL bytes). */
function transferList(result: Result): ArrayBuffer[] {
  if (!('jsonl' in result) || result.jsonl.byteLength === 0) return [];
  // A Buffer may sit in a shared pool: copy those, never transfer the pool.
  if (result.jsonl.byteOffset !== 0 || result.jsonl.byteLength !== result.jsonl.buffer.byteLength) result.jsonl = new Uint8Array(result.jsonl);
  return [result.jsonl.buffer as ArrayBuffer];
}

/** The pure-JS fallback decoders this thread has used (only when some were: most replies carry nothing extra). */
function withDecoders(used: PureJsDecoder[]): { pureJs?: PureJsDecoder[] } {
  return used.length > 0 ? { pureJs: used } : {};
}

function send(port: MessagePort, id: number, result: Result, used: PureJsDecoder[]): void {
  try {
    port.postMessage({ id, ok: true, result, ...withDecoders(used) } satisfies WorkerReply, transferList(result));
  } catch (e) {
    const p = toPayload(e);
    const error: ErrorPayload = { ...p, message: `cannot send the result to the main thread (${p.name ?? 'error'}: ${p.message})`, exitCode: null, name: 'InternalError' };
    port.postMessage({ id, ok: false, error } satisfies WorkerReply);
  }
}

/**
 * `decoders`: the pure-JS fallback decoders used so far, sent with every reply (inflate.ts
 * pureJsDecoders). `onSpillPath`: a worker started early learns its spill file (no reply: messages
 * arrive in order, so it is set before the first task runs).
 */
export function serve(port: MessagePort, run: (task: Task) => Promise<Result>, decoders: () => PureJsDecoder[] = () => [], onSpillPath: (path: string, space: SharedArrayBuffer | null) => void = () => {}): void {
  port.on('message', (msg: WorkerMessage) => {
    if (!('task' in msg)) {
      onSpillPath(msg.spillPath, msg.spillSpace);
      return;
    }
    // A synchronous throw in run() is a rejection too (async), and send() never throws.
    Promise.resolve()
      .then(() => run(msg.task))
      .then(
        (result) => send(port, msg.id, result, decoders()),
        (err: unknown) => port.postMessage({ id: msg.id, ok: false, error: toPayload(err), ...withDecoders(decoders()) } satisfies WorkerReply),
      );
  });
}
