// The lock held on a blob while it is written, so that runs sharing one cache (partitions of a job on
// a shared filesystem, this tool beside `huggingface-cli`) download each blob once.
//
// huggingface_hub holds `.locks/datasets--OWNER--NAME/<etag>.lock` with the `filelock` package, which on
// Unix is an flock(2) on that file (filelock/_unix.py). Node has no flock; the optional native package
// `fs-ext` gives it, and then this tool takes the very same lock, so it and Python exclude each other.
// Without fs-ext (no compiler at install time, or a filesystem without flock) the lock is a file made
// with O_EXCL beside it (`<etag>.lock.divergence-mine`), holding the owner's host and pid and touched
// every few seconds; one whose owner is gone (same host, dead pid) or that has not been touched for
// 60 s is stale and taken over. That still excludes concurrent runs of this tool, not Python.
import { closeSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { processAlive, trackTemp, untrackTemp } from '../io/atomic.js';

interface FsExt {
  flockSync(fd: number, flags: 'exnb' | 'un'): void;
}

let fsExt: FsExt | null | undefined;

function loadFsExt(): FsExt | null {
  if (fsExt !== undefined) return fsExt;
  if (process.env.DIVERGENCE_MINE_NO_FLOCK === '1') return (fsExt = null);
  try {
    fsExt = createRequire(import.meta.url)('fs-ext') as FsExt;
  } catch {
    fsExt = null;
  }
  return fsExt;
}

export type LockKind = 'flock' | 'lockfile';

/** Which lock this process takes: flock (shared with huggingface_hub) when fs-ext loads, else the lock file. */
export function lockKind(): LockKind {
  return loadFsExt() ? 'flock' : 'lockfile';
}

export interface HeldLock {
  kind: LockKind;
  release(): void;
}

const STALE_MS = 60_000;
const HEARTBEAT_MS = 5_000;
const POLL_MS = 150;

/** One attempt at flock; null when it is held elsewhere; 'unsupported' when the filesystem has no flock. */
function tryFlock(ext: FsExt, path: string): HeldLock | null | 'unsupported' {
  // As filelock opens it: read-write, created if missing, never truncated, group-writable.
  const fd = openSync(path, 'a+', 0o664);
  try {
    ext.flockSync(fd, 'exnb');
  } catch (e) {
    closeSync(fd);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EACCES') return null;
    if (code === 'ENOSYS' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') return 'unsupported';
    throw e;
  }
  let released = false;
  return {
    kind: 'flock',
    release() {
      if (released) return;
      released = true;
      try {
        ext.flockSync(fd, 'un');
      } finally {
        closeSync(fd); // the file stays, as filelock leaves it: unlinking would split later waiters
      }
    },
  };
}

interface LockOwner {
  host: string;
  pid: number;
}

function isStale(path: string): boolean {
  let owner: LockOwner;
  let mtime: number;
  try {
    owner = JSON.parse(readFileSync(path, 'utf8')) as LockOwner;
    mtime = statSync(path).mtimeMs;
  } catch {
    // Unreadable or half-written: stale only once it is old (its writer may be between two calls).
    try {
      return Date.now() - statSync(path).mtimeMs > STALE_MS;
    } catch {
      return false;
    }
  }
  if (owner.host === hostname() && typeof owner.pid === 'number' && !processAlive(owner.pid)) return true;
  return Date.now() - mtime > STALE_MS;
}

function tryLockFile(path: string): HeldLock | null {
  const file = `${path}.divergence-mine`;
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o664);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    if (isStale(file)) rmSync(file, { force: true });
    return null;
  }
  writeSync(fd, JSON.stringify({ host: hostname(), pid: process.pid, started: new Date().toISOString() }));
  closeSync(fd);
  // Removed by the signal handlers too (io/atomic.ts): Ctrl-C never leaves a live-looking lock.
  trackTemp(file);
  const beat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(file, now, now);
    } catch {
      // taken over after a stall; the blob's own checks still hold
    }
  }, HEARTBEAT_MS);
  beat.unref();
  let released = false;
  return {
    kind: 'lockfile',
    release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      rmSync(file, { force: true });
      untrackTemp(file);
    },
  };
}

/**
 * Hold the lock of one blob; waits while another process holds it (`onWait` is called once, after a
 * second of waiting, to say so).
 */
export async function lockBlob(path: string, onWait?: (kind: LockKind) => void, signal?: AbortSignal): Promise<HeldLock> {
  mkdirSync(dirname(path), { recursive: true });
  const started = Date.now();
  let told = false;
  let useFlock = loadFsExt() !== null;
  for (;;) {
    let held: HeldLock | null = null;
    if (useFlock) {
      const r = tryFlock(loadFsExt()!, path);
      if (r === 'unsupported') useFlock = false;
      else held = r;
    }
    if (!useFlock) held = tryLockFile(path);
    if (held) return held;
    if (signal?.aborted) throw new Error('cancelled');
    if (!told && onWait && Date.now() - started > 1000) {
      told = true;
      onWait(useFlock ? 'flock' : 'lockfile');
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
