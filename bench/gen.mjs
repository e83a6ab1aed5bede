#!/usr/bin/env node
// Seeded generator of a real-scale twin of nebius/SWE-rebench-openhands-trajectories
// `trajectories.parquet`. Content is drawn by sampling and perturbing the real rows in
// nebius-openhands-sample.json (CC-BY-4.0, (c) Nebius; Trofimova et al., "OpenHands Trajectories
// with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025). The twin is synthetic: it keeps the
// schema, the row/instance/label structure, message sizes, tool mix and compressibility of the
// real file, and plants forks between attempts of one instance whose outcome under the mining
// contract (docs/mining-contract.md, default options) is written to a JSON sidecar.
//
//   npm run bench:gen -- --rows 67074 --seed 1 --out bench/data/twin-67k.parquet
//
// Options: --rows N (default 67074) --seed S (default 1) --out FILE (default
// bench/data/twin-<rows>.parquet) --row-group-size N (4096) --window N (instances whose rows are
// shuffled together, 1024) --threads N (DuckDB threads, 2) --duckdb-memory (8GB) --sample FILE
// --mutation-rate R (0.21: share of tokens replaced, sets the compressibility) --dry-run (sidecar
// only, no parquet) --quiet. The sidecar is written next to FILE as <FILE without .parquet>.planted.json.
//
// Streaming: instances are generated window by window as small "recipes" (references into
// pre-escaped text banks), rows are assembled one at a time as JSON lines and piped through a FIFO
// into DuckDB (read_json into a staging table of one row group, written as a one-row-group parquet
// file); block files are concatenated byte for byte (parquet-concat.mjs). Memory stays bounded for
// any --rows (about 5-7 GB peak, mostly DuckDB's staging table and parquet writer).
import { parseArgs } from 'node:util';
import {
  readFileSync, writeFileSync, existsSync, mkdirSync, rmSync, renameSync, createWriteStream, statSync, mkdtempSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve, basename } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import stringSimilarity from 'string-similarity';
import stableStringify from 'fast-json-stable-stringify';
import { DuckDBInstance } from '@duckdb/node-api';
import { UPSTREAM_COLUMNS } from '../test/support/upstream-parquet.mjs';
import { ParquetConcat, readParquetFooter } from './parquet-concat.mjs';
import { sqlString } from './sql.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');

// Published facts of the real file (fixtures/README.md, docs/mining-contract.md §7).
const REAL = {
  rows: 67074, instances: 6306, eligible: 1741, resolved: 32161, repos: 1823, bytes: 2079503354,
  avgTurns: 64.3, maxTurns: 100,
};
// Placeholders replaced per instance in the final JSON line: the workspace path and the bare
// workspace directory name (Latin-1 chars, removed from the corpus, so lines stay one-byte strings).
const PH_WS = '\u00a7';
const PH_NAME = '\u00b6';
const PH_ISSUE = '\u0001';
const PH_COMMIT = '\u0002';
// Default mining options the sidecar's expectations are computed for (contract sections 4-5).
const MINER = { seed: '0', maxPerSide: 3, maxPairsPerInstance: 4, minSimilaritySkip: 0.95 };

const CONTINUE_TEXT = 'Please continue working on the task on whatever approach you think is suitable.\n'
  + 'If you think you have solved the task, please first send your answer to user through message and then finish the interaction.\n'
  + 'IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n';
const BASH_FOOTER = (code) => `\n[The command completed with exit code ${code}.]\n[Current working directory: ${PH_WS}]\n`
  + `[Python interpreter: /opt/conda/envs/testbed/bin/python]\n[Command finished with exit code ${code}]`;

// ---------------------------------------------------------------------------------------------
// Random numbers: sfc32 seeded from SHA-256 of a string.
class Rng {
  constructor(seedStr) {
    const h = createHash('sha256').update(String(seedStr)).digest();
    this.a = h.readUInt32LE(0); this.b = h.readUInt32LE(4); this.c = h.readUInt32LE(8); this.d = h.readUInt32LE(12);
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32() {
    let { a, b, c, d } = this;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0; a = b ^ (b >>> 9); b = (c + (c << 3)) | 0; c = (c << 21) | (c >>> 11); c = (c + t) | 0;
    this.a = a; this.b = b; this.c = c; this.d = d;
    return t >>> 0;
  }
  next() { return this.u32() / 4294967296; }
  int(n) { return Math.floor(this.next() * n); }
  range(lo, hi) { return lo + this.int(hi - lo + 1); }
  chance(p) { return this.next() < p; }
  pick(arr) { return arr[this.int(arr.length)]; }
  normal() { let u = 0; while (u === 0) u = this.next(); return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next()); }
  hex(n) { let s = ''; while (s.length < n) s += this.u32().toString(16).padStart(8, '0'); return s.slice(0, n); }
  shuffle(arr) { for (let i = arr.length - 1; i > 0; i--) { const j = this.int(i + 1); const t = arr[i]; arr[i] = arr[j]; arr[j] = t; } return arr; }
  weighted(pairs) { let r = this.next() * pairs.reduce((s, p) => s + p[1], 0); for (const [v, w] of pairs) { r -= w; if (r < 0) return v; } return pairs[pairs.length - 1][0]; }
}
const sha256hex = (s) => createHash('sha256').update(s).digest('hex');

// ---------------------------------------------------------------------------------------------
// Corpus: texts of the real rows, split by kind, with workspace paths replaced by placeholders.
function defaultSamplePath() {
  const cands = [process.env.DM_NEBIUS_SAMPLE, join(ROOT, 'fixtures', 'nebius-openhands-sample.json'),
    // Last resort (tests): the trimmed fixture rows; structure and forks are the same, sizes are not realistic.
    join(ROOT, 'fixtures', 'source', 'nebius-openhands-trimmed.json')].filter(Boolean);
  for (const c of cands) if (existsSync(c)) return c;
  throw new Error(`nebius-openhands-sample.json not found (tried ${cands.join(', ')}); pass --sample`);
}

