// `--prompt-window N`: shorten long prompts for training while keeping them well formed.
//
// Kept: the system message (when the prompt starts with one), the first user message, and the last
// N messages. A tool result is never separated from the assistant message that made the call:
// when the window would start on a tool message, it grows backwards to the assistant message
// before it (tool results directly follow their call in these trajectories), so the window can
// hold a few more than N messages. Everything else is dropped and counted.
// `divergence_msg_index` keeps referring to the full trajectory:
// prompt.length + prompt_messages_dropped = divergence_msg_index.

export interface WindowResult<M> {
  prompt: M[];
  dropped: number;
}

export function windowPrompt<M extends { role: string }>(prompt: readonly M[], n: number): WindowResult<M> {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`prompt window must be a non-negative integer, got ${n}`);
  const len = prompt.length;
  let start = Math.max(len - n, 0);
  while (start > 0 && start < len && prompt[start]!.role === 'tool') start--;

  const head = new Set<number>();
  if (len > 0 && prompt[0]!.role === 'system') head.add(0);
  const firstUser = prompt.findIndex((m) => m.role === 'user');
  if (firstUser >= 0) head.add(firstUser);

  const kept: M[] = [];
  for (let i = 0; i < len; i++) if (i >= start || head.has(i)) kept.push(prompt[i]!);
  return { prompt: kept, dropped: len - kept.length };
}

/**
 * Apply the window to a row of either shape; adds `prompt_messages_dropped` (after the row's
 * other fields, before `tools` when present, so output field order stays stable).
 */
export function windowRow<R extends { prompt: { role: string }[]; tools?: unknown }>(
  row: R,
  n: number,
): R & { prompt_messages_dropped: number } {
  const { prompt, dropped } = windowPrompt(row.prompt, n);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'tools' || k === 'prompt_messages_dropped') continue;
    out[k] = k === 'prompt' ? prompt : v;
  }
  // Windowing an already windowed row keeps counting against the full trajectory.
  const before = (row as { prompt_messages_dropped?: unknown }).prompt_messages_dropped;
  out.prompt_messages_dropped = dropped + (typeof before === 'number' ? before : 0);
  if ('tools' in row) out.tools = row.tools;
  return out as R & { prompt_messages_dropped: number };
}
