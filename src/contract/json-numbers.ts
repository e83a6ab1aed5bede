// Numbers in JSON text (contract v3, section 11): output keeps a number's source text, comparison
// keys compare numbers by value. JSON.parse turns `1.0` into 1 and `12345678901234567890` into
// 12345678901234567000, so JSON.stringify would write a different text (and, for big integers, a
// different number). Every parse of argument JSON and every write of a value that may hold such a
// number goes through this module; nothing else decides how a number is read or written.
//
// A number token whose text JSON.stringify(Number(text)) gives back stays a JS number (the usual
// `30`, `0.5`: nothing is lost); any other becomes a lossless-json LosslessNumber whose `.value` is
// the source text. So LosslessNumbers are rare and exist only where the text says more than the
// double. The fast path is native JSON.parse: the lossless parser (a JS parser, several times
// slower) runs only when the parsed value holds a number and the text has a token that may not
// round-trip.
import stableStringify from 'fast-json-stable-stringify';
import { LosslessNumber, isLosslessNumber, parse as losslessParse, stringify as losslessStringify } from 'lossless-json';

export { LosslessNumber, isLosslessNumber };

/** Whether JSON.parse then JSON.stringify writes this number token back unchanged. */
export function numberKeepsText(token: string): boolean {
  return JSON.stringify(Number(token)) === token;
}

/** How a number token is kept: a JS number when that loses nothing of its text, else its text. */
export function numberOfToken(token: string): number | LosslessNumber {
  if (numberKeepsText(token)) return Number(token);
  sourceNumbersMade++;
  return new LosslessNumber(token);
}

/**
 * LosslessNumbers made in this process so far. While it is 0 no value anywhere can hold one, so the
 * writers skip looking for them (the usual run: no argument has such a number).
 */
let sourceNumbersMade = 0;

/** Whether this process has made any LosslessNumber (writers that see none need not look). */
export function anySourceNumbers(): boolean {
  return sourceNumbersMade > 0;
}

// A number token that may not round-trip: one with a fraction or an exponent, one starting with
// `-0`, or 16+ digits (integers of up to 15 digits always round-trip). A token starts the text or
// follows `:`, `[` or `,` (and blanks), so those are what is looked for; inside strings the same
// characters are a false hit, which costs only a parse.
const MAY_NOT_ROUND_TRIP = /(?:^|[:[,])\s*-?[0-9]+[.eE]|(?:^|[:[,])\s*-0|[0-9]{16}/;

/** Whether a JSON text may hold a number token that does not round-trip (false: surely none). */
export function mayHoldSourceNumbers(text: string): boolean {
  return MAY_NOT_ROUND_TRIP.test(text);
}

/** Whether a parsed value holds a number anywhere (iterative: values may nest up to the depth limit). */
export function holdsNumber(v: unknown): boolean {
  if (typeof v === 'number') return true;
  if (v === null || typeof v !== 'object') return false;
  const stack: object[] = [v];
  while (stack.length > 0) {
    const o = stack.pop()!;
    for (const c of Array.isArray(o) ? o : Object.values(o)) {
      if (typeof c === 'number') return true;
      if (c !== null && typeof c === 'object') stack.push(c as object);
    }
  }
  return false;
}

/**
 * Whether a value holds a LosslessNumber anywhere (iterative). Writers ask this of every row, so it
 * answers at once while this process has made none (a LosslessNumber made by another copy of
 * lossless-json is then not looked for: values come from this module).
 */
export function holdsSourceNumbers(v: unknown): boolean {
  return sourceNumbersMade > 0 && holdsLossless(v);
}

function holdsLossless(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (isLosslessNumber(v)) return true;
  const stack: object[] = [v];
  while (stack.length > 0) {
    const o = stack.pop()!;
    for (const c of Array.isArray(o) ? o : Object.values(o)) {
      if (c !== null && typeof c === 'object') {
        if (isLosslessNumber(c)) return true;
        stack.push(c as object);
      }
    }
  }
  return false;
}

/** JSON.parse's rule for a repeated key: the last value, at the first one's place. */
const lastValue = ({ newValue }: { newValue: unknown }): unknown => newValue;

/**
 * A JSON text parsed keeping number text: as JSON.parse, except that a number JSON.stringify would
 * write differently is a LosslessNumber. `parsed` is JSON.parse(text) when the caller has it (then
 * text known to be valid JSON). Throws JSON.parse's SyntaxError on invalid text.
 */
export function parseKeepingNumbers(text: string, parsed: unknown = JSON.parse(text)): unknown {
  if (!holdsNumber(parsed) || !mayHoldSourceNumbers(text)) return parsed;
  return losslessParse(text, null, { parseNumber: numberOfToken, onDuplicateKey: lastValue });
}

/** A value's JSON text with every LosslessNumber written as its source text; JSON.stringify otherwise. */
export function stringifyKeepingNumbers(v: unknown): string | undefined {
  if (!holdsSourceNumbers(v)) return JSON.stringify(v);
  return losslessStringify(v);
}

/** The value with every LosslessNumber replaced by its JS number (what JSON.parse would have made). */
export function numbersByValue(v: unknown): unknown {
  // Not gated on this process's count: comparison keys must be right whoever made the value.
  if (!holdsLossless(v)) return v;
  return byValue(v);
}

function byValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (isLosslessNumber(v)) return Number((v as LosslessNumber).value);
  if (Array.isArray(v)) return v.map(byValue);
  // Null prototype: a "__proto__" key is data (contract 9.9).
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(v)) out[k] = byValue((v as Record<string, unknown>)[k]);
  return out;
}

