#!/usr/bin/env node
// Rewrites the golden files of test/show.test.ts from the BUILT CLI (`npm run golden` builds first):
//   node test/support/update-golden.mjs           # write test/golden/*
//   node test/support/update-golden.mjs --check   # compare only; exit 1 when one differs
// Review the diff before committing: a golden file is an expectation, not a snapshot of whatever runs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHOW_GOLDEN } from './golden-cases.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GOLDEN = join(ROOT, 'test', 'golden');
const PAIRS = join(ROOT, 'test', 'data', 'pairs.jsonl');
const check = process.argv.includes('--check');

// stdout is a pipe, not a TTY, and NO_COLOR is set: plain text, as the test renders it.
const env = { ...process.env, NO_COLOR: '1' };
delete env.FORCE_COLOR;
mkdirSync(GOLDEN, { recursive: true });
let differ = 0;
for (const { file, args } of SHOW_GOLDEN) {
  const out = execFileSync(process.execPath, [join(ROOT, 'bin', 'divergence-mine'), 'show', PAIRS, ...args], { env, encoding: 'utf8' });
  const path = join(GOLDEN, file);
  const same = existsSync(path) && readFileSync(path, 'utf8') === out;
  if (!same) differ++;
  if (check) console.log(`${same ? 'same   ' : 'differs'} test/golden/${file}`);
  else if (!same) {
    writeFileSync(path, out);
    console.log(`wrote test/golden/${file}`);
  }
}
if (check && differ) process.exitCode = 1;
if (!check && !differ) console.log('all golden files unchanged');
