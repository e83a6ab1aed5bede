// Every request to the Hub goes through here: the endpoint (HF_ENDPOINT), the token (HF_TOKEN, else the
// file `huggingface-cli login` writes), offline mode (HF_HUB_OFFLINE: no request at all), timeouts,
// retries with backoff on 429, 5xx and connection errors (honouring Retry-After), redirects followed by
// hand so that the token goes to the Hub's own host only, and the Hub's errors (X-Error-Code) turned
// into one line with an exit code and what to do.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { hfHome } from './cache.js';

export interface HubSettings {
  /** e.g. https://huggingface.co (no trailing slash). */
  endpoint: string;
  token: string | null;
  /** Where the token came from, for messages ('HF_TOKEN', a file path). */
  tokenSource: string | null;
  offline: boolean;
  /** Seconds to wait for an API answer (HF_HUB_ETAG_TIMEOUT, default 10). */
  apiTimeout: number;
  /** Seconds without a byte before a download is retried (HF_HUB_DOWNLOAD_TIMEOUT, default 10). */
  downloadTimeout: number;
  /** Retries of a failed request or a download that made no progress (DIVERGENCE_MINE_HUB_RETRIES, default 5). */
  retries: number;
}

const TRUE = new Set(['1', 'ON', 'YES', 'TRUE']);

function positiveSeconds(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return v !== undefined && v.trim() !== '' && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** DIVERGENCE_MINE_HUB_RETRIES: a whole number 0..20, else the default (huggingface_hub's http_backoff: 5). */
function retryCount(v: string | undefined): number {
  const n = Number(v);
  return v !== undefined && /^\d+$/.test(v.trim()) && n <= 20 ? n : DEFAULT_RETRIES;
}

/** The Hub settings from the environment, read the way huggingface_hub's constants.py reads them. */
export function hubSettings(env: NodeJS.ProcessEnv = process.env): HubSettings {
  const endpoint = (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
  try {
    const u = new URL(endpoint);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new UserError(`HF_ENDPOINT=${endpoint}: not an http(s) URL`, ExitCode.usage);
  }
  let token: string | null = env.HF_TOKEN?.trim() || null;
  let tokenSource: string | null = token ? 'HF_TOKEN' : null;
  if (!token) {
    const file = env.HF_TOKEN_PATH || join(hfHome(env), 'token');
    try {
      token = readFileSync(file, 'utf8').trim() || null;
      if (token) tokenSource = file;
    } catch {
      token = null;
    }
  }
  return {
    endpoint,
    token,
    tokenSource,
    offline: TRUE.has((env.HF_HUB_OFFLINE || env.TRANSFORMERS_OFFLINE || '').toUpperCase()),
    apiTimeout: positiveSeconds(env.HF_HUB_ETAG_TIMEOUT, 10),
    downloadTimeout: positiveSeconds(env.HF_HUB_DOWNLOAD_TIMEOUT, 10),
    retries: retryCount(env.DIVERGENCE_MINE_HUB_RETRIES),
  };
}

/** What a request is about, for the one-line error. */
export interface RequestContext {
  /** e.g. `nebius/x` or `nebius/x@main`. */
  what: string;
  repo: string;
  /** The Hub page of the dataset (where gated terms are accepted). */
  page: string;
  /** A bare `OWNER/NAME` that is no local path either: "not found" says both. */
  bare?: boolean;
}

export function datasetPage(s: HubSettings, repo: string): string {
  return `${s.endpoint}/datasets/${repo}`;
}

/** The one-line error for a failed Hub answer (status and X-Error-Code, as huggingface_hub's hf_raise_for_status reads them). */
export function hubHttpError(s: HubSettings, status: number, errorCode: string | null, ctx: RequestContext, path?: string): UserError {
  const login = s.token ? `the token from ${s.tokenSource} has no access` : 'no token was sent (set HF_TOKEN or run `huggingface-cli login`)';
  if (errorCode === 'GatedRepo')
    return new UserError(`${ctx.what}: gated dataset; accept its terms at ${ctx.page}, then log in (HF_TOKEN or \`huggingface-cli login\`); ${login}`, ExitCode.missingInput);
  if (errorCode === 'RepoNotFound' || ((status === 401 || status === 404) && !errorCode && !path))
    return new UserError(
      `${ctx.what}: ${ctx.bare ? 'no such file or directory, nor a dataset' : 'no such dataset'} on ${s.endpoint} (or it is private and ${login})`,
      ExitCode.missingInput,
    );
  if (errorCode === 'RevisionNotFound') return new UserError(`${ctx.what}: no such revision (a branch, tag or commit sha of the dataset)`, ExitCode.missingInput);
  if (errorCode === 'EntryNotFound' || (status === 404 && path)) return new UserError(`${ctx.what}: no file ${path ?? ''} in the dataset`, ExitCode.missingInput);
  if (status === 401 || status === 403) return new UserError(`${ctx.what}: access refused by ${s.endpoint} (HTTP ${status}); ${login}`, ExitCode.missingInput);
  return new UserError(`${ctx.what}: the Hub answered HTTP ${status}${errorCode ? ` (${errorCode})` : ''}; try again later, or run offline from the cache with HF_HUB_OFFLINE=1`, ExitCode.hub);
}

export function unreachable(s: HubSettings, ctx: RequestContext, why: string): UserError {
  return new UserError(
    `${ctx.what}: the Hub (${s.endpoint}) is unreachable (${why}); check the network or HF_ENDPOINT, or run from the cache with HF_HUB_OFFLINE=1`,
    ExitCode.hub,
  );
}

/** Seconds from Retry-After (delta-seconds or an HTTP date), capped; null when absent or unreadable. */
export function retryAfterSeconds(v: string | null, now = Date.now()): number | null {
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Math.min(Number(v.trim()), 300);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.min(Math.max(0, (t - now) / 1000), 300) : null;
}

/** Backoff before attempt `n` (1-based) as huggingface_hub's http_backoff: 1 s, doubling, at most 8 s. */
export function backoffSeconds(attempt: number): number {
  return Math.min(8, 2 ** (attempt - 1));
}

export const DEFAULT_RETRIES = 5;
const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const MAX_REDIRECTS = 10;

export const sleep = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));

/** Whether `url` is on the Hub's own origin (the only place the token goes). */
export function sameOrigin(s: HubSettings, url: string): boolean {
  return new URL(url).origin === new URL(s.endpoint).origin;
}

/** Headers for `url`: the token only for the Hub's own origin. */
export function headersFor(s: HubSettings, url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'user-agent': 'divergence-mine', ...(s.token && sameOrigin(s, url) ? { authorization: `Bearer ${s.token}` } : {}), ...extra };
}

