// Structure-aware differential fuzzer of our parquet reader (src/parquet/, built to dist/).
//
// A valid file is taken apart into its structure (footer and page headers as Thrift trees, page
// bodies decompressed into levels and values), one *field* is changed (a page header size or count,
// an encoding, a page type, level bytes, an RLE run header, dictionary indices, a footer field's
// value, id, type or list size, compressed frame bytes, a string value made of deeply nested JSON),
// the file is put back together (offsets recomputed) and read by our reader and by parquet-wasm,
// each in a child process under a watchdog, and by DuckDB where those two do not agree. A case passes
// when ours returns the rows parquet-wasm returns, or (parquet-wasm refusing the file or reading other
// rows) the rows DuckDB returns; or ours stops with a clean corrupt-file error (UserError, exit 5, one
// line naming the file); or ours declines the file as Unsupported (the engine then reads it with
// parquet-wasm); or ours read past a mutation of bytes it deliberately does not read, named by a rule
// in ignoredField, and its rows are the unmutated file's. Anything else fails: another exception, a
// hang, an abort, more than 1 GiB of RSS, rows neither other reader returns.
//
// Reproducible by seed: case k of seed S always builds the same file.
//   npm run fuzz -- --cases 3000 --seed 7 [--keep DIR]
// Inputs: fixtures/*.parquet (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0,
// © Nebius; see fixtures/README.md) and rewrites of forks.parquet by parquet-wasm's writer.
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { createRequire } from 'node:module';
import { mulberry32 } from './prng.mjs';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./parquet-fuzz-child.mjs', import.meta.url));
const RSS_LIMIT_KIB = 1024 * 1024;

// --- seeded PRNG ----------------------------------------------------------------------------------
export const rng = mulberry32;

// --- Thrift compact protocol, as a tree that keeps each field's id and wire type -----------------
// Integers are BigInt so that a mutation can write any 64-bit value exactly.
class TIn {
  constructor(buf, pos = 0) {
    this.buf = buf;
    this.pos = pos;
  }
  byte() {
    if (this.pos >= this.buf.length) throw new Error('thrift: end');
    return this.buf[this.pos++];
  }
  varint() {
    let r = 0n;
    for (let sh = 0n; ; sh += 7n) {
      const x = this.byte();
      r |= BigInt(x & 0x7f) << sh;
      if ((x & 0x80) === 0) return r;
      if (sh > 63n) throw new Error('thrift: long varint');
    }
  }
  zigzag() {
    const v = this.varint();
    return (v >> 1n) ^ -(v & 1n);
  }
  value(t) {
    switch (t) {
      case 1:
      case 2:
        return this.byte() === 1;
      case 3:
        return BigInt(this.byte());
      case 4:
      case 5:
      case 6:
        return this.zigzag();
      case 7: {
        const v = this.buf.subarray(this.pos, this.pos + 8);
        this.pos += 8;
        return { double: Buffer.from(v) };
      }
      case 8: {
        const n = Number(this.varint());
        const v = Buffer.from(this.buf.subarray(this.pos, this.pos + n));
        if (v.length !== n) throw new Error('thrift: end');
        this.pos += n;
        return v;
      }
      case 9:
      case 10: {
        const h = this.byte();
        let n = h >> 4;
        if (n === 15) n = Number(this.varint());
        const et = h & 15;
        const items = [];
        for (let i = 0; i < n; i++) items.push(this.value(et));
        return { list: items, et };
      }
      case 11: {
        const n = Number(this.varint());
        const kv = n > 0 ? this.byte() : 0;
        const entries = [];
        for (let i = 0; i < n; i++) entries.push([this.value(kv >> 4), this.value(kv & 15)]);
        return { map: entries, kv };
      }
      case 12:
        return this.struct();
      default:
        throw new Error(`thrift: type ${t}`);
    }
  }
  struct() {
    const fields = [];
    let id = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return { fields };
      const d = h >> 4;
      id = d ? id + d : Number(this.zigzag());
      const type = h & 15;
      fields.push({ id, type, v: type === 1 || type === 2 ? type === 1 : this.value(type) });
    }
  }
}

function encodeStruct(s) {
  const out = [];
  const varint = (v) => {
    v = BigInt.asUintN(64, BigInt(v));
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
  };
  const zigzag = (v) => varint(BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n)));
  const value = (t, v) => {
    switch (t) {
      case 1:
      case 2:
        out.push(v ? 1 : 2);
        break;
      case 3:
        out.push(Number(BigInt.asUintN(8, v)));
        break;
      case 4:
      case 5:
      case 6:
        zigzag(v);
        break;
      case 7:
        out.push(...v.double);
        break;
      case 8:
        varint(v.length);
        out.push(...v);
        break;
      case 9:
      case 10: {
        const n = v.claim ?? v.list.length;
        if (n < 15) out.push((n << 4) | v.et);
        else {
          out.push(0xf0 | v.et);
          varint(n);
        }
        for (const x of v.list) value(v.et, x);
        break;
      }
      case 11:
        varint(v.claim ?? v.map.length);
        if (v.map.length > 0 || v.claim) out.push(v.kv);
        for (const [k, x] of v.map) {
          value(v.kv >> 4, k);
          value(v.kv & 15, x);
        }
        break;
      case 12:
        struct(v);
        break;
      default:
        throw new Error(`encode: type ${t}`);
    }
  };
  const struct = (st) => {
    let last = 0;
    for (const f of st.fields) {
      // `wire`: the type written in the field header (a mutation may make it lie about the value).
      const wire = f.wire ?? (f.type === 1 || f.type === 2 ? (f.v ? 1 : 2) : f.type);
      const d = f.id - last;
      if (d > 0 && d <= 15) out.push((d << 4) | wire);
      else {
        out.push(wire);
        zigzag(f.id);
      }
      last = f.id;
      if (f.type !== 1 && f.type !== 2) value(f.type, f.v);
    }
    out.push(0);
  };
  struct(s);
  return Buffer.from(out);
}

