// Resolve the user's input arguments into an ordered list of files with their format.
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';

export type InputKind = 'parquet' | 'jsonl';

export interface InputFile {
  path: string;
  kind: InputKind;
  bytes: number;
  /** Set for a file read from the Hugging Face Hub (src/hub/): where it came from. */
  source?: InputSource;
}

/** A Hub file's provenance: repo id, the revision asked for, the commit it resolved to, the path in the repo, its etag. */
export interface InputSource {
  repo: string;
  revision: string;
  commit: string;
  path: string;
  etag: string;
}

export function kindByExtension(path: string): InputKind | null {
  if (/\.parquet$/i.test(path)) return 'parquet';
  if (/\.jsonl(\.gz)?$/i.test(path)) return 'jsonl';
  return null;
}

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        re += '.*';
        i++;
        if (glob[i + 1] === '/') i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function expandGlob(pattern: string): string[] {
  // The fixed directory prefix before the first wildcard is where the search starts.
  const abs = resolve(pattern);
  const first = abs.search(/[*?]/);
  const root = dirname(abs.slice(0, first + 1) + 'x');
  const re = globToRegExp(abs);
  let files: string[] = [];
  try {
    walk(root, files);
  } catch {
    files = [];
  }
  return files.filter((f) => re.test(f)).sort();
}

/**
 * Each argument is a file, a directory (every matching file below it, sorted) or a glob.
 * `forced` is the kind the option implies (--parquet / --jsonl); null lets the extension decide.
 */
export function resolveInputs(args: readonly string[], forced: InputKind | null): InputFile[] {
  const out: InputFile[] = [];
  for (const arg of args) {
    let paths: string[];
    if (/[*?]/.test(arg)) {
      paths = expandGlob(arg);
      if (paths.length === 0) throw new UserError(`${arg}: no file matches this pattern`, ExitCode.missingInput);
    } else {
      let st;
      try {
        st = statSync(arg);
      } catch {
        throw new UserError(`${arg}: no such file or directory`, ExitCode.missingInput);
      }
      if (st.isDirectory()) {
        const all: string[] = [];
        walk(arg, all);
        paths = all.filter((p) => (forced ? kindByExtension(p) === forced : kindByExtension(p) !== null)).sort();
        if (paths.length === 0) {
          throw new UserError(`${arg}: directory holds no ${forced ? `*.${forced}` : '*.parquet or *.jsonl'} file`, ExitCode.missingInput);
        }
      } else paths = [arg];
    }
    for (const p of paths) {
      const kind = forced ?? kindByExtension(p);
      if (!kind) throw new UserError(`${p}: unknown input format (use --parquet or --jsonl, or a .parquet / .jsonl / .jsonl.gz name)`, ExitCode.usage);
      const st = statSync(p);
      if (!st.isFile()) throw new UserError(`${p}: not a regular file`, ExitCode.missingInput);
      out.push({ path: p, kind, bytes: st.size });
    }
  }
  return out;
}

const MAGIC = Buffer.from('PAR1');

/** Catch the commonest wrong inputs before parquet-wasm sees them (it can trap on garbage). */
export function checkParquetMagic(path: string, size: number): void {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(4);
    readSync(fd, head, 0, 4, 0);
    if (size >= 8) readSync(fd, tail, 0, 4, size - 4);
    if (!head.equals(MAGIC)) throw new UserError(`${path}: not a parquet file (no PAR1 magic at the start)`, ExitCode.notParquet);
    if (size < 12 || !tail.equals(MAGIC)) throw new UserError(`${path}: truncated or corrupt parquet file (no PAR1 footer)`, ExitCode.corrupt);
  } finally {
    closeSync(fd);
  }
}

/** The upstream (openhands) columns: their absence keeps the contract's error message. */
