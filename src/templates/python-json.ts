// JSON text parsed as Python's `json.loads` types it, for rendering: a number with a fraction or an
// exponent is a float (`1.0`, `1e5`), any other an int of any size. JSON.parse makes both a JS
// number, so `1.0` would print `1` and a 20-digit id would lose digits. Numbers that JSON.parse
// would type differently come back as `{isLosslessNumber: true, value: <source text>}` (the duck
// type of npm lossless-json's LosslessNumber, which toPython reads); every other value is what
// JSON.parse returns. Object keys keep the text's order only as far as JS objects do (integer-like
// keys first): a known gap, see the README.

/** A number whose Python type JSON.parse loses. */
export interface NumberText {
  isLosslessNumber: true;
  value: string;
}

/** Parse `text` (throws JSON.parse's SyntaxError on invalid JSON). */
export function parsePythonJson(text: string): unknown {
  const plain: unknown = JSON.parse(text);
  // No number token that JSON.parse could retype (the test also sees strings: only a shortcut).
  return /[.eE]|\d{16,}/.test(text) ? parseKeepingNumbers(text) : plain;
}

/** Numbers kept as text where needed: JSON.parse with the number tokens swapped for marked strings. */
function parseKeepingNumbers(text: string): unknown {
  const marker = '\u0000num:';
  // Replace each number token outside strings with a marked string, then revive the markers.
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (!m) {
        out += c;
        i++;
        continue;
      }
      const tok = m[0];
      const asNumber = Number(tok);
      const keep = /[.eE]/.test(tok) ? Number.isInteger(asNumber) || !Number.isFinite(asNumber) : !Number.isSafeInteger(asNumber);
      out += keep ? JSON.stringify(marker + tok) : tok;
      i += tok.length;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out, (_k, v: unknown) => (typeof v === 'string' && v.startsWith(marker) ? ({ isLosslessNumber: true, value: v.slice(marker.length) } satisfies NumberText) : v));
}
