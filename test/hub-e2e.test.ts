// Hub datasets end to end through the built CLI, against the stand-in Hub (test/support/stand-in-hub.mjs,
// 127.0.0.1 only) with HF_ENDPOINT pointing at it and HF_HUB_CACHE at a temporary folder: pairs equal
// the local file's, the cache is huggingface_hub's layout, cuts resume, wrong bodies are refused,
// offline runs make no request, a cache made by huggingface_hub is used as is, runs sharing a cache
// download once, and every failure is one line with its exit code.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 60_000 });
import { BIN, ROOT } from './support/cli.js';
// @ts-expect-error plain JS test support
import { commitId, startHub } from './support/stand-in-hub.mjs';
// @ts-expect-error plain JS test support
import { PUBLISHED_REPO, standInRepos } from './support/hub-repos.mjs';

const run = promisify(execFile);
const REPO = PUBLISHED_REPO as string;
const SHA = commitId(REPO, 'c1') as string;
const FOLDER = 'datasets--nebius--SWE-rebench-openhands-trajectories';
const root = mkdtempSync(join(tmpdir(), 'dm-hub-e2e-'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let hub: any;
let n = 0;
let local = '';

interface Run {
  code: number;
  stderr: string;
}

function env(cache: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['HF_TOKEN', 'HF_TOKEN_PATH', 'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE', 'XDG_CACHE_HOME']) delete e[k];
  return { ...e, HF_ENDPOINT: hub.url, HF_HUB_CACHE: cache, HF_HOME: join(root, 'home'), HF_HUB_DOWNLOAD_TIMEOUT: '2', ...extra };
}

async function mine(args: string[], e: NodeJS.ProcessEnv): Promise<Run> {
  try {
    const r = await run(process.execPath, [BIN, 'mine', ...args], { env: e, timeout: 60_000, maxBuffer: 1 << 26 });
    return { code: 0, stderr: r.stderr };
  } catch (err) {
    const x = err as { code?: number; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, stderr: x.stderr ?? '' };
  }
}

const fresh = () => join(root, `case-${++n}`);
const bodyGets = () => hub.requests.filter((q: { path: string; method: string }) => q.method === 'GET' && q.path.startsWith('/cdn/')).length;

beforeAll(async () => {
  hub = await startHub(standInRepos(), { pageSize: 2, tokens: ['hf_valid'], acceptedGated: ['hf_accepted'] });
  local = join(root, 'local.jsonl');
  const r = await mine(['--parquet', join(ROOT, 'fixtures', 'forks.parquet'), '--out', local, '--quiet'], env(join(root, 'unused')));
  expect(r.code).toBe(0);
});
afterAll(async () => {
  await hub.close();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  hub.requests.length = 0;
  hub.faults.cut = {};
  hub.faults.corrupt = new Set();
  hub.faults.slow = {};
  hub.faults.stall = {};
  hub.faults.cdn = 'relative';
  hub.faults.pageSize = 2;
});

describe('the published reproduce line against the stand-in Hub', () => {
  it('a bare name: pairs equal the local file, the cache is huggingface_hub layout, stats and card pin the commit', async () => {
    const dir = fresh();
    const cache = join(dir, 'hub');
    mkdirSync(dir);
    const out = join(dir, 'pairs.jsonl');
    hub.faults.pageSize = 1;
    const r = await mine(['--parquet', REPO, '--out', out, '--stats', join(dir, 'stats.json'), '--card', join(dir, 'card', 'README.md')], env(cache));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(local));
    expect(r.stderr).toContain(`${REPO}: no such local path; reading the Hub dataset hf://datasets/${REPO}`);
    expect(hub.log()).toEqual([
      `GET /api/datasets/${REPO}/revision/main?expand=private&expand=downloads&expand=gated&expand=likes&expand=lastModified&expand=sha 200`,
      `GET /api/datasets/${REPO}/tree/${SHA}?recursive=true&expand=false 200`,
      `GET /api/datasets/${REPO}/tree/${SHA}?recursive=true&expand=false&cursor=1 200`,
      `GET /datasets/${REPO}/resolve/${SHA}/README.md 200`,
      `GET /datasets/${REPO}/resolve/${SHA}/trajectories.parquet 302`,
      expect.stringMatching(new RegExp(`^GET /cdn/[0-9a-f]{64}\\?file=trajectories.parquet&commit=${SHA} 200$`)),
    ]);
    const repo = join(cache, FOLDER);
    expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe(SHA);
    const snap = join(repo, 'snapshots', SHA);
    const link = readlinkSync(join(snap, 'trajectories.parquet'));
    expect(link).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/);
    expect(lstatSync(join(snap, 'README.md')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(snap, 'trajectories.parquet'))).toEqual(readFileSync(join(ROOT, 'fixtures', 'forks.parquet')));
    expect(readdirSync(join(repo, 'blobs')).sort()).toHaveLength(2);
    const tree = JSON.parse(readFileSync(join(repo, 'trees', `${SHA}.json`), 'utf8'));
    expect(tree.format_version).toBe(1);
    expect(Object.keys(tree.files)).toEqual(['README.md', 'trajectories.parquet']);
    const stats = JSON.parse(readFileSync(join(dir, 'stats.json'), 'utf8'));
    expect(stats.inputs).toEqual([
      { path: join(snap, 'trajectories.parquet'), kind: 'parquet', bytes: 59971, hub: { repo: REPO, revision: 'main', commit: SHA, path: 'trajectories.parquet', etag: link.slice('../../blobs/'.length) } },
    ]);
    const card = readFileSync(join(dir, 'card', 'README.md'), 'utf8');
    expect(card).toContain(`--parquet hf://datasets/${REPO}@${SHA}`);
    expect(card).toContain(`Input: [${REPO}](${hub.url}/datasets/${REPO}/tree/${SHA}) at commit \`${SHA}\` (revision \`main\`): \`trajectories.parquet\` (59,971 bytes).`);
  });

  it('a warm cache: a rerun downloads nothing, and with HF_HUB_OFFLINE=1 makes no request at all', async () => {
    const cache = join(fresh(), 'hub');
    const out = join(root, `warm-${n}.jsonl`);
    expect((await mine(['--parquet', REPO, '--out', out, '-q'], env(cache))).code).toBe(0);
    hub.requests.length = 0;
    expect((await mine(['--parquet', REPO, '--out', out, '-q', '--force'], env(cache))).code).toBe(0);
    expect(hub.log()).toEqual([expect.stringMatching(/^GET \/api\/datasets\/.*\/revision\/main\?.* 200$/)]);
    hub.requests.length = 0;
    const off = await mine(['--parquet', REPO, '--out', out, '--force'], env(cache, { HF_HUB_OFFLINE: '1' }));
    expect(off.code, off.stderr).toBe(0);
    expect(hub.requests).toEqual([]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it('a cache laid out by huggingface_hub (fixtures/hub/python-cache, made by snapshot_download) is used as is', async () => {
    const cache = join(fresh(), 'hub');
    cpSync(join(ROOT, 'fixtures', 'hub', 'python-cache'), cache, { recursive: true, verbatimSymlinks: true });
    const out = join(root, `py-${n}.jsonl`);
    const off = await mine(['--parquet', REPO, '--out', out, '-q'], env(cache, { HF_HUB_OFFLINE: '1' }));
    expect(off.code, off.stderr).toBe(0);
    expect(hub.requests).toEqual([]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
    const on = await mine(['--parquet', `hf://datasets/${REPO}/trajectories.parquet`, '--out', out, '-q', '--force'], env(cache));
    expect(on.code, on.stderr).toBe(0);
    expect(bodyGets()).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(local));
    // An older huggingface_hub (or hf_hub_download alone) writes no trees/<sha>.json: offline, the
    // snapshot folder is the listing.
    rmSync(join(cache, FOLDER, 'trees'), { recursive: true });
    hub.requests.length = 0;
    const bare = await mine(['--parquet', REPO, '--out', out, '-q', '--force'], env(cache, { HF_HUB_OFFLINE: '1' }));
    expect(bare.code, bare.stderr).toBe(0);
    expect(hub.requests).toEqual([]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it('offline with a cold cache: one line naming what is missing, exit 3, no output', async () => {
    const out = join(root, `cold-${n}.jsonl`);
    const r = await mine(['--parquet', REPO, '--out', out], env(join(fresh(), 'hub'), { HF_HUB_OFFLINE: '1' }));
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n').pop()).toMatch(/error: nebius\/SWE-rebench-openhands-trajectories: no such file or directory; as a Hub dataset: HF_HUB_OFFLINE is set and revision main is not in the cache/);
    expect(hub.requests).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });
});

describe('downloads a user can trust', () => {
  it('a connection cut midway is resumed with a Range request, to byte-identical pairs', async () => {
    hub.faults.cut = { 'trajectories.parquet': { after: 20_000, times: 1 } };
    const out = join(fresh() + '.jsonl');
    const r = await mine(['--parquet', REPO, '--out', out], env(join(root, `cut-${n}`)));
    expect(r.code, r.stderr).toBe(0);
    const cdn = hub.log().filter((l: string) => l.includes('/cdn/'));
    expect(cdn).toEqual([expect.stringMatching(/ 200$/), expect.stringMatching(/ 206 \(bytes=20000-\)$/)]);
    expect(r.stderr).toMatch(/trajectories.parquet: the connection (broke|closed) at byte 20,000 of 59,971; retrying in 1 s with a Range request/);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it('the next run resumes a download left in blobs/<etag>.incomplete', async () => {
    const cache = join(fresh(), 'hub');
    const body = readFileSync(join(ROOT, 'fixtures', 'forks.parquet'));
    const etag = String(hub.repos.get(REPO).commits.get(SHA).files.get('trajectories.parquet').lfs.oid);
    mkdirSync(join(cache, FOLDER, 'blobs'), { recursive: true });
    writeFileSync(join(cache, FOLDER, 'blobs', `${etag}.incomplete`), body.subarray(0, 33_333));
    const out = join(root, `resume-${n}.jsonl`);
    const r = await mine(['--parquet', REPO, '--out', out], env(cache));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('trajectories.parquet: resuming at 33,333 of 59,971 bytes');
    expect(hub.log().filter((l: string) => l.includes('/cdn/'))).toEqual([expect.stringMatching(/ 206 \(bytes=33333-\)$/)]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
    expect(existsSync(join(cache, FOLDER, 'blobs', `${etag}.incomplete`))).toBe(false);
  });

  it('a body whose sha256 is wrong is refused and removed: exit 10, one line, no blob, no output', async () => {
    hub.faults.corrupt = new Set(['trajectories.parquet']);
    const cache = join(fresh(), 'hub');
    const out = join(root, `bad-${n}.jsonl`);
    const r = await mine(['--parquet', REPO, '--out', out], env(cache));
    expect(r.code).toBe(10);
    expect(r.stderr.trim().split('\n').pop()).toMatch(/error: nebius\/SWE-rebench-openhands-trajectories: trajectories.parquet: the downloaded bytes do not match the Hub's listing \(59,971 bytes, sha256 [0-9a-f]{64}; listed 59,971 bytes, [0-9a-f]{64}\); the bad bytes were removed/);
    expect(readdirSync(join(cache, FOLDER, 'blobs'))).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/)]); // only README.md's
    expect(existsSync(out)).toBe(false);
  });

  it('429 with Retry-After and a 500 are retried; a stalled body times out and resumes', async () => {
    hub.faults.rateLimit = { count: 1, retryAfter: 1 };
    hub.faults.serverError = 1;
    hub.faults.stall = { 'trajectories.parquet': { ms: 3000, times: 1 } };
    const out = join(fresh() + '.jsonl');
    const r = await mine(['--parquet', REPO, '--out', out], env(join(root, `retry-${n}`), { HF_HUB_DOWNLOAD_TIMEOUT: '1' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the Hub answered HTTP 429; retrying in 1 s/);
    expect(r.stderr).toMatch(/the Hub answered HTTP 500; retrying in 2 s \(2\/5\)/);
    expect(r.stderr).toMatch(/trajectories.parquet: (no byte for 1 s at byte 0 of 59,971|timed out); retrying in 1 s/);
    expect(hub.log().slice(0, 3)).toEqual([expect.stringMatching(/ 429$/), expect.stringMatching(/ 500$/), expect.stringMatching(/revision\/main.* 200$/)]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it('the token goes to the Hub only, never to a CDN on another origin', async () => {
    hub.faults.cdn = 'other-origin';
    const out = join(fresh() + '.jsonl');
    const r = await mine(['--parquet', REPO, '--out', out, '-q'], env(join(root, `tok-${n}`), { HF_TOKEN: 'hf_valid' }));
    expect(r.code, r.stderr).toBe(0);
    const seen = hub.requests.map((q: { origin: string; auth: boolean }) => `${q.origin}:${q.auth}`);
    // revision, tree, README, the resolve redirect: with the token; the other origin's CDN: without.
    expect(seen).toEqual(['hub:true', 'hub:true', 'hub:true', 'hub:true', 'cdn:false']);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it('two runs sharing one cache at once download the body once', async () => {
    hub.faults.slow = { 'trajectories.parquet': { chunk: 4096, delayMs: 40 } };
    const cache = join(fresh(), 'hub');
    const [a, b] = await Promise.all([
      mine(['--parquet', REPO, '--out', join(root, `two-a-${n}.jsonl`), '-q'], env(cache)),
      mine(['--parquet', REPO, '--out', join(root, `two-b-${n}.jsonl`), '-q'], env(cache)),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(bodyGets()).toBe(1);
    expect(readFileSync(join(root, `two-a-${n}.jsonl`))).toEqual(readFileSync(local));
    expect(readFileSync(join(root, `two-b-${n}.jsonl`))).toEqual(readFileSync(local));
  });

  it('without flock (DIVERGENCE_MINE_NO_FLOCK=1) the lock file still makes two runs download once', async () => {
    hub.faults.slow = { 'trajectories.parquet': { chunk: 4096, delayMs: 40 } };
    const cache = join(fresh(), 'hub');
    const e = env(cache, { DIVERGENCE_MINE_NO_FLOCK: '1' });
    const [a, b] = await Promise.all([mine(['--parquet', REPO, '--out', join(root, `lf-a-${n}.jsonl`), '-q'], e), mine(['--parquet', REPO, '--out', join(root, `lf-b-${n}.jsonl`), '-q'], e)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(bodyGets()).toBe(1);
    expect(readdirSync(join(cache, '.locks', FOLDER)).filter((f) => f.endsWith('.divergence-mine'))).toEqual([]);
  });

  it('Ctrl-C during a download: exit 130, no output, the .incomplete stays and the next run resumes it', async () => {
    hub.faults.slow = { 'trajectories.parquet': { chunk: 2048, delayMs: 50 } };
    const cache = join(fresh(), 'hub');
    const out = join(root, `int-${n}.jsonl`);
    const child = spawn(process.execPath, [BIN, 'mine', '--parquet', REPO, '--out', out], { env: env(cache), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const blobs = join(cache, FOLDER, 'blobs');
    for (let i = 0; i < 200 && !(existsSync(blobs) && readdirSync(blobs).some((f) => f.endsWith('.incomplete') && lstatSync(join(blobs, f)).size > 8000)); i++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code, stderr).toBe(130);
    expect(existsSync(out)).toBe(false);
    const partial = readdirSync(blobs).filter((f) => f.endsWith('.incomplete'));
    expect(partial).toHaveLength(1);
    hub.faults.slow = {};
    hub.requests.length = 0;
    const r = await mine(['--parquet', REPO, '--out', out], env(cache));
    expect(r.code, r.stderr).toBe(0);
    expect(hub.log().filter((l: string) => l.includes('/cdn/'))).toEqual([expect.stringMatching(/ 206 \(bytes=\d+-\)$/)]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });
});

describe('names, revisions and failures', () => {
  it.each([
    [`hf://datasets/${REPO}@${SHA}/trajectories.parquet`, 'parquet'],
    [`hf://datasets/${REPO}/*.parquet`, 'parquet'],
    ['stand-in/jsonl', 'jsonl'],
    ['hf://datasets/stand-in/jsonl/data/**/*.jsonl', 'jsonl'],
  ])('%s gives the pairs of the local file', async (arg, kind) => {
    const out = join(fresh() + '.jsonl');
    const r = await mine([kind === 'jsonl' ? '--jsonl' : '--parquet', arg, '--out', out, '-q'], env(join(root, `names-${n}`)));
    expect(r.code, r.stderr).toBe(0);
    const want = kind === 'jsonl' ? join(root, 'local-jsonl.jsonl') : local;
    if (kind === 'jsonl' && !existsSync(want)) expect((await mine(['--jsonl', join(ROOT, 'fixtures', 'forks.jsonl'), '--out', want, '-q'], env(join(root, 'unused')))).code).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(want));
  });

  it('a local path that exists wins, and stderr says so', async () => {
    const dir = fresh();
    mkdirSync(join(dir, 'nebius'), { recursive: true });
    cpSync(join(ROOT, 'fixtures', 'forks.parquet'), join(dir, 'nebius', 'SWE-rebench-openhands-trajectories'));
    const out = join(dir, 'p.jsonl');
    const r = await run(process.execPath, [BIN, 'mine', '--parquet', 'nebius/SWE-rebench-openhands-trajectories', '--out', out], { cwd: dir, env: env(join(dir, 'hub')) });
    expect(r.stderr).toContain('nebius/SWE-rebench-openhands-trajectories: reading the local path (for the Hub dataset of that name, give hf://datasets/nebius/SWE-rebench-openhands-trajectories)');
    expect(hub.requests).toEqual([]);
    expect(readFileSync(out)).toEqual(readFileSync(local));
  });

  it.each([
    ['nobody/nothing', [], 3, /error: nobody\/nothing: no such file or directory, nor a dataset on http:\/\/127\.0\.0\.1:\d+ \(or it is private and no token was sent/],
    ['hf://datasets/nebius/SWE-rebench-openhands-trajectories@v9', [], 3, /@v9: no such revision/],
    [`hf://datasets/${REPO}/nope.parquet`, [], 3, /no file or folder nope.parquet in hf:\/\/datasets\/.*@main \(commit [0-9a-f]{12}\)/],
    [`hf://datasets/${REPO}/*.jsonl`, [], 3, /no file of .* matches \*\.jsonl/],
    [`hf://datasets/${REPO}/README.md`, [], 2, /README.md: unsupported format/],
    ['stand-in/jsonl', [], 2, /data\/train-00000-of-00001.jsonl is JSONL; give it with --jsonl/],
    [REPO, ['--hub-split', 'test'], 2, /no split test in config default; choose one with --hub-split \(train\)/],
    ['df/configs-no-default', [], 2, /several configs and none is the default; choose one with --hub-config \(alpha, beta\)/],
    [`hf://models/${REPO}`, [], 2, /only dataset repositories hold trajectories/],
  ])('%s %j: exit %i, one line', async (arg, extra, code, re) => {
    const out = join(fresh() + '.jsonl');
    const r = await mine(['--parquet', arg, ...extra, '--out', out], env(join(root, `err-${n}`)));
    expect(r.code, r.stderr).toBe(code);
    const last = r.stderr.trim().split('\n').pop()!;
    expect(last).toMatch(re);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
  });

  it('a gated dataset: accept its terms, then log in (exit 3); with an accepted token it downloads', async () => {
    const gated = await startHub({ 'org/gated': { gated: 'manual', commits: { c1: { files: { 'rows.parquet': readFileSync(join(ROOT, 'fixtures', 'forks.parquet')) } } } } }, { tokens: ['hf_valid', 'hf_accepted'], acceptedGated: ['hf_accepted'] });
    try {
      const out = join(fresh() + '.jsonl');
      const base = { ...env(join(root, `gated-${n}`)), HF_ENDPOINT: gated.url };
      const no = await mine(['--parquet', 'org/gated', '--out', out], base);
      expect(no.code).toBe(3);
      expect(no.stderr).toMatch(new RegExp(`error: org/gated: gated dataset; accept its terms at ${gated.url}/datasets/org/gated, then log in .*no token was sent`));
      const notAccepted = await mine(['--parquet', 'org/gated', '--out', out], { ...base, HF_TOKEN: 'hf_valid' });
      expect(notAccepted.stderr).toMatch(/gated dataset; .* the token from HF_TOKEN has no access/);
      mkdirSync(join(root, `home-${n}`));
      writeFileSync(join(root, `home-${n}`, 'token'), 'hf_accepted\n');
      const ok = await mine(['--parquet', 'org/gated', '--out', out, '-q'], { ...base, HF_HOME: join(root, `home-${n}`) });
      expect(ok.code, ok.stderr).toBe(0);
      expect(readFileSync(out)).toEqual(readFileSync(local));
    } finally {
      await gated.close();
    }
  });

  it('the Hub unreachable: exit 10, naming HF_HUB_OFFLINE and the cache', async () => {
    const out = join(fresh() + '.jsonl');
    // A port nothing listens on: taken from a server that is closed again.
    const probe = await startHub({});
    const closed = probe.url;
    await probe.close();
    const r = await mine(['--parquet', REPO, '--out', out], { ...env(join(root, `down-${n}`)), HF_ENDPOINT: closed, HF_HUB_ETAG_TIMEOUT: '1', DIVERGENCE_MINE_HUB_RETRIES: '2' });
    expect(r.code).toBe(10);
    expect(r.stderr).toMatch(/ECONNREFUSED; retrying in 1 s \(1\/2\)\n.*ECONNREFUSED; retrying in 2 s \(2\/2\)\n/);
    expect(r.stderr.trim().split('\n').pop()).toMatch(/the Hub \(http:\/\/127\.0\.0\.1:\d+\) is unreachable \(ECONNREFUSED\); check the network or HF_ENDPOINT, or run from the cache with HF_HUB_OFFLINE=1/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it('the Hub unreachable with a warm cache: one attempt, then the cached commit of the revision, as snapshot_download does', async () => {
    const cache = join(fresh(), 'hub');
    const out = join(root, `fallback-${n}.jsonl`);
    expect((await mine(['--parquet', REPO, '--out', out, '-q'], env(cache))).code).toBe(0);
    const probe = await startHub({});
    const closed = probe.url;
    await probe.close();
    const t0 = Date.now();
    const r = await mine(['--parquet', REPO, '--out', out, '--force'], { ...env(cache), HF_ENDPOINT: closed });
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000); // no 1+2+4+8+8 s of retries
    expect(r.stderr).not.toMatch(/retrying/);
    expect(r.stderr).toContain(`${REPO}: the Hub did not answer; reading the cached commit ${SHA.slice(0, 12)} of main from ${join(cache, FOLDER)} (HF_HUB_OFFLINE=1 skips the Hub)`);
    expect(readFileSync(out)).toEqual(readFileSync(local));
    // A revision the cache does not know still fails as before.
    const other = await mine(['--parquet', `hf://datasets/${REPO}@v9`, '--out', join(root, `fallback-v9-${n}.jsonl`)], { ...env(cache), HF_ENDPOINT: closed, DIVERGENCE_MINE_HUB_RETRIES: '0' });
    expect(other.code).toBe(10);
  }, 60_000);

  it('an unsafe path in the listing is refused before anything is written', async () => {
    const evil = await startHub({ 'o/evil': { commits: { c1: { files: { 'ok.parquet': 'x' } } } } });
    // Rename the listed file to one that climbs out of the snapshot folder.
    evil.repos.get('o/evil').commits.values().next().value.files.get('ok.parquet').path = '../../../../escape.parquet';
    try {
      const cache = join(fresh(), 'hub');
      const r = await mine(['--parquet', 'o/evil', '--out', join(root, `evil-${n}.jsonl`)], { ...env(cache), HF_ENDPOINT: evil.url });
      expect(r.code).toBe(10);
      expect(r.stderr).toMatch(/the Hub listed "\.\.\/\.\.\/\.\.\/\.\.\/escape\.parquet" with an unsafe path/);
      expect(existsSync(join(cache, 'datasets--o--evil', 'snapshots'))).toBe(false);
    } finally {
      await evil.close();
    }
  });
});
