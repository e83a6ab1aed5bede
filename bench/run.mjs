#!/usr/bin/env node
// Benchmark harness: the miner against an independent DuckDB baseline on the same
// parquet file, in one run and process tree.
//
//   npm run bench -- --file bench/data/twin-67k.parquet [--file4x bench/data/twin-268k.parquet] [--runs 3]
//
// For every measured command: wall seconds, CPU seconds (user+sys of the child) and peak RSS
// (max RSS of the child process; worker threads share it), from /usr/bin/time. Medians of
// --runs runs (the configurations are interleaved run by run). Measured:
//   miner     node bin/divergence-mine mine --parquet F --out <tmp>/x.jsonl --stats <tmp>/stats.json --quiet --force
//             --workers N (N = --workers, 1,2); the counters are checked against the twin's sidecar if present
//   duckdb    node bench/run.mjs --scan-child F --threads T: DuckDB (@duckdb/node-api) decoding every
//             message string of F (content, name, tool_call_id, tool-call id/name/arguments) plus the
//             row columns the miner reads (trajectory_id, instance_id, repo, resolved).
// Results go to stdout and into bench/README.md between the bench:results markers (--no-readme: not).
// Options: --file F (default bench/data/twin-67k.parquet; a file or a directory of parts) --file4x F --runs N (3) --runs4x N (= --runs)
//          --workers 1,2 --threads 2 --duckdb-4x (also scan the 4x file) --no-warmup --no-readme
//          --other-engines wasm,duckdb (reference rows: the miner with other --engine values) --runs-other N (1)
//          --rss-guard GiB (14: a run whose process tree exceeds it is killed and reported as failed)
//          --matrix (writer matrix: rewrite --file with bench/matrix.py and bench/matrix-wasm.mjs into --matrix-dir,
//          default bench/data/matrix, then mine + DuckDB scan per file; README section 3) --matrix-only a,b --matrix-reuse
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, createReadStream, cpSync } from 'node:fs';
import { cpus, totalmem, tmpdir, loadavg, release } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TIME, median, timed } from './timed.mjs';
import { sqlString } from './sql.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const README = join(HERE, 'README.md');
const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';
const MATRIX_START = '<!-- bench:matrix:start -->';
const MATRIX_END = '<!-- bench:matrix:end -->';
const GiB = 1024 ** 3;
const TARGETS = { wallRatio: 1.0, rssBytes: 1 * GiB, rss4x: 1.25, speedup2: 1.8, floorRatio: 3 };
const FLOOR = join(HERE, 'floor.mjs');

// ---------------------------------------------------------------------------------------------
// Child mode: the DuckDB baseline scan (run under /usr/bin/time by the parent).
async function scanChild(file, threads) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const t0 = performance.now();
  const inst = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn = await inst.connect();
  const f = sqlString(statSync(file).isDirectory() ? join(file, '*.parquet') : file);
  const r = await conn.runAndReadAll(`
    SELECT count(*) AS messages,
      count(DISTINCT trajectory_id) AS trajectories,
      sum(length(trajectory_id) + length(instance_id) + coalesce(length(repo), 0) + coalesce(resolved, 0)) AS row_chars,
      sum(coalesce(length(m.content), 0)) AS content_chars,
      sum(length(m.role) + coalesce(length(m.name), 0) + coalesce(length(m.tool_call_id), 0)) AS meta_chars,
      sum(coalesce(list_sum(list_transform(m.tool_calls,
        c -> length(c.function.arguments) + length(c.function."name") + length(c.id) + length(c."type"))), 0)) AS call_chars
    FROM (SELECT trajectory_id, instance_id, repo, resolved, unnest(trajectory) AS m FROM read_parquet(${f}))`);
  const row = r.getRows()[0].map(Number);
  const names = r.columnNames();
  const out = Object.fromEntries(names.map((n, i) => [n, row[i]]));
  out.seconds = (performance.now() - t0) / 1000;
  conn.closeSync?.();
  inst.closeSync?.();
  process.stdout.write(JSON.stringify(out) + '\n');
}

