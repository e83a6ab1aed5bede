// Trajectory sources. Which columns hold the id / instance / messages / label, and which
// action-signature scheme applies, detected from the column names (and one sample row when there is
// one) or given with --schema and the column options.
//
// Known sources. Evidence for the column names:
//   nebius: fixtures/README.md (the upstream parquet's columns).
//   Open-SWE-Traces: the Hugging Face dataset viewer of nvidia/Open-SWE-Traces
//     (https://huggingface.co/datasets/nvidia/open-swe-traces): instance_id, repo, license, language,
//     trajectory_id (36-char UUID), messages (list), tools (list of 4 JSON strings), resolved (int32,
//     -1..1), metadata, hf_dataset_name. The inner message fields (role/content/tool_calls, whether
//     arguments are strings) were NOT confirmed: both forms are accepted by the normaliser.
//   SWE-Gym: the raw schema used by neulab/agent-data-protocol for SWE-Gym/OpenHands-Sampled-
//     Trajectories (split train.raw): instance_id, run_id, resolved (bool), messages (OpenAI chat
//     messages with tool_calls, arguments as JSON strings), tools (list of objects), test_result.
//     instance_id repeats across runs; there is no per-row id column.
//
// | source                                   | schema          | id              | instance    | messages   | resolved          | tools                    |
// |------------------------------------------|-----------------|-----------------|-------------|------------|-------------------|--------------------------|
// | nebius/SWE-rebench-openhands-trajectories| openhands       | trajectory_id   | instance_id | trajectory | resolved (int64)  | tools (list of structs)  |
// | nvidia/Open-SWE-Traces                   | open-swe-traces | trajectory_id   | instance_id | messages   | resolved (int32, -1/0/1) | tools (list of JSON strings) |
// | SWE-Gym/OpenHands-Sampled-Trajectories   | openhands       | run_id+instance_id | instance_id | messages | resolved (bool) | tools (list of structs) |
// | SWE-agent / mini-swe-agent exports       | text-actions    | trajectory_id / traj_id / id | instance_id | messages | resolved | -                  |
//
// Auto-detection (when neither --source nor --schema is given): docs/mining-contract.md §10.9, in
// this order: column names alone (layoutFromColumns: swe-agent, coderforge); the sample row's assistant
// messages without tool calls (XML calls -> swe-smith, a ```bash fence -> text-actions); traj_id +
// messages -> swe-smith; bare fences only -> swe-smith; trajectory_id + messages -> open-swe-traces;
// else openhands. Columns per role:
//   id:       the first present of trajectory_id, traj_id, id; else run_id + instance_id joined by ":"
//             (SWE-Gym has no per-row id: one row per (run, instance)); none for swe-agent (synthesised,
//             identity.ts).
//   instance: instance_id (or from the id by --instance-from-id).   resolved: resolved, target, reward.
//   tools: tools (optional).    repo: repo (optional).
//   messages: messages, then trajectory. With a sample row, a column whose value is present but is
//             not a list of objects with a string `role` (or a JSON string of one) is passed over.
// `--source NAME` (corpora.ts) stands for a schema and the column options of its corpus.
// Explicit options (--id-column, --instance-column, --messages-column, --resolved-column, --schema)
// replace the corresponding choice; an id option may name several columns joined by ",". A named
// column that does not exist, or a role no candidate fills, is a schema error that lists the
// columns found.
//
// `toStandardRow` converts any source row to the openhands-style row the pipeline reads
// (trajectory_id, instance_id, repo, resolved, trajectory, tools):
//   - `resolved` is copied unchanged: Open-SWE-Traces -1 (and anything but 0/1/true/false) stays
//     unlabelled by contract section 1; SWE-Gym booleans are labels as they are.
//   - messages: the source's messages (messages.ts: JSON text parsed, role aliases, per-schema fields),
//     except in the contract's own layout, whose values are passed as they are.
//   - tools given as a JSON string, or as a list whose items are JSON strings (Open-SWE-Traces), are
//     parsed item by item; an item that does not parse is kept as the string.
//   - a composite id is the parts joined by ":" when every part is a non-empty string, else null
//     (a bad row under the contract).
import { ExitCode, UserError } from '../errors.js';
import { nestedDeeperThan } from '../contract/json-depth.js';
import { lastActionBlock, xmlFunctionCalls } from './text-actions.js';
import { SOURCES, SOURCE_NAMES, isSourceName, type SourceName } from './corpora.js';
import { parseIfString, sourceMessages } from './messages.js';

