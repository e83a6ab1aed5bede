// Downloads into the cache, over node's fetch, in huggingface_hub's layout (cache.ts): streamed to
// `blobs/<etag>.incomplete`, resumed with a Range request after a cut connection (or in the next run),
// retried with backoff on 429, 5xx and connection errors, checked against the listed size and hash
// (sha256 for LFS files, the git blob sha1 otherwise) before the blob is placed, under the blob's lock
// (lock.ts). A file already in the cache, from any client, is used without a request.
// (@huggingface/hub's downloadFileToCacheDir has no resume, no checksum, no progress and no offline
// mode, and names the snapshot by the file's last commit: hence this module.)
import { createHash, type Hash } from 'node:crypto';
import { closeSync, ftruncateSync, mkdirSync, openSync, readSync, renameSync, rmSync, statfsSync, statSync, writeSync, chmodSync } from 'node:fs';
import { dirname } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { etagOf, type RepoCache, type TreeEntry } from './cache.js';
import { backoffSeconds, hubHttpError, networkReason, requestOnce, retryAfterSeconds, sleep, unreachable, type HubSettings, type RequestContext } from './http.js';
import { lockBlob } from './lock.js';
import { urlPath } from './names.js';
import { humanBytes, type ByteProgress } from './progress.js';
import { formatCount } from '../count-text.js';

export interface WantedFile {
  path: string;
  entry: TreeEntry;
}

export interface DownloadPlan {
  settings: HubSettings;
  ctx: RequestContext;
  cache: RepoCache;
  sha: string;
  progress: ByteProgress;
  /** Files downloaded at once. */
  concurrency?: number;
}

/** Set when one file failed: the other downloads stop (their `.incomplete` stays, for a resume). */
interface Cancel {
  signal: AbortSignal;
}

/** `ETag: W/"x"` -> `x` (file_download.py _normalize_etag). */
export function normalizeEtag(v: string | null): string | null {
  return v === null ? null : v.replace(/^W\//, '').replace(/^"|"$/g, '');
}

/** The hash the Hub lists for a file: sha256 of the bytes (LFS), or git's blob sha1 (`blob <size>\0` + bytes). */
function newHash(e: TreeEntry): Hash {
  if (e.lfs_sha256) return createHash('sha256');
  return createHash('sha1').update(`blob ${e.size}\0`);
}

/** Whether the snapshot file (or else the blob) is already there with the listed size. */
export function cachedFile(cache: RepoCache, sha: string, f: WantedFile): 'snapshot' | 'blob' | null {
  if (cache.snapshotSize(sha, f.path) === f.entry.size) return 'snapshot';
  if (cache.blobSize(etagOf(f.entry)) === f.entry.size) return 'blob';
  return null;
}

function incompleteSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Free bytes where the cache lives (its nearest existing parent). */
function freeBytes(path: string): number | null {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = statfsSync(p);
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      if (dirname(p) === p) return null;
    }
  }
}

/** Refuse up front when the files to download do not fit on the cache's disk. */
export function checkFreeSpace(cache: RepoCache, missing: readonly WantedFile[]): void {
  const need = missing.reduce((n, f) => n + Math.max(0, f.entry.size - incompleteSize(cache.incompletePath(etagOf(f.entry)))), 0);
  const free = freeBytes(cache.folder);
  if (free !== null && need > free)
    throw new UserError(
      `${cache.root}: not enough free space for the download (${humanBytes(need)} needed, ${humanBytes(free)} free); free some space or point HF_HUB_CACHE at a larger disk`,
      ExitCode.output,
    );
}

/** Hash the bytes already in a `.incomplete` file (a resumed download). */
function hashPrefix(path: string, hash: Hash, length: number): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let off = 0; off < length; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, length - off), off);
      if (n <= 0) break;
      hash.update(buf.subarray(0, n));
      off += n;
    }
  } finally {
    closeSync(fd);
  }
}

class Transient extends Error {}

/** Bytes that cannot be the listed file: removed from the cache before the error is shown. */
class BadBytes extends UserError {
  constructor(message: string) {
    super(message, ExitCode.hub);
  }
}

