import { describe, expect, it } from 'vitest';
import { CardStats, TEXT_REPLY, actionChars, renderCard, splitCountsLine, type CardInput, type CardRowLike } from '../src/dataset/card.js';
import { toTrlRow } from '../src/shapes/trl.js';
import { splitOf } from '../src/dataset/split.js';
import { samplePairs } from './template/pairs.js';

const COUNTERS = {
  trajectories_read: 1000,
  duplicate_trajectory_ids: 2,
  unlabelled: 10,
  bad_rows: 0,
  malformed_arguments: 3,
  unknown_roles: 0,
  instances: 100,
  eligible_instances: 40,
  trajectories_extracted: 200,
  pairs_walked: 300,
  no_divergence: 20,
  environment_divergence: 30,
  near_duplicate: 40,
  exact_duplicate: 50,
  capped: 60,
  pairs_emitted: 100,
  divergence_turn_0: 12,
};

function call(name: string, args: unknown) {
  return { id: 'x', type: 'function', function: { name, arguments: args } };
}

function pub(chosen: string, rejected: string, turn: number, inst = 'o__r-1', repo: string | null = 'o/r'): CardRowLike {
  return {
    prompt: [{ role: 'user', content: 'u' }],
    chosen: { role: 'assistant', content: '', tool_calls: JSON.stringify([call('execute_bash', { command: chosen })]) },
    rejected: { role: 'assistant', content: rejected, tool_calls: null },
    instance_id: inst,
    repo,
    divergence_turn: turn,
  };
}

function input(stats: CardStats, over: Partial<CardInput> = {}): CardInput {
  return {
    argv: ['divergence-mine', 'mine', '--parquet', 'data/*.parquet', '--out', 'pairs.parquet', '--card', 'README.md', '--note', "it's"],
    contractVersion: 1,
    counters: COUNTERS,
    stats,
    dataFiles: [
      { split: 'train', path: 'train-*.parquet' },
      { split: 'dev', path: 'dev.parquet' },
    ],
    shape: 'trl',
    arguments: 'object',
    promptWindow: 20,
    split: { by: 'instance', specs: [{ name: 'dev', fraction: 0.1 }] },
    generator: 'divergence-mine 0.1.0',
    ...over,
  };
}

describe('actionChars', () => {
  it.each([
    ['text only', { content: 'abcd' }, 4],
    ['null content', { content: null }, 0],
    ['published call', { content: 'ab', tool_calls: JSON.stringify([call('f', { a: 1 })]) }, 2 + 1 + '{"a":1}'.length],
    ['trl call, object', { content: '', tool_calls: [call('f', { a: 1 })] }, 1 + '{"a":1}'.length],
    ['trl call, string', { content: '', tool_calls: [call('f', '{"a":1}')] }, 1 + '{"a":1}'.length],
  ])('%s', (_n, m, n) => {
    expect(actionChars(m)).toBe(n);
  });
});

