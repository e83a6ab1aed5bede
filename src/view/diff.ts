// The two-level diff the viewers use for a pair's actions: lines first (to align the two sides),
// then tokens inside each changed block (to highlight what differs). The edit scripts come from
// jsdiff (`diff`, Myers O(ND)); what is ours is the trimming, the give-up limit and the highlighting.
import { diffArrays } from 'diff';

export type EditOp = 'eq' | 'del' | 'ins';

/** One run of the edit script: a[a0..a1) and b[b0..b1). `eq` runs have equal lengths; `del` has b0 == b1; `ins` has a0 == a1. */
export interface Edit {
  op: EditOp;
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** Past this many edits, a diff gives up and reports the (prefix/suffix-trimmed) middle as replaced. */
export const DEFAULT_MAX_EDITS = 1500;
/** The same limit for word-level diffs inside a changed block (beyond it, the block is simply all changed). */
export const DEFAULT_MAX_TOKEN_EDITS = 600;

function push(out: Edit[], op: EditOp, a0: number, a1: number, b0: number, b1: number): void {
  if (a0 === a1 && b0 === b1) return;
  const last = out[out.length - 1];
  if (last && last.op === op && last.a1 === a0 && last.b1 === b0) {
    last.a1 = a1;
    last.b1 = b1;
    return;
  }
  out.push({ op, a0, a1, b0, b1 });
}

/**
 * Shortest edit script from `a` to `b` (Myers 1986, through jsdiff), with common prefix/suffix trimmed first.
 * When more than `maxEdits` insertions+deletions would be needed, the middle is reported as one
 * deletion followed by one insertion (still correct, just not minimal).
 * Runs come out in order; a replacement is a `del` followed by an `ins`.
 */
export function diffSequences<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  maxEdits: number = DEFAULT_MAX_EDITS,
  equal: (x: T, y: T) => boolean = (x, y) => x === y,
): Edit[] {
  const n = a.length;
  const m = b.length;
  let pre = 0;
  while (pre < n && pre < m && equal(a[pre] as T, b[pre] as T)) pre++;
  let suf = 0;
  while (suf < n - pre && suf < m - pre && equal(a[n - 1 - suf] as T, b[m - 1 - suf] as T)) suf++;
  const out: Edit[] = [];
  push(out, 'eq', 0, pre, 0, pre);
  const aEnd = n - suf;
  const bEnd = m - suf;
  const N = aEnd - pre;
  const M = bEnd - pre;
  if (N === 0 || M === 0) {
    push(out, 'del', pre, aEnd, pre, pre);
    push(out, 'ins', aEnd, aEnd, pre, bEnd);
  } else {
    const middle = myers(a, b, pre, N, M, maxEdits, equal);
    if (middle === null) {
      push(out, 'del', pre, aEnd, pre, pre);
      push(out, 'ins', aEnd, aEnd, pre, bEnd);
    } else {
      for (const e of middle) push(out, e.op, e.a0, e.a1, e.b0, e.b1);
    }
  }
  push(out, 'eq', aEnd, n, bEnd, m);
  return out;
}

/** The middle a[off..off+N) vs b[off..off+M) by jsdiff's Myers; null when it needs more than maxD edits. */
function myers<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  off: number,
  N: number,
  M: number,
  maxD: number,
  equal: (x: T, y: T) => boolean,
): Edit[] | null {
  const sa = Array.from({ length: N }, (_, i) => a[off + i] as T);
  const sb = Array.from({ length: M }, (_, i) => b[off + i] as T);
  const changes = diffArrays(sa, sb, { comparator: equal, maxEditLength: maxD });
  if (!changes) return null;
  const edits: Edit[] = [];
  let x = off;
  let y = off;
  for (const c of changes) {
    const n = c.count;
    if (c.added) {
      push(edits, 'ins', x, x, y, y + n);
      y += n;
    } else if (c.removed) {
      push(edits, 'del', x, x + n, y, y);
      x += n;
    } else {
      push(edits, 'eq', x, x + n, y, y + n);
      x += n;
      y += n;
    }
  }
  // jsdiff may list an insertion before the deletion it pairs with: order each replacement as del-then-ins.
  return normaliseChanges(edits);
}

