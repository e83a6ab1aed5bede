// The JSONL line reader (src/io/jsonl-lines.ts): lines split on "\n" (one trailing "\r" dropped),
// plain and gzip, streamed; a line longer than the cap (or a gzip bomb without newlines) is a clean
// UserError (exit 5) naming the file and line, never a RangeError. The last case runs the BUILT CLI
// on a 2 MB gzip file that expands to 600 MB without a newline.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, UserError } from '../src/errors.js';
import { jsonlLineBytes, jsonlLines, linesBefore, MAX_LINE_BYTES, type LineRange } from '../src/io/jsonl-lines.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-jsonl-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;

/** A new file in the test folder holding `content` (gzipped as `*.jsonl.gz` with `gz`). */
function fileOf(content: string | Buffer, gz = false): string {
  const path = join(dir, `f${fileNo++}.jsonl${gz ? '.gz' : ''}`);
  writeFileSync(path, gz ? gzipSync(content) : content);
  return path;
}

async function lines(content: string | Buffer, gz: boolean, maxLineBytes?: number): Promise<[number, string][]> {
  const path = fileOf(content, gz);
  const out: [number, string][] = [];
  for await (const l of jsonlLines(path, maxLineBytes)) out.push(l);
  return out;
}

describe('jsonlLines splits on "\\n"', () => {
  const cases: [string, string, [number, string][]][] = [
    ['one line with its newline', '{"a":1}\n', [[1, '{"a":1}']]],
    ['no final newline', '{"a":1}\n{"b":2}', [[1, '{"a":1}'], [2, '{"b":2}']]],
    ['CRLF line ends', '{"a":1}\r\n{"b":2}\r\n', [[1, '{"a":1}'], [2, '{"b":2}']]],
    ['blank and whitespace lines are skipped but counted', '\n  \n{"a":1}\n\t\n{"b":2}\n', [[3, '{"a":1}'], [5, '{"b":2}']]],
    ['non-ASCII text', '{"s":"café ✓ \u{1F527}"}\n', [[1, '{"s":"café ✓ \u{1F527}"}']]],
    ['an empty file', '', []],
  ];
  for (const gz of [false, true]) {
    it.each(cases)(`${gz ? 'gzip' : 'plain'}: %s`, async (_name, content, want) => {
      expect(await lines(content, gz)).toStrictEqual(want);
    });
  }

  it('long lines in a row, the last without its newline, each whole (the line buffer is reused and let go)', async () => {
    const a = JSON.stringify({ s: `${'\u{1F527}'.repeat(1_300_000)}x` }); // 5.2 MB: past the kept buffer
    const b = JSON.stringify({ s: 'ab'.repeat(700_000) });
    const c = JSON.stringify({ s: 'é'.repeat(900_001) });
    expect(await lines(`${a}\n${b}\n{"k":1}\n${c}`, false)).toStrictEqual([[1, a], [2, b], [3, '{"k":1}'], [4, c]]);
    expect(await lines(`${a}\n${b}\n{"k":1}\n${c}`, true)).toStrictEqual([[1, a], [2, b], [3, '{"k":1}'], [4, c]]);
  });

  it('a line split across many read chunks (3 MB, 1 MiB chunks) comes back whole', async () => {
    const long = JSON.stringify({ s: 'é'.repeat(1_500_000) });
    expect(await lines(`{"a":1}\n${long}\n{"b":2}\n`, false)).toStrictEqual([[1, '{"a":1}'], [2, long], [3, '{"b":2}']]);
  });
});

