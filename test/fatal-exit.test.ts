// A death no JS survives: a real V8 fatal error in a decode worker or in the main thread kills the
// CLI process at once (SIGTRAP, what a shell reports as exit 133). The supervisor of
// bin/divergence-mine (src/supervisor.ts) outlives it: exit 1, exactly one internal-error line on
// stderr (no V8 report, no native stack), and every temporary output, spill folder and folder the run
// made removed, whatever the outputs (--stats, --card, --split folders, parquet). The fatal errors are
// forced by test/support/fatal-preload.mjs (V8's %AbortJS, and once the real "Fatal JavaScript
// invalid size error" of an array grown past V8's limit) at the first decode task, when the run's
// temporary files exist; the preload records them, so each case knows there was something to remove.
// Also the supervisor's parts: its manifest, the fatal line it extracts, its one line per death.
//
// Input: fixtures/forks.parquet, real rows of nebius/SWE-rebench-openhands-trajectories (CC-BY-4.0,
// © Nebius). Runs the BUILT CLI (`npm test` builds first).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Manifest, deathLine, fatalReason } from '../src/supervisor.js';
import { decodeEntry, encodeEntry, type ManifestEntry } from '../src/io/supervision.js';
import { ROOT, runCli } from './support/robust-fixtures.mjs';