function stripBashFooter(s) {
  const i = s.search(/\n?\[The command completed with exit code/);
  return i >= 0 ? s.slice(0, i) : s;
}

function loadCorpus(path) {
  // The full sample (a JSON array of rows) or the trimmed fixture ({license, tools, rows}).
  const data = JSON.parse(readFileSync(path, 'utf8'));
  const rows = Array.isArray(data) ? data : data.rows;
  const C = {
    system: rows[0].trajectory[0].content, tools: rows[0].tools ?? data.tools, templates: [], issues: [],
    bashOut: [], viewFile: [], viewDir: [], code: [], narr: [], thought: [], finish: [], cmd: [], patch: [], relPaths: new Set(),
    len: { bash: [], viewFile: [], viewDir: [], sr: [], create: [], oldStr: [], newStr: [], patch: [] },
    narrEmpty: 0, narrTotal: 0, calls: {},
  };
  for (const r of rows) {
    const user = r.trajectory[1].content;
    const ws = /<uploaded_files>\n(\S+)\n/.exec(user)[1];
    const wsName = basename(ws);
    const ph = (s) => String(s ?? '').replace(/[\u00a7\u00b6\u0001\u0002]/g, '?').split(ws).join(PH_WS).split(wsName).join(PH_NAME);
    const i0 = user.indexOf('<issue_description>\n') + '<issue_description>\n'.length;
    const i1 = user.indexOf('\n</issue_description>');
    C.issues.push(ph(user.slice(i0, i1)));
    C.templates.push(ph(user.slice(0, i0) + PH_ISSUE + user.slice(i1)).replace(/\b[0-9a-f]{40}\b/g, PH_COMMIT));
    if (r.model_patch) { C.patch.push(ph(r.model_patch)); C.len.patch.push(r.model_patch.length); }
    const t = r.trajectory;
    for (let i = 2; i < t.length; i++) {
      const m = t[i];
      if (m.role !== 'assistant') continue;
      C.narrTotal++;
      if (m.content) C.narr.push(ph(m.content)); else C.narrEmpty++;
      for (const c of m.tool_calls ?? []) {
        const name = c.function.name;
        const a = JSON.parse(c.function.arguments);
        const out = t[i + 1]?.role === 'tool' ? ph(t[i + 1].content) : '';
        const kind = name === 'str_replace_editor' ? `${name}:${a.command}` : name;
        C.calls[kind] = (C.calls[kind] ?? 0) + 1;
        for (const m2 of out.matchAll(new RegExp(`${PH_WS}(/[^\\s'"]+)`, 'g'))) C.relPaths.add(m2[1]);
        if (name === 'execute_bash') {
          C.cmd.push(ph(a.command));
          const body = stripBashFooter(out);
          C.bashOut.push(body); C.len.bash.push(body.length);
        } else if (name === 'str_replace_editor') {
          if (a.command === 'view') {
            const nl = out.indexOf('\n');
            const body = out.slice(nl + 1);
            if (out.startsWith("Here's the result of running `cat -n`")) { C.viewFile.push(body); C.len.viewFile.push(body.length); }
            else if (out.startsWith("Here's the files and directories")) { C.viewDir.push(body); C.len.viewDir.push(body.length); }
          } else if (a.command === 'create') {
            C.code.push(ph(a.file_text)); C.len.create.push(String(a.file_text).length);
          } else if (a.command === 'str_replace') {
            C.code.push(ph(a.old_str), ph(a.new_str));
            C.len.oldStr.push(String(a.old_str).length); C.len.newStr.push(String(a.new_str).length);
            const nl = out.indexOf('\n');
            const body = out.slice(nl + 1).replace(/\nReview the changes and make sure they are as expected\.[\s\S]*$/, '');
            C.viewFile.push(body); C.len.sr.push(body.length);
          }
        } else if (name === 'think') C.thought.push(ph(a.thought));
        else if (name === 'finish') C.finish.push(ph(a.message));
      }
    }
  }
  // Code lines from file views (line-number prefix removed) enrich the code corpus.
  for (const v of C.viewFile) C.code.push(v.split('\n').map((l) => l.replace(/^\s*\d+\t/, '')).join('\n'));
  C.relPaths = [...C.relPaths].filter((p) => /\.[a-z]+$/.test(p) && p.length < 80);
  C.vocab = [...new Set([C.bashOut, C.viewFile, C.code, C.narr, C.thought].flat().join('\n')
    .match(/[A-Za-z_][A-Za-z0-9_]{2,}/g))];
  C.nameWords = C.vocab.filter((w) => /^[a-z]{3,10}$/.test(w));
  // A trimmed sample lacks some kinds: fall back to related texts so generation still works.
  const fb = (k, alt) => { if (!C[k].length) C[k] = alt.filter((x) => x).slice(); };
  fb('viewFile', C.bashOut); fb('viewDir', C.bashOut); fb('code', C.bashOut); fb('thought', C.narr);
  fb('finish', C.narr); fb('patch', C.code); fb('cmd', ['ls -la', 'git status', 'python -m pytest -x -q']);
  for (const k of Object.keys(C.len)) if (!C.len[k].length) C.len[k] = [400, 1200, 2500];
  if (!C.relPaths.length) C.relPaths = ['/setup.py', '/README.md', '/src/main.py', '/tests/test_main.py'];
  C.trimmed = !Array.isArray(data);
  return C;
}

// ---------------------------------------------------------------------------------------------
// Text banks: long strings made of perturbed segments of real texts (tokens replaced by random
// vocabulary words / digits at `rate`), sampled by line-aligned windows.
const TOKEN_RE = /[A-Za-z_][A-Za-z0-9_]{2,}|[0-9]+/g;
function mutate(rng, s, rate, vocab) {
  return s.replace(TOKEN_RE, (tok) => {
    if (rng.next() >= rate) return tok;
    const c = tok.charCodeAt(0);
    if (c >= 48 && c <= 57) { let d = String(1 + rng.int(9)); for (let i = 1; i < tok.length; i++) d += rng.int(10); return d; }
    return vocab[rng.int(vocab.length)];
  });
}

// JSON escaping done once per bank/item, so that rows are assembled by concatenating slices:
// E1 = escaped as a JSON string value; E2 = escaped twice (text inside the `arguments` JSON string).
// Non-ASCII chars are written as \uXXXX (the decoded strings are unchanged), placeholders kept.
const NON_ASCII = /[^\x00-\x7f\u00a7\u00b6]/g;
const asciiE = (s) => (/[^\x00-\x7f\u00a7\u00b6]/.test(s) ? s.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s);
const jsonE = (s) => JSON.stringify(s).slice(1, -1);
const E1 = (s) => asciiE(jsonE(s));
const E2 = (s) => asciiE(jsonE(jsonE(s)));

function offsets(lines, sep) {
  const o = new Int32Array(lines.length + 1);
  for (let k = 0; k < lines.length; k++) o[k + 1] = o[k] + lines[k].length + sep;
  return o;
}
class Bank {
  constructor(lines, withE2) {
    this.n = lines.length;
    this.text = lines.join('\n'); this.o0 = offsets(lines, 1);
    const l1 = lines.map(E1); this.t1 = l1.join('\\n'); this.o1 = offsets(l1, 2);
    if (withE2) { const l2 = lines.map(E2); this.t2 = l2.join('\\\\n'); this.o2 = offsets(l2, 3); }
  }
}
/** Text values: a line window of a bank, or a shared item; raw / E1 / E2 forms. */
class Win {
  constructor(bank, i, j) { this.bank = bank; this.i = i; this.j = j; }
  raw() { const b = this.bank; return b.text.slice(b.o0[this.i], b.o0[this.j] - 1); }
  e1() { const b = this.bank; return b.t1.slice(b.o1[this.i], b.o1[this.j] - 2); }
  e2() { const b = this.bank; return b.t2.slice(b.o2[this.i], b.o2[this.j] - 3); }
}
class Item {
  constructor(s) { this.s = s; this.x1 = null; this.x2 = null; }
  raw() { return this.s; }
  e1() { return (this.x1 ??= E1(this.s)); }
  e2() { return (this.x2 ??= E2(this.s)); }
}
const R = (v) => (typeof v === 'string' ? v : v.raw());
const X1 = (v) => (typeof v === 'string' ? E1(v) : v.e1());
const X2 = (v) => (typeof v === 'string' ? E2(v) : v.e2());

function buildBank(rng, docs, bytes, rate, vocab, { numbered = false, withE2 = false } = {}) {
  const docLines = docs.filter((d) => d.length > 0).map((d) => d.split('\n'));
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const dl = rng.pick(docLines);
    const s = rng.int(dl.length);
    const n = 4 + rng.int(60);
    let ln = 1 + rng.int(800);
    for (const l of dl.slice(s, s + n)) {
      const m = numbered ? `${String(ln++).padStart(6)}\t${mutate(rng, l.replace(/^\s*\d+\t/, ''), rate, vocab)}` : mutate(rng, l, rate, vocab);
      lines.push(m); size += m.length + 1;
    }
  }
  return new Bank(lines, withE2);
}

