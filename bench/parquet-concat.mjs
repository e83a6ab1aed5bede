// Concatenates parquet files that share one schema into a single parquet file by copying their
// row groups byte for byte and writing one merged footer (offsets shifted). Used by gen.mjs so
// that every row group holds exactly --row-group-size rows while rows stream through DuckDB in
// bounded memory (DuckDB's COPY from a streamed JSON source cuts row groups at arbitrary sizes).
// Only what DuckDB writes is supported: no page indexes, no encryption (checked, else it throws).
import { openSync, readSync, writeSync, closeSync, fstatSync, mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// --- Thrift compact protocol: generic decode/encode of structs as [{id, type, value}] ---------
const T = { STOP: 0, TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 };

class Reader {
  constructor(buf) { this.b = buf; this.p = 0; }
  byte() { return this.b[this.p++]; }
  varint() { let r = 0n, s = 0n, x; do { x = this.b[this.p++]; r |= BigInt(x & 0x7f) << s; s += 7n; } while (x & 0x80); return r; }
  zigzag() { const v = this.varint(); return (v >> 1n) ^ -(v & 1n); }
  value(type) {
    switch (type) {
      case T.TRUE: return true;
      case T.FALSE: return false;
      case T.BYTE: return this.byte();
      case T.I16: case T.I32: case T.I64: return this.zigzag();
      case T.DOUBLE: { const v = this.b.readDoubleLE(this.p); this.p += 8; return v; }
      case T.BINARY: { const n = Number(this.varint()); const v = this.b.subarray(this.p, this.p + n); this.p += n; return v; }
      case T.LIST: case T.SET: {
        const h = this.byte();
        let n = h >> 4; const et = h & 0x0f;
        if (n === 15) n = Number(this.varint());
        const items = [];
        for (let i = 0; i < n; i++) items.push(et === T.TRUE || et === T.FALSE ? this.byte() === 1 : this.value(et));
        return { et, items };
      }
      case T.STRUCT: return this.struct();
      default: throw new Error(`parquet-concat: unsupported thrift type ${type}`);
    }
  }
  struct() {
    const fields = [];
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === T.STOP) return fields;
      const type = h & 0x0f;
      const d = h >> 4;
      const id = d ? last + d : Number(this.zigzag());
      last = id;
      fields.push({ id, type, value: this.value(type) });
    }
  }
}

class Writer {
  constructor() { this.parts = []; }
  bytes(arr) { this.parts.push(Buffer.from(arr)); }
  varint(v) { v = BigInt(v); const out = []; do { let x = Number(v & 0x7fn); v >>= 7n; if (v) x |= 0x80; out.push(x); } while (v); this.bytes(out); }
  zigzag(v) { v = BigInt(v); this.varint((v << 1n) ^ (v >> 63n)); }
  value(type, v) {
    switch (type) {
      case T.TRUE: case T.FALSE: return;
      case T.BYTE: return this.bytes([v]);
      case T.I16: case T.I32: case T.I64: return this.zigzag(v);
      case T.DOUBLE: { const b = Buffer.alloc(8); b.writeDoubleLE(v); this.parts.push(b); return; }
      case T.BINARY: this.varint(v.length); this.parts.push(Buffer.from(v)); return;
      case T.LIST: case T.SET: {
        const n = v.items.length;
        if (n < 15) this.bytes([(n << 4) | v.et]); else { this.bytes([0xf0 | v.et]); this.varint(n); }
        for (const it of v.items) { if (v.et === T.TRUE || v.et === T.FALSE) this.bytes([it ? 1 : 2]); else this.value(v.et, it); }
        return;
      }
      case T.STRUCT: return this.struct(v);
      default: throw new Error(`parquet-concat: unsupported thrift type ${type}`);
    }
  }
  struct(fields) {
    let last = 0;
    for (const f of [...fields].sort((a, b) => a.id - b.id)) {
      const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type;
      const d = f.id - last;
      if (d > 0 && d <= 15) this.bytes([(d << 4) | type]); else { this.bytes([type]); this.zigzag(f.id); }
      last = f.id;
      this.value(type, f.value);
    }
    this.bytes([T.STOP]);
  }
  buffer() { return Buffer.concat(this.parts); }
}

const field = (s, id) => s.find((f) => f.id === id);
function shift(s, id, delta) { const f = field(s, id); if (f) f.value += delta; }

function readFooter(fd) {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(8);
  readSync(fd, tail, 0, 8, size - 8);
  if (tail.toString('latin1', 4) !== 'PAR1') throw new Error('parquet-concat: not a parquet file');
  const len = tail.readUInt32LE(0);
  const buf = Buffer.alloc(len);
  readSync(fd, buf, 0, len, size - 8 - len);
  return { meta: new Reader(buf).struct(), dataEnd: size - 8 - len };
}

/** Incremental concatenation: append(path) copies a file's row groups, finish() writes the footer. */
export class ParquetConcat {
  constructor(out) {
    this.fd = openSync(out, 'w');
    writeSync(this.fd, Buffer.from('PAR1'));
    this.pos = 4; this.merged = null; this.groups = []; this.rows = 0n;
    this.chunk = Buffer.alloc(8 << 20);
  }

