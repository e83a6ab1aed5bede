// The command line: a thin layer over the library. One error handler maps errors to exit codes:
// a UserError prints one line; anything else is a bug and prints its stack (exit 1). It runs under
// the supervisor of bin/divergence-mine (src/supervisor.ts), which handles the deaths no JS survives.
import { mark } from './io/timeline.js';
import { Command, CommanderError } from 'commander';
import { ExitCode, UserError, isStringLimit, stringLimitMessage } from './errors.js';
import { CONTRACT_VERSION } from './contract/options.js';
import { VERSION } from './version.js';
import { removeAllTemp } from './io/atomic.js';
import { watchSupervisor } from './io/supervision.js';
import { neutralise } from './io/terminal-text.js';
import { startEarlyWorker } from './commands/early-worker.js';

/**
 * Each command's module, loaded only when it is the one run: every run pays for the modules it loads
 * (about 1 ms per file, 140 files for all five commands; `mine` alone needs half of them), and the
 * tokenizers, templates, diff and YAML libraries serve commands a mining run does not use.
 */
const COMMANDS: Record<string, () => Promise<(program: Command) => unknown>> = {
  mine: async () => (await import('./commands/mine.js')).registerMine,
  merge: async () => (await import('./commands/merge.js')).registerMerge,
  show: async () => (await import('./commands/show.js')).registerShow,
  report: async () => (await import('./commands/report.js')).registerReport,
  'check-template': async () => (await import('./commands/check-template.js')).registerCheckTemplate,
};

/**
 * The command `argv` runs (its first argument, when that names a command), else null: then every
 * command is registered, for the program's help, `help <command>` and commander's suggestions.
 */
export function commandOf(argv: readonly string[]): string | null {
  const first = argv[2];
  return first !== undefined && Object.hasOwn(COMMANDS, first) ? first : null;
}

/** The program with the command `argv` runs, or with every command when it names none (commandOf). */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command('divergence-mine')
    .description('Turn multi-turn agent trajectories into action-level DPO preference pairs.')
    .version(VERSION)
    .showHelpAfterError('(add --help for usage)')
    // commander's errors quote the arguments (file names a glob found): neutralised like ours.
    .configureOutput({ writeErr: (text) => process.stderr.write(neutralise(text, true)) })
    .addHelpText('after', `\nThe mining rules: docs/mining-contract.md (contract version ${CONTRACT_VERSION}).`)
    .exitOverride();
  const only = commandOf(argv);
  for (const name of only ? [only] : Object.keys(COMMANDS)) (await COMMANDS[name]!())(program);
  return program;
}

let stopping = false;

/** Remove what is pending and exit; once, whatever arrives next (a signal twice: the terminal's and the supervisor's copy). */
function stop(message: string, code: number): void {
  if (stopping) return;
  stopping = true;
  removeAllTemp();
  process.stderr.write(`\ndivergence-mine: ${message}; no output written\n`);
  process.exit(code);
}

function onSignal(signal: NodeJS.Signals, code: number): void {
  // `on`, not `once`: with no listener left, a second copy of the signal would kill the process mid-cleanup.
  process.on(signal, () => stop(`interrupted (${signal})`, code));
}

/** The internal-error text: the stack, its lines neutralised (a message may quote the data). */
function bugText(e: unknown): string {
  return `divergence-mine: internal error (a bug, please report it):\n${neutralise((e as Error)?.stack ?? String(e), true)}\n`;
}

/** Last resort for an error thrown outside the promise chain: still no temporary file left behind. */
function onFatal(e: unknown): void {
  removeAllTemp();
  process.stderr.write(bugText(e));
  process.exit(ExitCode.bug);
}

export async function main(argv: string[]): Promise<number> {
  mark('cli: modules loaded');
  onSignal('SIGINT', ExitCode.sigint);
  onSignal('SIGTERM', ExitCode.sigterm);
  // The supervisor killed outright: nobody waits for this run any more.
  watchSupervisor(() => stop('the supervising process is gone', ExitCode.sighup));
  process.once('uncaughtException', onFatal);
  process.once('unhandledRejection', onFatal);
  // A reader that closes our stdout early (`| head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  // A mining run's first decode worker starts now, beside the loading of the command's modules
  // (engine/pool.ts startEarlyWorker); help needs none.
  if (commandOf(argv) === 'mine' && !argv.includes('--help') && !argv.includes('-h')) startEarlyWorker();
  try {
    const program = await buildProgram(argv);
    program.commands.forEach((c) => c.exitOverride());
    await program.parseAsync(argv);
    return ExitCode.ok;
  } catch (e) {
    removeAllTemp();
    if (e instanceof CommanderError) {
      // help and version are exit 0; everything else commander rejects is a usage error.
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (e instanceof UserError) {
      // The one place a UserError reaches the terminal: a value it quotes is neutralised here, once.
      process.stderr.write(`divergence-mine: error: ${neutralise(e.message)}\n`);
      return e.exitCode;
    }
    // Input too large for one string is the input's limit, not a bug: one line, exit 7.
    if (e instanceof RangeError && isStringLimit(e)) {
      process.stderr.write(`divergence-mine: error: ${neutralise(stringLimitMessage('input', e))}\n`);
      return ExitCode.badValue;
    }
    process.stderr.write(bugText(e));
    return ExitCode.bug;
  }
}