const field = (s, id) => s?.fields.find((f) => f.id === id);
const get = (s, id) => field(s, id)?.v;
function set(s, id, type, v) {
  const f = field(s, id);
  if (f) f.v = v;
  else {
    s.fields.push({ id, type, v });
    s.fields.sort((a, b) => a.id - b.id);
  }
}
const drop = (s, id) => (s.fields = s.fields.filter((f) => f.id !== id));

// --- codecs (page bodies are recompressed after a mutation of their content) ---------------------
const zstd = require('zstd-napi');
const snappy = require('snappyjs');
const CODECS = {
  0: { decompress: (b) => Buffer.from(b), compress: (b) => Buffer.from(b) },
  1: { decompress: (b) => Buffer.from(snappy.uncompress(b)), compress: (b) => Buffer.from(snappy.compress(b)) },
  6: { decompress: (b) => zstd.decompress(b), compress: (b) => zstd.compress(b, { compressionLevel: 3 }) },
};

// --- a parquet file as a structure ---------------------------------------------------------------
/** Max repetition / definition level of each leaf, from the flattened schema. */
function leafLevels(schema) {
  const out = [];
  let i = 1;
  const walk = (def, rep, path) => {
    const el = schema[i++];
    const r = Number(get(el, 3) ?? 0n);
    const d2 = def + (r === 1 || r === 2 ? 1 : 0);
    const p2 = rep + (r === 2 ? 1 : 0);
    const name = get(el, 4)?.toString() ?? '';
    const n = Number(get(el, 5) ?? 0n);
    if (n === 0) out.push({ maxDef: d2, maxRep: p2, path: [...path, name].join('.') });
    for (let c = 0; c < n; c++) walk(d2, p2, [...path, name]);
  };
  const rootChildren = Number(get(schema[0], 5) ?? 0n);
  for (let c = 0; c < rootChildren; c++) walk(0, 0, []);
  return out;
}

export function parseFile(bytes) {
  const len = bytes.readUInt32LE(bytes.length - 8);
  const footer = new TIn(bytes.subarray(bytes.length - 8 - len, bytes.length - 8)).struct();
  const schema = get(footer, 2).list;
  const leaves = leafLevels(schema);
  const groups = get(footer, 4).list.map((rg) =>
    get(rg, 1).list.map((cc, c) => {
      const md = get(cc, 3);
      const codec = Number(get(md, 4));
      const data = Number(get(md, 9));
      const dict = get(md, 11) === undefined ? undefined : Number(get(md, 11));
      const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
      const end = start + Number(get(md, 7));
      const pages = [];
      for (let pos = start; pos < end; ) {
        const r = new TIn(bytes, pos);
        const header = r.struct();
        const n = Number(get(header, 3));
        pages.push({ header, body: Buffer.from(bytes.subarray(r.pos, r.pos + n)) });
        pos = r.pos + n;
      }
      return { codec, pages, leaf: leaves[c], hadDict: dict !== undefined };
    }),
  );
  return { footer, groups, leaves };
}

/** Put the file back together: pages in order, every offset and chunk size recomputed. */
export function buildFile(f) {
  const parts = [Buffer.from('PAR1')];
  let pos = 4;
  get(f.footer, 4).list.forEach((rg, g) => {
    let rgStart = -1;
    let rgSize = 0;
    get(rg, 1).list.forEach((cc, c) => {
      const chunk = f.groups[g][c];
      const start = pos;
      let dictAt;
      let dataAt;
      for (const p of chunk.pages) {
        const h = encodeStruct(p.header);
        const type = Number(get(p.header, 1));
        if (type === 2 && dictAt === undefined && dataAt === undefined) dictAt = pos;
        else if (dataAt === undefined) dataAt = pos;
        parts.push(h, p.body);
        pos += h.length + p.body.length;
      }
      const md = get(cc, 3);
      set(md, 9, 6, BigInt(dataAt ?? dictAt ?? start));
      if (chunk.hadDict || dictAt !== undefined) set(md, 11, 6, BigInt(dictAt ?? start));
      set(md, 7, 6, BigInt(pos - start));
      // Page indexes and bloom filters are not rebuilt: drop their offsets.
      for (const id of [14, 15]) drop(md, id);
      for (const id of [4, 5, 6, 7]) drop(cc, id);
      set(cc, 2, 6, BigInt(start));
      if (rgStart < 0) rgStart = start;
      rgSize += pos - start;
    });
    if (field(rg, 5)) set(rg, 5, 6, BigInt(rgStart < 0 ? 4 : rgStart));
    if (field(rg, 6)) set(rg, 6, 6, BigInt(rgSize));
  });
  return { parts, pos };
}

function finish({ parts }, footerBytes) {
  const len = Buffer.alloc(4);
  len.writeUInt32LE(footerBytes.length);
  return Buffer.concat([...parts, footerBytes, len, Buffer.from('PAR1')]);
}

// --- page content: levels and values, decompressed -----------------------------------------------
/** The page's parts: `levels` (v2: rep + def bytes, stored uncompressed) and `values` (decompressed), or null for an unknown codec. */
function openPage(chunk, p) {
  const codec = CODECS[chunk.codec];
  if (!codec) return null;
  const type = Number(get(p.header, 1));
  if (type === 3) {
    const dh = get(p.header, 8);
    const ll = Number(get(dh, 5) ?? 0n) + Number(get(dh, 6) ?? 0n);
    const compressed = get(dh, 7) ?? true;
    return { v2: true, levels: p.body.subarray(0, ll), values: compressed ? codec.decompress(p.body.subarray(ll)) : Buffer.from(p.body.subarray(ll)), compressed };
  }
  return { v2: false, levels: Buffer.alloc(0), values: codec.decompress(p.body), compressed: true };
}

