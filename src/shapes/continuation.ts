// Multi-turn continuations with loss flags, and `--unit groups`.
//
// TURNS. A turn is one assistant message and every non-assistant message after it up to the next
// assistant message (its tool results, and any harness text such as "Please continue" or a
// text-action observation sent as a `user` message). Non-assistant messages before the first
// assistant message, if any, belong to the first turn. Turn boundaries are therefore never between
// an assistant tool call and its results.
//
// `continuation(messages, i, maxMessages?)` (`--continuation trajectory`): messages i.. of one
// trajectory, emitted (only the role's fields, tool_calls a JSON string) plus `loss`:
//   - assistant: loss true (supervised);
//   - tool, user, system and any other role (observations and harness text): loss false.
// `--max-continuation-messages N` keeps the longest run of WHOLE turns from i whose message count is
// at most N; the first turn is always kept whole, even when it alone is longer than N, so a row
// never ends on an assistant call without its results (and never starts without the action). A
// trajectory that itself ends on an assistant call with no result (the upstream `finish` turn) keeps
// it: that is the end of the trajectory, not a cut.
//
// `groupRows(pairId, chosen, rejected)` (`--unit groups`):
//   - T_c, T_r = number of turns (assistant messages) of each continuation;
//     G = min(maxGroups = 6, T_c, T_r): the SAME count on both sides, each group non-empty.
//     With at least 4 turns on each side G is 4, 5 or 6; with fewer, G = min(T_c, T_r) (1-3: one
//     turn per group on the shorter side), unless `minGroups` asks to drop such pairs ([] returned).
//   - A side with T turns is cut into G contiguous groups of whole turns; group g (1-based) holds
//     turns floor((g-1)·T/G) .. floor(g·T/G)-1 (sizes differ by at most one, larger groups last).
//   - One row per k = 1..G: chosen / rejected = groups 1..k of each side (a prefix), loss true only
//     on group k's assistant messages (everything earlier is context), sample_uid = `${pairId}#k${k}`,
//     prefix_groups = k, group_count = G, is_full_trajectory = (k === G && complete), where
//     `complete` (default true) says the continuations were not cut by --max-continuation-messages.
//   So each assistant message of each side is supervised in exactly one of the pair's G rows.
import { emitMessage } from '../contract/emit.js';
import type { EmittedMessage, Message } from '../types.js';

export type LossMessage = EmittedMessage & { loss: boolean };

/** A message in either form: normalised (tool_calls a list) or emitted (tool_calls a JSON string). */
export type AnyMessage = Message | EmittedMessage;

function emitted(m: AnyMessage): EmittedMessage {
  if (m.role === 'assistant' && Array.isArray((m as { tool_calls?: unknown }).tool_calls)) return emitMessage(m as Message);
  if (m.role === 'assistant') {
    const tc = (m as { tool_calls?: unknown }).tool_calls;
    return { role: m.role, content: m.content, tool_calls: typeof tc === 'string' ? tc : null };
  }
  if (m.role === 'tool') {
    const t = m as { name?: string | null; tool_call_id?: string | null };
    return { role: m.role, content: m.content, name: t.name ?? null, tool_call_id: t.tool_call_id ?? null };
  }
  return { role: m.role, content: m.content };
}

/** The emitted message with its loss flag (assistant true, everything else false). */
export function withLoss(m: AnyMessage, loss = m.role === 'assistant'): LossMessage {
  return { ...emitted(m), loss };
}

/** [start, end) message ranges of the turns of `messages` (see the module header). */
export function turnSpans(messages: readonly { role: string }[]): [number, number][] {
  const starts: number[] = [];
  messages.forEach((m, j) => {
    if (m.role === 'assistant') starts.push(j);
  });
  if (starts.length === 0) return [];
  starts[0] = 0;
  return starts.map((s, k) => [s, k + 1 < starts.length ? starts[k + 1]! : messages.length]);
}

