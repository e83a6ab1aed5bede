// Shared data shapes. The rules that produce them live in one module each:
// contract/normalise.ts (messages), contract/sign.ts (comparison keys), contract/sample.ts (groups
// and ranks), contract/walk.ts (lockstep walk and filters), contract/counters.ts (the funnel),
// io/*-writer.ts (output).

/** A message as it arrives from a reader (parquet or JSONL), before normalisation. */
export interface RawMessage {
  role?: unknown;
  content?: unknown;
  name?: unknown;
  tool_call_id?: unknown;
  tool_calls?: unknown;
}

/** One tool call after normalisation (contract section 2). */
export interface ToolCall {
  id: string | null;
  type: string | null;
  function: { name: string | null; arguments: unknown };
  /** Internal: `arguments` did not parse and holds the raw string. Never emitted. */
  malformed?: true;
}

/**
 * A normalised message: exactly the fields the contract keeps for its role.
 * `tool_calls` stays structured here; writers turn it into a JSON string.
 */
export type Message =
  | { role: 'system' | 'user'; content: string | null }
  | { role: 'assistant'; content: string | null; tool_calls: ToolCall[] | null }
  | { role: 'tool'; content: string | null; name: string | null; tool_call_id: string | null }
  | { role: string; content: string | null };

/**
 * An emitted message (contract section 6): like Message but `tool_calls` is a JSON string or null.
 * JSONL carries only the role's fields; parquet carries all five (absent ones null).
 */
export interface EmittedMessage {
  role: string;
  content: string | null;
  tool_calls?: string | null;
  name?: string | null;
  tool_call_id?: string | null;
}

/** One output row in the contract's `published` shape. */
export interface PairRow {
  prompt: EmittedMessage[];
  chosen: EmittedMessage;
  rejected: EmittedMessage;
  instance_id: string;
  repo: string | null;
  chosen_trajectory_id: string;
  rejected_trajectory_id: string;
  divergence_turn: number;
  divergence_msg_index: number;
  action_similarity: number;
}
