// Chat templates rendered with Python Jinja2's semantics, as transformers' `apply_chat_template`
// sets Jinja up (transformers src/transformers/utils/chat_template_utils.py
// `_compile_jinja_template`: trim_blocks, lstrip_blocks, loopcontrols, the `{% generation %}`
// extension, its own `tojson` = json.dumps(ensure_ascii=False, indent, separators, sort_keys),
// `raise_exception`, `strftime_now`; `render(messages=, tools=, documents=, add_generation_prompt=,
// **special tokens)`).
//
// The parser and most of the evaluator are @huggingface/jinja's; this layer sits on top of it (a
// subclass of its Interpreter, values made with its own classes) and changes what differs from
// Python: what `{{ }}`, `| string`, `~` and `| join` print (True/False/None, Python's int and float
// text, Python repr of lists and dicts), `tojson` (Python's float text and big ints), equality and
// `in` (by value, `1 != "1"`), `+` of a string and a non-string (TypeError), `| length` and string
// indexes in code points, Python's string methods (strip(chars), title, capitalize, find, ...),
// tests (`is iterable` of a dict, `is number` of a bool, `is float`), Undefined (iterates as empty,
// prints "", `| length` 0, but attribute access on it raises as Python's does).
// test/python-jinja.test.ts lists each rule against the text Python writes.
import { Environment as LibEnvironment, Interpreter as LibInterpreterClass, parse as libParse, tokenize } from '@huggingface/jinja';
import { isFloatText, isLosslessNumber, jinjaTitle, pyCapitalize, pyFloatRepr, pyIntText, pyJsonString, pyStrRepr, pyStrip, pyTitle, type JsonOptions } from './python-values.js';

// The library's index re-exports its classes, but its .d.ts files import each other without file
// extensions, which NodeNext resolution does not follow: the shapes used here are declared here.
interface Value {
  type: string;
  value: unknown;
  __bool__(): { value: boolean };
}
interface Statement {
  type: string;
}
interface Env {
  set(name: string, value: unknown): Value;
  setVariable(name: string, value: Value): Value;
}
interface LibInterpreter {
  run(program: Program): Value;
  evaluate(statement: Statement | undefined, env: Env): Value;
}
type Program = object;
const Environment = LibEnvironment as unknown as new (parent?: Env) => Env;
const Interpreter = LibInterpreterClass as unknown as new (env?: Env) => LibInterpreter;
type Environment = Env;
const parse = libParse as unknown as (tokens: unknown) => Program;
type Ctor = new (value?: unknown) => Value;

/** The library's value classes (not exported by its index): taken from values it makes itself. */
const C = ((): Record<string, Ctor> => {
  const env = new Environment();
  const ctor = (v: unknown): Ctor => (env.set(`v${Math.random()}`, v) as unknown as { constructor: Ctor }).constructor;
  const Fn = ctor(() => null);
  const out: Record<string, Ctor> = {
    Integer: ctor(1),
    Float: ctor(1.5),
    String: ctor(''),
    Boolean: ctor(true),
    Array: ctor([]),
    Object: ctor({}),
    Null: ctor(null),
    Undefined: ctor(undefined),
    Function: Fn,
  };
  // Tuple, keyword arguments and namespace come out of a render only.
  const seen: Value[] = [];
  const probe = new Environment();
  probe.setVariable('f', new Fn((args: Value[]) => (seen.push(...args), new out.Null!())) as Value);
  new Interpreter(probe).run(parse(tokenize('{{ f((1, 2), namespace(a=1), k=1) }}', {})));
  out.Tuple = (seen[0] as unknown as { constructor: Ctor }).constructor;
  out.Namespace = (seen[1] as unknown as { constructor: Ctor }).constructor;
  out.Kwargs = (seen[2] as unknown as { constructor: Ctor }).constructor;
  return out;
})();

const is = (v: Value, k: keyof typeof C | string): boolean => v instanceof C[k]!;
const mk = (k: string, v?: unknown): Value => new C[k]!(v);

/** An int past 2^53 keeps its digits (`pythonInt`); arithmetic on it uses the nearest double. */
function bigInt(text: string): Value {
  const v = mk('Integer', Number(text));
  (v as unknown as { pythonInt: string }).pythonInt = text.replace(/^\+/, '');
  return v;
}