/**
 * Fetch one blob into `.incomplete` and place it. Called with the blob's lock held. Resumes from the
 * bytes already there; a server that ignores Range (200) or answers a wrong Content-Range starts over.
 */
async function fetchBlob(plan: DownloadPlan, f: WantedFile, cancel: Cancel): Promise<void> {
  const { settings: s, ctx, cache, sha, progress } = plan;
  const etag = etagOf(f.entry);
  const size = f.entry.size;
  const partial = cache.incompletePath(etag);
  const blob = cache.blobPath(etag);
  const url = `${s.endpoint}/datasets/${ctx.repo}/resolve/${sha}/${urlPath(f.path)}`;
  const what = `${ctx.what}: ${f.path}`;
  mkdirSync(dirname(partial), { recursive: true });
  let have = incompleteSize(partial);
  if (have > size) {
    rmSync(partial, { force: true });
    have = 0;
  }
  let hash = newHash(f.entry);
  if (have > 0) {
    hashPrefix(partial, hash, have);
    progress.note(`${f.path}: resuming at ${formatCount(have)} of ${formatCount(size)} bytes`);
  }
  progress.add(have);
  let attempt = 0;
  for (;;) {
    const fd = openSync(partial, 'a', 0o644);
    const start = have;
    try {
      if (have < size) {
        const ctl = new AbortController();
        const onCancel = () => ctl.abort();
        cancel.signal.addEventListener('abort', onCancel);
        let timer = setTimeout(() => ctl.abort(), s.downloadTimeout * 1000);
        const reset = () => {
          clearTimeout(timer);
          timer = setTimeout(() => ctl.abort(), s.downloadTimeout * 1000);
        };
        try {
          let r;
          try {
            r = await requestOnce(s, url, { method: 'GET', headers: have > 0 ? { range: `bytes=${have}-` } : {} }, ctl.signal);
          } catch (e) {
            throw new Transient(networkReason(e));
          }
          const res = r.response;
          const commit = r.hubHeaders.get('x-repo-commit');
          const served = normalizeEtag(r.hubHeaders.get('x-linked-etag') ?? r.hubHeaders.get('etag'));
          if (res.status === 429 || res.status >= 500) {
            await res.body?.cancel();
            const wait = retryAfterSeconds(res.headers.get('retry-after'));
            throw new Transient(`HTTP ${res.status}`, { cause: wait });
          }
          if (!res.ok) {
            await res.body?.cancel();
            throw hubHttpError(s, res.status, res.headers.get('x-error-code') ?? r.hubHeaders.get('x-error-code'), ctx, f.path);
          }
          if (commit !== null && commit !== sha) throw new UserError(`${what}: the Hub served commit ${commit} instead of ${sha}; refusing it`, ExitCode.hub);
          if (served !== null && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(served) && served !== etag)
            throw new UserError(`${what}: the Hub served a file with ETag ${served}, the listing says ${etag}; refusing it`, ExitCode.hub);
          if ((res.headers.get('content-type') ?? '').startsWith('application/vnd.xet')) throw new UserError(`${what}: the Hub answered with Xet file info instead of the bytes; this tool downloads over plain HTTP only`, ExitCode.hub);
          if (res.status === 206) {
            const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
            if (!m || Number(m[1]) !== have || (m[3] !== '*' && Number(m[3]) !== size)) {
              // A range we did not ask for: start over from the first byte.
              await res.body?.cancel();
              ftruncateSync(fd, 0);
              progress.add(-have);
              have = 0;
              hash = newHash(f.entry);
              throw new Transient('an unexpected Content-Range');
            }
          } else if (have > 0) {
            // 200 to a Range request: the server sent the whole file.
            ftruncateSync(fd, 0);
            progress.add(-have);
            have = 0;
            hash = newHash(f.entry);
          }
          if (!res.body) throw new Transient('an empty answer');
          try {
            for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
              reset();
              if (have + chunk.length > size) throw new BadBytes(`${what}: the Hub sent more than the listed ${formatCount(size)} bytes; the bad bytes were removed (run again to retry)`);
              writeSync(fd, chunk);
              hash.update(chunk);
              have += chunk.length;
              progress.add(chunk.length);
            }
          } catch (e) {
            if (e instanceof UserError) throw e;
            const why = networkReason(e);
            throw new Transient(why === 'timed out' ? `no byte for ${s.downloadTimeout} s at byte ${formatCount(have)} of ${formatCount(size)}` : `${why} at byte ${formatCount(have)} of ${formatCount(size)}`);
          }
          if (have < size) throw new Transient(`the connection closed at byte ${formatCount(have)} of ${formatCount(size)}`);
        } finally {
          clearTimeout(timer);
          cancel.signal.removeEventListener('abort', onCancel);
        }
      }
    } catch (e) {
      closeSync(fd);
      if (e instanceof UserError) {
        if (e instanceof BadBytes) rmSync(partial, { force: true });
        throw e;
      }
      if (!(e instanceof Transient)) throw e;
      if (cancel.signal.aborted) throw new Error('cancelled');
      // A retry that moved forward starts the count again: a bad link may cut a 2 GB file many times.
      attempt = have > start ? 1 : attempt + 1;
      if (attempt > s.retries) throw unreachable(s, ctx, `${f.path}: ${e.message}, ${s.retries} retries without progress; run again to resume`);
      const wait = typeof e.cause === 'number' ? e.cause : backoffSeconds(attempt);
      progress.note(`${f.path}: ${e.message}; retrying in ${wait} s${have > 0 ? ' with a Range request' : ''}`);
      await sleep(wait);
      continue;
    }
    closeSync(fd);
    break;
  }
  const digest = hash.digest('hex');
  const expected = f.entry.lfs_sha256 ?? f.entry.blob_id;
  if (have !== size || digest !== expected) {
    rmSync(partial, { force: true });
    throw new UserError(
      `${what}: the downloaded bytes do not match the Hub's listing (${formatCount(have)} bytes, ${f.entry.lfs_sha256 ? 'sha256' : 'git blob sha1'} ${digest}; listed ${formatCount(size)} bytes, ${expected}); the bad bytes were removed (run again to retry)`,
      ExitCode.hub,
    );
  }
  // The blob takes the cache folder's permissions (as _chmod_and_move), then appears whole, by rename.
  try {
    chmodSync(partial, 0o644);
  } catch {
    // best effort, as huggingface_hub
  }
  renameSync(partial, blob);
}

