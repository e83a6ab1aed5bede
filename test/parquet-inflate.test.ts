// Page decompression (src/parquet/inflate.ts) in process, on bodies made here with the codecs' own
// encoders: where a codec has two paths, both give the same bytes and both refuse a truncated,
// overlong, short or garbage body with a ParquetFormatError (the reader turns it into exit 5).
import { randomBytes } from 'node:crypto';
import { brotliCompressSync, constants } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { CODEC, decodesWhole, decoderOf, inflater } from '../src/parquet/inflate.js';
import { ParquetFormatError } from '../src/parquet/thrift.js';

/** Everything `inflater` hands out for a body declaring `size` bytes, read in 100 kB steps. */
function inflate(codec: number, body: Uint8Array, size: number): Buffer {
  const i = inflater(codec, body, size);
  const parts: Buffer[] = [];
  const step = new Uint8Array(100_000);
  for (let n; (n = i.read(step)) > 0; ) parts.push(Buffer.from(step.subarray(0, n)));
  i.close();
  return Buffer.concat(parts);
}

const saved = process.env.DIVERGENCE_MINE_BROTLI;
afterEach(() => {
  if (saved === undefined) delete process.env.DIVERGENCE_MINE_BROTLI;
  else process.env.DIVERGENCE_MINE_BROTLI = saved;
});

describe('BROTLI: node:zlib whole and brotli-wasm streamed', () => {
  // Text and incompressible bytes: several 64 KiB steps of the stream, some of them longer in output.
  const data = Buffer.concat([Buffer.from('{"role": "assistant", "content": "ls -la /workspace"}\n'.repeat(9000)), randomBytes(200_000)]);
  const body = brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
  const modes = [
    { mode: 'whole', decoder: 'node:zlib' },
    { mode: 'stream', decoder: 'brotli-wasm' },
  ];
  it.each(modes)('$mode ($decoder): the bytes that were compressed', ({ mode, decoder }) => {
    process.env.DIVERGENCE_MINE_BROTLI = mode;
    expect(decoderOf(CODEC.BROTLI)).toBe(decoder);
    expect(decodesWhole(CODEC.BROTLI, data.length)).toBe(mode === 'whole');
    expect(inflate(CODEC.BROTLI, body, data.length).equals(data)).toBe(true);
  });
  const bad = [
    { name: 'truncated body', body: body.subarray(0, body.length - 40), size: data.length, why: /truncated|unexpected end/ },
    { name: 'output longer than declared', body, size: data.length - 1, why: /more than its declared/ },
    { name: 'output shorter than declared', body, size: data.length + 1, why: /decompresses to \d+ bytes, not its declared/ },
    { name: 'garbage', body: Buffer.from('this is not a brotli stream at all, only text of some length'), size: 5000, why: /BROTLI/ },
    { name: 'bytes after the end of the stream', body: Buffer.concat([body, Buffer.from([1, 2, 3])]), size: data.length, why: /3 bytes after the end of the stream/ },
  ];
  it.each(modes.flatMap((m) => bad.map((b) => ({ ...m, ...b }))))('$mode: $name is a corrupt page', ({ mode, body: b, size, why }) => {
    process.env.DIVERGENCE_MINE_BROTLI = mode;
    expect(() => inflate(CODEC.BROTLI, b, size)).toThrow(ParquetFormatError);
    expect(() => inflate(CODEC.BROTLI, b, size)).toThrow(why);
  });
  it('a page compressed beyond 4096x: refused whole (its declared size is implausible to allocate), streamed in bounded steps', () => {
    const zeros = Buffer.alloc(24 * 2 ** 20);
    const tiny = brotliCompressSync(zeros);
    expect(zeros.length / tiny.length).toBeGreaterThan(4096);
    process.env.DIVERGENCE_MINE_BROTLI = 'whole';
    expect(() => inflate(CODEC.BROTLI, tiny, zeros.length)).toThrow(/more than BROTLI can expand to/);
    process.env.DIVERGENCE_MINE_BROTLI = 'stream';
    expect(inflate(CODEC.BROTLI, tiny, zeros.length).equals(zeros)).toBe(true);
    // By default a page this large streams.
    delete process.env.DIVERGENCE_MINE_BROTLI;
    expect(decodesWhole(CODEC.BROTLI, zeros.length)).toBe(false);
    expect(decodesWhole(CODEC.BROTLI, 1_000_000)).toBe(true);
  });
});
