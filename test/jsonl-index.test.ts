// The index pass over JSONL (src/engine/jsonl-index.ts) reads each line as Latin-1 first, for speed;
// what it returns, and every error it throws, must be what the line's UTF-8 text gives. The reference
// here is that reading, written out plainly: split on "\n", decode as UTF-8, JSON.parse, take the
// mapped columns. Compared on a table of lines that put non-ASCII bytes (valid, invalid, escaped)
// in every place that matters, and on seeded random damage to a real row's line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { holdsBeyondAscii, indexJsonl } from '../src/engine/jsonl-index.js';
import { UserError } from '../src/errors.js';
import type { ColumnMapping } from '../src/sources/schema.js';
import { mulberry32 } from './support/prng.mjs';

const dir = mkdtempSync(join(tmpdir(), 'dm-jsonl-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;

const CONTRACT: ColumnMapping = { id: 'trajectory_id', instance: 'instance_id', messages: 'trajectory', resolved: 'resolved', tools: 'tools', repo: null };
const SWE_GYM: ColumnMapping = { id: ['run_id', 'instance_id'], instance: 'instance_id', messages: 'messages', resolved: 'resolved', tools: null, repo: 'repo' };
const WITHIN: ColumnMapping = { ...CONTRACT, pairWithin: [{ name: 'metadata.model', column: 'metadata', path: ['model'] }, { name: 'scaffold', column: 'scaffold', path: [] }] };

type Outcome = { ok: unknown } | { error: string; exitCode: number };

async function ours(content: Buffer, mapping: ColumnMapping, contractLayout = true): Promise<Outcome> {
  const path = join(dir, `f${fileNo++}.jsonl`);
  writeFileSync(path, content);
  try {
    return { ok: await indexJsonl(path, mapping, contractLayout) };
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return { error: e.message.replace(path, 'F'), exitCode: e.exitCode };
  }
}

/** The same pass read as UTF-8 text only (what the code did before it read Latin-1 first). */
async function reference(content: Buffer, mapping: ColumnMapping, contractLayout = true): Promise<Outcome> {
  const path = join(dir, `f${fileNo++}.jsonl`);
  writeFileSync(path, content);
  const { parseJsonLine } = await import('../src/io/jsonl-lines.js');
  const { mappedColumns, trajectoryIdOf } = await import('../src/sources/schema.js');
  const { pairWithinKey } = await import('../src/sources/identity.js');
  const res = { ids: [] as unknown[], instances: [] as unknown[], repos: [] as unknown[], resolved: [] as unknown[], lines: [] as number[], offsets: [] as number[], lengths: [] as number[] } as Record<string, unknown[]>;
  const repoKey = mapping.repo ?? (contractLayout ? 'repo' : null);
  // Each line's bytes and offset (the index pass also gives these, for the decode pass to read).
  const raw: { bytes: Buffer; offset: number }[] = [];
  for (let at = 0; at <= content.length; ) {
    const nl = content.indexOf(10, at);
    const end = nl === -1 ? content.length : nl;
    raw.push({ bytes: content.subarray(at, end), offset: at });
    at = end + 1;
  }
  try {
    raw.forEach(({ bytes, offset }, k) => {
      const l = bytes.toString('utf8');
      const text = l.endsWith('\r') ? l.slice(0, -1) : l;
      if (text.trim() === '' || (k === raw.length - 1 && l === '')) return;
      const line = k + 1;
      res.offsets!.push(offset);
      res.lengths!.push(bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length);
      const o = parseJsonLine(path, line, text);
      const missing = mappedColumns(mapping).filter((c) => c !== mapping.tools && c !== mapping.repo && !(c in o));
      if (missing.length > 0) throw new UserError(`${path}:${line}: missing required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (found: ${Object.keys(o).join(', ') || 'none'})`, 6);
      res.ids!.push(trajectoryIdOf(o, mapping.id));
      res.instances!.push(mapping.instance !== null ? o[mapping.instance] : null);
      res.repos!.push(repoKey ? (o[repoKey] ?? null) : null);
      res.resolved!.push(o[mapping.resolved]);
      const group = pairWithinKey(mapping, (c) => o[c]);
      if (group !== undefined) (res.groups ??= []).push(group);
      res.lines!.push(line);
    });
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return { error: e.message.replace(path, 'F'), exitCode: e.exitCode };
  }
  return { ok: res };
}

const b = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const row = (fields: string): string => `{"trajectory_id":"t1","instance_id":"i1","trajectory":[{"role":"user","content":"héllo ✓"}],"resolved":1${fields}}`;

describe('indexJsonl gives what the UTF-8 text gives', () => {
  const cases: [string, Buffer, ColumnMapping?][] = [
    ['ASCII only', b(row(''), '\n')],
    ['non-ASCII only in the messages (the common case)', b(row(',"tools":"é"'), '\n', row(''), '\n')],
    ['a non-ASCII instance id', b(`{"trajectory_id":"t1","instance_id":"café__x-1","trajectory":[],"resolved":0}\n`)],
    ['a non-ASCII trajectory id, escaped', b(`{"trajectory_id":"t\\u00e9","instance_id":"i","trajectory":[],"resolved":true}\n`)],
    ['an astral character in the repo', b(`{"trajectory_id":"t","instance_id":"i","repo":"o/\u{1F527}","trajectory":[],"resolved":1}\n`)],
    ['invalid UTF-8 in the instance id', b('{"trajectory_id":"t","instance_id":"i', [0xff, 0xfe], '","trajectory":[],"resolved":1}\n')],
    ['invalid UTF-8 in the messages only', b('{"trajectory_id":"t","instance_id":"i","trajectory":[{"content":"', [0xc3, 0x28, 0xe2, 0x82], '"}],"resolved":1}\n')],
    ['a truncated sequence before a quote', b('{"trajectory_id":"t","instance_id":"i', [0xf0, 0x9f], '","trajectory":[],"resolved":1}\n')],
    ['a non-ASCII key beside the mapped ones', b('{"trajectory_id":"t","instance_id":"i","ключ":1,"trajectory":[],"resolved":1}\n')],
    ['two keys that differ only in invalid bytes (the last one wins in UTF-8)', b('{"trajectory_id":"t","', [0xff], '":1,"', [0xfe], '":2,"instance_id":"i","trajectory":[],"resolved":1}\n')],
    ['a duplicate instance_id, the last non-ASCII', b('{"trajectory_id":"t","instance_id":"a","instance_id":"é","trajectory":[],"resolved":1}\n')],
    ['a BOM before the object (invalid JSON: the error quotes the UTF-8 text)', b('\ufeff', row(''), '\n')],
    ['a non-ASCII byte outside any string', b('{"trajectory_id":"t",é"instance_id":"i","trajectory":[],"resolved":1}\n')],
    ['invalid JSON near non-ASCII text', b('{"trajectory_id":"t","instance_id":"café","trajectory":[ü],"resolved":1}\n')],
    ['a missing column, non-ASCII keys found', b('{"trajectory_id":"t","trajectory":[],"résolu":1,"resolved":1}\n')],
    ['too deep, under a non-ASCII column name', b(`{"trajectory_id":"t","instance_id":"i","trajectory":[],"resolved":1,"données":${'['.repeat(1001)}${']'.repeat(1001)}}\n`)],
    ['a line that is not an object', b(row(''), '\n', '["é"]\n')],
    ['a label given as non-ASCII text', b('{"trajectory_id":"t","instance_id":"i","trajectory":[],"resolved":"vrai ✓"}\n')],
    ['blank lines, NBSP lines and CRLF', b('\r\n', row(''), '\r\n\u00a0\n\n', row(''), '\n')],
    ['SWE-Gym ids joined from two columns, one non-ASCII', b('{"run_id":"r1","instance_id":"é","messages":[],"resolved":1,"repo":"x"}\n'), SWE_GYM],
    ['--pair-within over a struct and a column, non-ASCII values', b(row(',"metadata":{"model":"modèle"},"scaffold":"s"'), '\n', row(',"metadata":{"model":"m"},"scaffold":"ü"'), '\n'), WITHIN],
    ['--pair-within, a non-ASCII key inside the struct', b(row(',"metadata":{"modèle":"x","model":"m"},"scaffold":"s"'), '\n'), WITHIN],
    ['a repo column whose name is not ASCII (not a required column)', b('{"trajectory_id":"t","instance_id":"i","trajectory":[],"resolved":1,"dépôt":"o/r"}\n'), { ...CONTRACT, repo: 'dépôt' }],
    ['a --pair-within path whose name is not ASCII', b(row(',"metadata":{"modèle":"x"},"scaffold":"s"'), '\n'), { ...CONTRACT, pairWithin: [{ name: 'metadata.modèle', column: 'metadata', path: ['modèle'] }] }],
    ['a mapped column whose name is not ASCII', b('{"trajectory_id":"t","instance_id":"i","trajectory":[],"résolu":1}\n'), { ...CONTRACT, resolved: 'résolu' }],
  ];
  it.each(cases)('%s', async (_name, content, mapping = CONTRACT) => {
    const want = await reference(content, mapping);
    expect(await ours(content, mapping)).toStrictEqual(want);
  });

  it('holdsBeyondAscii looks into strings, keys, arrays and objects', () => {
    expect([
      holdsBeyondAscii(['a', 1, null, true, { k: ['x', { y: 'z' }] }]),
      holdsBeyondAscii(['a', { k: ['x', { y: 'é' }] }]),
      holdsBeyondAscii({ ['\u0080']: 1 }),
      holdsBeyondAscii('\u007f'),
      holdsBeyondAscii(Array.from({ length: 300_000 }, () => 'a')),
    ]).toStrictEqual([false, true, true, false, false]);
  });

  it('seeded damage to a real-shaped line: 1,500 cases, each read alike (values or error)', async () => {
    const rand = mulberry32(20261207);
    const base = Buffer.from(row(',"repo":"o/r","metadata":{"model":"m"},"scaffold":"s"'), 'utf8');
    const inserts: number[][] = [[0xc3, 0xa9], [0xe2, 0x9c, 0x93], [0xff], [0x80], [0xf0, 0x9f], [0xc3], [0xed, 0xa0, 0x80], [0x22], [0x5c], [0x7b], [0x5d], [0x2c]];
    let agreedValues = 0;
    for (let c = 0; c < 1500; c++) {
      const bytes = [...base];
      const edits = 1 + Math.floor(rand() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * bytes.length);
        const ins = inserts[Math.floor(rand() * inserts.length)]!;
        if (rand() < 0.5) bytes.splice(at, 0, ...ins);
        else bytes.splice(at, ins.length, ...ins);
      }
      const content = Buffer.concat([Buffer.from(bytes), Buffer.from('\n')]);
      const mapping = c % 2 ? WITHIN : CONTRACT;
      const want = await reference(content, mapping);
      expect(await ours(content, mapping), `case ${c}: ${content.toString('latin1')}`).toStrictEqual(want);
      if ('ok' in want) agreedValues++;
    }
    // Both outcomes are exercised (the damage is not all fatal, nor all harmless).
    expect(agreedValues).toBeGreaterThan(100);
    expect(agreedValues).toBeLessThan(1400);
  });
});