// ---------------------------------------------------------------------------------------------
function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      file: { type: 'string', default: join('bench', 'data', 'twin-67k.parquet') },
      file4x: { type: 'string' },
      runs: { type: 'string', default: '3' },
      runs4x: { type: 'string' },
      workers: { type: 'string', default: '1,2' },
      threads: { type: 'string', default: '2' },
      'duckdb-4x': { type: 'boolean', default: false },
      'no-warmup': { type: 'boolean', default: false },
      'no-readme': { type: 'boolean', default: false },
      'rss-guard': { type: 'string', default: '14' },
      'scan-child': { type: 'string' },
      'other-engines': { type: 'string', default: '' },
      'runs-other': { type: 'string', default: '1' },
      matrix: { type: 'boolean', default: false },
      'matrix-dir': { type: 'string', default: join('bench', 'data', 'matrix') },
      'matrix-only': { type: 'string', default: '' },
      'matrix-reuse': { type: 'boolean', default: false },
    },
    strict: true,
  });
  return {
    file: resolve(ROOT, values.file), file4x: values.file4x ? resolve(ROOT, values.file4x) : null,
    runs: Number(values.runs), runs4x: Number(values.runs4x ?? values.runs),
    workers: values.workers.split(',').map(Number), threads: Number(values.threads),
    duckdb4x: values['duckdb-4x'], warmup: !values['no-warmup'], readme: !values['no-readme'],
    scanChild: values['scan-child'], rssGuard: Number(values['rss-guard']) * GiB,
    otherEngines: values['other-engines'].split(',').filter(Boolean), runsOther: Number(values['runs-other']),
    matrix: values.matrix, matrixDir: resolve(ROOT, values['matrix-dir']),
    matrixOnly: values['matrix-only'].split(',').filter(Boolean), matrixReuse: values['matrix-reuse'],
  };
}

const fmt = (x, d = 2) => (x == null || Number.isNaN(x) ? '-' : x.toFixed(d));
const mib = (b) => b / 1024 ** 2;


/** A --file / --file4x value: one parquet file, or a directory of *.parquet parts (passed to the
 * miner as a folder and to DuckDB as a glob; parquet-wasm reads files under 4 GiB only). */
function partsOf(input) {
  if (!statSync(input).isDirectory()) return [input];
  const files = readdirSync(input).filter((f) => f.endsWith('.parquet')).sort().map((f) => join(input, f));
  if (!files.length) throw new Error(`${input}: no *.parquet files`);
  return files;
}
const bytesOf = (input) => partsOf(input).reduce((s, f) => s + statSync(f).size, 0);

async function warm(input) {
  const t0 = performance.now();
  for (const file of partsOf(input)) {
    await new Promise((res, rej) => createReadStream(file, { highWaterMark: 8 << 20 }).on('data', () => {}).on('end', res).on('error', rej));
  }
  return (performance.now() - t0) / 1000;
}

async function machineFacts() {
  const facts = {
    nproc: cpus().length, cpu: cpus()[0]?.model ?? '?', memory_gib: +(totalmem() / GiB).toFixed(1), node: process.version,
    os: `${process.platform} ${release()}`, loadavg_start: loadavg().map((x) => +x.toFixed(2)),
  };
  try { facts.duckdb = JSON.parse(readFileSync(join(ROOT, 'node_modules', '@duckdb', 'node-api', 'package.json'), 'utf8')).version; } catch { /* absent */ }
  return facts;
}

function summarise(samples) {
  return {
    runs: samples.length, wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)),
    rss: median(samples.map((s) => s.rss)), rssMax: Math.max(...samples.map((s) => s.rss)),
    treePeak: Math.max(...samples.map((s) => s.treePeak)),
    walls: samples.map((s) => s.wall),
  };
}

const rel = (p) => (p.startsWith(`${ROOT}/`) ? relative(ROOT, p) : p);

/**
 * The miner runs from a snapshot of bin/ + dist/ + package.json (under the git-ignored bench/out/), so that a
 * rebuild of dist/ by someone else during a long benchmark cannot change the code being measured.
 */