/** Within each maximal run of non-eq edits, put all deletions first, then all insertions. */
function normaliseChanges(edits: Edit[]): Edit[] {
  const out: Edit[] = [];
  let i = 0;
  while (i < edits.length) {
    const e = edits[i] as Edit;
    if (e.op === 'eq') {
      push(out, 'eq', e.a0, e.a1, e.b0, e.b1);
      i++;
      continue;
    }
    let j = i;
    let a0 = e.a0;
    let a1 = e.a0;
    let b0 = e.b0;
    let b1 = e.b0;
    while (j < edits.length && (edits[j] as Edit).op !== 'eq') {
      const f = edits[j] as Edit;
      a0 = Math.min(a0, f.a0);
      a1 = Math.max(a1, f.a1);
      b0 = Math.min(b0, f.b0);
      b1 = Math.max(b1, f.b1);
      j++;
    }
    push(out, 'del', a0, a1, b0, b0);
    push(out, 'ins', a1, a1, b0, b1);
    i = j;
  }
  return out;
}

/**
 * Tokens for word-level highlighting: runs of letters/digits/underscore, runs of spaces/tabs,
 * single newlines, and every other character on its own.
 */
export function tokenize(s: string): string[] {
  return s.match(/[\p{L}\p{N}_]+|[ \t]+|\n|[^]/gu) ?? [];
}

/** A highlighted span [start, end) in a string, in UTF-16 offsets. */
export type Range = [number, number];

/**
 * Character ranges of `a` and `b` that differ, from a token diff with a semantic cleanup:
 * short equal runs squeezed between changes that are at least as long are folded into the
 * change, so unrelated texts do not come out as confetti (equalities across a line break stay).
 */
export function diffTokens(a: string, b: string, maxEdits: number = DEFAULT_MAX_TOKEN_EDITS): { a: Range[]; b: Range[] } {
  const ta = tokenize(a);
  const tb = tokenize(b);
  // Tokens as small integers: cheaper to compare, and a cheap lower bound on the edit count
  // (N + M - 2 * multiset overlap) lets unrelated texts skip the search altogether.
  const ids = new Map<string, number>();
  const ia = new Int32Array(ta.length);
  const ib = new Int32Array(tb.length);
  const countA: number[] = [];
  for (let i = 0; i < ta.length; i++) {
    const t = ta[i] as string;
    let id = ids.get(t);
    if (id === undefined) ids.set(t, (id = ids.size));
    ia[i] = id;
    countA[id] = (countA[id] ?? 0) + 1;
  }
  let overlap = 0;
  for (let i = 0; i < tb.length; i++) {
    const t = tb[i] as string;
    let id = ids.get(t);
    if (id === undefined) ids.set(t, (id = ids.size));
    ib[i] = id;
    const c = countA[id] ?? 0;
    if (c > 0) {
      overlap++;
      countA[id] = c - 1;
    }
  }
  const lowerBound = ta.length + tb.length - 2 * overlap;
  const edits = diffSequences(ia, ib, lowerBound > maxEdits ? 0 : maxEdits);
  // Cumulative char offsets per token.
  const offA = offsets(ta);
  const offB = offsets(tb);
  interface Seg {
    eq: boolean;
    a0: number; // char offsets
    a1: number;
    b0: number;
    b1: number;
  }
  let segs: Seg[] = [];
  for (const e of edits) {
    const s: Seg = {
      eq: e.op === 'eq',
      a0: offA[e.a0] as number,
      a1: offA[e.a1] as number,
      b0: offB[e.b0] as number,
      b1: offB[e.b1] as number,
    };
    const last = segs[segs.length - 1];
    if (last && !last.eq && !s.eq) {
      last.a1 = s.a1;
      last.b1 = s.b1;
    } else segs.push(s);
  }
  // Semantic cleanup (as in diff-match-patch): an equality no longer than the changes on both sides goes.
  let changed = true;
  while (changed) {
    changed = false;
    for (let i = 1; i + 1 < segs.length; i++) {
      const s = segs[i] as Seg;
      const before = segs[i - 1] as Seg;
      const after = segs[i + 1] as Seg;
      if (!s.eq || before.eq || after.eq) continue;
      // Equalities that span a line break keep the line structure readable: never fold them.
      if (a.slice(s.a0, s.a1).includes('\n')) continue;
      const len = s.a1 - s.a0;
      const lenBefore = Math.max(before.a1 - before.a0, before.b1 - before.b0);
      const lenAfter = Math.max(after.a1 - after.a0, after.b1 - after.b0);
      if (len <= lenBefore && len <= lenAfter) {
        before.a1 = after.a1;
        before.b1 = after.b1;
        segs.splice(i, 2);
        changed = true;
        i--;
      }
    }
    segs = segs.filter((s) => s.eq || s.a1 > s.a0 || s.b1 > s.b0);
  }
  const ra: Range[] = [];
  const rb: Range[] = [];
  for (const s of segs) {
    if (s.eq) continue;
    if (s.a1 > s.a0) ra.push([s.a0, s.a1]);
    if (s.b1 > s.b0) rb.push([s.b0, s.b1]);
  }
  return { a: ra, b: rb };
}

