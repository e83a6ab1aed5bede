// Reading JSONL (optionally gzipped) line by line, and parsing one line into an object, with errors
// that name the file and the 1-based line. Shared by the trajectory reader and the pairs reader.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { ExitCode, UserError } from '../errors.js';

/** Non-blank lines with their 1-based numbers; a read or gunzip failure becomes a UserError. */
export async function* jsonlLines(path: string): AsyncGenerator<[lineNo: number, text: string]> {
  const input = createReadStream(path);
  const stream = path.toLowerCase().endsWith('.gz') ? input.pipe(createGunzip()) : input;
  const failed = new Promise<never>((_, reject) => {
    const onError = (e: Error) => reject(new UserError(`${path}: cannot read: ${e.message}`, ExitCode.corrupt));
    input.on('error', onError);
    stream.on('error', onError);
  });
  failed.catch(() => {});
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  const it = rl[Symbol.asyncIterator]();
  let n = 0;
  try {
    for (;;) {
      const r = await Promise.race([it.next(), failed]);
      if (r.done) break;
      n++;
      if (r.value.trim() !== '') yield [n, r.value];
    }
  } finally {
    rl.close();
    input.destroy();
  }
}

export function parseJsonLine(path: string, line: number, text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}:${line}: invalid JSON (${(e as Error).message})`, ExitCode.corrupt);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UserError(`${path}:${line}: a line must be a JSON object`, ExitCode.corrupt);
  return v as Record<string, unknown>;
}
