// Small fixtures for the robustness tests (errors, fuzz, determinism), built at test time in a temp
// folder from the real upstream rows in fixtures/nebius-openhands-sample.json.
//
// Data: nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0, © Nebius. Citation: Trofimova et al.,
// "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025. Every fixture
// written here is derived from those rows (truncated, relabelled, forked) and keeps that licence.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Compression, WriterPropertiesBuilder, readParquet, writeParquet } from 'parquet-wasm';
import { UPSTREAM_COLUMNS, writeUpstreamParquet } from './upstream-parquet.mjs';
import { mulberry32 } from './prng.mjs';

export { UPSTREAM_COLUMNS, writeUpstreamParquet };

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = join(ROOT, 'bin/divergence-mine');
const SAMPLE_CANDIDATES = [
  process.env.DM_SAMPLE_JSON,
  join(ROOT, 'fixtures/nebius-openhands-sample.json'),
].filter(Boolean);

export const SAMPLE_PATH = SAMPLE_CANDIDATES.find((p) => existsSync(p)) ?? null;

let sampleCache = null;
/** The three real upstream rows (deep copies on every call). */
export function sampleRows() {
  if (!SAMPLE_PATH) throw new Error(`no sample rows: looked in ${SAMPLE_CANDIDATES.join(', ')}`);
  sampleCache ??= readFileSync(SAMPLE_PATH, 'utf8');
  return JSON.parse(sampleCache);
}

/** A deep copy of a row with its trajectory cut to the first `n` messages (and contents capped). */
export function truncateRow(row, n = 20, maxContent = Infinity) {
  const r = structuredClone(row);
  r.trajectory = r.trajectory.slice(0, n).map((m) => ({
    ...m,
    content: typeof m.content === 'string' && m.content.length > maxContent ? m.content.slice(0, maxContent) : m.content,
  }));
  return r;
}

/** Indices of assistant messages with tool calls. */
function assistantIndices(row) {
  return row.trajectory.flatMap((m, i) => (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 ? [i] : []));
}

/**
 * A failed fork of `row`: from the assistant message `at` on it runs a different command (an action
 * far from the original, so it is not a near duplicate), and the tool answer after it differs too.
 */
export function forkAt(row, at, tag) {
  const r = structuredClone(row);
  const m = r.trajectory[at];
  if (!m || m.role !== 'assistant') throw new Error(`message ${at} is not an assistant message`);
  const callId = `call-fork-${tag}-${at}`;
  m.tool_calls = [
    {
      function: { arguments: JSON.stringify({ command: `git log --oneline -n 5 && echo forked-${tag}-${at}` }), name: 'execute_bash' },
      id: callId,
      type: 'function',
    },
  ];
  const next = r.trajectory[at + 1];
  if (next && next.role === 'tool') {
    next.name = 'execute_bash';
    next.tool_call_id = callId;
    next.content = `forked-${tag}-${at}\n[The command completed with exit code 0.]`;
  }
  return r;
}

/** Same actions, but the tool answer at `at` (a tool message) differs: an environment divergence. */
export function envForkAt(row, at, tag) {
  const r = structuredClone(row);
  const m = r.trajectory[at];
  if (!m || m.role !== 'tool') throw new Error(`message ${at} is not a tool message`);
  m.content = `${m.content ?? ''}\n(environment differs: ${tag})`;
  return r;
}

/**
 * The base fixture: for each of the three sample rows (truncated to `messages` messages), one
 * resolved original, two failed forks at different assistant turns and one failed environment
 * fork; plus one instance with only a resolved trajectory (not eligible). 13 rows, 6 pairs.
 * `copies` > 1 repeats the scheme with suffixed instance ids, trajectory ids and more forks per side
 * (so that `--max-per-side` sampling and several row groups matter).
 */