function offsets(tokens: readonly string[]): number[] {
  const out = new Array<number>(tokens.length + 1);
  let acc = 0;
  out[0] = 0;
  for (let i = 0; i < tokens.length; i++) {
    acc += (tokens[i] as string).length;
    out[i + 1] = acc;
  }
  return out;
}

/** A run of aligned lines: `eq` blocks have n == m lines on both sides; changed blocks pair lines by position. */
export interface LineBlock {
  eq: boolean;
  /** first line on side a / side b */
  a: number;
  b: number;
  /** line counts on side a / side b */
  n: number;
  m: number;
}

/** A two-level diff of two texts: aligned line blocks plus per-line highlighted ranges. */
export interface TextDiff {
  aLines: string[];
  bLines: string[];
  blocks: LineBlock[];
  /** highlighted ranges per line index (lines with no entry have none) */
  hlA: Map<number, Range[]>;
  hlB: Map<number, Range[]>;
}

/** Diff two texts: lines (Myers) to align, then tokens inside each changed block to highlight. */
export function diffTexts(a: string, b: string, maxEdits: number = DEFAULT_MAX_EDITS): TextDiff {
  const aLines = a.split('\n');
  const bLines = b.split('\n');
  const edits = diffSequences(aLines, bLines, maxEdits);
  const blocks: LineBlock[] = [];
  for (const e of edits) {
    const eq = e.op === 'eq';
    const last = blocks[blocks.length - 1];
    if (!eq && last && !last.eq) {
      last.n = e.a1 - last.a;
      last.m = e.b1 - last.b;
    } else {
      blocks.push({ eq, a: e.a0, b: e.b0, n: e.a1 - e.a0, m: e.b1 - e.b0 });
    }
  }
  const hlA = new Map<number, Range[]>();
  const hlB = new Map<number, Range[]>();
  for (const blk of blocks) {
    if (blk.eq) continue;
    const textA = aLines.slice(blk.a, blk.a + blk.n).join('\n');
    const textB = bLines.slice(blk.b, blk.b + blk.m).join('\n');
    const r = diffTokens(textA, textB);
    spreadRanges(r.a, aLines, blk.a, blk.n, hlA);
    spreadRanges(r.b, bLines, blk.b, blk.m, hlB);
  }
  return { aLines, bLines, blocks, hlA, hlB };
}

/** Split block-relative char ranges into per-line ranges (the joining newlines are dropped). */
function spreadRanges(ranges: Range[], lines: string[], first: number, count: number, into: Map<number, Range[]>): void {
  if (ranges.length === 0 || count === 0) return;
  let lineStart = 0;
  let ri = 0;
  for (let li = first; li < first + count; li++) {
    const line = lines[li] as string;
    const len = line.length;
    const lineEnd = lineStart + len;
    // Indentation is never highlighted (a changed line would otherwise light up from column 0).
    const lead = /^[ \t]*/.exec(line)?.[0].length ?? 0;
    if (lead === len) {
      // a blank or whitespace-only line: nothing visible to highlight
      lineStart = lineEnd + 1;
      continue;
    }
    const minStart = lead;
    const out: Range[] = [];
    // ranges are sorted; advance past those that ended before this line
    while (ri < ranges.length && (ranges[ri] as Range)[1] <= lineStart) ri++;
    for (let j = ri; j < ranges.length; j++) {
      const [s, e] = ranges[j] as Range;
      if (s > lineEnd) break;
      const cs = Math.max(Math.max(s, lineStart) - lineStart, minStart);
      const ce = Math.min(e, lineEnd) - lineStart;
      if (ce > cs) out.push([cs, ce]);
    }
    if (out.length) into.set(li, out);
    lineStart = lineEnd + 1; // the newline
  }
}
