// Hostile parquet files, built at test time from fixtures/forks.parquet (real rows of
// nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius): each attacks one size or level a
// reader must not trust, and each is a few KB to a few hundred KB on disk, whatever it claims.
//
// - big-string / big-content: the first string of a zstd page (trajectory_id; message contents)
//   claims 2^31-200 bytes and the page really expands to it (zeros, 64 KB of zstd).
// - indices-bomb: the dictionary-indices page of `resolved` declares 2^31-1 bytes, zeros after its
//   real indices.
// - dictionary-150m: the dictionary page of `instance_id` claims 150 M entries: its real ones, then
//   empty strings (600 MB of zeros, 18 KB of zstd) that no row uses.
// - levels-out-of-range: the definition level of the last message content of the first page is 7,
//   above its maximum (4), still in the column's 3 bits.
// And one file that is not corrupt, only oversized:
// - dictionary-unused: the dictionary of `instance_id` holds 10 M entries, its real ones then empty
//   strings no row uses (as a whole Arrow dictionary written as is can hold unused entries).
//
// The pages are rewritten whole and the file put back together with every offset recomputed
// (parquet-fuzz.mjs withPages); zstd bodies are compressed by zstd-napi in a stream, so no
// generator holds more than a MiB of what a page expands to.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withPages } from './parquet-fuzz.mjs';

const require = createRequire(import.meta.url);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const HOSTILE_BASE = join(ROOT, 'fixtures', 'forks.parquet');

/** The length the big strings claim, and what their pages expand to. */
export const BIG_STRING = 2 ** 31 - 200;
export const INDICES_BOMB = 2 ** 31 - 1;
export const DICTIONARY_ENTRIES = 150_000_000;
export const UNUSED_ENTRIES = 10_000_000;

/**
 * One zstd frame of `parts` (Buffers, or `{ zeros: n }`), compressed as a stream in 1 MiB steps:
 * zeros are never held beyond one step.
 */
export function zstdFrame(parts) {
  const b = require('zstd-napi/binding');
  const c = new b.CCtx();
  c.setParameter(b.CParameter.compressionLevel, 1);
  const total = parts.reduce((s, p) => s + (Buffer.isBuffer(p) ? p.length : p.zeros), 0);
  c.setPledgedSrcSize(total);
  const zero = Buffer.alloc(1 << 20);
  const dst = Buffer.alloc(1 << 20);
  const out = [];
  let left = total;
  const feed = (src) => {
    left -= src.length;
    const op = left === 0 ? b.EndDirective.end : b.EndDirective.continue;
    for (let s = src; ; ) {
      const [rest, produced, consumed] = c.compressStream2(dst, s, op);
      if (produced > 0) out.push(Buffer.from(dst.subarray(0, produced)));
      s = s.subarray(consumed);
      if (s.length === 0 && (op !== b.EndDirective.end || rest === 0)) break;
    }
  };
  for (const p of parts) {
    if (Buffer.isBuffer(p)) feed(p);
    else for (let n = p.zeros; n > 0; n -= zero.length) feed(zero.subarray(0, Math.min(n, zero.length)));
  }
  if (total === 0) feed(Buffer.alloc(0));
  return { bytes: Buffer.concat(out), size: total };
}

const zstd = () => require('zstd-napi');

/** A parquet-wasm rewrite of the base file: v1 pages, zstd, every column dictionary-encoded. */
async function dictionaryBase() {
  const pw = await import('parquet-wasm');
  const props = new pw.WriterPropertiesBuilder().setWriterVersion(0).setCompression(pw.Compression.ZSTD).setDictionaryEnabled(true).build();
  return Buffer.from(pw.writeParquet(pw.readParquet(readFileSync(HOSTILE_BASE)), props));
}

function chunkOf(f, path) {
  const c = f.groups[0].find((ch) => ch.leaf.path === path);
  if (!c) throw new Error(`no column ${path}`);
  return c;
}

/** The first page of `chunk` of page type `type` (0 data v1, 2 dictionary). */
function pageOf(chunk, type, get) {
  const p = chunk.pages.find((pg) => Number(get(pg.header, 1)) === type);
  if (!p) throw new Error(`${chunk.leaf.path}: no page of type ${type}`);
  return p;
}

/** Bytes of a v1 page's content taken by its levels (each a 4-byte length and that many bytes). */
function levelsLength(content, leaf) {
  let at = 0;
  for (const max of [leaf.maxRep, leaf.maxDef]) if (max > 0) at += 4 + content.readUInt32LE(at);
  return at;
}

/** Replace a page's body and its declared sizes. */
function setBody(p, set, body, uncompressed) {
  p.body = body;
  set(p.header, 2, 5, BigInt(uncompressed));
  set(p.header, 3, 5, BigInt(body.length));
}

/** The first value of the first v1 data page of `column` claims BIG_STRING bytes, and the page expands to them. */
function bigStringIn(bytes, column) {
  return withPages(bytes, (f, { get, set }) => {
    const chunk = chunkOf(f, column);
    if (chunk.codec !== 6) throw new Error(`${column} is not zstd`);
    const p = pageOf(chunk, 0, get);
    const content = zstd().decompress(p.body);
    const levels = content.subarray(0, levelsLength(content, chunk.leaf));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(BIG_STRING);
    const z = zstdFrame([levels, len, { zeros: BIG_STRING }]);
    setBody(p, set, z.bytes, z.size);
  });
}

