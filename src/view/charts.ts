// Inline SVG charts for the HTML report, drawn at build time (no script needed to see them).
// Every bar is a <rect class="bar ..."> with a <title> tooltip; colours come from the page CSS.
import { formatCount } from '../count-text.js';

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

export function fmtInt(n: number): string {
  return formatCount(n);
}

function r1(x: number): string {
  return (Math.round(x * 10) / 10).toString();
}

function shorten(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max - 1) + '…';
}

/** One row of a horizontal bar chart. `start` shifts the bar right (waterfall). */
export interface HBar {
  label: string;
  value: number;
  /** the bar spans [start, start + value] on the row's scale; default 0 */
  start?: number;
  /** CSS class suffix: bar-<kind> */
  kind?: string;
  /** the scale this row is drawn on (rows sharing a max); default: max over all rows */
  scale?: number;
  /** text right of the bar; default the formatted value */
  note?: string;
  /** tooltip; default "label: value" */
  title?: string;
}

/** Horizontal bars, one per row, label on the left and value on the right. */
export function hbarChart(rows: HBar[], opts: { width?: number; labelWidth?: number; rowHeight?: number; id?: string; ariaLabel: string }): string {
  const width = opts.width ?? 720;
  const labelW = opts.labelWidth ?? 200;
  const rowH = opts.rowHeight ?? 24;
  const noteW = 110;
  const barW = width - labelW - noteW - 10;
  const globalMax = Math.max(1, ...rows.map((r) => (r.start ?? 0) + r.value));
  const height = rows.length * rowH + 8;
  const parts: string[] = [];
  parts.push(
    `<svg class="chart hbar" ${opts.id ? `id="${esc(opts.id)}" ` : ''}viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(opts.ariaLabel)}">`,
  );
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    const max = Math.max(1, r.scale ?? globalMax);
    const x0 = labelW + (barW * (r.start ?? 0)) / max;
    const w = Math.max(r.value > 0 ? 1.5 : 0, (barW * r.value) / max);
    const title = r.title ?? `${r.label}: ${fmtInt(r.value)}`;
    parts.push(`<g class="row"><title>${esc(title)}</title>`);
    parts.push(`<text class="label" x="${labelW - 8}" y="${r1(y + rowH / 2)}" text-anchor="end" dominant-baseline="middle">${esc(shorten(r.label, Math.floor(labelW / 7)))}</text>`);
    parts.push(`<rect class="track" x="${labelW}" y="${r1(y + 3)}" width="${r1(barW)}" height="${rowH - 6}"/>`);
    parts.push(`<rect class="bar bar-${esc(r.kind ?? 'main')}" x="${r1(x0)}" y="${r1(y + 3)}" width="${r1(w)}" height="${rowH - 6}"/>`);
    parts.push(`<text class="value" x="${labelW + barW + 8}" y="${r1(y + rowH / 2)}" dominant-baseline="middle">${esc(r.note ?? fmtInt(r.value))}</text>`);
    parts.push('</g>');
  });
  parts.push('</svg>');
  return parts.join('');
}

/** Two bars per label (e.g. chosen vs rejected), values as shares of each series' total. */
export function groupedHbarChart(
  labels: string[],
  series: { name: string; kind: string; values: number[] }[],
  opts: { width?: number; labelWidth?: number; ariaLabel: string; id?: string },
): string {
  const width = opts.width ?? 720;
  const labelW = opts.labelWidth ?? 200;
  const barH = 12;
  const groupH = series.length * barH + 10;
  const noteW = 130;
  const barW = width - labelW - noteW - 10;
  const totals = series.map((s) => Math.max(1, s.values.reduce((a, b) => a + b, 0)));
  const maxShare = Math.max(0.0001, ...series.flatMap((s, si) => s.values.map((v) => v / (totals[si] as number))));
  const legendH = 22;
  const height = legendH + labels.length * groupH + 6;
  const parts: string[] = [];
  parts.push(
    `<svg class="chart grouped" ${opts.id ? `id="${esc(opts.id)}" ` : ''}viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(opts.ariaLabel)}">`,
  );
  series.forEach((s, si) => {
    const x = labelW + si * 130;
    parts.push(`<rect class="bar bar-${esc(s.kind)}" x="${x}" y="5" width="12" height="12"/><text class="legend" x="${x + 18}" y="11" dominant-baseline="middle">${esc(s.name)}</text>`);
  });
  labels.forEach((label, li) => {
    const y0 = legendH + li * groupH;
    parts.push(`<text class="label" x="${labelW - 8}" y="${r1(y0 + groupH / 2 - 2)}" text-anchor="end" dominant-baseline="middle">${esc(shorten(label, Math.floor(labelW / 7)))}</text>`);
    series.forEach((s, si) => {
      const v = s.values[li] ?? 0;
      const share = v / (totals[si] as number);
      const y = y0 + si * barH;
      const w = Math.max(v > 0 ? 1.5 : 0, (barW * share) / maxShare);
      const pct = `${(share * 100).toFixed(1)}%`;
      parts.push(`<g class="row"><title>${esc(`${s.name} · ${label}: ${fmtInt(v)} (${pct})`)}</title>`);
      parts.push(`<rect class="bar bar-${esc(s.kind)}" x="${labelW}" y="${y}" width="${r1(w)}" height="${barH - 2}"/>`);
      parts.push(`<text class="value small" x="${r1(labelW + w + 6)}" y="${r1(y + barH / 2 - 1)}" dominant-baseline="middle">${esc(`${pct} (${fmtInt(v)})`)}</text>`);
      parts.push('</g>');
    });
  });
  parts.push('</svg>');
  return parts.join('');
}

