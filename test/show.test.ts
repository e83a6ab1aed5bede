// `divergence-mine show`: golden text on the fixture pairs (no colour), the CLI options, parquet
// input, errors, the diff underneath, and a 5,000-pair synthetic file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerShow, type ShowIO, pickWidth, wantColor } from '../src/commands/show.js';
import { UserError } from '../src/errors.js';
import { openPublishedSink } from '../src/dataset/file-output.js';
import { countPairs, findInstanceRows, readPairAt, readPairs, seededIndex } from '../src/io/pairs.js';
import type { PairRow } from '../src/types.js';
import { diffSequences, diffTexts, diffTokens } from '../src/view/diff.js';
import { formatAction, sanitize } from '../src/view/format.js';
import { displayWidth, renderPair } from '../src/view/terminal.js';
import { writeSynthPairs } from './data/synth-pairs.mjs';
import { SHOW_GOLDEN } from './support/golden-cases.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DATA = join(HERE, 'data');
const GOLDEN = join(HERE, 'golden');
const PAIRS = join(DATA, 'pairs.jsonl');

/** Compare with test/golden/<name>. Only `npm run golden` (test/support/update-golden.mjs) writes those files. */
function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (!existsSync(path)) throw new Error(`test/golden/${name} is missing: run \`npm run golden\`, review and commit it`);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}
const goldenArgs = (file: string): string[] => {
  const c = SHOW_GOLDEN.find((g) => g.file === file);
  if (!c) throw new Error(`no golden case ${file} in test/support/golden-cases.mjs`);
  return [PAIRS, ...c.args];
};

function fakeIO(over: Partial<ShowIO> = {}): ShowIO & { out: string } {
  const io = {
    out: '',
    write(t: string) {
      io.out += t;
    },
    isTTY: false,
    columns: undefined as number | undefined,
    env: {} as Record<string, string | undefined>,
    ...over,
  };
  return io;
}

async function show(args: string[], io = fakeIO()): Promise<string> {
  const program = new Command('divergence-mine').exitOverride();
  program.configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerShow(program, io);
  program.commands.forEach((c) => c.exitOverride());
  await program.parseAsync(['node', 'divergence-mine', 'show', ...args]);
  return io.out;
}

async function showError(args: string[]): Promise<UserError> {
  try {
    await show(args);
  } catch (e) {
    if (e instanceof UserError) return e;
    throw e;
  }
  throw new Error('expected a UserError');
}

