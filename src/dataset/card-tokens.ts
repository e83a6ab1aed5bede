// The dataset card's "Token lengths" section (`mine --tokenizer`): the length table, histograms of
// prompt / chosen / rejected tokens, the max_length that keeps 95% and 99% of rows whole, and what
// `--max-length` did.
import { lengthHistogramMarkdown, lengthTableMarkdown } from '../tokens/lengths.js';
import type { MineTokens } from '../tokens/mine-tokens.js';
import { formatCount } from '../count-text.js';

export type CardTokens = ReturnType<MineTokens['toJSON']>;

function fmt(n: number): string {
  return Number.isFinite(n) ? formatCount(n) : 'n/a';
}

export function tokenSection(t: CardTokens): string {
  const j = t.lengths;
  const out = [
    `Counted with the tokenizer \`${t.tokenizer}\` and the chat template \`${t.template}\`, as TRL's \`DPOTrainer\` counts them: ` +
      '`prompt_tokens` = tokens of the prompt rendered with the generation prompt; `chosen_tokens` / `rejected_tokens` = ' +
      'tokens of prompt+completion after the prompt\'s tokens. Every written row carries the three counts.',
    '',
    lengthTableMarkdown(j),
    '',
    lengthHistogramMarkdown(j),
    '',
    `Recommended \`DPOConfig(max_length=...)\`: **${fmt(j.recommended_max_length.keep_95)}** keeps 95% of the rows whole, ` +
      `**${fmt(j.recommended_max_length.keep_99)}** keeps 99% (prompt + the longer completion; TRL cuts longer rows from the end ` +
      'and drops rows whose prompt alone fills max_length).',
  ];
  if (t.max_length !== null) {
    out.push('');
    out.push(
      `Mined with \`--max-length ${t.max_length}\`${t.prompt_window === 'auto' ? ' and `--prompt-window auto`' : ''}: ` +
        `${fmt(t.rows_fitting)} rows fit` +
        (t.prompt_window === 'auto' ? ` (${fmt(t.rows_windowed)} of them after dropping ${fmt(t.prompt_messages_dropped)} of the oldest prompt messages)` : '') +
        `; ${fmt(t.rows_dropped_too_long)} rows did not fit and were not written` +
        (t.rows_dropped_unrenderable > 0 ? `, nor were ${fmt(t.rows_dropped_unrenderable)} rows the template could not render` : '') +
        '.',
    );
  } else if (t.render_failures > 0) {
    out.push('', `${fmt(t.render_failures)} rows could not be rendered by the template; their counts are null.`);
  }
  return out.join('\n');
}
