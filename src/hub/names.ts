// How an input argument names a Hugging Face dataset: `OWNER/NAME`, or huggingface_hub's HfFileSystem
// grammar `hf://datasets/OWNER/NAME[@REVISION][/PATH-OR-GLOB]` (utils/_hf_uris.py, parse_hf_uri):
// a revision holding `/` is `%2F`-encoded, `refs/pr/N` and `refs/convert/NAME` are taken as they are.
// Also the rules that keep names from the Hub (revisions, listed paths) safe to use as file names, and
// fsspec's glob (fsspec/utils.py, glob_translate), which both HfFileSystem and `datasets` use.
import { ExitCode, UserError } from '../errors.js';

export interface HubRef {
  /** `OWNER/NAME`. */
  repo: string;
  /** The revision asked for (decoded), or null for the default branch. */
  revision: string | null;
  /** Path or glob inside the repo ('' for the repo itself). */
  path: string;
  /** The argument as the user wrote it. */
  raw: string;
  /** `bare`: `OWNER/NAME`; `uri`: `hf://datasets/...`. */
  form: 'bare' | 'uri';
}

export const DEFAULT_REVISION = 'main';
const PROTOCOL = 'hf://';

/** huggingface_hub's REPO_ID_REGEX for one part, ASCII only; plus its rules: no `--` or `..`, not `.git` at the end. */
const PART = /^(?=[A-Za-z0-9_])[A-Za-z0-9_.-]{1,96}(?<=[A-Za-z0-9_])$/;

/** `OWNER/NAME` as the Hub allows it (validate_repo_id), or an error text. */
export function repoIdProblem(id: string): string | null {
  const parts = id.split('/');
  if (parts.length !== 2) return `repository id must be OWNER/NAME, got "${id}"`;
  if (!parts.every((p) => PART.test(p))) return `repository id "${id}": each part is 1-96 of A-Z a-z 0-9 _ . -, starting and ending with a letter, digit or _`;
  if (id.includes('--') || id.includes('..')) return `repository id "${id}": "--" and ".." are not allowed`;
  if (id.endsWith('.git')) return `repository id "${id}" ends in .git`;
  return null;
}

/** A name that ends like a data file is a local path, never a dataset id (`data/x.parquet`). */
const DATA_FILE_NAME = /\.(parquet|jsonl|jsonl\.gz|json|json\.gz|csv|tsv|txt|arrow|gz)$/i;

/** Whether `arg` has the form of a bare dataset id `OWNER/NAME` (it may still be a local path). */
export function isBareName(arg: string): boolean {
  return repoIdProblem(arg) === null && !DATA_FILE_NAME.test(arg);
}

export function isHubUri(arg: string): boolean {
  return arg.startsWith(PROTOCOL);
}

/** `refs/pr/N` and `refs/convert/NAME` hold a slash and are matched first (_SPECIAL_REFS_REVISION_REGEX). */
const SPECIAL_REF = /^refs\/(?:convert\/[\w.-]+|pr\/\d+)/;

/** DuckDB's and polars' alias for the Hub's parquet conversion branch. */
const ALIASES: Record<string, string> = { '~parquet': 'refs/convert/parquet' };