/** A JS value (a row's messages, tools, special tokens) as a runtime value with Python's types. */
export function toPython(v: unknown): Value {
  if (v === undefined) return mk('Undefined');
  if (v === null) return mk('Null');
  switch (typeof v) {
    case 'string':
      return mk('String', v);
    case 'boolean':
      return mk('Boolean', v);
    case 'number':
      return Number.isInteger(v) ? mk('Integer', v) : mk('Float', v);
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? mk('Integer', Number(v)) : bigInt(v.toString());
    case 'function':
      return mk('Function', (args: Value[]) => toPython((v as (...a: unknown[]) => unknown)(...args.map((a) => a.value)) ?? null));
    case 'object':
      break;
    default:
      throw new Error(`cannot pass a ${typeof v} to a chat template`);
  }
  if (isLosslessNumber(v)) {
    const text = v.value;
    if (isFloatText(text)) return mk('Float', Number(text));
    const n = Number(text);
    return Number.isSafeInteger(n) ? mk('Integer', n) : bigInt(text);
  }
  if (Object.values(C).some((c) => v instanceof c)) return v as Value; // converted already
  if (Array.isArray(v)) return mk('Array', v.map(toPython));
  if (v instanceof Map) return mk('Object', new Map([...v].map(([k, x]) => [String(k), toPython(x)])));
  return mk('Object', new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toPython(x)])));
}

const PY_TYPE: Record<string, string> = {
  IntegerValue: 'int',
  FloatValue: 'float',
  StringValue: 'str',
  BooleanValue: 'bool',
  ArrayValue: 'list',
  TupleValue: 'tuple',
  ObjectValue: 'dict',
  KeywordArgumentsValue: 'dict',
  NullValue: 'NoneType',
  UndefinedValue: 'Undefined',
  FunctionValue: 'function',
  NamespaceValue: 'Namespace',
};
const pyType = (v: Value): string => PY_TYPE[v.type] ?? v.type;

function intText(v: Value): string {
  return (v as unknown as { pythonInt?: string }).pythonInt ?? pyIntText(v.value as number);
}

/** Python's `str(v)`: what `{{ v }}`, `v | string` and `~` write. */
export function pyStr(v: Value): string {
  switch (v.type) {
    case 'StringValue':
      return v.value as string;
    case 'UndefinedValue':
      return '';
    default:
      return pyRepr(v);
  }
}