let tmp: string;
let parquetPath: string;
const fixtureRows: PairRow[] = readFileSync(PAIRS, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as PairRow);

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'dm-show-'));
  // The same pairs through the real parquet writer of `mine`.
  parquetPath = join(tmp, 'pairs.parquet');
  const sink = openPublishedSink(parquetPath);
  for (const r of fixtureRows) await sink.write(r);
  await sink.close();
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('show: golden text (no colour)', () => {
  for (let i = 0; i < 6; i++) {
    it(`pair ${i} side by side at 100 columns`, async () => {
      golden(`show-${i}.txt`, await show(goldenArgs(`show-${i}.txt`)));
    });
  }

  it('stacks chosen above rejected below 80 columns', async () => {
    golden('show-5-stacked-60.txt', await show(goldenArgs('show-5-stacked-60.txt')));
  });

  it('--full shows every prompt line and every unchanged line', async () => {
    const out = await show(goldenArgs('show-0-full-120.txt'));
    expect(goldenArgs('show-0-full-120.txt')).toEqual([PAIRS, '--index', '0', '--width', '120', '--full', '--context', '1']);
    golden('show-0-full-120.txt', out);
    expect(out).not.toContain('unchanged lines');
    expect(out).not.toContain('more lines');
  });

  it('--context 0 leaves the prompt out; --lines limits each message', async () => {
    const none = await show([PAIRS, '--index', '3', '--context', '0']);
    expect(none).not.toContain('── prompt');
    const two = await show([PAIRS, '--index', '3', '--lines', '2', '--context', '2']);
    expect(two).toContain('── prompt: last 2 of 52 messages');
    expect(two).toMatch(/⋯ \d+ more lines/);
  });

  it('never prints a line wider than --width', async () => {
    for (const w of [60, 100, 143]) {
      for (let i = 0; i < 6; i++) {
        const out = await show([PAIRS, '--index', String(i), '--width', String(w)]);
        for (const line of out.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(w);
      }
    }
  });
});

describe('show: selection', () => {
  it('--instance picks the first pair of that instance; --index then counts within it', async () => {
    expect(await show([PAIRS, '--instance', 'numpy__numpydoc-101', '--width', '100'])).toBe(await show([PAIRS, '--index', '2', '--width', '100']));
    expect(await show([PAIRS, '--instance', 'numpy__numpydoc-101', '--index', '1', '--width', '100'])).toBe(await show([PAIRS, '--index', '3', '--width', '100']));
    expect(await findInstanceRows(PAIRS, 'tianocore__edk2-pytool-library-372')).toEqual([4, 5]);
  });

  it('--random --seed is deterministic and the same for JSONL and parquet', async () => {
    const a = await show([PAIRS, '--random', '--seed', '7']);
    expect(await show([PAIRS, '--random', '--seed', '7'])).toBe(a);
    expect(await show([parquetPath, '--random', '--seed', '7'])).toBe(a);
    const picked = new Set<number>();
    for (let s = 0; s < 40; s++) picked.add(seededIndex(String(s), 6));
    expect(picked.size).toBeGreaterThan(3); // different seeds reach different rows
    expect(a).toContain(`pair #${seededIndex('7', 6)} `);
  });

  it('reads parquet written by `mine` to the same rows and the same output', async () => {
    expect(await countPairs(parquetPath)).toBe(6);
    const rows: PairRow[] = [];
    for await (const r of readPairs(parquetPath)) rows.push(r.pair);
    expect(rows).toEqual(fixtureRows);
    for (let i = 0; i < 6; i++) {
      expect(await show([parquetPath, '--index', String(i), '--width', '100'])).toBe(await show([PAIRS, '--index', String(i), '--width', '100']));
    }
    expect(await findInstanceRows(parquetPath, 'PyPSA__linopy-79')).toEqual([0, 1]);
    const tail = await readPairAt(parquetPath, 3, { promptTail: 2 });
    expect(tail?.promptLength).toBe(52);
    expect(tail?.pair.prompt).toEqual(fixtureRows[3]!.prompt.slice(50));
  });
});

describe('show: colour', () => {
  it('colours only on a TTY, and never with NO_COLOR set', async () => {
    const tty = await show([PAIRS, '--index', '5'], fakeIO({ isTTY: true, columns: 100 }));
    expect(tty).toContain('\x1b[');
    expect(tty).not.toContain('{+');
    const piped = await show([PAIRS, '--index', '5'], fakeIO({ isTTY: false }));
    expect(piped).not.toContain('\x1b[');
    const noColor = await show([PAIRS, '--index', '5'], fakeIO({ isTTY: true, columns: 100, env: { NO_COLOR: '1' } }));
    expect(noColor).not.toContain('\x1b[');
    const forced = await show([PAIRS, '--index', '5', '--color', 'always'], fakeIO({ isTTY: false }));
    expect(forced).toContain('\x1b[30m\x1b[42m'); // black on green: the chosen side's highlight
    expect(wantColor('auto', { isTTY: true, env: { NO_COLOR: '' } })).toBe(true); // empty NO_COLOR does not count
    expect(wantColor('never', { isTTY: true, env: {} })).toBe(false);
  });

  it('strips nothing but adds colour: without escapes the text equals the plain layout minus markers', async () => {
    const tty = await show([PAIRS, '--index', '1', '--width', '100'], fakeIO({ isTTY: true }));
    // eslint-disable-next-line no-control-regex
    const visible = tty.replace(/\x1b\[[0-9;]*m/g, '');
    expect(visible).toContain('The tests are working.');
    for (const line of visible.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(100);
  });

  it('width comes from --width, then the terminal, then $COLUMNS, then 100', () => {
    expect(pickWidth(90, { isTTY: true, columns: 200, env: {} })).toBe(90);
    expect(pickWidth(undefined, { isTTY: true, columns: 200, env: { COLUMNS: '70' } })).toBe(200);
    expect(pickWidth(undefined, { isTTY: false, columns: undefined, env: { COLUMNS: '70' } })).toBe(70);
    expect(pickWidth(undefined, { isTTY: false, columns: undefined, env: {} })).toBe(100);
  });
});

describe('show: errors', () => {
  it('names the problem and exits non-zero', async () => {
    expect((await showError([join(tmp, 'nope.jsonl')])).exitCode).toBe(3);
    const range = await showError([PAIRS, '--index', '6']);
    expect(range.exitCode).toBe(2);
    expect(range.message).toContain('has 6 pairs; --index 6 is out of range (0-5)');
    const inst = await showError([PAIRS, '--instance', 'nope__nope-1']);
    expect(inst.message).toContain('no pair for instance nope__nope-1');
    expect((await showError([PAIRS, '--random', '--index', '1'])).exitCode).toBe(2);

    const badJson = join(tmp, 'bad.jsonl');
    writeFileSync(badJson, readFileSync(PAIRS, 'utf8').split('\n')[0] + '\n{"prompt": [\n');
    const bad = await showError([badJson, '--index', '1']);
    expect(bad.exitCode).toBe(5);
    expect(bad.message).toContain('bad.jsonl:2: invalid JSON');

    const notPairs = join(tmp, 'rows.jsonl');
    writeFileSync(notPairs, JSON.stringify({ trajectory_id: 'x', instance_id: 'y', trajectory: [] }) + '\n');
    const np = await showError([notPairs]);
    expect(np.exitCode).toBe(6);
    expect(np.message).toContain('rows.jsonl:1: not a pairs row: prompt must be a list of messages');

    const fakeParquet = join(tmp, 'fake.parquet');
    writeFileSync(fakeParquet, 'hello world, not parquet');
    expect((await showError([fakeParquet])).exitCode).toBe(4);

    const empty = join(tmp, 'empty.jsonl');
    writeFileSync(empty, '');
    expect((await showError([empty, '--random'])).message).toContain('no pairs');
  });

  it('commander rejects bad option values', async () => {
    await expect(show([PAIRS, '--index', '-1'])).rejects.toThrow();
    await expect(show([PAIRS, '--layout', 'diagonal'])).rejects.toThrow();
  });
});

describe('diff', () => {
  // Brute-force LCS length, to check that the Myers script is minimal.
  function lcs(a: string[], b: string[]): number {
    const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++) dp[i]![j] = a[i - 1] === b[j - 1] ? dp[i - 1]![j - 1]! + 1 : Math.max(dp[i - 1]![j]!, dp[i]![j - 1]!);
    return dp[a.length]![b.length]!;
  }

  it('finds a minimal edit script that covers both sequences', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let t = 0; t < 2000; t++) {
      const a = Array.from({ length: Math.floor(rnd() * 14) }, () => 'abcd'[Math.floor(rnd() * 4)]!);
      const b = Array.from({ length: Math.floor(rnd() * 14) }, () => 'abcd'[Math.floor(rnd() * 4)]!);
      const edits = diffSequences(a, b);
      let ai = 0;
      let bi = 0;
      let cost = 0;
      for (const e of edits) {
        expect([e.a0, e.b0]).toEqual([ai, bi]);
        if (e.op === 'eq') expect(a.slice(e.a0, e.a1)).toEqual(b.slice(e.b0, e.b1));
        else cost += e.a1 - e.a0 + (e.b1 - e.b0);
        ai = e.a1;
        bi = e.b1;
      }
      expect([ai, bi]).toEqual([a.length, b.length]);
      expect(cost).toBe(a.length + b.length - 2 * lcs(a, b));
    }
  });

  it('gives up past the edit limit with a correct (whole) replacement', () => {
    const a = Array.from({ length: 500 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 500 }, (_, i) => `b${i}`);
    expect(diffSequences(['x', ...a, 'y'], ['x', ...b, 'y'], 10)).toEqual([
      { op: 'eq', a0: 0, a1: 1, b0: 0, b1: 1 },
      { op: 'del', a0: 1, a1: 501, b0: 1, b1: 1 },
      { op: 'ins', a0: 501, a1: 501, b0: 1, b1: 501 },
      { op: 'eq', a0: 501, a1: 502, b0: 501, b1: 502 },
    ]);
  });

  it('highlights the differing words of a command', () => {
    const a = 'cd /workspace/x && python -m pytest tests/test_a.py -x';
    const b = 'cd /workspace/x && python -m pytest tests/test_b.py -v';
    const r = diffTokens(a, b);
    expect(r.a.map(([s, e]) => a.slice(s, e))).toEqual(['test_a', 'x']);
    expect(r.b.map(([s, e]) => b.slice(s, e))).toEqual(['test_b', 'v']);
  });

  it('aligns lines, keeps indentation and blank lines unhighlighted', () => {
    const d = diffTexts('→ execute_bash\n  command: ls -la\n\n    x = 1', '→ str_replace_editor\n  command: view\n\n    y = 1');
    expect(d.blocks).toEqual([
      { eq: false, a: 0, b: 0, n: 2, m: 2 },
      { eq: true, a: 2, b: 2, n: 1, m: 1 },
      { eq: false, a: 3, b: 3, n: 1, m: 1 },
    ]);
    const hl = (lines: string[], m: Map<number, [number, number][]>) =>
      [...m.entries()].map(([l, rs]) => rs.map(([s, e]) => lines[l]!.slice(s, e)).join('|'));
    expect(hl(d.aLines, d.hlA)).toEqual(['execute_bash', 'ls -la', 'x']);
    expect(hl(d.bLines, d.hlB)).toEqual(['str_replace_editor', 'view', 'y']);
  });

  it('renders actions readably and neutralises control characters', () => {
    expect(sanitize('a\tb\r\nc\x1b[31md\x00')).toBe('a   b\nc\u241b[31md\u2400');
    const text = formatAction({
      role: 'assistant',
      content: 'Run it.\n\n',
      tool_calls: JSON.stringify([{ id: 'x', type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls\npwd', timeout: 5 } } }]),
    });
    expect(text).toBe('Run it.\n→ execute_bash\n  command: |\n    ls\n    pwd\n  timeout: 5');
    expect(formatAction({ role: 'assistant', content: null, tool_calls: JSON.stringify([{ function: { name: 'f', arguments: '{oops' } }]) })).toBe(
      '→ f\n  (arguments did not parse) {oops',
    );
  });
});

describe('show: 5,000 generated pairs', () => {
  it('shows the first, last and a random pair, from JSONL and parquet alike', async () => {
    const big = join(tmp, 'pairs-5000.jsonl');
    await writeSynthPairs(big, 5000, 3);
    expect(await countPairs(big)).toBe(5000);
    const last = await show([big, '--index', '4999', '--width', '120']);
    expect(last).toContain('pair #4999 ');
    const rnd = await show([big, '--random', '--seed', 'abc', '--width', '120']);
    expect(rnd).toContain(`pair #${seededIndex('abc', 5000)} `);
    const first = await show([big, '--width', '120']);
    expect(first).toContain('pair #0 ');
    for (const out of [first, last, rnd]) for (const line of out.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(120);
    // The same rows as parquet (two row groups: parquet-wasm's offset/limit are per row group).
    const bigPq = join(tmp, 'pairs-5000.parquet');
    const sink = openPublishedSink(bigPq);
    for await (const p of readPairs(big)) await sink.write(p.pair);
    await sink.close();
    for (const i of ['0', '4095', '4096', '4321', '4999']) {
      expect(await show([bigPq, '--index', i, '--width', '120'])).toBe(await show([big, '--index', i, '--width', '120']));
    }
    expect(await show([bigPq, '--random', '--seed', 'abc', '--width', '120'])).toBe(rnd);
    const inst = JSON.parse(readFileSync(big, 'utf8').split('\n', 4100)[4099]!).instance_id as string;
    expect(await findInstanceRows(bigPq, inst)).toEqual(await findInstanceRows(big, inst));
    // (render time belongs in a benchmark; here only what it renders)
    const r = (await readPairAt(big, 4999))!;
    const text = renderPair(r.pair, r.index, { width: 100 });
    expect(text).toContain('pair #4999 ');
    for (const line of text.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(100);
  }, 120_000);
});
