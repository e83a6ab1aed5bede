#!/usr/bin/env node
// Before and after: two builds of the miner and DuckDB's scan of the same file, interleaved run by
// run, on each file given. On a shared machine whose speed drifts by half between minutes, only
// figures taken in one interleaved series compare; this gives those, with the output of both builds
// checked to be byte-identical.
//
//   node bench/ab.mjs --before DIR --after DIR [--runs 3] [--workers 2|default] FILE...
//
// DIR is a checkout with its `bin/` and a built `dist/` (e.g. `git worktree add /tmp/before <commit>`,
// then `npx tsc -p tsconfig.json` there with this checkout's node_modules linked in). Prints one
// Markdown table: per file, the medians of wall, CPU (user+sys) and peak RSS of each, and the ratios
// after/before and after/DuckDB. `--workers default` runs the miner without the option (one per core,
// fitted to a small input). A FILE named *.jsonl or *.jsonl.gz is mined with --jsonl, without the
// DuckDB column (its scan reads parquet).
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { timed } from './timed.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { before: { type: 'string' }, after: { type: 'string' }, runs: { type: 'string', default: '3' }, workers: { type: 'string', default: '2' } },
});
if (!values.before || !values.after || positionals.length === 0) {
  console.error('usage: node bench/ab.mjs --before DIR --after DIR [--runs 3] [--workers 2|default] FILE...');
  process.exit(2);
}
const runs = Number(values.runs);
const tmp = mkdtempSync(join(tmpdir(), 'dm-ab-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sha = (p) => createHash('sha256').update(readFileSync(p)).digest('hex');

const isJsonl = (file) => /\.jsonl(\.gz)?$/i.test(file);

function minerArgv(dir, file, out) {
  return ['node', join(resolve(dir), 'bin', 'divergence-mine'), 'mine', isJsonl(file) ? '--jsonl' : '--parquet', file, '--out', out, '--quiet', '--force', ...(values.workers === 'default' ? [] : ['--workers', values.workers])];
}

const rows = [];
try {
  for (const file of positionals) {
    const got = { before: [], after: [], duckdb: [] };
    const outs = { before: join(tmp, 'before.jsonl'), after: join(tmp, 'after.jsonl') };
    // Read once to warm the page cache (every *.parquet of a folder).
    const chunk = Buffer.allocUnsafe(4 << 20);
    const files = statSync(file).isDirectory() ? readdirSync(file).filter((f) => f.endsWith('.parquet')).map((f) => join(file, f)) : [file];
    for (const f of files) {
      const fd = openSync(f, 'r');
      for (let pos = 0; readSync(fd, chunk, 0, chunk.length, pos) > 0; pos += chunk.length);
      closeSync(fd);
    }
    for (let r = 0; r < runs; r++) {
      got.before.push(await timed(minerArgv(values.before, file, outs.before), process.cwd()));
      got.after.push(await timed(minerArgv(values.after, file, outs.after), process.cwd()));
      if (!isJsonl(file)) got.duckdb.push(await timed(['node', join(HERE, 'run.mjs'), '--scan-child', file, '--threads', '2'], process.cwd()));
      else got.duckdb.push({ wall: NaN, cpu: NaN, rss: NaN });
    }
    const same = sha(outs.before) === sha(outs.after);
    const m = (k, f) => median(got[k].map(f));
    const row = {
      file: basename(file), mb: files.reduce((a, f) => a + statSync(f).size, 0) / 1e6, same,
      ...Object.fromEntries(['before', 'after', 'duckdb'].flatMap((k) => [[`${k}Wall`, m(k, (x) => x.wall)], [`${k}Cpu`, m(k, (x) => x.cpu)], [`${k}Rss`, m(k, (x) => x.rss / 2 ** 20)]])),
      walls: Object.fromEntries(['before', 'after', 'duckdb'].map((k) => [k, got[k].map((x) => x.wall.toFixed(2)).join(', ')])),
    };
    rows.push(row);
    console.error(`ab: ${row.file}: before ${row.beforeWall.toFixed(2)} s, after ${row.afterWall.toFixed(2)} s, DuckDB ${row.duckdbWall.toFixed(2)} s, same output: ${same}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

console.log(`medians of ${runs} interleaved runs, miner --workers ${values.workers}, DuckDB scan threads=2\n`);
console.log('| file | MB | before wall s | after wall s | DuckDB wall s | after / before | before / DuckDB | after / DuckDB | CPU s before / after / DuckDB | peak RSS MiB before / after / DuckDB | same output | walls (before; after; DuckDB) |');
console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.file} | ${r.mb.toFixed(0)} | ${r.beforeWall.toFixed(2)} | ${r.afterWall.toFixed(2)} | ${r.duckdbWall.toFixed(2)} | ${(r.afterWall / r.beforeWall).toFixed(2)} | ${(r.beforeWall / r.duckdbWall).toFixed(2)} | ${(r.afterWall / r.duckdbWall).toFixed(2)} | ` +
      `${r.beforeCpu.toFixed(1)} / ${r.afterCpu.toFixed(1)} / ${r.duckdbCpu.toFixed(1)} | ${r.beforeRss.toFixed(0)} / ${r.afterRss.toFixed(0)} / ${r.duckdbRss.toFixed(0)} | ${r.same ? 'yes' : '**no**'} | ${r.walls.before}; ${r.walls.after}; ${r.walls.duckdb} |`,
  );
}
if (rows.some((r) => !r.same)) process.exitCode = 1;
