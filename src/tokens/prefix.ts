// `check-template --tokenizer`: the prefix check on token ids. TRL's DPOTrainer takes
// chosen_ids = prompt_chosen_ids[len(prompt_ids):] and only warns ("Mismatch between tokenized
// prompt and the start of tokenized prompt+chosen") when prompt_ids is not a prefix of
// prompt_chosen_ids: the row then trains on a wrong completion. The strings can be prefixes while
// the ids are not, when the tokenizer merges across the boundary (e.g. the prompt ends with "\n"
// and the completion starts with "\n": "\n\n" is one token).
import type { TokenCounter } from './counter.js';

export interface TokenPrefixMismatch {
  /** Index of the first differing token. */
  index: number;
  message: string;
}

function show(counter: TokenCounter, ids: readonly number[], from: number, to: number): string {
  return JSON.stringify(ids.slice(Math.max(0, from), Math.max(0, to)).map((id) => counter.tokenText(id)));
}

/** null when the ids of `prompt` are a prefix of the ids of `full`; else where they differ. */
export function tokenPrefixMismatch(counter: TokenCounter, prompt: string, full: string, side: string): TokenPrefixMismatch | null {
  const p = counter.encode(prompt);
  const f = counter.encode(full);
  let i = 0;
  while (i < p.length && i < f.length && p[i] === f[i]) i++;
  if (i === p.length) return null;
  const ctx = 3;
  const at = i < f.length ? `prompt+${side} has ${f[i]} ${JSON.stringify(counter.tokenText(f[i]!))}` : `prompt+${side} ends there`;
  return {
    index: i,
    message:
      `tokenized prompt is not a prefix of tokenized prompt+${side}: first difference at token ${i} of ${p.length}: ` +
      `prompt has ${p[i]} ${JSON.stringify(counter.tokenText(p[i]!))}, ${at}; ` +
      `context: prompt ${show(counter, p, i - ctx, i + ctx)}, prompt+${side} ${show(counter, f, i - ctx, i + ctx)}`,
  };
}