describe('CardStats', () => {
  it('counts turns, tool mix, lengths and splits from either shape', () => {
    const s = new CardStats();
    s.add(pub('ls', 'much longer text reply', 0), 'train');
    s.add(pub('ls -la /very/long/path/here', 'x', 1, 'o__r-2'), 'dev');
    const t = toTrlRow(samplePairs([2])[0]!.row, { tools: null, arguments: 'object' });
    s.add(t, 'train');
    expect(s.rows).toBe(3);
    expect(Object.fromEntries(s.turns)).toEqual({ 0: 2, 1: 1 });
    expect(s.chosenTools.get('execute_bash')).toBe(2);
    expect(s.rejectedTools.get(TEXT_REPLY)).toBe(2);
    expect(s.splitCounts()).toEqual([
      { split: 'train', rows: 2, instances: 2, repos: 2 },
      { split: 'dev', rows: 1, instances: 1, repos: 1 },
    ]);
    expect(s.leaks()).toEqual({ instances: 0, repos: 1 }); // o/r is in both: fine for an instance split
    expect(splitCountsLine(s, 'instance')).toBe('splits (by instance): train 2 rows, 2 instances, 2 repositories; dev 1 rows, 1 instances, 1 repositories');
    expect(splitCountsLine(s, 'repo')).toMatch(/LEAK: 0 instances, 1 repositories/);
    s.add(pub('a', 'b', 2, 'o__r-2'), 'train');
    expect(s.leaks().instances).toBe(1);
  });

  const audits: [string, [string, string][], boolean, number][] = [
    ['chosen always longer', [['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'b'], ['cccccccccccccccccccccccccccc', 'd']], true, 1],
    ['balanced', [['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'b'], ['c', 'ddddddddddddddddddddddddddddddddddddddd']], false, 0.5],
    ['rejected always longer', [['a', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb']], true, 0],
  ];
  it.each(audits)('length audit: %s', (_n, pairs, flagged, share) => {
    const s = new CardStats();
    pairs.forEach(([c, r], i) => s.add(pub(c, r, i)));
    const a = s.lengthAudit();
    expect(a.flagged).toBe(flagged);
    expect(a.chosenLongerShare).toBeCloseTo(share);
    expect(a.chosenLonger + a.rejectedLonger + a.equal).toBe(pairs.length);
  });

  it('median and mean', () => {
    const s = new CardStats();
    for (const r of ['a', 'aaa', 'aaaaaaaaaa']) s.add(pub('x', r, 0));
    const a = s.lengthAudit();
    expect(a.rejectedMedian).toBe(3);
    expect(a.rejectedMean).toBeCloseTo(14 / 3);
  });
});

describe('renderCard', () => {
  function statsFromSample(): CardStats {
    const s = new CardStats();
    for (const { row, tools } of samplePairs()) s.add(toTrlRow(row, { tools, arguments: 'object' }), splitOf(row.instance_id, 0.34));
    return s;
  }

  it('has Hub front matter with configs / data_files', () => {
    const md = renderCard(input(statsFromSample()));
    const fm = md.split('\n---\n')[0]!;
    expect(md.startsWith('---\n')).toBe(true);
    expect(fm).toContain('license: cc-by-4.0');
    expect(fm).toContain('configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: "train-*.parquet"\n  - split: dev\n    path: "dev.parquet"');
    expect(fm).toContain('size_categories:\n- n<1K');
    expect(fm).toContain('- "nebius/SWE-rebench-openhands-trajectories"');
  });

  it('has the command line, contract version, funnel, schema, histogram, tool mix and length audit', () => {
    const md = renderCard(input(statsFromSample()));
    expect(md).toContain("divergence-mine mine --parquet 'data/*.parquet' --out pairs.parquet --card README.md --note 'it'\\''s'");
    expect(md).toContain('Mining contract version: **1** (divergence-mine 0.1.0)');
    expect(md).toMatch(/\| trajectories read \| {2}\| 1,000 \|/);
    expect(md).toMatch(/\| \*\*pairs emitted\*\* \| = \| 100 \| 33\.3% \|/);
    expect(md).toContain('Identity check: pairs walked = 300');
    expect(md).toContain('`malformed_arguments` 3');
    expect(md).toContain('| `tools` | string \\| null |');
    expect(md).toContain('| `prompt_messages_dropped` | int |');
    expect(md).toMatch(/## Divergence turn\n\n\| divergence turn \| rows \| share \| \|/);
    expect(md).toMatch(/\| `execute_bash` \| \d+ \| [\d.]+% \| \d+ \| [\d.]+% \|/);
    expect(md).toContain('## Length audit');
    expect(md).toContain('median action characters');
    expect(md).toContain('Instances in more than one split: 0.');
    expect(md).toContain('CC-BY-4.0, © Nebius');
  });

  it('flags a length shortcut, or says it is not flagged', () => {
    const s = new CardStats();
    for (let i = 0; i < 10; i++) s.add(pub('a'.repeat(50 + i), 'b', i));
    expect(renderCard(input(s))).toContain('Length could become a shortcut');
    const t = new CardStats();
    for (let i = 0; i < 10; i++) t.add(pub(i % 2 ? 'a'.repeat(80) : 'a', 'b'.repeat(40), i));
    expect(renderCard(input(t))).toContain('Length is not flagged');
  });

  it('reports a broken counter identity and the published shape', () => {
    const md = renderCard(input(new CardStats(), { counters: { ...COUNTERS, capped: 61 }, shape: 'published', promptWindow: null, split: null }));
    expect(md).toContain('Identity check FAILED');
    expect(md).toContain("Shape: **published** (the mining contract's shape).");
    expect(md).not.toContain('`tools`');
    expect(md).not.toContain('prompt_messages_dropped');
  });
});
