// JSON text parsed as Python's `json.loads` types it, for rendering: a number with a fraction or an
// exponent is a float (`1.0`, `1e5`), any other an int of any size. JSON.parse makes both a JS
// number, so `1.0` would print `1` and a 20-digit id would lose digits. Numbers that JSON.parse
// would type differently come back as `{isLosslessNumber: true, value: <source text>}` (the duck
// type of npm lossless-json's LosslessNumber, which toPython reads); an object with an
// integer-like key comes back as a Map (JS objects put such keys first; Python keeps the text's
// order); every other value is what JSON.parse returns.

/** A number whose Python type JSON.parse loses. */
export interface NumberText {
  isLosslessNumber: true;
  value: string;
}

/** Parse `text` (throws JSON.parse's SyntaxError on invalid JSON). */
export function parsePythonJson(text: string): unknown {
  const plain: unknown = JSON.parse(text);
  // Shortcuts (the tests also see strings): no integer-like key, no number JSON.parse could retype.
  if (/"(?:0|[1-9]\d*)"\s*:/.test(text)) return new OrderedParser(text).parse();
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

const INTEGER_KEY = /^(?:0|[1-9]\d{0,8})$/;

/** A JSON parser that keeps key order (a Map for an object with an integer-like key) and number text. */
class OrderedParser {
  private i = 0;
  constructor(private readonly t: string) {}

  parse(): unknown {
    const v = this.value();
    this.ws();
    if (this.i !== this.t.length) throw new SyntaxError(`Unexpected text at position ${this.i}`);
    return v;
  }

  private ws(): void {
    while (this.i < this.t.length && ' \t\n\r'.includes(this.t[this.i]!)) this.i++;
  }

  private value(): unknown {
    this.ws();
    const c = this.t[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return this.string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.t.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    const m = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.i;
    const tok = m.exec(this.t)?.[0];
    if (!tok) throw new SyntaxError(`Unexpected token at position ${this.i}`);
    this.i += tok.length;
    const n = Number(tok);
    const keep = /[.eE]/.test(tok) ? Number.isInteger(n) || !Number.isFinite(n) : !Number.isSafeInteger(n);
    return keep ? ({ isLosslessNumber: true, value: tok } satisfies NumberText) : n;
  }

  private string(): string {
    const m = /"(?:[^"\\]|\\.)*"/y;
    m.lastIndex = this.i;
    const tok = m.exec(this.t)?.[0];
    if (!tok) throw new SyntaxError(`Unterminated string at position ${this.i}`);
    this.i += tok.length;
    return JSON.parse(tok) as string;
  }

  private array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.ws();
    if (this.t[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.t[this.i++];
      if (c === ']') return out;
      if (c !== ',') throw new SyntaxError(`Expected , or ] at position ${this.i - 1}`);
    }
  }

  private object(): Record<string, unknown> | Map<string, unknown> {
    this.i++;
    const entries: [string, unknown][] = [];
    this.ws();
    if (this.t[this.i] === '}') {
      this.i++;
      return {};
    }
    for (;;) {
      this.ws();
      const k = this.string();
      this.ws();
      if (this.t[this.i++] !== ':') throw new SyntaxError(`Expected : at position ${this.i - 1}`);
      const v = this.value();
      const at = entries.findIndex(([x]) => x === k); // a repeated key: the last value, in the first place (Python's dict)
      if (at >= 0) entries[at] = [k, v];
      else entries.push([k, v]);
      this.ws();
      const c = this.t[this.i++];
      if (c === '}') break;
      if (c !== ',') throw new SyntaxError(`Expected , or } at position ${this.i - 1}`);
    }
    return entries.some(([k]) => INTEGER_KEY.test(k)) ? new Map(entries) : Object.fromEntries(entries);
  }
}