export { SOURCES, SOURCE_NAMES, CODERFORGE_INSTANCE, type SourceName } from './corpora.js';

export type SchemaName = 'openhands' | 'open-swe-traces' | 'text-actions' | 'swe-agent' | 'swe-smith';
export const SCHEMAS: readonly SchemaName[] = ['openhands', 'open-swe-traces', 'text-actions', 'swe-agent', 'swe-smith'];

export interface ColumnMapping {
  /**
   * One column, or several whose values are joined by ":" (SWE-Gym: run_id, instance_id). An empty
   * list: the input has no run id, and one is made from the instance (identity.ts, synthesised ids).
   */
  id: string | readonly string[];
  /** The instance column; null when the instance is taken from the id by `instanceFromId`. */
  instance: string | null;
  /** A regular expression (source text) whose first group, matched on the trajectory id, is the instance. */
  instanceFromId?: string | null;
  /** `--pair-within`: columns (a dotted path reaches into a struct) whose values must also be equal in a pair. */
  pairWithin?: readonly PairWithinColumn[];
  messages: string;
  resolved: string;
  tools: string | null;
  repo: string | null;
}

/** One `--pair-within` column: the top-level column and the path of struct fields under it. */
export interface PairWithinColumn {
  /** As given on the command line. */
  name: string;
  column: string;
  path: readonly string[];
}

export interface SchemaOverrides {
  schema?: SchemaName;
  /** `--source NAME`: a known corpus (SOURCES); fills in the schema and every column option not given. */
  source?: SourceName;
  /** `--instance-from-id REGEX` (sources.ts CODERFORGE_INSTANCE is the built-in one). */
  instanceFromId?: string;
  /** `--pair-within COLUMN[,COLUMN]`. */
  pairWithin?: readonly string[];
  /** The input has no run id: make one from the instance (set by sources whose corpus has none). */
  synthesiseId?: boolean;
  /** A column name, or several joined by "," (a composite id). */
  idColumn?: string;
  instanceColumn?: string;
  messagesColumn?: string;
  resolvedColumn?: string;
}

export interface Detection {
  schema: SchemaName;
  mapping: ColumnMapping;
  /** True when the schema was detected rather than given. */
  auto: boolean;
  /** Why this schema (for the line the CLI prints). */
  reason: string;
}

export const ID_CANDIDATES: readonly string[] = ['trajectory_id', 'traj_id', 'id'];
export const COMPOSITE_ID: readonly string[] = ['run_id', 'instance_id'];
export const INSTANCE_CANDIDATES: readonly string[] = ['instance_id'];
export const MESSAGES_CANDIDATES: readonly string[] = ['messages', 'trajectory'];
export const RESOLVED_CANDIDATES: readonly string[] = ['resolved', 'target', 'reward'];

/** A schema error (exit code 6), listing the columns found. */
export class SchemaError extends UserError {
  constructor(message: string, columns: readonly string[]) {
    super(`${message} (found columns: ${columns.length > 0 ? columns.join(', ') : 'none'})`, ExitCode.schema);
    this.name = 'SchemaError';
  }
}

export function isSchemaName(s: string): s is SchemaName {
  return (SCHEMAS as readonly string[]).includes(s);
}

/** parseIfString for detection, which only looks: too-deep text is no evidence (the decode pass reports it). */
function peekIfString(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    const parsed: unknown = JSON.parse(v);
    return nestedDeeperThan(parsed) ? v : parsed;
  } catch {
    return v;
  }
}