function closePage(chunk, p, c) {
  const codec = CODECS[chunk.codec];
  const values = c.compressed ? codec.compress(c.values) : c.values;
  p.body = Buffer.concat([c.levels, values]);
  set(p.header, 2, 5, BigInt(c.levels.length + c.values.length));
  set(p.header, 3, 5, BigInt(p.body.length));
}

/** RLE / bit-packed run headers in `buf` from `start` (`count` values of `width` bits): their offsets. */
function runHeaders(buf, start, end, width, count) {
  const out = [];
  let p = start;
  let k = 0;
  while (p < end && k < count) {
    const at = p;
    let h = 0;
    let m = 1;
    for (let i = 0; i < 5 && p < end; i++) {
      const x = buf[p++];
      h += (x & 0x7f) * m;
      if ((x & 0x80) === 0) break;
      m *= 128;
    }
    out.push({ at, len: p - at, h });
    if (h % 2 === 1) {
      p += ((h - 1) / 2) * width;
      k += ((h - 1) / 2) * 8;
    } else {
      p += (width + 7) >> 3;
      k += h / 2;
    }
  }
  return out;
}

function uvarint(n) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const bitWidth = (max) => (max === 0 ? 0 : 32 - Math.clz32(max));

// --- mutations -----------------------------------------------------------------------------------
function interesting(r, v) {
  const n = typeof v === 'bigint' ? v : 0n;
  const pick = [0n, 1n, -1n, n + 1n, n - 1n, n * 2n, n / 2n, 2n ** 31n - 1n, 2n ** 31n, 2n ** 32n, -(2n ** 31n), 2n ** 53n, 2n ** 63n - 1n, 2n ** 30n, BigInt(Math.floor(r() * Number(n * 2n + 10n)))];
  return pick[Math.floor(r() * pick.length)];
}

/** Every (struct, field) in a Thrift tree, with the path of field ids leading to it. */
function allFields(s, path = [], out = []) {
  for (const f of s.fields) {
    out.push({ s, f, path: [...path, f.id] });
    const walk = (v, p) => {
      if (v && typeof v === 'object' && v.fields) allFields(v, p, out);
      else if (v && typeof v === 'object' && v.list) v.list.forEach((x, i) => walk(x, [...p, i]));
    };
    walk(f.v, [...path, f.id]);
  }
  return out;
}

function mutateThrift(r, root, what) {
  const all = allFields(root);
  const { s, f, path } = all[Math.floor(r() * all.length)];
  const op = Math.floor(r() * 10);
  const where = `${what} field ${path.join('.')}`;
  if (op <= 4 && (f.type === 4 || f.type === 5 || f.type === 6 || f.type === 3)) {
    const old = f.v;
    f.v = interesting(r, f.v);
    if (f.type === 3) f.v = BigInt.asIntN(8, f.v);
    if (f.type === 5) f.v = BigInt.asIntN(32, f.v);
    return `${where} ${old} -> ${f.v}`;
  }
  if (op <= 4 && f.type === 8) {
    const b = Buffer.from(f.v);
    if (b.length > 0 && r() < 0.5) b[Math.floor(r() * b.length)] ^= 1 << Math.floor(r() * 8);
    f.v = r() < 0.3 ? b.subarray(0, Math.floor(r() * b.length)) : b;
    return `${where} binary changed`;
  }
  if (op <= 4 && (f.type === 9 || f.type === 10)) {
    const l = f.v;
    const k = Math.floor(r() * 4);
    if (k === 0 && l.list.length > 0) l.list.splice(Math.floor(r() * l.list.length), 1);
    else if (k === 1 && l.list.length > 0) l.list.push(structuredClone(l.list[Math.floor(r() * l.list.length)]));
    else l.claim = Number([2n ** 30n, BigInt(l.list.length + 1), BigInt(Math.max(0, l.list.length - 1)), 0n][Math.floor(r() * 4)]);
    return `${where} list ${['drop', 'dup', 'claim', 'claim'][k]} (${l.list.length}, claim ${l.claim ?? '-'})`;
  }
  if (op === 5) {
    f.id += r() < 0.5 ? 1 : 16 + Math.floor(r() * 100);
    s.fields.sort((a, b) => a.id - b.id);
    return `${where} id -> ${f.id}`;
  }
  if (op === 6) {
    f.wire = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15][Math.floor(r() * 15)];
    return `${where} wire type ${f.type} -> ${f.wire}`;
  }
  if (op === 7) {
    s.fields.splice(s.fields.indexOf(f), 1);
    return `${where} removed`;
  }
  if (f.type === 1 || f.type === 2) {
    f.v = !f.v;
    return `${where} bool flipped`;
  }
  f.v = interesting(r, 0n);
  f.type = 6;
  return `${where} replaced by an i64 ${f.v}`;
}

const PAGE_FIELDS = [[1], [2], [3], [5, 1], [5, 2], [5, 3], [5, 4], [8, 1], [8, 2], [8, 3], [8, 4], [8, 5], [8, 6], [7, 1], [7, 2]];

function mutatePageHeader(r, p) {
  const k = Math.floor(r() * 10);
  if (k < 7) {
    const paths = PAGE_FIELDS.filter((path) => (path.length === 1 ? field(p.header, path[0]) : field(get(p.header, path[0]), path[1])));
    const path = paths[Math.floor(r() * paths.length)];
    const s = path.length === 1 ? p.header : get(p.header, path[0]);
    const f = field(s, path.at(-1));
    const old = f.v;
    if (path.length === 1 && path[0] === 1) f.v = BigInt([0, 1, 2, 3, 7][Math.floor(r() * 5)]);
    else if (path.at(-1) === 2 && path.length === 2 && path[0] !== 8) f.v = BigInt([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10][Math.floor(r() * 11)]);
    else if (path[0] === 8 && path[1] === 4) f.v = BigInt([0, 2, 3, 5, 6, 7, 8, 9][Math.floor(r() * 8)]);
    else f.v = BigInt.asIntN(32, interesting(r, f.v));
    return `page header ${path.join('.')} ${old} -> ${f.v}`;
  }
  if (k === 7 && get(p.header, 8)) {
    const dh = get(p.header, 8);
    set(dh, 7, 1, !(get(dh, 7) ?? true));
    return 'page header v2 is_compressed flipped';
  }
  return mutateThrift(r, p.header, 'page header');
}

