#!/usr/bin/env node
// The parquet-rs part of the benchmark's writer matrix: rewrites a parquet file with parquet-wasm's
// writer, one codec and page version per output file. Streams row group by row group (the file is
// opened as a lazy Blob), so a file larger than wasm's 4 GiB memory can be rewritten, one row group
// in memory at a time.
//
//   node bench/matrix-wasm.mjs --file bench/data/twin-5k.parquet --out bench/data/matrix [--only zstd-v1,lz4-v2]
import { openAsBlob } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as pw from 'parquet-wasm/node';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'parquet-wasm', 'package.json'), 'utf8')).version;

// parquet-rs' LZ4 is the legacy Hadoop-framed codec 5; LZ4_RAW is codec 7.
export const WASM_CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
const VERSIONS = { v1: pw.WriterVersion.V1, v2: pw.WriterVersion.V2 };
// parquet-rs buffers a whole row group inside wasm's 32-bit memory: 4,096 rows of the twin (about 1 GB
// of text) do not fit beside the row group being read, so its row groups are cut at 1,024 rows.
const ROW_GROUP_CAP = 1024;
export const wasmName = (codec, pages) => `parquet-rs-${codec.toLowerCase().replaceAll('_', '-')}-${pages}.parquet`;

async function rewrite(file, out, codec, pages) {
  const pf = await pw.ParquetFile.fromFile(await openAsBlob(file));
  const rowGroups = pf.metadata().rowGroups();
  const groups = rowGroups.length;
  // Keep the input's row groups: parquet-rs' default (1Mi rows) would make one huge group, held in memory.
  const maxRows = Math.max(1, ...rowGroups.map((r) => r.numRows()));
  let g = 0;
  const batches = new ReadableStream({
    async pull(ctl) {
      if (g >= groups) { ctl.close(); return; }
      const table = await pf.read({ rowGroups: [g++] });
      for (const b of table.recordBatches()) ctl.enqueue(b);
    },
  }, { highWaterMark: 0 });
  const props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression[codec])
    .setWriterVersion(VERSIONS[pages])
    .setMaxRowGroupSize(Math.min(maxRows, ROW_GROUP_CAP))
    .setCreatedBy('divergence-mine bench/matrix-wasm.mjs (parquet-wasm)')
    .build();
  const bytes = await pw.transformParquetStream(batches, props);
  // Never a half-written file under the final name.
  const fh = await open(`${out}.tmp`, 'w');
  await bytes.pipeTo(Writable.toWeb(fh.createWriteStream()));
  await rename(`${out}.tmp`, out);
}

async function main() {
  const { values } = parseArgs({ options: { file: { type: 'string' }, out: { type: 'string' }, only: { type: 'string' } }, strict: true });
  if (!values.file || !values.out) throw new Error('usage: node bench/matrix-wasm.mjs --file F --out DIR [--only codec-v1,...]');
  await mkdir(values.out, { recursive: true });
  const only = values.only ? new Set(values.only.split(',')) : null;
  for (const codec of WASM_CODECS) {
    for (const pages of Object.keys(VERSIONS)) {
      const key = `${codec.toLowerCase().replaceAll('_', '-')}-${pages}`;
      if (only && !only.has(key)) continue;
      const out = join(values.out, wasmName(codec, pages));
      const t0 = performance.now();
      await rewrite(values.file, out, codec, pages);
      const seconds = (performance.now() - t0) / 1000;
      process.stdout.write(JSON.stringify({ name: wasmName(codec, pages).replace(/\.parquet$/, ''), writer: 'parquet-wasm', version: VERSION, seconds: +seconds.toFixed(2) }) + '\n');
      console.error(`matrix-wasm: ${out} in ${seconds.toFixed(1)} s`);
    }
  }
}

main().catch((e) => { console.error(`matrix-wasm: ${e?.message ?? e}`); process.exit(1); });
