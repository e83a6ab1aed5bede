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
import { norm } from '../contract/normalise.js';
import { actionSignature, keyAndSignature, keyParts } from '../contract/sign.js';
import type { Message, ToolCall } from '../types.js';

export const ACTION_LANGUAGES: readonly string[] = ['bash', 'sh', 'shell', 'mswea_bash_command'];

export interface TextActionOptions {
  /** Count blocks without an info string as actions (classic SWE-agent). Default false. */
  bareFence?: boolean;
  /** Languages whose blocks are actions. Default ACTION_LANGUAGES. */
  languages?: readonly string[];
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
  if (msg.tool_calls && msg.tool_calls.length > 0) return actionSignature(msg, reasoningKeys);
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

/**
 * Drop-in for sign.ts keyParts (what encode.ts hashes) under `--schema text-actions`:
 * parts.join('') is the textActionsKeyAndSignature key.
 */
export function textActionsKeyParts(
  msg: Message,
  reasoningKeys: ReadonlySet<string>,
  opts: TextActionOptions = {},
): { parts: string[]; signature: string } {
  if (msg.role === 'assistant') {
    const signature = textActionMessageSignature(msg as { content: string | null; tool_calls: ToolCall[] | null }, reasoningKeys, opts);
    return { parts: ['assistant\n', signature], signature };
  }
  return keyParts(msg, reasoningKeys);
}