export function forkedRows({ messages = 20, maxContent = Infinity, copies = 1, extraResolved = 0, extraFailed = 0 } = {}) {
  const out = [];
  const base = sampleRows().map((r) => truncateRow(r, messages, maxContent));
  for (let c = 0; c < copies; c++) {
    const sfx = copies > 1 ? `-c${c}` : '';
    for (const row of base) {
      const orig = structuredClone(row);
      orig.instance_id += sfx;
      orig.trajectory_id += sfx;
      orig.resolved = 1;
      const asst = assistantIndices(orig);
      const mid = asst.filter((i) => i >= 4);
      const tools = orig.trajectory.flatMap((m, i) => (m.role === 'tool' && i > 2 ? [i] : []));
      const rows = [orig];
      // resolved variants: fork late (they agree with the original up to there)
      for (let k = 0; k < extraResolved; k++) {
        const at = mid[mid.length - 1 - (k % mid.length)];
        const v = forkAt(orig, at, `r${k}`);
        v.trajectory_id = `${orig.trajectory_id}-r${k}`;
        v.resolved = 1;
        rows.push(v);
      }
      const failedForks = 2 + extraFailed;
      for (let k = 0; k < failedForks; k++) {
        const at = mid[(1 + 2 * k) % mid.length];
        const v = forkAt(orig, at, `f${k}`);
        v.trajectory_id = `${orig.trajectory_id}-f${k}`;
        v.resolved = 0;
        v.exit_status = 'error';
        rows.push(v);
      }
      const env = envForkAt(orig, tools[0], 'e');
      env.trajectory_id = `${orig.trajectory_id}-env`;
      env.resolved = 0;
      rows.push(env);
      out.push(...rows);
    }
    const lonely = structuredClone(base[0]);
    lonely.instance_id = `lonely__instance-1${sfx}`;
    lonely.trajectory_id = `lonely-trajectory-1${sfx}`;
    lonely.resolved = 1;
    out.push(lonely);
  }
  return out;
}

/**
 * Rewrite a parquet file with at most `rowsPerGroup` rows per row group (DuckDB writes one row group
 * for small inputs). Same columns and values; parquet-wasm writes it.
 */
export function regroupParquet(src, dst, rowsPerGroup) {
  const table = readParquet(new Uint8Array(readFileSync(src)));
  const props = new WriterPropertiesBuilder().setCompression(Compression.ZSTD).setMaxRowGroupSize(rowsPerGroup).build();
  writeFileSync(dst, writeParquet(table, props));
  return dst;
}

/**
 * Byte ranges [start, end) of every column chunk of a parquet file (DuckDB's parquet_metadata), with
 * the column path, and the footer range (thrift metadata plus its length and the closing magic).
 */
export async function parquetLayout(path) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const r = await conn.runAndReadAll(
      `SELECT row_group_id, path_in_schema, data_page_offset, dictionary_page_offset, total_compressed_size
       FROM parquet_metadata('${path.replaceAll("'", "''")}') ORDER BY row_group_id, column_id`,
    );
    const chunks = r.getRowObjects().map((o) => {
      const data = Number(o.data_page_offset);
      const dict = o.dictionary_page_offset == null ? null : Number(o.dictionary_page_offset);
      const start = dict != null && dict < data ? dict : data;
      return { rowGroup: Number(o.row_group_id), column: String(o.path_in_schema), start, end: start + Number(o.total_compressed_size), pageHeaders: [start, ...(dict != null && dict < data ? [data] : [])] };
    });
    const buf = readFileSync(path);
    const footerLen = buf.readUInt32LE(buf.length - 8);
    return { size: buf.length, chunks, footer: { start: buf.length - 8 - footerLen, end: buf.length } };
  } finally {
    conn.closeSync?.();
    instance.closeSync?.();
  }
}

/**
 * Rewrite the `num_values` of the (v1) data page header at `offset` (thrift compact protocol) to a
 * wrong value of the same encoded length. Real decoders trap on this (see test/errors.test.ts).
 * Returns a new buffer.
 */
