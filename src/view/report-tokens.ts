// The report's "Token lengths" section (`report --tokenizer`): histograms of prompt, chosen and
// rejected tokens and the max_length that keeps 95% / 99% of the rows whole.
import { TOKEN_BUCKETS, type TokenLengthsJson } from '../tokens/lengths.js';
import { esc, fmtInt, histogram, type Bin } from './charts.js';

export interface ReportTokens {
  tokenizer: string;
  template: string;
  lengths: TokenLengthsJson;
  renderFailures: number;
}

export function tokenSectionHtml(t: ReportTokens): string {
  const j = t.lengths;
  const figs = (['prompt', 'chosen', 'rejected'] as const).map((f) => {
    const bins: Bin[] = j.histogram.map((h, i) => ({ x0: i, x1: i + 1, count: h[f], label: h.bucket }));
    return `<figure><figcaption>${f} tokens</figcaption>${histogram(bins, { id: `hist-tokens-${f}`, ariaLabel: `histogram of ${f} tokens`, xTitle: `${f} tokens`, kind: f === 'prompt' ? 'turn' : 'sim', width: 360 })}</figure>`;
  });
  const s = j.summary;
  const rows = (['prompt', 'chosen', 'rejected', 'total'] as const)
    .map((f) => `<tr><td>${f === 'total' ? 'prompt + longer completion' : f}</td>${(['mean', 'p50', 'p95', 'p99', 'max'] as const).map((k) => `<td class="num">${fmtInt(Math.round(s[f][k]))}</td>`).join('')}</tr>`)
    .join('');
  return `<section id="tokens"><h2>Token lengths</h2>
<p class="sub">tokenizer <code>${esc(t.tokenizer)}</code>, chat template <code>${esc(t.template)}</code>, counted as TRL's DPOTrainer counts them (buckets: ${TOKEN_BUCKETS.length + 1}, doubling from 256)</p>
<p id="recommended-max-length">Recommended <code>max_length</code>: <b>${fmtInt(j.recommended_max_length.keep_95)}</b> keeps 95% of the rows whole, <b>${fmtInt(j.recommended_max_length.keep_99)}</b> keeps 99%.${t.renderFailures > 0 ? ` ${fmtInt(t.renderFailures)} rows could not be rendered and are not counted.` : ''}</p>
<table class="side-counters"><tr><th>tokens</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>${rows}</table>
<div class="grid2">${figs.join('')}</div></section>`;
}