function buildItems(rng, docs, count, rate, vocab) {
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = new Item(mutate(rng, rng.pick(docs), rate, vocab));
  return out;
}

/** A line-aligned window of about `len` chars. */
function windowOf(rng, bank, len) {
  const o = bank.o0;
  const i = rng.int(bank.n);
  const target = o[i] + Math.max(1, len) + 1;
  let lo = i + 1, hi = bank.n; // first j > i with o[j] >= target
  while (lo < hi) { const mid = (lo + hi) >> 1; if (o[mid] < target) lo = mid + 1; else hi = mid; }
  return new Win(bank, i, lo);
}

// Tool outputs: a string, or {h, w, f} (header, bank window, footer), assembled at write time so
// recipes never hold large flattened strings.
const out3 = (h, w, f) => ({ h, w, f });
const rawOut = (o) => (o == null ? null : typeof o === 'string' ? o : o.h + o.w.raw() + o.f);
const e1Out = (o) => (typeof o === 'string' ? E1(o) : E1(o.h) + o.w.e1() + E1(o.f));

// ---------------------------------------------------------------------------------------------
// Contract keys (section 3), used to compute the expected outcome of every planted pair.
function norm(s) {
  if (s == null) return '';
  return String(s).replace(/\r\n/g, '\n').replace(/[ \t]+$/gm, '').trim();
}
function rawArgs(v) {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Win || v instanceof Item) return v.raw();
  if (Array.isArray(v)) return v.map(rawArgs);
  return Object.fromEntries(Object.keys(v).map((k) => [k, rawArgs(v[k])]));
}
function actionKey(a) {
  if (a.key === undefined) a.key = a.tool === null ? `text ${norm(a.text.raw())}` : `${a.tool} ${stableStringify(rawArgs(a.args))}`;
  return a.key;
}
const toolKey = (a) => (a.tool === null ? 'user' : `${a.tool}\n${norm(rawOut(a.out))}`);

/** E1 of json.dumps(args) with the upstream separators ", " and ": " (ensure_ascii=False). */
function dumpE1(v) {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string' || v instanceof Win || v instanceof Item) return `\\"${X2(v)}\\"`;
  if (Array.isArray(v)) return `[${v.map(dumpE1).join(', ')}]`;
  return `{${Object.keys(v).map((k) => `\\"${k}\\": ${dumpE1(v[k])}`).join(', ')}}`;
}

// ---------------------------------------------------------------------------------------------
function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: { type: 'string', default: String(REAL.rows) },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
      'row-group-size': { type: 'string', default: '4096' },
      window: { type: 'string', default: '1024' },
      threads: { type: 'string', default: '2' },
      sample: { type: 'string' },
      'mutation-rate': { type: 'string', default: '0.21' },
      'duckdb-memory': { type: 'string', default: '8GB' },
      'dry-run': { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const rows = Number(values.rows);
  if (!Number.isInteger(rows) || rows < 20) throw new Error('--rows must be an integer >= 20');
  return {
    rows, seed: values.seed,
    out: resolve(values.out ?? join(ROOT, 'bench', 'data', `twin-${rows}.parquet`)),
    rowGroupSize: Number(values['row-group-size']), window: Number(values.window), threads: Number(values.threads),
    sample: values.sample ?? defaultSamplePath(), rate: Number(values['mutation-rate']),
    dryRun: values['dry-run'], quiet: values.quiet, duckdbMemory: values['duckdb-memory'],
  };
}

// ---------------------------------------------------------------------------------------------
// Structure: instances, sizes, labels, scaled from the published counts.
function planStructure(rng, C, rows) {
  const scale = rows / REAL.rows;
  const nInst = Math.max(2, Math.round(REAL.instances * scale));
  const nElig = Math.max(1, Math.min(nInst, Math.round(REAL.eligible * scale)));
  const nRes = Math.round(REAL.resolved * scale);
  const nRepos = Math.max(1, Math.round(REAL.repos * scale));
  if (rows < 2 * nElig + (nInst - nElig)) throw new Error('too few rows for the instance structure');
  // Sizes: every eligible instance >= 2 rows, others >= 1; the rest spread by lognormal weights
  // (eligible instances weigh more: real eligible instances keep ~5 of 6 possible trajectories).
  const size = new Int32Array(nInst);
  const elig = new Uint8Array(nInst);
  const eligIdx = rng.shuffle([...Array(nInst).keys()]).slice(0, nElig);
  for (const k of eligIdx) elig[k] = 1;
  const w = new Float64Array(nInst);
  let tot = 0;
  for (let k = 0; k < nInst; k++) { size[k] = elig[k] ? 2 : 1; w[k] = Math.exp(0.8 * rng.normal()) * (elig[k] ? 0.95 : 1); tot += w[k]; }
  const cum = new Float64Array(nInst);
  let acc = 0; for (let k = 0; k < nInst; k++) { acc += w[k] / tot; cum[k] = acc; }
  const MAX_PER_INSTANCE = 60;
  let extra = rows - size.reduce((s, x) => s + x, 0);
  while (extra > 0) {
    const r = rng.next();
    let lo = 0, hi = nInst - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cum[mid] < r) lo = mid + 1; else hi = mid; }
    if (size[lo] >= MAX_PER_INSTANCE) continue;
    size[lo]++; extra--;
  }
  // Labels: eligible instances get 1..n-1 resolved; single-outcome instances are all one side.
  const res = new Int32Array(nInst);
  let sum = 0;
  for (let k = 0; k < nInst; k++) {
    if (elig[k]) { const p = 0.15 + 0.7 * rng.next(); res[k] = Math.min(size[k] - 1, Math.max(1, Math.round(p * size[k]))); }
    else res[k] = rng.chance(0.47) ? size[k] : 0;
    sum += res[k];
  }
  // Adjust to the exact resolved count: flip whole single-outcome instances, then +-1 on eligible.
  const singles = rng.shuffle([...Array(nInst).keys()].filter((k) => !elig[k]));
  for (const k of singles) {
    const d = nRes - sum;
    if (d > 0 && res[k] === 0 && size[k] <= d) { res[k] = size[k]; sum += size[k]; }
    else if (d < 0 && res[k] === size[k] && size[k] <= -d) { res[k] = 0; sum -= size[k]; }
  }
  for (let guard = 0; sum !== nRes && guard < 50 * rows; guard++) {
    const k = rng.pick(eligIdx);
    if (sum < nRes && res[k] < size[k] - 1) { res[k]++; sum++; }
    else if (sum > nRes && res[k] > 1) { res[k]--; sum--; }
  }
  if (sum !== nRes) throw new Error(`could not reach ${nRes} resolved rows (got ${sum})`);
  // Repositories and instance ids (unique; the miner orders instances by id).
  const repoNames = new Set();
  const repos = [];
  while (repos.length < nRepos) {
    const owner = rng.pick(C.nameWords) + (rng.chance(0.3) ? `-${rng.pick(C.nameWords)}` : '');
    const name = rng.pick(C.nameWords) + (rng.chance(0.5) ? `-${rng.pick(C.nameWords)}` : '');
    const r = `${owner}/${name}`;
    if (!repoNames.has(r)) { repoNames.add(r); repos.push({ repo: r, owner, name, ver: `${rng.int(6)}.${rng.int(30)}` }); }
  }
  const ids = new Set();
  const inst = [];
  for (let k = 0; k < nInst; k++) {
    const rp = k < nRepos ? repos[k] : repos[Math.floor(nRepos * rng.next() ** 2)];
    let id;
    do id = `${rp.owner}__${rp.name}-${1 + rng.int(5000)}`; while (ids.has(id));
    ids.add(id);
    inst.push({ k, id, repo: rp.repo, wsName: `${rp.owner}__${rp.name}__${rp.ver}`, size: size[k], resolved: res[k], eligible: !!elig[k] });
  }
  return { nInst, nElig, nRes, nRepos, inst };
}

