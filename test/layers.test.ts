// The folders of src/ are the layers of the program (README "How it works"): a module may import
// from its own folder and from the folders below it, never from one above. This test reads every
// relative import of src/ and fails on an edge the table does not allow, and on a file in a folder
// the table does not know (a new folder needs its place in the layering first).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

// Files at the top of src/ are units of their own; every other unit is a folder.
const BASE = ['errors', 'types', 'version', 'count-text'];
const BELOW_CONTRACT = ['contract', ...BASE];

/** unit -> the units it may import from (its own folder is always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  cli: ['commands', 'io', ...BELOW_CONTRACT],
  // The process that runs the CLI as its child (bin/divergence-mine): the temp-file protocol only.
  supervisor: ['io', ...BASE],
  index: ['hub', 'engine', 'pairing', 'shapes', 'sources', 'io', ...BELOW_CONTRACT],
  commands: ['hub', 'view', 'dataset', 'templates', 'tokens', 'engine', 'pairing', 'shapes', 'sources', 'io', 'parquet', 'cluster', ...BELOW_CONTRACT],
  // Hub datasets by name: the name grammar, the shared cache layout, API calls, downloads, datasets' data-file rules.
  hub: ['io', 'errors', 'types', 'count-text'],
  view: ['templates', 'tokens', 'pairing', 'shapes', 'sources', 'io', ...BELOW_CONTRACT],
  dataset: ['templates', 'tokens', 'engine', 'pairing', 'shapes', 'sources', 'io', ...BELOW_CONTRACT],
  // Tokenizer loading, token counts of rendered rows, token-based windowing (@huggingface/tokenizers).
  tokens: ['templates', 'shapes', 'sources', 'io', ...BELOW_CONTRACT],
  engine: ['pairing', 'shapes', 'sources', 'io', 'parquet', ...BELOW_CONTRACT],
  // Pairings beyond the contract's walk (the tree pairing, failure-cause filters): pure, like the contract.
  pairing: BELOW_CONTRACT,
  shapes: ['sources', 'io', ...BELOW_CONTRACT],
  sources: ['io', ...BELOW_CONTRACT],
  io: BELOW_CONTRACT,
  // Self-contained, so that it could be published on its own: only the error type.
  parquet: ['errors'],
  // Running as one task of a scheduler's array: the task's partition from the environment, the {i}/{N}
  // placeholders of output paths. Pure, below everything that runs a command.
  cluster: ['errors', 'types'],
  // Chat templates rendered with Python Jinja2's semantics (on @huggingface/jinja), Python's value text.
  templates: ['errors', 'types'],
  // Pure rules: not even version.ts, which reads package.json.
  contract: ['errors', 'types', 'count-text'],
  errors: [],
  types: [],
  version: [],
  'count-text': [],
};

/** The unit of a path relative to src/ (`engine/pool.ts` -> engine, `cli.ts` -> cli). */
function unitOf(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.[jt]s$/, '');
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
function importsOf(source: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;
  for (const m of source.matchAll(re)) out.push(m[2]!);
  return out;
}

interface Edge {
  file: string;
  target: string;
  from: string;
  to: string;
}

/** The imports of `files` (path relative to src/ -> source text) that go up or across the layers. */
function violations(files: Record<string, string>, allowed: Record<string, readonly string[]> = ALLOWED): (Edge & { why: string })[] {
  const bad: (Edge & { why: string })[] = [];
  for (const [file, source] of Object.entries(files)) {
    const from = unitOf(file);
    if (!(from in allowed)) {
      bad.push({ file, target: '', from, to: '', why: `unit ${from} has no place in the layer table` });
      continue;
    }
    for (const spec of importsOf(source)) {
      const target = posix.normalize(posix.join(posix.dirname(file.split('\\').join('/')), spec));
      if (target.startsWith('..')) {
        bad.push({ file, target, from, to: '', why: `${spec} leaves src/` });
        continue;
      }
      const to = unitOf(target);
      if (to !== from && !allowed[from]!.includes(to)) bad.push({ file, target, from, to, why: `${from} may not import from ${to}` });
    }
  }
  return bad;
}

/** Packages the pure units may use (node:crypto: hashes are part of the rules; lossless-json: number text, contract 11). */
const PURE = ['contract', 'pairing', 'errors', 'types'];
const PURE_EXTERNAL = /^(node:crypto|fast-json-stable-stringify|string-similarity|lossless-json)$/;

