// The command line: a thin layer over the library. One error handler maps errors to exit codes:
// a UserError prints one line; anything else is a bug and prints its stack (exit 1).
import { Command, CommanderError } from 'commander';
import { ExitCode, UserError, isStringLimit, stringLimitMessage } from './errors.js';
import { registerCheckTemplate } from './commands/check-template.js';
import { registerMerge } from './commands/merge.js';
import { registerMine } from './commands/mine.js';
import { registerReport } from './commands/report.js';
import { registerShow } from './commands/show.js';
import { CONTRACT_VERSION } from './contract/options.js';
import { VERSION } from './version.js';
import { removeAllTemp } from './io/atomic.js';

export function buildProgram(): Command {
  const program = new Command('divergence-mine')
    .description('Turn multi-turn agent trajectories into action-level DPO preference pairs.')
    .version(VERSION)
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', `\nThe mining rules: docs/mining-contract.md (contract version ${CONTRACT_VERSION}).`)
    .exitOverride();
  registerMine(program);
  registerMerge(program);
  registerShow(program);
  registerReport(program);
  registerCheckTemplate(program);
  return program;
}

function onSignal(signal: NodeJS.Signals, code: number): void {
  process.once(signal, () => {
    removeAllTemp();
    process.stderr.write(`\ndivergence-mine: interrupted (${signal}); no output written\n`);
    process.exit(code);
  });
}

/** Last resort for an error thrown outside the promise chain: still no temporary file left behind. */
function onFatal(e: unknown): void {
  removeAllTemp();
  process.stderr.write(`divergence-mine: internal error (a bug, please report it):\n${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(ExitCode.bug);
}

export async function main(argv: string[]): Promise<number> {
  onSignal('SIGINT', ExitCode.sigint);
  onSignal('SIGTERM', ExitCode.sigterm);
  process.once('uncaughtException', onFatal);
  process.once('unhandledRejection', onFatal);
  // A reader that closes our stdout early (`| head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
  const program = buildProgram();
  program.commands.forEach((c) => c.exitOverride());
  try {
    await program.parseAsync(argv);
    return ExitCode.ok;
  } catch (e) {
    removeAllTemp();
    if (e instanceof CommanderError) {
      // help and version are exit 0; everything else commander rejects is a usage error.
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (e instanceof UserError) {
      process.stderr.write(`divergence-mine: error: ${e.message}\n`);
      return e.exitCode;
    }
    // Input too large for one string is the input's limit, not a bug: one line, exit 7.
    if (e instanceof RangeError && isStringLimit(e)) {
      process.stderr.write(`divergence-mine: error: ${stringLimitMessage('input', e)}\n`);
      return ExitCode.badValue;
    }
    process.stderr.write(`divergence-mine: internal error (a bug, please report it):\n${(e as Error)?.stack ?? String(e)}\n`);
    return ExitCode.bug;
  }
}
