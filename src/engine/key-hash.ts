// Comparison-key hashes (contract sections 3 and 9.9): the truncated SHA-256 of a key's WTF-8. The
// walk computes them from spill records (spill.ts recordKeyHash), only for the messages it compares.
import { createHash, hash } from 'node:crypto';

import { isWellFormed } from '../contract/json-source.js';

export { isWellFormed };

export const HASH_BYTES = 16;
/** Keys up to this many UTF-16 units are encoded into one reused buffer and hashed in one call. */
const SCRATCH_UNITS = 1 << 20;
/** UTF-16 units hashed per update for long key pieces. */
const HASH_SLICE = 1 << 20;
let scratch: Buffer | undefined;

/**
 * WTF-8 of a string that may hold lone surrogates: UTF-8 for every well-formed run, and a lone
 * surrogate as the three bytes of its code point (what UTF-8 would write for it if it were allowed).
 * Unlike UTF-8, which turns every lone surrogate into U+FFFD, this is injective (contract 9.9).
 */
export function wtf8(s: string): Buffer {
  const out: Buffer[] = [];
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++; // a well-formed pair: part of the run
      continue;
    }
    out.push(Buffer.from(s.slice(run, i), 'utf8'), Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]));
    run = i + 1;
  }
  out.push(Buffer.from(s.slice(run), 'utf8'));
  return Buffer.concat(out);
}

/**
 * Truncated SHA-256 of the key's WTF-8: 128 bits make an accidental collision in one instance's walk
 * negligible. Contract 9.9: keys compare as UTF-16 strings, so the hashed encoding must be injective;
 * WTF-8 is (plain UTF-8 maps every lone surrogate to U+FFFD), and it equals UTF-8 for the strings
 * real files hold, which hash in half the bytes of UTF-16LE.
 */
export function keyHash(key: string | readonly string[]): Buffer {
  let parts: readonly string[] = typeof key === 'string' ? [key] : key;
  let units = 0;
  let wellFormed = true;
  for (const p of parts) {
    units += p.length;
    if (wellFormed && !isWellFormed(p)) wellFormed = false;
  }
  if (!wellFormed) {
    // Rare: a piece holds a lone surrogate, or ends or starts with half of a pair split between two
    // pieces. WTF-8 is defined on the whole string only (a split pair is one 4-byte sequence).
    const joined = parts.join('');
    if (!isWellFormed(joined)) return digest16(wtf8(joined));
    parts = [joined];
  }
  // Every piece well-formed: WTF-8 is UTF-8, and UTF-8 of the concatenation is the concatenation of
  // the pieces' UTF-8.
  if (units <= SCRATCH_UNITS) {
    // At most 3 UTF-8 bytes per UTF-16 unit; one reused buffer, one native call, no Hash object.
    scratch ??= Buffer.allocUnsafe(3 * SCRATCH_UNITS);
    let n = 0;
    for (const p of parts) n += scratch.write(p, n, 'utf8');
    return digest16(scratch.subarray(0, n));
  }
  // Piece by piece: joining would copy every (large) tool output into a garbage string.
  const h = createHash('sha256');
  for (const p of parts) {
    // A long one-byte string would be encoded whole into a buffer: go by slices, never between the
    // two halves of a surrogate pair (each slice must stay well-formed to encode as UTF-8).
    for (let i = 0; i < p.length; ) {
      let end = Math.min(p.length, i + HASH_SLICE);
      const last = p.charCodeAt(end - 1);
      if (end < p.length && last >= 0xd800 && last <= 0xdbff) end--;
      h.update(p.slice(i, end), 'utf8');
      i = end;
    }
  }
  return h.digest().subarray(0, HASH_BYTES);
}

export function digest16(bytes: Uint8Array): Buffer {
  return (hash('sha256', bytes, 'buffer') as unknown as Buffer).subarray(0, HASH_BYTES);
}

/**
 * keyHash of a key given as the UTF-8 bytes of its well-formed pieces: what keyHash of the pieces as
 * text gives (their WTF-8 is these bytes), without making a string.
 */
export function keyHashOfBytes(parts: readonly Uint8Array[]): Buffer {
  let n = 0;
  for (const p of parts) n += p.length;
  if (n <= 3 * SCRATCH_UNITS) {
    scratch ??= Buffer.allocUnsafe(3 * SCRATCH_UNITS);
    let at = 0;
    for (const p of parts) {
      scratch.set(p, at);
      at += p.length;
    }
    return digest16(scratch.subarray(0, n));
  }
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest().subarray(0, HASH_BYTES);
}