/** Non-relative imports of a pure unit that are not on the list (files, threads, processes, the CLI). */
function impurities(files: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [file, source] of Object.entries(files)) {
    if (!PURE.includes(unitOf(file))) continue;
    for (const m of source.matchAll(/\bfrom\s*(['"])([^'".][^'"]*)\1/g)) if (!PURE_EXTERNAL.test(m[2]!)) out.push(`${file}: ${m[2]}`);
    if (/\bprocess\.(std|exit|env|argv)/.test(source)) out.push(`${file}: process`);
  }
  return out;
}

function sourcesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.ts')) continue;
    const path = join(e.parentPath, e.name);
    out[relative(SRC, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

describe('layers', () => {
  it.each([
    ['engine/pool.ts', 'engine'],
    ['parquet/reader.ts', 'parquet'],
    ['cli.ts', 'cli'],
    ['errors.ts', 'errors'],
  ])('unitOf(%s) = %s', (file, unit) => {
    expect(unitOf(file)).toBe(unit);
  });

  it.each([
    ["import { a } from './x.js';", ['./x.js']],
    ["import type { A } from '../y/z.js';", ['../y/z.js']],
    ["export { b } from '../w.js';", ['../w.js']],
    ["export type { B } from './v.js';", ['./v.js']],
    ["const m = await import('../dist/q.js');", ['../dist/q.js']],
    ["import './side-effect.js';", ['./side-effect.js']],
    ["import {\n  a,\n  b,\n} from './multi.js';", ['./multi.js']],
    ["import { readFileSync } from 'node:fs';", []],
    ["// see '../read/pq/' for how", []],
  ])('importsOf(%j)', (source, specs) => {
    expect(importsOf(source)).toEqual(specs);
  });

  it.each([
    // [file, source, the (from -> to) edges reported]
    ['contract/walk.ts', "import { x } from '../engine/mine-pairs.js';", ['contract -> engine']],
    ['parquet/reader.ts', "import type { MetaResult } from '../engine/protocol.js';", ['parquet -> engine']],
    ['parquet/reader.ts', "import { UserError } from '../errors.js';", []],
    ['shapes/rows.ts', "import type { MinedContinuation } from '../engine/mine-pairs.js';", ['shapes -> engine']],
    ['io/pairs.ts', "import { x } from '../sources/schema.js';", ['io -> sources']],
    ['sources/schema.ts', "import { x } from '../shapes/behavior.js';", ['sources -> shapes']],
    ['shapes/behavior.ts', "import { x } from '../sources/text-actions.js';", []],
    ['engine/worker.ts', "import { x } from './pool.js';\nimport { y } from '../parquet/reader.js';", []],
    ['commands/mine.ts', "import { x } from '../cli.js';", ['commands -> cli']],
    ['engine/pool.ts', "import { x } from '../../elsewhere.js';", ['engine -> ']],
    ['misc/new.ts', '', ['misc -> ']],
    ['io/inputs.ts', "import { x } from '../hub/resolve.js';", ['io -> hub']],
    ['hub/resolve.ts', "import { x } from '../engine/partition.js';", ['hub -> engine']],
    ['commands/mine-options.ts', "import { x } from '../hub/inputs.js';", []],
  ])('%s with %j reports %j', (file, source, edges) => {
    expect(violations({ [file]: source }).map((v) => `${v.from} -> ${v.to}`)).toEqual(edges);
  });

  it('every import in src/ goes down the layers', () => {
    const files = sourcesOf(SRC);
    expect(Object.keys(files).length).toBeGreaterThan(40);
    expect(violations(files).map((v) => `${v.file}: ${v.why} (${v.target})`)).toEqual([]);
  });

  it.each([
    ['contract/walk.ts', "import { readFileSync } from 'node:fs';", ['contract/walk.ts: node:fs']],
    ['contract/sample.ts', "import { createHash } from 'node:crypto';", []],
    ['types.ts', 'process.stdout.write(x);', ['types.ts: process']],
    ['engine/pool.ts', "import { Worker } from 'node:worker_threads';", []],
  ])('impurities of %s with %j', (file, source, found) => {
    expect(impurities({ [file]: source })).toEqual(found);
  });

  it('the contract, errors.ts and types.ts do no I/O', () => {
    expect(impurities(sourcesOf(SRC))).toEqual([]);
  });

  it('the table itself has no cycle', () => {
    const seen = new Set<string>();
    const visit = (u: string, path: string[]): void => {
      expect(path, `cycle ${[...path, u].join(' -> ')}`).not.toContain(u);
      if (seen.has(u)) return;
      for (const v of ALLOWED[u] ?? []) visit(v, [...path, u]);
      seen.add(u);
    };
    for (const u of Object.keys(ALLOWED)) visit(u, []);
    for (const targets of Object.values(ALLOWED)) for (const t of targets) expect(ALLOWED).toHaveProperty(t);
  });
});