/**
 * Set by a mutation that hits bytes our reader deliberately does not read (see ignoredField), reset
 * for every attempt of makeCase.
 */
let ruleOfCase = null;

/** Change level bytes, a run header, dictionary indices or a value inside a page's decompressed content. */
function mutatePageContent(r, chunk, p) {
  const c = openPage(chunk, p);
  if (!c) return null;
  const type = Number(get(p.header, 1));
  const { maxDef, maxRep } = chunk.leaf;
  let what = '';
  // Sections of the content: [start, end) of each level run area, then the values.
  const sections = [];
  let v = c.values;
  if (type === 0) {
    let at = 0;
    for (const [name, max] of [['rep', maxRep], ['def', maxDef]]) {
      if (max === 0 || at + 4 > v.length) continue;
      const n = v.readUInt32LE(at);
      sections.push({ name, lenAt: at, start: at + 4, end: at + 4 + n, width: bitWidth(max), max, buf: 'values' });
      at += 4 + n;
    }
    sections.push({ name: 'values', start: at, end: v.length, buf: 'values' });
  } else if (type === 3) {
    const dh = get(p.header, 8);
    const repLen = Number(get(dh, 6) ?? 0n);
    const defLen = Number(get(dh, 5) ?? 0n);
    if (maxRep > 0) sections.push({ name: 'rep', start: 0, end: repLen, width: bitWidth(maxRep), max: maxRep, buf: 'levels' });
    if (maxDef > 0) sections.push({ name: 'def', start: repLen, end: repLen + defLen, width: bitWidth(maxDef), max: maxDef, buf: 'levels' });
    sections.push({ name: 'values', start: 0, end: v.length, buf: 'values' });
  } else sections.push({ name: 'values', start: 0, end: v.length, buf: 'values' });
  const sec = sections[Math.floor(r() * sections.length)];
  let buf = Buffer.from(c[sec.buf]);
  const count = Number(get(get(p.header, 5) ?? get(p.header, 8) ?? get(p.header, 7), 1) ?? 0n);
  const enc = Number(get(get(p.header, 5), 2) ?? get(get(p.header, 8), 4) ?? -1n);
  const splice = (at, len, bytes) => {
    buf = Buffer.concat([buf.subarray(0, at), bytes, buf.subarray(at + len)]);
    return bytes.length - len;
  };
  if (sec.name !== 'values') {
    const runs = runHeaders(buf, sec.start, sec.end, sec.width, count);
    const k = Math.floor(r() * 4);
    if (k === 0 && runs.length > 0) {
      const run = runs[Math.floor(r() * runs.length)];
      const h = [0, 1, 2 * 2 ** 31, 2 * (run.h >> 1) + 2, 2 * count + 2, run.h ^ 1, 2 ** 31 + 1][Math.floor(r() * 7)];
      const d = splice(run.at, run.len, uvarint(h));
      if (sec.lenAt !== undefined && r() < 0.8) buf.writeUInt32LE(buf.readUInt32LE(sec.lenAt) + d, sec.lenAt);
      what = `${sec.name} run header ${run.h} -> ${h}`;
    } else if (k === 1 && runs.length > 0) {
      // An RLE run's value above the maximum level.
      const run = runs.find((x) => x.h % 2 === 0);
      if (run && sec.width > 0) {
        buf[run.at + run.len] = sec.max + 1 + Math.floor(r() * 3);
        what = `${sec.name} RLE value above max ${sec.max}`;
      }
    } else if (k === 2 && sec.lenAt !== undefined) {
      const n = [0, 1, 2 ** 31, 2 ** 32 - 1, buf.readUInt32LE(sec.lenAt) + 1, Math.max(0, buf.readUInt32LE(sec.lenAt) - 1)][Math.floor(r() * 6)];
      buf.writeUInt32LE(n >>> 0, sec.lenAt);
      what = `${sec.name} levels length -> ${n}`;
    }
    if (!what && sec.end > sec.start) {
      const at = sec.start + Math.floor(r() * (sec.end - sec.start));
      buf[at] ^= 1 << Math.floor(r() * 8);
      what = `${sec.name} level byte ${at - sec.start} flipped`;
    }
  } else {
    const dictEncoded = type !== 2 && (enc === 2 || enc === 8);
    const k = Math.floor(r() * 4);
    if (dictEncoded && sec.end > sec.start && k < 2) {
      if (k === 0) {
        const w = [0, 1, buf[sec.start] + 1, Math.max(0, buf[sec.start] - 1), 32, 33, 255][Math.floor(r() * 7)];
        what = `index bit width ${buf[sec.start]} -> ${w}`;
        buf[sec.start] = w;
      } else {
        const width = buf[sec.start];
        const runs = runHeaders(buf, sec.start + 1, sec.end, width, count);
        const run = runs.find((x) => x.h % 2 === 0);
        if (run && width > 0) {
          // An index past the dictionary (all ones in the run's value bytes).
          for (let b = 0; b < (width + 7) >> 3; b++) buf[run.at + run.len + b] = 0xff;
          what = 'an RLE index run set to all ones';
        } else if (runs.length > 0) {
          const rr = runs[Math.floor(r() * runs.length)];
          splice(rr.at, rr.len, uvarint([0, 2 * 2 ** 31, 2 * count + 2, rr.h + 2][Math.floor(r() * 4)]));
          what = 'an index run header changed';
        }
      }
    } else if (k === 2 && sec.end - sec.start >= 4 && (chunk.leafKind === 'string' || r() < 0.5)) {
      const n = [0, 2 ** 31, 2 ** 32 - 1, buf.readUInt32LE(sec.start) + 1, 100000][Math.floor(r() * 5)];
      buf.writeUInt32LE(n >>> 0, sec.start);
      what = `first value's 4 bytes -> ${n}`;
    } else if (k === 3) {
      const n = 1 + Math.floor(r() * 3);
      buf = r() < 0.5 ? buf.subarray(0, Math.max(sec.start, buf.length - n)) : Buffer.concat([buf, Buffer.alloc(n, 7)]);
      what = `values ${buf.length < c[sec.buf].length ? 'cut' : 'extended'} by ${n} bytes`;
      // A dictionary-encoded page cut down to no index bytes at all, not even the bit width.
      if (dictEncoded && buf.length === sec.start && buf.length < c[sec.buf].length) ruleOfCase = 'index-section-of-a-page-without-values';
    }
    if (!what && sec.end > sec.start) {
      const at = sec.start + Math.floor(r() * (sec.end - sec.start));
      buf[at] ^= 1 << Math.floor(r() * 8);
      what = `value byte ${at - sec.start} flipped`;
    }
  }
  if (!what) return null;
  c[sec.buf] = buf;
  closePage(chunk, p, c);
  // v2 level lengths follow the levels (unless the mutation was of the lengths themselves).
  return `page content: ${what}`;
}

