// Bad input and faults: every mistake ends in one `divergence-mine: error: <file>: <what>` line on
// stderr and its documented exit code (src/errors.ts ExitCode, README "Errors and exit codes"),
// never a stack trace, a hang or a half-written output; signals, `| head`, a 50 MB message and a
// 2,000-message trajectory are handled.
//
// Fixtures are built in a temp folder from real rows of nebius/SWE-rebench-openhands-trajectories
// (CC-BY-4.0, © Nebius; see test/support/robust-fixtures.mjs). This test runs the BUILT CLI (dist/,
// `npm test` builds first).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
// the contract's reference walker (imports nothing from src/): independent expected rows
import { referenceMine } from '../fixtures/reference-walker.mjs';
import {
  BIN,
  ROOT,
  cliPidIn,
  SAMPLE_PATH,
  UPSTREAM_COLUMNS,
  corruptPageNumValues,
  forkAt,
  forkedRows,
  fullyStopped,
  parquetLayout,
  runCli,
  sampleRows,
  signalPending,
  tempDir,
  tempLeftovers,
  truncateRow,
  writeJsonl,
  writeUpstreamParquet,
} from './support/robust-fixtures.mjs';

const EXIT = { ok: 0, usage: 2, missingInput: 3, folder: 3, notParquet: 4, corrupt: 5, schema: 6, badValue: 7, output: 8, sigint: 130, sigterm: 143 };

type Row = Record<string, unknown> & { trajectory: Record<string, unknown>[] };
interface Run {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

let root = '';
let caseNo = 0;
const F: Record<string, string> = {};
/** The clean fixture rows and the rows the reference walker mines from them. */
let cleanRows: Row[] = [];
let cleanExpected: Record<string, unknown>[] = [];

/** One CLI run in its own folder (outputs there, TMPDIR there so leftover spill folders show). */
async function mine(args: string[], { out = 'pairs.jsonl', quiet = true, timeoutMs = 60_000 } = {}) {
  const dir = join(root, `case-${++caseNo}`);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const outPath = out === '-' ? '-' : join(dir, out);
  const r: Run = await runCli(['mine', ...args, '--out', outPath, '--workers', '1', ...(quiet ? ['-q'] : [])], { timeoutMs, env: { TMPDIR: tmp } });
  return { r, dir, out: outPath, tmp };
}

/** The run failed cleanly: one error line (exactly, with -q), the code, no output, nothing left behind. */
function expectCleanError(res: Awaited<ReturnType<typeof mine>>, code: number, pattern: RegExp) {
  const { r, dir, out, tmp } = res;
  expect(r.timedOut, 'timed out').toBe(false);
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code });
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^divergence-mine: error: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
  if (out !== '-') expect(existsSync(out), 'output file left behind').toBe(false);
  expect(tempLeftovers(dir), 'temporary output left behind').toEqual([]);
  expect(readdirSync(tmp), 'spill folder left behind').toEqual([]);
}

function expectOk(res: Awaited<ReturnType<typeof mine>>) {
  const { r, dir, tmp } = res;
  expect(r.timedOut, 'timed out').toBe(false);
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
  expect(r.stderr).not.toMatch(/\n\s+at |internal error|error:/);
  expect(tempLeftovers(dir)).toEqual([]);
  expect(readdirSync(tmp)).toEqual([]);
}

