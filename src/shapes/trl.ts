// `--shape trl`: the published row (contract section 6) reshaped for TRL's DPOTrainer.
//
// What TRL expects (huggingface/trl, trl/data_utils.py `apply_chat_template` and
// trl/trainer/dpo_trainer.py `tokenize_fn`; docs/source/dataset_formats.md "Tool Calling"):
// - conversational preference data: `prompt`, `chosen`, `rejected` are lists of {role, content, ...}
//   messages; the trainer renders prompt (add_generation_prompt=True), prompt+chosen and
//   prompt+rejected, and warns when the tokenized prompt is not a prefix of prompt+completion.
// - assistant tool calls as `tool_calls: [{type: "function", function: {name, arguments}}]` with
//   `arguments` a JSON object; tool results as {role: "tool", name, content}.
// - an optional per-row `tools` column; the trainer does `json.loads(tools)` when it is a string,
//   and the docs recommend a JSON string for `datasets` < 4.7 (no `Json()` feature type).
import type { RowMeta } from '../contract/emit.js';
import type { EmittedMessage, PairRow } from '../types.js';
import { parseJsonText } from '../contract/json-depth.js';
import { BadValue } from '../contract/normalise.js';
import { eachNumber, jsonFeatureMayChange, jsonLoaderMayChange, jsonTextByValue, numbersByValue, stringifyKeepingNumbers } from '../contract/json-numbers.js';

export type ArgumentsMode = 'object' | 'string';

export interface TrlToolCall {
  id: string | null;
  type: string | null;
  function: { name: string | null; arguments: unknown };
}

/**
 * A message in the trl shape. `content` is always a string (null becomes ""): chat templates
 * concatenate it. `tool_calls` is present only on assistant messages that make calls (a real
 * array); tool messages keep `name` and `tool_call_id`.
 */
export interface TrlMessage {
  role: string;
  content: string;
  tool_calls?: TrlToolCall[];
  name?: string | null;
  tool_call_id?: string | null;
}

/** One output row in the `trl` shape. Field order: prompt, chosen, rejected, metadata, tools. */
export interface TrlRow extends RowMeta {
  prompt: TrlMessage[];
  chosen: TrlMessage[];
  rejected: TrlMessage[];
  /** Only when `--prompt-window` is given (see window.ts). */
  prompt_messages_dropped?: number;
  /** JSON string of the cleaned tool definitions, or null when the trajectory has none. */
  tools: string | null;
}

export interface TrlOptions {
  /** The raw `tools` value of the resolved (chosen) trajectory: list, JSON string, or null. */
  tools: unknown | null;
  arguments: ArgumentsMode;
  /** The `tools` column already computed with `toolsColumn` (per trajectory); overrides `tools`. */
  toolsJson?: string | null;
  /** Incremented for every call whose arguments had to be wrapped (object mode). */
  tally?: TrlTally;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Arrow rows / vectors carry `toJSON`; plain objects and arrays do not need it. */
function plain(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) !== Object.prototype) {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as () => unknown).call(v);
  }
  return v;
}

/**
 * Remove the upstream null placeholders: every object key whose value is null is dropped, at
 * every depth (the parquet `tools` column lists all 12 parameter names on every tool, null where a
 * tool lacks one, and schema fields such as `enum`, `items`, `additionalProperties` are null where
 * unused). Array elements are kept as they are (nulls inside arrays are data, not placeholders).
 */
export function stripNulls(v: unknown): unknown {
  v = plain(v);
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v !== null && typeof v === 'object') {
    // Null prototype: a "__proto__" key is data and must be kept, not become the prototype.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, val] of Object.entries(v)) {
      if (val === null || val === undefined) continue;
      out[k] = stripNulls(val);
    }
    return out;
  }
  return v;
}

/**
 * The trajectory's tool definitions without the upstream null placeholders.
 * Accepts the parquet list of structs (objects with null keys), a JSON string of that list, or an
 * already-clean list (idempotent). null, undefined, "" and "None" mean "no tools" -> [].
 */
