// `--card FILE.md`: a Hugging Face dataset card for the written pairs.
//
// Streaming: feed every written row to `CardStats.add(row, split)` while writing (it keeps counts
// and two numbers per row, never the rows), then call `renderCard`.
//
// Definitions used by the card:
// - action characters of a message = length of `content` (null = 0) + for each tool call, the length
//   of its function name + the length of its arguments as JSON text (`JSON.stringify` of the
//   object, or the string itself when arguments are a string). The same for both output shapes.
// - tool mix: every tool call of the chosen (rejected) message counts once under its function name;
//   a message without calls counts once as "(text reply)".
// - length flag: among rows where the two sides differ in action characters, the share where the
//   chosen side is longer; flagged when it is outside 50% +/- `lengthFlag` (default 10 points).
import type { SplitBy, SplitSpec } from './split.js';
import { jsonTextByValue, numbersByValue } from '../contract/json-numbers.js';
import { tokenSection, type CardTokens } from './card-tokens.js';
import { formatCount } from '../count-text.js';

export interface CardMessageLike {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
}

/** Either shape: published (chosen is one message, tool_calls a JSON string) or trl (lists, arrays). */
export interface CardRowLike {
  prompt: readonly unknown[];
  chosen: CardMessageLike | readonly CardMessageLike[];
  rejected: CardMessageLike | readonly CardMessageLike[];
  instance_id: string;
  repo: string | null;
  divergence_turn: number;
  prompt_messages_dropped?: number;
}

export const TEXT_REPLY = '(text reply)';

function asMessage(m: CardMessageLike | readonly CardMessageLike[]): CardMessageLike {
  return Array.isArray(m) ? ((m[0] as CardMessageLike | undefined) ?? {}) : (m as CardMessageLike);
}

