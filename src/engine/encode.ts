// Worker-side core of the second pass: normalise one trajectory and spill its emitted messages with
// their action signatures (see spill.ts). Pure apart from the spill writer it is given.
//
// No comparison key is hashed here: the walk hashes a message's key from its spill record when it
// first compares that message (spill-walk.ts). About 30% of the messages of the trajectories a
// real file extracts are ever compared (the rest lie past every divergence of their pairs).
//
// A content our reader handed over as its UTF-8 (parquet/utf8-bytes.ts) reaches the spill as those
// bytes: normalisation and the emitted form carry contents as they are, so decoding and encoding it
// again would only cost time (holdBytes below).
import { emitMessage } from '../contract/emit.js';
import { holdsSourceNumbers } from '../contract/json-numbers.js';
import { BadValue, normaliseTrajectory, type NormaliseTally } from '../contract/normalise.js';
import { ROLE_CODES, type EncodedTrajectory } from './protocol.js';
import { actionSignature, parsedFrom, sharingArgumentsJson, signsContent } from '../contract/sign.js';
import { TEXT_ACTION_SCHEMES, textActionMessageSignature, type TextActionScheme } from '../sources/text-actions.js';
import type { SpillWriter } from './spill.js';
import { Utf8Bytes } from '../parquet/utf8-bytes.js';
import type { Message, RawMessage, ToolCall } from '../types.js';

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

/**
 * Roles whose content normalisation and the emitted form carry as it is (normalise.ts, emit.ts): a
 * content of theirs handed over as bytes goes to the spill as those bytes. An assistant's is decoded
 * only if its signature reads it (a reply without tool calls).
 */
const CARRIED = new Set(['system', 'user', 'tool', 'assistant']);
/** What such a content is while the message is normalised; its record gets the bytes instead. */
const HELD = '\u0000utf8 bytes';

/**
 * `value` with every message content that came as Utf8Bytes (the reader's, worker.ts) replaced: a
 * carried role's by HELD, its bytes kept at the message's index; any other role's by its text.
 * Messages are copied, never changed.
 */
function holdBytes(value: unknown): { value: unknown; held: (Utf8Bytes | undefined)[] | null } {
  if (!Array.isArray(value)) return { value, held: null };
  let out: unknown[] | null = null;
  let held: (Utf8Bytes | undefined)[] | null = null;
  for (let i = 0; i < value.length; i++) {
    const m = value[i] as RawMessage | null;
    if (m === null || typeof m !== 'object' || !(m.content instanceof Utf8Bytes)) continue;
    out ??= value.slice();
    if (typeof m.role === 'string' && CARRIED.has(m.role)) {
      (held ??= [])[i] = m.content;
      out[i] = { ...m, content: HELD };
    } else out[i] = { ...m, content: m.content.text() };
  }
  return { value: out ?? value, held };
}

/**
 * Tell the sharing scope the JSON text each call's arguments of this message were parsed from, a
 * moment ago by normaliseTrajectory (sign.ts parsedFrom): the signature and the emitted calls then
 * slice the values from it. `raw` is the message as given; a call list given as JSON text is skipped.
 */
function parsedArguments(raw: unknown, calls: readonly ToolCall[]): void {
  const list = (raw as RawMessage | null)?.tool_calls;
  if (!Array.isArray(list)) return;
  for (let j = 0; j < calls.length; j++) {
    const c = calls[j]!;
    const text = (list[j] as { function?: { arguments?: unknown } } | null)?.function?.arguments;
    const args = c.function.arguments;
    if (typeof text === 'string' && !c.malformed && args !== null && typeof args === 'object' && !Array.isArray(args)) parsedFrom(args, text);
  }
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
  const { value: asText, held } = holdBytes(value);
  try {
    messages = normaliseTrajectory(asText, local);
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
      const bytes = held?.[i];
      const calls = (m as { tool_calls?: ToolCall[] | null }).tool_calls;
      if (calls) parsedArguments((asText as unknown[])[i], calls);
      // A held assistant content is decoded only for a reply signed by it (sign.ts signsContent).
      const signature = sign(bytes && m.role === 'assistant' && signsContent({ tool_calls: calls }) ? { ...m, content: bytes.text() } : m);
      // Exact duplicates compare numbers by value (contract v3 §11): the record says when its text differs.
      const sourceNumbers = m.role === 'assistant' && !!calls && calls.some((c) => holdsSourceNumbers(c.function.arguments));
      const e = emitMessage(m);
      // Normalisation and emission carry a content as it is: HELD still there says so of this one.
      if (bytes && e.content !== HELD) throw new Error(`message ${i}: a content held as bytes was changed on its way to the spill`);
      return spill.appendMessage(code, e, signature, sourceNumbers, bytes);
    });
  }
  return { key, roles, offsets };
}
