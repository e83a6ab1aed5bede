// The self-contained HTML report: counters as a funnel, histograms, tool mix, pairs per repo (inline
// SVG drawn here), and a searchable, virtualised table of pairs whose rows open the same side-by-side
// diff as `show`. The page loads nothing from the network: CSS, script and data are inline, and per
// pair it embeds only the last few prompt messages (capped) plus the two actions and their diff.
import type { ReadPair } from '../io/pairs.js';
import { callNames, actionLabel, compactMessage, formatAction } from './format.js';
import { diffTexts } from './diff.js';
import { esc, fmtInt, groupedHbarChart, hbarChart, histogram, type Bin, type HBar } from './charts.js';
import { REPORT_CSS, REPORT_JS } from './report-assets.js';
import { tokenSectionHtml, type ReportTokens } from './report-tokens.js';
import { treeCountersOf, treeFunnelHtml, valueGapHistogram } from './report-tree.js';

/** The JSON `mine --stats` writes (only `counters` and `options.min_similarity_skip` are read). */
export interface StatsDoc {
  counters: Record<string, number>;
  options?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ReportOptions {
  /** the pairs file, as shown in the page */
  source: string;
  title?: string;
  stats?: StatsDoc | null;
  statsSource?: string | null;
  /** prompt messages embedded per pair (the last N); default 3 */
  context?: number;
  /** characters kept of each embedded prompt message; default 1500 */
  maxChars?: number;
  /** characters kept of each action (chosen / rejected); default 8000 */
  actionChars?: number;
  /** tool version shown in the footer */
  version?: string;
  /** `report --tokenizer`: token lengths of the rows (report-tokens.ts) */
  tokens?: ReportTokens | null;
}

export const REPORT_DEFAULTS = { context: 3, maxChars: 1500, actionChars: 8000 } as const;

/** A prompt message as embedded: [index, role, tool, text, hidden chars, call summaries]. */
type EmbeddedMessage = [number, string, string | null, string, number, string[]];

interface EmbeddedDetail {
  /** last prompt messages */
  p: EmbeddedMessage[];
  /** chosen / rejected action text (capped) */
  a: string;
  b: string;
  /** characters of the action text not embedded */
  ma: number;
  mb: number;
  /** line blocks, flattened: [eq 0|1, lines on a, lines on b, ...] */
  bl: number[];
  /** highlights, flattened: [line, start, end, ...] */
  ha: number[];
  hb: number[];
}

/** Cut `text` to at most `max` characters, at a line end when one is near; returns [kept, hidden chars]. */
export function capText(text: string, max: number): [string, number] {
  if (text.length <= max) return [text, 0];
  let cut = text.lastIndexOf('\n', max);
  if (cut < max * 0.6) cut = max;
  // never split a surrogate pair
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return [text.slice(0, cut), text.length - cut];
}

function flattenHighlights(m: Map<number, [number, number][]>): number[] {
  const out: number[] = [];
  for (const [line, ranges] of [...m.entries()].sort((x, y) => x[0] - y[0])) {
    for (const [s, e] of ranges) out.push(line, s, e);
  }
  return out;
}

/** Accumulates pairs (streamed in file order) and renders the page. */
export class ReportBuilder {
  private readonly opts: Required<Omit<ReportOptions, 'stats' | 'statsSource' | 'title' | 'version' | 'tokens'>> & ReportOptions;
  private readonly repos = new Map<string, number>();
  private readonly labels = new Map<string, number>();
  // table columns
  private readonly inst: string[] = [];
  private readonly repo: number[] = [];
  private readonly turn: number[] = [];
  private readonly msg: number[] = [];
  private readonly sim: number[] = [];
  /** `--pairing tree` rows: chosen_value - rejected_value. */
  private readonly gaps: number[] = [];
  private readonly ct: number[] = [];
  private readonly rt: number[] = [];
  private readonly cid: string[] = [];
  private readonly rid: string[] = [];
  private readonly plen: number[] = [];
  private readonly row: number[] = [];
  private readonly det: EmbeddedDetail[] = [];
  // aggregates
  private readonly toolsChosen = new Map<string, number>();
  private readonly toolsRejected = new Map<string, number>();
  private readonly repoCounts = new Map<string, number>();