/** Python's `repr(v)` (items of a printed list or dict). */
export function pyRepr(v: Value): string {
  switch (v.type) {
    case 'StringValue':
      return pyStrRepr(v.value as string);
    case 'BooleanValue':
      return v.value ? 'True' : 'False';
    case 'NullValue':
      return 'None';
    case 'UndefinedValue':
      return '';
    case 'IntegerValue':
      return intText(v);
    case 'FloatValue':
      return pyFloatRepr(v.value as number);
    case 'TupleValue': {
      const items = (v.value as Value[]).map(pyRepr);
      return items.length === 1 ? `(${items[0]},)` : `(${items.join(', ')})`;
    }
    case 'ArrayValue':
      return `[${(v.value as Value[]).map(pyRepr).join(', ')}]`;
    case 'ObjectValue':
    case 'KeywordArgumentsValue':
      return `{${[...(v.value as Map<string, Value>)].map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
    case 'NamespaceValue':
      return `<Namespace {${[...(v.value as Map<string, Value>)].map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`).join(', ')}}>`;
    default:
      return `<${pyType(v)}>`;
  }
}

/** transformers' `tojson`: Python's json.dumps of the value. */
export function pyJson(v: Value, o: JsonOptions = {}, depth = 0): string {
  const ensureAscii = o.ensureAscii ?? false;
  const indent = o.indent === undefined || o.indent === null ? null : typeof o.indent === 'number' ? ' '.repeat(Math.max(0, o.indent)) : o.indent;
  const [itemSep, keySep] = o.separators ?? (indent !== null ? [',', ': '] : [', ', ': ']);
  switch (v.type) {
    case 'NullValue':
      return 'null';
    case 'BooleanValue':
      return v.value ? 'true' : 'false';
    case 'IntegerValue':
      return intText(v);
    case 'FloatValue': {
      const x = v.value as number;
      return Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : pyFloatRepr(x);
    }
    case 'StringValue':
      return pyJsonString(v.value as string, ensureAscii);
    case 'ArrayValue':
    case 'TupleValue':
    case 'ObjectValue':
    case 'KeywordArgumentsValue': {
      const isList = v.type === 'ArrayValue' || v.type === 'TupleValue';
      const parts = isList
        ? (v.value as Value[]).map((x) => pyJson(x, o, depth + 1))
        : (() => {
            let entries = [...(v.value as Map<string, Value>)];
            if (o.sortKeys) entries = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
            return entries.map(([k, x]) => `${pyJsonString(k, ensureAscii)}${keySep}${pyJson(x, o, depth + 1)}`);
          })();
      const [open, close] = isList ? ['[', ']'] : ['{', '}'];
      if (parts.length === 0) return open + close;
      if (indent === null) return open + parts.join(itemSep) + close;
      const inner = '\n' + indent.repeat(depth + 1);
      return open + inner + parts.join(itemSep + inner) + '\n' + indent.repeat(depth) + close;
    }
    default:
      throw new Error(`Object of type ${pyType(v)} is not JSON serializable`);
  }
}

/** Python's `==` on template values (by value; `1 == 1.0 == True`, `1 != '1'`, list != tuple). */
export function pyEquals(a: Value, b: Value): boolean {
  const numeric = (v: Value): boolean => v.type === 'IntegerValue' || v.type === 'FloatValue' || v.type === 'BooleanValue';
  if (numeric(a) && numeric(b)) {
    const x = a.type === 'BooleanValue' ? Number(a.value) : (a.value as number);
    const y = b.type === 'BooleanValue' ? Number(b.value) : (b.value as number);
    if (a.type === 'IntegerValue' && b.type === 'IntegerValue') return intText(a) === intText(b);
    return x === y;
  }
  const kind = (v: Value): string => (v.type === 'KeywordArgumentsValue' ? 'ObjectValue' : v.type);
  if (kind(a) !== kind(b)) return false;
  switch (kind(a)) {
    case 'StringValue':
      return a.value === b.value;
    case 'NullValue':
    case 'UndefinedValue':
      return true;
    case 'ArrayValue':
    case 'TupleValue': {
      const x = a.value as Value[];
      const y = b.value as Value[];
      return x.length === y.length && x.every((v, i) => pyEquals(v, y[i]!));
    }
    case 'ObjectValue': {
      const x = a.value as Map<string, Value>;
      const y = b.value as Map<string, Value>;
      if (x.size !== y.size) return false;
      for (const [k, v] of x) {
        const w = y.get(k);
        if (w === undefined || !pyEquals(v, w)) return false;
      }
      return true;
    }
    default:
      return a === b || a.value === b.value;
  }
}

/** Python `in`: membership by value in a list, key in a dict, substring in a string. */
function pyContains(container: Value, item: Value): boolean {
  if (is(container, 'Array')) return (container.value as Value[]).some((x) => pyEquals(x, item));
  if (is(container, 'Object')) return is(item, 'String') && (container.value as Map<string, Value>).has(item.value as string);
  if (is(container, 'String')) {
    if (!is(item, 'String')) throw new Error(`'in <string>' requires string as left operand, not ${pyType(item)}`);
    return (container.value as string).includes(item.value as string);
  }
  if (is(container, 'Undefined')) return false;
  throw new Error(`argument of type '${pyType(container)}' is not iterable`);
}

/** A name for an expression in messages (`messages[0].content`). */
function describe(s: Statement): string {
  const n = s as unknown as { type: string; value?: unknown; object?: Statement; property?: Statement; computed?: boolean };
  if (n.type === 'Identifier') return String(n.value);
  if (n.type === 'MemberExpression' && n.object && n.property) return `${describe(n.object)}${n.computed ? `[${describe(n.property)}]` : `.${describe(n.property)}`}`;
  if (n.type === 'StringLiteral') return pyStrRepr(String(n.value));
  if (n.type === 'IntegerLiteral') return String(n.value);
  return 'value';
}

const fn = (f: (args: Value[]) => Value): Value => mk('Function', f);
const str = (s: string): Value => mk('String', s);
const bool = (b: boolean): Value => mk('Boolean', b);
const int = (n: number): Value => mk('Integer', n);

/** Positional and keyword arguments of a call (the library passes keywords as a trailing KeywordArgumentsValue). */
function splitArgs(args: Value[]): [Value[], Map<string, Value>] {
  const last = args.at(-1);
  if (last && last.type === 'KeywordArgumentsValue') return [args.slice(0, -1), last.value as Map<string, Value>];
  return [args, new Map()];
}

function optString(v: Value | undefined, what: string): string | null {
  if (v === undefined || is(v, 'Null')) return null;
  if (!is(v, 'String')) throw new Error(`${what} arg must be None or str`);
  return v.value as string;
}

/** Python's str methods that @huggingface/jinja lacks or writes differently; the others are the library's. */
function stringMethod(s: string, name: string): Value | null {
  const cps = (): string[] => Array.from(s);
  switch (name) {
    case 'strip':
    case 'lstrip':
    case 'rstrip':
      return fn((args) => str(pyStrip(s, optString(splitArgs(args)[0][0], name), name === 'strip' ? 'both' : name === 'lstrip' ? 'left' : 'right')));
    case 'title':
      return fn(() => str(pyTitle(s)));
    case 'capitalize':
      return fn(() => str(pyCapitalize(s)));
    case 'upper':
      return fn(() => str(s.toUpperCase()));
    case 'lower':
      return fn(() => str(s.toLowerCase()));
    case 'swapcase':
      return fn(() => str(cps().map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('')));
    case 'find':
    case 'rfind':
    case 'index':
    case 'rindex':
    case 'count': {
      return fn((args) => {
        const sub = args[0];
        if (!sub || !is(sub, 'String')) throw new Error(`${name}() argument must be str`);
        const needle = Array.from(sub.value as string);
        const hay = cps();
        const at: number[] = [];
        for (let i = 0; i + needle.length <= hay.length; i++) {
          if (needle.every((c, j) => hay[i + j] === c)) {
            at.push(i);
            if (name === 'count' && needle.length > 0) i += needle.length - 1;
          }
        }
        if (name === 'count') return int(needle.length === 0 ? hay.length + 1 : at.length);
        const pos = name.startsWith('r') ? (at.at(-1) ?? -1) : (at[0] ?? -1);
        if (pos === -1 && name.endsWith('index')) throw new Error('substring not found');
        return int(pos);
      });
    }
    case 'join':
      return fn((args) => {
        const it = args[0];
        const items = it && is(it, 'Array') ? (it.value as Value[]) : it && is(it, 'String') ? Array.from(it.value as string).map(str) : null;
        if (items === null) throw new Error('can only join an iterable');
        for (const x of items) if (!is(x, 'String')) throw new Error(`sequence item: expected str instance, ${pyType(x)} found`);
        return str(items.map((x) => x.value as string).join(s));
      });
    case 'splitlines':
      return fn(() => mk('Array', s.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/).filter((x, i, a) => i < a.length - 1 || x !== '').map(str)));
    case 'removeprefix':
      return fn((args) => str(args[0] && is(args[0], 'String') && s.startsWith(args[0].value as string) ? s.slice((args[0].value as string).length) : s));
    case 'removesuffix':
      return fn((args) => {
        const suf = args[0] && is(args[0], 'String') ? (args[0].value as string) : '';
        return str(suf !== '' && s.endsWith(suf) ? s.slice(0, s.length - suf.length) : s);
      });
    case 'isdigit':
      return fn(() => bool(s.length > 0 && /^\p{Nd}+$/u.test(s)));
    case 'isalpha':
      return fn(() => bool(s.length > 0 && /^\p{L}+$/u.test(s)));
    case 'isalnum':
      return fn(() => bool(s.length > 0 && /^[\p{L}\p{Nd}]+$/u.test(s)));
    case 'isspace':
      return fn(() => bool(s.length > 0 && pyStrip(s) === ''));
    case 'islower':
      return fn(() => bool(/\p{Ll}/u.test(s) && s === s.toLowerCase()));
    case 'isupper':
      return fn(() => bool(/\p{Lu}/u.test(s) && s === s.toUpperCase()));
    default:
      return null;
  }
}

/** Jinja's tests with Python's answers (the names @huggingface/jinja knows, and `float`, `ne`, ...). */
export function pyTest(name: string, v: Value, args: Value[]): boolean {
  const str_ = (): string | null => (is(v, 'String') ? (v.value as string) : null);
  switch (name) {
    case 'defined':
      return !is(v, 'Undefined');
    case 'undefined':
      return is(v, 'Undefined');
    case 'none':
      return is(v, 'Null');
    case 'boolean':
      return is(v, 'Boolean');
    case 'true':
      return is(v, 'Boolean') && v.value === true;
    case 'false':
      return is(v, 'Boolean') && v.value === false;
    case 'string':
      return is(v, 'String');
    case 'iterable':
    case 'sequence':
      return is(v, 'Array') || is(v, 'String') || is(v, 'Object');
    case 'mapping':
      return is(v, 'Object');
    case 'number':
      return is(v, 'Integer') || is(v, 'Float') || is(v, 'Boolean');
    case 'integer':
      return is(v, 'Integer');
    case 'float':
      return is(v, 'Float');
    case 'callable':
      return is(v, 'Function');
    case 'lower':
      return str_() !== null && str_() === str_()!.toLowerCase();
    case 'upper':
      return str_() !== null && str_() === str_()!.toUpperCase();
    case 'odd':
    case 'even':
      if (!is(v, 'Integer')) throw new Error(`cannot ${name} on ${pyType(v)}`);
      return ((v.value as number) % 2 !== 0) === (name === 'odd');
    case 'equalto':
    case 'eq':
    case '==':
      return pyEquals(v, args[0] ?? mk('Undefined'));
    case 'ne':
    case '!=':
      return !pyEquals(v, args[0] ?? mk('Undefined'));
    case 'in':
      return pyContains(args[0] ?? mk('Undefined'), v);
    default:
      throw new Error(`No test named '${name}'.`);
  }
}

/** Python's round(x, n) of a float: the double's exact decimal value rounded half to even. */
export function pyRound(x: number, n: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21 || n > 90) return x;
  if (n < 0) {
    const f = 10 ** -n;
    return pyRound(x / f, 0) * f;
  }
  const exact = Math.abs(x).toFixed(100); // the double's decimal expansion, exactly
  const [ip, fp] = exact.split('.') as [string, string];
  const kept = ip + fp.slice(0, n);
  const rest = fp.slice(n);
  const half = rest[0]! > '5' || (rest[0] === '5' && /[1-9]/.test(rest.slice(1))) ? 1 : rest[0] === '5' ? (Number(kept.at(-1)) % 2 === 1 ? 1 : 0) : 0;
  const digits = (BigInt(kept) + BigInt(half)).toString().padStart(n + 1, '0');
  const text = n === 0 ? digits : `${digits.slice(0, -n)}.${digits.slice(-n)}`;
  return (x < 0 ? -1 : 1) * Number(text);
}