function callsOf(m: CardMessageLike): { name: string; argChars: number }[] {
  let calls: unknown = m.tool_calls;
  if (typeof calls === 'string') {
    try {
      calls = JSON.parse(calls);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(calls)) return [];
  return calls.map((c: unknown) => {
    const f = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function ?? {};
    const name = typeof f.name === 'string' ? f.name : '(unnamed)';
    const args = f.arguments;
    // By value, as every statistic of the contract (v3, 11): the card does not change with a number's text.
    const argText = typeof args === 'string' ? jsonTextByValue(args) : (JSON.stringify(numbersByValue(args ?? null)) ?? '');
    return { name, argChars: argText.length };
  });
}

/** Action characters of a message (definition at the top of this file). */
export function actionChars(m: CardMessageLike): number {
  const content = typeof m.content === 'string' ? m.content.length : 0;
  return content + callsOf(m).reduce((s, c) => s + c.name.length + c.argChars, 0);
}

function bump<K>(map: Map<K, number>, k: K, by = 1): void {
  map.set(k, (map.get(k) ?? 0) + by);
}

interface SplitTally {
  rows: number;
  instances: Set<string>;
  repos: Set<string>;
}

export interface LengthAudit {
  rows: number;
  chosenMedian: number;
  rejectedMedian: number;
  chosenMean: number;
  rejectedMean: number;
  chosenLonger: number;
  rejectedLonger: number;
  equal: number;
  /** chosenLonger / (chosenLonger + rejectedLonger); NaN when every row is a tie. */
  chosenLongerShare: number;
  flagged: boolean;
}

function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export class CardStats {
  rows = 0;
  readonly turns = new Map<number, number>();
  readonly chosenTools = new Map<string, number>();
  readonly rejectedTools = new Map<string, number>();
  private readonly chosenChars: number[] = [];
  private readonly rejectedChars: number[] = [];
  private chosenLonger = 0;
  private rejectedLonger = 0;
  private equal = 0;
  promptMessages = 0;
  promptMessagesDropped = 0;
  windowedRows = 0;
  private readonly splits = new Map<string, SplitTally>();
  private readonly instanceSplit = new Map<string, string>();
  private readonly leakedInstances = new Set<string>();
  private readonly repoSplits = new Map<string, Set<string>>();

  /** Register splits up front, in report order; a split that gets no rows is still reported (zeros). */
  declareSplits(names: readonly string[]): void {
    for (const n of names) if (!this.splits.has(n)) this.splits.set(n, { rows: 0, instances: new Set(), repos: new Set() });
  }

  add(row: CardRowLike, split = 'train'): void {
    this.rows++;
    bump(this.turns, row.divergence_turn);
    const chosen = asMessage(row.chosen);
    const rejected = asMessage(row.rejected);
    for (const [m, tools] of [
      [chosen, this.chosenTools],
      [rejected, this.rejectedTools],
    ] as const) {
      const calls = callsOf(m);
      if (calls.length === 0) bump(tools, TEXT_REPLY);
      for (const c of calls) bump(tools, c.name);
    }
    const c = actionChars(chosen);
    const r = actionChars(rejected);
    this.chosenChars.push(c);
    this.rejectedChars.push(r);
    if (c > r) this.chosenLonger++;
    else if (r > c) this.rejectedLonger++;
    else this.equal++;
    this.promptMessages += row.prompt.length;
    if (typeof row.prompt_messages_dropped === 'number') {
      this.promptMessagesDropped += row.prompt_messages_dropped;
      if (row.prompt_messages_dropped > 0) this.windowedRows++;
    }

    let t = this.splits.get(split);
    if (!t) this.splits.set(split, (t = { rows: 0, instances: new Set(), repos: new Set() }));
    t.rows++;
    t.instances.add(row.instance_id);
    if (row.repo !== null) t.repos.add(row.repo);
    const seen = this.instanceSplit.get(row.instance_id);
    if (seen === undefined) this.instanceSplit.set(row.instance_id, split);
    else if (seen !== split) this.leakedInstances.add(row.instance_id);
    if (row.repo !== null) {
      let s = this.repoSplits.get(row.repo);
      if (!s) this.repoSplits.set(row.repo, (s = new Set()));
      s.add(split);
    }
  }

  /** Rows, instances and repositories per split, in declared, then first-seen order. */
  splitCounts(): { split: string; rows: number; instances: number; repos: number }[] {
    return [...this.splits.entries()].map(([split, t]) => ({
      split,
      rows: t.rows,
      instances: t.instances.size,
      repos: t.repos.size,
    }));
  }

  /** Instances (and repositories) that appear in more than one split. 0 for a group-disjoint split. */
  leaks(): { instances: number; repos: number } {
    let repos = 0;
    for (const s of this.repoSplits.values()) if (s.size > 1) repos++;
    return { instances: this.leakedInstances.size, repos };
  }

  lengthAudit(flagPoints = 0.1): LengthAudit {
    const differ = this.chosenLonger + this.rejectedLonger;
    const share = differ === 0 ? NaN : this.chosenLonger / differ;
    return {
      rows: this.rows,
      chosenMedian: median(this.chosenChars),
      rejectedMedian: median(this.rejectedChars),
      chosenMean: mean(this.chosenChars),
      rejectedMean: mean(this.rejectedChars),
      chosenLonger: this.chosenLonger,
      rejectedLonger: this.rejectedLonger,
      equal: this.equal,
      chosenLongerShare: share,
      flagged: Number.isFinite(share) && Math.abs(share - 0.5) > flagPoints,
    };
  }
}

/** One line for stderr: "splits (by instance): train 4,880 rows, 1,567 instances; dev 540 rows, 174 instances". */
export function splitCountsLine(stats: CardStats, by: SplitBy | null = null): string {
  const parts = stats.splitCounts().map((c) => `${c.split} ${fmt(c.rows)} rows, ${fmt(c.instances)} instances, ${fmt(c.repos)} repositories`);
  const leaks = stats.leaks();
  const leak = leaks.instances > 0 || (by === 'repo' && leaks.repos > 0) ? ` — LEAK: ${leaks.instances} instances, ${leaks.repos} repositories in several splits` : '';
  return `splits${by ? ` (by ${by})` : ''}: ${parts.join('; ')}${leak}`;
}

export interface DataFilesEntry {
  split: string;
  /** A path or glob relative to the dataset repository root, or several. */
  path: string | readonly string[];
}

export interface CardInput {
  /** The command line as run (e.g. ['divergence-mine', 'mine', '--parquet', ...]). */
  argv: readonly string[];
  contractVersion: number;
  counters: Readonly<Record<string, number>>;
  stats: CardStats;
  dataFiles: readonly DataFilesEntry[];
  shape: 'published' | 'trl';
  arguments?: 'object' | 'string';
  promptWindow?: number | 'auto' | null;
  /** `mine --tokenizer`: token counts and what --max-length did (card-tokens.ts). */
  tokens?: CardTokens | null;
  split?: { by: SplitBy; specs: readonly SplitSpec[] } | null;
  /** e.g. "divergence-mine 0.1.0". */
  generator?: string;
  title?: string;
  /** Length flag threshold in share points (default 0.1: flag outside 40%-60%). */
  lengthFlag?: number;
  /** Source dataset id (default nebius/SWE-rebench-openhands-trajectories). */
  sourceDataset?: string;
  /** Hub datasets the run read (src/hub/): each links to the commit read and names its files. */
  sources?: readonly CardSource[];
  /** `--pairing tree`: its funnel and value gaps (tree-card.ts); `counters` are then the selection counters only. */
  tree?: CardTree | null;
}

import { selectionCounters, treeCardSection, type CardTree } from './tree-card.js';

/** What the card says of a Hub input (a structural subset of hub/resolve.ts HubSource). */
export interface CardSource {
  repo: string;
  revision: string;
  commit: string;
  endpoint: string;
  files: readonly { path: string; bytes: number }[];
}

const SOURCE = 'nebius/SWE-rebench-openhands-trajectories';

function yamlString(s: string): string {
  return JSON.stringify(s); // a JSON string is a valid YAML double-quoted scalar
}

function sizeCategory(n: number): string {
  if (n < 1_000) return 'n<1K';
  if (n < 10_000) return '1K<n<10K';
  if (n < 100_000) return '10K<n<100K';
  if (n < 1_000_000) return '100K<n<1M';
  return '1M<n<10M';
}

function shellQuote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`;
}

function cell(s: string): string {
  return s.replaceAll('\\', '\\\\').replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function fmt(n: number): string {
  return Number.isFinite(n) ? formatCount(n) : 'n/a';
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : 'n/a';
}

function fixed(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

function frontMatter(input: CardInput): string {
  const lines = ['---', 'license: cc-by-4.0', `pretty_name: ${yamlString(input.title ?? 'SWE agent action-level DPO pairs')}`];
  lines.push('language:', '- en');
  lines.push('task_categories:', '- text-generation');
  lines.push('tags:', '- dpo', '- preference', '- agents', '- tool-use', '- software-engineering', '- trl');
  lines.push('size_categories:', `- ${sizeCategory(input.stats.rows)}`);
  const repos = input.sources?.length ? [...new Set(input.sources.map((s) => s.repo))] : [input.sourceDataset ?? SOURCE];
  lines.push('source_datasets:', ...repos.map((r) => `- ${yamlString(r)}`));
  lines.push('configs:', '- config_name: default', '  data_files:');
  for (const d of input.dataFiles) {
    lines.push(`  - split: ${d.split}`);
    if (typeof d.path === 'string') lines.push(`    path: ${yamlString(d.path)}`);
    else {
      lines.push('    path:');
      for (const p of d.path) lines.push(`    - ${yamlString(p)}`);
    }
  }
  lines.push('---');
  return lines.join('\n');
}

interface FunnelLine {
  label: string;
  key: string;
  sign: '' | '−' | '=';
  base?: string;
}

const FUNNEL: FunnelLine[] = [
  { label: 'trajectories read', key: 'trajectories_read', sign: '' },
  { label: 'duplicate trajectory ids (first kept)', key: 'duplicate_trajectory_ids', sign: '−', base: 'trajectories_read' },
  { label: 'not labelled (resolved neither 0 nor 1)', key: 'unlabelled', sign: '−', base: 'trajectories_read' },
  { label: 'bad rows skipped', key: 'bad_rows', sign: '−', base: 'trajectories_read' },
  { label: 'instances', key: 'instances', sign: '' },
  { label: 'eligible instances (≥ 1 resolved and ≥ 1 failed)', key: 'eligible_instances', sign: '', base: 'instances' },
  { label: 'trajectories extracted (capped per side)', key: 'trajectories_extracted', sign: '' },
  { label: '(resolved, failed) pairs walked', key: 'pairs_walked', sign: '' },
  { label: 'no divergence', key: 'no_divergence', sign: '−', base: 'pairs_walked' },
  { label: 'environment divergence (not both assistant)', key: 'environment_divergence', sign: '−', base: 'pairs_walked' },
  { label: 'near-duplicate actions', key: 'near_duplicate', sign: '−', base: 'pairs_walked' },
  { label: 'exact duplicate rows', key: 'exact_duplicate', sign: '−', base: 'pairs_walked' },
  { label: 'over the per-instance cap', key: 'capped', sign: '−', base: 'pairs_walked' },
  { label: '**pairs emitted**', key: 'pairs_emitted', sign: '=', base: 'pairs_walked' },
  { label: 'of which at divergence turn 0', key: 'divergence_turn_0', sign: '', base: 'pairs_emitted' },
];

function funnel(counters: Readonly<Record<string, number>>): string {
  const out = ['| stage | | count | share |', '|---|:-:|--:|--:|'];
  for (const f of FUNNEL) {
    const v = counters[f.key];
    if (v === undefined) continue;
    const base = f.base === undefined ? undefined : counters[f.base];
    out.push(`| ${f.label} | ${f.sign} | ${fmt(v)} | ${base === undefined ? '' : pct(v, base)} |`);
  }
  const c = (k: string): number => counters[k] ?? 0;
  const walked = counters.pairs_walked;
  if (walked !== undefined) {
    const sum =
      c('no_divergence') + c('environment_divergence') + c('near_duplicate') + c('exact_duplicate') + c('capped') + c('pairs_emitted');
    out.push('');
    out.push(
      sum === walked
        ? `Identity check: pairs walked = ${fmt(walked)} = the five skip counters + pairs emitted ✓`
        : `Identity check FAILED: pairs walked ${fmt(walked)} ≠ ${fmt(sum)} (skips + emitted)`,
    );
  }
  const other = ['malformed_arguments', 'unknown_roles'].filter((k) => counters[k] !== undefined);
  if (other.length > 0) {
    out.push('');
    out.push(`Also counted over the extracted trajectories: ${other.map((k) => `\`${k}\` ${fmt(c(k))}`).join(', ')}.`);
  }
  return out.join('\n');
}

function schemaTable(input: CardInput): string {
  const trl = input.shape === 'trl';
  const args = input.arguments ?? 'object';
  const msg = trl
    ? `list of messages {role, content, tool_calls?, name?, tool_call_id?}; \`tool_calls\` is a list of {id, type, function: {name, arguments}} with \`arguments\` ${args === 'object' ? 'a JSON object' : 'a JSON string'}; \`content\` is a string ("" when empty)`
    : 'message {role, content, tool_calls, name, tool_call_id} (only the role\'s fields); `tool_calls` is a JSON string of [{id, type, function: {name, arguments}}] or null';
  const rows: [string, string, string][] = [
    ['prompt', trl ? 'list<message>' : 'list<message>', `messages before the divergence, from the resolved trajectory; ${msg}`],
    ['chosen', trl ? 'list<message> (one)' : 'message', 'the resolved trajectory\'s assistant action at the divergence'],
    ['rejected', trl ? 'list<message> (one)' : 'message', 'the failed trajectory\'s assistant action at the same index'],
    ['instance_id', 'string', 'SWE-rebench task instance (the grouping key)'],
    ['repo', 'string \\| null', 'repository of the instance'],
    ['chosen_trajectory_id', 'string', 'upstream `trajectory_id` of the resolved trajectory'],
    ['rejected_trajectory_id', 'string', 'upstream `trajectory_id` of the failed trajectory'],
    ['divergence_turn', 'int', 'number of assistant messages before the divergence (0-based assistant turn)'],
    ['divergence_msg_index', 'int', 'index of the divergent message in the full trajectory'],
    ['action_similarity', 'float', 'Dice similarity of the two action signatures (pairs ≥ 0.95 are dropped)'],
  ];
  if (input.promptWindow != null)
    rows.push([
      'prompt_messages_dropped',
      'int',
      input.promptWindow === 'auto'
        ? 'messages removed by `--prompt-window auto` (the oldest, until the row fits `--max-length`; system, first user and whole tool-call/result groups kept)'
        : `messages removed by \`--prompt-window ${input.promptWindow}\` (system, first user and the last ${input.promptWindow} messages kept; tool results stay with their call)`,
    ]);
  if (trl)
    rows.push([
      'tools',
      'string \\| null',
      'JSON list of the trajectory\'s tool definitions (upstream null placeholders removed); TRL\'s DPOTrainer passes it to the chat template',
    ]);
  if (input.tokens)
    rows.push(
      ['prompt_tokens', 'int \\| null', 'tokens of the prompt rendered with the generation prompt (see "Token lengths")'],
      ['chosen_tokens', 'int \\| null', 'tokens of prompt+chosen after the prompt\'s tokens'],
      ['rejected_tokens', 'int \\| null', 'tokens of prompt+rejected after the prompt\'s tokens'],
    );
  return ['| field | type | description |', '|---|---|---|', ...rows.map((r) => `| \`${r[0]}\` | ${r[1]} | ${r[2]} |`)].join('\n');
}

