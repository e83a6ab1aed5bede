// `mine --tokenizer` on trl rows: count every row (row-tokens.ts), apply `--max-length` (fit.ts),
// and keep the tallies for the stats file, the counters table and the card. Rows gain
// `prompt_tokens`, `chosen_tokens`, `rejected_tokens` (last, after every other field); a row the
// template cannot render is written with null counts (and counted), or dropped under --max-length
// (its length is unknown).
import type { CountPool } from './count-pool.js';
import { dropGroups, fitRow, promptGroups } from './fit.js';
import { TokenLengthStats, type TokenLengthsJson } from './lengths.js';
import { RenderFailure, type RowTokenCounter, type RowTokens, type TokenRow } from './row-tokens.js';

export interface MineTokensOptions {
  tokenizer: string;
  template: string;
  maxLength: number | null;
  /** `--prompt-window auto`: drop the oldest prompt groups until a row fits. */
  window: boolean;
}

export interface TokenTallies {
  rows_counted: number;
  render_failures: number;
  rows_fitting: number;
  rows_windowed: number;
  prompt_messages_dropped: number;
  rows_dropped_too_long: number;
  rows_dropped_unrenderable: number;
}

export type WithTokens<R> = R & { prompt_tokens: number | null; chosen_tokens: number | null; rejected_tokens: number | null };

export class MineTokens {
  readonly lengths = new TokenLengthStats();
  readonly tallies: TokenTallies = {
    rows_counted: 0,
    render_failures: 0,
    rows_fitting: 0,
    rows_windowed: 0,
    prompt_messages_dropped: 0,
    rows_dropped_too_long: 0,
    rows_dropped_unrenderable: 0,
  };

  /** `pool`: count in worker threads (built-in template); else on this thread with `counter`. */
  constructor(
    readonly counter: RowTokenCounter | null,
    readonly options: MineTokensOptions,
    readonly pool: CountPool | null = null,
  ) {}

  /** Warnings of the counting (this thread's and the workers'). */
  get warnings(): string[] {
    return [...(this.counter?.warnings ?? []), ...(this.pool?.warnings ?? [])];
  }

  /** `apply`, in a worker thread when there is a pool (rows of `instance` go to the same one). */
  async applyAsync<R extends TokenRow & { prompt_messages_dropped?: number; tools?: unknown }>(row: R, instance: string): Promise<WithTokens<R> | null> {
    if (!this.pool) return this.apply(row);
    const t = this.tallies;
    const max = this.options.maxLength;
    const r = await this.pool.count(instance, { row: { prompt: row.prompt, chosen: row.chosen, rejected: row.rejected, tools: row.tools ?? null }, maxLength: max, window: this.options.window });
    switch (r.kind) {
      case 'error':
        throw new Error(`token counting failed in a worker: ${r.message}`);
      case 'render-failure':
        t.render_failures++;
        if (max !== null) {
          t.rows_dropped_unrenderable++;
          return null;
        }
        return { ...row, prompt_tokens: null, chosen_tokens: null, rejected_tokens: null };
      case 'too-long':
        t.rows_counted++;
        t.rows_dropped_too_long++;
        return null;
      case 'counted': {
        t.rows_counted++;
        this.lengths.add(r.tokens);
        if (max === null) return withTokens(row, r.tokens);
        t.rows_fitting++;
        if (!this.options.window) return withTokens(row, r.tokens);
        const prompt = dropGroups(row.prompt, promptGroups(row.prompt), r.groupsDropped);
        const dropped = row.prompt.length - prompt.length;
        if (dropped > 0) {
          t.rows_windowed++;
          t.prompt_messages_dropped += dropped;
        }
        return withTokens(withDropped({ ...row, prompt }, dropped + (row.prompt_messages_dropped ?? 0)), r.tokens);
      }
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** The row to write (with token counts), or null when --max-length drops it. */
  apply<R extends TokenRow & { prompt_messages_dropped?: number; tools?: unknown }>(row: R): WithTokens<R> | null {
    const t = this.tallies;
    const max = this.options.maxLength;
    if (!this.counter) throw new Error('MineTokens: no counter on this thread');
    try {
      if (max === null) {
        const tokens = this.counter.count(row);
        t.rows_counted++;
        this.lengths.add(tokens);
        return withTokens(row, tokens);
      }
      const fit = fitRow(row, max, this.options.window, this.counter);
      t.rows_counted++;
      if (!fit.fits) {
        t.rows_dropped_too_long++;
        return null;
      }
      t.rows_fitting++;
      let out: R = fit.row;
      if (this.options.window) {
        if (fit.dropped > 0) {
          t.rows_windowed++;
          t.prompt_messages_dropped += fit.dropped;
        }
        out = withDropped(fit.row, fit.dropped + (row.prompt_messages_dropped ?? 0));
      }
      this.lengths.add(fit.tokens);
      return withTokens(out, fit.tokens);
    } catch (e) {
      if (!(e instanceof RenderFailure)) throw e;
      t.render_failures++;
      if (max !== null) {
        t.rows_dropped_unrenderable++;
        return null;
      }
      return { ...row, prompt_tokens: null, chosen_tokens: null, rejected_tokens: null };
    }
  }

  /** The stats file's `tokens` object. */
  toJSON(): { tokenizer: string; template: string; max_length: number | null; prompt_window: 'auto' | null } & TokenTallies & { lengths: TokenLengthsJson } {
    return {
      tokenizer: this.options.tokenizer,
      template: this.options.template,
      max_length: this.options.maxLength,
      prompt_window: this.options.window ? 'auto' : null,
      ...this.tallies,
      lengths: this.lengths.toJSON(),
    };
  }

  /** Lines for stderr after the counters table (aligned like it). */
  summaryLines(): string[] {
    const t = this.tallies;
    const j = this.lengths.toJSON();
    const rows: [string, number][] = [
      ['token_rows_counted', t.rows_counted],
      ['token_render_failures', t.render_failures],
    ];
    if (this.options.maxLength !== null) {
      rows.push(['rows_fitting_max_length', t.rows_fitting]);
      if (this.options.window) rows.push(['rows_windowed', t.rows_windowed], ['prompt_messages_dropped', t.prompt_messages_dropped]);
      rows.push(['rows_dropped_too_long', t.rows_dropped_too_long]);
      if (t.rows_dropped_unrenderable > 0) rows.push(['rows_dropped_unrenderable', t.rows_dropped_unrenderable]);
    }
    const w = Math.max(...rows.map((r) => r[0].length));
    const lines = rows.map(([k, v]) => `${k.padEnd(w)} ${String(v).padStart(9)}`);
    if (j.rows > 0)
      lines.push(
        `tokens (${this.options.tokenizer}, template ${this.options.template}): prompt p50 ${j.summary.prompt.p50}, p95 ${j.summary.prompt.p95}, max ${j.summary.prompt.max}; ` +
          `max_length keeping 95% of rows whole: ${j.recommended_max_length.keep_95}, 99%: ${j.recommended_max_length.keep_99}`,
      );
    return lines;
  }
}

/** `prompt_messages_dropped` placed before `tools`, as windowRow does. */
function withDropped<R extends { tools?: unknown }>(row: R, dropped: number): R {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (k !== 'tools' && k !== 'prompt_messages_dropped') out[k] = v;
  out.prompt_messages_dropped = dropped;
  if ('tools' in row) out.tools = row.tools;
  return out as R;
}

function withTokens<R>(row: R, t: RowTokens): WithTokens<R> {
  return { ...row, prompt_tokens: t.prompt_tokens, chosen_tokens: t.chosen_tokens, rejected_tokens: t.rejected_tokens };
}