/** A dict's items as Python gives them: a list of (key, value) tuples. */
function itemTuples(o: Value): Value {
  return mk('Array', [...(o.value as Map<string, Value>)].map(([k, v]) => mk('Tuple', [str(k), v])));
}

/** Python's `text % args` for %s %r %d %i %f %x %% (the `format` filter). */
export function pyPercent(text: string, args: Value[]): string {
  let i = 0;
  const out = text.replace(/%(\.\d+)?([srdifx%])/g, (_all, prec: string | undefined, c: string) => {
    if (c === '%') return '%';
    const v = args[i++];
    if (v === undefined) throw new Error('not enough arguments for format string');
    switch (c) {
      case 's':
        return pyStr(v);
      case 'r':
        return pyRepr(v);
      case 'd':
      case 'i':
        return pyIntText(Math.trunc(Number(v.value)));
      case 'x':
        return Math.trunc(Number(v.value)).toString(16);
      default:
        return Number(v.value).toFixed(prec ? Number(prec.slice(1)) : 6);
    }
  });
  if (i < args.length) throw new Error('not all arguments converted during string formatting');
  return out;
}

/** An attribute of an item as Jinja's `selectattr` reads it (a dotted path; Undefined when missing). */
function attribute(item: Value, path: string): Value {
  let v = item;
  for (const part of path.split('.')) {
    if (is(v, 'Object') || is(v, 'Namespace')) v = (v.value as Map<string, Value>).get(part) ?? mk('Undefined');
    else if (is(v, 'Array') && /^\d+$/.test(part)) v = (v.value as Value[])[Number(part)] ?? mk('Undefined');
    else return mk('Undefined');
  }
  return v;
}