/** Make every file present in the snapshot, downloading what is missing, a few files at a time. */
export async function ensureFiles(plan: DownloadPlan, files: readonly WantedFile[], onLockWait?: (path: string) => void): Promise<void> {
  const { cache, sha, progress } = plan;
  const missing: WantedFile[] = [];
  for (const f of files) {
    const have = cachedFile(cache, sha, f);
    if (have === 'blob') cache.linkSnapshot(sha, f.path, etagOf(f.entry));
    else if (have === null) missing.push(f);
  }
  if (missing.length === 0) return;
  checkFreeSpace(cache, missing);
  const total = missing.reduce((n, f) => n + f.entry.size, 0);
  // A README's few bytes need no progress line; data files do.
  if (total >= 16 * 1024) progress.start(`download ${plan.ctx.repo}`, missing.length, total);
  const queue = [...missing];
  const cancel = new AbortController();
  const worker = async () => {
    for (let f = queue.shift(); f && !cancel.signal.aborted; f = queue.shift()) {
      const etag = etagOf(f.entry);
      const lock = await lockBlob(cache.lockPath(etag), () => onLockWait?.(f!.path), cancel.signal);
      try {
        // Someone else may have placed it while we waited for the lock.
        if (cache.blobSize(etag) !== f.entry.size) await fetchBlob(plan, f, cancel);
        else progress.add(f.entry.size);
        cache.linkSnapshot(sha, f.path, etag);
      } catch (e) {
        cancel.abort();
        throw e;
      } finally {
        lock.release();
      }
      progress.fileDone();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(plan.concurrency ?? 4, missing.length) }, worker));
  } finally {
    progress.done();
  }
}
