// Terminal rendering of one pair for `divergence-mine show`: a header, the last prompt messages in
// compact form, then chosen and rejected side by side (stacked when narrow) with the differing parts
// highlighted. Pure: returns a string; colour (node:util styleText) only when asked for.
import { styleText } from 'node:util';
import type { PairRow } from '../types.js';
import { diffTexts, type Range, type TextDiff } from './diff.js';
import { compactMessage, formatAction } from './format.js';
import { neutralise } from '../io/terminal-text.js';

export type Layout = 'auto' | 'side' | 'stacked';

export interface ShowOptions {
  /** terminal columns */
  width: number;
  /** ANSI colour */
  color: boolean;
  /** prompt messages shown (the last N) */
  context: number;
  /** body lines shown per prompt message */
  lines: number;
  layout: Layout;
  /** no folding or truncation */
  full: boolean;
}

export const DEFAULT_SHOW_OPTIONS: ShowOptions = {
  width: 100,
  color: false,
  context: 4,
  lines: 4,
  layout: 'auto',
  full: false,
};

/** Below this width, `auto` stacks chosen above rejected. */
export const SIDE_BY_SIDE_MIN_WIDTH = 80;
/** Unchanged lines kept on each side of a change when folding. */
const CONTEXT_LINES = 3;
/** A changed block longer than this many rows is cut to CHANGED_KEEP rows. */
const CHANGED_MAX = 40;
const CHANGED_KEEP = 30;
/** Visual rows one logical line may take before it is cut. */
const WRAP_MAX = 12;

type Side = 'a' | 'b';

// Formats of node:util styleText (Node 20.12+), which writes the SGR codes for us.
type Format = Parameters<typeof styleText>[0];
const SGR = {
  bold: 'bold',
  dim: 'dim',
  red: 'red',
  green: 'green',
  yellow: 'yellow',
  magenta: 'magenta',
  cyan: 'cyan',
  hlA: ['black', 'bgGreen'],
  hlB: ['black', 'bgRed'],
} as const satisfies Record<string, Format>;

class Painter {
  constructor(readonly color: boolean) {}
  paint(text: string, ...formats: Format[]): string {
    if (!this.color || formats.length === 0 || text === '') return text;
    // Whether to colour (a TTY, NO_COLOR, --color) is decided by the caller: never let styleText check stdout.
    return styleText(formats.flat() as Format, text, { validateStream: false });
  }
}

/** A character cell: one code point, its terminal width (0, 1 or 2) and whether it is highlighted. */
interface Cell {
  ch: string;
  w: number;
  hl: boolean;
}

// Terminal columns of a code point: combining marks and variation selectors take none; East Asian
// wide characters and emoji take two (the common wcwidth ranges; good enough to keep columns straight).
const ZERO_WIDTH: [number, number][] = [
  [0x300, 0x36f], [0x200b, 0x200f], [0x20d0, 0x20ff], [0xfe00, 0xfe0f], [0xe0100, 0xe01ef],
];
const WIDE: [number, number][] = [
  [0x1100, 0x115f], [0x231a, 0x231b], [0x2329, 0x232a], [0x23e9, 0x23ec], [0x23f0, 0x23f0], [0x23f3, 0x23f3],
  [0x25fd, 0x25fe], [0x2614, 0x2615], [0x2648, 0x2653], [0x267f, 0x267f], [0x2693, 0x2693], [0x26a1, 0x26a1],
  [0x26aa, 0x26ab], [0x26bd, 0x26be], [0x26c4, 0x26c5], [0x26ce, 0x26ce], [0x26d4, 0x26d4], [0x26ea, 0x26ea],
  [0x26f2, 0x26f3], [0x26f5, 0x26f5], [0x26fa, 0x26fa], [0x26fd, 0x26fd], [0x2705, 0x2705], [0x270a, 0x270b],
  [0x2728, 0x2728], [0x274c, 0x274c], [0x274e, 0x274e], [0x2753, 0x2755], [0x2757, 0x2757], [0x2795, 0x2797],
  [0x27b0, 0x27b0], [0x27bf, 0x27bf], [0x2b1b, 0x2b1c], [0x2b50, 0x2b50], [0x2b55, 0x2b55], [0x2e80, 0x303e],
  [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf], [0xac00, 0xd7a3], [0xf900, 0xfaff],
  [0xfe30, 0xfe4f], [0xff00, 0xff60], [0xffe0, 0xffe6], [0x1f300, 0x1f64f], [0x1f680, 0x1f6ff], [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff], [0x20000, 0x3fffd],
];