export function cleanTools(rawTools: unknown): object[] {
  let v = plain(rawTools);
  if (v == null) return [];
  if (typeof v === 'string') {
    const s = v.trim();
    if (s === '' || s === 'None' || s === 'null') return [];
    v = parseJsonText(s, 'tools', 'tools is a string that is not JSON');
    if (v == null) return [];
  }
  if (!Array.isArray(v)) throw new BadValue(`tools must be a list of tool definitions, found ${typeof v}`);
  const out: object[] = [];
  for (const t of v) {
    const c = stripNulls(t);
    if (c == null) continue;
    if (!isPlainObject(c)) throw new BadValue('each tool definition must be an object');
    out.push(c);
  }
  return out;
}

/**
 * The `tools` column value: JSON string of `cleanTools(rawTools)`, or null when there are none
 * (TRL passes `tools or None`: an empty list makes some templates render tool boilerplate).
 */
export function toolsColumn(rawTools: unknown): string | null {
  const tools = cleanTools(rawTools);
  return tools.length > 0 ? JSON.stringify(tools) : null;
}

/**
 * `toolsColumn` memoised on the raw value's JSON text: every trajectory of a dataset usually shares
 * one tool list, so the mine loop cleans it once. Keeps the last `size` distinct inputs.
 */
export function makeToolsColumnCache(size = 8): (rawTools: unknown) => string | null {
  const cache = new Map<string, string | null>();
  return (rawTools) => {
    const key = typeof rawTools === 'string' ? rawTools : (JSON.stringify(rawTools ?? null) ?? 'null');
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const value = toolsColumn(rawTools);
    if (cache.size >= size) cache.delete(cache.keys().next().value as string);
    cache.set(key, value);
    return value;
  };
}

function parseCalls(v: unknown): unknown[] {
  if (v == null || v === 'None') return [];
  if (typeof v === 'string') {
    // Numbers keep their source text (contract v3, 11): argument values hold LosslessNumbers where it differs from JS's.
    return parseCalls(parseJsonText(v, 'tool_calls', 'tool_calls is a string that is not JSON', 'text'));
  }
  v = plain(v);
  if (!Array.isArray(v)) throw new BadValue('tool_calls must be a JSON list or null');
  return v;
}

/**
 * The key that holds a call's arguments when they are not a JSON object (`--arguments object`):
 * the contract keeps malformed arguments as the raw string (e.g. truncated JSON or a Python repr),
 * and templates that iterate `arguments | items` cannot render a string. The raw text is kept,
 * under this one key, so the row renders and the action stays visibly malformed.
 */
export const MALFORMED_ARGUMENTS_KEY = 'malformed_arguments';

/** Counts what the conversion changed (optional; the mine loop may report it). */
export interface TrlTally {
  wrapped_arguments: number;
  /**
   * Numbers in argument objects that Python `datasets` may read as another number: from JSONL
   * (`jsonl`) or from parquet (`parquet`), see json-numbers.ts jsonLoaderMayChange. Optional: only
   * the mine loop counts them.
   */
  python_numbers?: { jsonl: number; parquet: number; example?: string };
}

function countPythonNumbers(args: unknown, tally: TrlTally | undefined): void {
  const t = tally?.python_numbers;
  if (!t) return;
  eachNumber(args, (n) => {
    const j = jsonLoaderMayChange(n);
    if (j) t.jsonl++;
    if (jsonFeatureMayChange(n)) t.parquet++;
    if (j && t.example === undefined) t.example = typeof n === 'number' ? JSON.stringify(n) : n.value;
  });
}

function objectArguments(args: unknown, tally: TrlTally | undefined): Record<string, unknown> {
  if (isPlainObject(args)) {
    countPythonNumbers(args, tally);
    return args;
  }
  if (args === null || args === undefined) return {};
  if (tally) tally.wrapped_arguments++;
  return { [MALFORMED_ARGUMENTS_KEY]: typeof args === 'string' ? args : stringifyKeepingNumbers(args) };
}

