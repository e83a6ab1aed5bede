// Worker-side core of the second pass: normalise one trajectory, hash its comparison keys and spill
// its emitted messages (see spill.ts). Pure apart from the spill writer it is given.
import { createHash, hash } from 'node:crypto';
import { emitMessage } from '../contract/emit.js';
import { BadValue, normaliseTrajectory, type NormaliseTally } from '../contract/normalise.js';
import { ROLE_CODES, type EncodedTrajectory } from './protocol.js';
import { keyParts } from '../contract/sign.js';
import { TEXT_ACTION_SCHEMES, textActionsKeyParts, type TextActionScheme } from '../sources/text-actions.js';
import type { SpillWriter } from './spill.js';

export const HASH_BYTES = 16;
/** UTF-16 units hashed per update for long key pieces. */
const HASH_SLICE = 1 << 20;

/** The text-action schemes sign text-only assistant replies by their action text (sources/text-actions.ts). */
export type SignatureScheme = 'contract' | TextActionScheme;

export function roleCode(role: string): number {
  // A role literally named "other" shares the code of unknown roles; its record keeps the name.
  return Object.hasOwn(ROLE_CODES, role) ? ROLE_CODES[role as keyof typeof ROLE_CODES] : ROLE_CODES.other;
}

/**
 * Truncated SHA-256 of the key's UTF-16LE code units: 128 bits make an accidental collision in one
 * instance's walk negligible. Contract 9.9: keys compare as UTF-16 strings, and UTF-8 would map every
 * lone surrogate to U+FFFD (not injective). UTF-16LE also hashes as fast as UTF-8 (no transcoding).
 */
export function keyHash(key: string | readonly string[]): Buffer {
  // Stryker disable next-line all: equivalent: the piecewise path below hashes the same UTF-16LE bytes
  if (typeof key === 'string') return (hash('sha256', Buffer.from(key, 'utf16le'), 'buffer') as unknown as Buffer).subarray(0, HASH_BYTES);
  // Piece by piece: joining would copy every (large) tool output into a garbage string. UTF-16LE of
  // the concatenation is the concatenation of the pieces' UTF-16LE, whatever the split.
  const h = createHash('sha256');
  for (const p of key) {
    // Stryker disable next-line all: equivalent: whole or sliced, the same bytes are hashed
    if (p.length <= HASH_SLICE) h.update(p, 'utf16le');
    // A long one-byte string would be widened whole into a buffer of twice its size: go by slices
    // (UTF-16LE code units are independent, so a slice may split a surrogate pair).
    else for (let i = 0; i < p.length; i += HASH_SLICE) h.update(p.slice(i, i + HASH_SLICE), 'utf16le');
  }
  return h.digest().subarray(0, HASH_BYTES);
}

/** A trajectory whose value is unusable: no messages, `why` says what is wrong. */
export function badTrajectory(key: number, why: string): EncodedTrajectory {
  return { key, bad: why, roles: new Uint8Array(0), hashes: new Uint8Array(0), offsets: new Float64Array(0) };
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
  const sign = text === null ? keyParts : (m: Parameters<typeof keyParts>[0], rk: ReadonlySet<string>) => textActionsKeyParts(m, rk, text);
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
  const hashes = new Uint8Array(n * HASH_BYTES);
  const offsets = new Float64Array(n + 1);
  offsets[0] = spill.offset;
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    const code = roleCode(m.role);
    roles[i] = code;
    const { parts, signature } = sign(m, reasoningKeys);
    hashes.set(keyHash(parts), i * HASH_BYTES);
    // The record's fields are exactly the emitted message's (emit.ts): the walk hashes them for the
    // exact-duplicate key, for the few messages that ever take part in one (spill-walk.ts).
    offsets[i + 1] = spill.appendMessage(code, emitMessage(m), signature);
  }
  return { key, roles, hashes, offsets };
}
