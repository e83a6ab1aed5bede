// Our reader handing long message contents over as their UTF-8 bytes (src/parquet/utf8-bytes.ts,
// readRows' ReadOptions): asked for, the content strings of at least `bytesFrom` bytes of the real
// rows in fixtures/forks.parquet and fixtures/sampling.parquet (nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 © Nebius), rewritten by parquet-rs with each string encoding, come as Utf8Bytes holding
// exactly the bytes of the string a plain read gives; everything else is what a plain read gives.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.js';
import { fileMeta, listStructField, readRows, Utf8Bytes, type ReadOptions } from '../src/parquet/reader.js';
import { Utf8Arena } from '../src/parquet/utf8-bytes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dm-utf8-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STRING_LEAVES = ['content', 'name', 'role', 'tool_call_id'].map((l) => `trajectory.list.element.${l}`);

function rewrite(source: string, name: string, o: { version: 0 | 1; compression: 'UNCOMPRESSED' | 'ZSTD' | 'SNAPPY'; dictionary: boolean; encoding?: 'DELTA_LENGTH_BYTE_ARRAY' | 'DELTA_BYTE_ARRAY' }): string {
  let props = new pw.WriterPropertiesBuilder()
    .setWriterVersion(o.version)
    .setCompression(pw.Compression[o.compression])
    .setDictionaryEnabled(o.dictionary)
    .setDataPageSizeLimit(4096)
    .setMaxRowGroupSize(5);
  if (o.encoding) for (const col of STRING_LEAVES) props = props.setColumnEncoding(col, pw.Encoding[o.encoding]);
  const path = join(dir, `${name}.parquet`);
  writeFileSync(path, pw.writeParquet(pw.readParquet(readFileSync(join(ROOT, 'fixtures', source))), props.build()));
  return path;
}

/** Where Utf8Bytes stand in `v` (JSON paths) and `v` with each replaced by its text. */
function asText(v: unknown, path = '$', seen: string[] = []): { value: unknown; at: string[] } {
  if (v instanceof Utf8Bytes) {
    seen.push(path);
    return { value: v.text(), at: seen };
  }
  if (Array.isArray(v)) return { value: v.map((x, i) => asText(x, `${path}[${i}]`, seen).value), at: seen };
  if (v !== null && typeof v === 'object') {
    return { value: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asText(x, `${path}.${k}`, seen).value])), at: seen };
  }
  return { value: v, at: seen };
}

/** Every message content (string or Utf8Bytes) of a trajectory value. */
const contents = (t: unknown): unknown[] => (t as { content: unknown }[]).map((m) => m.content);

const FROM = 200;
const OPTIONS: ReadOptions = { bytesLeaf: listStructField('content'), bytesFrom: FROM };