// ---------------------------------------------------------------------------------------------
// Attempts of one instance.
const MODE_P = [['fresh', 0.27], ['fork', 0.27], ['near', 0.13], ['env', 0.06], ['clone', 0.26], ['truncated', 0.01]];
const TOOL_P = [['execute_bash', 52.5], ['str_replace_editor', 41.8], ['think', 3.9], ['task_tracker', 1.2]];
const SRE_P = [['view', 0.55], ['create', 0.2], ['str_replace', 0.23], ['insert', 0.02]];

class Generator {
  constructor(C, banks, items, seed) {
    this.C = C; this.B = banks; this.I = items; this.seed = seed;
    this.uid = 0;
    this.THINK = { uid: ++this.uid, tool: 'think', args: {}, out: 'Your thought has been logged.' };
  }

  jitterLen(rng, arr, scale = 1) { return Math.max(1, Math.round(rng.pick(arr) * scale * Math.exp(0.35 * rng.normal()))); }

  drawLength(rng) {
    if (rng.chance(0.03)) return { T: 100, finish: false };
    return { T: Math.min(99, Math.max(6, Math.round(62.2 + 19 * rng.normal()))), finish: true };
  }

  newAction(tool, args, out) { return { uid: ++this.uid, tool, args, out }; }

  instanceContext(meta) {
    const rng = new Rng(`${this.seed}:inst:${meta.k}`);
    const C = this.C;
    const issueLen = this.jitterLen(rng, C.issues.map((s) => s.length));
    const issue = windowOf(rng, this.B.issue, issueLen).raw();
    const user = rng.pick(C.templates).replace(PH_ISSUE, issue).replace(PH_COMMIT, rng.hex(40));
    const paths = [];
    for (let i = 0; i < 14; i++) paths.push(PH_WS + mutate(rng, rng.pick(C.relPaths), 0.3, C.nameWords));
    const ctx = { meta, rng, user, paths, env: new Map(), cmds: [] };
    for (let i = 0; i < 8; i++) ctx.cmds.push(rng.pick(this.I.cmd));
    const dirOut = (path) => out3(`Here's the files and directories up to 2 levels deep in ${path}, excluding hidden items:\n`,
      windowOf(rng, this.B.viewDir, this.jitterLen(rng, C.len.viewDir)), '');
    ctx.openings = [
      this.newAction('str_replace_editor', { command: 'view', path: '/workspace' }, dirOut('/workspace')),
      this.newAction('str_replace_editor', { path: PH_WS, command: 'view' }, dirOut(PH_WS)),
      this.newAction('execute_bash', { command: rng.pick(this.I.cmd) },
        out3('', windowOf(rng, this.B.bash, this.jitterLen(rng, C.len.bash)), BASH_FOOTER(0))),
      this.newAction('str_replace_editor', { path: `${PH_WS}/README.md`, command: 'view' },
        out3(`Here's the result of running \`cat -n\` on ${PH_WS}/README.md:\n`, windowOf(rng, this.B.viewFile, this.jitterLen(rng, C.len.viewFile)), '')),
    ];
    const o = ctx.openings;
    ctx.openingSeq = rng.chance(0.35) ? [this.THINK, o[0], rng.pick([o[1], o[3]])] : [o[0], rng.pick([o[1], o[3], this.THINK]), o[2]];
    ctx.openingP = [0.95, 0.8, 0.55];
    return ctx;
  }

  /** A fresh action (not an opening). Deterministic environment: same bash/view call, same output. */
  freshAction(ctx, rng, { allowThink = true } = {}) {
    const C = this.C, B = this.B;
    let tool = rng.weighted(TOOL_P);
    if (!allowThink && tool === 'think') tool = 'execute_bash';
    if (tool === 'think') return this.THINK;
    if (tool === 'task_tracker') {
      if (rng.chance(0.3)) return this.newAction('task_tracker', { command: 'view' }, `# Task List\n\n${rng.int(8) + 1} tasks tracked.`);
      const n = 3 + rng.int(6);
      const list = [];
      for (let i = 0; i < n; i++) {
        list.push({ id: String(i + 1), title: rng.pick(this.I.narr).s.slice(0, 30 + rng.int(60)).replace(/\s+/g, ' ').trim(),
          status: rng.pick(['todo', 'in_progress', 'done']), notes: rng.pick(this.I.narr).s.slice(0, rng.int(120)).trim() });
      }
      return this.newAction('task_tracker', { command: 'plan', task_list: list },
        `Task list has been updated with ${n} items. Stored in session directory: sessions/${rng.hex(32)}/TASKS.md`);
    }
    if (tool === 'execute_bash') {
      const command = rng.chance(0.45) ? rng.pick(ctx.cmds) : rng.pick(this.I.cmd);
      const args = rng.chance(0.06) ? { command, timeout: rng.pick([30, 60, 120, 300]) } : { command };
      const k = `b\0${R(command)}\0${args.timeout ?? ''}`;
      let out = ctx.env.get(k);
      if (!out) { out = out3('', windowOf(rng, B.bash, this.jitterLen(rng, C.len.bash)), BASH_FOOTER(rng.chance(0.2) ? 1 : 0)); ctx.env.set(k, out); }
      return this.newAction('execute_bash', args, out);
    }
    const sub = rng.weighted(SRE_P);
    const path = rng.pick(ctx.paths);
    if (sub === 'view') {
      let args;
      if (rng.chance(0.45)) { const a = 1 + rng.int(600); args = { path, command: 'view', view_range: [a, rng.chance(0.1) ? -1 : a + 10 + rng.int(60)] }; }
      else args = rng.chance(0.5) ? { command: 'view', path } : { path, command: 'view' };
      const k = `v\0${path}\0${args.view_range ?? ''}`;
      let out = ctx.env.get(k);
      if (!out) {
        out = out3(`Here's the result of running \`cat -n\` on ${path}:\n`, windowOf(rng, B.viewFile, this.jitterLen(rng, C.len.viewFile, args.view_range ? 0.5 : 1)), '');
        ctx.env.set(k, out);
      }
      return this.newAction('str_replace_editor', args, out);
    }
    if (sub === 'create') {
      const file_text = windowOf(rng, B.code, this.jitterLen(rng, C.len.create));
      return this.newAction('str_replace_editor', { path, command: 'create', file_text }, `File created successfully at: ${path}`);
    }
    const new_str = windowOf(rng, B.code, this.jitterLen(rng, C.len.newStr));
    const head = `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n`;
    const tail = '\nReview the changes and make sure they are as expected. Edit the file again if necessary.';
    const snippet = windowOf(rng, B.viewFile, this.jitterLen(rng, C.len.sr));
    if (sub === 'insert') {
      return this.newAction('str_replace_editor', { path, command: 'insert', insert_line: 1 + rng.int(400), new_str }, out3(head, snippet, tail));
    }
    const old_str = windowOf(rng, B.code, this.jitterLen(rng, C.len.oldStr));
    return this.newAction('str_replace_editor', { path, command: 'str_replace', old_str, new_str }, out3(head, snippet, tail));
  }