const TURN_BUCKETS: [number, number][] = [
  [0, 0],
  [1, 1],
  [2, 2],
  [3, 3],
  [4, 4],
  [5, 9],
  [10, 19],
  [20, 29],
  [30, 49],
  [50, 99],
  [100, Infinity],
];

function histogram(stats: CardStats): string {
  const counts = TURN_BUCKETS.map(([lo, hi]) => {
    let n = 0;
    for (const [t, c] of stats.turns) if (t >= lo && t <= hi) n += c;
    return n;
  });
  const max = Math.max(1, ...counts);
  const out = ['| divergence turn | rows | share | |', '|--:|--:|--:|---|'];
  TURN_BUCKETS.forEach(([lo, hi], i) => {
    const n = counts[i]!;
    if (n === 0 && lo >= 100) return;
    const label = lo === hi ? String(lo) : hi === Infinity ? `${lo}+` : `${lo}–${hi}`;
    out.push(`| ${label} | ${fmt(n)} | ${pct(n, stats.rows)} | ${'█'.repeat(Math.round((30 * n) / max))} |`);
  });
  return out.join('\n');
}

function toolMix(stats: CardStats): string {
  const names = new Set([...stats.chosenTools.keys(), ...stats.rejectedTools.keys()]);
  const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
  const tc = total(stats.chosenTools);
  const tr = total(stats.rejectedTools);
  const sorted = [...names].sort((a, b) => {
    const d = (stats.chosenTools.get(b) ?? 0) + (stats.rejectedTools.get(b) ?? 0) - (stats.chosenTools.get(a) ?? 0) - (stats.rejectedTools.get(a) ?? 0);
    return d !== 0 ? d : a < b ? -1 : a > b ? 1 : 0;
  });
  const out = ['| action | chosen | share | rejected | share |', '|---|--:|--:|--:|--:|'];
  for (const n of sorted) {
    const c = stats.chosenTools.get(n) ?? 0;
    const r = stats.rejectedTools.get(n) ?? 0;
    out.push(`| ${n === TEXT_REPLY ? n : `\`${cell(n)}\``} | ${fmt(c)} | ${pct(c, tc)} | ${fmt(r)} | ${pct(r, tr)} |`);
  }
  return out.join('\n');
}

function lengthSection(stats: CardStats, flagPoints: number): string {
  const a = stats.lengthAudit(flagPoints);
  const out = [
    '| | chosen | rejected |',
    '|---|--:|--:|',
    `| median action characters | ${fmt(a.chosenMedian)} | ${fmt(a.rejectedMedian)} |`,
    `| mean action characters | ${fixed(a.chosenMean)} | ${fixed(a.rejectedMean)} |`,
    `| rows where this side is longer | ${fmt(a.chosenLonger)} | ${fmt(a.rejectedLonger)} |`,
    '',
    `Rows with equal length: ${fmt(a.equal)}. Among the ${fmt(a.chosenLonger + a.rejectedLonger)} rows whose sides differ in length, the chosen side is the longer one in ` +
      `**${Number.isFinite(a.chosenLongerShare) ? (100 * a.chosenLongerShare).toFixed(1) + '%' : 'n/a'}** ` +
      `(flag outside ${(50 - 100 * flagPoints).toFixed(0)}%–${(50 + 100 * flagPoints).toFixed(0)}%).`,
    '',
  ];
  if (a.flagged)
    out.push(
      `> ⚠️ **Length could become a shortcut.** "Prefer the ${a.chosenLongerShare > 0.5 ? 'longer' : 'shorter'} action" alone ` +
        `agrees with the preference on ${(100 * Math.max(a.chosenLongerShare, 1 - a.chosenLongerShare)).toFixed(1)}% of the rows ` +
        `with a length difference. Consider length-robust training (e.g. TRL \`DPOConfig(ld_alpha=...)\`) or ` +
        'rebalancing before training.',
    );
  else out.push('Length is not flagged as a shortcut for the preference.');
  out.push('');
  out.push(
    'Action characters = `content` length + for each tool call, the function name and the arguments as JSON text.',
  );
  return out.join('\n');
}

function splitSection(input: CardInput): string {
  const stats = input.stats;
  const counts = stats.splitCounts();
  const out = ['| split | rows | instances | repositories | files |', '|---|--:|--:|--:|---|'];
  for (const c of counts) {
    const files = input.dataFiles.find((d) => d.split === c.split)?.path;
    const f = files === undefined ? '' : (typeof files === 'string' ? [files] : files).map((p) => `\`${cell(p)}\``).join(', ');
    out.push(`| ${c.split} | ${fmt(c.rows)} | ${fmt(c.instances)} | ${fmt(c.repos)} | ${f} |`);
  }
  out.push('');
  if (input.split && input.split.specs.length > 0) {
    const s = input.split;
    out.push(
      `Split by \`${s.by}\`: ${s.specs.map((x) => `\`${x.name}\` ≈ ${(100 * x.fraction).toFixed(1)}%`).join(', ')} of the ` +
        `${s.by === 'repo' ? 'repositories' : 'instances'}, the rest \`train\`. The split of a group is fixed by the SHA-256 of its ` +
        'key (first 8 bytes as an unsigned integer / 2^64 against the cumulative fractions), so every row of an instance' +
        `${s.by === 'repo' ? ' and of a repository' : ''} is in one split.`,
    );
  }
  const leaks = stats.leaks();
  out.push('');
  out.push(
    `Instances in more than one split: ${fmt(leaks.instances)}. Repositories in more than one split: ${fmt(leaks.repos)}.`,
  );
  return out.join('\n');
}

