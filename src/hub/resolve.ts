// The one entry point from an input argument that names a Hub dataset to local files: the revision
// resolved to a commit once, the file list chosen (a path, a glob, or datasets' rules for a bare
// name), every file fetched into (or found in) the shared cache at that commit, and the provenance
// of each (repo, revision asked, commit, path, etag) for --stats, the card and `merge`.
import { readFileSync, statSync } from 'node:fs';
import { ExitCode, UserError } from '../errors.js';
import { kindByExtension, type InputFile, type InputKind } from '../io/inputs.js';
import { listTree, pathsInfo, resolveRevision } from './api.js';
import { RepoCache, cacheRoot, codePointCompare, etagOf, type Tree, type TreeEntry } from './cache.js';
import { chooseDataFiles } from './data-files.js';
import { cachedFile, ensureFiles, type WantedFile } from './download.js';
import { datasetPage, hubSettings, type HubSettings, type RequestContext } from './http.js';
import { lockKind } from './lock.js';
import { COMMIT_SHA, DEFAULT_REVISION, globRoot, globToRegExp, hasMagic, hubUri, type HubRef } from './names.js';
import { StderrBytes, silentBytes, type ByteProgress } from './progress.js';

export interface HubOptions {
  /** `--hub-config`: the config of a bare name (default: the dataset's default config). */
  config: string | null;
  /** `--hub-split`: the split of a bare name (default: train). */
  split: string | null;
  quiet: boolean;
  env?: NodeJS.ProcessEnv;
}

/** Where one input came from on the Hub (recorded per file in --stats, the card and merge's check). */
export interface HubSource {
  /** The argument as given (`OWNER/NAME`, `hf://...`). */
  arg: string;
  repo: string;
  /** The revision asked for (`main` when none was). */
  revision: string;
  commit: string;
  /** The argument pinned to the commit: `hf://datasets/OWNER/NAME@SHA[/PATH]`. */
  pinned: string;
  endpoint: string;
  config: string | null;
  split: string | null;
  files: { path: string; bytes: number; etag: string }[];
}

export interface HubResolution {
  source: HubSource;
  files: InputFile[];
}

const PARQUET_BRANCH = 'refs/convert/parquet';

function kindOf(path: string, forced: InputKind | null, what: string): InputKind {
  const k = kindByExtension(path);
  if (k && (forced === null || k === forced)) return k;
  if (k && forced) throw new UserError(`${what}: ${path} is ${k === 'jsonl' ? 'JSONL' : 'parquet'}; give it with --${k} (or as a plain input)`, ExitCode.usage);
  throw new UserError(`${what}: ${path}: unsupported format (this tool reads .parquet, .jsonl and .jsonl.gz files)`, ExitCode.usage);
}

/** The files of the Hub's parquet conversion: `{config}/{split}/*.parquet` (or `partial-{split}`). */
function parquetBranchFiles(paths: string[], o: HubOptions, what: string): { config: string; split: string; files: string[] } {
  const configs = [...new Set(paths.filter((p) => p.includes('/')).map((p) => p.split('/')[0]!))].sort(codePointCompare);
  const config = o.config ?? (configs.length === 1 ? configs[0]! : configs.includes('default') ? 'default' : null);
  if (config === null) throw new UserError(`${what}: the parquet conversion has several configs; choose one with --hub-config (${configs.join(', ')})`, ExitCode.usage);
  if (!configs.includes(config)) throw new UserError(`${what}: no config ${config} in the parquet conversion (${configs.join(', ')})`, ExitCode.usage);
  const split = o.split ?? 'train';
  for (const dir of [split, `partial-${split}`]) {
    const files = paths.filter((p) => p.startsWith(`${config}/${dir}/`) && p.endsWith('.parquet')).sort(codePointCompare);
    if (files.length > 0) return { config, split, files };
  }
  const splits = [...new Set(paths.filter((p) => p.startsWith(`${config}/`)).map((p) => p.split('/')[1]!))];
  throw new UserError(`${what}: no split ${split} in config ${config} of the parquet conversion; choose one with --hub-split (${splits.join(', ')})`, ExitCode.usage);
}