/** A string value replaced by JSON nested `depth` deep (PLAIN string pages only). */
function nestJson(r, chunk, p) {
  const type = Number(get(p.header, 1));
  const enc = Number(get(get(p.header, 5), 2) ?? get(get(p.header, 8), 4) ?? -1n);
  if (chunk.leaf.maxRep > 0 || !(type === 2 || ((type === 0 || type === 3) && enc === 0)) || chunk.leafKind !== 'string') return null;
  const c = openPage(chunk, p);
  if (!c) return null;
  let at = 0;
  if (type === 0 && chunk.leaf.maxDef > 0) at = 4 + c.values.readUInt32LE(0);
  if (at + 4 > c.values.length) return null;
  const old = c.values.readUInt32LE(at);
  const depth = 100000;
  const s = Buffer.from(r() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(s.length);
  c.values = Buffer.concat([c.values.subarray(0, at), len, s, c.values.subarray(at + 4 + old)]);
  closePage(chunk, p, c);
  return `first string value replaced by JSON nested ${depth} deep`;
}

function flipFrame(r, chunk, p) {
  if (chunk.codec === 0 || p.body.length === 0) return null;
  const b = Buffer.from(p.body);
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) b[Math.floor(r() * b.length)] ^= 1 << Math.floor(r() * 8);
  p.body = b;
  return `compressed bytes: ${n} bits flipped`;
}

const KINDS = ['page-header', 'page-header', 'page-content', 'page-content', 'page-content', 'footer', 'footer', 'frame', 'nested-json'];

/** Case `id` of `seed`: the base file it mutates, the bytes, and what was changed. */
export function makeCase(bases, seed, id) {
  const r = rng((seed * 1000003 + id * 7919) >>> 0);
  const base = bases[Math.floor(r() * bases.length)];
  for (let attempt = 0; ; attempt++) {
    const f = parseFile(base.bytes);
    f.groups.forEach((g) => g.forEach((ch, c) => (ch.leafKind = base.leafKinds[c])));
    const kind = attempt > 20 ? 'footer' : KINDS[Math.floor(r() * KINDS.length)];
    ruleOfCase = null;
    const chunks = f.groups.flat();
    const chunk = chunks[Math.floor(r() * chunks.length)];
    const p = chunk.pages[Math.floor(r() * chunk.pages.length)];
    let what = null;
    if (kind === 'page-header') what = mutatePageHeader(r, p);
    else if (kind === 'page-content') what = mutatePageContent(r, chunk, p);
    else if (kind === 'frame') what = flipFrame(r, chunk, p);
    else if (kind === 'nested-json') what = nestJson(r, chunk, p);
    const layout = buildFile(f);
    if (kind === 'footer') what = mutateThrift(r, f.footer, 'footer');
    if (what === null) continue;
    const where = kind === 'footer' ? '' : ` (column ${chunk.leaf.path})`;
    return { id, base: base.name, kind, what: what + where, rule: ruleOfCase, bytes: finish(layout, encodeStruct(f.footer)) };
  }
}

/**
 * `bytes` with its footer changed by `edit(footer, { get, set, drop, field })` (a Thrift tree whose
 * fields are `{ id, type, v, wire? }`, integers as BigInt), every offset recomputed: for tests that
 * need one precise footer fault.
 */
export function withFooter(bytes, edit) {
  const f = parseFile(bytes);
  const layout = buildFile(f);
  edit(f.footer, { get, set, drop, field });
  return finish(layout, encodeStruct(f.footer));
}

/**
 * `bytes` with its pages and footer changed by `edit(file, { get, set, drop, field })` (`file`: what
 * parseFile returns; a page's `body` and `header` may be replaced), every offset recomputed: for
 * generators of hand-made hostile files.
 */
export function withPages(bytes, edit) {
  const f = parseFile(bytes);
  edit(f, { get, set, drop, field });
  const layout = buildFile(f);
  return finish(layout, encodeStruct(f.footer));
}