/** A statement evaluated already (so that the library's own evaluator does not evaluate it twice). */
const DONE = 'PythonJinjaValue';
const done = (v: Value): Statement => ({ type: DONE, value: v }) as unknown as Statement;

/** Statements whose NullValue result is not printed (`{{ none }}` prints None; `{% set %}` prints nothing). */
const STATEMENTS = new Set(['Set', 'If', 'For', 'Macro', 'CallStatement', 'FilterStatement', 'Break', 'Continue', 'Comment', 'Program']);

type Node = Record<string, unknown> & { type: string };

class PythonInterpreter extends Interpreter {
  private lib(): { applyFilter(o: Value, f: Statement, e: Environment): Value; evaluateArguments(a: Statement[], e: Environment): [Value[], Map<string, Value>] } {
    return this as unknown as ReturnType<PythonInterpreter['lib']>;
  }

  override evaluate(statement: Statement | undefined, env: Environment): Value {
    if (!statement) return mk('Undefined');
    const node = statement as unknown as Node;
    switch (node.type) {
      case DONE:
        return node.value as Value;
      case 'BinaryExpression':
        return this.binary(node, env);
      case 'FilterExpression':
        return this.filter(this.evaluate(node.operand as Statement, env), node.filter as Statement, env);
      case 'TestExpression':
        return this.test(node, env);
      case 'MemberExpression':
        return this.member(node, env);
      case 'For':
        return this.forLoop(node, env);
      default:
        return super.evaluate(statement, env);
    }
  }

  /** Python's block output: each expression through `str()`, statements as they render. */
  pythonBlock(statements: Statement[], env: Environment): Value {
    let out = '';
    for (const s of statements) {
      const v = this.evaluate(s, env);
      if (STATEMENTS.has((s as unknown as Node).type) && (is(v, 'Null') || is(v, 'Undefined'))) continue;
      out += pyStr(v);
    }
    return str(out);
  }