function snapshotMiner() {
  mkdirSync(join(HERE, 'out'), { recursive: true });
  const snap = mkdtempSync(join(HERE, 'out', 'snap-'));
  cpSync(join(ROOT, 'dist'), join(snap, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'bin'), join(snap, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(snap, 'package.json'));
  return { snap, snapBin: join(snap, 'bin', 'divergence-mine') };
}

function replaceSection(start, end, section) {
  const text = existsSync(README) ? readFileSync(README, 'utf8') : '# Benchmark\n';
  const i = text.indexOf(start), j = text.indexOf(end);
  const next = i >= 0 && j > i ? `${text.slice(0, i + start.length)}\n${section}\n${text.slice(j)}` : `${text.trimEnd()}\n\n${start}\n${section}\n${end}\n`;
  writeFileSync(README, next);
  console.error(`bench: results written to ${rel(README)}`);
}

/** Runs one writer script of the matrix; its stdout is one JSON line per file written. */
function runWriter(argv, what) {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 << 20, encoding: 'utf8' });
  if (r.error?.code === 'ENOENT') { console.error(`bench: ${argv[0]} not found: skipping the ${what} writers`); return []; }
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited with ${r.status ?? r.signal}`);
  return r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/**
 * Writer-matrix mode: rewrite --file with every writer / codec (bench/matrix.py: pyarrow, polars, DuckDB;
 * bench/matrix-wasm.mjs: parquet-rs), then for each file (and the input) measure the miner and the
 * DuckDB scan, interleaved, and check that the miner's output is byte-identical to the input's.
 */
async function runMatrix(opt, facts) {
  mkdirSync(opt.matrixDir, { recursive: true });
  const wasmPrefix = 'parquet-rs-';
  const pyOnly = opt.matrixOnly.filter((n) => !n.startsWith(wasmPrefix));
  const wasmOnly = opt.matrixOnly.filter((n) => n.startsWith(wasmPrefix)).map((n) => n.slice(wasmPrefix.length));
  let written = [];
  if (opt.matrixReuse) {
    // Files already in the folder, from an earlier run; their writer versions are not known here.
    written = readdirSync(opt.matrixDir).filter((f) => f.endsWith('.parquet')).sort()
      .map((f) => ({ name: f.replace(/\.parquet$/, ''), writer: '?', version: '?', seconds: null }))
      .filter((w) => !opt.matrixOnly.length || opt.matrixOnly.includes(w.name));
  } else {
    if (!opt.matrixOnly.length || pyOnly.length) {
      written.push(...runWriter(['python3', join(HERE, 'matrix.py'), '--file', opt.file, '--out', opt.matrixDir, ...(pyOnly.length ? ['--only', pyOnly.join(',')] : [])], 'pyarrow, polars and DuckDB'));
    }
    if (!opt.matrixOnly.length || wasmOnly.length) {
      written.push(...runWriter(['node', join(HERE, 'matrix-wasm.mjs'), '--file', opt.file, '--out', opt.matrixDir, ...(wasmOnly.length ? ['--only', wasmOnly.join(',')] : [])], 'parquet-rs'));
    }
  }
  const entries = [{ name: `input (${rel(opt.file)})`, writer: '', version: '', seconds: null, file: opt.file },
    ...written.map((w) => ({ ...w, file: join(opt.matrixDir, `${w.name}.parquet`) }))];
  const tmp = mkdtempSync(join(tmpdir(), 'dm-bench-'));
  const { snap, snapBin } = snapshotMiner();
  const w = Math.max(...opt.workers);
  const out = join(tmp, 'x.jsonl');
  const configs = entries.flatMap((e, i) => [
    { key: `m${i}`, entry: e, kind: 'miner', argv: ['node', snapBin, 'mine', '--parquet', e.file, '--out', out, '--stats', join(tmp, 'stats.json'), '--quiet', '--force', '--workers', String(w)] },
    { key: `d${i}`, entry: e, kind: 'duckdb', argv: ['node', join(HERE, 'run.mjs'), '--scan-child', e.file, '--threads', String(opt.threads)] },
    { key: `f${i}`, entry: e, kind: 'floor', argv: ['node', FLOOR, e.file, '--threads', String(opt.threads)] },
  ]);
  const results = {};
  const failures = {};
  const hashes = {};
  try {
    if (opt.warmup) for (const e of entries) await warm(e.file);
    for (let r = 0; r < opt.runs; r++) {
      for (const c of configs) {
        let s;
        try {
          s = await timed(c.argv, ROOT, opt.rssGuard);
        } catch (e) {
          (failures[c.key] ??= []).push(String(e.message ?? e).split('\n').slice(0, 3).join(' | '));
          console.error(`bench: run ${r + 1} ${c.kind} ${c.entry.name}: FAILED: ${e.message ?? e}`);
          continue;
        }
        if (c.kind === 'miner') (hashes[c.key] ??= new Set()).add(createHash('sha256').update(readFileSync(out)).digest('hex'));
        if (c.kind === 'floor') s.floor = JSON.parse(s.stdout.trim().split('\n').pop()).seconds;
        (results[c.key] ??= []).push(s);
        console.error(`bench: run ${r + 1} ${c.kind} ${c.entry.name}: wall ${fmt(s.wall)} s, max RSS ${fmt(mib(s.rss), 0)} MiB`);
      }
    }
  } finally { rmSync(tmp, { recursive: true, force: true }); rmSync(snap, { recursive: true, force: true }); }
  facts.loadavg_end = loadavg().map((x) => +x.toFixed(2));

  const S = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarise(v)]));
  const inputHash = hashes.m0?.size === 1 ? [...hashes.m0][0] : null;
  const lines = [];
  lines.push(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`bench/run.mjs --matrix\`.`);
  lines.push('');
  lines.push(`- input: \`${rel(opt.file)}\` (${(bytesOf(opt.file) / 1e6).toFixed(1)} MB), rewritten into \`${rel(opt.matrixDir)}/\``);
  lines.push(`- machine: ${facts.nproc} CPUs (${facts.cpu}), ${facts.memory_gib} GiB RAM, ${facts.os}; node ${facts.node}; @duckdb/node-api ${facts.duckdb ?? '?'}`);
  lines.push(`- load average at start ${facts.loadavg_start.join(' / ')}, at end ${facts.loadavg_end.join(' / ')} (the machine may be shared: compare ratios, not absolutes)`);
  lines.push(`- medians of ${opt.runs} run(s), every file and both measurements interleaved; miner \`--workers ${w}\`, DuckDB scan threads=${opt.threads}; page cache warmed first: ${opt.warmup ? 'yes' : 'no'}`);
  lines.push('');
  lines.push('| file | writer | size MB | rewrite s | mine wall s | mine CPU s | mine peak RSS MiB | DuckDB scan wall s | DuckDB peak RSS MiB | mine / DuckDB wall | decompression floor s | mine / floor | output = input\'s |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  entries.forEach((e, i) => {
    const m = S[`m${i}`], d = S[`d${i}`];
    const fl = results[`f${i}`] ? median(results[`f${i}`].map((x) => x.floor)) : null;
    const h = hashes[`m${i}`];
    const same = !h ? '-' : i === 0 ? (h.size === 1 ? 'reference' : '**runs differ**') : h.size === 1 && [...h][0] === inputHash ? 'yes' : '**no**';
    lines.push(`| ${e.name} | ${e.writer ? `${e.writer} ${e.version}` : '-'} | ${(statSync(e.file).size / 1e6).toFixed(1)} | ${fmt(e.seconds, 1)} | ${fmt(m?.wall)} | ${fmt(m?.cpu)} | ${m ? fmt(mib(m.rssMax), 0) : '-'} | ${fmt(d?.wall)} | ${d ? fmt(mib(d.rssMax), 0) : '-'} | ${m && d ? fmt(m.wall / d.wall) : '-'} | ${fmt(fl)} | ${m && fl ? fmt(m.wall / fl) : '-'} | ${same} |`);
  });
  for (const [k, errs] of Object.entries(failures)) {
    const c = configs.find((x) => x.key === k);
    // Paths relative to the repository: the table is committed to bench/README.md.
    lines.push(`- **${c.kind} on ${c.entry.name}: ${errs.length} failed run(s)** (not in the medians): ${errs[0].replaceAll(`${ROOT}/`, '')}`);
  }
  lines.push('');
  lines.push('Peak RSS is the max over the runs. Commands (from the repository root; `<tmp>` is a temporary directory, F each file):');
  lines.push('');
  lines.push('```sh');
  lines.push(`npm run bench -- ${process.argv.slice(2).join(' ')}`.trim());
  if (!opt.matrixReuse) {
    lines.push(`python3 bench/matrix.py --file ${rel(opt.file)} --out ${rel(opt.matrixDir)}${pyOnly.length ? ` --only ${pyOnly.join(',')}` : ''}`);
    lines.push(`node bench/matrix-wasm.mjs --file ${rel(opt.file)} --out ${rel(opt.matrixDir)}${wasmOnly.length ? ` --only ${wasmOnly.join(',')}` : ''}`);
  }
  lines.push(`/usr/bin/time -f '%e %U %S %M' node bin/divergence-mine mine --parquet F --out <tmp>/x.jsonl --stats <tmp>/stats.json --quiet --force --workers ${w}`);
  lines.push(`/usr/bin/time -f '%e %U %S %M' node bench/run.mjs --scan-child F --threads ${opt.threads}`);
  lines.push(`node bench/floor.mjs F --threads ${opt.threads}`);
  lines.push('```');
  const section = lines.join('\n');
  process.stdout.write(`${section}\n`);
  if (opt.readme) replaceSection(MATRIX_START, MATRIX_END, section);
  const bad = entries.some((e, i) => i > 0 && hashes[`m${i}`] && !(hashes[`m${i}`].size === 1 && [...hashes[`m${i}`]][0] === inputHash));
  if (Object.keys(failures).length || bad) process.exitCode = 1;
}

