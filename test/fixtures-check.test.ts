// The committed fixtures and their expected results must be exactly what fixtures/build.mjs (its own
// reference walker of the mining contract, independent of src/) produces today: a stale expected file
// or a hand edit of a fixture fails here.
import { it, expect } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

it('fixtures/build.mjs --check rebuilds every fixture and expected file byte for byte', async () => {
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
    execFile(process.execPath, [join(ROOT, 'fixtures', 'build.mjs'), '--check'], { cwd: ROOT }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/^all \d+ files identical\n$/);
  expect(r.code).toBe(0);
}, 120_000);

it('fixtures/build-numbers.mjs --check rebuilds the number-text fixtures byte for byte', async () => {
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
    execFile(process.execPath, [join(ROOT, 'fixtures', 'build-numbers.mjs'), '--check'], { cwd: ROOT }, (err, stdout, stderr) => {
      res({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
  expect(r.stderr).toBe('');
  expect(r.stdout).toBe('fixtures/numbers.* match a rebuild\n');
  expect(r.code).toBe(0);
}, 120_000);
