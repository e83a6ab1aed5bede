#!/usr/bin/env node
// The stand-in Hugging Face Hub (test/support/stand-in-hub.mjs, 127.0.0.1 only) serving one parquet
// file as the published dataset's trajectories.parquet, for `bench/slurm.sh hub`: the Slurm tasks
// read it by name through one shared cache, and the request log tells how often its body was sent.
//
//   node bench/slurm-hub.mjs FILE.parquet URL_FILE LOG_FILE
//
// Writes the Hub's URL to URL_FILE once it listens; on SIGTERM writes the requests (one JSON object a
// line: method, path, status, range, origin) to LOG_FILE and stops. The body is streamed in 1 MiB
// chunks 10 ms apart, so that tasks starting together overlap in their download.
import { readFileSync, writeFileSync } from 'node:fs';
import { startHub } from '../test/support/stand-in-hub.mjs';
import { NEBIUS_README, PUBLISHED_REPO } from '../test/support/hub-repos.mjs';

const [file, urlFile, logFile] = process.argv.slice(2);
if (!file || !urlFile || !logFile) {
  console.error('usage: node bench/slurm-hub.mjs FILE.parquet URL_FILE LOG_FILE');
  process.exit(2);
}
const repos = { [PUBLISHED_REPO]: { commits: { c1: { files: { 'README.md': NEBIUS_README, 'trajectories.parquet': readFileSync(file) } } } } };
const hub = await startHub(repos, { faults: { slow: { 'trajectories.parquet': { chunk: 1 << 20, delayMs: 10 } } } });
writeFileSync(urlFile, `${hub.url}\n`);
process.on('SIGTERM', async () => {
  writeFileSync(logFile, hub.requests.map((q) => JSON.stringify(q)).join('\n') + '\n');
  await hub.close();
  process.exit(0);
});
