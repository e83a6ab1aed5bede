// The `text-actions` source (SWE-agent / mini-swe-agent runs), whose action is a fenced
// shell block inside the assistant text instead of a tool call.
//
// Action signature of an assistant message under `--schema text-actions`:
//   - with tool calls (a mixed source): the contract signature (sign.ts actionSignature), unchanged;
//   - otherwise, when the content holds at least one closed ACTION fence: "bash " + norm(body of the
//     LAST action fence). The text around the block (the "THOUGHT"/"DISCUSSION" reasoning) is ignored;
//   - otherwise: "text " + norm(content) (a text action, as in the contract).
// norm() is the contract's: null -> "", CRLF -> LF, spaces/tabs removed at the end of every line,
// the whole string trimmed. So `bash ` + body is compared after exactly that whitespace
// normalisation; indentation inside the block and blank lines in its middle are kept.
//
// What counts as a fence (a small, explicit subset of CommonMark fenced code blocks):
//   - The content is first split into lines after CRLF -> LF.
//   - An opening fence is a line of at most 3 spaces, then 3 or more backticks, then an optional info
//     string that contains no backtick. The block's language is the info string's first word,
//     lowercased ("```bash", "``` bash", "```Bash title" all give "bash").
//   - The block ends at the first later line holding only backticks (at least as many as the opening
//     fence; up to 3 leading spaces and trailing blanks allowed). Its body is the lines in between.
//   - An opening fence with no closing line is NOT a block (the harnesses reject such replies);
//     per CommonMark it swallows the rest of the message, so no later fence counts either.
//   - Fences of other languages (```python, ```diff, ...) are blocks too: they are skipped, and a
//     "```bash" line inside them is body text, not a fence.
//   - Tilde fences (~~~) and one-line spans (```ls```) are not fences.
//   - ACTION languages: bash, sh, shell, and mswea_bash_command (mini-swe-agent's alternative tag).
//     A bare fence (no info string, the classic SWE-agent "thought_action" format) counts only with
//     `{ bareFence: true }`.
//
// XML function calls (`{ xml: true }`, the SWE-smith `xml` rendering; docs/mining-contract.md §10.3):
//   - a call is `<function=NAME>` (NAME: one or more characters, no ">" and no line end) up to the
//     next `</function>`; an opening tag with no closing one is not a call, and ends the scan;
//   - its parameters are `<parameter=K>V</parameter>` inside the call (K as NAME); V is the text
//     between the tags with ONE leading and ONE trailing "\n" removed (the rendering writes long
//     values as `<parameter=K>\nV\n</parameter>`); a repeated K keeps the last V; an unclosed
//     parameter is ignored;
//   - the signature is one line per call, in order: NAME + " " + canon({K: V, ...}) (sign.ts
//     canonArguments: stable JSON, top-level reasoning keys removed), as tool calls are signed;
//   - text outside the calls (the thought) is narration and takes no part.
import { norm } from '../contract/normalise.js';
import { actionSignature, canonArguments, keyAndSignature, signsContent } from '../contract/sign.js';
import type { Message, ToolCall } from '../types.js';
import type { SchemaName } from './schema.js';

export const ACTION_LANGUAGES: readonly string[] = ['bash', 'sh', 'shell', 'mswea_bash_command'];

export interface TextActionOptions {
  /** Count blocks without an info string as actions (classic SWE-agent). Default false. */
  bareFence?: boolean;
  /** Languages whose blocks are actions. Default ACTION_LANGUAGES. */
  languages?: readonly string[];
  /** Sign `<function=NAME>` calls in the text (SWE-smith xml). Default false. */
  xml?: boolean;
}

/** The text-action schemes: how each schema signs a text-only assistant reply. */
export const TEXT_ACTION_SCHEMES = {
  /** mini-swe-agent: the last ```bash (sh, shell, mswea_bash_command) block. */
  'text-actions': {},
  /** SWE-agent 0.x (nebius/SWE-agent-trajectories): the last fenced block, with or without a language. */
  'swe-agent': { bareFence: true },
  /** SWE-smith renderings: XML function calls (xml), else the last fenced block (ticks); tool calls (tool) as the contract. */
  'swe-smith': { bareFence: true, xml: true },
} as const satisfies Record<string, TextActionOptions>;

export type TextActionScheme = keyof typeof TEXT_ACTION_SCHEMES;

/** The signature scheme of a schema: 'contract' (tool calls, §3.2) or one of TEXT_ACTION_SCHEMES. */
export function signatureSchemeOf(schema: SchemaName): 'contract' | TextActionScheme {
  return Object.hasOwn(TEXT_ACTION_SCHEMES, schema) ? (schema as TextActionScheme) : 'contract';
}

export interface XmlFunctionCall {
  name: string;
  /** Parameters by name (null prototype: every name is data). */
  params: Record<string, string>;
}

const FUNCTION_OPEN = '<function=';
const FUNCTION_CLOSE = '</function>';
const PARAM_OPEN = '<parameter=';
const PARAM_CLOSE = '</parameter>';

/** The name of a tag `<function=NAME>` / `<parameter=NAME>` starting at `at` (after the "="), or null. */
function tagName(s: string, at: number, end: number): { name: string; next: number } | null {
  const gt = s.indexOf('>', at);
  if (gt === -1 || gt >= end || gt === at) return null;
  const name = s.slice(at, gt);
  if (name.includes('\n') || name.includes('<')) return null;
  return { name, next: gt + 1 };
}