describe('a blank line is what trim() leaves empty, decided on the bytes', () => {
  // The reference: the line as text, trim()med (JS white space: ASCII tab, LF, VT, FF, CR, space,
  // and the Unicode ones: U+00A0, U+FEFF, U+2028, U+3000 ...). ASCII 0x1C-0x1F are not white space.
  const lineCases: [string, Buffer][] = [
    ['ASCII blanks', Buffer.from(' \t\v\f\r ')],
    ['NBSP alone', Buffer.from('\u00a0')],
    ['a BOM and spaces', Buffer.from('\ufeff  ')],
    ['U+2028, U+3000 and a tab', Buffer.from('\u2028\u3000\t')],
    ['information separators (not blank)', Buffer.from('\x1c\x1d\x1e\x1f')],
    ['an invalid byte (U+FFFD, not blank)', Buffer.from([0x20, 0xff, 0x20])],
    ['a lone continuation byte', Buffer.from([0x80])],
    ['NBSP around a letter', Buffer.from('\u00a0x\u00a0')],
    ['U+0085 (not white space to trim)', Buffer.from('\u0085')],
    ['a CR only', Buffer.from('\r')],
  ];
  it.each(lineCases)('%s', async (_name, bytes) => {
    const content = Buffer.concat([Buffer.from('{"a":1}\n'), bytes, Buffer.from('\n{"b":2}\n')]);
    const text = bytes.toString('utf8').replace(/\r$/, '');
    const want: [number, string][] = [[1, '{"a":1}'], ...(text.trim() === '' ? [] : ([[2, text]] as [number, string][])), [3, '{"b":2}']];
    expect(await lines(content, false)).toStrictEqual(want);
  });

  it('jsonlLineBytes yields the bytes jsonlLines decodes, the same lines with the same numbers', async () => {
    const long = JSON.stringify({ s: 'é'.repeat(700_000) });
    const content = Buffer.concat([Buffer.from(`{"a":1}\r\n\u00a0\n${long}\n\n{"s":"`), Buffer.from([0xc3, 0x28, 0xe2, 0x82]), Buffer.from('"}')]);
    const path = fileOf(content);
    const asBytes: [number, string][] = [];
    for await (const [n, b] of jsonlLineBytes(path)) asBytes.push([n, Buffer.from(b).toString('utf8')]);
    expect(asBytes).toStrictEqual(await lines(content, false));
    expect(asBytes.map(([n]) => n)).toStrictEqual([1, 3, 5]);
  });
});

describe('byte ranges: the lines that start in each range, in range order, are the file\'s', () => {
  /** Every line of the file read in ranges of `size` bytes, numbered as the file numbers them. */
  async function tiled(path: string, bytes: number, size: number): Promise<[number, string][]> {
    const out: [number, string][] = [];
    let before = 0;
    for (let start = 0; start < bytes; start += size) {
      const range: LineRange = { start, end: Math.min(bytes, start + size) };
      expect(linesBefore(path, start)).toBe(before);
      for await (const [n, b] of jsonlLineBytes(path, MAX_LINE_BYTES, range)) out.push([before + n, Buffer.from(b).toString('utf8')]);
      before += range.tally!.lines;
    }
    return out;
  }

  const contents: [string, Buffer][] = [
    ['short lines, a final newline', Buffer.from('{"a":1}\n{"b":22}\n{"c":333}\n')],
    ['no final newline', Buffer.from('{"a":1}\n{"b":2}')],
    ['blank lines, CRLF, NBSP, non-ASCII', Buffer.from('\n\r\n{"s":"é✓"}\r\n\u00a0\n\n{"t":"\u{1F527}"}\n\n')],
    ['a file of newlines', Buffer.from('\n\n\n')],
    ['one line, no newline', Buffer.from('{"only":true}')],
  ];
  it.each(contents)('%s: every range size from 1 byte to the whole file', async (_name, content) => {
    const path = fileOf(content);
    const whole = await lines(content, false);
    for (let size = 1; size <= content.length; size++) expect(await tiled(path, content.length, size), `ranges of ${size} bytes`).toStrictEqual(whole);
  });

  it('long lines across read chunks, ranges cutting inside them (3 MB lines, 1 MiB chunks)', async () => {
    const a = JSON.stringify({ s: 'é'.repeat(1_500_000) });
    const c = JSON.stringify({ s: 'x'.repeat(2_500_000) });
    const content = Buffer.from(`${a}\n{"b":1}\n${c}\n\n{"d":2}`);
    const path = fileOf(content);
    const whole = await lines(content, false);
    for (const size of [1 << 20, 1_234_567, 3_000_003, 3_000_010, content.length - 5]) expect(await tiled(path, content.length, size), `ranges of ${size} bytes`).toStrictEqual(whole);
  });

  it('an error names the file\'s line: the line cap in a later range', async () => {
    const content = Buffer.from(`{"a":1}\n\n{"b":2}\n${'x'.repeat(100)}\n`);
    const path = fileOf(content);
    const range: LineRange = { start: 12, end: content.length };
    const read = async () => {
      for await (const _ of jsonlLineBytes(path, 50, range, (n) => linesBefore(path, 12) + n)) void _;
    };
    await expect(read()).rejects.toThrow(`${path}:4: line longer than 50 bytes (the limit)`);
  });

  it('a gzipped file has no ranges (an internal error, never a silent misread)', async () => {
    const path = fileOf('{"a":1}\n', true);
    const read = async () => {
      for await (const _ of jsonlLineBytes(path, MAX_LINE_BYTES, { start: 0, end: 4 })) void _;
    };
    await expect(read()).rejects.toThrow(/internal error: a byte range of a gzipped file/);
  });
});

