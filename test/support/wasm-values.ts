// The reference values of a parquet file, read by parquet-wasm through the Arrow getters the wasm engine
// uses: what our own reader's values are compared with.
import { openAsBlob } from 'node:fs';
import { tableFromIPC, type Data } from 'apache-arrow';
import { ParquetFile } from 'parquet-wasm';
import { makeGetter } from '../../src/io/arrow-values.js';

/** `columns` of the file (or of row group `rowGroup` only), value by value, by column. */
export async function wasmValues(path: string, columns: string[], rowGroup?: number): Promise<Map<string, unknown[]>> {
  const f = await ParquetFile.fromFile(await openAsBlob(path));
  const out = new Map<string, unknown[]>(columns.map((c) => [c, []]));
  const stream = await f.stream({ ...(rowGroup === undefined ? {} : { rowGroups: [rowGroup] }), columns, batchSize: 64 });
  for await (const b of stream as unknown as AsyncIterable<{ intoIPCStream(): Uint8Array }>) {
    for (const batch of tableFromIPC(b.intoIPCStream()).batches) {
      for (const c of columns) {
        const get = makeGetter(batch.data.children[batch.schema.fields.findIndex((fl) => fl.name === c)] as Data);
        for (let i = 0; i < batch.numRows; i++) out.get(c)!.push(get(i));
      }
    }
  }
  return out;
}
