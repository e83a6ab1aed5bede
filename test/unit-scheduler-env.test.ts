// `--partition auto`, its parts as pure functions: the scheduler resolver (environment in, partition or
// message out) on the variables a real Slurm 22.05 exported to array tasks (test/data/slurm-array-env.json,
// recorded by `bench/slurm.sh env`) and on Kubernetes and AWS Batch environments; the option's parser;
// the {i}/{N} placeholders; merge's coverage check of the partitions.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { resolveFromScheduler, type Env } from '../src/cluster/scheduler-env.js';
import { checkPlaceholders, expandPlaceholders, hasPlaceholders } from '../src/cluster/placeholders.js';
import { partitionArg, resolvePartitionOptions } from '../src/commands/partition-options.js';
import { checkCoverage } from '../src/commands/merge-parts.js';
import { UserError } from '../src/errors.js';

const SLURM: Record<string, Record<string, string>[]> = JSON.parse(readFileSync(new URL('./data/slurm-array-env.json', import.meta.url), 'utf8'));

function ok(env: Env, wanted: number | null = null) {
  const r = resolveFromScheduler(env, wanted);
  if (!r.ok) throw new Error(`expected a partition, got: ${r.message}`);
  return r.partition;
}

function message(env: Env, wanted: number | null = null): string {
  const r = resolveFromScheduler(env, wanted);
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.partition)}`);
  return r.message;
}

describe('Slurm job arrays, as a real Slurm exports them', () => {
  it('the recording holds the array forms the tests below rely on', () => {
    expect(Object.keys(SLURM).sort()).toEqual(['0,1,3', '0-0', '0-3', '0-3%2', '0-6:2', '1-4', '5'].sort());
    expect(SLURM['0-3']!.map((e) => e.SLURM_ARRAY_TASK_ID)).toEqual(['0', '1', '2', '3']);
  });

  // Arrays of ids 0..N-1 in steps of 1: every task gets partition ID of COUNT.
  for (const spec of ['0-3', '0-0', '0-3%2']) {
    it(`--array=${spec}: every task is partition SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT`, () => {
      const tasks = SLURM[spec]!;
      const got = tasks.map((env) => ok(env));
      expect(got.map((p) => `${p.index}/${p.count}`)).toEqual(tasks.map((_, k) => `${k}/${tasks.length}`));
      for (const [k, p] of got.entries()) {
        expect(p.scheduler).toBe('slurm');
        expect(p.variables).toEqual(tasks[k]);
        expect(p.ignored).toEqual([]);
      }
      // auto/N agreeing with the array's count is the same partition.
      expect(ok(tasks[0]!, tasks.length)).toEqual(got[0]);
    });
  }

  const refused: [string, string][] = [
    // Ids that start at 1: COUNT=4 but MAX=4.
    ['1-4', 'SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=1'],
    // A step of 2.
    ['0-6:2', 'SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=2'],
    // A list with a gap: Slurm says step 1, but 3 tasks up to id 3.
    ['0,1,3', 'SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=1'],
    ['5', 'SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=5 SLURM_ARRAY_TASK_COUNT=1 SLURM_ARRAY_TASK_STEP=1'],
  ];
  for (const [spec, vars] of refused) {
    it(`--array=${spec} is refused in every task, naming the variables and their values`, () => {
      const count = SLURM[spec]![0]!.SLURM_ARRAY_TASK_COUNT!;
      for (const env of SLURM[spec]!) {
        const m = message(env);
        expect(m).toBe(
          `--partition auto: the Slurm array's ids are not 0..N-1 in steps of 1 (${vars.replace(/SLURM_ARRAY_TASK_ID=\d+/, `SLURM_ARRAY_TASK_ID=${env.SLURM_ARRAY_TASK_ID}`)}); submit it with sbatch --array=0-${Number(count) - 1}`,
        );
      }
    });
  }

  it('auto/N must agree with the array count', () => {
    expect(message(SLURM['0-3']![1]!, 8)).toBe(
      '--partition auto: auto/8 disagrees with the Slurm array of 4 tasks (SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=1); give --partition auto, or submit --array=0-7',
    );
  });

  const base = { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_MAX: '3', SLURM_ARRAY_TASK_COUNT: '4', SLURM_ARRAY_TASK_STEP: '1' };
  const cases: [string, Env, string | { index: number; count: number }][] = [
    ['no SLURM_ARRAY_TASK_STEP (it is optional)', { ...base, SLURM_ARRAY_TASK_STEP: undefined }, { index: 1, count: 4 }],
    ['an empty SLURM_ARRAY_TASK_STEP counts as unset', { ...base, SLURM_ARRAY_TASK_STEP: '' }, { index: 1, count: 4 }],
    ['the last task', { ...base, SLURM_ARRAY_TASK_ID: '3' }, { index: 3, count: 4 }],
    [
      'no count',
      { ...base, SLURM_ARRAY_TASK_COUNT: undefined },
      "--partition auto: SLURM_ARRAY_TASK_COUNT is not set, but SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_STEP=1 is: not a Slurm array task's environment",
    ],
    [
      'an id that is not a number',
      { ...base, SLURM_ARRAY_TASK_ID: '1a' },
      '--partition auto: SLURM_ARRAY_TASK_ID="1a" is not a whole number (SLURM_ARRAY_TASK_ID=1a SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=1)',
    ],
    [
      'a negative minimum',
      { ...base, SLURM_ARRAY_TASK_MIN: '-1' },
      '--partition auto: SLURM_ARRAY_TASK_MIN="-1" is not a whole number (SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=-1 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=1)',
    ],
    [
      'an id past the maximum',
      { ...base, SLURM_ARRAY_TASK_ID: '4' },
      "--partition auto: the Slurm array's ids are not 0..N-1 in steps of 1 (SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=1); submit it with sbatch --array=0-3",
    ],
    [
      'a number too large to be exact',
      { ...base, SLURM_ARRAY_TASK_COUNT: '9999999999999999999' },
      '--partition auto: SLURM_ARRAY_TASK_COUNT="9999999999999999999" is not a whole number (SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=9999999999999999999 SLURM_ARRAY_TASK_STEP=1)',
    ],
  ];
  for (const [name, env, want] of cases) {
    it(name, () => {
      if (typeof want === 'string') expect(message(env)).toBe(want);
      else expect(ok(env)).toMatchObject(want);
    });
  }
});

