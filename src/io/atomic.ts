// Output files are written under a temporary name in the target folder and renamed at the end, so a
// failed or interrupted run never leaves a half-written file. Signal handlers remove what is pending.
// Every path is also reported to the supervisor (supervision.ts), which removes what is left if the
// process dies without running any JS (a V8 fatal error, a native crash, the OOM killer). A run whose
// supervisor was killed outright too cannot clean up: its temporary outputs and spill folders carry
// its pid, and the next run on the same folder removes those whose process is gone.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { tellSupervisor } from './supervision.js';

const pending = new Set<string>();
/** Folders this run made (leaf -> the topmost one made), removed while empty if the run fails. */
const madeFolders = new Map<string, string>();
/**
 * Commits held back until every output of a run is written (holdCommits .. commitHeld): a run that
 * fails or dies before the end leaves none of its outputs, not the first few. null: commit at once.
 */
let held: { renames: [tmp: string, path: string][]; removals: string[]; keptFolders: string[] } | null = null;

/** Paths to delete if the process is interrupted (temporary outputs, spill folders). */
export function trackTemp(path: string): void {
  pending.add(path);
  tellSupervisor({ op: 'temp', path });
}

export function untrackTemp(path: string): void {
  pending.delete(path);
  tellSupervisor({ op: 'drop', path });
}

export function removeTemp(path: string): void {
  rmSync(path, { recursive: true, force: true });
  untrackTemp(path);
}

/** Folders from `leaf` up to `top` were made by this run: removed (while empty) if it fails. */
export function trackMadeFolders(leaf: string, top: string): void {
  madeFolders.set(leaf, top);
  tellSupervisor({ op: 'folders', path: leaf, top });
}

/** The run succeeded: the folders it made stay (once the held commits are made, if they are held). */
export function keepMadeFolders(leaf: string): void {
  if (held) held.keptFolders.push(leaf);
  else untrackMadeFolders(leaf);
}

/** The folders from `leaf` up are no longer this run's to remove (kept, or removed already). */
function untrackMadeFolders(leaf: string): void {
  madeFolders.delete(leaf);
  tellSupervisor({ op: 'drop', path: leaf });
}

/** Everything pending: temporary paths, then the folders made for them (signals, errors, the supervisor's lifeline). */
export function removeAllTemp(): void {
  releaseHeld();
  for (const p of [...pending]) removeTemp(p);
  for (const [leaf, top] of [...madeFolders]) {
    removeEmptyFolders(leaf, top);
    untrackMadeFolders(leaf);
  }
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
    if (!opts.createParents) throw new UserError(`${path}: ${what} folder ${dir} does not exist`, ExitCode.folder);
    checkCreatable(path, dir);
    return;
  }
  if (!st.isDirectory()) throw new UserError(`${path}: ${dir} is not a folder`, ExitCode.folder);
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) throw new UserError(`${path}: is a folder, not a file`, ExitCode.output);
    if (!force) throw new UserError(`${path}: ${what} file exists (use --force to overwrite)`, ExitCode.output);
  }
}

/** Temporary outputs: `.<name>.divergence-mine.tmp-<pid>` beside the output. */
const TEMP_OUTPUT = /^\..+\.divergence-mine\.tmp-(\d+)$/;
/** Spill folders: `divergence-mine-<pid>-XXXXXX` in the system temp folder. */
const SPILL_DIR = /^divergence-mine-(\d+)-[A-Za-z0-9]{6}$/;
const SPILL_PREFIX = 'divergence-mine-';

/** Whether process `pid` exists (EPERM: it exists, under another user). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const swept = new Set<string>();

/**
 * Remove the entries of `dir` named like ours (`pattern`, pid in group 1) whose process is gone.
 * Once per folder and run; a folder that cannot be listed is left alone (the run reports its own errors).
 */
export function sweepDeadTemps(dir: string, pattern: RegExp = TEMP_OUTPUT): string[] {
  const key = `${pattern.source}\0${dir}`;
  if (swept.has(key)) return [];
  swept.add(key);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = pattern.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Another run may be removing it too; a leftover that stays is only disk space.
    }
  }
  return removed;
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
    if (!st.isDirectory()) throw new UserError(`${path}: ${d} is not a folder`, ExitCode.folder);
    return;
  }
}

/**
 * Make the folder of `path` and its missing parents. Called only when the file is about to be
 * written, so a run that fails earlier leaves no folder behind. Returns the first folder made, if any.
 */
export function makeParentFolders(path: string): string | undefined {
  return makeFolders(dirname(path), (e) => new UserError(`${path}: cannot create the folder ${dirname(path)} (${errnoText(e)})`, ExitCode.folder));
}

/**
 * Make folder `dir` and its missing parents, tracked (trackMadeFolders) before the first is made, so
 * that a death at any moment leaves none the supervisor does not know of. Returns the topmost folder
 * made (undefined: `dir` existed); the caller keeps them (keepMadeFolders) once its output is in.
 */