/** A list of objects with a string `role` (the first 20 items are checked). */
function looksLikeMessages(v: unknown): boolean {
  const list = peekIfString(v);
  if (!Array.isArray(list) || list.length === 0) return false;
  return list.slice(0, 20).every((m) => m !== null && typeof m === 'object' && typeof (m as { role?: unknown }).role === 'string');
}

function sampleValue(sample: unknown, column: string): unknown {
  if (sample === null || typeof sample !== 'object') return undefined;
  return (sample as Record<string, unknown>)[column];
}

function hasCalls(tc: unknown): boolean {
  const v = peekIfString(tc);
  return Array.isArray(v) && v.length > 0;
}

/** What the sample row's messages say: assistant tool calls, XML function calls, action fences. */
function sampleActions(messages: unknown): { calls: boolean; xml: boolean; fences: boolean; bareFences: boolean; assistants: number } {
  const list = peekIfString(messages);
  const out = { calls: false, xml: false, fences: false, bareFences: false, assistants: 0 };
  if (!Array.isArray(list)) return out;
  for (const m of list) {
    if (m === null || typeof m !== 'object') continue;
    const role = (m as { role?: unknown }).role;
    if (role !== 'assistant' && role !== 'ai') continue;
    out.assistants++;
    const msg = m as { content?: unknown; text?: unknown; tool_calls?: unknown };
    const content = typeof msg.content === 'string' ? msg.content : typeof msg.text === 'string' ? msg.text : null;
    if (hasCalls(msg.tool_calls)) out.calls = true;
    else if (content !== null && xmlFunctionCalls(content).length > 0) out.xml = true;
    else if (content !== null && lastActionBlock(content)) out.fences = true;
    else if (content !== null && lastActionBlock(content, { bareFence: true })) out.bareFences = true;
  }
  return out;
}

function splitList(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** `--pair-within` names resolved against the columns: the longest leading dotted part that is a column. */
export function resolvePairWithin(names: readonly string[], columnNames: readonly string[]): PairWithinColumn[] {
  const cols = new Set(columnNames);
  return names.map((name) => {
    const parts = name.split('.');
    for (let k = parts.length; k >= 1; k--) {
      const column = parts.slice(0, k).join('.');
      if (cols.has(column)) return { name, column, path: parts.slice(k) };
    }
    throw new SchemaError(`--pair-within ${name}: no such column`, columnNames);
  });
}

/** `--instance-from-id`: the regular expression, checked (a usage error when it does not compile). */
export function instancePattern(source: string): RegExp {
  try {
    return new RegExp(source, 'u');
  } catch (e) {
    throw new UserError(`--instance-from-id ${source}: not a regular expression (${(e as Error).message})`, ExitCode.usage);
  }
}

/** The overrides of `--source NAME` under those given explicitly (explicit ones win). */
function withSource(overrides: SchemaOverrides): SchemaOverrides {
  if (overrides.source === undefined) return overrides;
  if (!isSourceName(overrides.source)) {
    throw new UserError(`--source ${String(overrides.source)}: expected one of ${SOURCE_NAMES.join(', ')}`, ExitCode.usage);
  }
  const preset = SOURCES[overrides.source].overrides;
  if (overrides.schema !== undefined && overrides.schema !== preset.schema) {
    throw new UserError(`--source ${overrides.source} reads schema ${preset.schema}; leave out --schema ${overrides.schema}`, ExitCode.usage);
  }
  const own = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) as SchemaOverrides;
  const merged: SchemaOverrides = { ...preset, ...own };
  // A column given for a role replaces the preset's rule for that role.
  if (own.idColumn !== undefined) delete merged.synthesiseId;
  if (own.instanceColumn !== undefined && own.instanceFromId === undefined) delete merged.instanceFromId;
  return merged;
}

