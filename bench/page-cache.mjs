#!/usr/bin/env node
// What writing a new file costs on this machine, by the state of the memory its page cache takes:
// a run's last step writes its whole output (235 MB on the 67k twin) into a new file, and nothing else
// runs then. Each step writes MB megabytes in 8 MiB writeSync calls to a new file in DIR and reports the
// wall:
//   - new:            memory not used lately (the first write, and after idle pauses);
//   - after-rm:       right after removing the previous file (its pages just freed);
//   - after-rm-5s/20s: the same after 5 s and 20 s of idling (a VM may have handed the freed memory
//                      back to its host by then, and taking it again costs as much as new memory);
//   - stream:         after-rm through fs.createWriteStream, as the output is written;
//   - truncated-open: right after truncating a file that is still open (its pages freed, the file kept).
//
//   node bench/page-cache.mjs [--mb 235] [--dir /tmp]
import { closeSync, createWriteStream, mkdtempSync, openSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '235' }, dir: { type: 'string', default: tmpdir() } } });
const dir = mkdtempSync(join(values.dir, 'dm-page-cache-'));
const STEP = 8 << 20;
const buf = Buffer.alloc(STEP, 97);
const steps = Math.max(1, Math.round((Number(values.mb) * 1e6) / STEP));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function writeFile(name) {
  const t0 = performance.now();
  const fd = openSync(join(dir, name), 'w');
  for (let i = 0; i < steps; i++) writeSync(fd, buf);
  closeSync(fd);
  return performance.now() - t0;
}

async function streamFile(name) {
  const t0 = performance.now();
  const ws = createWriteStream(join(dir, name));
  for (let i = 0; i < steps; i++) await new Promise((r) => ws.write(buf, r));
  ws.end();
  await new Promise((r) => ws.on('close', r));
  return performance.now() - t0;
}

const rm = (name) => rmSync(join(dir, name));
const rows = [];
try {
  rows.push(['new', writeFile('a')]);
  rm('a');
  rows.push(['after-rm', writeFile('b')]);
  rm('b');
  await sleep(5000);
  rows.push(['after-rm-5s', writeFile('c')]);
  rm('c');
  await sleep(20000);
  rows.push(['after-rm-20s', writeFile('d')]);
  rm('d');
  rows.push(['stream (after-rm)', await streamFile('e')]);
  const held = openSync(join(dir, 'e'), 'r');
  truncateSync(join(dir, 'e'), 0);
  rows.push(['truncated-open', await streamFile('f')]);
  closeSync(held);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const mb = (steps * STEP) / 1e6;
console.log(`| write of ${mb.toFixed(0)} MB to a new file | ms | ms per 100 MB |`);
console.log('|---|--:|--:|');
for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(0)} | ${((ms * 100) / mb).toFixed(0)} |`);