// --- base files ----------------------------------------------------------------------------------
export async function baseFiles(dir) {
  const pw = await import('parquet-wasm');
  const out = [];
  for (const name of ['forks.parquet', 'labels.parquet', 'sources/open-swe-traces.parquet']) out.push({ name, bytes: readFileSync(join(ROOT, 'fixtures', name)) });
  const forks = readFileSync(join(ROOT, 'fixtures', 'forks.parquet'));
  const variants = [
    { name: 'wasm-v1-plain-uncompressed', version: 0, compression: 'UNCOMPRESSED', dictionary: false },
    { name: 'wasm-v1-dict-zstd', version: 0, compression: 'ZSTD', dictionary: true },
    { name: 'wasm-v2-dict-snappy', version: 1, compression: 'SNAPPY', dictionary: true },
    { name: 'wasm-v2-plain-zstd', version: 1, compression: 'ZSTD', dictionary: false },
    { name: 'wasm-v2-dict-uncompressed-small-pages', version: 1, compression: 'UNCOMPRESSED', dictionary: true, small: true },
    { name: 'wasm-v1-plain-snappy-small-pages', version: 0, compression: 'SNAPPY', dictionary: false, small: true },
  ];
  for (const v of variants) {
    let props = new pw.WriterPropertiesBuilder().setWriterVersion(v.version).setCompression(pw.Compression[v.compression]).setDictionaryEnabled(v.dictionary);
    if (v.small) props = props.setDataPageSizeLimit(512).setWriteBatchSize(1).setMaxRowGroupSize(5);
    out.push({ name: v.name, bytes: Buffer.from(pw.writeParquet(pw.readParquet(forks), props.build())) });
  }
  // The leaves' kinds and the columns both readers are asked for, from our reader on the clean file.
  const { fileMeta, footer } = await import(new URL('dist/parquet/reader.js', `file://${ROOT}/`).href);
  for (const b of out) {
    const path = join(dir, `base-${b.name.replace(/\W+/g, '-')}`);
    writeFileSync(path, b.bytes);
    b.columns = fileMeta(path).fields.filter((fl) => fl.type !== 'Unsupported').map((fl) => fl.name);
    b.leafKinds = footer(path).leaves.map((l) => l?.kind ?? null);
  }
  return out;
}

// --- running cases -------------------------------------------------------------------------------
/** A long-lived reader process; a case that outlives `timeoutMs` kills it (and the next case gets a new one). */
class Reader {
  constructor(which) {
    this.which = which;
    this.child = null;
    this.seq = 0;
  }
  async start() {
    this.child = fork(CHILD, [this.which], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv: [] });
    this.stderr = '';
    this.child.stderr.on('data', (d) => (this.stderr = (this.stderr + d).slice(-2000)));
    await new Promise((resolve, reject) => {
      this.child.once('message', (m) => (m.ready ? resolve() : reject(new Error('child did not start'))));
      this.child.once('exit', (code) => reject(new Error(`${this.which} reader exited at start (${code}): ${this.stderr}`)));
    });
  }
  async run(path, columns, timeoutMs) {
    if (!this.child) await this.start();
    const child = this.child;
    const id = ++this.seq;
    return new Promise((resolve) => {
      const done = (v) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(v);
      };
      const onMessage = (m) => {
        if (m.id !== id) return;
        if (m.maxRssKiB > RSS_LIMIT_KIB) {
          // The peak is per process: start a fresh one so the next case is measured alone.
          this.kill();
          m.overMemory = true;
        }
        done(m);
      };
      const onExit = (code, signal) => {
        this.child = null;
        done({ kind: 'abort', message: `exit ${code ?? signal}: ${this.stderr.slice(-600)}` });
      };
      const timer = setTimeout(() => {
        this.kill();
        done({ kind: 'hang', message: `no answer within ${timeoutMs} ms` });
      }, timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ id, path, columns });
    });
  }
  kill() {
    if (this.child) {
      this.child.removeAllListeners('exit');
      this.child.kill('SIGKILL');
      this.child = null;
    }
  }
}

/** The one-line corrupt-file error the CLI prints for exit 5 (or a value too long for a string, also exit 5). */
const CLEAN = /^[^\n]+: (row group \d+, (column [^\n:]+: )?)?(corrupt parquet data \([^\n]*\)|a string value of [\d,]+ bytes, longer than the longest JavaScript string \([^\n]*\))$/;

/** Why `a` and `b` (readings of the same columns: groups, full, part) differ, or null when they do not. */
function differs(a, b) {
  if (!isDeepStrictEqual(a.groups, b.groups)) return `row groups ${a.groups} vs ${b.groups}`;
  for (let g = 0; g < a.groups.length; g++) {
    for (const col of Object.keys(a.full[g])) {
      if (!isDeepStrictEqual(a.full[g][col], b.full[g][col])) return `row group ${g}, column ${col}: different values`;
      if (!isDeepStrictEqual(a.part[g][col], b.part[g][col])) return `row group ${g}, column ${col}: different values when reading every other row`;
    }
  }
  return null;
}

/** Ours as DuckDB's to_json would give it: the same JSON round trip the duck child applies to its values. */
const asJson = (v) => JSON.parse(JSON.stringify(v));

/**
 * Compare the readers' answers for one case: the outcome and, for a failure, why. `ref` is
 * parquet-wasm, `duck` DuckDB; both are asked only when ours returned rows, DuckDB only when
 * parquet-wasm refused the file or read other rows (it is the tiebreaker).
 */