export interface Bin {
  x0: number;
  x1: number;
  count: number;
  /** x-axis label of the bin */
  label: string;
}

/** Vertical histogram with a y gridline at the max, x labels every few bins, and an optional marker line. */
export function histogram(
  bins: Bin[],
  opts: { width?: number; height?: number; ariaLabel: string; id?: string; xTitle: string; kind?: string; marker?: { at: number; label: string } },
): string {
  const width = opts.width ?? 720;
  const height = opts.height ?? 220;
  const left = 48;
  const right = 12;
  const top = 14;
  const bottom = 42;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const n = Math.max(1, bins.length);
  const bw = plotW / n;
  const every = Math.max(1, Math.ceil(n / 12));
  const parts: string[] = [];
  parts.push(
    `<svg class="chart hist" ${opts.id ? `id="${esc(opts.id)}" ` : ''}viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(opts.ariaLabel)}">`,
  );
  // axes and a gridline at the max
  parts.push(`<line class="axis" x1="${left}" y1="${top + plotH}" x2="${width - right}" y2="${top + plotH}"/>`);
  parts.push(`<line class="grid" x1="${left}" y1="${top}" x2="${width - right}" y2="${top}"/>`);
  parts.push(`<text class="tick" x="${left - 6}" y="${top}" text-anchor="end" dominant-baseline="middle">${fmtInt(max)}</text>`);
  parts.push(`<text class="tick" x="${left - 6}" y="${top + plotH}" text-anchor="end" dominant-baseline="middle">0</text>`);
  bins.forEach((b, i) => {
    const h = (plotH * b.count) / max;
    const x = left + i * bw;
    parts.push(`<g class="row"><title>${esc(`${opts.xTitle} ${b.label}: ${fmtInt(b.count)}`)}</title>`);
    parts.push(`<rect class="bar bar-${esc(opts.kind ?? 'main')}" x="${r1(x + 1)}" y="${r1(top + plotH - h)}" width="${r1(Math.max(1, bw - 2))}" height="${r1(h)}"/>`);
    parts.push('</g>');
    if (i % every === 0) {
      parts.push(`<text class="tick" x="${r1(x + bw / 2)}" y="${top + plotH + 14}" text-anchor="middle">${esc(b.label)}</text>`);
    }
  });
  if (opts.marker) {
    const first = bins[0];
    const last = bins[bins.length - 1];
    if (first && last && last.x1 > first.x0) {
      const x = left + (plotW * (opts.marker.at - first.x0)) / (last.x1 - first.x0);
      parts.push(`<line class="marker" x1="${r1(x)}" y1="${top}" x2="${r1(x)}" y2="${top + plotH}"/>`);
      parts.push(`<text class="marker-label" x="${r1(x - 4)}" y="${top + 10}" text-anchor="end">${esc(opts.marker.label)}</text>`);
    }
  }
  parts.push(`<text class="axis-title" x="${left + plotW / 2}" y="${height - 6}" text-anchor="middle">${esc(opts.xTitle)}</text>`);
  parts.push('</svg>');
  return parts.join('');
}