function inRanges(cp: number, ranges: [number, number][]): boolean {
  for (const [a, b] of ranges) if (cp >= a && cp <= b) return true;
  return false;
}

export function charWidth(ch: string): number {
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x300) return 1;
  if (inRanges(cp, ZERO_WIDTH)) return 0;
  return inRanges(cp, WIDE) ? 2 : 1;
}

/** Terminal columns of a string (ANSI colour codes take none). */
export function displayWidth(s: string): number {
  let w = 0;
  // eslint-disable-next-line no-control-regex
  for (const ch of s.replace(/\x1b\[[0-9;]*m/g, '')) w += charWidth(ch);
  return w;
}

function toCells(text: string, ranges: Range[] | undefined): Cell[] {
  const cells: Cell[] = [];
  let ri = 0;
  let i = 0;
  for (const ch of text) {
    while (ranges && ri < ranges.length && (ranges[ri] as Range)[1] <= i) ri++;
    const r = ranges?.[ri];
    cells.push({ ch, w: charWidth(ch), hl: !!r && r[0] <= i && i < r[1] });
    i += ch.length;
  }
  return cells;
}

/** Plain (no colour) mode marks highlighted runs with these, like `git diff --word-diff=plain`. */
const MARKS: Record<Side, [string, string]> = { a: ['{+', '+}'], b: ['[-', '-]'] };

/** Visual width of a line of cells (marker characters count in plain mode). */
function cellsWidth(cells: Cell[], markers: boolean): number {
  let w = 0;
  let prev = false;
  for (const c of cells) {
    w += c.w;
    if (markers && c.hl && !prev) w += 4;
    prev = c.hl;
  }
  return w;
}

/**
 * Greedy wrap to `width` visual columns, preferring to break after a space in the last 40% of a line.
 * Continuation rows have room for `width - hang` columns (the caller indents them by `hang`).
 */
function wrapCells(cells: Cell[], width: number, markers: boolean, hang = 0): Cell[][] {
  const out: Cell[][] = [];
  let line: Cell[] = [];
  let lineW = 0;
  for (const c of cells) {
    const prev = line[line.length - 1];
    const add = c.w + (markers && c.hl && !(prev && prev.hl) ? 4 : 0);
    const w = Math.max(out.length === 0 ? width : width - hang, 8);
    if (line.length > 0 && lineW + add > w) {
      let cut = -1;
      for (let j = line.length - 1; j >= Math.floor(line.length * 0.6); j--) {
        if ((line[j] as Cell).ch === ' ') {
          cut = j + 1;
          break;
        }
      }
      if (cut > 0 && cut < line.length) {
        out.push(line.slice(0, cut));
        line = line.slice(cut);
      } else {
        out.push(line);
        line = [];
      }
      lineW = cellsWidth(line, markers);
    }
    const p = line[line.length - 1];
    line.push(c);
    lineW += c.w + (markers && c.hl && !(p && p.hl) ? 4 : 0);
  }
  if (line.length > 0 || out.length === 0) out.push(line);
  return out;
}

function renderCells(cells: Cell[], side: Side, painter: Painter): string {
  let out = '';
  let i = 0;
  while (i < cells.length) {
    const hl = (cells[i] as Cell).hl;
    let j = i;
    let text = '';
    while (j < cells.length && (cells[j] as Cell).hl === hl) {
      text += (cells[j] as Cell).ch;
      j++;
    }
    if (!hl) out += text;
    else if (painter.color) out += painter.paint(text, side === 'a' ? SGR.hlA : SGR.hlB);
    else out += MARKS[side][0] + text + MARKS[side][1];
    i = j;
  }
  return out;
}

/** Visual rows of one logical line, each padded to exactly `width` columns when `pad`. */
function lineRows(text: string, ranges: Range[] | undefined, side: Side, width: number, painter: Painter, full: boolean, pad: boolean): string[] {
  const markers = !painter.color;
  // Continuation rows hang under the line's own indentation (up to a third of the column).
  const lead = /^ */.exec(text)?.[0].length ?? 0;
  const hang = Math.min(lead, Math.floor(width / 3));
  let wrapped = wrapCells(toCells(text, ranges), width, markers, hang);
  let note: string | null = null;
  if (!full && wrapped.length > WRAP_MAX) {
    const hidden = wrapped.slice(WRAP_MAX - 1).reduce((s, l) => s + l.length, 0);
    wrapped = wrapped.slice(0, WRAP_MAX - 1);
    note = `… line continues, ${hidden} more characters`;
  }
  const rows = wrapped.map((cells, i) => {
    const indent = i === 0 ? 0 : hang;
    const s = ' '.repeat(indent) + renderCells(cells, side, painter);
    return pad ? s + ' '.repeat(Math.max(0, width - indent - cellsWidth(cells, markers))) : s;
  });
  if (note !== null) {
    const t = truncate(note, width);
    rows.push(painter.paint(t, SGR.dim) + (pad ? ' '.repeat(Math.max(0, width - displayWidth(t))) : ''));
  }
  return rows;
}

function truncate(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

function rule(title: string, width: number, painter: Painter): string {
  const head = `── ${truncate(title, width - 7)} `;
  return painter.paint(head + '─'.repeat(Math.max(3, width - displayWidth(head))), SGR.dim);
}

/** A display row of the aligned diff: a line pair (either side may be absent), or a fold note. */
type DiffRow = { kind: 'line'; a: number | null; b: number | null } | { kind: 'fold'; a: string | null; b: string | null };

/** Rows of the aligned diff with long unchanged runs and very long changed blocks folded. */
export function diffRows(d: TextDiff, full: boolean): DiffRow[] {
  const rows: DiffRow[] = [];
  const last = d.blocks.length - 1;
  d.blocks.forEach((blk, bi) => {
    if (blk.eq) {
      const n = blk.n;
      const keepHead = bi === 0 ? 0 : CONTEXT_LINES;
      const keepTail = bi === last ? 0 : CONTEXT_LINES;
      if (full || n <= keepHead + keepTail + 1 || d.blocks.length === 1) {
        for (let i = 0; i < n; i++) rows.push({ kind: 'line', a: blk.a + i, b: blk.b + i });
        return;
      }
      for (let i = 0; i < keepHead; i++) rows.push({ kind: 'line', a: blk.a + i, b: blk.b + i });
      const hidden = n - keepHead - keepTail;
      const note = `⋯ ${hidden} unchanged line${hidden === 1 ? '' : 's'}`;
      rows.push({ kind: 'fold', a: note, b: note });
      for (let i = n - keepTail; i < n; i++) rows.push({ kind: 'line', a: blk.a + i, b: blk.b + i });
      return;
    }
    const count = Math.max(blk.n, blk.m);
    const shown = full || count <= CHANGED_MAX ? count : CHANGED_KEEP;
    for (let i = 0; i < shown; i++) {
      rows.push({ kind: 'line', a: i < blk.n ? blk.a + i : null, b: i < blk.m ? blk.b + i : null });
    }
    if (shown < count) {
      const ha = Math.max(0, blk.n - shown);
      const hb = Math.max(0, blk.m - shown);
      rows.push({
        kind: 'fold',
        a: ha ? `⋯ ${ha} more line${ha === 1 ? '' : 's'}` : null,
        b: hb ? `⋯ ${hb} more line${hb === 1 ? '' : 's'}` : null,
      });
    }
  });
  return rows;
}

function fmtSimilarity(x: number): string {
  return Number.isFinite(x) ? x.toFixed(3) : String(x);
}


/** Pack `parts` into lines of at most `width` columns, joined by `sep`; an overlong plain part is cut into pieces. */
function fillParts(parts: string[], sep: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const part of parts) {
    const pieces: string[] = [];
    if (displayWidth(part) > width && !part.includes('\x1b[')) {
      let piece = '';
      let w = 0;
      for (const ch of part) {
        const cw = charWidth(ch);
        if (w + cw > width) {
          pieces.push(piece);
          piece = '';
          w = 0;
        }
        piece += ch;
        w += cw;
      }
      if (piece) pieces.push(piece);
    } else pieces.push(part);
    for (const piece of pieces) {
      if (line === '') line = piece;
      else if (displayWidth(line) + sep.length + displayWidth(piece) <= width) line += sep + piece;
      else {
        lines.push(line);
        line = piece;
      }
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** A `--pairing tree` row's values (io/pairs.ts copies them onto the pair). */
function treeOf(pair: PairRow): Record<string, number> | null {
  const t = pair as PairRow & Partial<Record<string, number>>;
  return typeof t.chosen_value === 'number' ? (t as unknown as Record<string, number>) : null;
}

const share = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, ''));

/** "value 0.75 (3 of 4 attempts resolved)" for one side of a tree row; null for other rows. */
function treeSide(pair: PairRow, side: 'chosen' | 'rejected'): string | null {
  const t = treeOf(pair);
  if (!t) return null;
  const v = t[`${side}_value`]!;
  const n = t[`${side}_support`]!;
  return `value ${share(v)} (${Math.round(v * n)} of ${n} attempt${n === 1 ? '' : 's'} resolved)`;
}

function treeLine(pair: PairRow, width: number): string[] {
  const t = treeOf(pair);
  if (!t) return [];
  return fillParts([`tree pairing`, `value gap ${share(t.chosen_value! - t.rejected_value!)}`, `branch depth ${t.branch_depth}`], ' · ', width);
}

/** The header lines: ids, repo, turn, message index, similarity (wrapped to the width). */
function header(pair: PairRow, index: number, p: Painter, width: number): string[] {
  const n = pair.prompt.length;
  return [
    ...fillParts([p.paint(`pair #${index}`, SGR.bold), p.paint(pair.instance_id, SGR.bold), ...(pair.repo ? [`(${pair.repo})`] : [])], '  ', width),
    ...fillParts(
      [
        `divergence turn ${pair.divergence_turn}`,
        `message index ${pair.divergence_msg_index}`,
        `action similarity ${fmtSimilarity(pair.action_similarity)}`,
        `prompt ${n} message${n === 1 ? '' : 's'}`,
      ],
      ' · ',
      width,
    ),
    ...treeLine(pair, width),
    ...fillParts([p.paint('chosen  ', SGR.green, SGR.bold), pair.chosen_trajectory_id, treeSide(pair, 'chosen') ?? '(resolved)'], ' ', width),
    ...fillParts([p.paint('rejected', SGR.red, SGR.bold), pair.rejected_trajectory_id, treeSide(pair, 'rejected') ?? '(failed)'], ' ', width),
  ];
}

const ROLE_COLOUR: Record<string, Format> = { system: SGR.dim, user: SGR.magenta, assistant: SGR.cyan, tool: SGR.yellow };

function promptSection(pair: PairRow, opts: ShowOptions, p: Painter): string[] {
  const total = pair.prompt.length;
  const n = Math.min(Math.max(0, opts.context), total);
  const out: string[] = [];
  out.push(rule(n === total ? `prompt: ${total} message${total === 1 ? '' : 's'}` : `prompt: last ${n} of ${total} messages`, opts.width, p));
  const indent = '    ';
  const bodyWidth = Math.max(10, opts.width - indent.length);
  for (let i = total - n; i < total; i++) {
    const msg = pair.prompt[i];
    if (!msg) continue;
    const c = compactMessage(msg);
    const title = c.tool ? `${c.role} · ${c.tool}` : c.role;
    out.push(p.paint(`[${i}]`, SGR.dim) + ' ' + p.paint(title, ROLE_COLOUR[c.role] ?? SGR.bold));
    const lines = opts.full ? c.lines : c.lines.filter((l) => l.trim() !== '');
    const shown = opts.full ? lines : lines.slice(0, Math.max(0, opts.lines));
    for (const line of shown) {
      if (opts.full) {
        for (const row of lineRows(line, undefined, 'a', bodyWidth, p, true, false)) out.push(indent + row);
      } else out.push(indent + truncate(line, bodyWidth));
    }
    if (lines.length > shown.length) {
      const hidden = lines.length - shown.length;
      out.push(indent + p.paint(`⋯ ${hidden} more line${hidden === 1 ? '' : 's'}`, SGR.dim));
    }
    for (const call of c.calls) out.push(indent + p.paint(truncate(call, bodyWidth), SGR.cyan));
    if (lines.length === 0 && c.calls.length === 0) out.push(indent + p.paint('(empty)', SGR.dim));
  }
  return out;
}

function sideBySide(d: TextDiff, opts: ShowOptions, p: Painter): string[] {
  const colW = Math.floor((opts.width - 3) / 2);
  const sep = p.paint(' │ ', SGR.dim);
  const pad = (s: string, visible: number) => s + ' '.repeat(Math.max(0, colW - visible));
  const out: string[] = [];
  const ta = 'chosen (resolved)';
  const tb = 'rejected (failed)';
  out.push(pad(p.paint(ta, SGR.green, SGR.bold), ta.length) + sep + p.paint(tb, SGR.red, SGR.bold));
  out.push(p.paint('─'.repeat(colW) + '─┼─' + '─'.repeat(colW), SGR.dim));
  for (const row of diffRows(d, opts.full)) {
    if (row.kind === 'fold') {
      const a = row.a ? truncate(row.a, colW) : '';
      const b = row.b ? truncate(row.b, colW) : '';
      out.push((pad(p.paint(a, SGR.dim), displayWidth(a)) + sep + p.paint(b, SGR.dim)).replace(/\s+$/, ''));
      continue;
    }
    const left = row.a === null ? [] : lineRows(d.aLines[row.a] as string, d.hlA.get(row.a), 'a', colW, p, opts.full, true);
    const right = row.b === null ? [] : lineRows(d.bLines[row.b] as string, d.hlB.get(row.b), 'b', colW, p, opts.full, false);
    const h = Math.max(left.length, right.length, 1);
    for (let i = 0; i < h; i++) {
      const l = left[i] ?? ' '.repeat(colW);
      const r = right[i] ?? '';
      out.push((l + sep + r).replace(/\s+$/, ''));
    }
  }
  return out;
}

function stacked(d: TextDiff, opts: ShowOptions, p: Painter): string[] {
  const out: string[] = [];
  const rows = diffRows(d, opts.full);
  for (const side of ['a', 'b'] as const) {
    out.push(side === 'a' ? p.paint('chosen (resolved)', SGR.green, SGR.bold) : p.paint('rejected (failed)', SGR.red, SGR.bold));
    for (const row of rows) {
      const v = row[side];
      if (v === null) continue;
      if (row.kind === 'fold') {
        out.push(p.paint(truncate(v as string, opts.width), SGR.dim));
        continue;
      }
      const lines = side === 'a' ? d.aLines : d.bLines;
      const hl = side === 'a' ? d.hlA : d.hlB;
      for (const r of lineRows(lines[v as number] as string, hl.get(v as number), side, opts.width, p, opts.full, false)) {
        out.push(r.replace(/\s+$/, ''));
      }
    }
    if (side === 'a') out.push('');
  }
  return out;
}

/**
 * The pair with its top-level strings (ids, repo, and anything a hostile file puts where a number
 * belongs) neutralised for the terminal; messages are sanitised where they are shown (format.ts).
 */
function withSafeFields(pair: PairRow): PairRow {
  const out: Record<string, unknown> = { ...pair };
  for (const [k, v] of Object.entries(pair)) if (typeof v === 'string') out[k] = neutralise(v);
  return out as unknown as PairRow;
}

/** Render one pair. `index` is its 0-based row number in the file. */
export function renderPair(row: PairRow, index: number, options: Partial<ShowOptions> = {}): string {
  const pair = withSafeFields(row);
  const opts: ShowOptions = { ...DEFAULT_SHOW_OPTIONS, ...options };
  opts.width = Math.max(40, Math.floor(opts.width));
  const p = new Painter(opts.color);
  const out: string[] = [];
  out.push(...header(pair, index, p, opts.width));
  out.push('');
  if (opts.context > 0) {
    out.push(...promptSection(pair, opts, p));
    out.push('');
  }
  out.push(rule(`action at message ${pair.divergence_msg_index} (turn ${pair.divergence_turn})`, opts.width, p));
  const d = diffTexts(formatAction(pair.chosen), formatAction(pair.rejected));
  const side = opts.layout === 'side' || (opts.layout === 'auto' && opts.width >= SIDE_BY_SIDE_MIN_WIDTH);
  out.push(...(side ? sideBySide(d, opts, p) : stacked(d, opts, p)));
  // No trailing blanks: goldens and pagers stay clean.
  return out.join('\n').replace(/[ \t]+$/gm, '') + '\n';
}
