// The preference rows of one mined pair, for `--continuation`, `--unit groups` and
// `--behavior`. The pair itself (every counter, the exact-duplicate key) is the contract's
// action-level row; this only decides what each emitted row carries.
//
// Field order: the contract's row (plus prompt_messages_dropped with --prompt-window), with
// chosen/rejected replaced in place by the continuation or the group prefix, then
// chosen_behavior_sequence, rejected_behavior_sequence, then (groups) sample_uid, prefix_groups,
// group_count, is_full_trajectory.
//
// Behaviour sequences are labelled with the UNWINDOWED prompt as history (`history`), so that
// --prompt-window never changes a label (the verify phase depends on earlier edits).
import type { EmittedMessage, PairRow } from '../types.js';
import { behaviorSequence, type BehaviorLabel, type LabelOptions } from './behavior.js';
import { groupRows, pairIdOf, type LossMessage, type MinedContinuation } from './continuation.js';

export interface RowPlan {
  /** `--continuation trajectory`. */
  continuation: boolean;
  /** `--unit groups` (needs `continuation`). */
  groups: boolean;
  /** Add the behaviour sequences. */
  behavior: boolean;
  /** `{ textActions: true }` for the text-actions source. */
  labels: LabelOptions;
}

export type PreferenceRow = Omit<PairRow, 'chosen' | 'rejected'> & {
  chosen: EmittedMessage | LossMessage[];
  rejected: EmittedMessage | LossMessage[];
  prompt_messages_dropped?: number;
  chosen_behavior_sequence?: BehaviorLabel[];
  rejected_behavior_sequence?: BehaviorLabel[];
  sample_uid?: string;
  prefix_groups?: number;
  group_count?: number;
  is_full_trajectory?: boolean;
};

/** The two behaviour fields of a row whose sides are `chosen` / `rejected` (empty without --behavior). */
export function behaviorFields(
  history: readonly EmittedMessage[],
  chosen: EmittedMessage | readonly EmittedMessage[],
  rejected: EmittedMessage | readonly EmittedMessage[],
  plan: Pick<RowPlan, 'behavior' | 'labels'>,
): Pick<PreferenceRow, 'chosen_behavior_sequence' | 'rejected_behavior_sequence'> {
  if (!plan.behavior) return {};
  return {
    chosen_behavior_sequence: behaviorSequence(history, chosen, plan.labels),
    rejected_behavior_sequence: behaviorSequence(history, rejected, plan.labels),
  };
}

/**
 * The rows of one pair: one row (pairs), or one per prefix length k (groups, continuation.ts).
 * `row` may be windowed; `history` is the pair's full prompt.
 */
export function preferenceRows(
  row: PairRow & { prompt_messages_dropped?: number },
  history: readonly EmittedMessage[],
  cont: MinedContinuation | undefined,
  plan: RowPlan,
): PreferenceRow[] {
  if (!plan.continuation) return [{ ...row, ...behaviorFields(history, row.chosen, row.rejected, plan) }];
  if (!cont) throw new Error('internal error: --continuation trajectory without the continuation of a pair');
  if (!plan.groups) return [{ ...row, chosen: cont.chosen, rejected: cont.rejected, ...behaviorFields(history, cont.chosen, cont.rejected, plan) }];
  return groupRows(pairIdOf(row), cont.chosen, cont.rejected, { complete: cont.complete }).map((g) => ({
    ...row,
    chosen: g.chosen,
    rejected: g.rejected,
    ...behaviorFields(history, g.chosen, g.rejected, plan),
    sample_uid: g.sample_uid,
    prefix_groups: g.prefix_groups,
    group_count: g.group_count,
    is_full_trajectory: g.is_full_trajectory,
  }));
}