  private binary(node: Node, env: Environment): Value {
    const op = (node.operator as { value: string }).value;
    if (op === 'and' || op === 'or') return super.evaluate(node as unknown as Statement, env);
    const l = this.evaluate(node.left as Statement, env);
    const r = this.evaluate(node.right as Statement, env);
    switch (op) {
      case '~':
        return str(pyStr(l) + pyStr(r));
      case '==':
        return bool(pyEquals(l, r));
      case '!=':
        return bool(!pyEquals(l, r));
      case 'in':
        return bool(pyContains(r, l));
      case 'not in':
        return bool(!pyContains(r, l));
      case '+':
        if (is(l, 'String') !== is(r, 'String')) {
          if (is(l, 'Undefined') || is(r, 'Undefined')) throw new Error(`'${describe((is(l, 'Undefined') ? node.left : node.right) as Statement)}' is undefined`);
          throw new Error(is(l, 'String') ? `can only concatenate str (not "${pyType(r)}") to str` : `unsupported operand type(s) for +: '${pyType(l)}' and 'str'`);
        }
        break;
      case '*': {
        const [seq, n] = is(l, 'Integer') ? [r, l] : [l, r];
        if (is(n, 'Integer') && (is(seq, 'String') || is(seq, 'Array'))) {
          const k = Math.max(0, n.value as number);
          if (is(seq, 'String')) return str((seq.value as string).repeat(k));
          return mk(is(seq, 'Tuple') ? 'Tuple' : 'Array', Array.from({ length: k }, () => seq.value as Value[]).flat());
        }
        break;
      }
      case '<':
      case '>':
      case '<=':
      case '>=':
        if (is(l, 'String') && is(r, 'String')) {
          const a = l.value as string;
          const b = r.value as string;
          return bool(op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b);
        }
        break;
    }
    return super.evaluate({ ...node, left: done(l), right: done(r) } as unknown as Statement, env);
  }

  private filter(operand: Value, filterNode: Statement, env: Environment): Value {
    const f = filterNode as unknown as Node;
    const name = f.type === 'Identifier' ? (f.value as string) : f.type === 'CallExpression' && (f.callee as Node).type === 'Identifier' ? ((f.callee as Node).value as string) : null;
    const args = (): [Value[], Map<string, Value>] => (f.type === 'CallExpression' ? this.lib().evaluateArguments(f.args as Statement[], env) : [[], new Map()]);
    switch (name) {
      case 'string':
        return str(pyStr(operand));
      case 'tojson': {
        const [, kw] = args();
        const opt = (k: string): Value | undefined => kw.get(k);
        const indent = opt('indent');
        const seps = opt('separators');
        return str(
          pyJson(operand, {
            ensureAscii: opt('ensure_ascii')?.__bool__().value ?? false,
            sortKeys: opt('sort_keys')?.__bool__().value ?? false,
            indent: indent === undefined || is(indent, 'Null') ? null : is(indent, 'String') ? (indent.value as string) : (indent.value as number),
            separators: seps && is(seps, 'Array') ? [pyStr((seps.value as Value[])[0]!), pyStr((seps.value as Value[])[1]!)] : null,
          }),
        );
      }
      case 'length':
      case 'count':
        if (is(operand, 'String')) return int(Array.from(operand.value as string).length);
        if (is(operand, 'Undefined')) return int(0);
        if (is(operand, 'Array')) return int((operand.value as Value[]).length);
        if (is(operand, 'Object')) return int((operand.value as Map<string, Value>).size);
        throw new Error(`object of type '${pyType(operand)}' has no len()`);
      case 'join': {
        const [pos, kw] = args();
        const sep = pos[0] ?? kw.get('d') ?? str('');
        const items = is(operand, 'Array') ? (operand.value as Value[]) : is(operand, 'String') ? Array.from(operand.value as string).map(str) : is(operand, 'Undefined') ? [] : null;
        if (items === null) throw new Error(`'${pyType(operand)}' object is not iterable`);
        return str(items.map(pyStr).join(pyStr(sep)));
      }
      case 'trim': {
        const [pos, kw] = args();
        return str(pyStrip(pyStr(operand), optString(pos[0] ?? kw.get('chars'), 'trim')));
      }
      case 'upper':
        return str(pyStr(operand).toUpperCase());
      case 'lower':
        return str(pyStr(operand).toLowerCase());
      case 'title':
        return str(jinjaTitle(pyStr(operand)));
      case 'capitalize':
        return str(pyCapitalize(pyStr(operand)));
      case 'list':
        if (is(operand, 'Array')) return mk('Array', [...(operand.value as Value[])]);
        if (is(operand, 'String')) return mk('Array', Array.from(operand.value as string).map(str));
        if (is(operand, 'Object')) return mk('Array', [...(operand.value as Map<string, Value>).keys()].map(str));
        if (is(operand, 'Undefined')) return mk('Array', []);
        throw new Error(`'${pyType(operand)}' object is not iterable`);
      case 'first':
      case 'last':
        if (is(operand, 'String')) {
          const cps = Array.from(operand.value as string);
          const c = name === 'first' ? cps[0] : cps.at(-1);
          return c === undefined ? mk('Undefined') : str(c);
        }
        break;
      case 'items':
        if (is(operand, 'Undefined')) return mk('Array', []);
        if (is(operand, 'Object')) return itemTuples(operand);
        break;
      case 'dictsort':
        if (is(operand, 'Object')) return mk('Array', (this.lib().applyFilter(operand, filterNode, env).value as Value[]).map((p) => mk('Tuple', p.value)));
        break;
      case 'format': {
        const [pos] = args();
        return str(pyPercent(pyStr(operand), pos));
      }
      case 'selectattr':
      case 'rejectattr':
      case 'select':
      case 'reject': {
        // Python: the test runs on every item, a missing attribute being Undefined (`selectattr('x', 'undefined')`).
        const [pos] = args();
        const items = is(operand, 'Array') ? (operand.value as Value[]) : is(operand, 'Undefined') ? [] : null;
        if (items === null) throw new Error(`'${pyType(operand)}' object is not iterable`);
        const byAttr = name.endsWith('attr');
        const [attr, testName, ...rest] = byAttr ? pos : [undefined, ...pos];
        const keep = name.startsWith('select');
        return mk(
          'Array',
          items.filter((item) => {
            const v = byAttr ? attribute(item, pyStr(attr!)) : item;
            const ok = testName === undefined ? v.__bool__().value : pyTest(pyStr(testName), v, rest as Value[]);
            return ok === keep;
          }),
        );
      }
      case 'round': {
        // Jinja's do_round: Python's round(value, precision) ('common'), else math.floor/ceil(value * 10**p) / 10**p.
        const [pos, kw] = args();
        if (!(is(operand, 'Integer') || is(operand, 'Float'))) break;
        const precision = ((pos[0] ?? kw.get('precision'))?.value as number | undefined) ?? 0;
        const method = pyStr(pos[1] ?? kw.get('method') ?? str('common'));
        const x = operand.value as number;
        if (method === 'common') return is(operand, 'Integer') && precision >= 0 ? operand : mk('Float', pyRound(x, precision));
        const f = 10 ** precision;
        return mk('Float', (method === 'floor' ? Math.floor(x * f) : Math.ceil(x * f)) / f);
      }
      case 'sum': {
        const [pos, kw] = args();
        if (!is(operand, 'Array')) break;
        const attr = kw.get('attribute') ?? pos[0];
        let total = (kw.get('start') ?? pos[1] ?? int(0)) as Value;
        for (const item of operand.value as Value[]) {
          const v = attr && !is(attr, 'Null') ? attribute(item, pyStr(attr)) : item;
          total = mk(is(total, 'Float') || is(v, 'Float') ? 'Float' : 'Integer', (total.value as number) + (v.value as number));
        }
        return total;
      }
      case 'reverse':
        if (is(operand, 'String')) return str(Array.from(operand.value as string).reverse().join(''));
        break;
    }
    return this.lib().applyFilter(operand, filterNode, env);
  }