function jsonlRows(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  root = tempDir('dm-errors-');
  const rows = forkedRows({ messages: 20, maxContent: 2000 }) as Row[];
  cleanRows = rows;
  cleanExpected = referenceMine(rows).rows as Record<string, unknown>[];
  const at = (name: string) => (F[name] = join(root, name));

  await writeUpstreamParquet(at('clean.parquet'), rows);
  writeJsonl(at('clean.jsonl'), rows);
  copyFileSync(SAMPLE_PATH!, at('rows.json'));
  writeFileSync(at('empty.parquet'), '');
  const clean = readFileSync(F['clean.parquet']!);
  writeFileSync(at('truncated.parquet'), clean.subarray(0, Math.floor(clean.length / 2)));
  const layout = await parquetLayout(F['clean.parquet']!);
  const badFooter = Buffer.from(clean);
  badFooter.fill(0xff, layout.footer.start, layout.footer.start + 48);
  writeFileSync(at('bad-footer.parquet'), badFooter);
  const content = layout.chunks.find((c: { column: string }) => c.column === 'trajectory, list, element, content')!;
  writeFileSync(at('trap.parquet'), corruptPageNumValues(clean, content.pageHeaders.at(-1)));

  const { resolved: _r, trajectory: _t, ...noLabelNoTrajectory } = UPSTREAM_COLUMNS;
  await writeUpstreamParquet(at('missing-columns.parquet'), rows, { columns: noLabelNoTrajectory });
  await writeUpstreamParquet(at('resolved-string.parquet'), rows, { columns: { ...UPSTREAM_COLUMNS, resolved: 'VARCHAR' } });
  await writeUpstreamParquet(at('trajectory-string.parquet'), rows, { columns: { ...UPSTREAM_COLUMNS, trajectory: 'VARCHAR' } });
  await writeUpstreamParquet(
    at('id-int.parquet'),
    rows.map((r, i) => ({ ...r, trajectory_id: 1000 + i })),
    { columns: { ...UPSTREAM_COLUMNS, trajectory_id: 'BIGINT' } },
  );
  const nullInstance = structuredClone(rows);
  nullInstance[5]!.instance_id = null;
  await writeUpstreamParquet(at('null-instance.parquet'), nullInstance);
  const emptyId = structuredClone(rows);
  emptyId[3]!.trajectory_id = '';
  await writeUpstreamParquet(at('empty-id.parquet'), emptyId);
  const nullTrajectory = structuredClone(rows);
  nullTrajectory[2]!.trajectory = null as never;
  await writeUpstreamParquet(at('null-trajectory.parquet'), nullTrajectory);
  await writeUpstreamParquet(at('all-resolved.parquet'), rows.map((r) => ({ ...r, resolved: 1 })));
  await writeUpstreamParquet(at('no-rows.parquet'), []);

  writeJsonl(at('null-instance.jsonl'), nullInstance);
  const badRole = structuredClone(rows);
  badRole[1]!.trajectory[4]!.role = 7;
  writeJsonl(at('bad-role.jsonl'), badRole);
  writeJsonl(
    at('missing-key.jsonl'),
    rows.map((r) => {
      const { resolved: _x, ...rest } = r;
      return rest;
    }),
  );
  const lines = readFileSync(F['clean.jsonl']!, 'utf8').split('\n');
  writeFileSync(at('invalid.jsonl'), [...lines.slice(0, 3), lines[3]!.slice(0, 500), ...lines.slice(4)].join('\n'));
  writeFileSync(at('array-line.jsonl'), [...lines.slice(0, 2), '[1, 2, 3]', ...lines.slice(2)].join('\n'));
  const gz = gzipSync(readFileSync(F['clean.jsonl']!));
  writeFileSync(at('clean.jsonl.gz'), gz);
  writeFileSync(at('truncated.jsonl.gz'), gz.subarray(0, Math.floor(gz.length / 2)));
  writeFileSync(at('no-rows.jsonl'), '');
}, 120_000);

afterAll(() => {
  if (root && !process.env.DM_KEEP_TMP) rmSync(root, { recursive: true, force: true });
});

