// Terminal injection: strings from the data (ids, repos, column names, file names, message
// contents) carry control sequences that a terminal obeys: OSC 0 retitles it, CSI 2 J clears it,
// OSC 52 writes the clipboard, OSC 8 makes a link whose target is not its text, C1 U+009B is a CSI
// without ESC, bidi overrides reorder what is shown, CR and BS overwrite what was printed. Every such
// string reaching stdout or stderr goes through io/terminal-text.ts `neutralise`: each command is run
// on hostile data, on a pipe and on a pseudo-terminal (util-linux `script`), and the bytes that come
// out may hold no control character but our own (SGR colours, the progress line's CR + EL), while
// the neutralised text (␛]0;pwned␇ ...) shows the hostile values did reach the terminal. Data
// outputs keep their bytes: a JSONL file, `--out -` and a parquet file hold the values exactly.
//
// Rows: fixtures/forks.jsonl (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0,
// © Nebius) with hostile instance_id, repo and trajectory_id. Runs the BUILT CLI.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { neutralise } from '../src/io/terminal-text.js';
import { readPairs } from '../src/io/pairs.js';
import { BIN, ROOT } from './support/robust-fixtures.mjs';

const ESC = '\x1b';
const BEL = '\x07';
/** One of each: OSC 0 title, CSI 2 J clear, OSC 52 clipboard, OSC 8 link, C1 CSI, RLO ... PDF, CR, BS, LF. */
const HOSTILE = [
  `${ESC}]0;pwned${BEL}`,
  `${ESC}[2J`,
  `${ESC}]52;c;cHduZWQ=${BEL}`,
  `${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`,
  '\u009b31m',
  '\u202eevil\u202c',
  'over\rwrite\b',
  'line\nbreak',
].join(' ');