function toTrlCall(c: unknown, mode: ArgumentsMode, tally?: TrlTally): TrlToolCall {
  if (!isPlainObject(c)) throw new BadValue('a tool call must be an object');
  const f = isPlainObject(c.function) ? c.function : {};
  const raw = f.arguments ?? null;
  // 'string': the JSON text of parsed arguments; a malformed call keeps its raw string verbatim.
  // 'object': parsed arguments as they are; anything else wrapped (see MALFORMED_ARGUMENTS_KEY).
  const args = mode === 'string' ? (typeof raw === 'string' ? raw : stringifyKeepingNumbers(raw ?? {})) : objectArguments(raw, tally);
  return {
    id: typeof c.id === 'string' ? c.id : null,
    type: typeof c.type === 'string' ? c.type : null,
    function: { name: typeof f.name === 'string' ? f.name : null, arguments: args },
  };
}

/** One published message (role's fields, tool_calls as JSON string) in the trl shape. */
export function toTrlMessage(m: EmittedMessage, mode: ArgumentsMode, tally?: TrlTally): TrlMessage {
  const content = m.content ?? '';
  switch (m.role) {
    case 'assistant': {
      const calls = parseCalls(m.tool_calls);
      if (calls.length === 0) return { role: m.role, content };
      return { role: m.role, content, tool_calls: calls.map((c) => toTrlCall(c, mode, tally)) };
    }
    case 'tool':
      return { role: m.role, content, name: m.name ?? null, tool_call_id: m.tool_call_id ?? null };
    default:
      return { role: m.role, content };
  }
}

/**
 * The message as contract v2 made it, numbers by value (json-numbers.ts): what exact-duplicate keys
 * of trl messages compare (kto.ts). The message itself when nothing differs.
 */
export function trlMessageByValue(m: TrlMessage): TrlMessage {
  if (!m.tool_calls) return m;
  let changed = false;
  const calls = m.tool_calls.map((c) => {
    const a = c.function.arguments;
    const v = typeof a === 'string' ? jsonTextByValue(a) : numbersByValue(a);
    if (v === a) return c;
    changed = true;
    return { ...c, function: { ...c.function, arguments: v } };
  });
  return changed ? { ...m, tool_calls: calls } : m;
}

/** Convert a published row. `prompt_messages_dropped` is carried over when the row has it. */
export function toTrlRow(row: PairRow & { prompt_messages_dropped?: number }, opts: TrlOptions): TrlRow {
  const mode = opts.arguments;
  const t = opts.tally;
  const out: TrlRow = {
    prompt: row.prompt.map((m) => toTrlMessage(m, mode, t)),
    chosen: [toTrlMessage(row.chosen, mode, t)],
    rejected: [toTrlMessage(row.rejected, mode, t)],
    instance_id: row.instance_id,
    repo: row.repo,
    chosen_trajectory_id: row.chosen_trajectory_id,
    rejected_trajectory_id: row.rejected_trajectory_id,
    divergence_turn: row.divergence_turn,
    divergence_msg_index: row.divergence_msg_index,
    action_similarity: row.action_similarity,
    ...(row.prompt_messages_dropped !== undefined ? { prompt_messages_dropped: row.prompt_messages_dropped } : {}),
    tools: opts.toolsJson !== undefined ? opts.toolsJson : toolsColumn(opts.tools),
  };
  return out;
}

/**
 * Calls in a trl row whose `arguments` are not a JSON object. `toTrlRow` in object mode never
 * produces any; rows from elsewhere (or in string mode) can have them, and templates that iterate
 * `arguments | items` cannot render those rows.
 */
export function nonObjectArguments(row: Pick<TrlRow, 'prompt' | 'chosen' | 'rejected'>): number {
  let n = 0;
  for (const list of [row.prompt, row.chosen, row.rejected])
    for (const m of list) for (const c of m.tool_calls ?? []) if (!isPlainObject(c.function.arguments)) n++;
  return n;
}
