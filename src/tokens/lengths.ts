// Token-length statistics of written rows: the table (mean, p50, p95, p99, max), histograms of
// prompt / chosen / rejected tokens, and the `max_length` that keeps 95% / 99% of rows whole.
// Quantiles are nearest-rank: the q-quantile is the smallest value v with at least q of the rows
// <= v, so `max_length = p95(prompt + longer completion)` keeps at least 95% of rows whole.
// Type-only import: the statistics (and the dataset card that prints them) need no template engine.
import type { RowTokens } from './row-tokens.js';
import { formatCount } from '../count-text.js';

/** The whole of a row + completion that the trainer keeps: prompt + the longer completion. */
export function rowLength(t: RowTokens): number {
  return t.prompt_tokens + Math.max(t.chosen_tokens, t.rejected_tokens);
}

export interface LengthSummary {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export const LENGTH_FIELDS = ['prompt', 'chosen', 'rejected', 'total'] as const;
export type LengthField = (typeof LENGTH_FIELDS)[number];

/** Upper bounds (exclusive) of the histogram buckets; the last bucket is open. */
export const TOKEN_BUCKETS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072] as const;

export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

function summarise(values: number[]): LengthSummary {
  const s = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  return { mean: s.length ? sum / s.length : NaN, p50: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99), max: s.length ? s[s.length - 1]! : NaN };
}

export function bucketLabel(i: number): string {
  const k = (n: number) => (n >= 1024 ? `${n / 1024}k` : String(n));
  if (i === 0) return `< ${k(TOKEN_BUCKETS[0])}`;
  if (i >= TOKEN_BUCKETS.length) return `≥ ${k(TOKEN_BUCKETS[TOKEN_BUCKETS.length - 1]!)}`;
  return `${k(TOKEN_BUCKETS[i - 1]!)}–${k(TOKEN_BUCKETS[i]!)}`;
}

export function bucketOf(n: number): number {
  let i = 0;
  while (i < TOKEN_BUCKETS.length && n >= TOKEN_BUCKETS[i]!) i++;
  return i;
}

/** The JSON form (stats file `tokens.lengths`, report). */
export interface TokenLengthsJson {
  rows: number;
  summary: Record<LengthField, LengthSummary>;
  histogram: { bucket: string; prompt: number; chosen: number; rejected: number }[];
  recommended_max_length: { keep_95: number; keep_99: number };
}

export class TokenLengthStats {
  private readonly values: Record<LengthField, number[]> = { prompt: [], chosen: [], rejected: [], total: [] };

  get rows(): number {
    return this.values.prompt.length;
  }

  add(t: RowTokens): void {
    this.values.prompt.push(t.prompt_tokens);
    this.values.chosen.push(t.chosen_tokens);
    this.values.rejected.push(t.rejected_tokens);
    this.values.total.push(rowLength(t));
  }

  /** Rows with prompt + longer completion <= n. */
  fitting(n: number): number {
    return this.values.total.filter((v) => v <= n).length;
  }

  toJSON(): TokenLengthsJson {
    const summary = Object.fromEntries(LENGTH_FIELDS.map((f) => [f, summarise(this.values[f])])) as Record<LengthField, LengthSummary>;
    const histogram = [...Array(TOKEN_BUCKETS.length + 1).keys()].map((i) => ({ bucket: bucketLabel(i), prompt: 0, chosen: 0, rejected: 0 }));
    for (const f of ['prompt', 'chosen', 'rejected'] as const) for (const v of this.values[f]) histogram[bucketOf(v)]![f]++;
    const last = histogram.findLastIndex((h) => h.prompt + h.chosen + h.rejected > 0);
    return {
      rows: this.rows,
      summary,
      histogram: histogram.slice(0, Math.max(1, last + 1)),
      recommended_max_length: { keep_95: summary.total.p95, keep_99: summary.total.p99 },
    };
  }
}

function fmt(n: number): string {
  return Number.isFinite(n) ? formatCount(Math.round(n)) : 'n/a';
}

/** The length table as markdown (card, bench README). */
export function lengthTableMarkdown(j: TokenLengthsJson): string {
  const out = ['| tokens | mean | p50 | p95 | p99 | max |', '|---|--:|--:|--:|--:|--:|'];
  const label: Record<LengthField, string> = { prompt: 'prompt', chosen: 'chosen', rejected: 'rejected', total: 'prompt + longer completion' };
  for (const f of LENGTH_FIELDS) {
    const s = j.summary[f];
    out.push(`| ${label[f]} | ${fmt(s.mean)} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${fmt(s.p99)} | ${fmt(s.max)} |`);
  }
  return out.join('\n');
}

/** The histogram as a markdown table with bars of the prompt counts. */
export function lengthHistogramMarkdown(j: TokenLengthsJson): string {
  const max = Math.max(1, ...j.histogram.map((h) => Math.max(h.prompt, h.chosen, h.rejected)));
  const bar = (n: number) => '█'.repeat(Math.round((20 * n) / max));
  const out = ['| tokens | prompt | | chosen | | rejected | |', '|--:|--:|---|--:|---|--:|---|'];
  for (const h of j.histogram) out.push(`| ${h.bucket} | ${fmt(h.prompt)} | ${bar(h.prompt)} | ${fmt(h.chosen)} | ${bar(h.chosen)} | ${fmt(h.rejected)} | ${bar(h.rejected)} |`);
  return out.join('\n');
}
