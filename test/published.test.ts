// The published reference run (docs/mining-contract.md §7.3): its figures, how its input is recognised,
// and the comparison a run over it prints and records. The recogniser is injected (the real input is
// a 2 GB file): the end-to-end part runs the BUILT miner (`npm run build` first) on fixtures/forks.parquet
// (forks of real rows of nebius/SWE-rebench-openhands-trajectories, CC-BY-4.0 © Nebius) with a
// recogniser that takes that fixture for the published input.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { comparePublished, isPublishedInput, PUBLISHED_COUNTERS, PUBLISHED_INPUT, publishedVerdict, usesDefaultOptions, type RunInput } from '../src/contract/published.js';
import { emptyCounters, formatCounters, type Counters } from '../src/contract/counters.js';
import { DEFAULT_OPTIONS } from '../src/contract/options.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const counters = (o: Partial<Counters>): Counters => ({ ...emptyCounters(), ...o });
/** The published figures, with made-up values for the unpublished counters that keep the identity. */
const REPRODUCED = counters({ ...PUBLISHED_COUNTERS, pairs_walked: 9000, no_divergence: 691, capped: 0 });
const always = () => true;

describe('the published figures', () => {
  it('are those of docs/mining-contract.md §7.3', () => {
    expect(PUBLISHED_INPUT).toMatchObject({ bytes: 2_079_503_354, rows: 67_074 });
    expect(PUBLISHED_COUNTERS).toStrictEqual({
      trajectories_read: 67_074, instances: 6_306, eligible_instances: 1_741, trajectories_extracted: 8_757,
      environment_divergence: 493, near_duplicate: 726, exact_duplicate: 1_670, pairs_emitted: 5_420, divergence_turn_0: 673,
    });
  });
});

describe('isPublishedInput: exactly one file of the upstream size with the upstream row count', () => {
  const cases: [string, RunInput, boolean][] = [
    ['the upstream file', { files: [{ bytes: 2_079_503_354 }], rows: 67_074 }, true],
    ['one byte more', { files: [{ bytes: 2_079_503_355 }], rows: 67_074 }, false],
    ['one row less', { files: [{ bytes: 2_079_503_354 }], rows: 67_073 }, false],
    ['the upstream file twice', { files: [{ bytes: 2_079_503_354 }, { bytes: 2_079_503_354 }], rows: 67_074 }, false],
    ['no file', { files: [], rows: 67_074 }, false],
  ];
  it.each(cases)('%s', (_, input, expected) => expect(isPublishedInput(input)).toBe(expected));
});

describe('comparePublished', () => {
  it('is null for any other input', () => {
    expect(comparePublished(REPRODUCED, { files: [{ bytes: 10 }], rows: 67_074 }, true)).toBeNull();
    expect(comparePublished(REPRODUCED, { files: [{ bytes: 2_079_503_354 }], rows: 67_074 }, true, () => false)).toBeNull();
  });

  it('lists every published counter in counter order, and those that differ', () => {
    const same = comparePublished(REPRODUCED, { files: [], rows: 0 }, true, always)!;
    expect(same.counters.map((c) => c.counter)).toStrictEqual(Object.keys(PUBLISHED_COUNTERS));
    expect(same.differs).toStrictEqual([]);
    const off = comparePublished({ ...REPRODUCED, near_duplicate: 725, pairs_emitted: 5_421 }, { files: [], rows: 0 }, true, always)!;
    expect(off.differs).toStrictEqual(['near_duplicate', 'pairs_emitted']);
    expect(off.counters.find((c) => c.counter === 'pairs_emitted')).toStrictEqual({ counter: 'pairs_emitted', published: 5_420, actual: 5_421, differs: true });
  });

  const verdicts: [string, Counters, boolean, string][] = [
    ['reproduced', REPRODUCED, true, 'all 9 published counters reproduced\n'],
    ['two differ', { ...REPRODUCED, instances: 1, capped: 3 }, true, '1 of 9 published counters differ: instances\n'],
    ['other options', REPRODUCED, false, 'reproduced (this run does not use the default options, the published run did)\n'],
  ];
  it.each(verdicts)('verdict line: %s', (_, c, defaults, end) => {
    const line = publishedVerdict(comparePublished(c, { files: [], rows: 0 }, defaults, always)!);
    expect(line.startsWith('published run (nebius/SWE-rebench-openhands-trajectories): ')).toBe(true);
    expect(line.endsWith(end)).toBe(true);
  });

  it('usesDefaultOptions: any option that changes the kept pairs counts', () => {
    expect(usesDefaultOptions({ ...DEFAULT_OPTIONS })).toBe(true);
    expect(usesDefaultOptions({ ...DEFAULT_OPTIONS, seed: '1' })).toBe(false);
    expect(usesDefaultOptions({ ...DEFAULT_OPTIONS, maxPerSide: 4 })).toBe(false);
    expect(usesDefaultOptions({ ...DEFAULT_OPTIONS, reasoningKeys: ['thought'] })).toBe(false);
  });
});