  private test(node: Node, env: Environment): Value {
    const v = this.evaluate(node.operand as Statement, env);
    const r = pyTest((node.test as Node).value as string, v, []);
    return bool(node.negate ? !r : r);
  }

  private member(node: Node, env: Environment): Value {
    const object = this.evaluate(node.object as Statement, env);
    // Python: an attribute or item of an undefined value raises (jinja2.exceptions.UndefinedError).
    if (is(object, 'Undefined')) throw new Error(`'${describe(node.object as Statement)}' is undefined`);
    const prop = node.property as Node;
    if (is(object, 'String') && !node.computed && prop.type === 'Identifier') {
      const m = stringMethod(object.value as string, prop.value as string);
      if (m) return m;
    }
    // dict.items(): (key, value) tuples, as Python prints them.
    if (is(object, 'Object') && !node.computed && prop.type === 'Identifier' && prop.value === 'items') return fn(() => itemTuples(object));
    if (is(object, 'String') && node.computed && prop.type !== 'SliceExpression') {
      // Python indexes strings by code point.
      const p = this.evaluate(prop as unknown as Statement, env);
      if (is(p, 'Integer')) {
        const c = Array.from(object.value as string).at(p.value as number);
        return c === undefined ? mk('Undefined') : str(c);
      }
      return super.evaluate({ ...node, object: done(object), property: done(p) } as unknown as Statement, env);
    }
    if (node.computed && prop.type !== 'SliceExpression') {
      const p = this.evaluate(prop as unknown as Statement, env);
      return super.evaluate({ ...node, object: done(object), property: done(p) } as unknown as Statement, env);
    }
    return super.evaluate({ ...node, object: done(object) } as unknown as Statement, env);
  }