export function makeFolders(dir: string, error: (e: unknown) => Error): string | undefined {
  let top: string | undefined;
  // In the form `dir` is given (relative stays relative), as mkdirSync's own answer would be.
  for (let d = dir; !existsSync(d); d = dirname(d)) {
    top = d;
    if (dirname(d) === d) break;
  }
  if (top === undefined) return undefined;
  trackMadeFolders(dir, top);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    removeEmptyFolders(dir, top);
    untrackMadeFolders(dir);
    throw error(e);
  }
  return top;
}

/** "ENOENT: no such file or folder" and the like, for one-line messages. */
function errnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  const what: Record<string, string> = {
    ENOENT: 'no such folder',
    ENOTDIR: 'not a folder',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'disk quota exceeded',
  };
  return code ? `${code}${what[code] ? `: ${what[code]}` : ''}` : (e as Error).message;
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
  sweepDeadTemps(dirname(path));
  return join(dirname(path), `.${basename(path)}.divergence-mine.tmp-${process.pid}`);
}

/**
 * Create (truncate) and open the temporary file of output `path`, tracked before it exists. A folder
 * that cannot take it (read-only, no permission, gone) is a folder error: one line, exit 3, as a
 * missing TMPDIR is.
 */
export function openTempFor(path: string): { tmp: string; fd: number } {
  const tmp = tempPathFor(path);
  trackTemp(tmp);
  try {
    return { tmp, fd: openSync(tmp, 'w') };
  } catch (e) {
    untrackTemp(tmp);
    throw new UserError(`${path}: cannot write in the folder ${dirname(path)} (${errnoText(e)})`, ExitCode.folder);
  }
}

/** Write a whole small file (stats, card, report) atomically, making its missing parent folders. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const made = makeParentFolders(path);
  const { tmp, fd } = openTempFor(path);
  try {
    writeFileSync(fd, data);
  } catch (e) {
    closeSync(fd);
    removeTemp(tmp);
    throw new UserError(`${path}: cannot write (${errnoText(e)})`, ExitCode.output);
  }
  closeSync(fd);
  commitTemp(tmp, path);
  if (made) keepMadeFolders(dirname(path));
}

/** What a spill folder's random part is drawn from (as mkdtemp's: six letters or digits). */
const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A fresh spill folder in the system temp folder, named with our pid and tracked before it exists
 * (mkdtemp would name it only once made: a run killed between the two would leave it unknown to the
 * supervisor). First removes the spill folders of dead runs. A TMPDIR that is missing, not a folder
 * or not writable is exit 3, one line.
 */
export function makeSpillDir(): string {
  const base = tmpdir();
  sweepDeadTemps(base, SPILL_DIR);
  for (let attempt = 0; ; attempt++) {
    const tag = [...randomBytes(6)].map((b) => NAME_CHARS[b % NAME_CHARS.length]).join('');
    const dir = join(base, `${SPILL_PREFIX}${process.pid}-${tag}`);
    trackTemp(dir);
    try {
      mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (e) {
      // Not made: nothing to remove, and the path may be another's (EEXIST), so only untracked.
      untrackTemp(dir);
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 100) continue;
      throw new UserError(`${base}: cannot make the temporary spill folder in the system temp folder (${errnoText(e)}); set TMPDIR to a writable folder`, ExitCode.missingInput);
    }
  }
}

/** From now on, commitTemp, removeStale and keepMadeFolders wait for commitHeld. */
export function holdCommits(): void {
  held = { renames: [], removals: [], keptFolders: [] };
}

/**
 * Move a finished temporary file into place (with the held commits, if they are held: an output;
 * a destination that is itself one of the run's temporary paths, a spool, is not one and moves now).
 */
export function commitTemp(tmp: string, path: string): void {
  if (held && !pending.has(path)) {
    held.renames.push([tmp, path]);
    return;
  }
  renameSync(tmp, path);
  untrackTemp(tmp);
}

/** Remove a stale output of an earlier run (with the held commits, if they are held). */
export function removeStale(path: string): void {
  if (held) held.removals.push(path);
  else rmSync(path, { force: true });
}

/** Where an output's bytes are now: its temporary file while its commit is held, else the path. */
export function writtenPath(path: string): string {
  return held?.renames.find(([, p]) => p === path)?.[0] ?? path;
}

/** Stop holding without committing (a run that failed): the held outputs' temporary files are removed. */
export function releaseHeld(): void {
  const h = held;
  held = null;
  for (const [tmp] of h?.renames ?? []) removeTemp(tmp);
}

/** Carry out the held commits, one rename after another, then the removals; stop holding. */
export function commitHeld(): void {
  const h = held;
  held = null;
  if (!h) return;
  for (const [tmp, path] of h.renames) commitTemp(tmp, path);
  for (const p of h.removals) removeStale(p);
  for (const leaf of h.keptFolders) keepMadeFolders(leaf);
}