async function main() {
  const opt = parseCli(process.argv.slice(2));
  if (opt.scanChild) return scanChild(opt.scanChild, opt.threads);
  if (!existsSync(TIME)) throw new Error(`${TIME} not found: install it (Debian: apt-get install -y time)`);
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js missing: run `npm run build` (npm run bench builds first)');
  for (const f of [opt.file, opt.file4x]) if (f && !existsSync(f)) throw new Error(`${f} not found: generate it with npm run bench:gen (see bench/README.md)`);
  const facts = await machineFacts();
  if (opt.matrix) return runMatrix(opt, facts);
  const tmp = mkdtempSync(join(tmpdir(), 'dm-bench-'));
  const { snap, snapBin } = snapshotMiner();
  const minerArgv = (file, w, engine) => ['node', snapBin, 'mine', '--parquet', file, '--out', join(tmp, 'x.jsonl'), '--stats', join(tmp, 'stats.json'),
    '--quiet', '--force', '--workers', String(w), ...(engine ? ['--engine', engine] : [])];
  const duckArgv = (file) => ['node', join(HERE, 'run.mjs'), '--scan-child', file, '--threads', String(opt.threads)];
  const show = (argv) => argv.map((a) => (a === snapBin ? 'bin/divergence-mine' : a.startsWith(tmp) ? `<tmp>/${a.slice(tmp.length + 1)}` : a.startsWith(ROOT) ? rel(a) : a)).join(' ');

  // Configurations: [label, file, argv, runs]
  const configs = [];
  for (const w of opt.workers) configs.push({ key: `miner-w${w}`, label: `miner --workers ${w}`, file: opt.file, argv: minerArgv(opt.file, w), runs: opt.runs });
  configs.push({ key: 'duckdb', label: `DuckDB scan (threads=${opt.threads})`, file: opt.file, argv: duckArgv(opt.file), runs: opt.runs });
  configs.push({ key: 'floor', label: `decompression floor of trajectory (${opt.threads} threads)`, file: opt.file, argv: ['node', FLOOR, opt.file, '--threads', String(opt.threads)], runs: opt.runs });
  // For reference, the other readers at the widest --workers (not part of the targets).
  const wMax = Math.max(...opt.workers);
  for (const e of opt.otherEngines) configs.push({ key: `engine-${e}-w${wMax}`, label: `miner --engine ${e} --workers ${wMax}`, file: opt.file, argv: minerArgv(opt.file, wMax, e), runs: opt.runsOther });
  if (opt.file4x) {
    for (const w of opt.workers) configs.push({ key: `miner-w${w}-4x`, label: `miner --workers ${w} (4x rows)`, file: opt.file4x, argv: minerArgv(opt.file4x, w), runs: opt.runs4x });
    if (opt.duckdb4x) configs.push({ key: 'duckdb-4x', label: `DuckDB scan (threads=${opt.threads}, 4x rows)`, file: opt.file4x, argv: duckArgv(opt.file4x), runs: opt.runs4x });
  }
  const results = {};
  const failures = {};
  const warmups = {};
  try {
    if (opt.warmup) for (const f of [opt.file, opt.file4x].filter(Boolean)) { warmups[rel(f)] = await warm(f); console.error(`bench: page cache warmed for ${rel(f)} in ${warmups[rel(f)].toFixed(1)} s`); }
    const maxRuns = Math.max(...configs.map((c) => c.runs));
    for (let r = 0; r < maxRuns; r++) {
      for (const c of configs) {
        if (r >= c.runs) continue;
        let s;
        try {
          s = await timed(c.argv, ROOT, opt.rssGuard);
        } catch (e) {
          (failures[c.key] ??= []).push(String(e.message ?? e).split('\n').slice(0, 3).join(' | '));
          console.error(`bench: run ${r + 1} ${c.label}: FAILED: ${e.message ?? e}`);
          continue;
        }
        if (c.key.startsWith('duckdb')) s.scan = JSON.parse(s.stdout.trim().split('\n').pop());
        else if (c.key === 'floor') s.floor = JSON.parse(s.stdout.trim().split('\n').pop()).seconds;
        else s.counters = JSON.parse(readFileSync(join(tmp, 'stats.json'), 'utf8')).counters;
        (results[c.key] ??= []).push(s);
        console.error(`bench: run ${r + 1} ${c.label}: wall ${fmt(s.wall)} s, cpu ${fmt(s.cpu)} s, max RSS ${fmt(mib(s.rss), 0)} MiB`);
      }
    }
  } finally { rmSync(tmp, { recursive: true, force: true }); rmSync(snap, { recursive: true, force: true }); }
  facts.loadavg_end = loadavg().map((x) => +x.toFixed(2));

  const S = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarise(v)]));
  const lines = [];
  const size = (f) => `${(bytesOf(f) / 1e9).toFixed(3)} GB${statSync(f).isDirectory() ? ` in ${partsOf(f).length} files` : ''}`;
  lines.push(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`bench/run.mjs\`.`);
  lines.push('');
  lines.push(`- file: \`${rel(opt.file)}\` (${size(opt.file)})${opt.file4x ? `; 4x file: \`${rel(opt.file4x)}\` (${size(opt.file4x)})` : ''}`);
  lines.push(`- machine: ${facts.nproc} CPUs (${facts.cpu}), ${facts.memory_gib} GiB RAM, ${facts.os}; node ${facts.node}; @duckdb/node-api ${facts.duckdb ?? '?'}`);
  lines.push(`- load average at start ${facts.loadavg_start.join(' / ')}, at end ${facts.loadavg_end.join(' / ')} (the machine may be shared: compare ratios, not absolutes)`);
  lines.push(`- medians of ${opt.runs} run(s)${opt.file4x ? ` (4x file: ${opt.runs4x})` : ''}, configurations interleaved; page cache warmed first: ${opt.warmup ? 'yes' : 'no'}`);
  lines.push('');
  lines.push('| measurement | runs | wall s (median) | CPU s user+sys | peak RSS MiB (median / max) | sampled tree RSS MiB | wall s, every run |');
  lines.push('|---|---:|---:|---:|---:|---:|---|');
  for (const c of configs) {
    const s = S[c.key];
    if (!s) continue;
    lines.push(`| ${c.label} | ${s.runs} | ${fmt(s.wall)} | ${fmt(s.cpu)} | ${fmt(mib(s.rss), 0)} / ${fmt(mib(s.rssMax), 0)} | ${fmt(mib(s.treePeak), 0)} | ${s.walls.map((x) => fmt(x)).join(', ')} |`);
  }
  for (const [k, errs] of Object.entries(failures)) {
    lines.push(`- **${configs.find((c) => c.key === k).label}: ${errs.length} failed run(s)** (not in the medians): ${errs[0].replaceAll(`${ROOT}/`, '')}`);
  }
  lines.push('');
  const checks = [];
  const duck = S.duckdb;
  for (const w of opt.workers) {
    const m = S[`miner-w${w}`];
    if (m && duck) checks.push([`miner --workers ${w} wall / DuckDB scan wall`, m.wall / duck.wall, `<= ${TARGETS.wallRatio}`, m.wall / duck.wall <= TARGETS.wallRatio]);
  }
  for (const w of opt.workers) {
    for (const sfx of ['', '-4x']) {
      const m = S[`miner-w${w}${sfx}`];
      if (m) checks.push([`miner --workers ${w}${sfx ? ' (4x rows)' : ''} peak RSS (GiB, max of runs)`, m.rssMax / GiB, `<= ${TARGETS.rssBytes / GiB}`, m.rssMax <= TARGETS.rssBytes]);
    }
  }
  if (S.floor) {
    const fl = median(results.floor.map((x) => x.floor));
    for (const w of opt.workers.filter((x) => x === 2)) {
      const m = S[`miner-w${w}`];
      if (m) checks.push([`miner --workers ${w} wall / decompression floor (${fmt(fl)} s: every page body of trajectory decompressed once, ${opt.threads} threads)`, m.wall / fl, `<= ${TARGETS.floorRatio}`, m.wall / fl <= TARGETS.floorRatio]);
    }
  }
  if (S['miner-w1'] && S['miner-w2']) {
    const sp = S['miner-w1'].wall / S['miner-w2'].wall;
    checks.push(['speedup --workers 2 vs --workers 1 (wall)', sp, `>= ${TARGETS.speedup2}`, sp >= TARGETS.speedup2]);
  }
  for (const w of opt.workers) {
    const a = S[`miner-w${w}`], b = S[`miner-w${w}-4x`];
    if (a && b) checks.push([`miner --workers ${w}: peak RSS 4x rows / 1x rows`, b.rssMax / a.rssMax, `<= ${TARGETS.rss4x}`, b.rssMax / a.rssMax <= TARGETS.rss4x]);
  }
  // Correctness alongside speed: the miner's counters against the generator's sidecar, if any.
  for (const c of configs.filter((x) => !x.key.startsWith('duckdb') && x.key !== 'floor')) {
    const sc = `${c.file.replace(/\.parquet$/, '')}.planted.json`;
    if (!existsSync(sc) || !results[c.key]) continue;
    const want = JSON.parse(readFileSync(sc, 'utf8')).expected_counters;
    const bad = results[c.key].flatMap((r) => Object.entries(want).filter(([k, v]) => r.counters?.[k] !== v).map(([k]) => k));
    checks.push([`${c.label}: counters equal the twin's sidecar (${rel(sc)})`, null, 'all runs', bad.length === 0]);
    if (bad.length) console.error(`bench: ${c.label}: counters differ from the sidecar: ${[...new Set(bad)].join(', ')}`);
  }
  lines.push('| check | value | target | met |');
  lines.push('|---|---:|---|---|');
  for (const [name, v, t, okk] of checks) lines.push(`| ${name} | ${fmt(v)} | ${t} | ${okk ? 'yes' : '**no**'} |`);
  lines.push('');
  if (duck?.runs) {
    const sc = results.duckdb[0].scan;
    lines.push(`DuckDB scan decoded ${sc.messages.toLocaleString('en-US')} messages of ${sc.trajectories.toLocaleString('en-US')} trajectories (${(sc.content_chars / 1e9).toFixed(2)} G content chars, ${(sc.call_chars / 1e9).toFixed(2)} G tool-call chars).`);
    lines.push('');
  }
  lines.push('Commands (run from the repository root; `<tmp>` is a temporary directory):');
  lines.push('');
  lines.push('```sh');
  lines.push(`npm run bench -- ${process.argv.slice(2).join(' ')}`.trim());
  for (const c of configs) lines.push(`/usr/bin/time -f '%e %U %S %M' ${show(c.argv)}`);
  lines.push('```');
  const section = lines.join('\n');
  process.stdout.write(`${section}\n`);
  if (opt.readme) replaceSection(START, END, section);
  writeFileSync(join(tmpdir(), 'dm-bench-last.json'), JSON.stringify({ facts, options: opt, results, failures, summary: S }, null, 1));
  if (Object.keys(failures).length) process.exitCode = 1;
}

main().catch((e) => { console.error(`bench: ${e?.message ?? e}`); process.exit(1); });