  finishAction(rng) { return this.newAction('finish', { message: rng.pick(this.I.finish) }, null); }
  textAction(rng) { return Object.assign(this.newAction(null, null, null), { text: rng.pick(this.I.narrNonEmpty) }); }

  runTurn(rng, action) {
    const rt = { uid: ++this.uid, action, id: `chatcmpl-tool-${rng.hex(32)}`, narr: rng.chance(this.pEmptyNarr) ? '' : rng.pick(this.I.narr) };
    if (action.tool === 'think') rt.thought = rng.pick(this.I.thought);
    return rt;
  }

  /** Turn t of a fresh run: the instance's usual opening steps (runs of one task mostly start
   * alike), then fresh actions. */
  turnAction(ctx, rng, t, prev) {
    const seq = ctx.openingSeq;
    if (t < seq.length && (t === 0 || prev === seq[t - 1]) && rng.chance(ctx.openingP[t])) return seq[t];
    if (t < 3 && rng.chance(0.3)) { const o = rng.pick(ctx.openings); if (o !== prev) return o; }
    if (rng.chance(0.003)) return this.textAction(rng);
    return this.freshAction(ctx, rng);
  }

  continueRun(ctx, rng, turns, from, T, finish) {
    for (let t = from; t < T; t++) {
      if (finish && t === T - 1) { turns.push(this.runTurn(rng, this.finishAction(rng))); break; }
      turns.push(this.runTurn(rng, this.turnAction(ctx, rng, t, turns[t - 1]?.action)));
    }
    return turns;
  }

  attemptMeta(rng, resolved) {
    const patchLen = Math.max(300, Math.round(Math.exp(8.2 + 0.9 * rng.normal())));
    return {
      id: `chatcmpl-${rng.hex(32)}`, resolved,
      patch: resolved || rng.chance(0.9) ? windowOf(rng, this.B.patch, Math.min(60000, patchLen)) : null,
      gtc: rng.chance(0.5) ? null : (rng.chance(resolved ? 0.8 : 0.3) ? 1 : 0),
      ppg: rng.chance(0.5) ? null : (rng.chance(resolved ? 0.85 : 0.35) ? 1 : 0),
    };
  }

  /** Perturb an action slightly (near-identical call). Returns null when the tool has nothing to perturb. */
  perturb(rng, a) {
    if (a.tool === 'execute_bash') {
      const c = R(a.args.command);
      const v = rng.int(4);
      let command;
      if (v === 0) command = `${c} ${rng.pick(['-q', '-v', '-x', '2>&1', '| head -50', '| tail -20', '--tb=short'])}`;
      else if (v === 1 && /\d/.test(c)) command = c.replace(/\d+/, (d) => String(Number(d) + 1 + rng.int(20)));
      else { const i = rng.int(c.length); command = c.slice(0, i) + rng.pick(['_', 's', 'e', '.', '1']) + c.slice(i + 1); }
      if (command === c) command = `${c} `.trimEnd() + ' -q';
      return this.newAction('execute_bash', { ...a.args, command }, out3('', windowOf(rng, this.B.bash, this.jitterLen(rng, this.C.len.bash)), BASH_FOOTER(0)));
    }
    if (a.tool === 'str_replace_editor') {
      const args = { ...a.args };
      if (args.view_range) args.view_range = [Math.max(1, args.view_range[0] + rng.range(-5, 5)), args.view_range[1] === -1 ? -1 : args.view_range[1] + rng.range(1, 30)];
      else if (args.command === 'view') args.view_range = [1, 20 + rng.int(80)];
      else {
        const key = args.new_str !== undefined ? 'new_str' : 'file_text';
        const s = R(args[key]);
        let edits = 1 + Math.floor(rng.next() ** 3 * 40);
        let t = s;
        while (edits-- > 0) { const i = rng.int(t.length + 1); t = t.slice(0, i) + rng.pick(['    ', '_', 'x', '\n', '(', '1', 'self.']) + t.slice(i); }
        args[key] = t;
      }
      return this.newAction('str_replace_editor', args, a.out);
    }
    if (a.tool === 'finish') {
      const m = R(a.args.message);
      const i = rng.int(m.length);
      return this.newAction('finish', { message: m.slice(0, i) + rng.pick(['.', ' ', 'the ', '\n']) + m.slice(i) }, null);
    }
    return null;
  }