/** Parse `hf://datasets/OWNER/NAME[@REVISION][/PATH]` (usage error, exit 2, when malformed). */
export function parseHubUri(raw: string): HubRef {
  const fail = (why: string): never => {
    throw new UserError(`${raw}: ${why} (expected hf://datasets/OWNER/NAME[@REVISION][/PATH-OR-GLOB])`, ExitCode.usage);
  };
  if (!raw.startsWith(PROTOCOL)) fail('not an hf:// path');
  const body = raw.slice(PROTOCOL.length).replace(/^\/+|\/+$/g, '');
  const slash = body.indexOf('/');
  const type = slash < 0 ? body : body.slice(0, slash);
  if (type !== 'datasets') {
    if (['models', 'spaces', 'buckets', 'kernels'].includes(type)) fail(`only dataset repositories hold trajectories, not ${type}`);
    fail('name the repository type: hf://datasets/...');
  }
  const location = body.slice(slash + 1);
  if (location === '' || slash < 0) fail('missing repository id');
  const at = location.indexOf('@');
  let repo: string;
  let revision: string | null = null;
  let path: string;
  // An '@' after the repo id (in a file name) is literal, as in parse_hf_uri.
  if (at < 0 || (location.slice(0, at).match(/\//g) ?? []).length > 1) {
    const parts = location.split('/');
    if (parts.length < 2) fail(`repository id must be OWNER/NAME, got "${location}"`);
    repo = `${parts[0]}/${parts[1]}`;
    path = parts.slice(2).join('/');
  } else {
    repo = location.slice(0, at);
    const rest = location.slice(at + 1);
    const special = SPECIAL_REF.exec(rest);
    let rev: string;
    if (special) {
      rev = special[0];
      path = rest.slice(rev.length).replace(/^\//, '');
    } else {
      const s = rest.indexOf('/');
      rev = s < 0 ? rest : rest.slice(0, s);
      path = s < 0 ? '' : rest.slice(s + 1);
    }
    try {
      rev = decodeURIComponent(rev);
    } catch {
      fail(`revision "${rev}" is not valid percent-encoding`);
    }
    if (rev === '') fail('empty revision after @');
    revision = ALIASES[rev] ?? rev;
  }
  const bad = repoIdProblem(repo);
  if (bad) fail(bad);
  if (path.includes('//')) fail('path has an empty segment');
  if (revision !== null) {
    const why = revisionProblem(revision);
    if (why) fail(why);
  }
  const pathWhy = path === '' ? null : repoPathProblem(path.replace(/[*?[\]]/g, 'x'));
  if (pathWhy) fail(pathWhy);
  return { repo, revision, path, raw, form: 'uri' };
}

/** First segments of the website's pages that are no model repository. */
const SITE_PAGES = new Set(['spaces', 'models', 'docs', 'blog', 'papers', 'collections', 'organizations', 'settings', 'learn', 'tasks', 'pricing', 'join', 'login', 'api']);

/** A page or download address on the Hub's website: `https://huggingface.co/...` or `https://hf.co/...`. */
const WEB_ADDRESS = /^https?:\/\/(?:www\.)?(?:huggingface\.co|hf\.co)\/([^?#]*)/i;

/**
 * What to say of an argument that is an address on the Hub's website (a dataset's page, a folder
 * or file in its tree, a download link), or null when it is none: the name this tool reads instead,
 * as the user would type it (`OWNER/NAME`, or `hf://datasets/OWNER/NAME@REVISION/PATH`). Such an
 * address is not taken as a name: huggingface_hub's HfFileSystem, `datasets` and DuckDB do not take
 * it either, and its host may not be the endpoint this run asks (HF_ENDPOINT).
 */
export function webAddressProblem(arg: string): string | null {
  const m = WEB_ADDRESS.exec(arg);
  if (!m) return null;
  const said = `${arg}: an address on the Hub's website, not a file`;
  const general = `${said}; name the dataset as OWNER/NAME or hf://datasets/OWNER/NAME[@REVISION][/PATH-OR-GLOB]`;
  let parts: string[];
  try {
    parts = m[1]!.split('/').filter((p) => p !== '').map(decodeURIComponent);
  } catch {
    return general;
  }
  if (parts[0] !== 'datasets') {
    // A model's page is huggingface.co/OWNER/NAME; the site's own pages (docs, blog, ...) are not repositories.
    const model = parts.length >= 2 && !SITE_PAGES.has(parts[0]!) && repoIdProblem(`${parts[0]}/${parts[1]}`) === null;
    if (parts[0] !== 'spaces' && !model) return general;
    return `${said}: it names ${model ? 'a model repository' : 'a Space'}, and only dataset repositories hold trajectories (hf://datasets/OWNER/NAME)`;
  }
  const repo = parts.slice(1, 3).join('/');
  if (parts.length < 3 || repoIdProblem(repo) !== null) return general;
  // .../tree/REV[/PATH] (a folder), .../blob|resolve/REV/PATH (a file); anything else (the viewer, the
  // files tab, discussions) stands for the dataset. The address writes a revision with a slash as %2F.
  const view = parts[3];
  const inTree = (view === 'tree' || view === 'blob' || view === 'resolve') && parts[4] !== undefined;
  const revision = inTree && parts[4] !== DEFAULT_REVISION ? parts[4]! : null;
  const path = inTree ? parts.slice(5).join('/') : '';
  const name = revision === null && path === '' ? repo : hubUri(repo, revision, path);
  return `${said}; name the dataset as ${name}`;
}

export function bareRef(raw: string): HubRef {
  return { repo: raw, revision: null, path: '', raw, form: 'bare' };
}

export const COMMIT_SHA = /^[0-9a-f]{40}$/;

/**
 * A revision becomes the file `refs/<revision>` of the cache, so it must be a git ref name that
 * cannot leave that folder: git's check-ref-format rules (no `..`, no `//`, no leading or trailing
 * `/`, no component starting with `.` or ending in `.lock`, none of `~^:?*[\` or control characters,
 * not `@{`), at most 255 characters.
 */
export function revisionProblem(rev: string): string | null {
  const why = (w: string) => `revision "${rev}" ${w}`;
  if (rev.length === 0 || rev.length > 255) return why('must be 1 to 255 characters');
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(rev)) return why('holds a character a git ref cannot (space, control, ~ ^ : ? * [ \\)');
  if (rev.includes('..') || rev.includes('//') || rev.includes('@{') || rev === '@') return why('is not a valid git ref name');
  if (rev.startsWith('/') || rev.endsWith('/') || rev.endsWith('.')) return why('is not a valid git ref name');
  for (const c of rev.split('/')) if (c.startsWith('.') || c.endsWith('.lock')) return why('is not a valid git ref name');
  return null;
}

/**
 * A path listed by the Hub (or asked for by the user) becomes a file below `snapshots/<sha>/`: a
 * relative path of plain segments only. `..`, `.`, a leading `/`, a backslash, empty segments and
 * control characters are refused, so nothing is ever written outside that folder.
 */
export function repoPathProblem(path: string): string | null {
  const why = (w: string) => `path "${path}" ${w}`;
  if (path.length === 0 || path.length > 4096) return why('must be 1 to 4096 characters');
  if (path.startsWith('/')) return why('starts with /');
  if (path.includes('\\')) return why('holds a backslash');
  if (/[\x00-\x1f\x7f]/.test(path)) return why('holds a control character');
  for (const seg of path.split('/')) {
    if (seg === '') return why('has an empty segment');
    if (seg === '.' || seg === '..') return why(`has a "${seg}" segment`);
  }
  return null;
}

export function hasMagic(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/** The fixed folder before a glob's first wildcard ('' for the repo root). */
export function globRoot(pattern: string): string {
  const first = pattern.search(/[*?[]/);
  if (first < 0) return pattern;
  const slash = pattern.lastIndexOf('/', first);
  return slash < 0 ? '' : pattern.slice(0, slash);
}

const escapeRe = (c: string) => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** One path segment of a glob (fsspec's `_translate`: `*`, `?`, `[...]`, `[!...]`). */
function translatePart(pat: string): string {
  const STAR = '[^/]*';
  let out = '';
  let i = 0;
  const n = pat.length;
  while (i < n) {
    const c = pat[i++]!;
    if (c === '*') {
      if (!out.endsWith(STAR)) out += STAR;
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      let j = i;
      if (j < n && pat[j] === '!') j++;
      if (j < n && pat[j] === ']') j++;
      while (j < n && pat[j] !== ']') j++;
      if (j >= n) {
        out += '\\[';
        continue;
      }
      let stuff = pat.slice(i, j);
      i = j + 1;
      if (stuff === '') out += '(?!)';
      else if (stuff === '!') out += '.';
      else {
        const negate = stuff.startsWith('!');
        if (negate) stuff = stuff.slice(1);
        // Inside a class only \ ] ^ need escaping for JavaScript; ranges (a-z) stay ranges.
        const body = stuff.replace(/[\\\]^[]/g, '\\$&');
        out += negate ? `[^${body}]` : `[${body}]`;
      }
    } else out += escapeRe(c);
  }
  return out;
}

/**
 * fsspec's glob_translate (recursive, hidden files included): `*` and `?` stay within a segment,
 * `**` as a whole segment spans any number of segments (none included). `**` inside a segment is an
 * invalid pattern, as in fsspec.
 */
export function globToRegExp(pattern: string): RegExp {
  const parts = pattern.split('/');
  const last = parts.length - 1;
  let res = '';
  parts.forEach((part, idx) => {
    if (part === '*') {
      res += idx < last ? '[^/]+/' : '[^/]+';
      return;
    }
    if (part === '**') {
      res += idx < last ? '(?:.+/)?' : '.*';
      return;
    }
    if (part.includes('**')) throw new UserError(`${pattern}: invalid pattern, ** must be a whole path segment`, ExitCode.usage);
    if (part) res += translatePart(part);
    if (idx < last) res += '/';
  });
  return new RegExp(`^(?:${res})$`, 's');
}

/** `hf://datasets/OWNER/NAME@REVISION[/PATH]`, the revision encoded as HfUri.to_uri does. */
export function hubUri(repo: string, revision: string | null, path = ''): string {
  let rev = revision;
  if (rev !== null && rev.includes('/') && !new RegExp(`${SPECIAL_REF.source}$`).test(rev)) rev = rev.replaceAll('/', '%2F');
  return `${PROTOCOL}datasets/${repo}${rev !== null ? `@${rev}` : ''}${path ? `/${path}` : ''}`;
}

/** Each segment of a repo path percent-encoded for a URL (the slashes kept). */
export function urlPath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
