// One command line for every task of a scheduler's array, through the BUILT CLI: `mine --partition auto`
// reads the task's partition from the variables Slurm, Kubernetes or AWS Batch export (set here as
// they set them; bench/slurm.sh runs the same on a real Slurm), `{i}` and `{N}` name each task's files,
// and `merge` takes the folder or a glob of the parts, naming missing and duplicated partitions
// before it writes anything. Input: fixtures/edges.parquet (8 instances, each N = 3 part non-empty).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, cli } from './support/cli.js';

const INPUT = join(ROOT, 'fixtures', 'edges.parquet');
let dir = '';

/** The variables Slurm 22.05 exports to task `id` of `sbatch --array=0-(n-1)` (test/data/slurm-array-env.json). */
function slurmTask(id: number, n: number): Record<string, string> {
  return {
    SLURM_ARRAY_JOB_ID: '41',
    SLURM_JOB_ID: String(41 + id),
    SLURM_ARRAY_TASK_ID: String(id),
    SLURM_ARRAY_TASK_MIN: '0',
    SLURM_ARRAY_TASK_MAX: String(n - 1),
    SLURM_ARRAY_TASK_COUNT: String(n),
    SLURM_ARRAY_TASK_STEP: '1',
  };
}

async function ok(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await cli(args, env);
  expect(r.code, r.stderr).toBe(0);
  return r.stderr;
}