  /** All attempts of one instance. */
  instanceAttempts(meta) {
    const ctx = this.instanceContext(meta);
    const rng = ctx.rng;
    const labels = rng.shuffle([...Array(meta.size)].map((_, i) => (i < meta.resolved ? 1 : 0)));
    const atts = [];
    for (let n = 0; n < meta.size; n++) {
      const a = this.attemptMeta(rng, labels[n]);
      let mode = n === 0 ? 'fresh' : rng.weighted(MODE_P);
      let parent = null;
      if (mode !== 'fresh') parent = rng.pick(atts);
      if (mode === 'clone') {
        const same = atts.filter((x) => x.resolved === a.resolved);
        if (same.length && rng.chance(0.9)) parent = rng.pick(same);
        Object.assign(a, { turns: parent.turns, finish: parent.finish, exit: parent.exit, patch: parent.patch, mode, parent: parent.id, forkTurn: null });
        atts.push(a); continue;
      }
      if (mode === 'truncated' && parent.turns.length < 4) mode = 'fork';
      if (mode === 'truncated') {
        let t = 2 + rng.int(parent.turns.length - 3);
        while (t > 1 && parent.turns[t - 1].action.tool === null) t--;
        const turns = parent.turns.slice(0, t).map((rt) => this.copyTurn(rng, rt));
        Object.assign(a, { turns, finish: false, exit: 'error', mode, parent: parent.id, forkTurn: t });
        atts.push(a); continue;
      }
      if (mode === 'fresh') {
        const { T, finish } = this.drawLength(rng);
        Object.assign(a, { turns: this.continueRun(ctx, rng, [], 0, T, finish), finish, exit: finish ? 'submit' : 'max_iterations', mode, parent: null, forkTurn: null });
        atts.push(a); continue;
      }
      // Forks: shared prefix (same calls and outputs, new ids / narration), then a different step.
      const pt = parent.turns;
      let t = Math.min(pt.length - 1, 98, Math.floor(pt.length * rng.next() ** 1.4));
      const pa = pt[t].action;
      let action = null;
      if (mode === 'env') {
        if (pa.tool === 'execute_bash' || (pa.tool === 'str_replace_editor' && pa.args.command === 'view')) {
          const out = pa.tool === 'execute_bash'
            ? (rng.chance(0.5) ? out3(pa.out.h, pa.out.w, BASH_FOOTER(pa.out.f.includes('code 0.') ? 1 : 0))
              : out3('', windowOf(rng, this.B.bash, this.jitterLen(rng, this.C.len.bash)), BASH_FOOTER(rng.chance(0.5) ? 1 : 0)))
            : out3(pa.out.h, windowOf(rng, this.B.viewFile, this.jitterLen(rng, this.C.len.viewFile)), '');
          action = this.newAction(pa.tool, pa.args, out);
        } else mode = 'fork';
      }
      if (mode === 'near') { action = this.perturb(rng, pa); if (!action) mode = 'fork'; }
      if (mode === 'fork') {
        for (let tries = 0; tries < 20; tries++) {
          action = t === 0 && rng.chance(0.5) ? this.turnAction(ctx, rng, 0, undefined) : this.freshAction(ctx, rng);
          if (actionKey(action) !== actionKey(pa)) break;
        }
      }
      const turns = pt.slice(0, t).map((rt) => this.copyTurn(rng, rt));
      turns.push(this.runTurn(rng, action));
      let { T, finish } = this.drawLength(rng);
      if (T < t + 2) T = Math.min(100, t + 2 + rng.int(12));
      if (T === 100) finish = false;
      this.continueRun(ctx, rng, turns, t + 1, T, finish);
      const forkMsg = mode === 'env' ? 3 + 2 * t : 2 + 2 * t;
      Object.assign(a, { turns, finish, exit: finish ? 'submit' : 'max_iterations', mode, parent: parent.id, forkTurn: t, forkMsg });
      atts.push(a);
    }
    return { ctx, atts };
  }

  copyTurn(rng, rt) {
    const c = { uid: ++this.uid, action: rt.action, id: `chatcmpl-tool-${rng.hex(32)}`, narr: rng.chance(0.3) ? rt.narr : (rng.chance(this.pEmptyNarr) ? '' : rng.pick(this.I.narr)) };
    if (rt.thought !== undefined) c.thought = rng.pick(this.I.thought);
    return c;
  }
}

// ---------------------------------------------------------------------------------------------
// Expected outcome of the walk for one instance (contract sections 4-5, default options).
function messageCount(att) {
  const n = att.turns.length;
  return 2 + 2 * n - (att.finish ? 1 : 0);
}
function hasToolMsg(att, t) { return !(att.finish && t === att.turns.length - 1); }

function firstDivergence(A, B) {
  const n = Math.min(A.turns.length, B.turns.length);
  for (let t = 0; t < n; t++) {
    const ra = A.turns[t], rb = B.turns[t];
    if (ra === rb) continue;
    const aa = ra.action, ab = rb.action;
    if (aa !== ab && actionKey(aa) !== actionKey(ab)) return { i: 2 + 2 * t, t, assistant: true };
    if (!hasToolMsg(A, t) || !hasToolMsg(B, t)) return null;
    if (aa !== ab && toolKey(aa) !== toolKey(ab)) return { i: 3 + 2 * t, t: t + 1, assistant: false };
  }
  return null;
}
// Identity of the emitted row (prompt + chosen from the resolved side, rejected from the failed
// side): raw messages are identical iff they come from the same run turn (tool-call ids are
// unique per run turn), except assistant text-only messages, identified by their action.
function rowIdentity(R, F, t) {
  const mid = (rt) => (rt.action.tool === null ? `a${rt.action.uid}` : `r${rt.uid}`);
  const parts = [];
  for (let u = 0; u < t; u++) parts.push(mid(R.turns[u]), R.turns[u].action.tool === null ? 'u' : `r${R.turns[u].uid}`);
  parts.push(mid(R.turns[t]), mid(F.turns[t]));
  return parts.join(',');
}