export function judge(c, path, ours, ref, duck = null, base = null) {
  if (ours.overMemory) return { outcome: 'FAIL:memory', why: `peak RSS ${Math.round(ours.maxRssKiB / 1024)} MiB` };
  if (ours.kind === 'hang') return { outcome: 'FAIL:hang', why: ours.message };
  if (ours.kind === 'abort') return { outcome: 'FAIL:abort', why: ours.message };
  if (ours.kind === 'exception') return { outcome: 'FAIL:exception', why: ours.message };
  if (ours.kind === 'unsupported') return { outcome: 'unsupported', why: ours.message };
  if (ours.kind === 'user-error') {
    if (ours.exitCode !== 5 || !ours.message.startsWith(`${path}: `) || !CLEAN.test(ours.message)) return { outcome: 'FAIL:unclean-error', why: `exit ${ours.exitCode}: ${ours.message}` };
    return { outcome: 'clean-error', why: ours.message };
  }
  // Ours returned rows.
  const wasm = ref.kind === 'ok' ? differs(ours.value, ref.value) : `${ref.kind}: ${ref.message?.split('\n')[0]}`;
  if (wasm === null) return { outcome: 'agreed', why: '' };
  if (!duck) return { outcome: 'needs-duckdb', why: wasm };
  const duckWhy = duck.kind === 'ok' ? differs(asJson(ours.value), duck.value) : `${duck.kind}: ${duck.message?.split('\n')[0]}`;
  if (duckWhy === null) {
    return { outcome: ref.kind === 'ok' ? 'agreed-duckdb-wasm-differed' : 'agreed-duckdb-wasm-refused', why: `parquet-wasm: ${wasm}` };
  }
  const rule = ignoredField(c, ours, base);
  if (rule) return { outcome: `ignored-field:${rule}`, why: `parquet-wasm: ${wasm}; DuckDB: ${duckWhy}` };
  return { outcome: ref.kind === 'ok' || duck.kind === 'ok' ? 'FAIL:differ' : 'FAIL:accepted-both-refused', why: `parquet-wasm: ${wasm}; DuckDB: ${duckWhy}` };
}

/**
 * Mutations of a field our reader rightly does not read, where both other readers refuse the file
 * (or read other rows) because they do read it. Each rule names the field and says why our rows are
 * still the file's rows; anything not matched here is a failure.
 */
function ignoredField(c, ours, base) {
  // The index bit width of a dictionary-encoded page whose values are all null: there is no index
  // to read, and writers differ on whether they write the byte (parquet-rs does, others do not), so
  // our reader skips whatever the section holds. DuckDB and parquet-wasm read the byte anyway and
  // fail on a page cut before it. The rows must then be the unmutated file's, on which all three
  // readers agree: a page that did have values would need its indices, and not read the same.
  if (c?.rule === 'index-section-of-a-page-without-values' && base && differs(ours.value, base) === null) return 'index bit width of a page without values';
  // ColumnMetaData field 17, geospatial_statistics (bounding box and WKB geometry types of a geometry
  // column), made by a mutation (another field's id changed to 17) or changed inside: our reader
  // reads no statistics of a string column and skips a field it does not know, as Thrift's
  // generated decoders do. DuckDB checks the geometry type codes it holds, parquet-wasm the
  // types of its fields; no row depends on them, and the rows must be the unmutated file's.
  if (/^footer field 4\.\d+\.1\.\d+\.3\.(\d+ id -> 17$|17\.|17 removed$|17 replaced )/.test(c?.what ?? '') && base && differs(ours.value, base) === null) return 'geospatial statistics of a column chunk';
  return null;
}

/**
 * What the other readers make of a file ours refused (`others`): `read` when a reader returned rows
 * (and so would the wasm or duckdb engine, but for the check it runs first), else `refused`; and
 * whether that check (checkPageHeaders with levels, in its own process) refuses the file.
 */
async function othersOnRefused(path, columns, ref, duck, check, timeoutMs) {
  const verdict = (r) => (r.kind === 'ok' ? 'read' : 'refused');
  const c = await check.run(path, columns, timeoutMs);
  return { wasm: verdict(await ref.run(path, columns, timeoutMs)), duckdb: verdict(await duck.run(path, columns, timeoutMs)), checked: c.kind === 'user-error' ? 'refused' : c.kind === 'ok' ? 'passed' : c.kind };
}

/**
 * Run `cases` cases of `seed`. Returns the summary and the failures (each with its seed and case
 * number, enough to rebuild the file with makeCase). `keep`: a folder that keeps failing files.
 * `others`: also ask parquet-wasm, DuckDB and the engines' pre-check about every file ours refused
 * (`refused`: one entry per such case).
 */