/** Resolve one Hub input to local files in the cache. */
export async function resolveHubInput(ref: HubRef, forced: InputKind | null, o: HubOptions): Promise<HubResolution> {
  const env = o.env ?? process.env;
  let s: HubSettings = hubSettings(env);
  const cache = new RepoCache(cacheRoot(env), ref.repo);
  const revision = ref.revision ?? DEFAULT_REVISION;
  const what = ref.raw;
  const ctx: RequestContext = { what, repo: ref.repo, page: datasetPage(s, ref.repo), bare: ref.form === 'bare' };
  const progress: ByteProgress = o.quiet ? silentBytes : new StderrBytes();
  const log = (line: string) => progress.note(line);

  // 1. One revision: the commit, resolved once; everything below is read at it.
  let sha: string;
  if (s.offline) {
    const known = COMMIT_SHA.test(revision) ? revision : cache.readRef(revision);
    if (!known)
      throw new UserError(
        `${what}: ${ref.form === 'bare' ? 'no such file or directory; as a Hub dataset: ' : ''}HF_HUB_OFFLINE is set and revision ${revision} is not in the cache (${cache.folder}/refs/); run once online, or unset HF_HUB_OFFLINE`,
        ExitCode.missingInput,
      );
    sha = known;
  } else {
    // As huggingface_hub's snapshot_download: when the Hub cannot answer (no connection, a timeout, a
    // 5xx) and the cache knows the revision, run from the cache. With a cached answer to fall back on,
    // the revision is asked once, without retries, so a machine without network does not wait.
    const cached = COMMIT_SHA.test(revision) ? (cache.listSnapshot(revision) ? revision : null) : cache.readRef(revision);
    try {
      sha = (await resolveRevision(cached ? { ...s, retries: 0 } : s, ctx, revision, log)).sha;
    } catch (e) {
      if (!(cached && e instanceof UserError && e.exitCode === ExitCode.hub)) throw e;
      log(`${what}: the Hub did not answer; reading the cached commit ${cached.slice(0, 12)} of ${revision} from ${cache.folder} (HF_HUB_OFFLINE=1 skips the Hub)`);
      s = { ...s, offline: true };
      sha = cached;
    }
  }

  // 2. The listing at that commit: the cached one (immutable), else the Hub's, else (offline) the snapshot folder.
  let tree: Tree | null = cache.readTree(sha);
  let sizesOnly: Map<string, number> | null = null;
  const wholeRepo = ref.path === '' || (hasMagic(ref.path) && globRoot(ref.path) === '');
  if (!tree && !s.offline) {
    if (ref.path !== '' && !hasMagic(ref.path)) {
      const got = await pathsInfo(s, ctx, sha, [ref.path], log);
      if (got.folders.has(ref.path)) tree = await listTree(s, ctx, sha, ref.path, log);
      else tree = got.files;
    } else {
      tree = await listTree(s, ctx, sha, wholeRepo ? '' : globRoot(ref.path), log);
      if (wholeRepo) cache.writeTree(sha, tree);
    }
  }
  if (!tree) {
    sizesOnly = cache.listSnapshot(sha);
    if (!sizesOnly) throw new UserError(`${what}: HF_HUB_OFFLINE is set and commit ${sha} is not in the cache (${cache.snapshotFolder(sha)}); run once online, or unset HF_HUB_OFFLINE`, ExitCode.missingInput);
  }
  const paths = tree ? [...tree.keys()] : [...sizesOnly!.keys()];
  const at = `${hubUri(ref.repo, revision)}${revision === sha ? '' : ` (commit ${sha.slice(0, 12)})`}`;

  // 3. The files meant.
  let chosen: string[];
  let config: string | null = null;
  let split: string | null = null;
  if (ref.path === '' && revision === PARQUET_BRANCH) {
    ({ config, split, files: chosen } = parquetBranchFiles(paths, o, what));
  } else if (ref.path === '') {
    let readme: string | null = null;
    if (paths.includes('README.md')) {
      const local = await fetchFiles(s, ctx, cache, sha, ['README.md'], tree, progress);
      readme = readFileSync(local[0]!, 'utf8');
    }
    const choice = chooseDataFiles(paths, readme, { config: o.config, split: o.split }, what);
    if (choice.module !== 'parquet' && choice.module !== 'json')
      throw new UserError(`${what}: its data files are ${choice.module} files; this tool reads .parquet, .jsonl and .jsonl.gz`, ExitCode.usage);
    ({ config, split, files: chosen } = choice);
  } else if (hasMagic(ref.path)) {
    const re = globToRegExp(ref.path);
    chosen = paths.filter((p) => re.test(p)).sort(codePointCompare);
    if (chosen.length === 0) throw new UserError(`${what}: no file of ${at} matches ${ref.path}`, ExitCode.missingInput);
  } else if (paths.includes(ref.path)) chosen = [ref.path];
  else {
    const below = paths.filter((p) => p.startsWith(`${ref.path}/`)).sort(codePointCompare);
    chosen = below.filter((p) => (forced ? kindByExtension(p) === forced : kindByExtension(p) !== null));
    if (below.length === 0) throw new UserError(`${what}: no file or folder ${ref.path} in ${at}`, ExitCode.missingInput);
    if (chosen.length === 0) throw new UserError(`${what}: folder ${ref.path} holds no ${forced ? `*.${forced}` : '*.parquet or *.jsonl'} file`, ExitCode.missingInput);
  }
  if (chosen.length === 0) throw new UserError(`${what}: no data files in ${at}${config ? ` (config ${config}, split ${split})` : ''}`, ExitCode.missingInput);
  const kinds = chosen.map((p) => kindOf(p, forced, what));

  // 4. The bytes: from the cache when there, else downloaded at the commit.
  const local = await fetchFiles(s, ctx, cache, sha, chosen, tree, progress, o.quiet);
  if (!s.offline) cache.writeRef(revision, sha);
  const files: InputFile[] = [];
  const provenance: HubSource['files'] = [];
  chosen.forEach((p, i) => {
    const bytes = statSync(local[i]!).size; // through the symlink: the blob's size
    const etag = tree ? etagOf(tree.get(p)!) : '';
    files.push({ path: local[i]!, kind: kinds[i]!, bytes, source: { repo: ref.repo, revision, commit: sha, path: p, etag } });
    provenance.push({ path: p, bytes, etag });
  });
  return {
    files,
    source: { arg: ref.raw, repo: ref.repo, revision, commit: sha, pinned: hubUri(ref.repo, sha, ref.path), endpoint: s.endpoint, config, split, files: provenance },
  };
}

