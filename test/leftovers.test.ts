// A run killed outright (SIGKILL: no handler runs). Killed alone, its supervisor (src/supervisor.ts)
// removes what it left; its supervisor killed alone, it cleans up and stops by itself; both killed,
// the temporary output and spill folder stay behind, carry its pid, and the next run on the same
// folders removes them (their process is gone) and writes the right output. Leftovers of a live
// process are kept. Runs the BUILT CLI.
//
// Rows are derived from fixtures/forks.jsonl: real rows of nebius/SWE-rebench-openhands-trajectories,
// CC-BY-4.0 © Nebius (Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct",
// Nebius blog, 2025), with one tool output made long (60 MB) so that the run lasts long enough to be killed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive, sweepDeadTemps } from '../src/io/atomic.js';
import { cliPidIn } from './support/robust-fixtures.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const dir = mkdtempSync(join(tmpdir(), 'dm-leftovers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let input = '';

beforeAll(() => {
  const rows = readFileSync(join(ROOT, 'fixtures', 'forks.jsonl'), 'utf8').trim().split('\n');
  const r = JSON.parse(rows.find((l) => l.includes('"trajectory_id":"chatcmpl-eb27c5fe3ba'))!);
  r.trajectory = r.trajectory.slice(0, 6);
  const line = 'tests/test_module.py::test_case PASSED [ 50%]\n';
  r.trajectory[3].content = line.repeat(Math.ceil(60e6 / line.length));
  const f = structuredClone(r);
  f.trajectory_id = 'leftovers-failed';
  f.resolved = 0;
  f.trajectory[4].tool_calls[0].function.arguments = JSON.stringify({ command: 'git log --oneline -n 5' });
  input = join(dir, 'big.jsonl');
  writeFileSync(input, `${JSON.stringify(r)}\n${JSON.stringify(f)}\n`);
});

const ours = (names: string[]) => names.filter((n) => /\.divergence-mine\.tmp-\d+$/.test(n) || /^divergence-mine-\d+-/.test(n));

/** Start a run (supervisor and CLI, in a process group of their own) in fresh folders; resolves once its temporary output and spill folder exist. */
async function startRun(name: string) {
  const work = join(dir, name);
  const tmp = join(work, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const out = join(work, 'pairs.jsonl');
  const env = { ...process.env, TMPDIR: tmp };
  const args = [BIN, 'mine', '--jsonl', input, '--out', out, '--workers', '1', '-q'];
  const supervisor = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  supervisor.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => supervisor.on('close', (code, signal) => res({ code, signal })));
  await new Promise<void>((res) => {
    const poll = setInterval(() => {
      if (ours(readdirSync(work)).length > 0 && ours(readdirSync(tmp)).length > 0) {
        clearInterval(poll);
        res();
      }
    }, 10);
  });
  const cli = cliPidIn(work)!;
  return { work, tmp, out, env, args, supervisor, cli, exited, stderr: () => stderr };
}

/** Resolves once process `pid` is gone (reaped: a zombie still answers kill 0). */
async function gone(pid: number): Promise<void> {
  while (processAlive(pid)) await new Promise((r) => setTimeout(r, 20));
}

describe('leftovers of a killed run', () => {
  it('SIGKILL of both processes mid-run, then a second run: leftovers gone, output right', async () => {
    const run = await startRun('both');
    // The whole process group, as a container's or a cgroup's kill does: no process left to clean up.
    process.kill(-run.supervisor.pid!, 'SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    await gone(run.cli);
    expect(ours(readdirSync(run.work))).toStrictEqual([`.pairs.jsonl.divergence-mine.tmp-${run.cli}`]);
    expect(ours(readdirSync(run.tmp))).toHaveLength(1);
    expect(ours(readdirSync(run.tmp))[0]).toMatch(new RegExp(`^divergence-mine-${run.cli}-`));
    expect(existsSync(run.out)).toBe(false);

    const second = spawnSync(process.execPath, run.args, { env: run.env, encoding: 'utf8', timeout: 120_000 });
    expect(second.status, second.stderr).toBe(0);
    expect(ours(readdirSync(run.work))).toStrictEqual([]);
    expect(readdirSync(run.tmp)).toStrictEqual([]);

    // The same run in fresh folders gives the same bytes.
    const fresh = join(dir, 'fresh');
    mkdirSync(join(fresh, 'tmp'), { recursive: true });
    const ref = spawnSync(process.execPath, [BIN, 'mine', '--jsonl', input, '--out', join(fresh, 'pairs.jsonl'), '--workers', '1', '-q'], { env: { ...process.env, TMPDIR: join(fresh, 'tmp') }, encoding: 'utf8', timeout: 120_000 });
    expect(ref.status, ref.stderr).toBe(0);
    const got = readFileSync(run.out);
    expect(got.length).toBeGreaterThan(60e6);
    expect(got.equals(readFileSync(join(fresh, 'pairs.jsonl')))).toBe(true);
  }, 180_000);

  it('SIGKILL of the run alone (what the OOM killer does): the supervisor removes its files, one line, exit 1', async () => {
    const run = await startRun('oom');
    process.kill(run.cli, 'SIGKILL');
    expect(await run.exited).toStrictEqual({ code: 1, signal: null });
    expect(run.stderr()).toBe(
      "divergence-mine: internal error (a bug, please report it): the process was killed (SIGKILL; the kernel's OOM killer sends it when memory runs out); temporary files removed, no output written\n",
    );
    expect(readdirSync(run.work)).toStrictEqual(['tmp']);
    expect(readdirSync(run.tmp)).toStrictEqual([]);
  }, 120_000);

  it('SIGKILL of the supervisor alone: the run sees its lifeline close, cleans up and stops', async () => {
    const run = await startRun('orphan');
    process.kill(run.supervisor.pid!, 'SIGKILL');
    await gone(run.cli);
    expect(readdirSync(run.work)).toStrictEqual(['tmp']);
    expect(readdirSync(run.tmp)).toStrictEqual([]);
  }, 120_000);
});

describe('sweepDeadTemps', () => {
  it('removes only our names whose process is gone', () => {
    const d = join(dir, 'sweep');
    mkdirSync(d, { recursive: true });
    // A pid that cannot be alive: above the kernel's pid_max (at most 2^22).
    const dead = 4_194_304 + 17;
    expect(processAlive(dead)).toBe(false);
    const names = [
      `.pairs.jsonl.divergence-mine.tmp-${dead}`, // ours, dead: removed
      `.pairs.jsonl.divergence-mine.tmp-${process.pid}`, // ours, alive: kept
      `.stats.json.divergence-mine.tmp-${process.ppid}`, // ours, alive (the parent): kept
      `.notes.txt.tmp-${dead}`, // not our naming: kept
      'pairs.jsonl', // an output: kept
    ];
    for (const n of names) writeFileSync(join(d, n), 'x');
    expect(sweepDeadTemps(d)).toStrictEqual([names[0]]);
    expect(readdirSync(d).sort()).toStrictEqual(names.slice(1).sort());
  });
});
