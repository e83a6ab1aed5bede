// Contract section 2: what is kept of each message, and how tool calls are normalised.
import { parseJson, parseJsonText } from './json-depth.js';
import type { Message, RawMessage, ToolCall } from '../types.js';

/** Per-trajectory tallies that normalisation produces (contract counters). */
export interface NormaliseTally {
  malformed_arguments: number;
  unknown_roles: number;
}

/** Thrown for a value of the wrong type; the reader adds file / row context. */
export class BadValue extends Error {}

/** Remove spaces and tabs at the end of every "\n"-separated line (contract v2: "\n" is the only line end). */
function stripLineEndBlanks(s: string): string {
  // A scan from each "\n" backwards: linear, and ~10x faster than a regex, which backtracks through
  // every blank run not at a line end (pytest -v pads lines with ~900 spaces). indexOf is a memchr.
  let out = '';
  let copied = 0;
  let lineStart = 0;
  for (let end = s.indexOf('\n'); end !== -1; end = s.indexOf('\n', end + 1)) {
    let k = end;
    for (let c = s.charCodeAt(k - 1); k > lineStart && (c === 32 || c === 9); c = s.charCodeAt(--k - 1));
    if (k < end) {
      out += s.slice(copied, k);
      copied = end;
    }
    lineStart = end + 1;
  }
  return copied === 0 ? s : out + s.slice(copied);
}

/** norm(s): null -> "", CRLF -> LF, trailing spaces/tabs stripped per "\n" line, whole string trimmed. */
export function norm(s: string | null | undefined): string {
  if (s == null) return '';
  if (s.includes('\r\n')) s = s.replace(/\r\n/g, '\n');
  // The last line's trailing blanks go with trim().
  return stripLineEndBlanks(s).trim();
}

const CRLF = Buffer.from('\r\n');

/**
 * Whether norm leaves the text of these UTF-8 bytes as it is, answered on the bytes: no CRLF, no
 * space or tab before a "\n", and printable ASCII at both ends (trim() removes Unicode white space,
 * so any other first or last byte says "maybe not"). False means only that the text must be normed.
 */
export function normKeepsUtf8(b: Buffer): boolean {
  const n = b.length;
  if (n === 0) return true;
  const first = b[0]!;
  const last = b[n - 1]!;
  if (first <= 0x20 || first >= 0x7f || last <= 0x20 || last >= 0x7f) return false;
  // "\r" is rare, so the search for CRLF is fast; " \n" is not (the space is everywhere): the byte
  // before each "\n" is looked at instead (memchr, about 5 GB/s on tool output).
  if (b.indexOf(CRLF) !== -1) return false;
  for (let p = b.indexOf(10); p !== -1; p = b.indexOf(10, p + 1)) {
    const c = b[p - 1];
    if (c === 32 || c === 9) return false;
  }
  return true;
}

function optString(v: unknown, field: string): string | null {
  if (v == null) return null;
  if (typeof v === 'string') return v;
  throw new BadValue(`${field} must be a string or null, found ${typeof v}`);
}

function asCallList(v: unknown): unknown[] | null {
  if (v == null || v === 'None') return null;
  if (typeof v === 'string') {
    // JSONL exports sometimes carry the list as a JSON string.
    return asCallList(parseJsonText(v, 'tool_calls', 'tool_calls is a string that is neither "None" nor a JSON list', 'text'));
  }
  if (!Array.isArray(v)) throw new BadValue(`tool_calls must be a list or null, found ${typeof v}`);
  return v.length === 0 ? null : v;
}

export function normaliseToolCall(v: unknown, tally: NormaliseTally): ToolCall {
  if (v == null || typeof v !== 'object') throw new BadValue('a tool call must be an object');
  const c = v as Record<string, unknown>;
  const f = (c.function ?? {}) as Record<string, unknown>;
  if (typeof f !== 'object') throw new BadValue('tool_calls[].function must be an object');
  const call: ToolCall = {
    id: optString(c.id, 'tool_calls[].id'),
    type: optString(c.type, 'tool_calls[].type'),
    function: { name: optString(f.name, 'tool_calls[].function.name'), arguments: f.arguments ?? null },
  };
  if (typeof f.arguments === 'string') {
    try {
      // Numbers keep their source text for the output; signatures read them by value (sign.ts).
      call.function.arguments = parseJson(f.arguments, 'tool_calls[].function.arguments', 'text');
    } catch (e) {
      if (e instanceof BadValue) throw e;
      call.function.arguments = f.arguments;
      call.malformed = true;
      tally.malformed_arguments++;
    }
  }
  return call;
}

export function normaliseMessage(raw: RawMessage, tally: NormaliseTally): Message {
  if (raw == null || typeof raw !== 'object') throw new BadValue('a message must be an object');
  const role = raw.role;
  if (typeof role !== 'string' || role === '') throw new BadValue('message role must be a non-empty string');
  const content = optString(raw.content, 'content');
  switch (role) {
    case 'system':
    case 'user':
      return { role, content };
    case 'assistant': {
      const list = asCallList(raw.tool_calls);
      return { role, content, tool_calls: list && list.map((c) => normaliseToolCall(c, tally)) };
    }
    case 'tool':
      return {
        role,
        content,
        name: optString(raw.name, 'name'),
        tool_call_id: optString(raw.tool_call_id, 'tool_call_id'),
      };
    default:
      tally.unknown_roles++;
      return { role, content };
  }
}


/** Normalise a raw trajectory value; throws BadValue with the message index on bad input. */
export function normaliseTrajectory(value: unknown, tally: NormaliseTally): Message[] {
  if (!Array.isArray(value)) throw new BadValue(value == null ? 'trajectory is null' : 'trajectory is not a list');
  return value.map((m: RawMessage, i) => {
    try {
      return normaliseMessage(m, tally);
    } catch (e) {
      if (e instanceof BadValue) throw new BadValue(`message ${i}: ${e.message}`);
      throw e;
    }
  });
}
