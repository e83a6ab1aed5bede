// `--max-length N`: keep the rows the trainer uses whole (row-tokens.ts: prompt + the longer
// completion <= N); with `--prompt-window auto`, first drop the oldest prompt messages until the
// row fits. What may be dropped: whole groups after the head. The head is the system message (when
// the prompt starts with one) and the first user message (the task); a group is a message that is
// not a tool result together with the tool results right after it (an assistant's calls stay with
// their results). Groups go oldest first; the fewest that make the row fit are dropped (binary
// search: dropping more messages never makes a render longer). A row that does not fit even with
// every group dropped is not written, and counted.
import { rowLength } from './lengths.js';
import type { RowTokenCounter, RowTokens, TokenRow } from './row-tokens.js';

/** Index ranges [start, end) of the droppable groups of `prompt`, oldest first. */
export function promptGroups(prompt: readonly { role?: unknown }[]): [number, number][] {
  const head = new Set<number>();
  if (prompt.length > 0 && prompt[0]!.role === 'system') head.add(0);
  const firstUser = prompt.findIndex((m) => m.role === 'user');
  if (firstUser >= 0) head.add(firstUser);
  const groups: [number, number][] = [];
  for (let i = 0; i < prompt.length; i++) {
    if (head.has(i)) continue;
    const last = groups[groups.length - 1];
    // A tool result joins the group before it (its call), unless a head message lies between.
    if (prompt[i]!.role === 'tool' && last && last[1] === i) last[1] = i + 1;
    else groups.push([i, i + 1]);
  }
  return groups;
}

/** The prompt without its `k` oldest groups. */
export function dropGroups<M>(prompt: readonly M[], groups: readonly [number, number][], k: number): M[] {
  if (k === 0) return [...prompt];
  const drop = new Set<number>();
  for (const [s, e] of groups.slice(0, k)) for (let i = s; i < e; i++) drop.add(i);
  return prompt.filter((_, i) => !drop.has(i));
}

export type FitResult<R> =
  | { fits: true; row: R; tokens: RowTokens; dropped: number; groupsDropped: number }
  | { fits: false; tokens: RowTokens; minimal: RowTokens };

/**
 * Fit `row` into `maxLength` tokens. `window`: drop prompt groups (`--prompt-window auto`); the
 * returned row then has the shorter prompt and `dropped` messages fewer. Without `window` a row
 * either fits as it is or not.
 */
export function fitRow<R extends TokenRow>(row: R, maxLength: number, window: boolean, counter: RowTokenCounter): FitResult<R> {
  const full = counter.count(row);
  if (rowLength(full) <= maxLength) return { fits: true, row, tokens: full, dropped: 0, groupsDropped: 0 };
  if (!window) return { fits: false, tokens: full, minimal: full };
  const groups = promptGroups(row.prompt);
  const at = (k: number): { row: R; tokens: RowTokens } => {
    const prompt = dropGroups(row.prompt, groups, k);
    const r = { ...row, prompt } as R;
    return { row: r, tokens: counter.count(r) };
  };
  const all = at(groups.length);
  if (rowLength(all.tokens) > maxLength) return { fits: false, tokens: full, minimal: all.tokens };
  // Smallest k in [1, groups.length] that fits.
  let lo = 1;
  let hi = groups.length;
  let best = all;
  let bestK = groups.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const r = at(mid);
    if (rowLength(r.tokens) <= maxLength) {
      hi = mid;
      best = r;
      bestK = mid;
    } else lo = mid + 1;
  }
  // `best` is the last fitting k tried, which is where hi ended: the smallest k that fits.
  return { fits: true, row: best.row, tokens: best.tokens, dropped: row.prompt.length - best.row.prompt.length, groupsDropped: bestK };
}
