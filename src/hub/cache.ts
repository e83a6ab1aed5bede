// The one owner of the Hugging Face cache layout, as Python's huggingface_hub writes it
// (file_download.py, _tree_cache.py), so that this tool, `datasets`, `huggingface-cli download` and
// `snapshot_download` share one copy of every file:
//
//   <cache>/datasets--OWNER--NAME/blobs/<etag>               the bytes (etag: sha256 for LFS files, else the git blob sha1)
//   <cache>/datasets--OWNER--NAME/blobs/<etag>.incomplete    a download in progress, resumed with Range
//   <cache>/datasets--OWNER--NAME/snapshots/<sha>/<path>     relative symlink to ../../blobs/<etag>
//   <cache>/datasets--OWNER--NAME/refs/<revision>            the commit sha the revision pointed to
//   <cache>/datasets--OWNER--NAME/trees/<sha>.json           the commit's file listing (format_version 1)
//   <cache>/.locks/datasets--OWNER--NAME/<etag>.lock         held while a blob is written
//
// Every path is built here from checked parts (names.ts), and checked again to lie inside the repo's
// folder before anything is written.
import { copyFileSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { COMMIT_SHA, repoPathProblem, revisionProblem } from './names.js';

/** HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub (constants.py). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const expand = (p: string) => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);
  if (env.HF_HUB_CACHE) return resolve(expand(env.HF_HUB_CACHE));
  if (env.HUGGINGFACE_HUB_CACHE) return resolve(expand(env.HUGGINGFACE_HUB_CACHE));
  return join(hfHome(env), 'hub');
}

/** HF_HOME, else XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface. */
export function hfHome(env: NodeJS.ProcessEnv = process.env): string {
  const expand = (p: string) => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);
  if (env.HF_HOME) return resolve(expand(env.HF_HOME));
  return join(env.XDG_CACHE_HOME ? resolve(expand(env.XDG_CACHE_HOME)) : join(homedir(), '.cache'), 'huggingface');
}

/** A blob name: the sha256 of an LFS file (64 hex) or a git blob sha1 (40 hex). */
export const ETAG = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** One entry of a commit's listing, as `trees/<sha>.json` stores it (TreeCacheEntry). */
export interface TreeEntry {
  size: number;
  /** The git blob sha1. */
  blob_id: string;
  lfs_sha256?: string;
  lfs_size?: number;
  xet_hash?: string;
}

export type Tree = Map<string, TreeEntry>;

/** The blob name of a listed file: the sha256 for LFS files, else the git blob id (as the Hub's ETag). */
export function etagOf(e: TreeEntry): string {
  return e.lfs_sha256 ?? e.blob_id;
}

/** Throws unless `e` is a listing entry this tool can trust (sizes, hashes). */
export function checkTreeEntry(path: string, e: TreeEntry, where: string): void {
  const bad = (why: string): never => {
    throw new UserError(`${where}: the Hub listed ${JSON.stringify(path)} with ${why}; refusing it`, ExitCode.hub);
  };
  const pathWhy = repoPathProblem(path);
  if (pathWhy) bad(`an unsafe path (${pathWhy})`);
  if (!Number.isSafeInteger(e.size) || e.size < 0) bad(`an invalid size ${JSON.stringify(e.size)}`);
  if (typeof e.blob_id !== 'string' || !/^[0-9a-f]{40}$/.test(e.blob_id)) bad(`an invalid blob id ${JSON.stringify(e.blob_id)}`);
  if (e.lfs_sha256 !== undefined) {
    if (typeof e.lfs_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.lfs_sha256)) bad(`an invalid sha256 ${JSON.stringify(e.lfs_sha256)}`);
    if (e.lfs_size !== e.size) bad(`an LFS size ${JSON.stringify(e.lfs_size)} that is not its size ${e.size}`);
  }
}

const TREE_FORMAT_VERSION = 1;

/** The cache folder of one dataset repository. */
export class RepoCache {
  readonly root: string;
  readonly folder: string;
  readonly lockFolder: string;

  constructor(
    readonly cache: string,
    readonly repo: string,
  ) {
    // repo_folder_name: `datasets--OWNER--NAME` (repo ids never hold "--").
    const name = ['datasets', ...repo.split('/')].join('--');
    this.root = cache;
    this.folder = join(cache, name);
    this.lockFolder = join(cache, '.locks', name);
  }

  /** `p`, after checking that it lies inside `base` (no path from the Hub can leave the repo's folder). */
  private inside(base: string, p: string): string {
    const rel = relative(base, p);
    if (rel === '' || rel.startsWith('..') || rel.startsWith(sep) || resolve(base, rel) !== p) {
      throw new UserError(`${this.repo}: refusing the cache path ${p}: it is outside ${base}`, ExitCode.hub);
    }
    return p;
  }

  blobPath(etag: string): string {
    if (!ETAG.test(etag)) throw new UserError(`${this.repo}: refusing blob name ${JSON.stringify(etag)} (not a sha1 or sha256)`, ExitCode.hub);
    return join(this.folder, 'blobs', etag);
  }

  incompletePath(etag: string): string {
    return `${this.blobPath(etag)}.incomplete`;
  }

  lockPath(etag: string): string {
    this.blobPath(etag);
    return join(this.lockFolder, `${etag}.lock`);
  }

