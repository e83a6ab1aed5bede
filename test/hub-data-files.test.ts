// Which files a dataset name means (src/hub/data-files.ts), table-driven against the answers of the real
// `datasets` library: fixtures/hub/data-files-expected.json was written by fixtures/hub/make.py, which
// let datasets 5.0.1 resolve the data files of every repo in test/support/hub-repos.mjs (README
// `configs:` variants and the default patterns) against the stand-in Hub.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.js';
import { chooseDataFiles, inferModule, resolvePattern } from '../src/hub/data-files.js';
// @ts-expect-error a plain JS module of the test support
import { DATA_FILES_REPOS } from './support/hub-repos.mjs';

interface Expected {
  default_config?: string | null;
  module?: string;
  configs?: Record<string, Record<string, string[]>>;
  error?: string;
}
const expected = JSON.parse(readFileSync(new URL('../fixtures/hub/data-files-expected.json', import.meta.url), 'utf8')) as { made_with: Record<string, string>; repos: Record<string, Expected> };
const repos = DATA_FILES_REPOS as Record<string, Record<string, string>>;

const cases: { repo: string; config: string; split: string; files: string[]; isDefault: boolean; module: string }[] = [];
for (const [repo, e] of Object.entries(expected.repos))
  for (const [config, splits] of Object.entries(e.configs ?? {}))
    for (const [split, files] of Object.entries(splits)) cases.push({ repo, config, split, files, isDefault: e.default_config === config || (e.default_config === null && Object.keys(e.configs!).length === 1), module: e.module! });

describe('data files: the choice of datasets 5.0.1, for every fixture repo, config and split', () => {
  it('the table covers every fixture repo', () => {
    expect(Object.keys(expected.repos).sort()).toEqual(Object.keys(repos).sort());
    expect(expected.made_with.datasets).toBe('5.0.1');
    expect(cases.length).toBeGreaterThan(20);
  });

  it.each(cases)('$repo config $config split $split', ({ repo, config, split, files, isDefault, module }) => {
    const listing = Object.keys(repos[repo]!);
    const readme = repos[repo]!['README.md'] ?? null;
    const noConfigs = !/configs:/.test(readme ?? '');
    // By name (a repo without configs: datasets' config "default").
    const named = chooseDataFiles(listing, readme, { config: noConfigs ? null : config, split }, repo);
    expect(named.files).toEqual(files);
    expect(named.module).toBe(module);
    // With no config named: the default config, when datasets has one.
    if (isDefault) expect(chooseDataFiles(listing, readme, { config: null, split }, repo).files).toEqual(files);
  });

  it('several configs and none the default: one line naming them and --hub-config', () => {
    const r = repos['df/configs-no-default']!;
    expect(() => chooseDataFiles(Object.keys(r), r['README.md']!, { config: null, split: null }, 'df/configs-no-default')).toThrow(
      /several configs and none is the default; choose one with --hub-config \(alpha, beta\)/,
    );
  });

  it.each([
    ['df/sharded', { config: null, split: 'nope' }, /no split nope; choose one with --hub-split \(train, test, random\)/],
    ['df/configs-string', { config: 'other', split: null }, /no config other \(configs: default\)/],
    ['df/dirnames', { config: 'x', split: null }, /no config x \(the dataset declares no configs/],
  ] as const)('%s %j: %s', (repo, want, re) => {
    const r = repos[repo]!;
    expect(() => chooseDataFiles(Object.keys(r), r['README.md'] ?? null, want, repo)).toThrow(re);
  });

  it.each([
    ['not YAML', '---\nconfigs: [unclosed\n---\n', /not valid YAML/],
    ['configs not a list', '---\nconfigs: {a: 1}\n---\n', /configs must be a list/],
    ['no config_name', '---\nconfigs:\n- data_files: a.parquet\n---\n', /every config needs a config_name/],
    ['bad data_files', '---\nconfigs:\n- config_name: a\n  data_files: {x: 1}\n---\n', /data_files must be/],
    ['data_dir leaving the repo', '---\nconfigs:\n- config_name: a\n  data_dir: ../up\n---\n', /data_dir "..\/up" is not a relative folder/],
    ['a missing named file', '---\nconfigs:\n- config_name: a\n  data_files: gone.parquet\n---\n', /names gone.parquet \(split train\), which is not in the dataset/],
    ['two defaults', '---\nconfigs:\n- config_name: default\n  data_files: a.parquet\n- config_name: b\n  default: true\n  data_files: a.parquet\n---\n', /several default configs/],
  ])('a bad card: %s', (_name, readme, re) => {
    let err: unknown;
    try {
      chooseDataFiles(['a.parquet'], readme, { config: null, split: null }, 'o/n');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toMatch(re);
    expect((err as UserError).message).not.toContain('\n');
  });

  it('nothing but README and hidden files: no data files (exit 3)', () => {
    expect(() => chooseDataFiles(['README.md', '.gitattributes'], null, { config: null, split: null }, 'o/n')).toThrow(/no data files/);
  });

  it.each([
    [['a.parquet', 'b.parquet', 'c.csv'], 'parquet'],
    [['a.jsonl', 'b.jsonl.gz'], 'json'],
    [['a.parquet', 'b.jsonl'], 'parquet'],
    [['x.png', 'y.png', 'z.parquet'], 'imagefolder'],
    [['metadata.jsonl', 'a.csv'], 'csv'],
    [['a.zip'], 'zip'],
    [['LICENSE'], null],
  ])('inferModule(%j) = %s', (files, module) => {
    expect(inferModule(files)).toBe(module);
  });

  it.each([
    ['**', '', ['a.parquet', 'd/b.parquet']],
    ['*', '', ['a.parquet']],
    ['d/*', '', ['d/b.parquet']],
    ['.hidden/*', '', ['.hidden/h.parquet']],
    ['__pycache__/*', '', ['__pycache__/p.parquet']],
    ['*.parquet', 'd', ['d/b.parquet']],
    // Named, it is no longer ignored, but .md is no data extension (allowed_extensions).
    ['README.md', '', []],
  ])('resolvePattern(%s, base %j)', (pattern, base, out) => {
    const files = ['a.parquet', 'd/b.parquet', '.hidden/h.parquet', '__pycache__/p.parquet', 'README.md'];
    expect(resolvePattern(files, pattern, base, true)).toEqual(out);
  });
});