const INPUT = join(ROOT, 'fixtures', 'forks.parquet');
const PRELOAD = join(ROOT, 'test', 'support', 'fatal-preload.mjs');
const dir = mkdtempSync(join(tmpdir(), 'dm-fatal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ONE_LINE = /^divergence-mine: internal error \(a bug, please report it\): the process died \(SIGTRAP: (.+)\); temporary files removed, no output written\n$/;

interface Case {
  name: string;
  mode: 'worker-abort' | 'worker-size' | 'main-abort' | 'mkdir-abort';
  /** mkdir-abort: the folder whose making is the moment of death. */
  mkdir?: string;
  /** The spill folder existed at the moment of death (false: the output's folders come first). */
  spillAtDeath?: boolean;
  /** Arguments after `mine INPUT`, with OUT for the case's output folder. */
  args: string[];
  /** What the output folder holds before the run (a folder --split must not remove). */
  before?: string[];
  /** The fatal line's text. */
  reason: RegExp;
  timeoutMs?: number;
}

const ABORT = /^abort: forced by test\/support\/fatal-preload\.mjs$/;
const cases: Case[] = [
  { name: 'a worker aborts: JSONL output, --stats and --card', mode: 'worker-abort', args: ['--out', 'OUT/pairs.jsonl', '--stats', 'OUT/stats/s.json', '--card', 'OUT/card/README.md'], reason: ABORT },
  { name: 'a worker aborts: parquet output', mode: 'worker-abort', args: ['--out', 'OUT/pairs.parquet'], reason: ABORT },
  { name: 'a worker aborts: --split into folders the run made', mode: 'worker-abort', args: ['--shape', 'trl', '--split', 'dev=0.5', '--out', 'OUT/made/data', '--stats', 'OUT/made/stats.json'], reason: ABORT },
  { name: 'a worker aborts: --split --shards into an existing folder', mode: 'worker-abort', args: ['--shape', 'trl', '--split', 'dev=0.5', '--shards', '2', '--out', 'OUT/kept'], before: ['kept'], reason: ABORT },
  { name: 'the main thread aborts', mode: 'main-abort', args: ['--out', 'OUT/pairs.jsonl', '--stats', 'OUT/s.json'], reason: ABORT },
  // Folders are on the manifest before they exist: a death the moment one is made leaves nothing.
  { name: 'the main thread aborts as its spill folder is made', mode: 'mkdir-abort', mkdir: String.raw`[\/]divergence-mine-\d+-[A-Za-z0-9]{6}$`, args: ['--out', 'OUT/pairs.jsonl'], reason: ABORT },
  { name: 'the main thread aborts as it makes the --split output folders', mode: 'mkdir-abort', mkdir: String.raw`[\/]made[\/]data$`, args: ['--shape', 'trl', '--split', 'dev=0.5', '--out', 'OUT/made/data'], spillAtDeath: false, reason: ABORT },
  { name: 'the main thread aborts as it makes the --stats folders', mode: 'mkdir-abort', mkdir: String.raw`[\/]made[\/]stats$`, args: ['--out', 'OUT/pairs.jsonl', '--stats', 'OUT/made/stats/s.json'], spillAtDeath: false, reason: ABORT },
  {
    // What issue-sized input really did: a worker's array past V8's limit (about 7 s and 2.5 GB).
    name: 'a worker hits V8\'s "Fatal JavaScript invalid size error"',
    mode: 'worker-size',
    args: ['--out', 'OUT/pairs.jsonl', '--stats', 'OUT/s.json'],
    reason: /^Fatal JavaScript invalid size error \d+/,
    timeoutMs: 120_000,
  },
];

/** Every entry below `d`, as relative paths. */
function tree(d: string): string[] {
  return readdirSync(d, { recursive: true }).map(String).sort();
}

describe('a V8 fatal error: exit 1, one line, nothing left behind', () => {
  it.each(cases.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const work = join(dir, `case-${i}`);
    const out = join(work, 'out');
    const tmp = join(work, 'tmp');
    mkdirSync(out, { recursive: true });
    mkdirSync(tmp);
    for (const b of c.before ?? []) mkdirSync(join(out, b));
    const seen = join(work, 'seen.json');
    const r = await runCli(['mine', INPUT, ...c.args.map((a) => a.replace('OUT', out)), '--workers', '1', '-q'], {
      timeoutMs: c.timeoutMs ?? 60_000,
      env: {
        TMPDIR: tmp,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim(),
        DM_FATAL: c.mode,
        DM_FATAL_MKDIR: c.mkdir ?? '',
        DM_FATAL_SEEN: seen,
        DM_FATAL_WATCH: [tmp, out, ...(c.before ?? []).map((b) => join(out, b))].join('\n'),
      },
    });
    expect(r.timedOut).toBe(false);
    expect({ code: r.code, signal: r.signal }).toStrictEqual({ code: 1, signal: null });
    expect(r.stderr).toMatch(ONE_LINE);
    expect(ONE_LINE.exec(r.stderr)![1]).toMatch(c.reason);
    // At the moment of death there was a spill folder and a temporary output (or a split file) to remove.
    const atDeath = JSON.parse(readFileSync(seen, 'utf8')) as Record<string, string[]>;
    if (c.spillAtDeath === false) expect(atDeath[tmp]).toStrictEqual([]);
    else {
      expect(atDeath[tmp]).toHaveLength(1);
      expect(atDeath[tmp]![0]).toMatch(/^divergence-mine-\d+-[A-Za-z0-9]{6}$/);
    }
    const outputsAtDeath = Object.entries(atDeath).filter(([d]) => d !== tmp).flatMap(([, names]) => names);
    expect(outputsAtDeath.some((n) => /\.divergence-mine\.tmp-\d+$|^made$/.test(n))).toBe(true);
    // And now nothing: no output, no temporary file, no spill folder, no folder the run made.
    expect(tree(out)).toStrictEqual([...(c.before ?? [])].sort());
    expect(readdirSync(tmp)).toStrictEqual([]);
  }, 150_000);
});

describe('the manifest of temporary paths', () => {
  const entries: ManifestEntry[] = [
    { op: 'temp', path: '/o/.pairs.jsonl.divergence-mine.tmp-7' },
    { op: 'folders', path: '/o/a/b', top: '/o/a' },
    { op: 'drop', path: '/o/.pairs.jsonl.divergence-mine.tmp-7' },
    { op: 'temp', path: '/o/line\nbreak and "quotes"' },
  ];
  it.each(entries.map((e) => [e.op, e] as const))('%s round-trips as one line', (_op, e) => {
    const line = encodeEntry(e);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(decodeEntry(line.slice(0, -1))).toStrictEqual(e);
  });

  it.each([
    ['a torn line', '["temp","/o/x'],
    ['not JSON', 'temp /o/x'],
    ['an unknown op', '["move","/a"]'],
    ['an empty path', '["temp",""]'],
    ['folders without a top', '["folders","/a"]'],
    ['a number', '["temp",5]'],
  ])('%s is ignored', (_name, line) => {
    expect(decodeEntry(line)).toBeNull();
  });

  it('keeps what is not dropped, across chunk boundaries', () => {
    const m = new Manifest();
    const text = entries.map(encodeEntry).join('');
    // Fed in 3-byte pieces: lines split anywhere.
    for (let k = 0; k < text.length; k += 3) m.add(text.slice(k, k + 3));
    expect(m.pending()).toStrictEqual([entries[1], entries[3]]);
  });

  it('removes temporary paths, then made folders while empty', async () => {
    const root = join(dir, 'manifest');
    const made = join(root, 'made', 'deeper');
    mkdirSync(made, { recursive: true });
    mkdirSync(join(root, 'spill', 'inner'), { recursive: true });
    const m = new Manifest();
    m.add(
      [
        encodeEntry({ op: 'folders', path: made, top: join(root, 'made') }),
        encodeEntry({ op: 'temp', path: join(root, 'spill') }),
        encodeEntry({ op: 'temp', path: join(made, '.x.divergence-mine.tmp-1') }),
      ].join(''),
    );
    // The temporary file inside the made folder does not exist yet: removing it is no error.
    await m.removeAll();
    expect(readdirSync(root)).toStrictEqual([]);
    expect(m.pending()).toStrictEqual([]);
  });
});

describe('the one line of a death', () => {
  // Reports as V8 and Node print them (the first lines; native stacks follow).
  const V8_SIZE = '\n\n#\n# Fatal error in , line 0\n# Fatal JavaScript invalid size error 169220804 (see crbug.com/1201626)\n#\n#\n#\n#FailureMessage Object: 0x7ffd\n----- Native stack trace -----\n\n 1: 0xd32b41  [node]\n';
  const HEAP = '\n<--- Last few GCs --->\n\n[1:0x1]  120 ms: Mark-Compact 20.1 (24.3) -> 19.9 (24.3) MB\n\n<--- JS stacktrace --->\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n----- Native stack trace -----\n';
  const ABORTJS = 'abort: forced\n\n==== JS stack trace =========================================\n';
  const HOSTILE = '# Fatal JavaScript invalid size error \x1b]0;pwned\x07\n';
  it.each([
    ['V8 invalid size', V8_SIZE, 'Fatal JavaScript invalid size error 169220804 (see crbug.com/1201626)'],
    ['heap out of memory', HEAP, 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory'],
    ['%AbortJS', ABORTJS, 'abort: forced'],
    ['control characters neutralised', HOSTILE, 'Fatal JavaScript invalid size error ␛]0;pwned␇'],
    ['nothing recognisable', 'Segmentation fault\n', null],
    ['nothing at all', '', null],
  ])('fatalReason: %s', (_name, text, want) => {
    expect(fatalReason(text)).toBe(want);
  });

  it.each([
    ['SIGTRAP', V8_SIZE, 1, /^divergence-mine: internal error \(a bug, please report it\): the process died \(SIGTRAP: Fatal JavaScript invalid size error 169220804 \(see crbug\.com\/1201626\)\); temporary files removed, no output written\n$/],
    ['SIGABRT', HEAP, 1, /\(SIGABRT: FATAL ERROR: Reached heap limit/],
    ['SIGSEGV', '', 1, /the process died \(SIGSEGV\); temporary files removed/],
    ['SIGKILL', '', 1, /the process was killed \(SIGKILL; the kernel's OOM killer sends it when memory runs out\)/],
    ['SIGINT', '', 130, /^\ndivergence-mine: interrupted \(SIGINT\); no output written\n$/],
    ['SIGTERM', '', 143, /^\ndivergence-mine: interrupted \(SIGTERM\); no output written\n$/],
    ['SIGHUP', '', 129, /^\ndivergence-mine: interrupted \(SIGHUP\); no output written\n$/],
  ] as const)('deathLine(%s)', (signal, text, code, line) => {
    const d = deathLine(signal, text);
    expect(d.code).toBe(code);
    expect(d.line).toMatch(line);
    expect(d.line.trim().split('\n')).toHaveLength(1);
  });
});
