// `--shape kto`: unpaired preference rows for TRL's KTOTrainer, from the divergence points.
//
// What TRL expects (huggingface/trl, trl/data_utils.py: `apply_chat_template` accepts the key set
// {"prompt", "completion", "label"}, the "unpaired preference" type; `unpair_preference_dataset`
// turns a pair into a `label: True` row of `chosen` and a `label: False` row of `rejected` with the
// same prompt): conversational `prompt` and `completion` lists of messages and a boolean `label`.
// Messages and `tools` are exactly the trl shape's (trl.ts), so the same chat template renders both.
//
// Rows (docs/tree-pairing.md "KTO rows"):
// - the contract's pairing: each kept pair gives `label: true` for chosen and `label: false` for
//   rejected (what `unpair_preference_dataset` would make of the trl row);
// - the tree pairing: each side of a kept pair is a valued branch; its row is labelled
//   `value > --kto-threshold`, and carries `value`, `support`, `branch_depth`.
// Repeats of (prompt, completion) are dropped: two pairs of the same resolved attempt diverging at
// the same message would otherwise give the same desirable row twice. The key is SHA-256 of stable
// JSON of {instance_id, prompt, completion}, over the whole run (the instance is in the key). Under
// the tree pairing a branch is keyed by its action (the child's comparison key) instead of the
// completion's bytes, so a branch that is the chosen side of one pair and the rejected side of
// another (whose representatives differ) still gives one row: the first.
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { PairRow } from '../types.js';
import { toTrlMessage, trlMessageByValue, type ArgumentsMode, type TrlMessage, type TrlTally } from './trl.js';

export interface KtoRow {
  prompt: TrlMessage[];
  completion: TrlMessage[];
  label: boolean;
  instance_id: string;
  repo: string | null;
  /** The attempt the completion comes from. */
  trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
  /** `--pairing tree` only: the branch's value (resolved / attempts), its attempts and the branch points above it. */
  value?: number;
  support?: number;
  branch_depth?: number;
  /** `--prompt-window` only. */
  prompt_messages_dropped?: number;
  tools: string | null;
}

/** The branch values of a tree pair (pairing/tree.ts TreeFields). */
export interface KtoTreeSides {
  chosen_value: number;
  rejected_value: number;
  chosen_support: number;
  rejected_support: number;
  branch_depth: number;
}

export interface KtoOptions {
  arguments: ArgumentsMode;
  toolsJson: string | null;
  /** A tree branch is desirable when its value is above this. */
  threshold: number;
  tally?: TrlTally;
}

/** The two rows of a kept pair, chosen side first, in output field order. */
export function ktoRows(row: PairRow & { prompt_messages_dropped?: number }, tree: KtoTreeSides | undefined, o: KtoOptions): [KtoRow, KtoRow] {
  const prompt = row.prompt.map((m) => toTrlMessage(m, o.arguments, o.tally));
  const side = (chosen: boolean): KtoRow => ({
    prompt,
    completion: [toTrlMessage(chosen ? row.chosen : row.rejected, o.arguments, o.tally)],
    label: tree ? (chosen ? tree.chosen_value : tree.rejected_value) > o.threshold : chosen,
    instance_id: row.instance_id,
    repo: row.repo,
    trajectory_id: chosen ? row.chosen_trajectory_id : row.rejected_trajectory_id,
    divergence_turn: row.divergence_turn,
    divergence_msg_index: row.divergence_msg_index,
    ...(tree
      ? { value: chosen ? tree.chosen_value : tree.rejected_value, support: chosen ? tree.chosen_support : tree.rejected_support, branch_depth: tree.branch_depth }
      : {}),
    ...(row.prompt_messages_dropped !== undefined ? { prompt_messages_dropped: row.prompt_messages_dropped } : {}),
    tools: o.toolsJson,
  });
  return [side(true), side(false)];
}

/** Drops repeats of (instance_id, prompt, completion); counts both. */
export class KtoDeduper {
  private readonly seen = new Set<string>();
  emitted = 0;
  duplicates = 0;
  desirable = 0;
  undesirable = 0;

  /** The row, or null when an identical (instance_id, prompt, completion) was already returned; `branch` stands for the completion (tree pairing). */
  add(row: KtoRow, branch?: string): KtoRow | null {
    // Numbers compare by value (contract v3, 11), as every exact-duplicate key does.
    const completion = branch === undefined ? row.completion.map(trlMessageByValue) : { branch };
    const key = createHash('sha256').update(stableStringify({ instance_id: row.instance_id, prompt: row.prompt.map(trlMessageByValue), completion })).digest('hex');
    if (this.seen.has(key)) {
      this.duplicates++;
      return null;
    }
    this.seen.add(key);
    this.emitted++;
    if (row.label) this.desirable++;
    else this.undesirable++;
    return row;
  }
}
