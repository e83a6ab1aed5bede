// The CLI runs as the child of a small supervisor (src/supervisor.ts, started by bin/divergence-mine)
// because a V8 fatal error (`Fatal JavaScript invalid size error`, a heap out of memory), a native
// crash or the OOM killer ends the whole process at once, in whichever thread it happens, with no JS
// left to run: its temporary files can only be removed by another process. This module is both
// sides of their protocol:
//
//   fd 2  the CLI's fd 2 is a pipe to the supervisor: only native code writes there (V8's fatal report
//         and its native stack), which the supervisor turns into one line;
//   fd 3  the real stderr, which `process.stderr` of the CLI is moved to (adoptSupervisedStderr);
//   fd 4  the manifest: one JSON line per temporary path made or dropped, written synchronously
//         (tellSupervisor), so that a path is known to the supervisor before it exists;
//   fd 5  the lifeline: the supervisor never writes it; its end (the supervisor killed outright) tells
//         the CLI to clean up and stop.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket as NetSocket } from 'node:net';
import type { Writable as StreamWritable } from 'node:stream';
import type * as Tty from 'node:tty';

// net, stream and tty are loaded only in the CLI process, when it adopts the supervision: the
// supervisor reads this module too, before it starts the CLI, and every run waits for that.
const load = createRequire(import.meta.url);

/** Set (to "1") in the CLI process's environment by the supervisor. */
export const SUPERVISED_ENV = 'DIVERGENCE_MINE_SUPERVISED';
export const CHILD_FD = { stderr: 3, manifest: 4, lifeline: 5 } as const;
/** The fd of the real stderr in the supervised CLI and its worker threads (set by adoptSupervision). */
export const STDERR_FD_ENV = 'DIVERGENCE_MINE_STDERR_FD';
/** `1`: io/timeline.ts writes its marks. */
export const TIMELINE_ENV = 'DIVERGENCE_MINE_TIMELINE';
/** The first process's start (epoch ms), which the supervisor hands to the CLI so that every timeline mark counts from it. */
export const TIMELINE_ORIGIN_ENV = 'DIVERGENCE_MINE_TIMELINE_ORIGIN';

/**
 * A manifest line: `temp` a file or folder to remove (recursively) if the run dies; `folders` folders
 * this run made, removed from `leaf` up to `top` while empty; `drop` the entry is settled (committed
 * or removed by the run itself).
 */
export type ManifestEntry = { op: 'temp'; path: string } | { op: 'folders'; path: string; top: string } | { op: 'drop'; path: string };

/** One entry as a line (JSON: a path may hold a newline). */
export function encodeEntry(e: ManifestEntry): string {
  return JSON.stringify(e.op === 'folders' ? [e.op, e.path, e.top] : [e.op, e.path]) + '\n';
}

/** The entry of one manifest line; null for anything else (a torn last line of a crashed writer). */
export function decodeEntry(line: string): ManifestEntry | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return null;
  const [op, path, top] = v as string[];
  if (path === undefined || path === '') return null;
  if ((op === 'temp' || op === 'drop') && v.length === 2) return { op, path };
  if (op === 'folders' && v.length === 3 && top) return { op, path, top };
  return null;
}

/** The manifest's fd in a supervised CLI process; null when not supervised (library use, tests). */
let manifestFd: number | null = null;

/** Whether this process is the CLI run by the supervisor (the environment says so). */
export function isSupervisedChild(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SUPERVISED_ENV] === '1';
}

/** Write all of `bytes` to `fd`, synchronously (a full non-blocking pipe says EAGAIN: wait and retry). */
function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  let waits = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++waits > 10_000) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** A synchronous `process.stderr` on a file descriptor that is not a TTY (a pipe, a file), as Node's own stderr is. */
function syncFdStream(fd: number): StreamWritable & { isTTY: false; fd: number } {
  const { Writable } = load('node:stream') as typeof import('node:stream');
  const stream = new Writable({
    decodeStrings: true,
    write(chunk: Buffer, _enc, cb) {
      try {
        writeAll(fd, chunk);
        cb();
      } catch (e) {
        cb(e as Error);
      }
    },
  });
  return Object.assign(stream, { isTTY: false as const, fd });
}

/**
 * In the supervised CLI process, before anything is written: the environment marker is removed
 * (a nested run gets its own supervisor), `process.stderr` moves to the real stderr (fd 3) and
 * temporary paths are reported on the manifest. Returns false (and does nothing) when not supervised.
 */
export function adoptSupervision(): boolean {
  if (!isSupervisedChild()) return false;
  delete process.env[SUPERVISED_ENV];
  const fd = CHILD_FD.stderr;
  // For code that writes stderr synchronously from a worker thread (io/timeline.ts): fd 2 is not it.
  process.env[STDERR_FD_ENV] = String(fd);
  const tty = load('node:tty') as typeof Tty;
  // A TTY gets Node's tty.WriteStream, so `isTTY` and the progress line behave as they would on fd 2.
  const stream = tty.isatty(fd) ? new tty.WriteStream(fd) : syncFdStream(fd);
  // Errors of the real stderr (a closed pipe) are not the run's: as Node does for fd 2, ignore them.
  stream.on('error', () => {});
  Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get: () => stream });
  manifestFd = CHILD_FD.manifest;
  return true;
}

/** Call `onGone` when the supervisor is gone (killed outright: its end of the lifeline closes). */
export function watchSupervisor(onGone: () => void): void {
  if (manifestFd === null) return;
  const { Socket } = load('node:net') as typeof import('node:net');
  const life: NetSocket = new Socket({ fd: CHILD_FD.lifeline, readable: true, writable: false });
  let fired = false;
  const gone = () => {
    if (fired) return;
    fired = true;
    onGone();
  };
  life.on('end', gone);
  life.on('close', gone);
  life.on('error', gone);
  life.resume();
  life.unref(); // the lifeline never keeps the run alive
}

/** Report a temporary path to the supervisor (nothing when not supervised). */
export function tellSupervisor(e: ManifestEntry): void {
  if (manifestFd === null) return;
  try {
    writeAll(manifestFd, Buffer.from(encodeEntry(e)));
  } catch {
    // The supervisor is gone (EPIPE): the run cleans up after itself as before, and the lifeline stops it.
    manifestFd = null;
  }
}