export async function runFuzz({ cases, seed, timeoutMs = 20000, keep = null, log = () => {}, others = false }) {
  const dir = mkdtempSync(join(tmpdir(), 'dm-pq-fuzz-'));
  const ours = new Reader('ours');
  const ref = new Reader('ref');
  const duck = new Reader('duck');
  const check = new Reader('check');
  const refused = [];
  const counts = {};
  const byKind = {};
  const failures = [];
  const lenient = [];
  let baseline = {};
  /** Ours on each unmutated rebuild (DuckDB and parquet-wasm agreed): what an ignored field leaves. */
  const baseRows = {};
  try {
    const bases = await baseFiles(dir);
    // Taken apart and put back together unchanged, every base must read the same in both readers:
    // otherwise a difference in a case could be the harness's.
    for (const b of bases) {
      const f = parseFile(b.bytes);
      const path = join(dir, `rebuilt-${b.name.replace(/\W+/g, '-')}`);
      writeFileSync(path, finish(buildFile(f), encodeStruct(f.footer)));
      const a = await ours.run(path, b.columns, timeoutMs);
      const j = judge(null, path, a, await ref.run(path, b.columns, timeoutMs));
      // DuckDB too, always: its values go through to_json, ours through the same JSON round trip.
      const d = a.kind === 'ok' ? await duck.run(path, b.columns, timeoutMs) : null;
      const dj = d ? (d.kind === 'ok' ? differs(asJson(a.value), d.value) : `${d.kind}: ${d.message}`) : null;
      baseline[b.name] = j.outcome === 'unsupported' ? `unsupported (${j.why})` : j.outcome;
      if (j.outcome !== 'agreed' && j.outcome !== 'unsupported') throw new Error(`the unmutated rebuild of ${b.name} does not read the same: ${j.outcome} ${j.why}`);
      if (dj) throw new Error(`the unmutated rebuild of ${b.name} does not read the same in DuckDB: ${dj}`);
      if (a.kind === 'ok') baseRows[b.name] = a.value;
    }
    log(`baseline: ${Object.entries(baseline).map(([k, v]) => `${k} ${v}`).join('; ')}`);
    for (let id = 0; id < cases; id++) {
      const c = makeCase(bases, seed, id);
      const path = join(dir, `case-${id}.parquet`);
      writeFileSync(path, c.bytes);
      const columns = bases.find((b) => b.name === c.base).columns;
      const a = await ours.run(path, columns, timeoutMs);
      // The reference is only needed when ours returned rows.
      const b = a.kind === 'ok' ? await ref.run(path, columns, timeoutMs) : null;
      let j = judge(c, path, a, b);
      if (j.outcome === 'needs-duckdb') j = judge(c, path, a, b, await duck.run(path, columns, timeoutMs), baseRows[c.base]);
      counts[j.outcome] = (counts[j.outcome] ?? 0) + 1;
      (byKind[c.kind] ??= {})[j.outcome] = (byKind[c.kind][j.outcome] ?? 0) + 1;
      if (others && j.outcome === 'clean-error') refused.push({ id, kind: c.kind, what: c.what, why: j.why.replace(/^.*?corrupt parquet data \(/, '').replace(/\)$/, ''), ...(await othersOnRefused(path, columns, ref, duck, check, timeoutMs)) });
      if (j.outcome.startsWith('FAIL')) {
        failures.push({ seed, id, base: c.base, kind: c.kind, what: c.what, outcome: j.outcome, why: j.why });
        if (keep) {
          mkdirSync(keep, { recursive: true });
          writeFileSync(join(keep, `seed${seed}-case${id}.parquet`), c.bytes);
        }
        log(`FAIL seed ${seed} case ${id} [${c.base}] ${c.what}: ${j.outcome} ${j.why.split('\n').slice(0, 3).join(' | ')}`);
      } else if (j.outcome !== 'agreed' && j.outcome !== 'clean-error' && j.outcome !== 'unsupported') lenient.push({ id, base: c.base, what: c.what, outcome: j.outcome, why: j.why });
      rmSync(path, { force: true });
    }
  } finally {
    ours.kill();
    ref.kill();
    duck.kill();
    check.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return { cases, seed, counts, byKind, failures, lenient, baseline, refused };
}

// --- command line: npm run fuzz -- --cases N --seed S [--keep DIR] [--timeout MS] [--all] ---------
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const cases = Number(arg('cases', 500));
  const seed = Number(arg('seed', 1));
  const started = Date.now();
  const others = process.argv.includes('--others');
  const res = await runFuzz({ cases, seed, timeoutMs: Number(arg('timeout', 20000)), keep: arg('keep', null), log: (l) => console.log(l), others });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\nparquet fuzz: seed ${seed}, ${res.cases} cases in ${secs} s`);
  for (const [k, n] of Object.entries(res.counts).sort()) console.log(`  ${k.padEnd(30)} ${n}`);
  console.log('by mutation kind:');
  for (const [kind, o] of Object.entries(res.byKind).sort()) console.log(`  ${kind.padEnd(14)} ${Object.entries(o).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (res.lenient.length > 0) {
    // Every case ours read where parquet-wasm did not agree, with DuckDB's verdict (--all: every one).
    const shown = process.argv.includes('--all') ? res.lenient : res.lenient.slice(0, 10);
    console.log(`accepted by ours, parquet-wasm refused or differed (${res.lenient.length}; ${shown.length} shown):`);
    for (const l of shown) console.log(`  case ${l.id} [${l.base}] ${l.what}: ${l.outcome}: ${l.why}`);
    const byReason = {};
    for (const l of res.lenient) {
      const reason = `${l.outcome} / ${l.what.startsWith('footer') ? 'footer' : l.what.split(':')[0]} / ${l.why.replace(/\d+/g, 'N').slice(0, 70)}`;
      byReason[reason] = (byReason[reason] ?? 0) + 1;
    }
    console.log('  by verdict / what was changed / what parquet-wasm said:');
    for (const [k, n] of Object.entries(byReason).sort((a, b) => b[1] - a[1])) console.log(`    ${String(n).padStart(4)}  ${k}`);
  }
  if (others) {
    // Files ours refused: which other reader returns rows for them, and whether the pre-check of the
    // wasm and duckdb engines stops them there (the rest those engines read, rows that are not the file's).
    const tally = {};
    for (const r of res.refused) {
      const k = `parquet-wasm ${r.wasm}, DuckDB ${r.duckdb}, pre-check ${r.checked}`;
      tally[k] = (tally[k] ?? 0) + 1;
    }
    console.log(`refused by ours (${res.refused.length}), what the others do:`);
    for (const [k, n] of Object.entries(tally).sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${k}`);
    const through = res.refused.filter((r) => r.checked === 'passed' && (r.wasm === 'read' || r.duckdb === 'read'));
    const byWhy = {};
    for (const r of through) {
      const k = `${r.wasm === 'read' ? 'wasm' : '-'}/${r.duckdb === 'read' ? 'duckdb' : '-'}: ${r.why.replace(/\d+/g, 'N').slice(0, 80)}`;
      byWhy[k] = (byWhy[k] ?? 0) + 1;
    }
    console.log(`read by another reader and not stopped by the pre-check (${through.length}), by what ours says:`);
    for (const [k, n] of Object.entries(byWhy).sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${k}`);
  }
  console.log(`failures: ${res.failures.length}`);
  process.exitCode = res.failures.length > 0 ? 1 : 0;
}
