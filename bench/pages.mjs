// The data pages of a parquet file's column, from our own footer and page-header readers (dist/):
// what bench/floor.mjs and bench/zstd-paths.mjs decompress.
import { openSync, readSync, closeSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', 'parquet', p)).href);

/** Every page of `column`'s leaves: [file, body offset, compressed, declared size, codec, level bytes (v2)]. */
export async function pagesOf(files, column) {
  const { readFooter } = await dist('meta.js');
  const { ThriftReader, num, struct } = await dist('thrift.js');
  const pages = [];
  for (const file of files) {
    const meta = readFooter(file);
    const leaves = meta.columns.get(column)?.leaves;
    if (!leaves) throw new Error(`${file}: no column ${column}`);
    const fd = openSync(file, 'r');
    try {
      for (const rg of meta.rowGroups) {
        for (const li of leaves) {
          const c = rg.chunks[li];
          let pos = c.start;
          const end = c.start + c.length;
          while (pos < end) {
            const b = Buffer.allocUnsafe(Math.min(1 << 16, end - pos));
            readSync(fd, b, 0, b.length, pos);
            const r = new ThriftReader(b);
            const h = r.struct();
            pos += r.pos;
            const type = num(h, 1, 'page type');
            const compressed = num(h, 3, 'compressed size');
            const size = num(h, 2, 'uncompressed size');
            let levels = 0;
            let codec = c.codec;
            if (type === 3) {
              const dh = struct(h, 8);
              levels = num(dh, 5, 'def length') + num(dh, 6, 'rep length');
              if (dh[7] === false) codec = 0;
            }
            if (type === 0 || type === 2 || type === 3) pages.push([file, pos, compressed, size, codec, levels]);
            pos += compressed;
          }
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  return pages;
}

