// Python's text of JSON-like values, as a chat template rendered by transformers prints them:
// `str()` (what `{{ v }}`, `v | string` and `~` write), `repr()` (items inside a printed list or
// dict) and `json.dumps` (transformers' `tojson` filter: ensure_ascii=False, indent, separators,
// sort_keys). Pure functions on plain values, so that the rules can be tested one by one.
//
// Numbers: a Python float prints its shortest round-trip digits in repr style (`1.0`, `100000.0`,
// `1e+16`, `1e-05`, `inf`); an int prints all its digits (arbitrary size: `PythonInt` keeps the
// source text of an int past 2^53).

/** An int too large for a JS number, with its exact decimal text. */
export interface PythonInt {
  readonly pythonInt: string;
}

/** A float with Python's type kept (JSON `1.0` is a float in Python, a JS number 1 otherwise). */
export interface PythonFloat {
  readonly pythonFloat: number;
}

/** `v && v.isLosslessNumber === true` (npm lossless-json): `.value` is the number's source text. */
export function isLosslessNumber(v: unknown): v is { isLosslessNumber: true; value: string } {
  return v !== null && typeof v === 'object' && (v as { isLosslessNumber?: unknown }).isLosslessNumber === true && typeof (v as { value?: unknown }).value === 'string';
}

/** Whether JSON number text is a Python float (`json.loads`: a fraction or an exponent makes a float). */
export function isFloatText(text: string): boolean {
  return /[.eE]/.test(text);
}

/** Python's `repr(float)` (= `str(float)`, and what `json.dumps` writes for a finite float). */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  // toExponential() without digits gives the shortest digits that round-trip, as Python's repr.
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential());
  if (!m) return String(x);
  const sign = m[1]!;
  const digits = m[2]! + (m[3] ?? '');
  const exp = Number(m[4]);
  if (exp < -4 || exp >= 16) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intLen = exp + 1;
  if (digits.length <= intLen) return `${sign}${digits}${'0'.repeat(intLen - digits.length)}.0`;
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

/** Python's `str(int)` of a JS number known to be an int (all digits, never an exponent). */
export function pyIntText(x: number): string {
  return Number.isSafeInteger(x) ? String(x) : Number.isFinite(x) ? BigInt(x).toString() : pyFloatRepr(x);
}

/** Python's `str.isprintable()` per character (repr escapes the others). */
function isPrintable(ch: string): boolean {
  if (ch === ' ') return true;
  return !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(ch);
}

/** Python's `repr(str)`: single quotes unless the text has ' and no ", escapes as Python writes them. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (isPrintable(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return out + quote;
}

/** Python's whitespace (`str.isspace`), what `strip()` removes without arguments. */
const PY_SPACE = '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** Python's `str.strip(chars)` / `lstrip` / `rstrip` (chars null: Python whitespace). */
export function pyStrip(s: string, chars: string | null = null, side: 'both' | 'left' | 'right' = 'both'): string {
  const set = new Set(Array.from(chars ?? PY_SPACE));
  const cps = Array.from(s);
  let a = 0;
  let b = cps.length;
  if (side !== 'right') while (a < b && set.has(cps[a]!)) a++;
  if (side !== 'left') while (b > a && set.has(cps[b - 1]!)) b--;
  return cps.slice(a, b).join('');
}

const CASED = /[\p{Lu}\p{Ll}\p{Lt}]/u;

/** Python's `str.title()`: a cased character after an uncased one is upper, the others lower. */
export function pyTitle(s: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    out += prevCased ? ch.toLowerCase() : ch.toUpperCase();
    prevCased = CASED.test(ch);
  }
  return out;
}

/** Python's `str.capitalize()`: the first character upper, the rest lower. */
export function pyCapitalize(s: string): string {
  const cps = Array.from(s);
  return cps.length === 0 ? '' : cps[0]!.toUpperCase() + cps.slice(1).join('').toLowerCase();
}

/** Jinja's `title` filter (not str.title): words split at `-`, whitespace and opening brackets. */
export function jinjaTitle(s: string): string {
  return s
    .split(/([-\s({[<]+)/u)
    .filter((x) => x.length > 0)
    .map((w) => {
      const cps = Array.from(w);
      return cps[0]!.toUpperCase() + cps.slice(1).join('').toLowerCase();
    })
    .join('');
}

/** Options of transformers' `tojson` (json.dumps). */
export interface JsonOptions {
  ensureAscii?: boolean;
  /** null: one line; a number of spaces or a string: one item per line. */
  indent?: number | string | null;
  separators?: [string, string] | null;
  sortKeys?: boolean;
}

/** Python's json.dumps string escaping (ensure_ascii: every character outside 0x20-0x7e as \uXXXX). */
export function pyJsonString(s: string, ensureAscii: boolean): string {
  const j = JSON.stringify(s);
  return ensureAscii ? j.replace(/[^\x00-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : j;
}
