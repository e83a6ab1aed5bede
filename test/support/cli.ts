// The built CLI run as a user runs it: `node bin/divergence-mine ARGS`, its exit code and stderr.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'divergence-mine');

export interface CliResult {
  /** The exit code; -1 when the process ended by a signal or did not start. */
  code: number;
  stderr: string;
}

/** Variables of the schedulers `--partition auto` reads: never inherited by a test's run. */
const SCHEDULER_VARIABLE = /^(SLURM_|AWS_BATCH_|JOB_COMPLETION_INDEX$)/;

/** `env`: variables set for this run, over this process's environment without any scheduler's variables. */
export async function cli(args: string[], env?: Record<string, string>): Promise<CliResult> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SCHEDULER_VARIABLE.test(k)));
  try {
    const r = await run(process.execPath, [BIN, ...args], { timeout: 120_000, maxBuffer: 1 << 26, env: { ...base, ...env } });
    return { code: 0, stderr: r.stderr };
  } catch (e) {
    const err = e as { code?: number; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stderr: err.stderr ?? '' };
  }
}