describe('readRows hands long contents over as their UTF-8 bytes, and only those', () => {
  const cases = [
    { source: 'forks.parquet', name: 'v1 uncompressed plain', version: 0, compression: 'UNCOMPRESSED', dictionary: false, plain: true },
    { source: 'sampling.parquet', name: 'v1 zstd plain', version: 0, compression: 'ZSTD', dictionary: false, plain: true },
    { source: 'sampling.parquet', name: 'v1 snappy dictionary', version: 0, compression: 'SNAPPY', dictionary: true, plain: false },
    { source: 'forks.parquet', name: 'v1 DELTA_LENGTH_BYTE_ARRAY', version: 0, compression: 'UNCOMPRESSED', dictionary: false, encoding: 'DELTA_LENGTH_BYTE_ARRAY', plain: true },
    // Each value of a prefix encoding is built from the one before: it comes as a string.
    { source: 'forks.parquet', name: 'v2 DELTA_BYTE_ARRAY', version: 1, compression: 'ZSTD', dictionary: false, encoding: 'DELTA_BYTE_ARRAY', plain: false },
  ] as const;
  it.each(cases)('$source, $name: every row and a subset', (c) => {
    const path = rewrite(c.source, `${c.source}-${c.name.replace(/\W+/g, '-')}`, c);
    const groups = fileMeta(path).rowGroupRows;
    let asBytes = 0;
    let long = 0;
    for (let g = 0; g < groups.length; g++) {
      for (const rows of [null, [1, 3].filter((r) => r < groups[g]!)]) {
        const plain = [...readRows(path, g, ['trajectory', 'instance_id'], rows)];
        const got = [...readRows(path, g, ['trajectory', 'instance_id'], rows, OPTIONS)];
        expect(got.length).toBe(plain.length);
        got.forEach((row, r) => {
          const { value, at } = asText(row);
          // Read as text, the values are the plain read's, and bytes stand only at a message's content.
          expect(value).toEqual(plain[r]);
          for (const p of at) expect(p).toMatch(/^\$\[0\]\[\d+\]\.content$/);
          const texts = contents(plain[r]![0]);
          contents(row[0]).forEach((v, i) => {
            const t = texts[i];
            const isLong = typeof t === 'string' && Buffer.byteLength(t) >= FROM;
            if (isLong) long++;
            if (v instanceof Utf8Bytes) {
              asBytes++;
              expect(v.bytes.equals(Buffer.from(t as string, 'utf8'))).toBe(true);
              expect(v.bytes.length).toBeGreaterThanOrEqual(FROM);
            } else expect(v).toBe(t);
            // Plain and length-prefixed pages hand every long content over as bytes.
            if (c.plain) expect(v instanceof Utf8Bytes).toBe(isLong);
          });
        });
      }
    }
    expect(long).toBeGreaterThan(0);
    if (c.plain) expect(asBytes).toBe(long);
    else expect(asBytes).toBe(0);
  }, 60_000);

  it('without options, or for another leaf, no value is Utf8Bytes', () => {
    const path = rewrite('forks.parquet', 'forks-plain-default', { version: 0, compression: 'UNCOMPRESSED', dictionary: false });
    for (const options of [{}, { bytesLeaf: listStructField('role'), bytesFrom: 1 }, { bytesLeaf: listStructField('content') }]) {
      for (const row of readRows(path, 0, ['trajectory', 'instance_id'], null, options)) {
        expect(asText(row).at.filter((p) => !p.endsWith('.role'))).toEqual([]);
      }
    }
    // Asked for role from one byte on, every role comes as bytes.
    const [first] = readRows(path, 0, ['trajectory'], [0], { bytesLeaf: listStructField('role'), bytesFrom: 1 });
    expect((first![0] as { role: unknown }[]).every((m) => m.role instanceof Utf8Bytes)).toBe(true);
  });

  it('a long content that is not UTF-8 fails as it does when read as text', () => {
    const path = rewrite('forks.parquet', 'forks-not-utf8', { version: 0, compression: 'UNCOMPRESSED', dictionary: false });
    const [row] = readRows(path, 0, ['trajectory'], [0]);
    const long = contents(row![0]).find((t): t is string => typeof t === 'string' && Buffer.byteLength(t) >= FROM && /^[\x20-\x7e\n]{64}/.test(t))!;
    const bytes = readFileSync(path);
    const at = bytes.indexOf(Buffer.from(long.slice(0, 64), 'utf8'));
    expect(at).toBeGreaterThan(0);
    bytes[at + 10] = 0xff;
    writeFileSync(path, bytes);
    for (const options of [{}, OPTIONS]) {
      const read = () => [...readRows(path, 0, ['trajectory'], null, options)];
      expect(read).toThrow(UserError);
      expect(read).toThrow(/a string that is not UTF-8/);
    }
  });
});

describe('Utf8Arena: copies stay what they were copied from', () => {
  it('across arenas, for a value larger than an arena share, from a source overwritten after each copy', () => {
    const arena = new Utf8Arena();
    const source = Buffer.alloc(600_002);
    const sizes = [1, 256, 70_000, 300_000, 5_000, 600_000, 0, 12_345, ...Array.from({ length: 40 }, (_, i) => 50_000 + i)];
    const kept: [Utf8Bytes, Buffer][] = [];
    sizes.forEach((n, i) => {
      const at = i % 3;
      source.fill(0x61 + (i % 26), at, at + n);
      const v = arena.copy(source, at, at + n);
      kept.push([v, Buffer.from(source.subarray(at, at + n))]);
      source.fill(0x7a);
    });
    // 2.5 MB in all: several arenas of 1 MiB were filled.
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(2 * 2 ** 20);
    for (const [v, want] of kept) {
      expect(v.length).toBe(want.length);
      expect(v.bytes.equals(want)).toBe(true);
      expect(v.text()).toBe(want.toString('utf8'));
      const target = Buffer.alloc(want.length + 2, 0xee);
      v.copyTo(target, 1);
      expect(target.subarray(1, 1 + want.length).equals(want)).toBe(true);
      expect([target[0], target[want.length + 1]]).toEqual([0xee, 0xee]);
    }
  });
});