function expectInstance(ctx, atts, counters) {
  const meta = ctx.meta;
  const rank = (a) => sha256hex(`${MINER.seed}:${a.id}`);
  const side = (v) => atts.filter((a) => a.resolved === v).map((a) => [rank(a), a]).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
    .slice(0, MINER.maxPerSide).map((x) => x[1]);
  const R = side(1), F = side(0);
  counters.trajectories_extracted += R.length + F.length;
  const kept = new Set();
  const pairs = [];
  const subst = (s) => s.split(PH_WS).join(`/workspace/${meta.wsName}`).split(PH_NAME).join(meta.wsName);
  for (const r of R) {
    for (const f of F) {
      counters.pairs_walked++;
      const d = firstDivergence(r, f);
      let outcome, sim = null;
      if (!d) outcome = 'no_divergence';
      else if (!d.assistant) outcome = 'environment_divergence';
      else {
        sim = stringSimilarity.compareTwoStrings(subst(actionKey(r.turns[d.t].action)), subst(actionKey(f.turns[d.t].action)));
        if (sim >= MINER.minSimilaritySkip) outcome = 'near_duplicate';
        else {
          const id = rowIdentity(r, f, d.t);
          if (kept.has(id)) outcome = 'exact_duplicate';
          else if (kept.size >= MINER.maxPairsPerInstance) outcome = 'capped';
          else { kept.add(id); outcome = 'emitted'; if (d.t === 0) counters.divergence_turn_0++; }
        }
      }
      counters[outcome === 'emitted' ? 'pairs_emitted' : outcome]++;
      pairs.push([meta.id, r.id, f.id, d ? d.i : null, d ? d.t : null, outcome, sim === null ? null : Math.round(sim * 1e9) / 1e9]);
    }
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
function materialize(gen, ctx, att) {
  const meta = ctx.meta;
  const p = ['{"trajectory_id":"', att.id, '","instance_id":"', meta.id, '","repo":"', meta.repo, '","trajectory":[', gen.sysFrag, ',', ctx.userFrag];
  for (const rt of att.turns) {
    const a = rt.action;
    if (a.tool === null) { p.push(',{"role":"assistant","content":"', a.text.e1(), '"},', CONTINUE_FRAG); continue; }
    const args = a.tool === 'think' ? dumpE1({ thought: rt.thought }) : dumpE1(a.args);
    p.push(',{"role":"assistant","content":"', X1(rt.narr), '","tool_calls":[{"function":{"arguments":"', args, '","name":"', a.tool,
      '"},"id":"', rt.id, '","type":"function"}]}');
    if (a.tool !== 'finish') p.push(',{"role":"tool","content":"', e1Out(a.out), '","name":"', a.tool, '","tool_call_id":"', rt.id, '"}');
  }
  p.push('],"model_patch":"', att.patch ? E1(`diff --git a/${PH_NAME}.py b/${PH_NAME}.py\n`) + att.patch.e1() : '',
    '","exit_status":"', att.exit, '","resolved":', String(att.resolved), ',"gen_tests_correct":', String(att.gtc),
    ',"pred_passes_gen_tests":', String(att.ppg), '}\n');
  return p.join('').replaceAll(PH_WS, `/workspace/${meta.wsName}`).replaceAll(PH_NAME, meta.wsName);
}
const CONTINUE_FRAG = `{"role":"user","content":"${E1(CONTINUE_TEXT)}"}`;

/**
 * JSON lines -> DuckDB -> parquet with row groups of exactly `rowGroupSize` rows, in bounded
 * memory: each block of rowGroupSize rows streams through a FIFO into a staging table (read_json),
 * the table is written as a one-row-group parquet file (DuckDB cuts row groups exactly only when
 * it scans a table), and block files are concatenated byte for byte into the output. Two staging
 * tables alternate, so generating block b+1 overlaps with compressing block b.
 */
class ParquetSink {
  async open(opt, tools, tmpOut) {
    this.opt = opt;
    this.dir = mkdtempSync(join(tmpdir(), 'dm-gen-'));
    this.inst = await DuckDBInstance.create(':memory:', {
      threads: String(opt.threads), preserve_insertion_order: 'true', memory_limit: opt.duckdbMemory,
      temp_directory: join(this.dir, 'spill'),
    });
    this.cIn = await this.inst.connect();
    this.cOut = [await this.inst.connect(), await this.inst.connect()];
    const toolsFile = join(this.dir, 'tools.json');
    writeFileSync(toolsFile, JSON.stringify({ tools }) + '\n');
    const { tools: toolsType, ...rest } = UPSTREAM_COLUMNS;
    await this.cIn.run(`CREATE TABLE tools_const AS SELECT tools FROM read_json(${sqlString(toolsFile)}, format='newline_delimited', columns={'tools': ${sqlString(toolsType)}})`);
    this.tableDef = Object.entries(UPSTREAM_COLUMNS).map(([k, v]) => `"${k}" ${v}`).join(', ');
    for (const i of [0, 1]) await this.cIn.run(`CREATE TABLE stage${i} (${this.tableDef})`);
    this.colSpec = Object.entries(rest).map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`).join(', ');
    this.select = Object.keys(UPSTREAM_COLUMNS).map((k) => (k === 'tools' ? '(SELECT tools FROM tools_const)' : `j."${k}"`)).join(', ');
    this.concat = new ParquetConcat(tmpOut);
    this.exporting = [null, null];
    this.chain = Promise.resolve();
    this.block = 0;
    this.error = null;
    this.stream = null;
  }

  async begin() {
    const slot = this.block % 2;
    if (this.exporting[slot]) await this.exporting[slot];
    if (this.error) throw this.error;
    const fifo = join(this.dir, `block${this.block}.fifo`);
    execFileSync('mkfifo', [fifo]);
    this.fifo = fifo;
    this.ingest = this.cIn.run(`INSERT INTO stage${slot} SELECT ${this.select} FROM read_json(${sqlString(fifo)}, format='newline_delimited',
      columns={${this.colSpec}}, maximum_object_size=1000000000) j`).catch((e) => { this.error ??= e; this.stream?.destroy(); });
    this.stream = createWriteStream(fifo, { highWaterMark: 16 << 20 });
    this.stream.on('error', (e) => { this.error ??= e; });
  }

  async write(chunk) {
    if (this.error) throw this.error;
    // Lines are pure ASCII (every non-ASCII char is written as \uXXXX): latin1 is a plain copy.
    if (!this.stream.write(chunk, 'latin1')) {
      await new Promise((res) => { const done = () => { this.stream.off('drain', done); this.stream.off('close', done); res(); }; this.stream.on('drain', done); this.stream.on('close', done); });
    }
    if (this.error) throw this.error;
  }

  async end() {
    await new Promise((res) => this.stream.end(res));
    await this.ingest;
    rmSync(this.fifo, { force: true });
    if (this.error) throw this.error;
    const slot = this.block % 2;
    const file = join(this.dir, `block${this.block}.parquet`);
    this.block++;
    const conn = this.cOut[slot];
    const prev = this.lastExport ?? Promise.resolve();
    const exp = (async () => {
      await prev; // one export at a time (each holds a row group in memory)
      if (this.error) return;
      await conn.run(`COPY stage${slot} TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${this.opt.rowGroupSize})`);
      await conn.run(`DROP TABLE stage${slot}; CREATE TABLE stage${slot} (${this.tableDef})`);
    })().catch((e) => { this.error ??= e; });
    this.exporting[slot] = exp;
    this.lastExport = exp;
    this.chain = Promise.all([this.chain, exp]).then(() => {
      if (this.error) return;
      this.concat.append(file);
      rmSync(file, { force: true });
    });
  }

  async close(ok, tmpOut) {
    await this.chain.catch(() => {});
    if (ok && !this.error) this.concat.finish(); else this.concat.close();
    for (const c of [this.cIn, ...this.cOut]) c.closeSync?.();
    this.inst.closeSync?.();
    rmSync(this.dir, { recursive: true, force: true });
    if (this.error) { rmSync(tmpOut, { force: true }); throw this.error; }
  }
}

async function main() {
  const t0 = performance.now();
  const opt = parseCli(process.argv.slice(2));
  const log = (...a) => { if (!opt.quiet) console.error(...a); };
  const C = loadCorpus(opt.sample);
  const rng = new Rng(`${opt.seed}:structure`);
  // Banks scale with the row count (small twins build fast); large twins use full-size banks.
  const s = Math.min(1, Math.max(0.04, opt.rows / 20000));
  const MB = 1 << 20;
  const brng = new Rng(`${opt.seed}:banks`);
  const banks = {
    bash: buildBank(brng, C.bashOut, 40 * MB * s, opt.rate, C.vocab),
    viewFile: buildBank(brng, C.viewFile, 40 * MB * s, opt.rate, C.vocab, { numbered: true }),
    viewDir: buildBank(brng, C.viewDir, 4 * MB * s, opt.rate, C.nameWords),
    code: buildBank(brng, C.code, 24 * MB * s, opt.rate, C.vocab, { withE2: true }),
    issue: buildBank(brng, [...C.issues, ...C.narr], 4 * MB * s, opt.rate, C.vocab),
    patch: buildBank(brng, C.patch, 12 * MB * s, opt.rate, C.vocab),
  };
  const items = {
    cmd: buildItems(brng, C.cmd, Math.round(30000 * s), opt.rate * 0.5, C.nameWords),
    narr: buildItems(brng, C.narr, Math.round(30000 * s), opt.rate, C.vocab),
    thought: buildItems(brng, C.thought, Math.round(4000 * s), opt.rate, C.vocab),
    finish: buildItems(brng, C.finish, Math.round(4000 * s), opt.rate, C.vocab),
  };
  items.narrNonEmpty = items.narr.filter((x) => x.s.trim());
  const gen = new Generator(C, banks, items, opt.seed);
  gen.pEmptyNarr = C.narrEmpty / C.narrTotal;
  gen.sysFrag = `{"role":"system","content":"${E1(C.system.replace(/[\u00a7\u00b6]/g, '?'))}"}`;
  const plan = planStructure(rng, C, opt.rows);
  log(`gen: ${opt.rows} rows, ${plan.nInst} instances (${plan.nElig} eligible), ${plan.nRes} resolved, ${plan.nRepos} repos; banks built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const tmpOut = `${opt.out}.tmp`;
  let sink = null;
  if (!opt.dryRun) {
    mkdirSync(dirname(opt.out), { recursive: true });
    rmSync(tmpOut, { force: true });
    sink = new ParquetSink();
    await sink.open(opt, C.tools, tmpOut);
  }

  const counters = {
    trajectories_read: opt.rows, duplicate_trajectory_ids: 0, unlabelled: 0, bad_rows: 0, malformed_arguments: 0, unknown_roles: 0,
    instances: plan.nInst, eligible_instances: plan.nElig, trajectories_extracted: 0, pairs_walked: 0, no_divergence: 0,
    environment_divergence: 0, near_duplicate: 0, exact_duplicate: 0, capped: 0, pairs_emitted: 0, divergence_turn_0: 0,
  };
  const plantedPairs = [];
  const plantedForks = [];
  const modes = { fresh: 0, fork: 0, near: 0, env: 0, clone: 0, truncated: 0 };
  let turnsSum = 0, maxTurns = 0, msgsSum = 0, bytes = 0, written = 0, inBlock = 0;
  const calls = {};
  const prof = { begin: 0, mat: 0, write: 0, end: 0 };
  const order = rng.shuffle([...Array(plan.nInst).keys()]);
  let ok = false;
  try {
    for (let w = 0; w < order.length; w += opt.window) {
      const rows = [];
      for (const k of order.slice(w, w + opt.window)) {
        const meta = plan.inst[k];
        const { ctx, atts } = gen.instanceAttempts(meta);
        ctx.userFrag = `{"role":"user","content":"${E1(ctx.user)}"}`;
        delete ctx.user; delete ctx.env; delete ctx.rng;
        for (const a of atts) {
          rows.push([ctx, a]);
          modes[a.mode]++;
          turnsSum += a.turns.length; maxTurns = Math.max(maxTurns, a.turns.length); msgsSum += messageCount(a);
          for (const rt of a.turns) { const n = rt.action.tool ?? 'text'; calls[n] = (calls[n] ?? 0) + 1; }
        }
        if (meta.eligible) {
          for (const p of expectInstance(ctx, atts, counters)) plantedPairs.push(p);
          for (const a of atts) if (a.parent) plantedForks.push([meta.id, a.id, a.parent, a.mode, a.forkTurn, a.forkMsg ?? null]);
        }
      }
      rng.shuffle(rows);
      for (const [ctx, a] of rows) {
        written++;
        if (opt.dryRun) continue;
        let tq = performance.now();
        if (inBlock === 0) { await sink.begin(); prof.begin += performance.now() - tq; tq = performance.now(); }
        const line = materialize(gen, ctx, a);
        prof.mat += performance.now() - tq; tq = performance.now();
        bytes += line.length;
        await sink.write(line);
        prof.write += performance.now() - tq; tq = performance.now();
        if (++inBlock === opt.rowGroupSize) { await sink.end(); inBlock = 0; prof.end += performance.now() - tq; }
      }
      log(`gen: ${written}/${opt.rows} rows, ${((performance.now() - t0) / 1000).toFixed(1)} s (ms: ${Object.entries(prof).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')})`);
    }
    if (inBlock > 0) await sink.end();
    ok = true;
  } finally {
    if (sink) await sink.close(ok, tmpOut);
  }
  let rowGroups = null, fileBytes = null;
  if (!opt.dryRun) {
    renameSync(tmpOut, opt.out);
    fileBytes = statSync(opt.out).size;
    const f = readParquetFooter(opt.out);
    rowGroups = f.find((x) => x.id === 4).value.items.map((rg) => Number(rg.find((x) => x.id === 3).value));
  }
  const secs = (performance.now() - t0) / 1000;
  const totalCalls = Object.values(calls).reduce((s2, x) => s2 + x, 0);
  const sidecar = {
    generator: 'bench/gen.mjs',
    source: 'synthetic twin of nebius/SWE-rebench-openhands-trajectories; texts perturbed from real rows (CC-BY-4.0, (c) Nebius)',
    file: basename(opt.out),
    options: { rows: opt.rows, seed: opt.seed, row_group_size: opt.rowGroupSize, window: opt.window, mutation_rate: opt.rate },
    structure: {
      rows: opt.rows, instances: plan.nInst, eligible_instances: plan.nElig, resolved: plan.nRes, failed: opt.rows - plan.nRes,
      repositories: plan.nRepos, attempt_modes: modes, avg_turns: +(turnsSum / opt.rows).toFixed(2), max_turns: maxTurns,
      avg_messages: +(msgsSum / opt.rows).toFixed(2),
      tool_mix: Object.fromEntries(Object.entries(calls).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, +(100 * v / totalCalls).toFixed(2)])),
      row_groups: rowGroups, file_bytes: fileBytes, json_bytes: opt.dryRun ? null : bytes, generation_seconds: +secs.toFixed(1),
    },
    miner_options: { seed: MINER.seed, max_per_side: MINER.maxPerSide, max_pairs_per_instance: MINER.maxPairsPerInstance, min_similarity_skip: MINER.minSimilaritySkip },
    expected_counters: counters,
    planted_pairs_columns: ['instance_id', 'chosen_trajectory_id', 'rejected_trajectory_id', 'divergence_msg_index', 'divergence_turn', 'outcome', 'action_similarity'],
    planted_pairs: plantedPairs,
    planted_forks_columns: ['instance_id', 'trajectory_id', 'parent_trajectory_id', 'mode', 'fork_turn', 'fork_msg_index'],
    planted_forks: plantedForks,
  };
  const sidecarPath = opt.out.replace(/\.parquet$/, '') + '.planted.json';
  writeFileSync(sidecarPath, JSON.stringify(sidecar) + '\n');
  log(`gen: done in ${secs.toFixed(1)} s: ${opt.dryRun ? '(dry run)' : `${opt.out} ${(fileBytes / 1e9).toFixed(3)} GB, ${rowGroups.length} row groups, JSON ${(bytes / 1e9).toFixed(2)} GB`}`);
  log(`gen: sidecar ${sidecarPath}`);
  log(`gen: expected ${JSON.stringify(counters)}`);
  log(`gen: modes ${JSON.stringify(modes)} avg turns ${sidecar.structure.avg_turns} max ${maxTurns} mix ${JSON.stringify(sidecar.structure.tool_mix)}`);
}

main().catch((e) => { console.error(`gen: ${e?.stack ?? e}`); process.exit(1); });
