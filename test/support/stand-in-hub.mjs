// A stand-in Hugging Face Hub on 127.0.0.1 (node:http) for the tests and the one-off Python checks:
// dataset repos served with the Hub's endpoints and headers, and its faults.
//
//   GET  /api/datasets/{id}[/revision/{rev}]         info JSON with sha, private, gated, siblings
//   GET  /api/datasets/{id}/tree/{rev}[/{path}]       listing, paged with a Link header (absolute URL)
//   POST /api/datasets/{id}/paths-info/{rev}          JSON or form body {paths, expand}
//   HEAD/GET /datasets/{id}/resolve/{rev}/{path}      X-Repo-Commit, ETag, X-Linked-Etag, X-Linked-Size;
//                                                     LFS files: 302 to a CDN path (relative, or on a second origin)
//   GET  /cdn/{sha256}                                the bytes, with Range (206 + Content-Range)
// Errors carry X-Error-Code (RepoNotFound, GatedRepo, RevisionNotFound, EntryNotFound); faults: a cut
// connection, a wrong body, a slow or stalled body, 429 with Retry-After, 500.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const sha1 = (b) => createHash('sha1').update(b).digest('hex');
const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const gitBlob = (b) => sha1(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]));

/** A fake but stable 40-hex commit id. */
export function commitId(repo, label) {
  return sha1(Buffer.from(`commit ${repo} ${label}`));
}

/**
 * `repos`: { 'owner/name': { commits: { <label>: { files: { path: Buffer|string } } }, refs: { main: <label>, ... },
 * gated?: 'manual'|'auto', private?: true, lfs?: (path) => boolean } }. A file is LFS when `lfs(path)` (default:
 * not README.md and not .gitattributes).
 */
