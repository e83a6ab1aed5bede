// Folders the run cannot write in: a TMPDIR that is missing, a file, or refuses new entries is one
// line and exit 3 (the spill folder cannot be made: `mine` is the command with temporary files in
// TMPDIR); an output folder that refuses the temporary output is one line and exit 3 too, for every
// command that writes a file (a folder the run must write in, whichever it is). Nothing is left behind. /sys is the folder that refuses: sysfs makes
// no files or folders on request, for root too (tests run as root in CI). Runs the BUILT CLI on
// fixtures/forks.parquet (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './support/robust-fixtures.mjs';

const INPUT = join(ROOT, 'fixtures', 'forks.parquet');
const PAIRS = join(ROOT, 'test', 'data', 'pairs.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'dm-temp-folders-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** /sys refuses new entries on this system (Linux sysfs); elsewhere those cases are skipped. */
const refusing = (() => {
  try {
    mkdtempSync('/sys/dm-probe-');
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ? '/sys' : null;
  }
})();

/** Two partitions of the input with their stats (part-K.jsonl, part-K.stats.json), mined once. */
let parts: string[] | null = null;
function partitions(): string[] {
  if (parts) return parts;
  parts = [0, 1].map((k) => join(dir, `part-${k}.jsonl`));
  parts.forEach((out, k) => {
    const r = run(['mine', INPUT, '--partition', `${k}/2`, '--out', out, '--stats', out.replace(/\.jsonl$/, '.stats.json'), '-q']);
    expect(r.code, r.stderr).toBe(0);
  });
  return parts;
}

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stderr: r.stderr };
}

function expectOneLine(r: { code: number | null; stderr: string }, code: number, line: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(r.stderr.trim()).toMatch(line);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
}

describe('TMPDIR that cannot take the spill folder: exit 3', () => {
  const cases: [string, () => string, RegExp][] = [
    ['missing', () => join(dir, 'no-such-folder'), /no-such-folder: cannot make the temporary spill folder in the system temp folder \(ENOENT: no such folder\); set TMPDIR to a writable folder$/],
    [
      'a file',
      () => {
        writeFileSync(join(dir, 'a-file'), 'x');
        return join(dir, 'a-file');
      },
      /a-file: cannot make the temporary spill folder .*\(ENOTDIR: not a folder\)/,
    ],
  ];
  if (refusing) cases.push(['refusing new folders', () => refusing, /^divergence-mine: error: \/sys: cannot make the temporary spill folder .*\((EPERM|EACCES|EROFS)/]);
  it.each(cases)('%s', (_name, tmp, line) => {
    const work = join(dir, `tmp-${_name.replace(/\W+/g, '-')}`);
    mkdirSync(work);
    const r = run(['mine', INPUT, '--out', join(work, 'pairs.jsonl'), '--stats', join(work, 'stats.json'), '-q'], { TMPDIR: tmp() });
    expectOneLine(r, 3, line);
    expect(readdirSync(work)).toStrictEqual([]);
  });
});

describe.skipIf(!refusing)('an output folder that refuses the temporary output: exit 3', () => {
  it.each([
    ['mine --out', () => ['mine', INPUT, '--out', '/sys/pairs.jsonl', '-q'], /^divergence-mine: error: \/sys\/pairs\.jsonl: cannot write in the folder \/sys \((EACCES|EPERM|EROFS)/],
    ['mine --out parquet', () => ['mine', INPUT, '--out', '/sys/pairs.parquet', '-q'], /\/sys\/pairs\.parquet: cannot write in the folder \/sys/],
    ['mine --stats', () => ['mine', INPUT, '--out', join(dir, 'ok.jsonl'), '--force', '--stats', '/sys/stats.json', '-q'], /\/sys\/stats\.json: cannot write in the folder \/sys/],
    ['report -o', () => ['report', PAIRS, '-o', '/sys/report.html', '-q'], /\/sys\/report\.html: cannot write in the folder \/sys/],
    ['merge --out', () => ['merge', ...partitions(), '--out', '/sys/merged.jsonl', '-q'], /\/sys\/merged\.jsonl: cannot write in the folder \/sys/],
  ])('%s', (_name, args, line) => {
    const r = run(args());
    expectOneLine(r, 3, line);
    expect(readdirSync('/sys').filter((n) => n.includes('divergence-mine'))).toStrictEqual([]);
  });

  it('the spill folder of the failed run is gone too', () => {
    const tmp = join(dir, 'spill-check');
    mkdirSync(tmp);
    expectOneLine(run(['mine', INPUT, '--out', '/sys/pairs.jsonl', '-q'], { TMPDIR: tmp }), 3, /cannot write in the folder \/sys/);
    expect(readdirSync(tmp)).toStrictEqual([]);
    expect(existsSync('/sys/pairs.jsonl')).toBe(false);
  });
});