const dir = mkdtempSync(join(tmpdir(), 'dm-terminal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const p = (name: string) => join(dir, name);

describe('neutralise', () => {
  it.each([
    ['plain text', 'django__django-11099 (django/django)', false, 'django__django-11099 (django/django)'],
    ['wide and combining characters', '日本語 e\u0301 🎉', false, '日本語 e\u0301 🎉'],
    ['OSC 0 title', `${ESC}]0;pwned${BEL}`, false, '␛]0;pwned␇'],
    ['CSI 2 J', `${ESC}[2J`, false, '␛[2J'],
    ['OSC 52 clipboard', `${ESC}]52;c;eA==${BEL}`, false, '␛]52;c;eA==␇'],
    ['OSC 8 link with ST', `${ESC}]8;;http://x/${ESC}\\t${ESC}]8;;${ESC}\\`, false, '␛]8;;http://x/␛\\t␛]8;;␛\\'],
    ['C1 CSI', '\u009b2J', false, '\ufffd2J'],
    ['every C1 control', String.fromCharCode(...Array.from({ length: 32 }, (_, k) => 0x80 + k)), false, '\ufffd'.repeat(32)],
    ['bidi overrides and isolates', '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069', false, '\ufffd'.repeat(9)],
    ['bidi marks are letters-like, kept', 'a\u200eb\u200fc', false, 'a\u200eb\u200fc'],
    ['NUL, BS, CR, DEL', '\0\b\r\x7f', false, '␀␈␍␡'],
    ['TAB kept', 'a\tb', false, 'a\tb'],
    ['LF on one line', 'a\nb', false, 'a␊b'],
    ['LF in multi-line text', 'a\nb\r\n', true, 'a\nb␍\n'],
  ])('%s', (_name, text, lines, want) => {
    expect(neutralise(text, lines)).toBe(want);
    expect(neutralise(want, lines)).toBe(want); // idempotent
  });
});

/** Every byte sequence a terminal would act on, other than ours (SGR colours, EL) and, on a tty, CR. */
function injected(bytes: Buffer, tty: boolean): string[] {
  const s = bytes.toString('utf8');
  const bad: string[] = [];
  for (const m of s.matchAll(/\x1b(?!\[[0-9;]*[mK])|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g)) bad.push(JSON.stringify(s.slice(m.index, m.index + 12)));
  if (!tty) for (const m of s.matchAll(/\r/g)) bad.push(JSON.stringify(s.slice(m.index, m.index + 12)));
  return bad;
}

interface Out {
  code: number | null;
  /** stdout and stderr (on a tty they are one stream) */
  bytes: Buffer;
  stdout: Buffer;
}

/** Run the CLI on pipes. */
function onPipe(args: string[], env: Record<string, string> = {}): Out {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 1 << 26 });
  return { code: r.status, bytes: Buffer.concat([r.stdout, r.stderr]), stdout: r.stdout };
}

/** Run the CLI on a pseudo-terminal (stdin, stdout and stderr), as a person at a terminal would. */
function onTty(args: string[], env: Record<string, string> = {}): Out {
  // Arguments go through the environment, so that no hostile byte meets a shell's parser.
  const argEnv = Object.fromEntries(args.map((a, k) => [`DM_ARG_${k}`, a]));
  const cmd = [process.execPath, BIN].map((x) => `'${x}'`).concat(args.map((_, k) => `"$DM_ARG_${k}"`)).join(' ');
  const r = spawnSync('script', ['-qfec', cmd, '/dev/null'], {
    cwd: dir,
    env: { ...process.env, ...env, ...argEnv, TERM: 'xterm-256color', COLUMNS: '120' },
    timeout: 120_000,
    maxBuffer: 1 << 26,
  });
  return { code: r.status, bytes: r.stdout, stdout: r.stdout };
}

const haveScript = spawnSync('script', ['-qfec', 'true', '/dev/null']).status === 0;

let rows: Record<string, unknown>[] = [];

beforeAll(() => {
  rows = readFileSync(join(ROOT, 'fixtures', 'forks.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .map((r) => ({ ...r, instance_id: `${r.instance_id} ${HOSTILE}`, repo: `${HOSTILE} ${r.repo}`, trajectory_id: `${r.trajectory_id}${HOSTILE}` }));
  writeFileSync(p('hostile.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  // A row whose keys are all unknown: the schema error lists the columns found, hostile names included.
  writeFileSync(p('columns.jsonl'), JSON.stringify({ [`id${HOSTILE}`]: 'x', trajectory: [] }) + '\n');
  // A file named with control characters, not JSON: the error names the file.
  writeFileSync(p(`named ${ESC}]0;pwned${BEL}.jsonl`), '{"broken\n');
  // Lines check-template reports: a row of the wrong shape with a hostile id, and a line that is not JSON.
  writeFileSync(p('check.jsonl'), `${JSON.stringify({ instance_id: HOSTILE, prompt: 5 })}\n${HOSTILE.replace('\n', ' ')} {\n`);
  const mined = onPipe(['mine', '--jsonl', p('hostile.jsonl'), '--out', p('pairs.jsonl'), '-q']);
  expect(mined.code, mined.bytes.toString()).toBe(0);
}, 120_000);

// [what, args, expected exit code, a neutralised value that must show]
const COMMANDS: [string, () => string[], number, string][] = [
  // Nothing of the data is quoted here: the live progress line and the table, through the supervisor.
  ['mine on hostile rows: detection line, progress, counters table', () => ['mine', '--jsonl', p('hostile.jsonl'), '--out', p('again.jsonl'), '--force'], 0, 'trajectories_read'],
  ['mine: a schema error listing hostile column names', () => ['mine', '--jsonl', p('columns.jsonl'), '--out', p('x.jsonl')], 6, 'id␛]0;pwned␇'],
  ['mine: an error naming a file found by a glob', () => ['mine', join(dir, 'named*.jsonl'), '--out', p('x.jsonl')], 5, 'named ␛]0;pwned␇.jsonl'],
  ['mine: commander quoting an option value', () => ['mine', '--jsonl', p('hostile.jsonl'), '--out', p('x.jsonl'), '--max-per-side', HOSTILE], 2, '␛]0;pwned␇'],
  ['show: header ids and repo', () => ['show', p('pairs.jsonl'), '--index', '1'], 0, '␛]0;pwned␇'],
  ['show --color always', () => ['show', p('pairs.jsonl'), '--color', 'always', '--full'], 0, '␛]52;c;cHduZWQ=␇'],
  ['show: an instance that is not there, quoted in the error', () => ['show', p('pairs.jsonl'), '--instance', HOSTILE], 2, 'no pair for instance ␛]0;pwned␇'],
  ['report: its console line', () => ['report', p('pairs.jsonl'), '-o', p(`report ${ESC}[2J.html`), '--force'], 0, 'report ␛[2J.html'],
  ['check-template: problem lines quoting ids and values', () => ['check-template', p('check.jsonl'), '--template', 'qwen3-coder-style'], 9, '(␛]0;pwned␇'],
  ['merge: an error naming a file', () => ['merge', p(`nope ${ESC}[2J.jsonl`), '--out', p('m.jsonl')], 3, 'nope ␛[2J.jsonl'],
];

describe.each([
  ['a pipe', onPipe, false],
  ['a terminal', onTty, true],
] as const)('on %s, every command prints hostile values inert', (_where, run, tty) => {
  it.skipIf(tty && !haveScript)
    .each(COMMANDS)('%s', (_name, args, code, shown) => {
      const r = run(args());
      expect(r.code, r.bytes.toString()).toBe(code);
      expect(injected(r.bytes, tty)).toStrictEqual([]);
      expect(r.bytes.toString('utf8')).toContain(shown);
      if (tty && args()[0] === 'mine' && code === 0) expect(r.bytes.toString('utf8')).toContain('\r\x1b[2Kdecode: ['); // the live progress line
      if (tty && args()[0] === 'show' && code === 0) expect(r.bytes.toString('utf8')).toMatch(/\x1b\[[0-9;]*m/); // colour on a terminal
    });
});

describe('data outputs keep the bytes', () => {
  it('the JSONL file and `--out -` hold the hostile values exactly; so does parquet', async () => {
    const ids = new Set(rows.map((r) => r.instance_id));
    const fromFile = readFileSync(p('pairs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { instance_id: string; repo: string; chosen_trajectory_id: string });
    expect(fromFile.length).toBeGreaterThan(0);
    for (const r of fromFile) {
      expect(ids.has(r.instance_id)).toBe(true);
      expect(r.repo.startsWith(HOSTILE)).toBe(true);
      expect(r.chosen_trajectory_id.endsWith(HOSTILE)).toBe(true);
    }
    const stdout = onPipe(['mine', '--jsonl', p('hostile.jsonl'), '--out', '-', '-q']).stdout;
    expect(stdout.equals(readFileSync(p('pairs.jsonl')))).toBe(true);
    // JSON escapes C0 but not C1 or bidi: those bytes are in the data as they were.
    expect(stdout.includes(Buffer.from('\u009b31m \u202eevil\u202c'))).toBe(true);

    mkdirSync(p('pq'), { recursive: true });
    expect(onPipe(['mine', '--jsonl', p('hostile.jsonl'), '--out', p('pq/pairs.parquet'), '-q']).code).toBe(0);
    const back: string[] = [];
    for await (const r of readPairs(p('pq/pairs.parquet'))) back.push(r.pair.instance_id);
    expect(back).toStrictEqual(fromFile.map((r) => r.instance_id));
  }, 120_000);
});