const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
const p = (...s: string[]) => join(dir, ...s);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dm-cluster-'));
  await ok(['mine', INPUT, '--out', p('single.jsonl'), '--stats', p('single.stats.json'), '--workers', '1', '--quiet']);
  await ok(['mine', INPUT, '--out', p('single.parquet'), '--workers', '1', '--quiet']);
  // The Slurm array of 3: the same command line in every task.
  mkdirSync(p('slurm'));
  const line = ['mine', INPUT, '--partition', 'auto', '--out', p('slurm', 'part-{i}-of-{N}.jsonl'), '--stats', p('slurm', 'part-{i}-of-{N}.stats.json'), '--workers', '1'];
  for (let i = 0; i < 3; i++) {
    const stderr = await ok(line, slurmTask(i, 3));
    expect(stderr).toContain(
      `divergence-mine: partition ${i}/3 from the Slurm array (SLURM_ARRAY_TASK_ID=${i} SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=1)\n`,
    );
    expect(stderr).not.toContain('warning');
  }
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('mine --partition auto, one command line for every task', () => {
  it('Slurm: {i} and {N} name the files, the stats record the partition and the variables it came from', () => {
    for (let i = 0; i < 3; i++) {
      const stats = json(p('slurm', `part-${i}-of-3.stats.json`));
      expect(stats.partition).toEqual({ index: i, count: 3 });
      expect(stats.partition_source).toEqual({
        scheduler: 'slurm',
        argument: 'auto',
        variables: { SLURM_ARRAY_TASK_ID: String(i), SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_MAX: '2', SLURM_ARRAY_TASK_COUNT: '3', SLURM_ARRAY_TASK_STEP: '1' },
      });
      expect(readFileSync(p('slurm', `part-${i}-of-3.jsonl`), 'utf8').split('\n').length).toBeGreaterThan(1);
    }
  });

  it('merge of the folder, and of a glob, equals the single run byte for byte, with the same counters', async () => {
    await ok(['merge', p('slurm'), '--out', p('slurm-merged.jsonl'), '--stats-out', p('slurm-merged.stats.json'), '--quiet']);
    expect(readFileSync(p('slurm-merged.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
    const merged = json(p('slurm-merged.stats.json'));
    expect(merged.counters).toStrictEqual(json(p('single.stats.json')).counters);
    expect(merged.partition).toBeNull();
    expect(merged).not.toHaveProperty('partition_source');
    await ok(['merge', p('slurm', 'part-*-of-3.jsonl'), '--out', p('slurm-glob.jsonl'), '--quiet']);
    expect(readFileSync(p('slurm-glob.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
    // Into the parts' own folder, twice: the output is not taken for a part.
    await ok(['merge', p('slurm'), '--out', p('slurm', 'pairs.jsonl'), '--quiet']);
    await ok(['merge', p('slurm'), '--out', p('slurm', 'pairs.jsonl'), '--quiet', '--force']);
    expect(readFileSync(p('slurm', 'pairs.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
    rmSync(p('slurm', 'pairs.jsonl'));
  });

  it('Kubernetes (auto/N) and AWS Batch (the size it exports), parquet parts', async () => {
    mkdirSync(p('k8s'));
    for (let i = 0; i < 3; i++) {
      const stderr = await ok(['mine', INPUT, '--partition', 'auto/3', '--out', p('k8s', 'part-{i}.parquet'), '--stats', p('k8s', 'part-{i}.stats.json'), '--workers', '1'], { JOB_COMPLETION_INDEX: String(i) });
      expect(stderr).toContain(`divergence-mine: partition ${i}/3 from the Kubernetes Indexed Job (JOB_COMPLETION_INDEX=${i})\n`);
      expect(json(p('k8s', `part-${i}.stats.json`)).partition_source).toEqual({ scheduler: 'kubernetes', argument: 'auto/3', variables: { JOB_COMPLETION_INDEX: String(i) } });
    }
    await ok(['merge', p('k8s'), '--out', p('k8s-merged.parquet'), '--quiet']);
    expect(readFileSync(p('k8s-merged.parquet')).equals(readFileSync(p('single.parquet')))).toBe(true);

    mkdirSync(p('aws'));
    for (let i = 0; i < 2; i++) {
      await ok(['mine', INPUT, '--partition', 'auto', '--out', p('aws', 'part-{i}-of-{N}.jsonl'), '--stats', p('aws', 'part-{i}-of-{N}.stats.json'), '--workers', '1', '-q'], {
        AWS_BATCH_JOB_ARRAY_INDEX: String(i),
        AWS_BATCH_JOB_ARRAY_SIZE: '2',
      });
    }
    await ok(['merge', p('aws'), '--out', p('aws-merged.jsonl'), '--quiet']);
    expect(readFileSync(p('aws-merged.jsonl')).equals(readFileSync(p('single.jsonl')))).toBe(true);
  }, 120_000);

  it('several schedulers set: Slurm wins, the others are named in a warning and in the stats', async () => {
    const stderr = await ok(['mine', INPUT, '--partition', 'auto', '--out', p('both-{i}.jsonl'), '--stats', p('both-{i}.stats.json'), '--workers', '1', '-q'], {
      ...slurmTask(1, 3),
      JOB_COMPLETION_INDEX: '0',
    });
    expect(stderr).toBe(
      'divergence-mine: warning: --partition auto: took partition 1/3 from the Slurm array; also set, and ignored (precedence SLURM_ARRAY_TASK_ID > JOB_COMPLETION_INDEX > AWS_BATCH_JOB_ARRAY_INDEX): JOB_COMPLETION_INDEX=0\n',
    );
    expect(readFileSync(p('both-1.jsonl')).equals(readFileSync(p('slurm', 'part-1-of-3.jsonl')))).toBe(true);
    expect(json(p('both-1.stats.json')).partition_source.ignored).toEqual(['JOB_COMPLETION_INDEX=0']);
  });

  const refusals: [string, string[], Record<string, string>, string][] = [
    [
      'no scheduler',
      ['--partition', 'auto'],
      {},
      "--partition auto: no scheduler's task index found: looked for SLURM_ARRAY_TASK_ID (Slurm job array), JOB_COMPLETION_INDEX (Kubernetes Indexed Job), AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array job); outside a scheduler give --partition i/N",
    ],
    [
      'a Slurm array from 1',
      ['--partition', 'auto'],
      { ...slurmTask(1, 3), SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '3' },
      "--partition auto: the Slurm array's ids are not 0..N-1 in steps of 1 (SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=1); submit it with sbatch --array=0-2",
    ],
    [
      'auto/N against Slurm\'s count',
      ['--partition', 'auto/4'],
      slurmTask(0, 3),
      '--partition auto: auto/4 disagrees with the Slurm array of 3 tasks (SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=1); give --partition auto, or submit --array=0-3',
    ],
    [
      'Kubernetes without a count',
      ['--partition', 'auto'],
      { JOB_COMPLETION_INDEX: '0' },
      '--partition auto: JOB_COMPLETION_INDEX=0 is set (Kubernetes Indexed Job), but Kubernetes exports no count: give --partition auto/N with N the number of tasks',
    ],
    ['placeholders without --partition', [], slurmTask(0, 3), '--out ' + '{out}' + ': the placeholders {i} and {N} need --partition (i/N, auto or auto/N)'],
  ];
  for (const [name, args, env, message] of refusals) {
    it(`refused with exit 2, one line, nothing written: ${name}`, async () => {
      const out = p(`refused-${name.replace(/\W+/g, '-')}-{i}.jsonl`);
      const r = await cli(['mine', INPUT, ...args, '--out', out, '--stats', p('refused-{i}.stats.json'), '--workers', '1'], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`divergence-mine: error: ${message.replace('{out}', out)}\n`);
      expect(existsSync(out.replace('{i}', '0'))).toBe(false);
      expect(existsSync(out)).toBe(false);
    });
  }
});

describe('merge names missing and duplicated partitions before writing', () => {
  it('a missing part (exit 3), a part given twice (exit 2), a part whose stats are of another partition (exit 5)', async () => {
    const parts = p('check');
    cpSync(p('slurm'), parts, { recursive: true });
    const out = p('check-merged.jsonl');
    rmSync(join(parts, 'part-1-of-3.jsonl'));
    rmSync(join(parts, 'part-1-of-3.stats.json'));
    let r = await cli(['merge', parts, '--out', out]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('divergence-mine: error: 1 of 3 partitions missing: 1/3; nothing written\n');
    expect(existsSync(out)).toBe(false);

    cpSync(join(parts, 'part-2-of-3.jsonl'), join(parts, 'rerun-2.jsonl'));
    cpSync(join(parts, 'part-2-of-3.stats.json'), join(parts, 'rerun-2.stats.json'));
    r = await cli(['merge', parts, '--out', out]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`divergence-mine: error: 1 of 3 partitions missing: 1/3; partition 2/3 given twice (${join(parts, 'part-2-of-3.jsonl')}, ${join(parts, 'rerun-2.jsonl')}); nothing written\n`);

    cpSync(join(p('slurm'), 'part-1-of-3.jsonl'), join(parts, 'part-1-of-3.jsonl'));
    cpSync(join(p('slurm'), 'part-1-of-3.stats.json'), join(parts, 'part-1-of-3.stats.json'));
    r = await cli(['merge', parts, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`divergence-mine: error: partition 2/3 given twice (${join(parts, 'part-2-of-3.jsonl')}, ${join(parts, 'rerun-2.jsonl')}); nothing written\n`);
    rmSync(join(parts, 'rerun-2.jsonl'));
    rmSync(join(parts, 'rerun-2.stats.json'));

    // Rows of partition 0 beside the stats of partition 1 (and the other way round).
    const a = join(parts, 'part-0-of-3.jsonl');
    const b = join(parts, 'part-1-of-3.jsonl');
    const rowsA = readFileSync(a);
    writeFileSync(a, readFileSync(b));
    writeFileSync(b, rowsA);
    r = await cli(['merge', parts, '--out', out]);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(new RegExp(`^divergence-mine: error: ${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: holds instance \\S+ of partition 1/3, but its stats are of partition 0/3\\n$`));
    expect(existsSync(out)).toBe(false);
    writeFileSync(b, readFileSync(a));
    writeFileSync(a, rowsA);

    // A stats file whose partition is not i < N.
    const st = join(parts, 'part-2-of-3.stats.json');
    const doc = json(st);
    writeFileSync(st, JSON.stringify({ ...doc, partition: { index: 3, count: 3 } }));
    r = await cli(['merge', parts, '--out', out]);
    expect(r.code).toBe(6);
    expect(r.stderr).toBe(`divergence-mine: error: ${st}: "partition" is not an index i and a count N with 0 <= i < N ({"index":3,"count":3})\n`);
    writeFileSync(st, JSON.stringify(doc));
    await ok(['merge', parts, '--out', out, '--quiet']);
    expect(readFileSync(out).equals(readFileSync(p('single.jsonl')))).toBe(true);
  }, 120_000);

  it('a folder or glob that holds no part, and a missing folder (exit 3)', async () => {
    mkdirSync(p('empty'));
    let r = await cli(['merge', p('empty'), '--out', p('e.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`divergence-mine: error: ${p('empty')}: directory holds no *.parquet or *.jsonl file\n`);
    r = await cli(['merge', p('nothing-here'), '--out', p('e.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`divergence-mine: error: ${p('nothing-here')}: no such file or folder\n`);
    r = await cli(['merge', p('slurm', 'part-*-of-9.jsonl'), '--out', p('e.jsonl')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`divergence-mine: error: ${p('slurm', 'part-*-of-9.jsonl')}: no file matches this pattern\n`);
  });
});