export interface HubResponse {
  response: Response;
  /** The URL that answered (after redirects). */
  url: string;
  /** Headers of the first answer from the Hub's own host (X-Repo-Commit, X-Linked-Etag live there). */
  hubHeaders: Headers;
}

/**
 * One request with manual redirects: a relative Location is resolved against the current URL, and
 * the Authorization header is dropped as soon as the target's origin is not the Hub's.
 */
export async function requestOnce(s: HubSettings, url: string, init: RequestInit & { headers?: Record<string, string> }, signal: AbortSignal): Promise<HubResponse> {
  let current = url;
  let hubHeaders: Headers | null = null;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await fetch(current, { ...init, headers: headersFor(s, current, init.headers ?? {}), redirect: 'manual', signal });
    if (hubHeaders === null) hubHeaders = response.headers;
    if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
      await response.body?.cancel();
      const next = new URL(response.headers.get('location')!, current);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') throw new TypeError(`redirect to ${next.protocol} refused`);
      current = next.href;
      // 303 and a POST: repeat as GET, as browsers and httpx do.
      if (response.status === 303) init = { ...init, method: 'GET', body: null };
      continue;
    }
    return { response, url: current, hubHeaders };
  }
  throw new TypeError(`more than ${MAX_REDIRECTS} redirects`);
}

/** A fetch failure (DNS, refused, reset, timeout) as one short reason. */
export function networkReason(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'timed out';
  const code = err?.cause?.code;
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || err?.message === 'terminated') return 'the connection broke';
  return code ?? err?.cause?.message ?? err?.message ?? String(e);
}

/**
 * A `fetch` for @huggingface/hub's API calls: offline refused before anything is sent, the token added
 * here (the library is never given it), retries on 429/5xx/connection errors, and an error answer
 * turned into a UserError (so the library's own error text never reaches the user).
 */
export function apiFetch(s: HubSettings, ctx: RequestContext, log?: (line: string) => void): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (s.offline) throw new UserError(`${ctx.what}: HF_HUB_OFFLINE is set and the cache cannot answer this without the Hub`, ExitCode.missingInput);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const given = new Headers(init?.headers);
    given.delete('authorization'); // only headersFor decides where a token goes
    const extra: Record<string, string> = {};
    given.forEach((v, k) => (extra[k] = v));
    for (let attempt = 1; ; attempt++) {
      let r: HubResponse;
      try {
        r = await requestOnce(s, url, { ...init, headers: extra }, AbortSignal.timeout(s.apiTimeout * 1000));
        if (r.response.ok) return r.response;
      } catch (e) {
        if (e instanceof UserError) throw e;
        if (attempt > s.retries) throw unreachable(s, ctx, networkReason(e));
        log?.(`${ctx.what}: ${networkReason(e)}; retrying in ${backoffSeconds(attempt)} s (${attempt}/${s.retries})`);
        await sleep(backoffSeconds(attempt));
        continue;
      }
      const status = r.response.status;
      if (RETRY_STATUS.has(status) && attempt <= s.retries) {
        const wait = retryAfterSeconds(r.response.headers.get('retry-after')) ?? backoffSeconds(attempt);
        await r.response.body?.cancel();
        log?.(`${ctx.what}: the Hub answered HTTP ${status}; retrying in ${wait} s (${attempt}/${s.retries})`);
        await sleep(wait);
        continue;
      }
      await r.response.body?.cancel();
      throw hubHttpError(s, status, r.response.headers.get('x-error-code'), ctx);
    }
  }) as typeof fetch;
}
