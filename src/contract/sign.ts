// Contract section 3: comparison keys for the lockstep walk and the assistant action signature.
import stableStringify from 'fast-json-stable-stringify';
import { norm } from './normalise.js';
import { numbersByValue } from './json-numbers.js';
import { flatMembersOfSource } from './json-source.js';
import type { Message, ToolCall } from '../types.js';

export const DEFAULT_REASONING_KEYS: readonly string[] = ['thought', 'reasoning', 'think'];

// Stryker disable next-line Regex: without ^ or $ more keys take the stableStringify path (same string).
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * The JSON text of every top-level value of a flat arguments object (no value an object or an array,
 * none a number JSON cannot write, no index-like key), in the object's own key order; null for any
 * other value. Inside sharingArgumentsJson each object's is written once, so that the signature and the
 * emitted tool call (emit.ts) of a message write each value, often a whole file's text, once between them.
 */
export function flatArgumentsJson(args: unknown): readonly (readonly [key: string, json: string])[] | null {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return null;
  const known = shared?.get(args);
  if (known !== undefined) return known;
  let out: [string, string][] | null = [];
  for (const k of Object.keys(args)) {
    const v = (args as Record<string, unknown>)[k];
    const t = typeof v;
    // Only what JSON.stringify writes the same alone and as a member: strings, finite numbers,
    // booleans, null (an undefined member would be left out, a BigInt throws).
    if (!(t === 'string' || t === 'boolean' || v === null || (t === 'number' && Number.isFinite(v))) || ARRAY_INDEX.test(k)) {
      out = null;
      break;
    }
    out.push([k, JSON.stringify(v)]);
  }
  shared?.set(args, out);
  return out;
}
let shared: WeakMap<object, readonly (readonly [string, string])[] | null> | null = null;

/**
 * Inside sharingArgumentsJson: `args` was parsed from `text` and has not changed since (encode.ts
 * normalises a trajectory and writes it at once). Its flatArgumentsJson is then sliced from the text
 * where the text writes each value as JSON.stringify would (json-source.ts), which is the same
 * answer, found at twice the speed; elsewhere nothing changes.
 */
export function parsedFrom(args: object, text: string): void {
  if (shared === null || shared.has(args)) return;
  const keys = Object.keys(args);
  // Index-like keys: flatArgumentsJson answers null for them (V8 lists them first).
  if (keys.some((k) => ARRAY_INDEX.test(k))) return;
  const members = flatMembersOfSource(text, keys);
  if (members !== null) shared.set(args, members);
}

/**
 * Runs `f` with flatArgumentsJson kept per arguments object: for code that reads the same, unchanging
 * messages twice (encode.ts: the signature, then the emitted form). Outside it nothing is kept, so a
 * caller that changes an object between two calls gets the JSON of what it holds now.
 */
export function sharingArgumentsJson<T>(f: () => T): T {
  const outer = shared;
  shared = new WeakMap();
  try {
    return f();
  } finally {
    shared = outer;
  }
}

/** `{"k":v,...}` of members already written as JSON. */
export function objectJson(members: readonly (readonly [string, string])[]): string {
  let s = '{';
  for (let i = 0; i < members.length; i++) s += `${i > 0 ? ',' : ''}${JSON.stringify(members[i]![0])}:${members[i]![1]}`;
  return `${s}}`;
}

/** canon(arguments): stable JSON with the top-level reasoning keys removed. */
export function canonArguments(args: unknown, reasoningKeys: ReadonlySet<string>): string {
  const flat = flatArgumentsJson(args);
  if (flat !== null) {
    // Sorted by key as Array.prototype.sort sorts strings (UTF-16 code units), as stableStringify does.
    const kept = flat.filter(([k]) => !reasoningKeys.has(k)).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return objectJson(kept);
  }
  // Numbers compare by value (contract v3, 11): a LosslessNumber signs as the number JSON.parse makes.
  args = numbersByValue(args);
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    const keys = Object.keys(args).filter((k) => !reasoningKeys.has(k)).sort();
    // Null prototype: every key is data (contract 9.9), so `kept.__proto__ = v` stores a key instead
    // of replacing the prototype (and dropping the key from the signature).
    const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    // Fast path, the usual tool call: flat values and no index-like key (V8 would list those first,
    // out of sorted order). Native JSON.stringify then writes exactly what stableStringify would.
    let flat = true;
    for (const k of keys) {
      const v = (args as Record<string, unknown>)[k];
      // Equivalent mutants only: one that sends more keys down the stableStringify path writes the same
      // string, and the ones that send a key the wrong way were killed (test/unit-sign.test.ts) before
      // this line was excluded. See docs/dev/mutation-testing.md.
      // Stryker disable next-line all
      if ((v !== null && typeof v === 'object') || ARRAY_INDEX.test(k) || (typeof v === 'number' && !Number.isFinite(v))) flat = false;
      kept[k] = v;
    }
    return flat ? JSON.stringify(kept) : stableStringify(kept);
  }
  // `undefined` cannot occur (arguments default to null); stableStringify(null) is "null".
  return stableStringify(args) ?? 'null';
}

export function callSignature(call: ToolCall, reasoningKeys: ReadonlySet<string>): string {
  const name = call.function.name ?? '';
  if (call.malformed) return `${name} ${norm(call.function.arguments as string)}`;
  return `${name} ${canonArguments(call.function.arguments, reasoningKeys)}`;
}

/**
 * Whether an assistant message is signed by its content: only a reply without tool calls is (every
 * scheme's narration is ignored when there are calls, sources/text-actions.ts included).
 */
export function signsContent(msg: { tool_calls?: ToolCall[] | null }): boolean {
  const calls = msg.tool_calls;
  return !(calls && calls.length > 0);
}

/** actionSignature(msg) of an assistant message. Narration is ignored when there are calls. */
export function actionSignature(
  msg: { content: string | null; tool_calls?: ToolCall[] | null },
  reasoningKeys: ReadonlySet<string>,
): string {
  if (!signsContent(msg)) return msg.tool_calls!.map((c) => callSignature(c, reasoningKeys)).join('\n');
  return `text ${norm(msg.content)}`;
}

/** The key two messages at the same index are compared on. */
export function comparisonKey(msg: Message, reasoningKeys: ReadonlySet<string>): string {
  return keyAndSignature(msg, reasoningKeys).key;
}

/** The comparison key and, for assistant messages, the action signature it is built from ('' otherwise). */
export function keyAndSignature(msg: Message, reasoningKeys: ReadonlySet<string>): { key: string; signature: string } {
  const signature = msg.role === 'assistant' ? actionSignature(msg as { content: string | null; tool_calls: ToolCall[] | null }, reasoningKeys) : '';
  return { key: keyPartsOf(msg.role, msg.content, (msg as { name?: string | null }).name ?? null, signature).join(''), signature };
}

/**
 * The comparison key's pieces from what a message's key depends on: its role, its content and (a tool
 * result) its name, or (an assistant message) its action signature, whichever scheme made it. Hashing
 * the pieces one by one avoids a copy of every (large) tool output. The one place the key's layout
 * lives: keyAndSignature and the walk's keys of spilled messages (spill.ts) use it.
 */
export function keyPartsOf(role: string, content: string | null, name: string | null, signature: string): string[] {
  switch (role) {
    case 'assistant':
      return ['assistant\n', signature];
    case 'tool':
      return ['tool\n', name ?? '', '\n', norm(content)];
    default:
      return [`${role}\n`, norm(content)];
  }
}
