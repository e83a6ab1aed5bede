// Text forms of emitted messages, shared by `show` (terminal) and `report` (HTML):
// an action (chosen / rejected) as readable lines, and a compact one-glance form of prompt messages.
import { neutralise } from '../io/terminal-text.js';
import { parseKeepingNumbers, stringifyKeepingNumbers } from '../contract/json-numbers.js';
import type { EmittedMessage } from '../types.js';

/** A tool call as read back from an emitted message's `tool_calls` JSON string. */
export interface ViewCall {
  name: string;
  /** parsed arguments (usually an object); a string when they never parsed */
  args: unknown;
}

const TAB = 4;

/**
 * Make text safe and stable to display: CRLF/CR -> LF, tabs expanded to 4-column stops,
 * control characters (ANSI escapes in tool output, NULs, ...) shown as visible symbols (io/terminal-text.ts).
 */
export function sanitize(s: string): string {
  let text = s.replace(/\r\n?/g, '\n');
  if (text.includes('\t')) {
    text = text
      .split('\n')
      .map((line) => {
        if (!line.includes('\t')) return line;
        let out = '';
        for (const ch of line) {
          if (ch === '\t') out += ' '.repeat(TAB - (out.length % TAB));
          else out += ch;
        }
        return out;
      })
      .join('\n');
  }
  return neutralise(text, true);
}

/** Parse an emitted `tool_calls` value (a JSON string, or an already-parsed list) into calls; null when none. */
export function parseCalls(toolCalls: unknown): ViewCall[] | null {
  let list: unknown = toolCalls;
  if (list == null || list === 'None' || list === '') return null;
  if (typeof list === 'string') {
    try {
      // Numbers shown as written (contract v3, 11).
      list = parseKeepingNumbers(list);
    } catch {
      return [{ name: '(unparsed tool_calls)', args: toolCalls }];
    }
  }
  if (!Array.isArray(list) || list.length === 0) return null;
  return list.map((c: unknown) => {
    const call = (c ?? {}) as { function?: { name?: unknown; arguments?: unknown }; name?: unknown; arguments?: unknown };
    const fn = call.function ?? call;
    const name = typeof fn.name === 'string' ? fn.name : '(unnamed)';
    let args = fn.arguments;
    if (typeof args === 'string') {
      // Emitted rows carry parsed arguments; a string here means it never parsed upstream.
      try {
        const parsed: unknown = parseKeepingNumbers(args);
        if (parsed !== null && typeof parsed === 'object') args = parsed;
      } catch {
        /* keep the raw string */
      }
    }
    return { name, args };
  });
}

/** Tool names of a message's calls ([] for a text-only message). */
export function callNames(msg: EmittedMessage | null | undefined): string[] {
  if (!msg) return [];
  return (parseCalls(msg.tool_calls) ?? []).map((c) => c.name);
}

/** Short label of what an action does: its tool names joined by "+", or "(text)" without calls. */
export function actionLabel(msg: EmittedMessage | null | undefined): string {
  const names = callNames(msg);
  return names.length ? names.join('+') : '(text)';
}

function scalar(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return 'undefined';
  return stringifyKeepingNumbers(v) ?? String(v);
}

/**
 * An action (an assistant message) as lines of text: the narration, then per call
 * "→ name" and one "  key: value" line per argument; multi-line strings as "  key: |" plus an
 * indented block. Call ids are left out (they differ per run and say nothing).
 */
export function formatAction(msg: EmittedMessage | null | undefined): string {
  if (!msg) return '(missing message)';
  const out: string[] = [];
  const narration = sanitize(msg.content ?? '').replace(/\s+$/, '').replace(/^\n+/, '');
  if (narration) out.push(narration);
  const calls = parseCalls(msg.tool_calls);
  for (const call of calls ?? []) {
    out.push(`→ ${sanitize(call.name)}`);
    const args = call.args;
    if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
      const entries = Object.entries(args as Record<string, unknown>);
      if (entries.length === 0) out.push('  (no arguments)');
      for (const [k, v] of entries) {
        const text = sanitize(scalar(v));
        if (text.includes('\n')) {
          out.push(`  ${sanitize(k)}: |`);
          for (const line of text.replace(/\n+$/, '').split('\n')) out.push(line ? `    ${line}` : '');
        } else out.push(`  ${sanitize(k)}: ${text}`);
      }
    } else if (typeof args === 'string') {
      out.push(`  (arguments did not parse) ${sanitize(args)}`);
    } else {
      out.push(`  ${sanitize(scalar(args))}`);
    }
  }
  if (out.length === 0) out.push(msg.role === 'assistant' ? '(empty message)' : `(empty ${msg.role} message)`);
  return out.join('\n');
}

/** A call on one line: `→ name key="value" ...` with JSON-quoted, shortened values. */
export function summarizeCall(call: ViewCall, maxValue = 80): string {
  const parts = [`→ ${call.name}`];
  const args = call.args;
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) {
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      let text = stringifyKeepingNumbers(v) ?? String(v);
      if (text.length > maxValue) text = text.slice(0, maxValue - 1) + '…';
      parts.push(`${k}=${text}`);
    }
  } else {
    let text = typeof args === 'string' ? args : (stringifyKeepingNumbers(args) ?? String(args));
    if (text.length > maxValue) text = text.slice(0, maxValue - 1) + '…';
    parts.push(text);
  }
  return sanitize(parts.join(' '));
}

/** Compact view of one prompt message: a title (role and tool) and its body lines. */
export interface CompactMessage {
  /** e.g. "assistant", "tool execute_bash", "user" */
  role: string;
  tool: string | null;
  /** body lines (narration / content), already sanitised */
  lines: string[];
  /** one-line call summaries of an assistant message */
  calls: string[];
}

export function compactMessage(msg: EmittedMessage): CompactMessage {
  const content = sanitize(msg.content ?? '').replace(/\s+$/, '').replace(/^\n+/, '');
  const lines = content ? content.split('\n') : [];
  const calls = (parseCalls(msg.tool_calls) ?? []).map((c) => summarizeCall(c));
  const tool = msg.role === 'tool' && typeof msg.name === 'string' && msg.name ? sanitize(msg.name) : null;
  return { role: sanitize(msg.role), tool, lines, calls };
}
