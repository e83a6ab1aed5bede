// `--partition auto`: which partition this process is, read from the variables a scheduler exports
// to each task of an array. Pure: an environment in, a partition (and where it came from) or one
// line saying what is wrong out; the caller turns that line into a usage error.
//
// Precedence when several schedulers' variables are set: Slurm, then Kubernetes, then AWS Batch; the
// others are reported as ignored. Slurm first because it also exports the count (so a wrong array is
// caught) and because it is the innermost scheduler when they nest: Slurm's daemons and login nodes
// can run in Kubernetes pods, and a job inherits the environment it was submitted or started from.

export type Scheduler = 'slurm' | 'kubernetes' | 'aws-batch';

/** What `--partition` asked for: a fixed `i/N`, or `auto` (count from the scheduler or `auto/N`). */
export type PartitionRequest = { auto: false; index: number; count: number } | { auto: true; count: number | null };

export interface SchedulerPartition {
  index: number;
  count: number;
  scheduler: Scheduler;
  /** The scheduler's variables that were read, as found (values are strings, as in the environment). */
  variables: Record<string, string>;
  /** Variables of lower-precedence schedulers that were also set, as NAME=value. */
  ignored: string[];
}

export type Resolution = { ok: true; partition: SchedulerPartition } | { ok: false; message: string };

export type Env = Readonly<Record<string, string | undefined>>;

const SLURM = ['SLURM_ARRAY_TASK_ID', 'SLURM_ARRAY_TASK_MIN', 'SLURM_ARRAY_TASK_MAX', 'SLURM_ARRAY_TASK_COUNT', 'SLURM_ARRAY_TASK_STEP'] as const;
const KUBERNETES_INDEX = 'JOB_COMPLETION_INDEX';
const AWS_INDEX = 'AWS_BATCH_JOB_ARRAY_INDEX';
const AWS_SIZE = 'AWS_BATCH_JOB_ARRAY_SIZE';

/** The index variable of each scheduler, in precedence order, with what sets it. */
export const LOOKED_FOR: readonly { scheduler: Scheduler; variable: string; what: string }[] = [
  { scheduler: 'slurm', variable: 'SLURM_ARRAY_TASK_ID', what: 'Slurm job array' },
  { scheduler: 'kubernetes', variable: KUBERNETES_INDEX, what: 'Kubernetes Indexed Job' },
  { scheduler: 'aws-batch', variable: AWS_INDEX, what: 'AWS Batch array job' },
];

/** A variable's value; an empty one counts as unset (as `${VAR:-}` reads it). */
function get(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** A whole number as the schedulers write it (decimal digits), or null. */
function wholeNumber(v: string): number | null {
  if (!/^\d{1,15}$/.test(v)) return null;
  return Number(v);
}

function listed(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

function fail(message: string): Resolution {
  return { ok: false, message: `--partition auto: ${message}` };
}

function slurm(env: Env, wanted: number | null): Resolution {
  const vars: Record<string, string> = {};
  for (const name of SLURM) {
    const v = get(env, name);
    if (v !== undefined) vars[name] = v;
  }
  const found = listed(vars);
  for (const name of SLURM.slice(0, 4)) {
    if (vars[name] === undefined) return fail(`${name} is not set, but ${found} is: not a Slurm array task's environment`);
  }
  const n: Record<string, number> = {};
  for (const [name, v] of Object.entries(vars)) {
    const x = wholeNumber(v);
    if (x === null) return fail(`${name}=${JSON.stringify(v)} is not a whole number (${found})`);
    n[name] = x;
  }
  const id = n.SLURM_ARRAY_TASK_ID!;
  const min = n.SLURM_ARRAY_TASK_MIN!;
  const max = n.SLURM_ARRAY_TASK_MAX!;
  const count = n.SLURM_ARRAY_TASK_COUNT!;
  const step = n.SLURM_ARRAY_TASK_STEP ?? 1;
  // Ids 0..N-1 in steps of 1: then the count is max + 1 (a list with a gap, such as 0,1,3, has step 1
  // but fewer tasks than max + 1).
  if (min !== 0 || step !== 1 || count !== max + 1 || id > max) {
    return fail(`the Slurm array's ids are not 0..N-1 in steps of 1 (${found}); submit it with sbatch --array=0-${Math.max(count, 1) - 1}`);
  }
  if (wanted !== null && wanted !== count) {
    return fail(`auto/${wanted} disagrees with the Slurm array of ${count} tasks (${found}); give --partition auto, or submit --array=0-${wanted - 1}`);
  }
  return { ok: true, partition: { index: id, count, scheduler: 'slurm', variables: vars, ignored: [] } };
}

function indexed(env: Env, wanted: number | null, scheduler: Scheduler, indexVar: string, sizeVar: string | null, what: string, countHint: string): Resolution {
  const raw = get(env, indexVar)!;
  const vars: Record<string, string> = { [indexVar]: raw };
  const index = wholeNumber(raw);
  if (index === null) return fail(`${indexVar}=${JSON.stringify(raw)} is not a whole number`);
  let count = wanted;
  const sizeRaw = sizeVar ? get(env, sizeVar) : undefined;
  if (sizeVar && sizeRaw !== undefined) {
    vars[sizeVar] = sizeRaw;
    const size = wholeNumber(sizeRaw);
    if (size === null || size < 1) return fail(`${sizeVar}=${JSON.stringify(sizeRaw)} is not a count of tasks`);
    if (wanted !== null && wanted !== size) return fail(`auto/${wanted} disagrees with the ${what} of ${size} tasks (${listed(vars)}); give --partition auto`);
    count = size;
  }
  if (count === null) return fail(`${indexVar}=${raw} is set (${what}), but ${countHint}: give --partition auto/N with N the number of tasks`);
  if (index >= count) return fail(`${indexVar}=${raw} is not below N = ${count} (${listed(vars)}${wanted !== null ? `, --partition auto/${wanted}` : ''}): the ${what} has more tasks than N`);
  return { ok: true, partition: { index, count, scheduler, variables: vars, ignored: [] } };
}

/** The partition of this task under `--partition auto` (`wanted`: the N of `auto/N`, or null). */
export function resolveFromScheduler(env: Env, wanted: number | null): Resolution {
  const present = LOOKED_FOR.filter((s) => get(env, s.variable) !== undefined);
  if (present.length === 0) {
    // A Slurm job that is not an array task: say so, it is the likeliest slip.
    const job = get(env, 'SLURM_JOB_ID');
    const hint = job !== undefined ? `; SLURM_JOB_ID=${job} is set, but this Slurm job is not an array task (submit it with sbatch --array=0-N-1)` : '';
    return fail(
      `no scheduler's task index found: looked for ${LOOKED_FOR.map((s) => `${s.variable} (${s.what})`).join(', ')}${hint}; outside a scheduler give --partition i/N`,
    );
  }
  const first = present[0]!;
  const r =
    first.scheduler === 'slurm'
      ? slurm(env, wanted)
      : first.scheduler === 'kubernetes'
        ? indexed(env, wanted, 'kubernetes', KUBERNETES_INDEX, null, first.what, 'Kubernetes exports no count')
        : indexed(env, wanted, 'aws-batch', AWS_INDEX, AWS_SIZE, first.what, `${AWS_SIZE} is not set`);
  if (!r.ok) return r;
  const ignored = present.slice(1).map((s) => `${s.variable}=${get(env, s.variable)}`);
  return { ok: true, partition: { ...r.partition, ignored } };
}