/** The layouts recognised from the column names alone (no option, no sample needed). */
function layoutFromColumns(cols: ReadonlySet<string>): { source: SourceName; reason: string } | null {
  const hasId = ID_CANDIDATES.some((c) => cols.has(c)) || COMPOSITE_ID.every((c) => cols.has(c));
  if (!hasId && cols.has('instance_id') && cols.has('trajectory') && cols.has('target')) {
    return { source: 'swe-agent', reason: 'columns instance_id + trajectory + target, no run id (nebius/SWE-agent-trajectories layout)' };
  }
  if (cols.has('trajectory_id') && !cols.has('instance_id') && cols.has('messages') && cols.has('reward')) {
    return { source: 'coderforge', reason: 'columns trajectory_id + messages + reward, no instance_id (togethercomputer/CoderForge-Preview layout)' };
  }
  return null;
}

/** Detect (or apply) the schema and the column mapping. Throws SchemaError. */
export function detectSchema(columnNames: readonly string[], sampleRow?: unknown, given: SchemaOverrides = {}): Detection {
  const cols = new Set(columnNames);
  const err = (msg: string) => new SchemaError(msg, columnNames);
  const named = (option: string, column: string | undefined): string | undefined => {
    if (column === undefined) return undefined;
    if (!cols.has(column)) throw err(`${option} ${column}: no such column`);
    return column;
  };
  if (given.schema !== undefined && !isSchemaName(given.schema)) {
    throw new UserError(`--schema ${String(given.schema)}: expected one of ${SCHEMAS.join(', ')}`, ExitCode.usage);
  }
  const byColumns = given.source === undefined && given.schema === undefined ? layoutFromColumns(cols) : null;
  const overrides = withSource(byColumns ? { ...given, source: byColumns.source } : given);
  const fromSource = overrides.source !== undefined ? (given.source ?? null) : null;
  if (overrides.instanceFromId !== undefined) instancePattern(overrides.instanceFromId);
  if (overrides.instanceFromId !== undefined && given.instanceColumn !== undefined) {
    throw new UserError('give --instance-column or --instance-from-id, not both', ExitCode.usage);
  }

  // id
  let id: string | string[] | undefined;
  if (overrides.idColumn !== undefined) {
    const parts = splitList(overrides.idColumn);
    if (parts.length === 0) throw new UserError('--id-column: no column named', ExitCode.usage);
    parts.forEach((p) => named(fromSource && given.idColumn === undefined ? `--source ${fromSource}: id column` : '--id-column', p));
    id = parts.length === 1 ? parts[0]! : parts;
  } else if (overrides.synthesiseId) {
    id = [];
  } else {
    id = ID_CANDIDATES.find((c) => cols.has(c));
    if (id === undefined && COMPOSITE_ID.every((c) => cols.has(c))) id = [...COMPOSITE_ID];
  }
  const presetName = (option: string, v: string | undefined, own: string | undefined) => (fromSource && own === undefined && v !== undefined ? `--source ${fromSource}: ${option.replace(/^--/, '').replace('-column', '')} column` : option);
  const instance =
    overrides.instanceFromId !== undefined
      ? null
      : (named(presetName('--instance-column', overrides.instanceColumn, given.instanceColumn), overrides.instanceColumn) ?? INSTANCE_CANDIDATES.find((c) => cols.has(c)));
  const resolved = named(presetName('--resolved-column', overrides.resolvedColumn, given.resolvedColumn), overrides.resolvedColumn) ?? RESOLVED_CANDIDATES.find((c) => cols.has(c));
  let messages = named(presetName('--messages-column', overrides.messagesColumn, given.messagesColumn), overrides.messagesColumn);
  const passedOver: string[] = [];
  if (messages === undefined) {
    for (const c of MESSAGES_CANDIDATES) {
      if (!cols.has(c)) continue;
      const v = sampleValue(sampleRow, c);
      if (v != null && !looksLikeMessages(v)) {
        passedOver.push(c);
        continue;
      }
      messages = c;
      break;
    }
  }

  const missing: string[] = [];
  if (id === undefined) missing.push(`id column (tried ${ID_CANDIDATES.join(', ')}, ${COMPOSITE_ID.join('+')}; or --id-column)`);
  if (instance === undefined) missing.push(`instance column (tried ${INSTANCE_CANDIDATES.join(', ')}; or --instance-column, or --instance-from-id REGEX)`);
  if (messages === undefined) {
    const over = passedOver.length > 0 ? `; ${passedOver.join(', ')} in the sample row is not a list of messages with a role` : '';
    missing.push(`messages column (tried ${MESSAGES_CANDIDATES.join(', ')}${over}; or --messages-column)`);
  }
  if (resolved === undefined) missing.push(`resolved column (tried ${RESOLVED_CANDIDATES.join(', ')}; or --resolved-column)`);
  if (missing.length > 0) {
    const what = fromSource
      ? `cannot map the columns for --source ${fromSource}`
      : overrides.schema
        ? `cannot map the columns for --schema ${overrides.schema}`
        : 'cannot detect the input schema';
    const hint = fromSource ? '' : `; or name the corpus with --source (${SOURCE_NAMES.join(', ')})`;
    throw err(`${what}: no ${missing.join('; no ')}${hint}`);
  }
  if (overrides.instanceFromId !== undefined && Array.isArray(id) && id.length === 0) {
    throw new UserError('--instance-from-id needs a trajectory id column', ExitCode.usage);
  }

  const mapping: ColumnMapping = {
    id: id!,
    instance: instance!,
    messages: messages!,
    resolved: resolved!,
    tools: cols.has('tools') ? 'tools' : null,
    repo: cols.has('repo') ? 'repo' : null,
  };
  if (overrides.instanceFromId !== undefined) mapping.instanceFromId = overrides.instanceFromId;
  if (overrides.pairWithin !== undefined && overrides.pairWithin.length > 0) mapping.pairWithin = resolvePairWithin(overrides.pairWithin, columnNames);

  if (byColumns) return { schema: overrides.schema!, mapping, auto: true, reason: byColumns.reason };
  if (fromSource) return { schema: overrides.schema!, mapping, auto: false, reason: `given with --source ${fromSource} (${SOURCES[fromSource].corpus})` };
  if (overrides.schema !== undefined) return { schema: overrides.schema, mapping, auto: false, reason: 'given with --schema' };

  const sample = sampleRow === undefined ? null : sampleActions(sampleValue(sampleRow, mapping.messages));
  if (sample && !sample.calls && sample.xml) {
    return { schema: 'swe-smith', mapping, auto: true, reason: `the sample row's assistant messages have no tool calls and hold <function=...> calls (SWE-smith xml layout)` };
  }
  if (sample && !sample.calls && sample.fences) {
    return { schema: 'text-actions', mapping, auto: true, reason: `the sample row's assistant messages have no tool calls and hold fenced bash blocks` };
  }
  if (mapping.id === 'traj_id' && mapping.messages === 'messages') {
    return { schema: 'swe-smith', mapping, auto: true, reason: `columns traj_id + messages (SWE-smith layout)` };
  }
  if (sample && !sample.calls && sample.bareFences) {
    return { schema: 'swe-smith', mapping, auto: true, reason: `the sample row's assistant messages have no tool calls and end in fenced blocks without a language (SWE-agent style)` };
  }
  const idText = Array.isArray(mapping.id) ? mapping.id.join('+') : (mapping.id as string);
  if (mapping.messages === 'messages' && mapping.id === 'trajectory_id') {
    return { schema: 'open-swe-traces', mapping, auto: true, reason: `columns trajectory_id + messages (Open-SWE-Traces layout)` };
  }
  return { schema: 'openhands', mapping, auto: true, reason: `columns ${idText} + ${mapping.messages}${sample?.calls ? ', tool calls in the sample row' : ''}` };
}

