// `divergence-mine show`: print one pair of a pairs file in the terminal.
import { Command, InvalidArgumentError, Option } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { countPairs, findInstanceRows, readPairAt, seededIndex } from '../io/pairs.js';
import { DEFAULT_SHOW_OPTIONS, renderPair, type Layout } from '../view/terminal.js';

/** Where `show` writes and what it knows about the terminal (injectable for tests). */
export interface ShowIO {
  write(text: string): void;
  isTTY: boolean;
  columns: number | undefined;
  env: Record<string, string | undefined>;
}

export function processIO(): ShowIO {
  return {
    write: (t) => void process.stdout.write(t),
    isTTY: Boolean(process.stdout.isTTY),
    columns: process.stdout.columns,
    env: process.env,
  };
}

export interface ShowCliOptions {
  index?: number;
  instance?: string;
  random?: boolean;
  seed: string;
  context: number;
  lines: number;
  width?: number;
  layout: Layout;
  color: 'auto' | 'always' | 'never';
  full: boolean;
}

function wholeNumber(min: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`expected a whole number, got "${v}"`);
    const n = Number(v);
    if (n < min) throw new InvalidArgumentError(`must be at least ${min}, got ${n}`);
    return n;
  };
}

/** Colour decision: --color always/never win; auto = a TTY and NO_COLOR unset or empty. */
export function wantColor(when: ShowCliOptions['color'], io: Pick<ShowIO, 'isTTY' | 'env'>): boolean {
  if (when === 'always') return true;
  if (when === 'never') return false;
  const noColor = io.env.NO_COLOR;
  if (noColor !== undefined && noColor !== '') return false;
  return io.isTTY;
}

/** Width: --width, else the terminal's columns, else $COLUMNS, else 100. */
export function pickWidth(width: number | undefined, io: Pick<ShowIO, 'isTTY' | 'columns' | 'env'>): number {
  if (width !== undefined) return width;
  if (io.isTTY && io.columns && io.columns > 0) return io.columns;
  const env = Number(io.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  return DEFAULT_SHOW_OPTIONS.width;
}

export async function runShow(file: string, o: ShowCliOptions, io: ShowIO = processIO()): Promise<void> {
  if (o.random && o.index !== undefined) throw new UserError('--random and --index exclude each other', ExitCode.usage);
  let index: number;
  if (o.instance !== undefined) {
    const rows = await findInstanceRows(file, o.instance);
    if (rows.length === 0) throw new UserError(`${file}: no pair for instance ${o.instance}`, ExitCode.usage);
    const k = o.random ? seededIndex(o.seed, rows.length) : (o.index ?? 0);
    if (k >= rows.length) {
      throw new UserError(`${file}: instance ${o.instance} has ${rows.length} pair${rows.length === 1 ? '' : 's'}; --index ${k} is out of range (0-${rows.length - 1})`, ExitCode.usage);
    }
    index = rows[k] as number;
  } else if (o.random) {
    const count = await countPairs(file);
    if (count === 0) throw new UserError(`${file}: no pairs`, ExitCode.usage);
    index = seededIndex(o.seed, count);
  } else {
    index = o.index ?? 0;
  }
  const found = await readPairAt(file, index);
  if (!found) {
    const count = await countPairs(file);
    throw new UserError(
      count === 0 ? `${file}: no pairs` : `${file} has ${count} pair${count === 1 ? '' : 's'}; --index ${index} is out of range (0-${count - 1})`,
      ExitCode.usage,
    );
  }
  io.write(
    renderPair(found.pair, found.index, {
      width: pickWidth(o.width, io),
      color: wantColor(o.color, io),
      context: o.context,
      lines: o.lines,
      layout: o.layout,
      full: o.full,
    }),
  );
}

export function registerShow(program: Command, io?: ShowIO): Command {
  const d = DEFAULT_SHOW_OPTIONS;
  return program
    .command('show')
    .summary('print one pair: last prompt messages, then chosen vs rejected side by side')
    .description(
      'Print one pair of a pairs file (.jsonl, .jsonl.gz or .parquet): a header (ids, turn, message index, ' +
        'similarity), the last prompt messages in compact form, then the chosen and rejected actions side by ' +
        'side (stacked when the terminal is narrow) with the parts that differ highlighted. Colour only on a ' +
        'terminal, and never when NO_COLOR is set; without colour, differences are marked {+chosen+} and [-rejected-].',
    )
    .argument('<pairs>', 'pairs file written by `divergence-mine mine`')
    .option('-i, --index <n>', 'row number in the file, from 0 (with --instance: the n-th pair of that instance)', wholeNumber(0))
    .option('--instance <id>', 'show a pair of this instance_id')
    .option('--random', 'pick a pair at random (the same --seed picks the same pair)', false)
    .option('--seed <s>', 'seed for --random', '0')
    .option('--context <n>', 'prompt messages to show (the last n)', wholeNumber(0), d.context)
    .option('--lines <n>', 'lines shown per prompt message', wholeNumber(1), d.lines)
    .option('--width <cols>', 'output width (default: the terminal width, else $COLUMNS, else 100)', wholeNumber(40))
    .addOption(new Option('--layout <layout>', 'side by side, stacked, or auto (stacked below 80 columns)').choices(['auto', 'side', 'stacked']).default('auto'))
    .addOption(new Option('--color <when>', 'colour: auto (a terminal and no NO_COLOR), always or never').choices(['auto', 'always', 'never']).default('auto'))
    .option('--full', 'no folding: every prompt line and every unchanged line', false)
    .addHelpText(
      'after',
      `
Examples:
  $ divergence-mine show pairs.jsonl --index 12
  $ divergence-mine show pairs.parquet --instance django__django-11099
  $ divergence-mine show pairs.jsonl --random --seed 7 --color always | less -R`,
    )
    .action(async (file: string, o: ShowCliOptions) => {
      await runShow(file, o, io);
    });
}