  private forLoop(node: Node, env: Environment): Value {
    const iterable = node.iterable as Node;
    const select = iterable.type === 'SelectExpression';
    const source = (select ? iterable.lhs : iterable) as Statement;
    let v = this.evaluate(source, env);
    // Python iterates an undefined value as empty and a string by character.
    if (is(v, 'Undefined')) v = mk('Array', []);
    else if (is(v, 'String')) v = mk('Array', Array.from(v.value as string).map(str));
    // The library unpacks `for k, v in ...` from lists only: tuples (items()) as lists for it.
    if ((node.loopvar as Node).type === 'TupleLiteral' && is(v, 'Array')) v = mk('Array', (v.value as Value[]).map((x) => (x.type === 'TupleValue' ? mk('Array', x.value) : x)));
    const it = select ? { ...iterable, lhs: done(v) } : done(v);
    return super.evaluate({ ...node, iterable: it } as unknown as Statement, env);
  }
}

// The library calls its private evaluateBlock from the program, If, For, macros and call blocks:
// this subclass's printing replaces it there (the library's own class is left as it is).
(PythonInterpreter.prototype as unknown as { evaluateBlock: unknown }).evaluateBlock = PythonInterpreter.prototype.pythonBlock;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's `datetime.strftime` for the directives chat templates use (local time, C locale). */
export function pyStrftime(d: Date, format: string): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return format.replace(/%([a-zA-Z%])/g, (all, c: string) => {
    switch (c) {
      case 'd': return p(d.getDate());
      case 'm': return p(d.getMonth() + 1);
      case 'Y': return String(d.getFullYear());
      case 'y': return p(d.getFullYear() % 100);
      case 'b': return MONTHS[d.getMonth()]!.slice(0, 3);
      case 'B': return MONTHS[d.getMonth()]!;
      case 'a': return DAYS[d.getDay()]!.slice(0, 3);
      case 'A': return DAYS[d.getDay()]!;
      case 'H': return p(d.getHours());
      case 'I': return p(d.getHours() % 12 === 0 ? 12 : d.getHours() % 12);
      case 'M': return p(d.getMinutes());
      case 'S': return p(d.getSeconds());
      case 'p': return d.getHours() < 12 ? 'AM' : 'PM';
      case 'j': return p(Math.floor((d.getTime() - new Date(d.getFullYear(), 0, 1).getTime()) / 86400000) + 1, 3);
      case '%': return '%';
      default: return all;
    }
  });
}

/** transformers' globals: raise_exception, strftime_now; Jinja's range, dict and the literals. */
function globals(env: Environment, now: () => Date): void {
  for (const [k, v] of [['true', true], ['false', false], ['none', null], ['True', true], ['False', false], ['None', null]] as const) env.setVariable(k, toPython(v));
  env.setVariable('raise_exception', fn((args) => {
    throw new Error(args.length > 0 ? pyStr(args[0]!) : 'raise_exception');
  }));
  env.setVariable('strftime_now', fn((args) => str(pyStrftime(now(), args[0] ? pyStr(args[0]) : ''))));
  env.setVariable('range', fn((args) => {
    const n = splitArgs(args)[0].map((a) => a.value as number);
    const [start, stop, step] = n.length === 1 ? [0, n[0]!, 1] : [n[0]!, n[1]!, n[2] ?? 1];
    if (step === 0) throw new Error('range() arg 3 must not be zero');
    const out: Value[] = [];
    for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(int(i));
    return mk('Array', out);
  }));
  env.setVariable('dict', fn((args) => {
    const [pos, kw] = splitArgs(args);
    const m = new Map<string, Value>(pos[0] && is(pos[0], 'Object') ? (pos[0].value as Map<string, Value>) : []);
    for (const [k, v] of kw) m.set(k, v);
    return mk('Object', m);
  }));
}

/** `{% generation %}...{% endgeneration %}` (transformers' AssistantTracker) renders its body: an `if true` block. */
function withoutGenerationTags(source: string): string {
  return source.replace(/(\{%[-+]?\s*)generation(\s*[-+]?%\})/g, '$1if true$2').replace(/(\{%[-+]?\s*)endgeneration(\s*[-+]?%\})/g, '$1endif$2');
}

export interface RenderOptions {
  /** The clock of `strftime_now` (tests fix it). */
  now?: () => Date;
}

/** A chat template compiled once, rendered with Python Jinja2's semantics (see the top of the file). */
export class PythonTemplate {
  private readonly program: Program;

  constructor(
    readonly source: string,
    private readonly options: RenderOptions = {},
  ) {
    this.program = parse(tokenize(withoutGenerationTags(source), { lstrip_blocks: true, trim_blocks: true }));
  }

  /** Render with these variables (messages, tools, documents, add_generation_prompt, special tokens, ...). */
  render(items: Record<string, unknown> = {}): string {
    const env = new Environment();
    globals(env, this.options.now ?? (() => new Date()));
    for (const [k, v] of Object.entries(items)) env.setVariable(k, toPython(v));
    const out = new PythonInterpreter(env).run(this.program);
    return out.value as string;
  }
}