  constructor(options: ReportOptions) {
    this.opts = { ...REPORT_DEFAULTS, ...options };
  }

  get count(): number {
    return this.inst.length;
  }

  private intern(map: Map<string, number>, key: string): number {
    let i = map.get(key);
    if (i === undefined) map.set(key, (i = map.size));
    return i;
  }

  add(r: ReadPair): void {
    const { pair } = r;
    const repoName = pair.repo ?? '(no repo)';
    this.inst.push(pair.instance_id);
    this.repo.push(this.intern(this.repos, repoName));
    this.turn.push(pair.divergence_turn);
    this.msg.push(pair.divergence_msg_index);
    this.sim.push(Math.round(pair.action_similarity * 10000) / 10000);
    const tv = pair as typeof pair & { chosen_value?: number; rejected_value?: number };
    if (typeof tv.chosen_value === 'number' && typeof tv.rejected_value === 'number') this.gaps.push(tv.chosen_value - tv.rejected_value);
    this.ct.push(this.intern(this.labels, actionLabel(pair.chosen)));
    this.rt.push(this.intern(this.labels, actionLabel(pair.rejected)));
    this.cid.push(pair.chosen_trajectory_id);
    this.rid.push(pair.rejected_trajectory_id);
    this.plen.push(r.promptLength);
    this.row.push(r.index);
    this.repoCounts.set(repoName, (this.repoCounts.get(repoName) ?? 0) + 1);
    for (const [msg, into] of [
      [pair.chosen, this.toolsChosen],
      [pair.rejected, this.toolsRejected],
    ] as const) {
      const names = callNames(msg);
      for (const n of names.length ? names : ['(text)']) into.set(n, (into.get(n) ?? 0) + 1);
    }

    // embedded detail
    const tail = pair.prompt.slice(Math.max(0, pair.prompt.length - this.opts.context));
    const first = r.promptLength - tail.length;
    const p: EmbeddedMessage[] = tail.map((m, k) => {
      // Only the head of a long message can be embedded: cut before sanitising the rest.
      const raw = m.content ?? '';
      const head = raw.length > 2 * this.opts.maxChars ? raw.slice(0, 2 * this.opts.maxChars) : raw;
      const c = compactMessage({ ...m, content: head });
      const [text, more] = capText(c.lines.join('\n'), this.opts.maxChars);
      return [first + k, c.role, c.tool, text, more + (raw.length - head.length), c.calls];
    });
    const [a, ma] = capText(formatAction(pair.chosen), this.opts.actionChars);
    const [b, mb] = capText(formatAction(pair.rejected), this.opts.actionChars);
    const d = diffTexts(a, b);
    const bl: number[] = [];
    for (const blk of d.blocks) bl.push(blk.eq ? 1 : 0, blk.n, blk.m);
    this.det.push({ p, a, b, ma, mb, bl, ha: flattenHighlights(d.hlA), hb: flattenHighlights(d.hlB) });
  }