/** Messages i.. of a trajectory with loss flags, trimmed to whole turns by `maxMessages`. */
export function continuation(messages: readonly AnyMessage[], i: number, maxMessages?: number): LossMessage[] {
  if (!Number.isInteger(i) || i < 0 || i >= messages.length) throw new RangeError(`continuation start ${i} is outside 0..${messages.length - 1}`);
  if (maxMessages !== undefined && (!Number.isInteger(maxMessages) || maxMessages < 1)) {
    throw new RangeError(`maxMessages must be a whole number of at least 1, got ${maxMessages}`);
  }
  const rest = messages.slice(i);
  let end = rest.length;
  if (maxMessages !== undefined && rest.length > maxMessages) {
    const spans = turnSpans(rest);
    end = spans[0]?.[1] ?? rest.length;
    for (const [, e] of spans) {
      if (e > maxMessages) break;
      end = e;
    }
  }
  return rest.slice(0, end).map((m) => withLoss(m));
}

export interface GroupRow {
  sample_uid: string;
  prefix_groups: number;
  group_count: number;
  is_full_trajectory: boolean;
  chosen: LossMessage[];
  rejected: LossMessage[];
}

export interface GroupOptions {
  /** Upper bound on the group count (default 6). */
  maxGroups?: number;
  /** Pairs whose group count would be below this give no rows (default 1: keep every pair). */
  minGroups?: number;
  /** The continuations reach the end of both trajectories (no --max-continuation-messages cut). */
  complete?: boolean;
}

/** Message ranges of G contiguous groups of whole turns. */
export function groupBounds(spans: readonly [number, number][], groups: number): [number, number][] {
  const t = spans.length;
  const out: [number, number][] = [];
  for (let g = 0; g < groups; g++) {
    const first = Math.floor((g * t) / groups);
    const last = Math.floor(((g + 1) * t) / groups) - 1;
    out.push([spans[first]![0], spans[last]![1]]);
  }
  return out;
}

/** The group count both sides are cut into (see the module header). */
export function groupCount(chosenTurns: number, rejectedTurns: number, maxGroups = 6): number {
  return Math.max(0, Math.min(maxGroups, chosenTurns, rejectedTurns));
}

/** `--unit groups`: one row per prefix length k (see the module header). */
export function groupRows(pairId: string, chosen: readonly AnyMessage[], rejected: readonly AnyMessage[], opts: GroupOptions = {}): GroupRow[] {
  const maxGroups = opts.maxGroups ?? 6;
  if (!Number.isInteger(maxGroups) || maxGroups < 1) throw new RangeError(`maxGroups must be a whole number of at least 1, got ${maxGroups}`);
  const cs = turnSpans(chosen);
  const rs = turnSpans(rejected);
  const g = groupCount(cs.length, rs.length, maxGroups);
  if (g === 0 || g < (opts.minGroups ?? 1)) return [];
  const cb = groupBounds(cs, g);
  const rb = groupBounds(rs, g);
  const side = (msgs: readonly AnyMessage[], [start, end]: [number, number]) =>
    msgs.slice(0, end).map((m, j) => withLoss(m, m.role === 'assistant' && j >= start));
  const rows: GroupRow[] = [];
  for (let k = 1; k <= g; k++) {
    rows.push({
      sample_uid: `${pairId}#k${k}`,
      prefix_groups: k,
      group_count: g,
      is_full_trajectory: k === g && opts.complete !== false,
      chosen: side(chosen, cb[k - 1]!),
      rejected: side(rejected, rb[k - 1]!),
    });
  }
  return rows;
}

/** A pair id for sample_uid: the two trajectory ids (a (resolved, failed) pair is walked once per run). */
export function pairIdOf(row: { chosen_trajectory_id: string; rejected_trajectory_id: string }): string {
  return `${row.chosen_trajectory_id}~${row.rejected_trajectory_id}`;
}

/** `--continuation trajectory`: both sides from the divergence on, with loss flags. */
export interface MinedContinuation {
  chosen: LossMessage[];
  rejected: LossMessage[];
  /** Both sides reach the end of their trajectories (not cut by maxContinuationMessages). */
  complete: boolean;
}