/** The id rule as printed: the column(s), or the synthesised form. */
function idText(m: ColumnMapping): string {
  if (Array.isArray(m.id)) return m.id.length === 0 ? `<${m.instance}>#<n>` : m.id.join('+');
  return m.id as string;
}

/** The line the CLI prints about the choice. */
export function describeDetection(d: Detection): string {
  const m = d.mapping;
  const instance = m.instance ?? `${idText(m)}=~/${m.instanceFromId ?? ''}/`;
  const extra = [
    m.tools ? `tools=${m.tools}` : null,
    m.repo ? `repo=${m.repo}` : null,
    m.pairWithin && m.pairWithin.length > 0 ? `pair-within=${m.pairWithin.map((p) => p.name).join(',')}` : null,
  ]
    .filter(Boolean)
    .join(' ');
  return `schema ${d.schema} (${d.auto ? `auto-detected: ${d.reason}` : d.reason}); columns id=${idText(m)} instance=${instance} messages=${m.messages} resolved=${m.resolved}${extra ? ` ${extra}` : ''}`;
}

/** Every column the mapping reads (for a reader's projection). */
export function mappedColumns(m: ColumnMapping): string[] {
  const ids = Array.isArray(m.id) ? m.id : [m.id as string];
  const pairs = (m.pairWithin ?? []).map((p) => p.column);
  return [...new Set([...ids, ...(m.instance !== null ? [m.instance] : []), m.messages, m.resolved, ...(m.tools ? [m.tools] : []), ...(m.repo ? [m.repo] : []), ...pairs])];
}

