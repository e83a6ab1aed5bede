// `--shape sft`, prompt/completion rows for rejection-sampling fine-tuning, from the
// resolved side of the mined pairs only.
//
// Row (TRL's conversational prompt-completion form, plus provenance):
//   prompt        = the pair's `prompt` (messages 0..i-1 of the RESOLVED trajectory, emitted)
//   completion    = [chosen] for `--continuation action` (the resolved action at the divergence),
//                   or the chosen continuation (with its `loss` flags) for `--continuation trajectory`
//   instance_id, repo, trajectory_id (= chosen_trajectory_id), divergence_turn, divergence_msg_index
// The failed side (`rejected`) is never used.
//
// Deduplication: one row per (instance_id, prompt, completion). Pairs of the same resolved
// trajectory against different failed ones often diverge at the same index, and would otherwise
// repeat the same example. The key is SHA-256 of fast-json-stable-stringify({instance_id, prompt,
// completion}) (the hash keeps memory flat on long prompts; a collision is negligible at 2^-256).
// The first row with a key is kept; rows arrive in the walk's deterministic order, so the output is
// deterministic too. Scope is the whole run (not per instance: the instance is part of the key).
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import { messageByValue } from '../contract/emit.js';
import type { EmittedMessage } from '../types.js';

export interface SftSource {
  prompt: EmittedMessage[];
  /** One message (`--continuation action`) or a continuation (`--continuation trajectory`). */
  chosen: EmittedMessage | EmittedMessage[];
  instance_id: string;
  repo: string | null;
  chosen_trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
}

export interface SftRow {
  prompt: EmittedMessage[];
  completion: EmittedMessage[];
  instance_id: string;
  repo: string | null;
  trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
}

/** The SFT row of a mined pair (resolved side only), in output field order. */
export function toSftRow(row: SftSource): SftRow {
  return {
    prompt: row.prompt,
    completion: Array.isArray(row.chosen) ? row.chosen : [row.chosen],
    instance_id: row.instance_id,
    repo: row.repo,
    trajectory_id: row.chosen_trajectory_id,
    divergence_turn: row.divergence_turn,
    divergence_msg_index: row.divergence_msg_index,
  };
}

/** The deduplication key of an SFT row. */
export function sftKey(row: Pick<SftRow, 'instance_id' | 'prompt' | 'completion'>): string {
  return createHash('sha256')
    // Numbers compare by value (contract v3, 11): tool_calls as contract v2 emitted them.
    .update(stableStringify({ instance_id: row.instance_id, prompt: row.prompt.map(messageByValue), completion: row.completion.map(messageByValue) }))
    .digest('hex');
}

/** Turns pairs into SFT rows, dropping repeats of (instance_id, prompt, completion). */
export class SftDeduper {
  private readonly seen = new Set<string>();
  /** Rows returned by add(). */
  emitted = 0;
  /** Rows dropped as repeats. */
  duplicates = 0;

  /** The SFT row of `pair`, or null when an identical one was already returned. */
  add(pair: SftSource): SftRow | null {
    const row = toSftRow(pair);
    const key = sftKey(row);
    if (this.seen.has(key)) {
      this.duplicates++;
      return null;
    }
    this.seen.add(key);
    this.emitted++;
    return row;
  }
}
