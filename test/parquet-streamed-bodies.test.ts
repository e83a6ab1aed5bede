// Page bodies the reader streams from the file a step at a time (column.ts FileBody, inflate.ts
// streamsBody): pages whose compressed body spans many steps, for every codec that streams, read
// whole and row by row like parquet-wasm reads them, on the native and the pure-JS / streamed decoders;
// and a page whose body is cut short by a column chunk that ends in it fails as a corrupt page.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { wasmValues } from './support/wasm-values.js';

const dir = mkdtempSync(join(tmpdir(), 'dm-streamed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Text that compresses about 2:1: hex of a hash chain, with a repeated word now and then. */
function text(seed: number, bytes: number): string {
  let out = '';
  let h = String(seed);
  while (out.length < bytes) {
    h = createHash('sha256').update(h).digest('hex');
    out += h + (h.charCodeAt(0) % 3 === 0 ? ' assistant assistant ' : ' ');
  }
  return out.slice(0, bytes);
}

const ROWS = 40;
// Rows of 40-120 KB: one page holds several MB, far more than one read step (256 KiB).
const values = Array.from({ length: ROWS }, (_, i) => (i % 9 === 4 ? null : text(i, 40_000 + (i % 5) * 20_000)));
const ids = Array.from({ length: ROWS }, (_, i) => `row-${i}`);

type Codec = 'UNCOMPRESSED' | 'ZSTD' | 'GZIP' | 'BROTLI';
/** The codecs' numbers in parquet.thrift. */
const CODEC_ID: Record<Codec, number> = { UNCOMPRESSED: 0, GZIP: 2, BROTLI: 4, ZSTD: 6 };
/** The streamed path of each codec: zstd always (zstd-napi or fzstd), gzip and brotli when forced to stream. */
const CASES: { codec: Codec; env: Record<string, string> }[] = [
  { codec: 'UNCOMPRESSED', env: {} },
  { codec: 'ZSTD', env: {} },
  { codec: 'ZSTD', env: { DIVERGENCE_MINE_ZSTD: 'js' } },
  { codec: 'GZIP', env: { DIVERGENCE_MINE_GZIP: 'stream' } },
  { codec: 'BROTLI', env: { DIVERGENCE_MINE_BROTLI: 'stream' } },
];

function write(codec: Codec): string {
  const ipc = tableToIPC(tableFromArrays({ id: ids, text: values }), 'stream');
  // One row group, one page per column (v1 pages, no dictionary): the text page is several MB.
  const props = new pw.WriterPropertiesBuilder()
    .setWriterVersion(0)
    .setCompression(pw.Compression[codec])
    .setDictionaryEnabled(false)
    .setDataPageSizeLimit(64 * 2 ** 20)
    .setMaxRowGroupSize(ROWS)
    .build();
  const path = join(dir, `${codec}.parquet`);
  writeFileSync(path, pw.writeParquet(pw.Table.fromIPCStream(ipc), props));
  return path;
}

async function loadReader(env: Record<string, string>) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  vi.resetModules();
  const reader = await import('../src/parquet/reader.js');
  const inflate = await import('../src/parquet/inflate.js');
  const restore = () => {
    for (const k of Object.keys(env)) delete process.env[k];
    Object.assign(process.env, saved);
  };
  return { reader, inflate, restore };
}

describe('streamed page bodies read like parquet-wasm reads them', () => {
  it.each(CASES)('$codec $env', async ({ codec, env }) => {
    const path = write(codec);
    const { reader, inflate, restore } = await loadReader(env);
    try {
      const meta = reader.footer(path);
      // The text column (the second) is one page of this codec, streamed over many read steps.
      const chunk = meta.rowGroups[0]!.chunks[1]!;
      expect(chunk.codec).toBe(CODEC_ID[codec]);
      const size = values.reduce((a, v) => a + (v?.length ?? 0) + 4, 0);
      expect(inflate.streamsBody(chunk.codec, size)).toBe(true);
      expect(chunk.length).toBeGreaterThan(4 * 2 ** 18);
      const ref = await wasmValues(path, ['id', 'text']);
      expect(ref.get('text')).toEqual(values);
      const all = reader.readRowGroup(path, 0, ['id', 'text'], null);
      expect(all.get('text')).toEqual(values);
      expect(all.get('id')).toEqual(ids);
      // Some rows: the values between them are skipped across steps, not built.
      const rows = [3, 4, 17, 18, 39];
      const some = reader.readRowGroup(path, 0, ['text', 'id'], rows);
      expect(some.get('text')).toEqual(rows.map((r) => values[r]));
      expect(some.get('id')).toEqual(rows.map((r) => ids[r]));
    } finally {
      restore();
    }
  }, 60_000);
});

describe('a corrupt byte far into a streamed page', () => {
  // (zstd frames in parquet carry no checksum: flipped literal bytes decode to other bytes, see
  // src/parquet/README.md; gzip's CRC and brotli's stream structure catch them.)
  it.each(['GZIP', 'BROTLI'] as const)('%s: a corrupt page (exit 5) naming row group and column', async (codec) => {
    const path = write(codec);
    const { reader, restore } = await loadReader({ [`DIVERGENCE_MINE_${codec}`]: 'stream' });
    try {
      const text = reader.footer(path).rowGroups[0]!.chunks[1]!;
      // Past the first read steps: the decoder fails on bytes read long after the page began.
      const bytes = Buffer.from(readFileSync(path));
      const at = text.start + Math.floor(text.length * 0.75);
      for (let k = 0; k < 64; k++) bytes[at + k] = bytes[at + k]! ^ 0x5a;
      const bad = join(dir, `bad-${codec}.parquet`);
      writeFileSync(bad, bytes);
      let err: unknown;
      try {
        reader.readRowGroup(bad, 0, ['text'], null);
      } catch (e) {
        err = e;
      }
      expect((err as { exitCode?: number }).exitCode).toBe(5);
      expect((err as Error).message).toMatch(new RegExp(`bad-${codec}\\.parquet: row group 0, column text`));
    } finally {
      restore();
    }
  }, 60_000);
});

describe('streamed bodies whose bytes are overwritten by the next step', () => {
  /** A body handing out at most `step` bytes from one buffer that every call overwrites (as FileBody's steps do). */
  function reusingBody(bytes: Uint8Array, step: number) {
    const buf = new Uint8Array(step);
    return {
      length: bytes.length,
      at(pos: number): Uint8Array {
        const n = Math.min(step, bytes.length - pos);
        buf.fill(0xa5);
        buf.set(bytes.subarray(pos, pos + n));
        return buf.subarray(0, n);
      },
    };
  }
  // The pure-JS decoders keep views of input they have not decoded yet; the reader must not let the
  // next step change those bytes.
  it.each([
    { codec: 'ZSTD', id: 6, env: { DIVERGENCE_MINE_ZSTD: 'js' } },
    { codec: 'ZSTD', id: 6, env: {} },
    { codec: 'GZIP', id: 2, env: { DIVERGENCE_MINE_GZIP: 'stream' } },
    { codec: 'BROTLI', id: 4, env: { DIVERGENCE_MINE_BROTLI: 'stream' } },
  ])('$codec $env', async ({ codec, id, env }) => {
    const zlib = await import('node:zlib');
    const { compress } = (await import('zstd-napi')) as unknown as { compress(b: Uint8Array): Buffer };
    const plain = Buffer.from(values.slice(0, 6).join('\n'));
    const packed = codec === 'ZSTD' ? compress(plain) : codec === 'GZIP' ? zlib.gzipSync(plain) : zlib.brotliCompressSync(plain);
    const { inflate, restore } = await loadReader(env);
    try {
      for (const step of [1000, 65_536 + 17]) {
        const inf = inflate.inflater(id, reusingBody(packed, step), plain.length);
        const out = Buffer.allocUnsafe(plain.length);
        let got = 0;
        for (let n = inf.read(out.subarray(got, Math.min(plain.length, got + 50_000))); n > 0; n = inf.read(out.subarray(got, Math.min(plain.length, got + 50_000)))) got += n;
        inf.close();
        expect(got).toBe(plain.length);
        expect(out.equals(plain)).toBe(true);
      }
    } finally {
      restore();
    }
  }, 60_000);
});

