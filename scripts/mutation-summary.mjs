// Per-file mutation score and every surviving / uncovered mutant, from Stryker's JSON report
// (reports/mutation/mutation.json, written by `npm run mutate`). Usage: node scripts/mutation-summary.mjs [report]
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'));
const detected = new Set(['Killed', 'Timeout']);
const undetected = new Set(['Survived', 'NoCoverage']);
const rows = [];
const left = [];
for (const [file, { mutants, source }] of Object.entries(report.files).sort()) {
  const lines = source.split('\n');
  const d = mutants.filter((m) => detected.has(m.status)).length;
  const u = mutants.filter((m) => undetected.has(m.status));
  rows.push(`${file.padEnd(22)} ${((100 * d) / (d + u.length || 1)).toFixed(2).padStart(6)}%  detected ${d}, undetected ${u.length}`);
  for (const m of u.sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)) {
    const l = m.location.start.line;
    left.push(`${file}:${l}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}\n    ${lines[l - 1].trim()}`);
  }
}
console.log(rows.join('\n'));
console.log(`\n${left.length} undetected:\n${left.join('\n')}`);
