// A source's messages as the contract's normaliser reads them (role, content, name, tool_call_id,
// tool_calls). One function for every reader (parquet, DuckDB, JSONL, mineRows), so a source rule
// has one implementation. The rules are docs/mining-contract.md §10.1-§10.3:
//   - every source but the contract's own layout: role `ai` -> `assistant`, `human` -> `user`
//     (the other roles are kept: observations written as `user` compare by content, as §3.1 says);
//   - `swe-agent` (nebius/SWE-agent-trajectories): the text is in `text`; a message whose `text` is
//     null takes `system_prompt` (the system message carries its prompt there); `mask` and
//     `cutoff_date` are dropped;
//   - `swe-smith` (SWE-agent 1.x history, split `tool`): a `content` list of parts becomes the
//     concatenation of the parts' `text` strings; `tool_call_ids` (a list) gives `tool_call_id` (its
//     ids joined by ",").
// Messages given as JSON text are parsed first. A value that is not a list, or an item that is not an
// object, is passed on unchanged: the normaliser reports it (§4.4).
import { BadValue } from '../contract/normalise.js';
import { nestedDeeperThan, tooDeepMessage } from '../contract/json-depth.js';
import { parseKeepingNumbers } from '../contract/json-numbers.js';
import type { SchemaName } from './schema.js';

export const ROLE_ALIASES: Readonly<Record<string, string>> = { ai: 'assistant', human: 'user' };

/** JSON text parsed (text that is not JSON stays as it is); a BadValue when it nests too deeply. */
export function parseIfString(v: unknown, what = 'JSON text'): unknown {
  if (typeof v !== 'string') return v;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    return v;
  }
  if (nestedDeeperThan(parsed)) throw new BadValue(tooDeepMessage(what));
  // Arguments given as objects inside the text keep their numbers' source text (contract v3, 11).
  return parseKeepingNumbers(v, parsed);
}

type Obj = Record<string, unknown>;

/** The text of a content given as a list of parts (`[{type: "text", text}]`); other values unchanged. */
function partsText(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  if (!content.every((p) => p !== null && typeof p === 'object' && typeof (p as Obj).text === 'string')) return content;
  return content.map((p) => (p as Obj).text as string).join('');
}

function mapMessage(m: unknown, schema: SchemaName): unknown {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return m;
  const o = m as Obj;
  const alias = typeof o.role === 'string' && Object.hasOwn(ROLE_ALIASES, o.role) ? ROLE_ALIASES[o.role] : undefined;
  if (schema === 'swe-agent') {
    const text = 'text' in o ? o.text : o.content;
    return { role: alias ?? o.role, content: text ?? (typeof o.system_prompt === 'string' ? o.system_prompt : null), name: o.name, tool_call_id: o.tool_call_id, tool_calls: o.tool_calls };
  }
  if (schema === 'swe-smith') {
    const ids = o.tool_call_ids;
    const out: Obj = { ...o, content: partsText(o.content) };
    if (alias) out.role = alias;
    if (o.tool_call_id == null && Array.isArray(ids) && ids.every((x) => typeof x === 'string')) out.tool_call_id = ids.join(',');
    return out;
  }
  return alias ? { ...o, role: alias } : m;
}

/** The messages value of a source row, ready for the normaliser (see the module header). */
export function sourceMessages(v: unknown, schema: SchemaName, what = 'messages'): unknown {
  const list = parseIfString(v, what);
  if (!Array.isArray(list)) return list;
  return list.map((m) => mapMessage(m, schema));
}
