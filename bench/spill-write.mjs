#!/usr/bin/env node
// What the kernel charges for the spill's writes (src/engine/spill-space.ts): the same bytes written
// in 1 MiB writes (a) appended to a new file, as the spill files grew before segments were written
// again, and (b) over and over a region already written (the pages are in the page cache), as a spill
// whose walked segments are written again does. CPU is the process's user + system time.
//
//   node bench/spill-write.mjs [--dir DIR (os.tmpdir())] [--gb 2.7] [--region-mib 256] [--runs 2]
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { dir: { type: 'string' }, gb: { type: 'string', default: '2.7' }, 'region-mib': { type: 'string', default: '256' }, runs: { type: 'string', default: '2' } },
});
const WRITE = 2 ** 20;
const total = Math.round((Number(values.gb) * 1e9) / WRITE) * WRITE;
const region = Number(values['region-mib']) * WRITE;
const runs = Number(values.runs);
if (!(total > 0 && region > 0 && runs > 0)) {
  console.error('usage: node bench/spill-write.mjs [--dir DIR] [--gb 2.7] [--region-mib 256] [--runs 2]');
  process.exit(2);
}
const dir = mkdtempSync(join(values.dir ?? tmpdir(), 'dm-spill-write-'));
const bytes = Buffer.alloc(WRITE, 0x61);

/** CPU (user + system) and wall seconds of writing `total` bytes, the k-th write at position(k). */
function timed(name, position) {
  const path = join(dir, name);
  const cpu = process.cpuUsage();
  const t = performance.now();
  const fd = openSync(path, 'w');
  for (let k = 0; k * WRITE < total; k++) writeSync(fd, bytes, 0, WRITE, position(k));
  closeSync(fd);
  const used = process.cpuUsage(cpu);
  const wall = (performance.now() - t) / 1e3;
  rmSync(path);
  return { cpu: (used.user + used.system) / 1e6, system: used.system / 1e6, wall };
}

const rows = [];
try {
  for (let r = 0; r < runs; r++) {
    rows.push({ run: r + 1, kind: 'append to a new file', ...timed('append', (k) => k * WRITE) });
    rows.push({ run: r + 1, kind: `again over ${values['region-mib']} MiB`, ...timed('again', (k) => (k * WRITE) % region) });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${(total / 1e9).toFixed(2)} GB in 1 MiB writes, ${dir.replace(/dm-spill-write-.*/, '')}`);
console.log('| run | writes | CPU s | of it system s | wall s | CPU s per GB |');
console.log('|--:|---|--:|--:|--:|--:|');
for (const x of rows) console.log(`| ${x.run} | ${x.kind} | ${x.cpu.toFixed(2)} | ${x.system.toFixed(2)} | ${x.wall.toFixed(2)} | ${(x.cpu / (total / 1e9)).toFixed(2)} |`);