/**
 * JSON text written as JSON.stringify(JSON.parse(text)) would write it: the comparison form of text
 * this module wrote (numbers by value, as contract v2 emitted them). Unchanged when it cannot differ.
 */
export function jsonTextByValue(text: string): string {
  // Not gated on this process's LosslessNumbers: the text may come from another worker.
  if (!mayHoldSourceNumbers(text)) return text;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text; // not JSON (malformed arguments kept verbatim): no number to read
  }
}

/** Stable JSON (fast-json-stable-stringify) of the value by value: the comparison key of a value. */
export function stableJsonByValue(v: unknown): string {
  return stableStringify(numbersByValue(v));
}

// What Python's `datasets` 5.0.1 makes of a number inside argument OBJECTS (`--arguments object`),
// measured by scripts/python-numbers-roundtrip.sh (fixtures/python-numbers/roundtrip.json). Text
// arguments (`--arguments string`, the published tool_calls) reach the trainer as text and
// json.loads reads every number exactly.

const SMALLEST_NORMAL = 2.2250738585072014e-308;

/** The source text of a number value (a LosslessNumber's own, else what JSON.stringify writes). */
function textOf(v: number | LosslessNumber): string {
  return typeof v === 'number' ? JSON.stringify(v) : v.value;
}

/** A value Python's floats lose: beyond the double range, or below the normal range but not zero. */
function outsideNormalDoubles(x: number, text: string): boolean {
  return !Number.isFinite(x) || (x !== 0 && Math.abs(x) < SMALLEST_NORMAL) || (x === 0 && /[1-9]/.test(text.replace(/[eE].*$/, '')));
}

/**
 * Whether `load_dataset("json")` may hand the trainer another number: pyarrow's JSON reader turns an
 * integer beyond 2^53 into a double (measured on 12345678901234567890 where a column also holds a
 * float) or refuses it beyond int64, and its pandas fallback keeps 10 decimal places (pi became
 * 3.1415926536), loses the sign of -0.0 and flushes subnormals to 0.
 */
export function jsonLoaderMayChange(v: number | LosslessNumber): boolean {
  const text = textOf(v);
  const x = Number(text);
  if (!/[.eE]/.test(text)) {
    const i = BigInt(text); // the text, not the double: 2^53 + 1 reads as 2^53
    return i > 2n ** 53n || i < -(2n ** 53n) || text === '-0';
  }
  if (Object.is(x, -0) || outsideNormalDoubles(x, text)) return true;
  return Math.abs(x) < 1e15 && Number(x.toFixed(10)) !== x;
}

/** Whether `load_dataset("parquet")` (the `arrow.json` column, `Json()` feature) may: only subnormals and overflow (measured: 5e-324 became 0.0). */
export function jsonFeatureMayChange(v: number | LosslessNumber): boolean {
  const text = textOf(v);
  return outsideNormalDoubles(Number(text), text);
}

/** Calls `f` on every number (JS number or LosslessNumber) in a value (iterative). */
export function eachNumber(v: unknown, f: (n: number | LosslessNumber) => void): void {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const c = stack.pop();
    if (typeof c === 'number') f(c);
    else if (c !== null && typeof c === 'object') {
      if (isLosslessNumber(c)) f(c as LosslessNumber);
      else for (const x of Array.isArray(c) ? c : Object.values(c)) stack.push(x);
    }
  }
}
