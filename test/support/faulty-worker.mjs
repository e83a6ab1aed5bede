// A pool worker (src/engine/pool.ts) that misbehaves on request, for test/pool-faults.test.ts: the task's
// `path` names the fault. It answers through the real worker loop (dist/engine/serve.js, built by
// `npm run build`), so what reaches the pool is what the real worker would send.
import { parentPort } from 'node:worker_threads';
import { serve } from '../../dist/engine/serve.js';
import { DecoderError, UserError } from '../../dist/errors.js';

const hog = [];
const faults = {
  ok: async () => ({ numRows: 1, rowGroupRows: [1], fields: [] }),
  'type-error': async () => null.property,
  'user-error': async () => {
    throw new UserError('rows.parquet: row group 0, row 5: instance_id is null or empty', 7);
  },
  'decoder-error': async () => {
    throw new DecoderError('Parquet error: Invalid Parquet file. Corrupt footer');
  },
  trap: async () => {
    throw new WebAssembly.RuntimeError('unreachable');
  },
  'throw-string': async () => {
    throw 'a string, not an Error';
  },
  uncloneable: async () => ({ numRows: 1, rowGroupRows: [1], fields: [], notData: () => 1 }),
  'uncaught-string': () => {
    setImmediate(() => {
      throw 'thrown outside any task';
    });
    return new Promise(() => {});
  },
  'uncaught-type-error': () => {
    setImmediate(() => null.property);
    return new Promise(() => {});
  },
  'never-answers': () => new Promise(() => {}),
  // Native-like async work in flight: answers after 300 ms (pool drainOnClose waits for it).
  slow: () => new Promise((r) => setTimeout(() => r({ numRows: 2, rowGroupRows: [2], fields: [] }), 300)),
  exit: () => process.exit(3),
  'out-of-memory': async () => {
    for (;;) hog.push(new Array(1 << 16).fill({ n: hog.length }));
  },
};

serve(parentPort, (task) => faults[task.path]());
