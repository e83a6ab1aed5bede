// A token-count worker thread (count-pool.ts): loads the tokenizer once and counts / fits rows with
// the built-in template, so that counting runs beside the decode workers instead of on the thread
// that writes the output.
import { parentPort, workerData } from 'node:worker_threads';
import { BuiltinRenderer } from './builtin-template.js';
import { TokenCounter } from './counter.js';
import { fitRow } from './fit.js';
import { loadTokenizer } from './load.js';
import { RenderFailure, RowTokenCounter, type TokenRow } from './row-tokens.js';
import type { CountReply, CountRequest } from './count-pool.js';

const { tokenizer } = workerData as { tokenizer: string };
const rows = new RowTokenCounter(new TokenCounter(loadTokenizer(tokenizer).tokenizer), { builtin: new BuiltinRenderer() });
let warned = 0;

parentPort!.on('message', (m: CountRequest) => {
  let reply: CountReply;
  try {
    const row = m.row as TokenRow;
    if (m.maxLength === null) reply = { id: m.id, kind: 'counted', tokens: rows.count(row), groupsDropped: 0 };
    else {
      const fit = fitRow(row, m.maxLength, m.window, rows);
      reply = fit.fits ? { id: m.id, kind: 'counted', tokens: fit.tokens, groupsDropped: fit.groupsDropped } : { id: m.id, kind: 'too-long' };
    }
  } catch (e) {
    reply = e instanceof RenderFailure ? { id: m.id, kind: 'render-failure' } : { id: m.id, kind: 'error', message: (e as Error).stack ?? String(e) };
  }
  if (rows.warnings.length > warned) {
    reply.warnings = rows.warnings.slice(warned);
    warned = rows.warnings.length;
  }
  parentPort!.postMessage(reply);
});