describe('Kubernetes Indexed Jobs and AWS Batch array jobs', () => {
  const cases: [string, Env, number | null, string | { index: number; count: number; scheduler: string; variables: Record<string, string> }][] = [
    ['Kubernetes: index from JOB_COMPLETION_INDEX, count from auto/N', { JOB_COMPLETION_INDEX: '2' }, 4, { index: 2, count: 4, scheduler: 'kubernetes', variables: { JOB_COMPLETION_INDEX: '2' } }],
    ['Kubernetes: index 0 of 1', { JOB_COMPLETION_INDEX: '0' }, 1, { index: 0, count: 1, scheduler: 'kubernetes', variables: { JOB_COMPLETION_INDEX: '0' } }],
    [
      'Kubernetes without auto/N',
      { JOB_COMPLETION_INDEX: '2' },
      null,
      '--partition auto: JOB_COMPLETION_INDEX=2 is set (Kubernetes Indexed Job), but Kubernetes exports no count: give --partition auto/N with N the number of tasks',
    ],
    [
      'Kubernetes: an index not below N',
      { JOB_COMPLETION_INDEX: '4' },
      4,
      '--partition auto: JOB_COMPLETION_INDEX=4 is not below N = 4 (JOB_COMPLETION_INDEX=4, --partition auto/4): the Kubernetes Indexed Job has more tasks than N',
    ],
    ['Kubernetes: an index that is not a number', { JOB_COMPLETION_INDEX: ' 2' }, 4, '--partition auto: JOB_COMPLETION_INDEX=" 2" is not a whole number'],
    [
      'AWS Batch: count from AWS_BATCH_JOB_ARRAY_SIZE',
      { AWS_BATCH_JOB_ARRAY_INDEX: '7', AWS_BATCH_JOB_ARRAY_SIZE: '10' },
      null,
      { index: 7, count: 10, scheduler: 'aws-batch', variables: { AWS_BATCH_JOB_ARRAY_INDEX: '7', AWS_BATCH_JOB_ARRAY_SIZE: '10' } },
    ],
    ['AWS Batch: auto/N agreeing with the size', { AWS_BATCH_JOB_ARRAY_INDEX: '7', AWS_BATCH_JOB_ARRAY_SIZE: '10' }, 10, { index: 7, count: 10, scheduler: 'aws-batch', variables: { AWS_BATCH_JOB_ARRAY_INDEX: '7', AWS_BATCH_JOB_ARRAY_SIZE: '10' } }],
    ['AWS Batch: no size, count from auto/N', { AWS_BATCH_JOB_ARRAY_INDEX: '1' }, 3, { index: 1, count: 3, scheduler: 'aws-batch', variables: { AWS_BATCH_JOB_ARRAY_INDEX: '1' } }],
    [
      'AWS Batch: auto/N disagreeing with the size',
      { AWS_BATCH_JOB_ARRAY_INDEX: '1', AWS_BATCH_JOB_ARRAY_SIZE: '10' },
      4,
      '--partition auto: auto/4 disagrees with the AWS Batch array job of 10 tasks (AWS_BATCH_JOB_ARRAY_INDEX=1 AWS_BATCH_JOB_ARRAY_SIZE=10); give --partition auto',
    ],
    [
      'AWS Batch: neither size nor auto/N',
      { AWS_BATCH_JOB_ARRAY_INDEX: '1' },
      null,
      '--partition auto: AWS_BATCH_JOB_ARRAY_INDEX=1 is set (AWS Batch array job), but AWS_BATCH_JOB_ARRAY_SIZE is not set: give --partition auto/N with N the number of tasks',
    ],
    ['AWS Batch: a size of 0', { AWS_BATCH_JOB_ARRAY_INDEX: '0', AWS_BATCH_JOB_ARRAY_SIZE: '0' }, null, '--partition auto: AWS_BATCH_JOB_ARRAY_SIZE="0" is not a count of tasks'],
    [
      'nothing set',
      { HOME: '/root' },
      null,
      "--partition auto: no scheduler's task index found: looked for SLURM_ARRAY_TASK_ID (Slurm job array), JOB_COMPLETION_INDEX (Kubernetes Indexed Job), AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array job); outside a scheduler give --partition i/N",
    ],
    [
      'empty values count as unset',
      { SLURM_ARRAY_TASK_ID: '', JOB_COMPLETION_INDEX: '' },
      4,
      "--partition auto: no scheduler's task index found: looked for SLURM_ARRAY_TASK_ID (Slurm job array), JOB_COMPLETION_INDEX (Kubernetes Indexed Job), AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array job); outside a scheduler give --partition i/N",
    ],
    [
      'a Slurm job that is not an array task',
      { SLURM_JOB_ID: '812' },
      null,
      "--partition auto: no scheduler's task index found: looked for SLURM_ARRAY_TASK_ID (Slurm job array), JOB_COMPLETION_INDEX (Kubernetes Indexed Job), AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array job); SLURM_JOB_ID=812 is set, but this Slurm job is not an array task (submit it with sbatch --array=0-N-1); outside a scheduler give --partition i/N",
    ],
  ];
  for (const [name, env, wanted, want] of cases) {
    it(name, () => {
      if (typeof want === 'string') expect(message(env, wanted)).toBe(want);
      else expect(ok(env, wanted)).toEqual({ ...want, ignored: [] });
    });
  }

  it('precedence: Slurm, then Kubernetes, then AWS Batch; the others are reported as ignored', () => {
    const slurm = SLURM['0-3']![2]!;
    expect(ok({ ...slurm, JOB_COMPLETION_INDEX: '0', AWS_BATCH_JOB_ARRAY_INDEX: '1', AWS_BATCH_JOB_ARRAY_SIZE: '2' })).toMatchObject({
      index: 2,
      count: 4,
      scheduler: 'slurm',
      ignored: ['JOB_COMPLETION_INDEX=0', 'AWS_BATCH_JOB_ARRAY_INDEX=1'],
    });
    expect(ok({ JOB_COMPLETION_INDEX: '3', AWS_BATCH_JOB_ARRAY_INDEX: '1', AWS_BATCH_JOB_ARRAY_SIZE: '2' }, 4)).toMatchObject({
      index: 3,
      count: 4,
      scheduler: 'kubernetes',
      ignored: ['AWS_BATCH_JOB_ARRAY_INDEX=1'],
    });
    // The first scheduler found decides, errors included: a broken Slurm array is not rescued by Kubernetes.
    expect(message({ ...SLURM['1-4']![0]!, JOB_COMPLETION_INDEX: '0' }, 4)).toMatch(/Slurm array's ids are not 0..N-1/);
  });
});

describe('the --partition argument', () => {
  const good: [string, unknown][] = [
    ['0/4', { auto: false, index: 0, count: 4 }],
    [' 3/4 ', { auto: false, index: 3, count: 4 }],
    ['auto', { auto: true, count: null }],
    ['auto/8', { auto: true, count: 8 }],
  ];
  for (const [arg, want] of good) it(`accepts "${arg}"`, () => expect(partitionArg(arg)).toEqual(want));
  const bad: [string, RegExp][] = [
    ['4/4', /need 0 <= i < N, got 4\/4/],
    ['0/0', /need 0 <= i < N/],
    ['auto/0', /need N >= 1 in auto\/N/],
    ['auto/', /expected i\/N such as 0\/4, auto \(index and count from the scheduler\) or auto\/N, got "auto\/"/],
    ['AUTO', /expected i\/N/],
    ['1/2/3', /expected i\/N/],
    ['-1/4', /expected i\/N/],
    ['0/99999999999999999999', /expected i\/N/],
  ];
  for (const [arg, re] of bad) it(`refuses "${arg}"`, () => expect(() => partitionArg(arg)).toThrow(re));
});

describe('{i} and {N} in output paths', () => {
  const table: [string, { index: number; count: number }, string][] = [
    ['parts/part-{i}-of-{N}.jsonl', { index: 3, count: 12 }, 'parts/part-3-of-12.jsonl'],
    ['p{i}{i}.parquet', { index: 0, count: 1 }, 'p00.parquet'],
    ['no-placeholders.jsonl', { index: 1, count: 2 }, 'no-placeholders.jsonl'],
    // Other braces are not placeholders.
    ['{x}/part-{i}.jsonl', { index: 1, count: 2 }, '{x}/part-1.jsonl'],
  ];
  for (const [path, p, want] of table) it(`${path} -> ${want}`, () => expect(expandPlaceholders(path, p)).toBe(want));

  it('tells paths with placeholders, and refuses likely slips', () => {
    expect(hasPlaceholders('a-{i}.jsonl')).toBe(true);
    expect(hasPlaceholders('a-{N}.jsonl')).toBe(true);
    expect(hasPlaceholders('a-{x}.jsonl')).toBe(false);
    for (const slip of ['{n}', '{I}', '{index}', '{count}']) {
      expect(() => checkPlaceholders('--out', `a-${slip}.jsonl`)).toThrow(`--out a-${slip}.jsonl: unknown placeholder ${slip}; the placeholders are {i} (partition index) and {N} (partition count)`);
    }
  });

  it('resolvePartitionOptions: expands --out and --stats, refuses placeholders without --partition', () => {
    const r = resolvePartitionOptions({ out: 'p/{i}-{N}.jsonl', stats: 's/{i}.json', partition: { auto: true, count: 3 } }, { JOB_COMPLETION_INDEX: '1' });
    expect(r.cli).toMatchObject({ out: 'p/1-3.jsonl', stats: 's/1.json' });
    expect(r.partition).toEqual({ index: 1, count: 3, source: { scheduler: 'kubernetes', argument: 'auto/3', variables: { JOB_COMPLETION_INDEX: '1' } } });
    expect(r.note).toBe('partition 1/3 from the Kubernetes Indexed Job (JOB_COMPLETION_INDEX=1)');
    expect(r.warnings).toEqual([]);
    const fixed = resolvePartitionOptions({ out: 'p-{i}.jsonl', partition: { auto: false, index: 0, count: 2 } }, {});
    expect(fixed.cli.out).toBe('p-0.jsonl');
    expect(fixed.partition!.source).toEqual({ scheduler: null, argument: '0/2' });
    expect(() => resolvePartitionOptions({ out: 'a.jsonl', stats: 's-{N}.json' }, {})).toThrow('--stats s-{N}.json: the placeholders {i} and {N} need --partition (i/N, auto or auto/N)');
    expect(() => resolvePartitionOptions({ out: 'a.jsonl', card: 'c-{i}.md' }, {})).toThrow('--card c-{i}.md');
    expect(() => resolvePartitionOptions({ out: 'p.jsonl', partition: { auto: true, count: null } }, {})).toThrow(UserError);
  });
});

describe('merge: every partition exactly once', () => {
  const claims = (count: number, indices: number[]) => indices.map((index, k) => ({ index, count, file: `p${k}.jsonl` }));
  const fails = (c: ReturnType<typeof claims>): { message: string; code: number } => {
    try {
      checkCoverage(c);
    } catch (e) {
      return { message: (e as UserError).message, code: (e as UserError).exitCode };
    }
    throw new Error('expected checkCoverage to refuse');
  };
  it('passes every partition once, in any order', () => {
    expect(() => checkCoverage(claims(4, [2, 0, 3, 1]))).not.toThrow();
    expect(() => checkCoverage(claims(1, [0]))).not.toThrow();
  });
  const table: [string, number, number[], string, number][] = [
    ['one missing', 4, [0, 1, 3], '1 of 4 partitions missing: 2/4; nothing written', 3],
    ['two missing', 4, [0, 3], '2 of 4 partitions missing: 1/4, 2/4; nothing written', 3],
    ['runs of missing ones', 10, [0, 5, 9], '7 of 10 partitions missing: 1/10 to 4/10, 6/10 to 8/10; nothing written', 3],
    ['one given twice', 3, [0, 1, 2, 1], 'partition 1/3 given twice (p1.jsonl, p3.jsonl); nothing written', 2],
    ['given three times', 2, [0, 1, 0, 0], 'partition 0/2 given 3 times (p0.jsonl, p2.jsonl, p3.jsonl); nothing written', 2],
    ['missing and twice', 4, [0, 0, 3], '2 of 4 partitions missing: 1/4, 2/4; partition 0/4 given twice (p0.jsonl, p1.jsonl); nothing written', 3],
  ];
  for (const [name, count, indices, want, code] of table) {
    it(name, () => expect(fails(claims(count, indices))).toEqual({ message: want, code }));
  }
  it('a huge N: the list is cut, the count is exact, nothing of size N is built', () => {
    const r = fails(claims(2 ** 40, [0]));
    expect(r.code).toBe(3);
    expect(r.message).toMatch(/^1099511627775 of 1099511627776 partitions missing: 1\/1099511627776 to 1000\/1099511627776, \.\.\. \(1099511626775 more\); nothing written$/);
  });
});