/** Local paths of `paths` at `sha`: present in the snapshot, or (online) fetched. */
async function fetchFiles(s: HubSettings, ctx: RequestContext, cache: RepoCache, sha: string, paths: string[], tree: Tree | null, progress: ByteProgress, quiet = true): Promise<string[]> {
  if (!tree) {
    // Offline without a cached listing: what the snapshot holds is all there is.
    return paths.map((p) => {
      if (cache.snapshotSize(sha, p) === null) throw missingOffline(ctx, cache, sha, p);
      return cache.snapshotPath(sha, p);
    });
  }
  const wanted: WantedFile[] = paths.map((p) => ({ path: p, entry: tree.get(p) as TreeEntry }));
  if (s.offline) {
    for (const f of wanted) {
      const have = cachedFile(cache, sha, f);
      if (have === 'blob') cache.linkSnapshot(sha, f.path, etagOf(f.entry));
      else if (have === null) throw missingOffline(ctx, cache, sha, f.path);
    }
  } else {
    const missing = wanted.filter((f) => cachedFile(cache, sha, f) === null);
    if (missing.length > 0 && !quiet) progress.note(`${ctx.what}: ${missing.length} file${missing.length > 1 ? 's' : ''} to download into ${cache.folder} (lock: ${lockKind() === 'flock' ? 'flock, shared with huggingface_hub' : 'lock file, this tool only'})`);
    await ensureFiles({ settings: s, ctx, cache, sha, progress }, wanted, (p) => progress.note(`${p}: waiting for another process that is downloading it`));
  }
  return paths.map((p) => cache.snapshotPath(sha, p));
}

function missingOffline(ctx: RequestContext, cache: RepoCache, sha: string, path: string): UserError {
  return new UserError(`${ctx.what}: HF_HUB_OFFLINE is set and ${path} (commit ${sha.slice(0, 12)}) is not in the cache (${cache.folder}); run once online, or unset HF_HUB_OFFLINE`, ExitCode.missingInput);
}