describe('bad input: one line, the file, a documented exit code', () => {
  it('the clean fixture mines pairs (baseline)', async () => {
    const res = await mine(['--parquet', F['clean.parquet']!]);
    expectOk(res);
    expect(cleanExpected.length).toBeGreaterThan(0);
    expect(jsonlRows(res.out)).toStrictEqual(cleanExpected);
  }, 60_000);

  it('missing file, glob without match, folder without inputs: exit 3', async () => {
    const nope = join(root, 'nope.parquet');
    expectCleanError(await mine(['--parquet', nope]), EXIT.missingInput, new RegExp(`error: ${esc(nope)}: no such file or directory$`));
    const glob = join(root, 'nothing-*.parquet');
    expectCleanError(await mine(['--parquet', glob]), EXIT.missingInput, new RegExp(`${esc(glob)}: no file matches`));
    const emptyDir = join(root, 'empty-folder');
    mkdirSync(emptyDir, { recursive: true });
    expectCleanError(await mine(['--parquet', emptyDir]), EXIT.missingInput, new RegExp(`${esc(emptyDir)}: directory holds no`));
    expectCleanError(await mine(['--jsonl', join(root, 'nope.jsonl')]), EXIT.missingInput, /nope\.jsonl: no such file or directory$/);
  }, 60_000);

  it('a JSON file or an empty file given to --parquet: exit 4, not parquet', async () => {
    expectCleanError(await mine(['--parquet', F['rows.json']!]), EXIT.notParquet, new RegExp(`${esc(F['rows.json']!)}: not a parquet file`));
    expectCleanError(await mine(['--parquet', F['clean.jsonl']!]), EXIT.notParquet, /clean\.jsonl: not a parquet file/);
    expectCleanError(await mine(['--parquet', F['empty.parquet']!]), EXIT.notParquet, /empty\.parquet: not a parquet file/);
  }, 60_000);

  it('a truncated parquet file: exit 5', async () => {
    expectCleanError(await mine(['--parquet', F['truncated.parquet']!]), EXIT.corrupt, new RegExp(`${esc(F['truncated.parquet']!)}: truncated or corrupt parquet file`));
  }, 60_000);

  it('a corrupt footer: exit 5, naming the metadata', async () => {
    expectCleanError(await mine(['--parquet', F['bad-footer.parquet']!]), EXIT.corrupt, /bad-footer\.parquet \(footer metadata\): cannot decode: /);
  }, 60_000);

  it('a page that makes the wasm decoder trap: exit 5, one line naming row group and column', async () => {
    // The hazard is real: parquet-wasm run directly on this file dies with an uncaught RuntimeError
    // thrown from a wasm-bindgen future, which no try/catch around the read can catch.
    const probe = `
      import { openAsBlob } from 'node:fs';
      import { ParquetFile } from 'parquet-wasm';
      const f = await ParquetFile.fromFile(await openAsBlob(process.argv[1]));
      try {
        const s = await f.stream({ rowGroups: [0], columns: ['trajectory'], batchSize: 256 });
        for await (const b of s) void b;
        console.log('read without error');
      } catch (e) { console.log('caught: ' + e); }`;
    const direct = spawnSync(process.execPath, ['--input-type=module', '-e', probe, F['trap.parquet']!], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(direct.stdout).not.toMatch(/read without error/);
    expect(`${direct.stdout}${direct.stderr}`).toMatch(/RuntimeError|caught/);

    // The wasm engine checks the page headers with our reader before parquet-wasm gets the row
    // group (worker.ts PAGE_CHECKS): the value count is refused there, so the trap is never reached
    // (a trap that is would be contained by the worker: test/pool-faults.test.ts).
    const res = await mine(['--parquet', F['trap.parquet']!, '--engine', 'wasm']);
    expectCleanError(res, EXIT.corrupt, /trap\.parquet: row group 0, column trajectory\.list\.element\.[a-z_.]+: corrupt parquet data \(.+\)$/);
    // Our own reader (the default engine) checks the page's value count itself.
    const js = await mine(['--parquet', F['trap.parquet']!]);
    expectCleanError(js, EXIT.corrupt, /trap\.parquet: row group 0, column trajectory\.list\.element\.[a-z_.]+: corrupt parquet data \(.+\)$/);
  }, 60_000);

  it('missing required columns: exit 6, listing the columns found', async () => {
    expectCleanError(
      await mine(['--parquet', F['missing-columns.parquet']!]),
      EXIT.schema,
      /missing-columns\.parquet: missing required columns resolved, trajectory \(found: trajectory_id, instance_id, repo, tools, model_patch, exit_status, gen_tests_correct, pred_passes_gen_tests\); map other columns with --id-column, --instance-column or --instance-from-id, --messages-column, --resolved-column, or name the corpus with --source \(nebius-openhands, swe-agent, swe-smith, coderforge, open-swe-traces, swe-gym, text-actions\)$/,
    );
    expectCleanError(await mine(['--jsonl', F['missing-key.jsonl']!]), EXIT.schema, /missing-key\.jsonl:1: missing required column resolved \(found: trajectory_id, instance_id, repo, trajectory, /);
  }, 60_000);

  it('wrong column types: exit 6, the type found and the type expected', async () => {
    expectCleanError(await mine(['--parquet', F['resolved-string.parquet']!]), EXIT.schema, /resolved-string\.parquet: column resolved has type Utf8, expected an integer, float or boolean$/);
    expectCleanError(await mine(['--parquet', F['trajectory-string.parquet']!]), EXIT.schema, /trajectory-string\.parquet: column trajectory has type Utf8, expected a list of message structs/);
    expectCleanError(await mine(['--parquet', F['id-int.parquet']!]), EXIT.schema, /id-int\.parquet: column trajectory_id has type Int64, expected a string$/);
  }, 60_000);

  it('null or empty required values: exit 7 with row group, row and column', async () => {
    expectCleanError(await mine(['--parquet', F['null-instance.parquet']!]), EXIT.badValue, /null-instance\.parquet: row group 0, row 5: instance_id is null or empty \(use --skip-bad-rows/);
    expectCleanError(await mine(['--parquet', F['empty-id.parquet']!]), EXIT.badValue, /empty-id\.parquet: row group 0, row 3: trajectory_id is null or empty/);
    expectCleanError(await mine(['--parquet', F['null-trajectory.parquet']!]), EXIT.badValue, /null-trajectory\.parquet: row group 0, row 2: trajectory \S+: trajectory is null/);
    expectCleanError(await mine(['--jsonl', F['null-instance.jsonl']!]), EXIT.badValue, /null-instance\.jsonl:6: instance_id is null or empty/);
    expectCleanError(await mine(['--jsonl', F['bad-role.jsonl']!]), EXIT.badValue, /bad-role\.jsonl:2: trajectory \S+-f0: message 4: message role must be a non-empty string/);
    // A rule made the instance missing: the message says which row, and why (sources/identity.ts).
    expectCleanError(
      await mine(['--parquet', F['clean.parquet']!, '--instance-from-id', '^(.+)_run\\d+$']),
      EXIT.badValue,
      /clean\.parquet: row group 0, row 0 \(trajectory_id "[^"]+" does not match --instance-from-id \^\(\.\+\)_run\\d\+\$\): instance_id is null or empty \(use --skip-bad-rows/,
    );
  }, 60_000);

  it('--skip-bad-rows counts such rows and carries on', async () => {
    // Every instance has one resolved and at most 3 failed rows and no cap is reached, so a skipped row
    // removes exactly the clean rows it takes part in (no other trajectory is sampled in its place).
    const badRow: Record<string, number> = { 'null-instance.parquet': 5, 'null-trajectory.parquet': 2, 'bad-role.jsonl': 1 };
    for (const name of ['null-instance.parquet', 'null-trajectory.parquet', 'bad-role.jsonl']) {
      const stats = join(root, `stats-${name}.json`);
      const kind = name.endsWith('.jsonl') ? '--jsonl' : '--parquet';
      const res = await mine([kind, F[name]!, '--skip-bad-rows', '--stats', stats]);
      expectOk(res);
      const doc = JSON.parse(readFileSync(stats, 'utf8')) as { counters: Record<string, number> };
      expect(doc.counters.bad_rows, name).toBe(1);
      const bad = cleanRows[badRow[name]!]!.trajectory_id;
      const expected = cleanExpected.filter((r) => r.chosen_trajectory_id !== bad && r.rejected_trajectory_id !== bad);
      expect(expected.length, name).toBeLessThan(cleanExpected.length);
      expect(jsonlRows(res.out), name).toStrictEqual(expected);
      expect(doc.counters.pairs_emitted, name).toBe(expected.length);
    }
  }, 60_000);

  it('invalid JSONL lines and broken gzip: exit 5 with file and line', async () => {
    expectCleanError(await mine(['--jsonl', F['invalid.jsonl']!]), EXIT.corrupt, /invalid\.jsonl:4: invalid JSON \(/);
    expectCleanError(await mine(['--jsonl', F['array-line.jsonl']!]), EXIT.corrupt, /array-line\.jsonl:3: a line must be a JSON object$/);
    expectCleanError(await mine(['--jsonl', F['truncated.jsonl.gz']!]), EXIT.corrupt, /truncated\.jsonl\.gz(:\d+)?: /);
    expectOk(await mine(['--jsonl', F['clean.jsonl.gz']!]));
  }, 60_000);

  it('an output folder that does not exist, a stats path under a file: exit 3, as a missing TMPDIR (a missing stats folder is made); an --out that is a folder: exit 8', async () => {
    const res = await mine(['--parquet', F['clean.parquet']!], { out: 'no/such/folder/pairs.jsonl' });
    expectCleanError(res, EXIT.folder, /pairs\.jsonl: output folder \S+ does not exist$/);
    writeFileSync(join(root, 'a-file'), '');
    const res2 = await mine(['--parquet', F['clean.parquet']!, '--stats', join(root, 'a-file', 'sub', 'stats.json')]);
    expectCleanError(res2, EXIT.folder, /stats\.json: \S+a-file is not a folder$/);
    const made = await mine(['--parquet', F['clean.parquet']!, '--stats', join(root, 'nowhere', 'yet', 'stats.json')]);
    expect(made.r.code, made.r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(root, 'nowhere', 'yet', 'stats.json'), 'utf8')).tool).toBe('divergence-mine');
    const folder = join(root, 'a-folder.jsonl');
    mkdirSync(folder, { recursive: true });
    const res3 = await runCli(['mine', '--parquet', F['clean.parquet']!, '--out', folder, '--workers', '1', '-q', '--force']);
    expect(res3.code).toBe(EXIT.output);
    expect(res3.stderr).toMatch(/^divergence-mine: error: \S+a-folder\.jsonl: is a folder, not a file\n$/);
  }, 60_000);

  it('an output file that exists: exit 8 unless --force; a failed --force run keeps the old file', async () => {
    const dir = join(root, 'exists');
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'pairs.jsonl');
    writeFileSync(out, 'old\n');
    const args = (input: string, ...extra: string[]) => ['mine', '--parquet', input, '--out', out, '--workers', '1', '-q', ...extra];
    const refused = await runCli(args(F['clean.parquet']!));
    expect(refused.code).toBe(EXIT.output);
    expect(refused.stderr).toMatch(/^divergence-mine: error: \S+pairs\.jsonl: output file exists \(use --force to overwrite\)\n$/);
    expect(readFileSync(out, 'utf8')).toBe('old\n');

    const failed = await runCli(args(F['null-instance.parquet']!, '--force'));
    expect(failed.code).toBe(EXIT.badValue);
    expect(readFileSync(out, 'utf8')).toBe('old\n');
    expect(tempLeftovers(dir)).toEqual([]);

    const stats = join(dir, 'stats.json');
    writeFileSync(stats, '{}');
    const other = join(dir, 'other.jsonl');
    const statsRefused = await runCli(['mine', '--parquet', F['clean.parquet']!, '--out', other, '--stats', stats, '--workers', '1', '-q']);
    expect(statsRefused.code).toBe(EXIT.output);
    expect(statsRefused.stderr).toMatch(/^divergence-mine: error: \S+stats\.json: stats file exists \(use --force to overwrite\)\n$/);
    expect(existsSync(other)).toBe(false);

    const forced = await runCli(args(F['clean.parquet']!, '--force', '--stats', stats));
    expect(forced.code).toBe(0);
    expect(jsonlRows(out).length).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(stats, 'utf8'))).toHaveProperty('counters');
    expect(tempLeftovers(dir)).toEqual([]);
  }, 60_000);

  it('zero eligible instances is not an error: exit 0, empty output, a warning naming why', async () => {
    for (const out of ['pairs.jsonl', 'pairs.parquet']) {
      const res = await mine(['--parquet', F['all-resolved.parquet']!], { out });
      expectOk(res);
      expect(res.r.stderr).toMatch(/^divergence-mine: warning: no eligible instances: .*failed/m);
      if (out.endsWith('.jsonl')) expect(readFileSync(res.out, 'utf8')).toBe('');
      else {
        const { readParquet } = await import('parquet-wasm');
        const { tableFromIPC } = await import('apache-arrow');
        const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(res.out))).intoIPCStream());
        expect(table.numRows).toBe(0);
        expect(table.schema.fields.map((f) => f.name)).toContain('chosen');
      }
    }
    for (const [kind, file] of [['--parquet', 'no-rows.parquet'], ['--jsonl', 'no-rows.jsonl']] as const) {
      const res = await mine([kind, F[file]!]);
      expectOk(res);
      expect(res.r.stderr).toMatch(/warning: no eligible instances: the input has no rows/);
      expect(readFileSync(res.out, 'utf8')).toBe('');
    }
  }, 60_000);

  it('usage mistakes: exit 2', async () => {
    const bad = await mine(['--parquet', F['clean.parquet']!], { out: 'pairs.txt' });
    expectCleanError(bad, EXIT.usage, /pairs\.txt: unknown output format/);
    const noOut = await runCli(['mine', '--parquet', F['clean.parquet']!]);
    expect(noOut.code).toBe(EXIT.usage);
    expect(noOut.stderr).not.toMatch(/\n\s+at /);
    const workers = await runCli(['mine', '--parquet', F['clean.parquet']!, '--out', join(root, 'w.jsonl'), '--workers', '0']);
    expect(workers.code).toBe(EXIT.usage);
    expect(existsSync(join(root, 'w.jsonl'))).toBe(false);
    // The dataset's page on the Hub pasted as an input: the name to give instead.
    const page = await mine(['--parquet', 'https://huggingface.co/datasets/nebius/SWE-rebench-openhands-trajectories/tree/main/data']);
    expectCleanError(page, EXIT.usage, /an address on the Hub's website, not a file; name the dataset as hf:\/\/datasets\/nebius\/SWE-rebench-openhands-trajectories\/data$/);
  }, 60_000);
});

