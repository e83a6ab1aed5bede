// One error type for user mistakes and bad input. The CLI prints `message` on one line and exits
// with `exitCode`; anything else that escapes is a bug (exit 1, with a stack trace).

/** Documented exit codes (README "Errors and exit codes"). */
export const ExitCode = {
  ok: 0,
  bug: 1,
  usage: 2,
  missingInput: 3,
  /** A folder the run must write in (an output's folder, TMPDIR) is missing, not a folder, or refuses new files: as a missing input, exit 3. */
  folder: 3,
  notParquet: 4,
  corrupt: 5,
  schema: 6,
  badValue: 7,
  output: 8,
  templateFailures: 9,
  /** The Hugging Face Hub unreachable, a download that failed after its retries, or an answer that cannot be trusted. */
  hub: 10,
  /** The supervisor (a terminal's SIGHUP, or killed outright) is gone. */
  sighup: 129,
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class UserError extends Error {
  constructor(
    message: string,
    public readonly exitCode: number = ExitCode.usage,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * An error raised by a third-party decoder (parquet-wasm, apache-arrow IPC, DuckDB) while reading a
 * file: about the file's bytes, so exit 5 (read/pool.ts), unlike a bug in our own code (exit 1).
 */
export class DecoderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecoderError';
  }
}

/**
 * `e` as a DecoderError, unless it already says what it is (a UserError, a wasm trap). Only its
 * first line: errors are one line, and DuckDB's add paragraphs of advice ("Possible solutions: ...").
 */
export function asDecoderError(e: unknown): unknown {
  if (e instanceof UserError || e instanceof DecoderError || (e instanceof Error && e.name === 'RuntimeError')) return e;
  const text = e instanceof Error ? e.message : String(e);
  return new DecoderError(text.trim().split('\n')[0]!.trim());
}

/** A RangeError of V8's string limit (a value longer than about 512 MiB of text). */
export function isStringLimit(e: { name?: string; message: string }): boolean {
  return e.name === 'RangeError' && /Invalid string length|Cannot create a string longer/.test(e.message);
}

/** The one-line message for a value past V8's string limit. */
export function stringLimitMessage(where: string, e: { message: string }): string {
  return `${where}: a value is longer than the longest JavaScript string (about 512 MiB of text) (${e.message})`;
}

/** Serialisable form, so workers can send a UserError across the thread boundary. */
export interface ErrorPayload {
  message: string;
  exitCode: number | null;
  /** Error class name (`RuntimeError` is a wasm trap). */
  name?: string;
  stack?: string;
}

export function toPayload(err: unknown): ErrorPayload {
  if (err instanceof UserError) return { message: err.message, exitCode: err.exitCode };
  if (err instanceof Error) return { message: err.message, exitCode: null, name: err.name, stack: err.stack };
  // A thrown non-Error (a string, a number, an object): its text, never "undefined".
  let text: string;
  try {
    text = typeof err === 'object' && err !== null ? JSON.stringify(err) : String(err);
  } catch {
    text = Object.prototype.toString.call(err);
  }
  return { message: `a non-Error value was thrown: ${text}`, exitCode: null, name: 'NonError' };
}
