#!/usr/bin/env node
// The cost of `--tokenizer`: `mine --shape trl` with and without `--tokenizer qwen3` on the same
// file, configurations interleaved run by run, medians of --runs (wall seconds, CPU seconds
// user+sys and peak RSS of the child, from /usr/bin/time), plus the token-length table of the
// pairs (from the --stats of the last counted run). bench/README.md section "Token counts".
//
//   npm run build && node bench/tokens.mjs --file bench/data/twin-67k.parquet [--runs 3] [--workers 2]
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './timed.mjs';
import { lengthTableMarkdown } from '../dist/tokens/lengths.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'divergence-mine');
const { values: a } = parseArgs({ options: { file: { type: 'string' }, runs: { type: 'string', default: '3' }, workers: { type: 'string', default: '2' } } });
if (!a.file) throw new Error('--file F');
const tmp = mkdtempSync(join(tmpdir(), 'dm-bench-tokens-'));
const configs = {
  plain: ['--shape', 'trl'],
  tokens: ['--shape', 'trl', '--tokenizer', 'qwen3'],
};
const results = { plain: [], tokens: [] };
const load0 = loadavg();
for (let i = 0; i < Number(a.runs); i++) {
  for (const [name, extra] of Object.entries(configs)) {
    const out = join(tmp, `${name}.jsonl`);
    const stats = join(tmp, `${name}.json`);
    const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, BIN, 'mine', '--parquet', a.file, ...extra, '--workers', a.workers, '--out', out, '--stats', stats, '--quiet', '--force'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${name}: exit ${r.status}: ${r.stderr}`);
    const [wall, user, sys, rss] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
    const rows = readFileSync(out, 'utf8').split('\n').filter((l) => l !== '').length;
    results[name].push({ wall, cpu: user + sys, rssMiB: rss / 1024, rows, stats: JSON.parse(readFileSync(stats, 'utf8')) });
    process.stderr.write(`run ${i + 1} ${name}: ${wall} s wall, ${(user + sys).toFixed(1)} s CPU, ${rows} rows\n`);
  }
}
const m = (name, k) => median(results[name].map((r) => r[k]));
const lines = [];
lines.push(`- file: \`${a.file}\`; --workers ${a.workers}; medians of ${a.runs} runs, configurations interleaved`);
lines.push(`- load average at start ${load0.map((x) => x.toFixed(2)).join(' / ')}, at end ${loadavg().map((x) => x.toFixed(2)).join(' / ')}`);
lines.push('');
lines.push('| mine --shape trl | wall s (median) | CPU s user+sys | peak RSS MiB | rows | wall s, every run |');
lines.push('|---|--:|--:|--:|--:|---|');
for (const name of ['plain', 'tokens'])
  lines.push(
    `| ${name === 'plain' ? 'without --tokenizer' : '--tokenizer qwen3'} | ${m(name, 'wall').toFixed(2)} | ${m(name, 'cpu').toFixed(2)} | ${m(name, 'rssMiB').toFixed(0)} | ${results[name][0].rows} | ${results[name].map((r) => r.wall.toFixed(2)).join(', ')} |`,
  );
lines.push('');
lines.push(`Cost of counting: wall **${((100 * m('tokens', 'wall')) / m('plain', 'wall') - 100).toFixed(1)}%**, CPU ${((100 * m('tokens', 'cpu')) / m('plain', 'cpu') - 100).toFixed(1)}% (target: wall at most +30%).`);
const tok = results.tokens.at(-1).stats.tokens;
lines.push('');
lines.push(`Token lengths of the ${tok.lengths.rows.toLocaleString('en-US')} pairs (qwen3, template ${tok.template}):`);
lines.push('');
lines.push(lengthTableMarkdown(tok.lengths));
lines.push('');
lines.push(`max_length keeping 95% of rows whole: ${tok.lengths.recommended_max_length.keep_95}; 99%: ${tok.lengths.recommended_max_length.keep_99}.`);
process.stdout.write(lines.join('\n') + '\n');
rmSync(tmp, { recursive: true, force: true });