  snapshotFolder(sha: string): string {
    if (!COMMIT_SHA.test(sha)) throw new UserError(`${this.repo}: refusing commit ${JSON.stringify(sha)} (not a 40-hex sha)`, ExitCode.hub);
    return join(this.folder, 'snapshots', sha);
  }

  snapshotPath(sha: string, path: string): string {
    const why = repoPathProblem(path);
    if (why) throw new UserError(`${this.repo}: refusing ${why}`, ExitCode.hub);
    const base = this.snapshotFolder(sha);
    return this.inside(base, resolve(base, ...path.split('/')));
  }

  refPath(revision: string): string {
    const why = revisionProblem(revision);
    if (why) throw new UserError(`${this.repo}: refusing ${why}`, ExitCode.hub);
    const base = join(this.folder, 'refs');
    return this.inside(base, resolve(base, ...revision.split('/')));
  }

  treePath(sha: string): string {
    this.snapshotFolder(sha);
    return join(this.folder, 'trees', `${sha}.json`);
  }

  /** The commit a revision pointed to when last seen online (refs/<revision>), or null. */
  readRef(revision: string): string | null {
    let text: string;
    try {
      text = readFileSync(this.refPath(revision), 'utf8').trim();
    } catch {
      return null;
    }
    return COMMIT_SHA.test(text) ? text : null;
  }

  /** Write refs/<revision> (not for a sha, as _cache_commit_hash_for_specific_revision), atomically. */
  writeRef(revision: string, sha: string): void {
    if (revision === sha) return;
    this.snapshotFolder(sha);
    const path = this.refPath(revision);
    if (this.readRef(revision) === sha) return;
    atomicWrite(path, sha);
  }

  /** The cached listing of a commit, or null when absent or not in the format this tool knows. */
  readTree(sha: string): Tree | null {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(this.treePath(sha), 'utf8'));
    } catch {
      return null;
    }
    const d = doc as { format_version?: unknown; files?: unknown };
    if (d?.format_version !== TREE_FORMAT_VERSION || typeof d.files !== 'object' || d.files === null) return null;
    const tree: Tree = new Map();
    for (const [path, e] of Object.entries(d.files as Record<string, TreeEntry>)) {
      checkTreeEntry(path, e, `${this.treePath(sha)}`);
      tree.set(path, e);
    }
    return tree;
  }

  /** Write trees/<sha>.json as huggingface_hub does (sorted paths, indent 1), atomically. */
  writeTree(sha: string, tree: Tree): void {
    const files: Record<string, TreeEntry> = {};
    for (const path of [...tree.keys()].sort(codePointCompare)) {
      const e = tree.get(path)!;
      files[path] = {
        size: e.size,
        blob_id: e.blob_id,
        ...(e.lfs_sha256 !== undefined ? { lfs_sha256: e.lfs_sha256, lfs_size: e.lfs_size } : {}),
        ...(e.xet_hash !== undefined ? { xet_hash: e.xet_hash } : {}),
      };
    }
    try {
      atomicWrite(this.treePath(sha), JSON.stringify({ format_version: TREE_FORMAT_VERSION, files }, null, 1));
    } catch {
      // Like huggingface_hub: the listing cache is an optimisation; a read-only cache still works.
    }
  }

  /** The files present in a snapshot folder (offline, when no listing is cached), with their sizes. */
  listSnapshot(sha: string): Map<string, number> | null {
    const base = this.snapshotFolder(sha);
    const out = new Map<string, number>();
    const walk = (dir: string, prefix: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        const p = join(dir, e.name);
        let st;
        try {
          st = statSync(p);
        } catch {
          continue; // a dangling symlink: its blob is gone
        }
        if (st.isDirectory()) walk(p, rel);
        else if (st.isFile() && repoPathProblem(rel) === null) out.set(rel, st.size);
      }
    };
    try {
      walk(base, '');
    } catch {
      return null;
    }
    return out;
  }

  /** Size of the snapshot file (through its symlink), or null when it is not there. */
  snapshotSize(sha: string, path: string): number | null {
    try {
      const st = statSync(this.snapshotPath(sha, path));
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  blobSize(etag: string): number | null {
    try {
      const st = statSync(this.blobPath(etag));
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  /**
   * Point snapshots/<sha>/<path> at blobs/<etag> with a relative symlink, as _create_symlink does
   * (a copy where symlinks cannot be made). Replaced atomically: a reader never sees it missing.
   */
  linkSnapshot(sha: string, path: string, etag: string): string {
    const pointer = this.snapshotPath(sha, path);
    const blob = this.blobPath(etag);
    mkdirSync(dirname(pointer), { recursive: true });
    const target = relative(dirname(pointer), blob);
    try {
      const st = lstatSync(pointer);
      if (st.isSymbolicLink() && resolve(dirname(pointer), readlinkSafe(pointer)) === blob) return pointer;
    } catch {
      // not there yet
    }
    const tmp = `${pointer}.${process.pid}.tmp`;
    rmSync(tmp, { force: true });
    try {
      symlinkSync(target, tmp);
    } catch {
      copyFileSync(blob, tmp);
    }
    renameSync(tmp, pointer);
    return pointer;
  }
}

function readlinkSafe(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return '';
  }
}


/** Python's sorted() on str: code point order. */
export function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Write a small file through a temporary name and a rename (readers never see half of it). */
export function atomicWrite(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(16).slice(2, 10)}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}
