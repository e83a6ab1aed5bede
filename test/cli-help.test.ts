// `--help` of the BUILT CLI (`npm run build` first): it points at the mining contract, and option
// descriptions carry no hard line breaks (commander wraps them to the terminal itself).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const help = (...args: string[]) => execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), ...args, '--help'], { encoding: 'utf8' });

describe('--help', () => {
  it.each([[[] as string[]], [['mine']]])('%j names docs/mining-contract.md', (args) => {
    expect(help(...args)).toContain('docs/mining-contract.md');
  });

  const program = buildProgram();
  const commands = [program, ...program.commands];
  it.each(commands.map((c) => [c.name(), c] as const))('%s: descriptions without hard line breaks', (_, cmd) => {
    expect(cmd.description()).not.toContain('\n');
    for (const opt of cmd.options) expect(opt.description, opt.flags).not.toContain('\n');
    for (const arg of cmd.registeredArguments) expect(arg.description, arg.name()).not.toContain('\n');
  });
});
