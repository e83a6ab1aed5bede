// Contract section 6: the emitted form of messages and the output row.
import stableStringify from 'fast-json-stable-stringify';
import { flatArgumentsJson, objectJson } from './sign.js';
import { jsonTextByValue, stringifyKeepingNumbers } from './json-numbers.js';
import type { EmittedMessage, Message, PairRow, ToolCall } from '../types.js';

/** tool_calls as emitted: JSON string of [{id, type, function: {name, arguments}}], or null. */
export function emitToolCalls(calls: ToolCall[] | null | undefined): string | null {
  if (!calls || calls.length === 0) return null;
  // Written piece by piece where that is what JSON.stringify writes (string or null fields, flat
  // arguments: their values were already written for the signature, sign.ts flatArgumentsJson).
  let s = '[';
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    const flat = flatArgumentsJson(c.function.arguments);
    if (flat === null || !isTextOrNull(c.id) || !isTextOrNull(c.type) || !isTextOrNull(c.function.name)) return emitToolCallsAsValue(calls);
    s += `${i > 0 ? ',' : ''}{"id":${JSON.stringify(c.id)},"type":${JSON.stringify(c.type)},"function":{"name":${JSON.stringify(c.function.name)},"arguments":${objectJson(flat)}}}`;
  }
  return `${s}]`;
}

const isTextOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

/** The emitted tool_calls by definition: JSON of the calls' emitted fields, numbers in their source text (contract v3). */
export function emitToolCallsAsValue(calls: ToolCall[]): string {
  return stringifyKeepingNumbers(calls.map((c) => ({ id: c.id, type: c.type, function: { name: c.function.name, arguments: c.function.arguments } })))!;
}

/** Only the role's fields, in a fixed order (role first) so output bytes are stable. */
export function emitMessage(m: Message): EmittedMessage {
  switch (m.role) {
    case 'assistant':
      return { role: m.role, content: m.content, tool_calls: emitToolCalls((m as { tool_calls: ToolCall[] | null }).tool_calls) };
    case 'tool': {
      const t = m as { name: string | null; tool_call_id: string | null };
      return { role: m.role, content: m.content, name: t.name, tool_call_id: t.tool_call_id };
    }
    default:
      return { role: m.role, content: m.content };
  }
}

/** Everything of a row but its messages. */
export type RowMeta = Omit<PairRow, 'prompt' | 'chosen' | 'rejected'>;

/** The row in output field order. */
export function makeRow(prompt: EmittedMessage[], chosen: EmittedMessage, rejected: EmittedMessage, meta: RowMeta): PairRow {
  return {
    prompt,
    chosen,
    rejected,
    instance_id: meta.instance_id,
    repo: meta.repo,
    chosen_trajectory_id: meta.chosen_trajectory_id,
    rejected_trajectory_id: meta.rejected_trajectory_id,
    divergence_turn: meta.divergence_turn,
    divergence_msg_index: meta.divergence_msg_index,
    action_similarity: meta.action_similarity,
  };
}

/** Exact-duplicate key (contract 5.4): stable JSON of {prompt, chosen, rejected}, numbers by value (contract v3). */
export function dedupeKey(row: Pick<PairRow, 'prompt' | 'chosen' | 'rejected'>): string {
  return stableStringify({ prompt: row.prompt.map(messageByValue), chosen: messageByValue(row.chosen), rejected: messageByValue(row.rejected) });
}

/** The emitted message as contract v2 emitted it: tool_calls with numbers by value. */
export function messageByValue(m: EmittedMessage): EmittedMessage {
  const tc = m.tool_calls;
  if (typeof tc !== 'string') return m;
  const v = jsonTextByValue(tc);
  return v === tc ? m : { ...m, tool_calls: v };
}
