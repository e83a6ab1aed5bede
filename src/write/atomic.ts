// Output files are written under a temporary name in the target folder and renamed at the end, so a
// failed or interrupted run never leaves a half-written file. Signal handlers remove what is pending.
import { existsSync, mkdirSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
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

/**
 * Check an output path before any work starts: its folder exists (or, with `createParents`, can be
 * made under an existing folder), and it does not unless --force.
 */
export function checkOutputPath(path: string, force: boolean, what = 'output', opts: { createParents?: boolean } = {}): void {
  const dir = dirname(path);
  let st;
  try {
    st = statSync(dir);
  } catch {
    if (!opts.createParents) throw new UserError(`${path}: ${what} folder ${dir} does not exist`, ExitCode.output);
    checkCreatable(path, dir);
    return;
  }
  if (!st.isDirectory()) throw new UserError(`${path}: ${dir} is not a folder`, ExitCode.output);
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new UserError(`${path}: is a folder, not a file`, ExitCode.output);
    if (!force) throw new UserError(`${path}: ${what} file exists (use --force to overwrite)`, ExitCode.output);
  }
}

/** A missing folder can be made when its nearest existing ancestor is a folder (not a file). */
function checkCreatable(path: string, dir: string): void {
  for (let d = dirname(dir); ; d = dirname(d)) {
    let st;
    try {
      st = statSync(d);
    } catch {
      if (dirname(d) === d) return;
      continue;
    }
    if (!st.isDirectory()) throw new UserError(`${path}: ${d} is not a folder`, ExitCode.output);
    return;
  }
}

/**
 * Make the folder of `path` and its missing parents. Called only when the file is about to be
 * written, so a run that fails earlier leaves no folder behind. Returns the first folder made, if any.
 */
export function makeParentFolders(path: string): string | undefined {
  try {
    return mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new UserError(`${path}: cannot create the folder ${dirname(path)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, ExitCode.output);
  }
}

/** Remove `leaf` and its parents up to and including `top`, each only while it is empty. */
export function removeEmptyFolders(leaf: string, top: string): void {
  for (let d = leaf; ; d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty, or gone
    }
    if (d === top || dirname(d) === d) return;
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