export function corruptPageNumValues(buf, offset) {
  const b = Buffer.from(buf);
  let p = offset;
  const varint = () => {
    const start = p;
    while (b[p] & 0x80) p++;
    p++;
    return [start, p];
  };
  const skip = (type) => {
    if (type === 5 || type === 6) varint();
    else if (type === 8) {
      const [s, e] = varint();
      let n = 0;
      for (let k = e - 1; k >= s; k--) n = n * 128 + (b[k] & 0x7f);
      p += n;
    } else if (type === 12) struct(() => {});
    else if (type !== 1 && type !== 2) throw new Error(`unexpected thrift type ${type} at ${p}`);
  };
  function struct(onField) {
    let id = 0;
    for (;;) {
      const h = b[p++];
      if (h === 0) return;
      const delta = h >> 4;
      const type = h & 0x0f;
      id = delta ? id + delta : (() => { const [s, e] = varint(); let z = 0; for (let k = e - 1; k >= s; k--) z = z * 128 + (b[k] & 0x7f); return (z >>> 1) ^ -(z & 1); })();
      if (!onField(id, type)) skip(type);
    }
  }
  let done = false;
  struct((id, type) => {
    if (id !== 5 || type !== 12) return false; // data_page_header
    struct((inner, t) => {
      if (inner !== 1 || t !== 5 || done) return false; // num_values
      const [s, e] = varint();
      // Same length, larger even zigzag value (a positive count that does not match the page).
      if (e - s === 1) b[s] = b[s] === 0x7e ? 0x02 : 0x7e;
      else b[e - 1] = b[e - 1] === 0x7f ? 0x7e : 0x7f;
      done = true;
      return true;
    });
    return true;
  });
  if (!done) throw new Error(`no data page header with num_values at ${offset}`);
  return b;
}

/** A fresh temp folder (under TMPDIR) for one test file. */
export function tempDir(prefix = 'dm-robust-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Rows as JSONL text, one object per line (as `datasets` exports them). */
export function toJsonl(rows) {
  return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

export function writeJsonl(path, rows) {
  writeFileSync(path, toJsonl(rows));
  return path;
}

/**
 * Run the built CLI. Resolves with {code, signal, stdout, stderr, ms, timedOut}; never rejects.
 * `timeoutMs` kills the process group (SIGKILL) and marks the result timedOut. `nodeArgs`: options
 * for node itself (before the script).
 */
export function runCli(args, { timeoutMs = 60_000, env = {}, cwd = ROOT, onSpawn, nodeArgs = [] } = {}) {
  return new Promise((res) => {
    const started = Date.now();
    const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    onSpawn?.(child);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      res({
        code,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: Date.now() - started,
        timedOut,
      });
    });
  });
}

/** Files in `dir` whose name looks like a temporary output of the atomic writer. */
export function tempLeftovers(dir) {
  return readdirSync(dir).filter((f) => /\.tmp-\d+$/.test(f));
}

/**
 * The pid of the CLI process (the supervisor's child, src/supervisor.ts) that writes in `dir`: its
 * temporary outputs carry it. null until one exists.
 */
export function cliPidIn(dir) {
  const m = readdirSync(dir).map((f) => /\.divergence-mine\.tmp-(\d+)$/.exec(f)).find(Boolean);
  return m ? Number(m[1]) : null;
}

/** Whether every thread of process `pid` is stopped (SIGSTOP done, not only sent). Linux /proc. */
export function fullyStopped(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).every((t) => /^State:\s*T/m.test(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8')));
  } catch {
    return false;
  }
}

/** Whether `signal` is pending for process `pid` (Linux: the SigPnd / ShdPnd masks of /proc/PID/status). */
export function signalPending(pid, signal) {
  const num = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
  let status;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return false;
  }
  return [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some((m) => (BigInt(`0x${m[1]}`) >> BigInt(num - 1)) & 1n);
}

/** Run `fn` over `items` with at most `limit` at once; results in input order. */
export async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const k = next++;
      if (k >= items.length) return;
      results[k] = await fn(items[k], k);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** The documented exit codes of bad input (src/errors.ts ExitCode, README "Errors and exit codes"). */
export const INPUT_ERROR_CODES = new Set([3, 4, 5, 6, 7]);

/** A clean error: one `divergence-mine: error: ...` line on stderr (progress lines aside), no stack trace. */
export function isCleanError(stderr) {
  const lines = stderr.split('\n').filter((l) => l.startsWith('divergence-mine:'));
  const errors = lines.filter((l) => l.startsWith('divergence-mine: error: '));
  const trace = /^\s+at .+\(.*\)$|^\s+at \S+:\d+:\d+$|internal error|RuntimeError|TypeError|RangeError|SyntaxError: |node:internal/m.test(stderr);
  return errors.length === 1 && !trace;
}

/** Deterministic PRNG for seeded fuzz cases. */
export const rng = mulberry32;
