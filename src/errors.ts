// One error type for user mistakes and bad input. The CLI prints `message` on one line and exits
// with `exitCode`; anything else that escapes is a bug (exit 1, with a stack trace).

/** Documented exit codes (README "Errors and exit codes"). */
export const ExitCode = {
  ok: 0,
  bug: 1,
  usage: 2,
  missingInput: 3,
  notParquet: 4,
  corrupt: 5,
  schema: 6,
  badValue: 7,
  output: 8,
  templateFailures: 9,
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
  return { message: String(err), exitCode: null };
}