/**
 * The contract's own layout (openhands, `trajectory_id` + `trajectory`): its values are read exactly as
 * the contract types them, whatever other sources allow (a string trajectory is a bad value, roles
 * are not mapped), so its output cannot change.
 */
export function isContractLayout(mapping: ColumnMapping, schema: SchemaName): boolean {
  return schema === 'openhands' && mapping.messages === 'trajectory' && mapping.id === 'trajectory_id';
}

/** The standard row the pipeline reads (contract/mine-rows.ts InputRow, upstream column names). A type alias, so it is an InputRow. */
export type StandardRow = {
  trajectory_id: unknown;
  instance_id: unknown;
  repo: unknown;
  resolved: unknown;
  trajectory: unknown;
  tools: unknown;
};

/** The row's trajectory id under `id` (a composite id: non-empty string parts joined by ":", else null). */
export function trajectoryIdOf(row: Record<string, unknown>, id: ColumnMapping['id']): unknown {
  if (!Array.isArray(id)) return row[id as string];
  if (id.length === 0) return null; // synthesised later, in read order (identity.ts)
  const parts = id.map((c) => row[c]);
  return parts.every((p) => typeof p === 'string' && p !== '') ? parts.join(':') : null;
}

/** Tools as objects: a JSON string, or a list of JSON strings, parsed (see the module header). */
export function parseTools(v: unknown): unknown {
  const list = parseIfString(v, 'tools');
  if (!Array.isArray(list)) return list ?? null;
  return list.map((t) => parseIfString(t, 'tools'));
}

/**
 * A source row as the openhands-style row (see the module header). `schema` is accepted so that
 * per-schema conversions have one place; the conversions above are safe for every schema.
 */
export function toStandardRow(row: Record<string, unknown>, mapping: ColumnMapping, schema: SchemaName): StandardRow {
  return {
    trajectory_id: trajectoryIdOf(row, mapping.id),
    instance_id: mapping.instance !== null ? row[mapping.instance] : null,
    repo: mapping.repo ? (row[mapping.repo] ?? null) : null,
    resolved: row[mapping.resolved],
    trajectory: isContractLayout(mapping, schema) ? row[mapping.messages] : sourceMessages(row[mapping.messages], schema, mapping.messages),
    tools: mapping.tools ? parseTools(row[mapping.tools]) : null,
  };
}