/** RLE runs (no bit packing) of `levels` at `width` bits, with the v1 4-byte length in front. */
function rleLevels(levels, width) {
  const out = [];
  const bytes = (width + 7) >> 3;
  for (let i = 0; i < levels.length; ) {
    let j = i;
    while (j < levels.length && levels[j] === levels[i]) j++;
    for (let h = (j - i) * 2; ; h = Math.floor(h / 128)) {
      if (h < 0x80) {
        out.push(h);
        break;
      }
      out.push((h % 128) | 0x80);
    }
    for (let b = 0; b < bytes; b++) out.push((levels[i] >> (8 * b)) & 0xff);
    i = j;
  }
  const len = Buffer.alloc(4);
  len.writeUInt32LE(out.length);
  return Buffer.concat([len, Buffer.from(out)]);
}

/**
 * The last message content of the first page whose definition level says "present" (4) gets 7:
 * above the maximum, inside the 3 bits. Values are unchanged: a reader that takes 7 for "null" reads
 * one value fewer, one that takes it for "present" reads the clean rows.
 */
async function levelsOutOfRange(bytes) {
  const { decodeHybrid } = await import(new URL('dist/parquet/column.js', `file://${ROOT}/`).href);
  return withPages(bytes, (f, { get, set }) => {
    const chunk = chunkOf(f, 'trajectory.list.element.content');
    const p = pageOf(chunk, 0, get);
    const n = Number(get(get(p.header, 5), 1));
    const content = zstd().decompress(p.body);
    const { maxRep, maxDef } = chunk.leaf;
    const width = 32 - Math.clz32(maxDef);
    const repLen = 4 + content.readUInt32LE(0);
    const defLen = content.readUInt32LE(repLen);
    const defs = new Uint8Array(n);
    decodeHybrid(content.subarray(repLen + 4, repLen + 4 + defLen), width, n, defs, true);
    const at = defs.lastIndexOf(maxDef);
    if (at < 0 || maxRep !== 1 || maxDef !== 4) throw new Error('levels-out-of-range: unexpected page');
    defs[at] = 7;
    const body = Buffer.concat([content.subarray(0, repLen), rleLevels(defs, width), content.subarray(repLen + 4 + defLen)]);
    setBody(p, set, zstd().compress(body, { compressionLevel: 3 }), body.length);
  });
}

/** The `resolved` indices page declares INDICES_BOMB bytes: its real content, then zeros. */
function indicesBomb(bytes) {
  return withPages(bytes, (f, { get, set }) => {
    const chunk = chunkOf(f, 'resolved');
    const p = pageOf(chunk, 0, get);
    const enc = Number(get(get(p.header, 5), 2));
    if (enc !== 2 && enc !== 8) throw new Error(`resolved: page encoding ${enc}, not dictionary`);
    const content = zstd().decompress(p.body);
    const z = zstdFrame([content, { zeros: INDICES_BOMB - content.length }]);
    setBody(p, set, z.bytes, z.size);
  });
}

/**
 * The `instance_id` dictionary page holds `entries` entries: its real ones, then empty strings (a
 * 4-byte zero length each) that no index refers to.
 */
function paddedDictionary(bytes, entries) {
  return withPages(bytes, (f, { get, set }) => {
    const chunk = chunkOf(f, 'instance_id');
    const p = pageOf(chunk, 2, get);
    const dh = get(p.header, 7);
    const real = Number(get(dh, 1));
    set(dh, 1, 5, BigInt(entries));
    const z = zstdFrame([zstd().decompress(p.body), { zeros: 4 * (entries - real) }]);
    setBody(p, set, z.bytes, z.size);
  });
}

export const HOSTILE = ['big-string', 'big-content', 'indices-bomb', 'dictionary-150m', 'levels-out-of-range'];
/** Not corrupt: read like the base file by every engine. */
export const OVERSIZED = ['dictionary-unused'];

/** Write every hostile and oversized file (or those of `names`) into `dir`; name -> path. */
export async function writeHostileFiles(dir, names = [...HOSTILE, ...OVERSIZED]) {
  const plain = readFileSync(HOSTILE_BASE);
  let dict = null;
  const out = {};
  for (const name of names) {
    let bytes;
    if (name === 'big-string') bytes = bigStringIn(plain, 'trajectory_id');
    else if (name === 'big-content') bytes = bigStringIn(plain, 'trajectory.list.element.content');
    else if (name === 'levels-out-of-range') bytes = await levelsOutOfRange(plain);
    else {
      dict ??= await dictionaryBase();
      if (name === 'indices-bomb') bytes = indicesBomb(dict);
      else if (name === 'dictionary-150m') bytes = paddedDictionary(dict, DICTIONARY_ENTRIES);
      else if (name === 'dictionary-unused') bytes = paddedDictionary(dict, UNUSED_ENTRIES);
      else throw new Error(`no hostile file ${name}`);
    }
    out[name] = join(dir, `${name}.parquet`);
    writeFileSync(out[name], bytes);
  }
  return out;
}

// `node test/support/hostile-parquet.mjs DIR` writes them all (to measure by hand).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node test/support/hostile-parquet.mjs DIR');
  for (const [name, path] of Object.entries(await writeHostileFiles(dir))) console.log(name, readFileSync(path).length, path);
}