describe('faults', () => {
  let big = '';
  let bigJsonl = '';
  let bigContent = '';
  let long = '';
  let many = '';

  beforeAll(async () => {
    // A single 50 MB tool message in the prompt of the only pair (log-like lines, not one repeated byte).
    const row = truncateRow(sampleRows()[1], 20) as Row;
    const parts: string[] = [];
    let size = 0;
    for (let k = 0; size < 50 * 1024 * 1024; k++) {
      const line = `${String(k).padStart(8, '0')} PASSED tests/test_module_${k % 97}.py::test_case_${(k * 7919) % 100003} — ok ✓\n`;
      parts.push(line);
      size += Buffer.byteLength(line);
    }
    bigContent = parts.join('');
    row.trajectory[3]!.content = bigContent;
    row.resolved = 1;
    const fork = forkAt(row, 8, 'big') as Row;
    fork.trajectory_id = `${String(row.trajectory_id)}-F`;
    fork.resolved = 0;
    big = join(root, 'big-message.parquet');
    await writeUpstreamParquet(big, [row, fork]);
    bigJsonl = writeJsonl(join(root, 'big-message.jsonl'), [row, fork]);

    // A 2,000-message trajectory and a fork of it at message 1,990.
    const base = truncateRow(sampleRows()[0], 2) as Row;
    const msgs = base.trajectory;
    while (msgs.length < 2000) {
      const k = msgs.length;
      msgs.push({ role: 'assistant', content: `step ${k}`, name: null, tool_call_id: null, tool_calls: [{ function: { arguments: JSON.stringify({ command: `sed -n ${k},${k + 20}p src/module.py` }), name: 'execute_bash' }, id: `call-${k}`, type: 'function' }] });
      msgs.push({ role: 'tool', content: `line ${k}\n[The command completed with exit code 0.]`, name: 'execute_bash', tool_call_id: `call-${k}`, tool_calls: null });
    }
    const longR = { ...base, trajectory_id: 'long-resolved', resolved: 1 };
    const longF = forkAt(longR, 1990, 'long') as Row;
    longF.trajectory_id = 'long-failed';
    longF.resolved = 0;
    long = join(root, 'long.parquet');
    await writeUpstreamParquet(long, [longR, longF]);

    // Enough output that a pipe fills up: 3 copies of the fork scheme, 18 pairs of ~40 KB.
    many = writeJsonl(join(root, 'many.jsonl'), forkedRows({ copies: 3, messages: 20 }));
  }, 180_000);

  for (const [signal, code] of [['SIGINT', EXIT.sigint], ['SIGTERM', EXIT.sigterm]] as const) {
    it(`${signal} during a run: exit ${code}, temporary output and spill removed`, async () => {
      const dir = join(root, `signal-${signal}`);
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp, { recursive: true });
      const out = join(dir, 'pairs.jsonl');
      let signalled = false;
      let underWay = false;
      const r = await runCli(['mine', '--parquet', big, '--out', out, '--workers', '1', '-q'], {
        timeoutMs: 600_000,
        env: { TMPDIR: tmp },
        onSpawn: (child: ReturnType<typeof spawn>) => {
          // `child` is the supervisor (src/supervisor.ts); the run is its child, whose pid the temporary
          // output carries. No race with the run's end: once the temporary output and spill folder
          // exist, freeze the run (SIGSTOP) and wait until every thread of it is stopped (a signal that
          // arrives while it stops may be taken at once), check it is still mid-run, signal the
          // supervisor as `kill` would, wait until the supervisor has passed the signal on (pending
          // for the frozen run), then let the run continue into its handler.
          let cli: number | null = null;
          const poll = setInterval(() => {
            if (cli === null) {
              if (tempLeftovers(dir).length === 0 || readdirSync(tmp).length === 0) return;
              cli = cliPidIn(dir);
              process.kill(cli!, 'SIGSTOP');
              return;
            }
            if (!signalled) {
              if (!fullyStopped(cli)) return;
              underWay = child.exitCode === null && tempLeftovers(dir).length > 0 && !existsSync(out);
              signalled = child.kill(signal);
              return;
            }
            if (!signalPending(cli, signal)) return;
            clearInterval(poll);
            process.kill(cli, 'SIGCONT');
          }, 20);
          child.on('exit', () => clearInterval(poll));
        },
      });
      expect(underWay, 'the run had already finished when it was frozen').toBe(true);
      expect(signalled).toBe(true);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(new RegExp(`interrupted \\(${signal}\\); no output written`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(out)).toBe(false);
      expect(tempLeftovers(dir)).toEqual([]);
      expect(readdirSync(tmp)).toEqual([]);
    }, 650_000);
  }

  it('--out - piped into head exits quietly (EPIPE); a slow reader gets everything', async () => {
    const cmd = (consumer: string) =>
      spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" mine --jsonl "${many}" --out - --workers 1 -q 2>"${root}/pipe.err" | ${consumer}; echo "status=\${PIPESTATUS[0]}"`], { encoding: 'utf8', timeout: 120_000 });
    for (const consumer of ['head -n 1 | wc -l', 'head -c 100 >/dev/null']) {
      const r = cmd(consumer);
      expect(r.stdout).toMatch(/status=0/);
      expect(readFileSync(join(root, 'pipe.err'), 'utf8')).toBe('');
    }
    const slow = cmd('(sleep 1; cat) | wc -l');
    expect(slow.stdout).toMatch(/^18\nstatus=0/);
    // No "MaxListenersExceededWarning" or anything else on stderr while the pipe was full.
    expect(readFileSync(join(root, 'pipe.err'), 'utf8')).toBe('');
  }, 150_000);

  for (const kind of ['--parquet', '--jsonl'] as const) {
    it(`a single 50 MB message (${kind} input)`, async () => {
      const res = await mine([kind, kind === '--parquet' ? big : bigJsonl], { timeoutMs: 150_000 });
      expectOk(res);
      const rows = jsonlRows(res.out) as { prompt: { content: string }[]; divergence_msg_index: number }[];
      expect(rows).toHaveLength(1);
      expect(rows[0]!.divergence_msg_index).toBe(8);
      expect(rows[0]!.prompt[3]!.content.length).toBe(bigContent.length);
      expect(rows[0]!.prompt[3]!.content === bigContent).toBe(true);
    }, 180_000);
  }

  it('a trajectory of 2,000 messages', async () => {
    const res = await mine(['--parquet', long]);
    expectOk(res);
    const rows = jsonlRows(res.out) as { prompt: unknown[]; divergence_msg_index: number; divergence_turn: number }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.divergence_msg_index).toBe(1990);
    expect(rows[0]!.prompt).toHaveLength(1990);
    expect(rows[0]!.divergence_turn).toBe(994);
  }, 120_000);
});
