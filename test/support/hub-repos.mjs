// The dataset repos the stand-in Hub serves (test/support/stand-in-hub.mjs), shared by the tests and by
// fixtures/hub/make.py (which lets huggingface_hub and datasets work against the same repos).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PUBLISHED_REPO = 'nebius/SWE-rebench-openhands-trajectories';

/** The card of the stand-in nebius repo: a `configs:` front matter like the real one's. */
export const NEBIUS_README = `---
license: cc-by-4.0
configs:
- config_name: default
  data_files:
  - split: train
    path: trajectories.parquet
---
# SWE-rebench OpenHands trajectories (stand-in: the bundled fixtures/forks.parquet, CC-BY-4.0, (c) Nebius)
`;

const card = (yaml) => `---\n${yaml}---\n# fixture\n`;
/** A placeholder body for files whose content the data-file rules never read. */
const x = (p) => `placeholder ${p}\n`;
const files = (paths, extra = {}) => ({ ...Object.fromEntries(paths.map((p) => [p, x(p)])), ...extra });

/** Repos whose README `configs:` and file names exercise datasets' data-file rules (no bytes are read). */
export const DATA_FILES_REPOS = {
  'df/sharded': files(['data/train-00000-of-00002.parquet', 'data/train-00001-of-00002.parquet', 'data/test-00000-of-00001.parquet', 'data/random-00000-of-00001.parquet'], { 'README.md': '# no front matter\n' }),
  'df/dirnames': files(['data/train/a.jsonl', 'data/train/b.jsonl', 'data/validation/x.jsonl', 'data/test/y.jsonl', 'data/other/z.jsonl']),
  'df/filenames': files(['train.parquet', 'dev.parquet', 'test_0.parquet', 'my_training-1.parquet', 'notes-evaluation.parquet', 'extra.parquet']),
  'df/all-train': files(['trajectories.parquet', 'more/part.parquet', '.hidden/x.parquet', '__pycache__/y.parquet', 'LICENSE', 'dataset_info.json']),
  'df/configs-string': files(['data/a.parquet', 'data/b.parquet', 'other/c.parquet'], { 'README.md': card('configs:\n- config_name: default\n  data_files: data/*.parquet\n') }),
  'df/configs-list': files(['part0/a.jsonl', 'part0/b.jsonl', 'part1/c.jsonl.gz', 'part2/d.jsonl'], { 'README.md': card('configs:\n- config_name: main\n  data_files:\n  - part0/*.jsonl\n  - part1/*.jsonl.gz\n') }),
  'df/configs-splits': files(['train/1.parquet', 'train/2.parquet', 'test/a.parquet', 'test/b.parquet', 'test/c.parquet'], {
    'README.md': card('configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train/*\n  - split: test\n    path:\n    - test/a.parquet\n    - test/b.parquet\n'),
  }),
  'df/configs-default-true': files(['first/a.parquet', 'second/b.parquet', 'second/c.parquet'], {
    'README.md': card('configs:\n- config_name: first\n  data_files: first/*.parquet\n- config_name: second\n  default: true\n  data_files:\n  - split: train\n    path: second/*.parquet\n'),
  }),
  'df/configs-data-dir': files(['x.parquet', 'sub/train.parquet', 'sub/test.parquet', 'sub/deeper/train-2.parquet'], { 'README.md': card('configs:\n- config_name: default\n  data_dir: sub\n') }),
  'df/configs-data-dir-files': files(['sub/one.parquet', 'sub/two.parquet', 'one.parquet'], { 'README.md': card('configs:\n- config_name: default\n  data_dir: sub\n  data_files:\n  - split: train\n    path: one.parquet\n') }),
  'df/configs-no-default': files(['a/1.parquet', 'b/2.parquet'], { 'README.md': card('configs:\n- config_name: alpha\n  data_files: a/*.parquet\n- config_name: beta\n  data_files: b/*.parquet\n') }),
  'df/jsonl-gz': files(['data/train-00000-of-00001.jsonl.gz', 'data/validation-00000-of-00001.jsonl.gz']),
  'df/yes-default': files(['p/a.parquet', 'q/b.parquet'], { 'README.md': card('configs:\n- config_name: p\n  data_files: p/*.parquet\n- config_name: q\n  default: yes\n  data_files: q/*.parquet\n') }),
};

/** Every repo of the stand-in: the published dataset (with the bundled fixture as its file) and the data-file repos. */
export function standInRepos() {
  const forks = readFileSync(`${ROOT}/fixtures/forks.parquet`);
  const jsonl = readFileSync(`${ROOT}/fixtures/forks.jsonl`);
  const repos = {
    [PUBLISHED_REPO]: { commits: { c1: { files: { 'README.md': NEBIUS_README, 'trajectories.parquet': forks } } } },
    'stand-in/jsonl': { commits: { c1: { files: { 'README.md': '# JSONL rows\n', 'data/train-00000-of-00001.jsonl': jsonl } } } },
  };
  for (const [id, f] of Object.entries(DATA_FILES_REPOS)) repos[id] = { commits: { c1: { files: f } } };
  return repos;
}