function buildRepos(spec) {
  const repos = new Map();
  for (const [id, r] of Object.entries(spec)) {
    const lfs = r.lfs ?? ((p) => !/(^|\/)(README\.md|\.gitattributes)$/.test(p));
    const commits = new Map();
    for (const [label, c] of Object.entries(r.commits)) {
      const sha = c.sha ?? commitId(id, label);
      const files = new Map();
      for (const [path, body] of Object.entries(c.files)) {
        const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
        const isLfs = lfs(path);
        const entry = { path, bytes, size: bytes.length, oid: gitBlob(bytes), lfs: null };
        if (isLfs) {
          const oid = sha256(bytes);
          const pointer = Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${bytes.length}\n`);
          entry.lfs = { oid, size: bytes.length, pointerSize: pointer.length };
          entry.oid = gitBlob(pointer);
        }
        files.set(path, entry);
      }
      commits.set(sha, { sha, label, files });
    }
    const refs = new Map();
    for (const [ref, label] of Object.entries(r.refs ?? { main: Object.keys(r.commits)[0] })) refs.set(ref, [...commits.values()].find((c) => c.label === label).sha);
    repos.set(id, { id, gated: r.gated ?? false, private: Boolean(r.private), commits, refs });
  }
  return repos;
}

function dirsOf(files) {
  const dirs = new Set();
  for (const p of files.keys()) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return dirs;
}

function treeEntry(f, expand) {
  return {
    type: 'file',
    oid: f.oid,
    size: f.size,
    path: f.path,
    ...(f.lfs ? { lfs: f.lfs } : {}),
    ...(expand ? { lastCommit: { id: 'x'.repeat(40), title: 'commit', date: '2025-01-01T00:00:00.000Z' } } : {}),
  };
}

/**
 * Start the stand-in. Returns { url, cdnUrl, requests, faults, close() }; `faults` is mutable:
 *   cut: { [path]: { after, times } }         close the connection after `after` bytes, `times` times
 *   corrupt: Set<path>                         serve the body with one byte changed
 *   slow: { [path]: { chunk, delayMs } }       stream in chunks with a pause between
 *   stall: { [path]: { ms, times } }           send the headers, then nothing for `ms`
 *   rateLimit: { count, retryAfter }           the first `count` requests answer 429
 *   serverError: number                        the next N requests answer 500
 *   tokens: Set<string>                        tokens that exist; acceptedGated: Set<token>
 *   cdn: 'relative' | 'other-origin'           where LFS downloads are redirected
 */
export async function startHub(spec, opts = {}) {
  const repos = buildRepos(spec);
  const requests = [];
  const faults = {
    cut: {},
    corrupt: new Set(),
    slow: {},
    stall: {},
    rateLimit: { count: 0, retryAfter: 1 },
    serverError: 0,
    tokens: new Set(opts.tokens ?? []),
    acceptedGated: new Set(opts.acceptedGated ?? []),
    cdn: opts.cdn ?? 'relative',
    pageSize: opts.pageSize ?? 2,
    ...opts.faults,
  };
  const blobs = new Map();
  for (const r of repos.values()) for (const c of r.commits.values()) for (const f of c.files.values()) if (f.lfs) blobs.set(f.lfs.oid, f);

  let base = '';
  let cdnBase = '';

  const send = (res, status, body, headers = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
  const error = (res, status, code, message) => send(res, status, { error: message }, code ? { 'x-error-code': code } : {});

  const tokenOf = (req) => {
    const a = req.headers.authorization;
    return a && a.startsWith('Bearer ') ? a.slice(7) : null;
  };

  /** The repo, with the Hub's access rules; null when an error was sent. */
  const repoFor = (req, res, id, forDownload) => {
    const r = repos.get(id);
    const token = tokenOf(req);
    const known = token !== null && faults.tokens.has(token);
    if (!r || (r.private && !known)) {
      error(res, 401, 'RepoNotFound', 'Repository not found');
      return null;
    }
    if (forDownload && r.gated && !faults.acceptedGated.has(token)) {
      if (!known) error(res, 401, 'GatedRepo', 'Access to this dataset is restricted; you must be authenticated');
      else error(res, 403, 'GatedRepo', 'Access to this dataset is restricted and you are not in the authorized list');
      return null;
    }
    return r;
  };
  const commitFor = (res, r, rev) => {
    const sha = /^[0-9a-f]{40}$/.test(rev) && r.commits.has(rev) ? rev : r.refs.get(rev);
    if (!sha) {
      error(res, 404, 'RevisionNotFound', `Invalid rev id: ${rev}`);
      return null;
    }
    return r.commits.get(sha);
  };

  /** Serve `f`'s bytes from `start`, with the faults set for its path. */
  const serveBytes = async (req, res, f, headers) => {
    let body = f.bytes;
    if (faults.corrupt.has(f.path)) {
      body = Buffer.from(body);
      body[Math.floor(body.length / 2)] ^= 0xff;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    let start = 0;
    let status = 200;
    const h = { 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream', ...headers };
    if (m) {
      start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` });
        res.end();
        return 416;
      }
      status = 206;
      h['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    }
    h['content-length'] = body.length - start;
    if (req.method === 'HEAD') {
      res.writeHead(status, h);
      res.end();
      return status;
    }
    res.writeHead(status, h);
    const cut = faults.cut[f.path];
    const stall = faults.stall[f.path];
    const slow = faults.slow[f.path];
    if (stall && stall.times > 0) {
      stall.times--;
      await new Promise((r) => setTimeout(r, stall.ms));
    }
    let pos = start;
    const end = cut && cut.times > 0 ? Math.max(start, Math.min(body.length, cut.after)) : body.length;
    const chunk = slow?.chunk ?? 64 * 1024;
    while (pos < end && !res.destroyed) {
      const n = Math.min(chunk, end - pos);
      const ok = res.write(body.subarray(pos, pos + n));
      pos += n;
      if (slow) await new Promise((r) => setTimeout(r, slow.delayMs));
      else if (!ok) await new Promise((r) => res.once('drain', r));
    }
    if (cut && cut.times > 0 && end < body.length) {
      cut.times--;
      res.socket?.destroy();
      return status;
    }
    res.end();
    return status;
  };

  const handle = async (req, res, origin) => {
    const url = new URL(req.url, 'http://x');
    const path = url.pathname;
    const entry = { method: req.method, path: req.url, status: 0, range: req.headers.range ?? null, auth: Boolean(req.headers.authorization), origin };
    requests.push(entry);
    res.on('finish', () => (entry.status ||= res.statusCode));
    res.on('close', () => (entry.status ||= res.statusCode));
    if (origin === 'cdn' || path.startsWith('/cdn/')) {
      const f = blobs.get(path.slice('/cdn/'.length));
      if (!f) return error(res, 404, null, 'no such blob');
      // Reached by a relative redirect the answer still carries the Hub's headers (huggingface_hub
      // follows relative redirects for its HEAD call and reads them from the final answer).
      const commit = url.searchParams.get('commit');
      const hubHeaders = origin === 'hub' && commit ? { 'x-repo-commit': commit, 'x-linked-etag': `"${f.lfs.oid}"`, 'x-linked-size': String(f.size), etag: `"${f.oid}"` } : {};
      entry.status = await serveBytes(req, res, f, hubHeaders);
      return;
    }
    if (faults.rateLimit.count > 0) {
      faults.rateLimit.count--;
      return send(res, 429, { error: 'rate limited' }, { 'retry-after': String(faults.rateLimit.retryAfter) });
    }
    if (faults.serverError > 0) {
      faults.serverError--;
      return error(res, 500, null, 'internal error');
    }
    let m;
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)(?:\/revision\/([^/]+))?$/.exec(path)) && req.method === 'GET') {
      const r = repoFor(req, res, decodeURIComponent(m[1]), false);
      if (!r) return;
      const c = commitFor(res, r, decodeURIComponent(m[2] ?? 'main'));
      if (!c) return;
      return send(res, 200, {
        _id: sha1(Buffer.from(r.id)).slice(0, 24),
        id: r.id,
        sha: c.sha,
        private: r.private,
        gated: r.gated,
        disabled: false,
        downloads: 0,
        likes: 0,
        lastModified: '2025-01-01T00:00:00.000Z',
        siblings: [...c.files.keys()].map((rfilename) => ({ rfilename })),
      });
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/tree\/([^/]+)(?:\/(.*))?$/.exec(path)) && req.method === 'GET') {
      const r = repoFor(req, res, decodeURIComponent(m[1]), false);
      if (!r) return;
      const c = commitFor(res, r, decodeURIComponent(m[2]));
      if (!c) return;
      const prefix = m[3] ? decodeURIComponent(m[3]).replace(/\/$/, '') : '';
      const recursive = ['true', '1', 'True'].includes(url.searchParams.get('recursive') ?? '');
      const expand = ['true', '1', 'True'].includes(url.searchParams.get('expand') ?? '');
      const dirs = dirsOf(c.files);
      if (prefix && !dirs.has(prefix)) return error(res, 404, 'EntryNotFound', `${prefix} does not exist`);
      const under = (p) => (prefix ? p.startsWith(`${prefix}/`) : true) && (recursive || !p.slice(prefix ? prefix.length + 1 : 0).includes('/'));
      const all = [
        ...[...dirs].filter(under).map((p) => ({ type: 'directory', oid: sha1(Buffer.from(`tree ${p}`)), size: 0, path: p })),
        ...[...c.files.values()].filter((f) => under(f.path)).map((f) => treeEntry(f, expand)),
      ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const cursor = Number(url.searchParams.get('cursor') ?? 0);
      const page = all.slice(cursor, cursor + faults.pageSize);
      const headers = {};
      if (cursor + faults.pageSize < all.length) {
        const next = new URL(req.url, base);
        next.searchParams.set('cursor', String(cursor + faults.pageSize));
        headers.link = `<${next.href}>; rel="next"`;
      }
      return send(res, 200, page, headers);
    }
    if ((m = /^\/api\/datasets\/([^/]+\/[^/]+)\/paths-info\/([^/]+)$/.exec(path)) && req.method === 'POST') {
      const r = repoFor(req, res, decodeURIComponent(m[1]), false);
      if (!r) return;
      const c = commitFor(res, r, decodeURIComponent(m[2]));
      if (!c) return;
      const chunks = [];
      for await (const ch of req) chunks.push(ch);
      const text = Buffer.concat(chunks).toString('utf8');
      let paths = [];
      let expand = false;
      if ((req.headers['content-type'] ?? '').includes('json')) {
        const b = JSON.parse(text || '{}');
        paths = b.paths ?? [];
        expand = Boolean(b.expand);
      } else {
        const form = new URLSearchParams(text);
        paths = form.getAll('paths');
        expand = ['true', 'True', '1'].includes(form.get('expand') ?? '');
      }
      const dirs = dirsOf(c.files);
      const out = [];
      for (const p of paths) {
        if (c.files.has(p)) out.push(treeEntry(c.files.get(p), expand));
        else if (dirs.has(p)) out.push({ type: 'directory', oid: sha1(Buffer.from(`tree ${p}`)), size: 0, path: p });
      }
      return send(res, 200, out);
    }
    if ((m = /^\/datasets\/([^/]+\/[^/]+)\/resolve\/(.+)$/.exec(path)) && (req.method === 'GET' || req.method === 'HEAD')) {
      const r = repoFor(req, res, decodeURIComponent(m[1]), true);
      if (!r) return;
      // The revision is one segment (percent-encoded), or a special ref written out.
      const rest = m[2];
      const special = /^refs\/(?:convert\/[\w.-]+|pr\/\d+)/.exec(rest);
      const rev = special ? special[0] : decodeURIComponent(rest.split('/')[0]);
      const filePath = decodeURIComponent(rest.slice((special ? special[0] : rest.split('/')[0]).length + 1));
      const c = commitFor(res, r, rev);
      if (!c) return;
      const f = c.files.get(filePath);
      if (!f) return error(res, 404, 'EntryNotFound', `${filePath} does not exist on "${rev}"`);
      const headers = { 'x-repo-commit': c.sha, etag: `"${f.oid}"` };
      if (f.lfs) {
        Object.assign(headers, { 'x-linked-etag': `"${f.lfs.oid}"`, 'x-linked-size': String(f.size) });
        const q = `?file=${encodeURIComponent(filePath)}&commit=${c.sha}`;
        const loc = faults.cdn === 'other-origin' ? `${cdnBase}/cdn/${f.lfs.oid}${q}` : `/cdn/${f.lfs.oid}${q}`;
        res.writeHead(302, { ...headers, location: loc, 'content-length': 0 });
        res.end();
        return;
      }
      entry.status = await serveBytes(req, res, f, headers);
      return;
    }
    error(res, 404, null, `no route ${req.method} ${path}`);
  };

  const mk = (origin) =>
    createServer((req, res) => {
      handle(req, res, origin).catch((e) => {
        if (!res.headersSent) error(res, 500, null, String(e));
        else res.destroy();
      });
    });
  const hub = mk('hub');
  const cdn = mk('cdn');
  await new Promise((r) => hub.listen(opts.port ?? 0, '127.0.0.1', r));
  await new Promise((r) => cdn.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${hub.address().port}`;
  cdnBase = `http://127.0.0.1:${cdn.address().port}`;
  return {
    url: base,
    cdnUrl: cdnBase,
    requests,
    faults,
    repos,
    /** The requests as `METHOD path status` lines (query strings kept). */
    log: () => requests.map((q) => `${q.method} ${q.path} ${q.status}${q.range ? ` (${q.range})` : ''}`),
    close: () =>
      Promise.all(
        [hub, cdn].map(
          (s) =>
            new Promise((r) => {
              s.closeAllConnections?.();
              s.close(() => r());
            }),
        ),
      ),
  };
}