/**
 * The command line for a published card: every input path (as given in `inputs`, alone or as
 * `--opt=PATH`) cut to its file name, since the miner's local folders mean nothing to a reader.
 */
export function argvForCard(argv: readonly string[], inputs: readonly string[], hub: readonly { arg: string; pinned: string }[] = []): string[] {
  const given = new Set(inputs);
  // A Hub dataset is named by the commit it was read at, so the line reproduces this very run.
  const pinned = new Map(hub.map((h) => [h.arg, h.pinned]));
  const name = (p: string) => pinned.get(p) ?? (p.replace(/[\\/]+$/, '').split(/[\\/]/).pop() || p);
  return argv.map((a) => {
    if (given.has(a) || pinned.has(a)) return name(a);
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0 && given.has(a.slice(eq + 1))) return `${a.slice(0, eq + 1)}${name(a.slice(eq + 1))}`;
    return a;
  });
}

/** The dataset card (markdown with YAML front matter). */
export function renderCard(input: CardInput): string {
  const stats = input.stats;
  const flagPoints = input.lengthFlag ?? 0.1;
  const title = input.title ?? 'SWE agent action-level DPO pairs';
  const source = input.sourceDataset ?? input.sources?.[0]?.repo ?? SOURCE;
  const cmd = input.argv.map(shellQuote).join(' ');
  const parts: string[] = [];
  parts.push(frontMatter(input));
  parts.push(`# ${title}`);
  parts.push(
    `Action-level preference pairs mined from multi-turn software-engineering agent trajectories ` +
      `([${source}](https://huggingface.co/datasets/${source})). Each row pairs a resolved and a failed trajectory of the same ` +
      'task instance at the first message where they diverge: `prompt` is the shared history, `chosen` the action of the ' +
      'resolved trajectory, `rejected` the action of the failed one.',
  );
  parts.push(
    `Shape: **${input.shape}**` +
      (input.shape === 'trl'
        ? ` (conversational preference format for TRL's \`DPOTrainer\`; tool-call arguments as ${input.arguments === 'string' ? 'JSON strings' : 'objects'}).`
        : ' (the mining contract\'s shape).') +
      (input.promptWindow === 'auto'
        ? ' Prompts windowed by tokens: the oldest messages dropped until the row fits `--max-length`.'
        : input.promptWindow != null
          ? ` Prompts windowed to the system message, the first user message and the last ${input.promptWindow} messages.`
          : ''),
  );
  parts.push('## How it was made');
  parts.push(
    [
      '```sh',
      cmd,
      '```',
      '',
      ...(input.sources ?? []).map(
        (s) =>
          `Input: [${s.repo}](${s.endpoint}/datasets/${s.repo}/tree/${s.commit}) at commit \`${s.commit}\`` +
          `${s.revision !== s.commit ? ` (revision \`${s.revision}\`)` : ''}: ` +
          s.files.map((f) => `\`${f.path}\` (${fmt(f.bytes)} bytes)`).join(', ') +
          '.\n',
      ),
      `Mining contract version: **${input.contractVersion}**${input.generator ? ` (${input.generator})` : ''}. ` +
        'Every count below follows from the contract\'s rules.',
    ].join('\n'),
  );
  parts.push('### Funnel');
  parts.push(funnel(input.tree ? selectionCounters(input.counters) : input.counters));
  if (input.tree) {
    parts.push('### Tree pairing funnel');
    parts.push(treeCardSection(input.tree));
  }
  parts.push('## Splits');
  parts.push(splitSection(input));
  parts.push('## Schema');
  parts.push(schemaTable(input));
  if (stats.windowedRows > 0 || input.promptWindow != null)
    parts.push(
      `Prompt window: ${fmt(stats.windowedRows)} rows shortened, ${fmt(stats.promptMessagesDropped)} messages dropped in total; ` +
        `${fmt(stats.promptMessages)} prompt messages kept.`,
    );
  parts.push('## Divergence turn');
  parts.push(histogram(stats));
  parts.push('## Tool mix of the actions');
  parts.push(toolMix(stats));
  if (input.tokens) {
    parts.push('## Token lengths');
    parts.push(tokenSection(input.tokens));
  }
  parts.push('## Length audit');
  parts.push(lengthSection(stats, flagPoints));
  parts.push('## License and attribution');
  parts.push(
    `Derived from [${source}](https://huggingface.co/datasets/${source}), CC-BY-4.0, © Nebius ` +
      '(Trofimova et al., "OpenHands Trajectories with Qwen3-Coder-480B-A35B-Instruct", Nebius blog, 2025). ' +
      'This derived dataset is released under the same license.',
  );
  return parts.join('\n\n') + '\n';
}
