// The Hub's API through @huggingface/hub (dataset info, file listing, paths info), with our fetch
// (http.ts) under it: the library never sees the token, and every answer is checked before use.
import { ExitCode, UserError } from '../errors.js';
import { checkTreeEntry, type Tree, type TreeEntry } from './cache.js';
import { apiFetch, type HubSettings, type RequestContext } from './http.js';
import { COMMIT_SHA, urlPath } from './names.js';
import { formatCount } from '../count-text.js';

type HubLib = typeof import('@huggingface/hub');
let lib: HubLib | null = null;
/** Loaded on first use: runs on local files never pay for it. */
async function hubLib(): Promise<HubLib> {
  return (lib ??= await import('@huggingface/hub'));
}

/** More entries than this in one listing is not a dataset this tool can mine; refuse rather than grow without bound. */
const MAX_ENTRIES = 2_000_000;

export interface RevisionInfo {
  sha: string;
  gated: false | 'auto' | 'manual';
  private: boolean;
}

/** The commit a revision points to now: GET /api/datasets/{id}/revision/{rev}. */
export async function resolveRevision(s: HubSettings, ctx: RequestContext, revision: string, log?: (l: string) => void): Promise<RevisionInfo> {
  const { datasetInfo } = await hubLib();
  const info = await datasetInfo({ name: ctx.repo, revision, hubUrl: s.endpoint, additionalFields: ['sha'], fetch: apiFetch(s, ctx, log) });
  const sha = (info as { sha?: unknown }).sha;
  if (typeof sha !== 'string' || !COMMIT_SHA.test(sha)) throw new UserError(`${ctx.what}: the Hub gave the commit ${JSON.stringify(sha)}, not a 40-hex sha; refusing it`, ExitCode.hub);
  return { sha, gated: info.gated ?? false, private: Boolean(info.private) };
}

interface ListedEntry {
  type: string;
  path: string;
  size: number;
  oid?: string;
  lfs?: { oid: string; size: number };
  xetHash?: string;
}

function toTreeEntry(e: ListedEntry, where: string): TreeEntry {
  const t: TreeEntry = {
    size: e.size,
    blob_id: e.oid as string,
    ...(e.lfs ? { lfs_sha256: e.lfs.oid, lfs_size: e.lfs.size } : {}),
    ...(typeof e.xetHash === 'string' ? { xet_hash: e.xetHash } : {}),
  };
  checkTreeEntry(e.path, t, where);
  return t;
}

function checkPrefix(path: string, prefix: string, where: string): void {
  if (prefix !== '' && path !== prefix && !path.startsWith(`${prefix}/`))
    throw new UserError(`${where}: the Hub listed ${JSON.stringify(path)} outside the folder ${prefix}; refusing it`, ExitCode.hub);
}

/** Every file below `prefix` ('' for the whole repo) at commit `sha`, paged by the Link header. */
export async function listTree(s: HubSettings, ctx: RequestContext, sha: string, prefix: string, log?: (l: string) => void): Promise<Tree> {
  const { listFiles } = await hubLib();
  const tree: Tree = new Map();
  let n = 0;
  const entries = listFiles({
    repo: { type: 'dataset', name: ctx.repo },
    revision: sha,
    recursive: true,
    ...(prefix ? { path: urlPath(prefix) } : {}),
    hubUrl: s.endpoint,
    fetch: apiFetch(s, ctx, log),
  });
  for await (const e of entries as AsyncIterable<ListedEntry>) {
    if (++n > MAX_ENTRIES) throw new UserError(`${ctx.what}: the listing has more than ${formatCount(MAX_ENTRIES)} entries; name the files with hf://datasets/${ctx.repo}@REV/PATH-OR-GLOB`, ExitCode.hub);
    if (typeof e?.path !== 'string' || (e.type !== 'file' && e.type !== 'directory'))
      throw new UserError(`${ctx.what}: the Hub's listing has an entry that is not a file or folder; refusing it`, ExitCode.hub);
    checkPrefix(e.path, prefix, ctx.what);
    if (e.type !== 'file') continue;
    if (tree.has(e.path)) throw new UserError(`${ctx.what}: the Hub listed ${JSON.stringify(e.path)} twice; refusing the listing`, ExitCode.hub);
    tree.set(e.path, toTreeEntry(e, ctx.what));
  }
  return tree;
}

/** What the Hub says of exact paths at commit `sha` (POST paths-info): files with their entries, and which are folders. */
export async function pathsInfo(s: HubSettings, ctx: RequestContext, sha: string, paths: string[], log?: (l: string) => void): Promise<{ files: Tree; folders: Set<string> }> {
  const { pathsInfo: info } = await hubLib();
  const answer = (await info({ repo: { type: 'dataset', name: ctx.repo }, revision: sha, paths, hubUrl: s.endpoint, fetch: apiFetch(s, ctx, log) })) as ListedEntry[];
  const files: Tree = new Map();
  const folders = new Set<string>();
  for (const e of answer) {
    if (typeof e?.path !== 'string' || !paths.includes(e.path)) throw new UserError(`${ctx.what}: the Hub answered for a path that was not asked (${JSON.stringify(e?.path)}); refusing it`, ExitCode.hub);
    if (e.type === 'directory') folders.add(e.path);
    else if (e.type === 'file') files.set(e.path, toTreeEntry(e, ctx.what));
  }
  return { files, folders };
}
