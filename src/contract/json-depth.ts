// A limit on how deeply input JSON may nest. V8's JSON.parse is iterative and accepts any depth, but
// everything after it recurses (JSON.stringify, fast-json-stable-stringify, structured clone to the
// main thread) and would die of a stack-overflow RangeError around 5,000-10,000 levels. Real tool
// calls nest a handful of levels; 1,000 leaves ample room and stays far from the stack.
import { BadValue } from './normalise.js';
import { parseKeepingNumbers } from './json-numbers.js';

/** Deepest nesting of objects and arrays accepted in input JSON (README "Errors and exit codes"). */
export const MAX_JSON_DEPTH = 1000;

/** Whether `v` nests objects/arrays deeper than `limit` levels (`[]` is 1). Iterative: no recursion on input. */
export function nestedDeeperThan(v: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  return depthAndNumbers(v, limit) === TOO_DEEP;
}

/** The message of a too-deep value, naming what it is. */
export function tooDeepMessage(what: string): string {
  return `${what}: JSON nested deeper than ${MAX_JSON_DEPTH} levels (the limit)`;
}

/**
 * How numbers are read: 'value' as JSON.parse reads them, 'text' keeping the source text of those
 * JSON.stringify would write differently (json-numbers.ts; tool-call arguments).
 */
export type NumberReading = 'value' | 'text';

/** JSON.parse, then a BadValue when the result nests deeper than MAX_JSON_DEPTH. A SyntaxError passes through. */
export function parseJson(text: string, what: string, numbers: NumberReading = 'value'): unknown {
  const v: unknown = JSON.parse(text);
  if (numbers === 'value') {
    if (nestedDeeperThan(v)) throw new BadValue(tooDeepMessage(what));
    return v;
  }
  // One walk for the depth and for whether any number is there (the hot path: every argument string).
  const seen = depthAndNumbers(v);
  if (seen === TOO_DEEP) throw new BadValue(tooDeepMessage(what));
  // After the depth check: the lossless parser recurses, and within the limit that is safe.
  return seen === WITH_NUMBERS ? parseKeepingNumbers(text, v) : v;
}

const TOO_DEEP = 2;
const WITH_NUMBERS = 1;

/** TOO_DEEP when `v` nests deeper than `limit`, else WITH_NUMBERS when it holds a number, else 0. One iterative walk. */
function depthAndNumbers(v: unknown, limit: number = MAX_JSON_DEPTH): number {
  if (typeof v === 'number') return WITH_NUMBERS;
  if (v === null || typeof v !== 'object') return 0;
  let found = 0;
  const stack: unknown[] = [v];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const o = stack.pop() as object;
    const d = depths.pop()!;
    if (d > limit) return TOO_DEEP;
    const children: unknown[] = Array.isArray(o) ? o : Object.values(o);
    for (const c of children) {
      if (typeof c === 'number') found = WITH_NUMBERS;
      else if (c !== null && typeof c === 'object') {
        stack.push(c);
        depths.push(d + 1);
      }
    }
  }
  return found;
}

/** JSON text that must parse: `parseJson`, with a syntax error as the BadValue `unparsable`. */
export function parseJsonText(text: string, what: string, unparsable: string, numbers: NumberReading = 'value'): unknown {
  try {
    return parseJson(text, what, numbers);
  } catch (e) {
    if (e instanceof BadValue) throw e;
    throw new BadValue(unparsable);
  }
}
