// The index pass over a JSONL input: each line's id, instance, repo, label and --pair-within group,
// with its line number, in line order. Reading a line as Latin-1 first is this pass's speed (see
// indexJsonl); its values are always the ones the line's UTF-8 text gives.
import { ExitCode, UserError } from '../errors.js';
import { mappedColumns, trajectoryIdOf, type ColumnMapping } from '../sources/schema.js';
import { pairWithinKey } from '../sources/identity.js';
import { isGzipped, jsonlLineBytes, linesBefore, MAX_LINE_BYTES, parseJsonLine, type LineRange } from '../io/jsonl-lines.js';
import type { ByteRange, IndexResult } from './protocol.js';

/** Keys a JSONL row must have: the mapped columns (a null value is a bad value; a missing key is a schema error, as in parquet). */
function checkKeys(path: string, line: number, o: Record<string, unknown>, mapping: ColumnMapping): void {
  const missing = mappedColumns(mapping).filter((k) => k !== mapping.tools && k !== mapping.repo && !(k in o));
  if (missing.length === 0) return;
  const found = Object.keys(o).join(', ') || 'none';
  throw new UserError(`${path}:${line}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (found: ${found})`, ExitCode.schema);
}

/** The index pass's values of one JSONL row. */
interface JsonlIndexRow {
  id: unknown;
  instance: unknown;
  repo: unknown;
  resolved: unknown;
  group: string | undefined;
}

function jsonlIndexRow(path: string, line: number, text: string, mapping: ColumnMapping, repoKey: string | null): JsonlIndexRow {
  const o = parseJsonLine(path, line, text);
  checkKeys(path, line, o, mapping);
  return { id: trajectoryIdOf(o, mapping.id), instance: mapping.instance !== null ? o[mapping.instance] : null, repo: repoKey ? (o[repoKey] ?? null) : null, resolved: o[mapping.resolved], group: pairWithinKey(mapping, (c) => o[c]) };
}

/** Whether a string holds a UTF-16 unit past ASCII. */
function beyondAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return true;
  return false;
}

/** Whether any string of a parsed JSON value (or any key of its objects) holds a unit past ASCII. */
export function holdsBeyondAscii(v: unknown): boolean {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') {
      if (beyondAscii(x)) return true;
    } else if (Array.isArray(x)) {
      for (const y of x) stack.push(y);
    } else if (x !== null && typeof x === 'object') {
      for (const [k, y] of Object.entries(x)) {
        if (beyondAscii(k)) return true;
        stack.push(y);
      }
    }
  }
  return false;
}

/**
 * The index pass reads each line as Latin-1 first: one byte per unit, a copy, where UTF-8 text with
 * any non-ASCII byte makes V8 decode it into a two-byte string twice the size (on real rows, whose
 * prompts hold a few such characters, that was most of the pass's time). Both readings have the same
 * ASCII bytes in the same places (a UTF-8 decoder never takes an ASCII byte into a sequence, valid
 * or not), so the same JSON structure and validity, and the same members under ASCII keys; they differ
 * only inside strings that hold non-ASCII bytes. So the Latin-1 reading's values are the UTF-8
 * reading's when every name it looks up is ASCII (the mapped columns, which hold a mapped `repo`,
 * and the --pair-within paths) and none of the values it returns holds a unit past ASCII. Otherwise, and on any error
 * (whose message quotes the UTF-8 text), the line is read again as UTF-8.
 */
export async function indexJsonl(path: string, mapping: ColumnMapping, contractLayout: boolean, range?: ByteRange): Promise<IndexResult> {
  const plain = !isGzipped(path);
  const res: IndexResult = { ids: [], instances: [], repos: [], resolved: [], lines: [], ...(plain ? { offsets: [], lengths: [] } : {}) };
  const repoKey = mapping.repo ?? (contractLayout ? 'repo' : null);
  const names = [...mappedColumns(mapping), ...(mapping.pairWithin ?? []).flatMap((p) => p.path)];
  const latin1First = !names.some(beyondAscii);
  const lineOf = fileLineOf(path, range);
  const lines: LineRange | undefined = range ? { ...range } : undefined;
  for await (const [line, bytes, offset] of jsonlLineBytes(path, MAX_LINE_BYTES, lines, lineOf)) {
    let row: JsonlIndexRow | null = null;
    if (latin1First) {
      try {
        const r = jsonlIndexRow(path, line, bytes.toString('latin1'), mapping, repoKey);
        if (!holdsBeyondAscii([r.id, r.instance, r.repo, r.resolved, r.group ?? null])) row = r;
      } catch {
        // read again as UTF-8 below, for the error's exact words
      }
    }
    row ??= atFileLine(line, lineOf, (at) => jsonlIndexRow(path, at, bytes.toString('utf8'), mapping, repoKey));
    res.ids.push(row.id);
    res.instances.push(row.instance);
    res.repos.push(row.repo);
    res.resolved.push(row.resolved);
    if (row.group !== undefined) (res.groups ??= []).push(row.group);
    res.lines!.push(line);
    res.offsets?.push(offset);
    res.lengths?.push(bytes.length);
  }
  if (lines) res.lineCount = lines.tally!.lines;
  return res;
}

/**
 * The file's number of a line numbered from the first of `range` (the identity without one). It
 * counts the lines before the range once, when first asked: only an error message asks.
 */
export function fileLineOf(path: string, range: ByteRange | undefined): (n: number) => number {
  if (!range || range.start === 0) return (n) => n;
  let before: number | null = null;
  return (n) => (before ??= linesBefore(path, range.start)) + n;
}

/**
 * `read(line)` for a line numbered within a range; an error it throws (one naming the line) is
 * thrown again as it reads with the file's number of the line. Reading is deterministic, so the
 * second call throws the same error, numbered as the user sees the file.
 */
export function atFileLine<T>(line: number, lineOf: (n: number) => number, read: (line: number) => T): T {
  try {
    return read(line);
  } catch (e) {
    const file = e instanceof UserError ? lineOf(line) : line;
    if (file === line) throw e;
    return read(file);
  }
}