describe('jsonlLines: the line cap', () => {
  const cases: [string, string, number, RegExp | null][] = [
    ['a line exactly at the cap is read', `${'x'.repeat(100)}\n`, 100, null],
    ['one byte past the cap', `{"a":1}\n${'x'.repeat(101)}\n`, 100, /:2: line longer than 100 bytes \(the limit\)$/],
    ['past the cap without a newline at the end', 'x'.repeat(5000), 100, /:1: line longer than 100 bytes \(the limit\)$/],
  ];
  for (const gz of [false, true]) {
    it.each(cases)(`${gz ? 'gzip' : 'plain'}: %s`, async (_name, content, cap, error) => {
      const read = lines(content, gz, cap);
      if (!error) return expect((await read).length).toBe(1);
      const e = await read.catch((x: unknown) => x);
      expect(e).toBeInstanceOf(UserError);
      expect((e as UserError).exitCode).toBe(ExitCode.corrupt);
      expect((e as UserError).message).toMatch(error);
    });
  }

  it('broken gzip is a UserError naming the file', async () => {
    const path = join(dir, 'broken.jsonl.gz');
    writeFileSync(path, gzipSync('{"a":1}\n'.repeat(1000)).subarray(0, 40));
    const e = await (async () => {
      for await (const _ of jsonlLines(path)) void _;
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).message).toMatch(/broken\.jsonl\.gz: cannot read: /);
  });
});

describe('a gzip bomb without newlines (built CLI)', () => {
  it('exit 5 with one line naming the file and line; no output', () => {
    const ROOT = fileURLToPath(new URL('..', import.meta.url));
    const bomb = join(dir, 'bomb.jsonl.gz');
    // 600 MB of "x" (past MAX_LINE_BYTES), built in 1 MB pieces so the test itself stays small.
    const piece = gzipSync(Buffer.alloc(1_000_000, 'x'));
    writeFileSync(bomb, Buffer.concat(Array.from({ length: Math.ceil(MAX_LINE_BYTES / 1_000_000) + 88 }, () => piece)));
    const out = join(dir, 'bomb-out.jsonl');
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), 'mine', '--jsonl', bomb, '--out', out, '--workers', '1', '-q'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(5);
    expect(r.stderr.trim()).toMatch(/^divergence-mine: error: .*bomb\.jsonl\.gz:1: line longer than 512,000,000 bytes \(the limit\)$/);
    expect(readdirSync(dir).filter((f) => f.startsWith('bomb-out'))).toEqual([]);
  }, 120_000);
});