  append(path) {
    const fd = openSync(path, 'r');
    try {
      const { meta, dataEnd } = readFooter(fd);
      if (field(meta, 8) || field(meta, 9)) throw new Error('parquet-concat: encrypted files are not supported');
      const delta = BigInt(this.pos - 4);
      for (const rg of field(meta, 4)?.value.items ?? []) {
        shift(rg, 5, delta);
        for (const cc of field(rg, 1).value.items) {
          if (field(cc, 4) || field(cc, 6) || field(cc, 1)) throw new Error('parquet-concat: page indexes / external column chunks are not supported');
          shift(cc, 2, delta);
          const md = field(cc, 3)?.value;
          if (md) for (const id of [9, 10, 11, 14]) shift(md, id, delta);
        }
        const ord = field(rg, 7);
        if (ord) ord.value = BigInt(this.groups.length);
        this.groups.push(rg);
      }
      this.rows += field(meta, 3).value;
      if (!this.merged) this.merged = meta;
      for (let off = 4; off < dataEnd;) {
        const n = readSync(fd, this.chunk, 0, Math.min(this.chunk.length, dataEnd - off), off);
        writeSync(this.fd, this.chunk, 0, n);
        off += n; this.pos += n;
      }
    } finally { closeSync(fd); }
  }

  finish() {
    try {
      if (!this.merged) throw new Error('parquet-concat: no inputs');
      field(this.merged, 3).value = this.rows;
      field(this.merged, 4).value.items = this.groups;
      const w = new Writer();
      w.struct(this.merged);
      const footer = w.buffer();
      const tail = Buffer.alloc(8);
      tail.writeUInt32LE(footer.length, 0);
      tail.write('PAR1', 4, 'latin1');
      writeSync(this.fd, footer);
      writeSync(this.fd, tail);
    } finally { this.close(); }
  }

  close() { if (this.fd !== null) { closeSync(this.fd); this.fd = null; } }
}

/** Write `inputs` (paths, same schema, in order) as one parquet file `out`. */
export function concatParquet(inputs, out) {
  const c = new ParquetConcat(out);
  try { for (const p of inputs) c.append(p); } catch (e) { c.close(); throw e; }
  c.finish();
}

/** For tests/inspection: decoded footer of one file. */
export function readParquetFooter(path) {
  const fd = openSync(path, 'r');
  try { return readFooter(fd).meta; } finally { closeSync(fd); }
}

/**
 * Split `input` into `parts` files (`<outDir>/part-<k>.parquet`) of consecutive whole row groups,
 * byte for byte (no re-encoding). Used to feed the 4x-rows twin to readers limited to files under
 * 4 GiB (parquet-wasm is 32-bit). Returns the paths written.
 */
export function splitParquet(input, outDir, parts) {
  const fd = openSync(input, 'r');
  const written = [];
  try {
    const first = readFooter(fd);
    const chunkStart = (cc) => {
      if (field(cc, 4) || field(cc, 6) || field(cc, 1)) throw new Error('parquet-concat: page indexes / external column chunks are not supported');
      const md = field(cc, 3).value;
      return [9, 10, 11].map((id) => field(md, id)?.value).filter((v) => v !== undefined).reduce((x, y) => (y < x ? y : x));
    };
    // Byte ranges: a row group runs from its first page to the next row group's first page (or the
    // footer), which includes bloom filters written after it (as by DuckDB and by concatParquet).
    const starts = field(first.meta, 4).value.items.map((rg) => field(rg, 1).value.items.map(chunkStart).reduce((x, y) => (y < x ? y : x)));
    for (let i = 1; i < starts.length; i++) if (starts[i] <= starts[i - 1]) throw new Error('parquet-concat: row groups are not laid out in order');
    const total = starts.length;
    const per = Math.ceil(total / parts);
    for (let k = 0; k * per < total; k++) {
      const { meta } = readFooter(fd); // fresh copy: offsets are shifted in place
      const a = k * per, b = Math.min(total, (k + 1) * per);
      const groups = field(meta, 4).value.items.slice(a, b);
      const start = starts[a];
      const end = b < total ? starts[b] : BigInt(first.dataEnd);
      const delta = 4n - start;
      let rows = 0n;
      groups.forEach((rg, i) => {
        shift(rg, 5, delta);
        for (const cc of field(rg, 1).value.items) {
          shift(cc, 2, delta);
          const md = field(cc, 3).value;
          for (const id of [9, 10, 11, 14]) shift(md, id, delta);
          const bf = field(md, 14);
          if (bf && (bf.value < 4n || bf.value >= end - start + 4n)) throw new Error('parquet-concat: a bloom filter lies outside its row group range');
        }
        const ord = field(rg, 7);
        if (ord) ord.value = BigInt(i);
        rows += field(rg, 3).value;
      });
      field(meta, 3).value = rows;
      field(meta, 4).value.items = groups;
      const out = `${outDir}/part-${k}.parquet`;
      const ofd = openSync(out, 'w');
      try {
        writeSync(ofd, Buffer.from('PAR1'));
        const buf = Buffer.alloc(8 << 20);
        for (let off = Number(start); off < Number(end);) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, Number(end) - off), off);
          writeSync(ofd, buf, 0, n);
          off += n;
        }
        const w = new Writer();
        w.struct(meta);
        const footer = w.buffer();
        const tail = Buffer.alloc(8);
        tail.writeUInt32LE(footer.length, 0);
        tail.write('PAR1', 4, 'latin1');
        writeSync(ofd, footer);
        writeSync(ofd, tail);
      } finally { closeSync(ofd); }
      written.push(out);
    }
  } finally { closeSync(fd); }
  return written;
}

// CLI: node bench/parquet-concat.mjs split <in.parquet> <out-dir> <parts>
//      node bench/parquet-concat.mjs concat <out.parquet> <in.parquet>...
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [cmd, ...a] = process.argv.slice(2);
  if (cmd === 'split' && a.length === 3) {
    mkdirSync(a[1], { recursive: true });
    for (const p of splitParquet(a[0], a[1], Number(a[2]))) console.log(p);
  } else if (cmd === 'concat' && a.length >= 2) concatParquet(a.slice(1), a[0]);
  else { console.error('usage: parquet-concat.mjs split <in.parquet> <out-dir> <parts> | concat <out.parquet> <in.parquet>...'); process.exit(2); }
}