function stripOneNewline(v: string): string {
  let out = v.startsWith('\n') ? v.slice(1) : v;
  if (out.endsWith('\n')) out = out.slice(0, -1);
  return out;
}

/** Every closed `<function=NAME>...</function>` call of `content`, in order (rules in the header). */
export function xmlFunctionCalls(content: string | null | undefined): XmlFunctionCall[] {
  if (!content || !content.includes(FUNCTION_OPEN)) return [];
  const out: XmlFunctionCall[] = [];
  let at = 0;
  for (;;) {
    const open = content.indexOf(FUNCTION_OPEN, at);
    if (open === -1) break;
    const tag = tagName(content, open + FUNCTION_OPEN.length, content.length);
    if (!tag) {
      at = open + FUNCTION_OPEN.length;
      continue;
    }
    const close = content.indexOf(FUNCTION_CLOSE, tag.next);
    if (close === -1) break; // unclosed: not a call, and nothing after it counts
    const params = Object.create(null) as Record<string, string>;
    let p = tag.next;
    for (;;) {
      const po = content.indexOf(PARAM_OPEN, p);
      if (po === -1 || po >= close) break;
      const ptag = tagName(content, po + PARAM_OPEN.length, close);
      if (!ptag) {
        p = po + PARAM_OPEN.length;
        continue;
      }
      const pc = content.indexOf(PARAM_CLOSE, ptag.next);
      if (pc === -1 || pc > close) break; // unclosed parameter: ignored
      params[ptag.name] = stripOneNewline(content.slice(ptag.next, pc));
      p = pc + PARAM_CLOSE.length;
    }
    out.push({ name: tag.name, params });
    at = close + FUNCTION_CLOSE.length;
  }
  return out;
}

export interface FencedBlock {
  /** First word of the info string, lowercased; '' for a bare fence. */
  lang: string;
  /** The lines between the fences, joined by "\n" (not normalised). */
  body: string;
}

const OPEN = /^ {0,3}(`{3,})([^`]*)$/;
const CLOSE = /^ {0,3}(`{3,})[ \t]*$/;

/** Every closed fenced block of `content`, in order (see the module header for the rules). */
export function fencedBlocks(content: string | null | undefined): FencedBlock[] {
  if (!content || !content.includes('```')) return [];
  const lines = content.replace(/\r\n/g, '\n').split('\n');
  const out: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    if (!open) continue;
    const ticks = open[1]!.length;
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = CLOSE.exec(lines[j]!);
      if (close && close[1]!.length >= ticks) break;
    }
    if (j >= lines.length) break; // unclosed: not a block, and it swallows the rest
    const lang = (open[2]!.trim().split(/\s+/)[0] ?? '').toLowerCase();
    out.push({ lang, body: lines.slice(i + 1, j).join('\n') });
    i = j;
  }
  return out;
}

function isActionBlock(b: FencedBlock, opts: TextActionOptions): boolean {
  if (b.lang === '') return opts.bareFence === true;
  return (opts.languages ?? ACTION_LANGUAGES).includes(b.lang);
}

/** The last action block of `content`, or null (a text action). */
export function lastActionBlock(content: string | null | undefined, opts: TextActionOptions = {}): FencedBlock | null {
  const blocks = fencedBlocks(content);
  for (let k = blocks.length - 1; k >= 0; k--) if (isActionBlock(blocks[k]!, opts)) return blocks[k]!;
  return null;
}

/** `"bash " + norm(last action block)`, or `"text " + norm(content)` when there is none. */
export function textActionSignature(content: string | null | undefined, opts: TextActionOptions = {}): string {
  const block = lastActionBlock(content, opts);
  return block ? `bash ${norm(block.body)}` : `text ${norm(content)}`;
}

/** Signature of an assistant message under `--schema text-actions` (tool calls still win when present). */
export function textActionMessageSignature(
  msg: { content: string | null; tool_calls?: ToolCall[] | null },
  reasoningKeys: ReadonlySet<string>,
  opts: TextActionOptions = {},
): string {
  if (!signsContent(msg)) return actionSignature(msg, reasoningKeys);
  if (opts.xml) {
    const calls = xmlFunctionCalls(msg.content);
    if (calls.length > 0) return calls.map((c) => `${c.name} ${canonArguments(c.params, reasoningKeys)}`).join('\n');
  }
  return textActionSignature(msg.content, opts);
}

/**
 * Drop-in for sign.ts keyAndSignature under `--schema text-actions`: the same keys for every role
 * (tool: name + norm(content); others: role + norm(content)) except the assistant signature.
 */
export function textActionsKeyAndSignature(
  msg: Message,
  reasoningKeys: ReadonlySet<string>,
  opts: TextActionOptions = {},
): { key: string; signature: string } {
  if (msg.role === 'assistant') {
    const signature = textActionMessageSignature(msg as { content: string | null; tool_calls: ToolCall[] | null }, reasoningKeys, opts);
    return { key: `assistant\n${signature}`, signature };
  }
  return keyAndSignature(msg, reasoningKeys);
}
