// io/atomic.ts: outputs committed together (holdCommits .. commitHeld), and folders tracked before
// they are made (makeFolders). In this process, not supervised: only the files on disk tell.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { commitHeld, commitTemp, holdCommits, keepMadeFolders, makeFolders, openTempFor, releaseHeld, removeAllTemp, removeStale, trackTemp, writtenPath } from '../src/io/atomic.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-hold-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => releaseHeld());

let n = 0;
function fresh(): string {
  const d = join(dir, `case-${n++}`);
  mkdirSync(d);
  return d;
}

/** A finished temporary file of output `path` holding `text`. */
function finished(path: string, text: string): string {
  const { tmp } = openTempFor(path);
  writeFileSync(tmp, text);
  return tmp;
}

describe('held commits', () => {
  it('nothing is in place before commitHeld; then every output is, and the stale file is gone', () => {
    const d = fresh();
    writeFileSync(join(d, 'train-00002-of-00003.jsonl'), 'old');
    holdCommits();
    const a = finished(join(d, 'pairs.jsonl'), 'A');
    commitTemp(a, join(d, 'pairs.jsonl'));
    removeStale(join(d, 'train-00002-of-00003.jsonl'));
    const b = finished(join(d, 'stats.json'), 'B');
    commitTemp(b, join(d, 'stats.json'));
    expect(existsSync(join(d, 'pairs.jsonl'))).toBe(false);
    expect(writtenPath(join(d, 'pairs.jsonl'))).toBe(a);
    expect(readFileSync(writtenPath(join(d, 'stats.json')), 'utf8')).toBe('B');
    expect(existsSync(join(d, 'train-00002-of-00003.jsonl'))).toBe(true);
    commitHeld();
    expect(readdirSync(d).sort()).toStrictEqual(['pairs.jsonl', 'stats.json']);
    expect(writtenPath(join(d, 'pairs.jsonl'))).toBe(join(d, 'pairs.jsonl'));
  });

  it('a run that fails while holding: its finished outputs are removed, the old files stay', () => {
    const d = fresh();
    writeFileSync(join(d, 'train-00002-of-00003.jsonl'), 'old');
    holdCommits();
    const a = finished(join(d, 'pairs.jsonl'), 'A');
    commitTemp(a, join(d, 'pairs.jsonl'));
    removeStale(join(d, 'train-00002-of-00003.jsonl'));
    releaseHeld();
    expect(readdirSync(d)).toStrictEqual(['train-00002-of-00003.jsonl']);
    // Not holding any more: the next commit is at once.
    const b = finished(join(d, 'x.json'), 'B');
    commitTemp(b, join(d, 'x.json'));
    expect(readFileSync(join(d, 'x.json'), 'utf8')).toBe('B');
  });

  it('a spool (a destination that is itself a temporary path of the run) moves at once', () => {
    const d = fresh();
    const spool = join(d, `.train.spool-${process.pid}.jsonl`);
    trackTemp(spool); // as FolderOutput tracks its spools
    holdCommits();
    const t = finished(spool, 'S');
    commitTemp(t, spool);
    expect(readFileSync(spool, 'utf8')).toBe('S');
    removeAllTemp(); // and it stays a temporary path of the run
    expect(readdirSync(d)).toStrictEqual([]);
  });
});

describe('makeFolders', () => {
  it.each([
    ['one missing folder', ['a'], 'a'],
    ['three missing folders', ['a', 'b', 'c'], 'a'],
  ])('%s: made, the topmost returned; removeAllTemp removes them again', (_name, parts, top) => {
    const d = fresh();
    const leaf = join(d, ...parts);
    expect(makeFolders(leaf, (e) => e as Error)).toBe(join(d, top));
    expect(existsSync(leaf)).toBe(true);
    removeAllTemp();
    expect(readdirSync(d)).toStrictEqual([]);
  });

  it('an existing folder: undefined, nothing tracked', () => {
    const d = fresh();
    expect(makeFolders(d, (e) => e as Error)).toBeUndefined();
    removeAllTemp();
    expect(existsSync(d)).toBe(true);
  });

  it('kept folders stay through removeAllTemp; kept while holding, only once the commits are made', () => {
    const d = fresh();
    makeFolders(join(d, 'kept'), (e) => e as Error);
    keepMadeFolders(join(d, 'kept'));
    holdCommits();
    makeFolders(join(d, 'held'), (e) => e as Error);
    keepMadeFolders(join(d, 'held'));
    releaseHeld(); // the run failed: the held keep never happened
    removeAllTemp();
    expect(readdirSync(d)).toStrictEqual(['kept']);
  });

  it('a folder that cannot be made (under a file): the error, and nothing left tracked or made', () => {
    const d = fresh();
    writeFileSync(join(d, 'file'), '');
    expect(() => makeFolders(join(d, 'file', 'x', 'y'), () => new Error('cannot'))).toThrow('cannot');
    removeAllTemp();
    expect(readdirSync(d)).toStrictEqual(['file']);
  });
});
