// Published-shape pair rows built from test/template/nebius-sample-head.json (CC-BY-4.0, © Nebius;
// see test/template/README.md) through the project's own normalise + emit code, for the
// training-output tests. The "rejected" side is the assistant message at the same index of another
// trajectory: structurally what `mine` emits, though not a real resolved/failed divergence.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { emitMessage, makeRow } from '../../src/contract/emit.js';
import { normaliseMessage } from '../../src/contract/normalise.js';
import type { PairRow, RawMessage } from '../../src/types.js';

export interface SampleRow {
  trajectory_id: string;
  instance_id: string;
  repo: string | null;
  resolved: number;
  tools: unknown;
  trajectory: RawMessage[];
}

export const SAMPLE_PATH = fileURLToPath(new URL('./nebius-sample-head.json', import.meta.url));
export const TEMPLATE_PATH = fileURLToPath(new URL('./qwen3-coder-style.jinja', import.meta.url));

export function sampleRows(): SampleRow[] {
  return JSON.parse(readFileSync(SAMPLE_PATH, 'utf8')) as SampleRow[];
}

/** Published rows (and the chosen trajectory's raw tools) at several assistant indices. */
export function samplePairs(indices: readonly number[] = [2, 4, 8, 14]): { row: PairRow; tools: unknown }[] {
  const rows = sampleRows();
  const tally = { malformed_arguments: 0, unknown_roles: 0 };
  const norm = rows.map((r) => r.trajectory.map((m) => emitMessage(normaliseMessage(m, tally))));
  const out: { row: PairRow; tools: unknown }[] = [];
  rows.forEach((r, k) => {
    const other = norm[(k + 1) % rows.length]!;
    for (const i of indices) {
      const msgs = norm[k]!;
      if (msgs[i]?.role !== 'assistant' || other[i]?.role !== 'assistant') continue;
      const turn = msgs.slice(0, i).filter((m) => m.role === 'assistant').length;
      out.push({
        row: makeRow(msgs.slice(0, i), msgs[i]!, other[i]!, {
          instance_id: r.instance_id,
          repo: r.repo,
          chosen_trajectory_id: r.trajectory_id,
          rejected_trajectory_id: rows[(k + 1) % rows.length]!.trajectory_id,
          divergence_turn: turn,
          divergence_msg_index: i,
          action_similarity: 0.5,
        }),
        tools: r.tools,
      });
    }
  });
  return out;
}
