// Worker-side core of the second pass: normalise one trajectory, hash its comparison keys and spill
// its emitted messages (see spill.ts). Pure apart from the spill writer it is given.
import { createHash, hash } from 'node:crypto';
import { emitMessage } from './emit.js';
import { BadValue, normaliseTrajectory, type NormaliseTally } from './normalise.js';
import { ROLE_CODES, type EncodedTrajectory } from './read/protocol.js';
import { keyParts } from './sign.js';
import { textActionsKeyParts } from './sources/text-actions.js';
import type { SpillWriter } from './spill.js';

export const HASH_BYTES = 16;

/** Issue 7: `text-actions` signs text-only assistant replies by their last fenced bash block (sources/text-actions.ts). */
export type SignatureScheme = 'contract' | 'text-actions';

export function roleCode(role: string): number {
  // A role literally named "other" shares the code of unknown roles; its record keeps the name.
  return Object.hasOwn(ROLE_CODES, role) ? ROLE_CODES[role as keyof typeof ROLE_CODES] : ROLE_CODES.other;
}

/** Truncated SHA-256: 128 bits make an accidental collision in one instance's walk negligible. */
export function keyHash(key: string | readonly string[]): Buffer {
  if (typeof key === 'string') return (hash('sha256', key, 'buffer') as unknown as Buffer).subarray(0, HASH_BYTES);
  // Piece by piece: joining would copy every (large) tool output into a garbage string.
  const h = createHash('sha256');
  for (const p of key) h.update(p);
  return h.digest().subarray(0, HASH_BYTES);
}

export function encodeTrajectory(
  key: number,
  value: unknown,
  reasoningKeys: ReadonlySet<string>,
  tally: NormaliseTally,
  spill: SpillWriter,
  scheme: SignatureScheme = 'contract',
): EncodedTrajectory {
  const sign = scheme === 'text-actions' ? textActionsKeyParts : keyParts;
  let messages;
  const local: NormaliseTally = { malformed_arguments: 0, unknown_roles: 0 };
  try {
    messages = normaliseTrajectory(value, local);
  } catch (e) {
    if (e instanceof BadValue) {
      return { key, bad: e.message, roles: new Uint8Array(0), hashes: new Uint8Array(0), offsets: new Float64Array(0) };
    }
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
