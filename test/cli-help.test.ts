// `--help` of the BUILT CLI (`npm run build` first): it points at the mining contract, and option
// descriptions carry no hard line breaks (commander wraps them to the terminal itself).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const help = (...args: string[]) => execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), ...args, '--help'], { encoding: 'utf8' });

// Every command registered (argv names none).
const program = await buildProgram();

describe('--help', () => {
  it.each([[[] as string[]], [['mine']]])('%j names docs/mining-contract.md', (args) => {
    expect(help(...args)).toContain('docs/mining-contract.md');
  });

  const commands = [program, ...program.commands];
  it('registers every command when argv names none, and only the named one otherwise', async () => {
    expect(program.commands.map((c) => c.name())).toEqual(['mine', 'merge', 'show', 'report', 'check-template']);
    for (const name of ['mine', 'merge', 'show', 'report', 'check-template']) {
      expect((await buildProgram(['node', 'divergence-mine', name, '--help'])).commands.map((c) => c.name())).toEqual([name]);
    }
    // `help mine`, an option first, or an unknown word: every command (commander's help and suggestions need them).
    for (const argv of [['help', 'mine'], ['--version'], ['mien']]) expect((await buildProgram(['node', 'divergence-mine', ...argv])).commands).toHaveLength(5);
  });
  it('`help mine` and an unknown command still work through the built CLI', () => {
    expect(execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), 'help', 'mine'], { encoding: 'utf8' })).toContain('--parquet');
    let err = '';
    try {
      execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), 'mien'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      err = String((e as { stderr: string }).stderr);
    }
    expect(err).toContain("Did you mean mine?");
  });
  it.each(commands.map((c) => [c.name(), c] as const))('%s: descriptions without hard line breaks', (_, cmd) => {
    expect(cmd.description()).not.toContain('\n');
    for (const opt of cmd.options) expect(opt.description, opt.flags).not.toContain('\n');
    for (const arg of cmd.registeredArguments) expect(arg.description, arg.name()).not.toContain('\n');
  });
});
