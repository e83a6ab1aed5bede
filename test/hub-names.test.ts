// The Hub name grammar and the safety rules of names from the Hub (src/hub/names.ts), and the cache
// layout's paths (src/hub/cache.ts): table-driven.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, UserError } from '../src/errors.js';
import { RepoCache, cacheRoot, hfHome } from '../src/hub/cache.js';
import { hubSettings, retryAfterSeconds, sameOrigin } from '../src/hub/http.js';
import { globToRegExp, hubUri, isBareName, parseHubUri, repoPathProblem, revisionProblem, webAddressProblem } from '../src/hub/names.js';

const SHA = 'a'.repeat(40);

describe('hf:// grammar (huggingface_hub parse_hf_uri)', () => {
  it.each([
    ['hf://datasets/o/n', { repo: 'o/n', revision: null, path: '' }],
    ['hf://datasets/o/n/', { repo: 'o/n', revision: null, path: '' }],
    ['hf://datasets/o/n/data/train.parquet', { repo: 'o/n', revision: null, path: 'data/train.parquet' }],
    ['hf://datasets/o/n@main', { repo: 'o/n', revision: 'main', path: '' }],
    ['hf://datasets/o/n@v1.0/x.parquet', { repo: 'o/n', revision: 'v1.0', path: 'x.parquet' }],
    [`hf://datasets/o/n@${SHA}/x.parquet`, { repo: 'o/n', revision: SHA, path: 'x.parquet' }],
    ['hf://datasets/o/n@refs/convert/parquet', { repo: 'o/n', revision: 'refs/convert/parquet', path: '' }],
    ['hf://datasets/o/n@refs/convert/parquet/default/train/0000.parquet', { repo: 'o/n', revision: 'refs/convert/parquet', path: 'default/train/0000.parquet' }],
    ['hf://datasets/o/n@refs%2Fconvert%2Fparquet/default/train/*.parquet', { repo: 'o/n', revision: 'refs/convert/parquet', path: 'default/train/*.parquet' }],
    ['hf://datasets/o/n@refs/pr/12/data/**/*.jsonl', { repo: 'o/n', revision: 'refs/pr/12', path: 'data/**/*.jsonl' }],
    ['hf://datasets/o/n@feature%2Fbranch/a.parquet', { repo: 'o/n', revision: 'feature/branch', path: 'a.parquet' }],
    ['hf://datasets/o/n@~parquet/default/train/0000.parquet', { repo: 'o/n', revision: 'refs/convert/parquet', path: 'default/train/0000.parquet' }],
    ['hf://datasets/o/n/file@1.parquet', { repo: 'o/n', revision: null, path: 'file@1.parquet' }],
  ])('%s', (raw, want) => {
    expect(parseHubUri(raw)).toEqual({ ...want, raw, form: 'uri' });
  });

  it.each([
    ['hf://o/n', /name the repository type/],
    ['hf://models/o/n', /only dataset repositories/],
    ['hf://datasets/o', /repository id must be OWNER\/NAME/],
    ['hf://datasets/o--x/n', /"--" and ".." are not allowed/],
    ['hf://datasets/o/n@', /empty revision/],
    ['hf://datasets/o/n@..%2F..%2Fescape/a.parquet', /not a valid git ref name/],
    ['hf://datasets/o/n@a%5Cb', /holds a character/],
    ['hf://datasets/o/n/../x.parquet', /has a "\.\." segment/],
    ['hf://datasets/o/n/a\\b.parquet', /holds a backslash/],
    ['hf://datasets/o/n@%zz', /not valid percent-encoding/],
  ])('%s is refused: %s', (raw, re) => {
    let err: unknown;
    try {
      parseHubUri(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(ExitCode.usage);
    expect((err as UserError).message).toMatch(re);
  });

  it.each([
    ['nebius/SWE-rebench-openhands-trajectories', true],
    ['o/n.v2', true],
    ['data/x.parquet', false],
    ['data/rows.jsonl.gz', false],
    ['./o/n', false],
    ['/abs/path', false],
    ['a/b/c', false],
    ['o/n*', false],
    ['-o/n', false],
    ['o/n.git', false],
  ])('isBareName(%s) = %s', (arg, yes) => {
    expect(isBareName(arg)).toBe(yes);
  });

  it.each([
    ['o/n', 'main', '', 'hf://datasets/o/n@main'],
    ['o/n', 'feature/x', 'a.parquet', 'hf://datasets/o/n@feature%2Fx/a.parquet'],
    ['o/n', 'refs/convert/parquet', '', 'hf://datasets/o/n@refs/convert/parquet'],
    ['o/n', null, 'x', 'hf://datasets/o/n/x'],
  ])('hubUri(%s, %s, %s) = %s', (repo, rev, path, uri) => {
    expect(hubUri(repo, rev, path)).toBe(uri);
    if (rev !== null) expect(parseHubUri(uri).revision).toBe(rev);
  });
});

describe('addresses on the Hub\'s website are refused with the name that reads them', () => {
  const site = 'https://huggingface.co/datasets/nebius/SWE-rebench-openhands-trajectories';
  // [address, the name suggested, what that name means as parseHubUri reads it (null: a bare name)]
  it.each([
    [site, 'nebius/SWE-rebench-openhands-trajectories', null],
    [`${site}/`, 'nebius/SWE-rebench-openhands-trajectories', null],
    [`${site}/viewer/default/train?row=3`, 'nebius/SWE-rebench-openhands-trajectories', null],
    [`${site}#dataset-card`, 'nebius/SWE-rebench-openhands-trajectories', null],
    ['http://hf.co/datasets/o/n/tree/main', 'o/n', null],
    ['https://www.huggingface.co/datasets/o/n/tree/main/data', 'hf://datasets/o/n/data', { revision: null, path: 'data' }],
    ['https://huggingface.co/datasets/o/n/tree/v1.0/data/train', 'hf://datasets/o/n@v1.0/data/train', { revision: 'v1.0', path: 'data/train' }],
    ['https://huggingface.co/datasets/o/n/blob/main/data/train-0.parquet', 'hf://datasets/o/n/data/train-0.parquet', { revision: null, path: 'data/train-0.parquet' }],
    [
      'https://huggingface.co/datasets/o/n/resolve/refs%2Fconvert%2Fparquet/default/train/0000.parquet?download=true',
      'hf://datasets/o/n@refs/convert/parquet/default/train/0000.parquet',
      { revision: 'refs/convert/parquet', path: 'default/train/0000.parquet' },
    ],
    ['https://huggingface.co/datasets/o/n/tree/feature%2Fx/a', 'hf://datasets/o/n@feature%2Fx/a', { revision: 'feature/x', path: 'a' }],
    [`https://huggingface.co/datasets/o/n/resolve/${SHA}/a.jsonl`, `hf://datasets/o/n@${SHA}/a.jsonl`, { revision: SHA, path: 'a.jsonl' }],
  ])('%s -> %s', (address, name, means) => {
    expect(webAddressProblem(address)).toBe(`${address}: an address on the Hub's website, not a file; name the dataset as ${name}`);
    if (means === null) expect(isBareName(name)).toBe(true);
    else expect(parseHubUri(name)).toMatchObject({ repo: 'o/n', ...means });
  });

  it.each([
    ['https://huggingface.co/Qwen/Qwen3-8B', /it names a model repository, and only dataset repositories hold trajectories/],
    ['https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json', /it names a model repository/],
    ['https://hf.co/spaces/o/n', /it names a Space, and only dataset repositories/],
    ['https://huggingface.co/', /name the dataset as OWNER\/NAME or hf:\/\/datasets\/OWNER\/NAME\[@REVISION\]/],
    ['https://huggingface.co/docs/hub', /name the dataset as OWNER\/NAME or/],
    ['https://huggingface.co/datasets/nebius', /name the dataset as OWNER\/NAME or/],
    ['https://huggingface.co/datasets/o/n/tree/%E0%A4%A', /name the dataset as OWNER\/NAME or/],
  ])('%s: %s', (address, said) => {
    expect(webAddressProblem(address)).toMatch(said);
  });

  it.each(['o/n', 'hf://datasets/o/n', 'data/x.parquet', 'https://example.com/datasets/o/n', 'huggingface.co/datasets/o/n', 's3://huggingface.co/datasets/o/n'])(
    '%s is no address on the website',
    (arg) => {
      expect(webAddressProblem(arg)).toBeNull();
    },
  );
});

describe('names from the Hub are untrusted', () => {
  it.each([
    ['main', null],
    ['refs/pr/1', null],
    ['v1.0', null],
    ['../x', /not a valid git ref/],
    ['a/../b', /not a valid git ref/],
    ['/main', /not a valid git ref/],
    ['main/', /not a valid git ref/],
    ['.hidden', /not a valid git ref/],
    ['x.lock', /not a valid git ref/],
    ['a b', /holds a character/],
    ['a\\b', /holds a character/],
  ])('revision %j', (rev, re) => {
    const why = revisionProblem(rev);
    if (re === null) expect(why).toBeNull();
    else expect(why).toMatch(re);
  });

  it.each([
    ['data/train.parquet', null],
    ['../up.parquet', /".." segment/],
    ['a/./b', /"." segment/],
    ['/abs', /starts with \//],
    ['a\\b', /backslash/],
    ['a//b', /empty segment/],
    ['a\nb', /control character/],
  ])('listed path %j', (path, re) => {
    const why = repoPathProblem(path);
    if (re === null) expect(why).toBeNull();
    else expect(why).toMatch(re);
  });

  const root = mkdtempSync(join(tmpdir(), 'dm-hub-names-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const cache = new RepoCache(root, 'o/n');

  it('the layout of huggingface_hub', () => {
    expect(cache.folder).toBe(join(root, 'datasets--o--n'));
    expect(cache.blobPath('b'.repeat(64))).toBe(join(root, 'datasets--o--n', 'blobs', 'b'.repeat(64)));
    expect(cache.incompletePath('c'.repeat(40))).toBe(join(root, 'datasets--o--n', 'blobs', `${'c'.repeat(40)}.incomplete`));
    expect(cache.snapshotPath(SHA, 'data/x.parquet')).toBe(join(root, 'datasets--o--n', 'snapshots', SHA, 'data', 'x.parquet'));
    expect(cache.refPath('refs/pr/1')).toBe(join(root, 'datasets--o--n', 'refs', 'refs', 'pr', '1'));
    expect(cache.lockPath('b'.repeat(64))).toBe(join(root, '.locks', 'datasets--o--n', `${'b'.repeat(64)}.lock`));
    expect(cache.treePath(SHA)).toBe(join(root, 'datasets--o--n', 'trees', `${SHA}.json`));
  });

  it.each([
    () => cache.blobPath('../../x'),
    () => cache.blobPath('A'.repeat(64)),
    () => cache.snapshotFolder('main'),
    () => cache.snapshotPath(SHA, '../../../escape'),
    () => cache.snapshotPath('../'.repeat(3) + 'x'.repeat(31), 'a'),
    () => cache.refPath('../../x'),
  ])('refuses a path outside the repo folder (%#)', (f) => {
    expect(f).toThrow(UserError);
  });

  it('refs and trees round-trip; a tree entry with a bad hash is refused', () => {
    cache.writeRef('main', SHA);
    expect(cache.readRef('main')).toBe(SHA);
    cache.writeTree(SHA, new Map([['b.parquet', { size: 3, blob_id: 'd'.repeat(40), lfs_sha256: 'e'.repeat(64), lfs_size: 3 }], ['a.txt', { size: 1, blob_id: 'f'.repeat(40) }]]));
    expect([...cache.readTree(SHA)!.keys()]).toEqual(['a.txt', 'b.parquet']);
    expect(() => new RepoCache(root, 'o/n').writeTree(SHA, new Map([['x', { size: -1, blob_id: 'z' }]]))).not.toThrow();
  });
});

describe('environment', () => {
  it.each([
    [{ HF_HUB_CACHE: '/c/hub', HF_HOME: '/h', XDG_CACHE_HOME: '/x' }, '/c/hub'],
    [{ HF_HOME: '/h', XDG_CACHE_HOME: '/x' }, '/h/hub'],
    [{ XDG_CACHE_HOME: '/x' }, '/x/huggingface/hub'],
  ])('cacheRoot(%j) = %s', (env, root) => {
    expect(cacheRoot(env)).toBe(root);
  });

  it('defaults to ~/.cache/huggingface', () => {
    expect(hfHome({ HOME: '/home/u' })).toMatch(/\.cache[\\/]huggingface$/);
  });

  it.each([
    [{}, { endpoint: 'https://huggingface.co', offline: false }],
    [{ HF_ENDPOINT: 'http://127.0.0.1:9/', HF_HUB_OFFLINE: '1' }, { endpoint: 'http://127.0.0.1:9', offline: true }],
    [{ HF_HUB_OFFLINE: 'yes' }, { offline: true }],
    [{ TRANSFORMERS_OFFLINE: 'TRUE' }, { offline: true }],
    [{ HF_HUB_OFFLINE: '0' }, { offline: false }],
  ])('hubSettings(%j)', (env, want) => {
    expect(hubSettings({ HF_HOME: '/nonexistent', ...env })).toMatchObject(want);
  });

  it('the token goes to the endpoint origin only', () => {
    const s = hubSettings({ HF_ENDPOINT: 'http://127.0.0.1:5000', HF_TOKEN: 'hf_x', HF_HOME: '/nonexistent' });
    expect(s.token).toBe('hf_x');
    expect(sameOrigin(s, 'http://127.0.0.1:5000/datasets/o/n/resolve/main/a')).toBe(true);
    expect(sameOrigin(s, 'http://127.0.0.1:5001/cdn/x')).toBe(false);
    expect(sameOrigin(s, 'https://127.0.0.1:5000/x')).toBe(false);
  });

  it.each([
    ['3', 3],
    ['100000', 300],
    [new Date(Date.now() + 5000).toUTCString(), 5],
    ['soon', null],
    [null, null],
  ])('Retry-After %j = %s s', (v, s) => {
    const got = retryAfterSeconds(v);
    if (s === null) expect(got).toBeNull();
    else expect(Math.round(got!)).toBeLessThanOrEqual(s);
  });

  it.each([
    ['data/*.parquet', ['data/a.parquet'], ['data/x/a.parquet', 'a.parquet']],
    ['**/*.parquet', ['a.parquet', 'x/y/a.parquet'], ['a.jsonl']],
    ['data/**', ['data/a', 'data/x/y'], ['other/a']],
    ['[ab].parquet', ['a.parquet', 'b.parquet'], ['c.parquet']],
    ['[!ab].parquet', ['c.parquet'], ['a.parquet']],
    ['?.parquet', ['a.parquet'], ['ab.parquet']],
    ['**/train[-._ 0-9]*', ['train.csv', 'x/train-0.csv'], ['x/trainer.csv']],
  ])('glob %s', (glob, yes, no) => {
    const re = globToRegExp(glob);
    for (const p of yes) expect(re.test(p), p).toBe(true);
    for (const p of no) expect(re.test(p), p).toBe(false);
  });
});