describe('formatCounters with the published figures', () => {
  it('a small run: the published column is as wide as the published figures', () => {
    const lines = formatCounters(counters({ pairs_emitted: 4, pairs_walked: 4 }), PUBLISHED_COUNTERS).trimEnd().split('\n');
    expect(lines.find((l) => l.startsWith('pairs_emitted '))).toBe('pairs_emitted             4  published  5,420  differs');
    expect(lines.find((l) => l.startsWith('instances '))).toBe('instances                 0  published  6,306  differs');
  });

  it('shows each published figure beside its counter and marks those that differ', () => {
    const lines = formatCounters({ ...REPRODUCED, pairs_emitted: 5_421 }, PUBLISHED_COUNTERS).trimEnd().split('\n');
    expect(lines.find((l) => l.startsWith('instances '))).toBe('instances                  6,306  published  6,306');
    expect(lines.find((l) => l.startsWith('pairs_emitted '))).toBe('pairs_emitted              5,421  published  5,420  differs');
    expect(lines.find((l) => l.startsWith('capped '))).toBe('capped                         0'); // not published
  });
});

describe('a run over the recognised input (built miner, injected recogniser)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dm-published-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the published figures beside the counters, names those that differ, and records the comparison in --stats', async () => {
    const input = join(ROOT, 'fixtures', 'forks.parquet');
    const bytes = statSync(input).size;
    const { runMine } = (await import(join(ROOT, 'dist', 'commands', 'mine.js'))) as typeof import('../src/commands/mine.js');
    const program = (await import(join(ROOT, 'dist', 'cli.js'))) as typeof import('../src/cli.js');
    const cmd = (await program.buildProgram()).commands.find((c) => c.name() === 'mine')!;
    const stats = join(dir, 'stats.json');
    const out = join(dir, 'pairs.jsonl');
    cmd.parseOptions(['--parquet', input, '--out', out, '--stats', stats, '--workers', '1']);
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (written.push(String(s)), true));
    try {
      // The fixture stands in for the upstream file: one file of its size with its 14 rows.
      await runMine([], cmd.opts() as never, (i) => i.files.length === 1 && i.files[0]!.bytes === bytes && i.rows === 14);
    } finally {
      spy.mockRestore();
    }
    const text = written.join('');
    expect(text).toMatch(/^pairs_emitted +4 +published +5,420 +differs$/m);
    expect(text).toMatch(/^capped +0$/m);
    expect(text).toContain('published run (nebius/SWE-rebench-openhands-trajectories): 9 of 9 published counters differ: trajectories_read, instances,');
    const doc = JSON.parse(readFileSync(stats, 'utf8'));
    expect(doc.published_comparison.differs).toHaveLength(9);
    expect(doc.published_comparison.counters[0]).toStrictEqual({ counter: 'trajectories_read', published: 67_074, actual: 14, differs: true });
    expect(doc.published_comparison.default_options).toBe(true);
  }, 120_000);

  it('a run over any other input has no comparison', async () => {
    const { statsDocument } = (await import(join(ROOT, 'dist', 'commands', 'mine.js'))) as typeof import('../src/commands/mine.js');
    const doc = statsDocument(emptyCounters(), { ...DEFAULT_OPTIONS }, [], { partition: null, badRowsIndexPass: 0, fingerprint: '' });
    expect(doc).not.toHaveProperty('published_comparison');
  });
});