  /** The whole page as one string. */
  build(): string {
    const o = this.opts;
    const title = o.title ?? `divergence-mine report: ${o.source}`;
    const n = this.count;
    const instances = new Set(this.inst).size;
    const turn0 = this.turn.filter((t) => t === 0).length;
    const sims = [...this.sim].sort((x, y) => x - y);
    const median = n ? (sims[Math.floor((n - 1) / 2)] as number) : 0;
    const data = {
      v: 1,
      source: o.source,
      n,
      repos: [...this.repos.keys()],
      labels: [...this.labels.keys()],
      cols: {
        inst: this.inst,
        repo: this.repo,
        turn: this.turn,
        msg: this.msg,
        sim: this.sim,
        ct: this.ct,
        rt: this.rt,
        cid: this.cid,
        rid: this.rid,
        plen: this.plen,
        row: this.row,
      },
      det: this.det,
      limits: { context: o.context, maxChars: o.maxChars, actionChars: o.actionChars },
    };
    const json = JSON.stringify(data).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

    const card = (label: string, value: string, id: string) =>
      `<div class="card" id="${id}"><div class="card-value">${esc(value)}</div><div class="card-label">${esc(label)}</div></div>`;
    const cards = [
      card('pairs', fmtInt(n), 'card-pairs'),
      card('instances', fmtInt(instances), 'card-instances'),
      card('repositories', fmtInt(this.repoCounts.size), 'card-repos'),
      card('pairs at turn 0', fmtInt(turn0), 'card-turn0'),
      card('median action similarity', n ? median.toFixed(3) : '–', 'card-median'),
    ].join('');

    const statsNote = o.statsSource ? `counters from <code>${esc(o.statsSource)}</code>` : '';
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="divergence-mine${o.version ? ' ' + esc(o.version) : ''}">
<title>${esc(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header class="top">
<h1>${esc(title)}</h1>
<p class="sub">pairs from <code>${esc(o.source)}</code>${statsNote ? ' · ' + statsNote : ''}</p>
<div class="cards">${cards}</div>
</header>
<main>
<section id="funnel"><h2>Funnel</h2>${this.funnelHtml()}</section>${o.tokens ? '\n' + tokenSectionHtml(o.tokens) : ''}
<section id="distributions"><h2>Where the runs diverge</h2>
<div class="grid2">
<figure><figcaption>divergence turn (assistant turns before the diverging action)</figcaption>${this.turnHistogram()}</figure>
<figure><figcaption>action similarity of chosen vs rejected</figcaption>${this.similarityHistogram()}</figure>
</div>${this.gaps.length > 0 ? `<figure><figcaption>value gap of the two branches (tree pairing)</figcaption>${valueGapHistogram(this.gaps)}</figure>` : ''}</section>
<section id="tools"><h2>Tool mix: chosen vs rejected</h2>${this.toolChart()}</section>
<section id="repos"><h2>Pairs per repository</h2>${this.repoChart()}</section>
<section id="pairs"><h2>Pairs</h2>
<div class="controls">
<input id="q" type="search" placeholder="search instance, repo, trajectory id, tool…" autocomplete="off" aria-label="search pairs">
<label>chosen <select id="f-ct" aria-label="chosen tool"><option value="">any</option></select></label>
<label>rejected <select id="f-rt" aria-label="rejected tool"><option value="">any</option></select></label>
<span id="count" class="count" aria-live="polite"></span>
</div>
<div class="table" role="table" aria-label="pairs">
<div class="thead" role="row">
<div class="th num" data-sort="row" role="columnheader">#</div>
<div class="th" data-sort="inst" role="columnheader">instance</div>
<div class="th" data-sort="repo" role="columnheader">repo</div>
<div class="th num" data-sort="turn" role="columnheader">turn</div>
<div class="th num" data-sort="msg" role="columnheader">msg</div>
<div class="th num" data-sort="sim" role="columnheader">similarity</div>
<div class="th" data-sort="ct" role="columnheader">chosen</div>
<div class="th" data-sort="rt" role="columnheader">rejected</div>
</div>
<div id="viewport" class="viewport" tabindex="0"><div id="spacer" class="spacer"></div><div id="rows" class="rows" role="rowgroup"></div></div>
</div>
<p class="hint">Click a row (or focus it and press Enter) to open its diff; ← → step through the filtered rows, Esc closes. Each pair embeds its last ${o.context} prompt messages (up to ${fmtInt(o.maxChars)} characters each) and up to ${fmtInt(o.actionChars)} characters per action; <code>divergence-mine show --index N --full</code> prints everything.</p>
</section>
</main>
<div id="detail" class="overlay" hidden>
<div class="panel" role="dialog" aria-modal="true" aria-labelledby="d-title">
<div class="panel-head">
<div class="d-titles"><h2 id="d-title"></h2><p id="d-meta" class="d-meta"></p><p id="d-ids" class="d-ids"></p></div>
<div class="d-buttons"><button id="d-prev" title="previous (←)">←</button><button id="d-next" title="next (→)">→</button><button id="d-close" title="close (Esc)">✕</button></div>
</div>
<div class="panel-body">
<h3 id="d-prompt-title"></h3><div id="d-prompt" class="prompt"></div>
<h3 id="d-action-title"></h3><div id="d-diff" class="diff"></div>
</div>
</div>
</div>
<footer>divergence-mine${o.version ? ' ' + esc(o.version) : ''} · self-contained report, no network needed</footer>
<script type="application/json" id="dm-data">${json}</script>
<script>${REPORT_JS}</script>
</body>
</html>
`;
  }

  private funnelHtml(): string {
    const s = this.opts.stats;
    if (!s) {
      return `<p class="note" id="funnel-missing">No stats file given. Run <code>divergence-mine mine … --stats stats.json</code> and pass it here with <code>--stats stats.json</code> to see the mining funnel.</p>`;
    }
    if (treeCountersOf(s)) return treeFunnelHtml(s, this.count);
    const c = (k: string) => (typeof s.counters[k] === 'number' ? (s.counters[k] as number) : 0);
    const traj = Math.max(c('trajectories_read'), 1);
    const inst = Math.max(c('instances'), 1);
    const walked = c('pairs_walked');
    const pairScale = Math.max(walked, c('pairs_emitted'), 1);
    const rows: HBar[] = [
      { label: 'trajectories read', value: c('trajectories_read'), kind: 'traj', scale: traj },
      { label: 'instances', value: c('instances'), kind: 'inst', scale: inst },
      { label: 'eligible instances', value: c('eligible_instances'), kind: 'inst', scale: inst, note: pct(c('eligible_instances'), c('instances')) },
      { label: 'trajectories extracted', value: c('trajectories_extracted'), kind: 'traj', scale: traj, note: pct(c('trajectories_extracted'), c('trajectories_read')) },
      { label: 'pairs walked', value: walked, kind: 'pair', scale: pairScale },
    ];
    let remaining = walked;
    for (const [k, label] of [
      ['no_divergence', 'no divergence'],
      ['environment_divergence', 'environment divergence'],
      ['near_duplicate', 'near duplicate'],
      ['exact_duplicate', 'exact duplicate'],
      ['capped', 'capped'],
    ] as const) {
      const v = c(k);
      remaining -= v;
      rows.push({ label: `− ${label}`, value: v, start: Math.max(0, remaining), kind: 'drop', scale: pairScale, note: `−${fmtInt(v)}`, title: `${label}: ${fmtInt(v)} pairs skipped` });
    }
    rows.push({ label: 'pairs emitted', value: c('pairs_emitted'), kind: 'emit', scale: pairScale, note: pct(c('pairs_emitted'), walked) });
    const outcomes = c('no_divergence') + c('environment_divergence') + c('near_duplicate') + c('exact_duplicate') + c('capped') + c('pairs_emitted');
    const identity =
      outcomes === walked
        ? `<p class="ok" id="identity">pairs walked = no divergence + environment + near duplicate + exact duplicate + capped + emitted (${fmtInt(walked)}) ✓</p>`
        : `<p class="warn" id="identity">counter identity does not hold: pairs walked ${fmtInt(walked)} ≠ outcomes ${fmtInt(outcomes)}</p>`;
    const mismatch =
      c('pairs_emitted') !== this.count
        ? `<p class="warn" id="emitted-mismatch">The stats say ${fmtInt(c('pairs_emitted'))} pairs were emitted, but the pairs file has ${fmtInt(this.count)} rows: are the two from the same run?</p>`
        : '';
    const side = ['duplicate_trajectory_ids', 'unlabelled', 'bad_rows', 'malformed_arguments', 'unknown_roles', 'divergence_turn_0']
      .map((k) => `<tr><td>${esc(k.replace(/_/g, ' '))}</td><td class="num">${fmtInt(c(k))}</td></tr>`)
      .join('');
    return `<div class="funnel-wrap">${hbarChart(rows, { id: 'funnel-chart', ariaLabel: 'mining funnel', labelWidth: 190 })}
<table class="side-counters"><caption>also counted</caption>${side}</table></div>${identity}${mismatch}`;
  }

  private turnHistogram(): string {
    const max = this.turn.length ? Math.max(...this.turn) : 0;
    const width = Math.max(1, Math.ceil((max + 1) / 40));
    const bins: Bin[] = [];
    for (let x = 0; x <= max; x += width) bins.push({ x0: x, x1: x + width, count: 0, label: width === 1 ? String(x) : `${x}–${x + width - 1}` });
    if (bins.length === 0) bins.push({ x0: 0, x1: 1, count: 0, label: '0' });
    for (const t of this.turn) (bins[Math.floor(t / width)] as Bin).count++;
    return histogram(bins, { id: 'hist-turn', ariaLabel: 'histogram of divergence turn', xTitle: 'divergence turn', kind: 'turn' });
  }

  private similarityHistogram(): string {
    const bins: Bin[] = [];
    for (let i = 0; i < 20; i++) bins.push({ x0: i / 20, x1: (i + 1) / 20, count: 0, label: (i / 20).toFixed(2) });
    for (const s of this.sim) (bins[Math.min(19, Math.max(0, Math.floor(s * 20)))] as Bin).count++;
    const skip = this.opts.stats?.options?.min_similarity_skip;
    const at = typeof skip === 'number' ? skip : 0.95;
    return histogram(bins, {
      id: 'hist-sim',
      ariaLabel: 'histogram of action similarity',
      xTitle: 'action similarity',
      kind: 'sim',
      marker: { at, label: `near-duplicate cut ${at}` },
    });
  }

  private toolChart(): string {
    const total = new Map<string, number>();
    for (const m of [this.toolsChosen, this.toolsRejected]) for (const [k, v] of m) total.set(k, (total.get(k) ?? 0) + v);
    const sorted = [...total.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([k]) => k);
    const top = sorted.slice(0, 12);
    const rest = sorted.slice(12);
    const labels = rest.length ? [...top, `${rest.length} other tools`] : top;
    const values = (m: Map<string, number>) => [...top.map((k) => m.get(k) ?? 0), ...(rest.length ? [rest.reduce((s, k) => s + (m.get(k) ?? 0), 0)] : [])];
    if (labels.length === 0) return '<p class="note">No pairs.</p>';
    return groupedHbarChart(
      labels,
      [
        { name: 'chosen', kind: 'chosen', values: values(this.toolsChosen) },
        { name: 'rejected', kind: 'rejected', values: values(this.toolsRejected) },
      ],
      { id: 'tools-chart', ariaLabel: 'tool calls of chosen vs rejected actions', width: 900 },
    ) + '<p class="note">Share of tool calls on each side; “(text)” is an action with no tool call.</p>';
  }

  private repoChart(): string {
    const sorted = [...this.repoCounts.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
    if (sorted.length === 0) return '<p class="note">No pairs.</p>';
    const top = sorted.slice(0, 25);
    const rows: HBar[] = top.map(([label, value]) => ({ label, value, kind: 'repo' }));
    const rest = sorted.slice(25);
    const more = rest.length
      ? `<p class="note">… and ${fmtInt(rest.length)} more repositories with ${fmtInt(rest.reduce((s, [, v]) => s + v, 0))} pairs.</p>`
      : '';
    return hbarChart(rows, { id: 'repos-chart', ariaLabel: 'pairs per repository', labelWidth: 260, width: 900 }) + more;
  }
}

function pct(part: number, whole: number): string {
  if (!whole) return fmtInt(part);
  return `${fmtInt(part)} (${((100 * part) / whole).toFixed(1)}%)`;
}
