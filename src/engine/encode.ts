// Worker-side core of the second pass: normalise one trajectory and spill its emitted messages with
// their action signatures (see spill.ts). Pure apart from the spill writer it is given.
//
// No comparison key is hashed here: the walk hashes a message's key from its spill record when it
// first compares that message (spill-walk.ts). About 30% of the messages of the trajectories a
// real file extracts are ever compared (the rest lie past every divergence of their pairs).
import { emitMessage } from '../contract/emit.js';
import { holdsSourceNumbers } from '../contract/json-numbers.js';
import { BadValue, normaliseTrajectory, type NormaliseTally } from '../contract/normalise.js';
import { ROLE_CODES, type EncodedTrajectory } from './protocol.js';
import { actionSignature, sharingArgumentsJson } from '../contract/sign.js';
import { TEXT_ACTION_SCHEMES, textActionMessageSignature, type TextActionScheme } from '../sources/text-actions.js';
import type { SpillWriter } from './spill.js';
import type { Message, ToolCall } from '../types.js';

/** The text-action schemes sign text-only assistant replies by their action text (sources/text-actions.ts). */
export type SignatureScheme = 'contract' | TextActionScheme;

export function roleCode(role: string): number {
  // A role literally named "other" shares the code of unknown roles; its record keeps the name.
  return Object.hasOwn(ROLE_CODES, role) ? ROLE_CODES[role as keyof typeof ROLE_CODES] : ROLE_CODES.other;
}

/** A trajectory whose value is unusable: no messages, `why` says what is wrong. */
export function badTrajectory(key: number, why: string): EncodedTrajectory {
  return { key, bad: why, roles: new Uint8Array(0), offsets: new Float64Array(0) };
}

export function encodeTrajectory(
  key: number,
  value: unknown,
  reasoningKeys: ReadonlySet<string>,
  tally: NormaliseTally,
  spill: SpillWriter,
  // Stryker disable next-line all: equivalent: any scheme but 'text-actions' is the contract's
  scheme: SignatureScheme = 'contract',
): EncodedTrajectory {
  const text = scheme === 'contract' ? null : TEXT_ACTION_SCHEMES[scheme];
  // The action signature of an assistant message (contract 3.2, or the text-action scheme's); '' otherwise.
  const sign = (m: Message): string => {
    if (m.role !== 'assistant') return '';
    const a = m as { content: string | null; tool_calls: ToolCall[] | null };
    return text === null ? actionSignature(a, reasoningKeys) : textActionMessageSignature(a, reasoningKeys, text);
  };
  let messages;
  const local: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  try {
    messages = normaliseTrajectory(value, local);
  } catch (e) {
    if (e instanceof BadValue) return badTrajectory(key, e.message);
    throw e;
  }
  tally.malformed_arguments += local.malformed_arguments;
  tally.unknown_roles += local.unknown_roles;
  const n = messages.length;
  const roles = new Uint8Array(n);
  const offsets = new Float64Array(n + 1);
  offsets[0] = spill.offset;
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    const code = roleCode(m.role);
    roles[i] = code;
    // The record's fields are exactly the emitted message's (emit.ts): the walk hashes them for the
    // comparison key and the exact-duplicate key, for the messages that take part in one (spill-walk.ts).
    // The signature and the emitted tool calls write each argument value once between them.
    offsets[i + 1] = sharingArgumentsJson(() => {
      const signature = sign(m);
      // Exact duplicates compare numbers by value (contract v3 §11): the record says when its text differs.
      const calls = (m as { tool_calls?: ToolCall[] | null }).tool_calls;
      const sourceNumbers = m.role === 'assistant' && !!calls && calls.some((c) => holdsSourceNumbers(c.function.arguments));
      return spill.appendMessage(code, emitMessage(m), signature, sourceNumbers);
    });
  }
  return { key, roles, offsets };
}
