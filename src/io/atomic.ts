// Output files are written under a temporary name in the target folder and renamed at the end, so a
// failed or interrupted run never leaves a half-written file. Signal handlers remove what is pending.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';

const pending = new Set<string>();

/** Paths to delete if the process is interrupted (temporary outputs, spill folders). */
export function trackTemp(path: string): void {
  pending.add(path);
}

export function untrackTemp(path: string): void {
  pending.delete(path);
}

export function removeTemp(path: string): void {
  rmSync(path, { recursive: true, force: true });
  pending.delete(path);
}

export function removeAllTemp(): void {
  for (const p of [...pending]) removeTemp(p);
}

/** Check an output path before any work starts: its folder exists, and it does not unless --force. */
export function checkOutputPath(path: string, force: boolean, what = 'output'): void {
  const dir = dirname(path);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UserError(`${path}: ${what} folder ${dir} does not exist`, ExitCode.output);
  }
  if (!st.isDirectory()) throw new UserError(`${path}: ${dir} is not a folder`, ExitCode.output);
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new UserError(`${path}: is a folder, not a file`, ExitCode.output);
    if (!force) throw new UserError(`${path}: ${what} file exists (use --force to overwrite)`, ExitCode.output);
  }
}

export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
}

/** Move a finished temporary file into place. */
export function commitTemp(tmp: string, path: string): void {
  renameSync(tmp, path);
  pending.delete(tmp);
}
